package escape

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"brig/internal/doctor"
	"brig/jail"
	"brig/policy"
	"brig/supervisor"
	"brig/tools"
)

// ---------------------------------------------------------------------------
// Process-wide state, set up by TestMain.

var (
	binDir     string // 0755 directory holding brig, probe and (root pass) a copy of this test binary
	brigBin    string
	probeBin   string // "" when gcc is missing
	probeWhy   string // why probeBin is empty
	unprivPass bool   // this process is the unprivileged re-execution
	// noUserNSPass: this process (and its unprivileged pass) runs in a user
	// namespace that cannot create another (TestWithoutUserNamespaces).
	noUserNSPass bool
	sup          *supervisor.Supervisor

	// sem bounds concurrent cases (2 cores; every case spawns a jail).
	sem = make(chan struct{}, 4)
	// serialMu serialises cases that touch process-wide state of this test
	// process or of the victim (signal counters, rlimits, nice values).
	serialMu sync.Mutex

	sigCount atomic.Int64 // SIGTERM/SIGUSR1 received by this test process

	// supSecret is in this process's ORIGINAL environment block (what
	// /proc/PID/environ shows); memSecret is in its heap.
	supSecret string
	memSecret []byte
	supEnvOK  bool // supSecret was seen in /proc/self/environ before the process became non-dumpable
	nsBefore  bool // this user could create the jail's namespaces before supervisor.New

	victimOnce sync.Once
	victimErr  error
	theVictim  atomic.Pointer[victim]
)

const (
	envSupSecret = "ESCAPE_SUPERVISOR_API_KEY" // looks like a credential on purpose
	envUnpriv    = "BRIG_ESCAPE_UNPRIV"
	envBinDir    = "BRIG_ESCAPE_BIN"
	envNoUserNS  = "BRIG_ESCAPE_NOUSERNS"
	envPasses    = "BRIG_ESCAPE_PASSES" // comma-separated pass names to run; all when unset
	unprivUID    = 65534
)

func randHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

func who() string {
	w := "root"
	if unprivPass {
		w = "unprivileged"
	}
	if noUserNSPass {
		w += ", without user namespaces"
	}
	return w
}

// ---------------------------------------------------------------------------
// Passes: which kernel layers are on.

type passMask uint

const (
	inLandlock     passMask = 1 << iota // Landlock alone (NoSeccomp); namespaces stay on
	inSeccomp                           // seccomp alone (NoLandlock); namespaces stay on
	inNoNS                              // Landlock + seccomp without namespaces (the composition used where user namespaces are unavailable)
	inLandlockBare                      // Landlock alone without namespaces: the Landlock layer really by itself
)

type pass struct {
	name   string
	mask   passMask // 0 for the full pass, which runs every case
	layers jail.Layers
}

// passes: the full jail, then each layer alone. In "landlock" and "seccomp"
// the namespace layer stays ON (private user, mount, PID, IPC, UTS and
// network namespaces), so those passes prove Landlock (resp. seccomp) plus
// namespaces without the other; "nons" and "landlock-bare" switch the
// namespaces off too.
var passes = []pass{
	{name: "full"},
	{name: "landlock", mask: inLandlock, layers: jail.Layers{NoSeccomp: true}},
	{name: "seccomp", mask: inSeccomp, layers: jail.Layers{NoLandlock: true}},
	{name: "nons", mask: inNoNS, layers: jail.Layers{NoNamespaces: true}},
	{name: "landlock-bare", mask: inLandlockBare, layers: jail.Layers{NoSeccomp: true, NoNamespaces: true}},
}

func (p pass) namespaces() bool { return sup.Namespaces() && !p.layers.NoNamespaces }

// ---------------------------------------------------------------------------
// Results summary (printed by TestMain).

// tally counts outcomes. n/a is neither a pass nor a failure: a case whose
// attack cannot exist here (see notApplicable); skip is a case this run
// chose not to execute (root-only fixtures, no C probe).
type tally struct{ pass, fail, skip, na int }

var (
	resultsMu sync.Mutex
	results   = map[string]*tally{} // key: pass or pass/family
	naCases   = map[string]string{} // test name → why it is not applicable
)

// notApplicable ends a case whose attack cannot exist on this kernel or
// for this user: its control cannot run outside the jail either (no IA32
// emulation, no x32 ABI, a Landlock ABI the pass needs, CAP_MKNOD as uid
// 65534). It is counted as n/a with the reason, never as a pass.
func notApplicable(t *testing.T, format string, args ...any) {
	t.Helper()
	reason := fmt.Sprintf(format, args...)
	resultsMu.Lock()
	naCases[t.Name()] = reason
	resultsMu.Unlock()
	t.Skipf("NOT APPLICABLE here: %s", reason)
}

func record(t *testing.T, keys ...string) {
	t.Cleanup(func() {
		resultsMu.Lock()
		defer resultsMu.Unlock()
		for _, k := range keys {
			r := results[k]
			if r == nil {
				r = &tally{}
				results[k] = r
			}
			_, na := naCases[t.Name()]
			switch {
			case t.Failed():
				r.fail++
			case t.Skipped() && na:
				r.na++
			case t.Skipped():
				r.skip++
			default:
				r.pass++
			}
		}
	})
}

func printSummary() {
	resultsMu.Lock()
	defer resultsMu.Unlock()
	if len(results) == 0 {
		return
	}
	keys := make([]string, 0, len(results))
	for k := range results {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Printf("escape suite summary (%s, uid %d):\n", who(), os.Getuid())
	for _, k := range keys {
		r := results[k]
		fmt.Printf("  %-32s pass %3d  fail %3d  skip %3d  n/a %3d\n", k, r.pass, r.fail, r.skip, r.na)
	}
	if len(naCases) > 0 {
		names := make([]string, 0, len(naCases))
		for n := range naCases {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Printf("not applicable here (%s; neither passed nor failed):\n", who())
		for _, n := range names {
			fmt.Printf("  n/a %s: %s\n", strings.TrimPrefix(n, "TestEscape/"), naCases[n])
		}
	}
}

// ---------------------------------------------------------------------------
// The per-case fixture.

// env is one fresh fixture: a workspace (a git repository with a nested
// repository, a submodule-style .git file and a .brig directory), a fake
// $HOME full of canaries, and another project. It lives under /var/tmp, NOT
// /tmp, so the jail's private /tmp does not hide it: Landlock has to.
type env struct {
	t      *testing.T
	pass   pass
	label  string // "control" or "attack"
	root   string
	ws     string
	home   string
	other  string // another project, outside the workspace
	canary string // in every secret file of this fixture
	log    []string
}

func newEnv(t *testing.T, p pass, label string, withGit bool) *env {
	t.Helper()
	root, err := os.MkdirTemp("/var/tmp", "brig-escape-")
	if err != nil {
		t.Fatal(err)
	}
	root, _ = filepath.EvalSymlinks(root)
	e := &env{t: t, pass: p, label: label, root: root, canary: "BRIGCANARY" + randHex(8),
		ws: filepath.Join(root, "ws"), home: filepath.Join(root, "home"), other: filepath.Join(root, "other")}
	t.Cleanup(func() {
		if t.Failed() && len(e.log) > 0 {
			t.Logf("%s transcript (%s):\n%s", e.label, e.root, strings.Join(e.log, "\n"))
		}
		removeAll(root)
	})
	// Creating a file costs ~1.5 ms of kernel time on this disk and every
	// case makes two fixtures: keep them small.
	e.mkfile("home/.ssh/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\n"+e.canary+"\n-----END OPENSSH PRIVATE KEY-----\n", 0o600)
	e.mkfile("home/.aws/credentials", "[default]\naws_secret_access_key = "+e.canary+"\n", 0o600)
	e.mkfile("home/.config/brig/credentials.toml", "anthropic_api_key = \""+e.canary+"\"\n", 0o600)
	e.mkfile("home/.config/brig/config.toml", "# brig global config\n", 0o644)
	e.mkdir("home/.local/state/brig")
	e.mkdir("home/.config/other")
	e.mkfile("home/.bashrc", "# bashrc\n", 0o644)
	e.mkfile("home/.gitconfig", gitconfig, 0o644)
	e.mkfile("other/secret.txt", "other project secret "+e.canary+"\n", 0o644)
	e.mkfile("other/sub/data.txt", "other project data\n", 0o644)
	if withGit {
		e.copyTemplate()
	} else {
		e.mkfile("ws/src/main.go", "package main\n\nfunc main() {}\n", 0o644)
	}
	return e
}

var (
	templateOnce sync.Once
	templateDir  string
	templateErr  error
)

// buildTemplate makes the workspace once per process (git is slow to
// start, and every case needs two fresh fixtures): a repository with a
// commit, .brig/, a nested repository vendor/x and a submodule-style sub/
// whose .git is a FILE pointing at .git/modules/sub.
func buildTemplate(t *testing.T) {
	templateOnce.Do(func() {
		dir, err := os.MkdirTemp("/var/tmp", "brig-escape-template-")
		if err != nil {
			templateErr = err
			return
		}
		templateDir, _ = filepath.EvalSymlinks(dir)
		e := &env{t: t, root: templateDir, ws: filepath.Join(templateDir, "ws"), home: filepath.Join(templateDir, "home")}
		e.mkfile("home/.gitconfig", gitconfig, 0o644)
		e.mkfile("ws/src/main.go", "package main\n\nfunc main() {}\n", 0o644)
		e.mkfile("ws/README.md", "# workspace\n", 0o644)
		e.mkfile("ws/.brig/config.toml", "# repository rules\n", 0o644)
		e.mkdir("ws/vendor/x")
		e.git(filepath.Join(e.ws, "vendor/x"), "init", "-q")
		e.git(e.ws, "init", "-q")
		e.mkdir("ws/.git/modules")
		e.git(e.ws, "init", "-q", "--separate-git-dir", filepath.Join(e.ws, ".git/modules/sub"), filepath.Join(e.ws, "sub"))
		e.git(e.ws, "add", "src", "README.md", ".brig")
		e.git(e.ws, "commit", "-q", "-m", "initial")
		// Keep one sample hook (a case modifies it) and drop the rest,
		// with other files git does not need.
		for _, gitdir := range []string{"ws/.git", "ws/vendor/x/.git", "ws/.git/modules/sub"} {
			hooks, _ := filepath.Glob(e.path(gitdir + "/hooks/*"))
			for _, h := range hooks {
				if !strings.HasSuffix(h, "ws/.git/hooks/pre-commit.sample") {
					os.Remove(h)
				}
			}
			for _, f := range []string{"description", "info", "logs", "COMMIT_EDITMSG"} {
				os.RemoveAll(e.path(gitdir + "/" + f))
			}
		}
	})
	if templateErr != nil {
		t.Fatalf("build the workspace template: %v", templateErr)
	}
}

func removeTemplate() {
	if templateDir != "" {
		removeAll(templateDir)
	}
}

const gitconfig = "[user]\n\tname = Escape Suite\n\temail = escape@example.invalid\n[init]\n\tdefaultBranch = main\n[advice]\n\taddEmbeddedRepo = false\n"

// copyTemplate copies the template workspace into this fixture and points
// the absolute gitdir paths at the copy.
func (e *env) copyTemplate() {
	buildTemplate(e.t)
	if err := os.CopyFS(e.ws, os.DirFS(filepath.Join(templateDir, "ws"))); err != nil {
		e.t.Fatalf("copy the workspace template: %v", err)
	}
	for _, p := range []string{"ws/sub/.git", "ws/.git/modules/sub/config"} {
		b, err := os.ReadFile(e.path(p))
		if err != nil {
			e.t.Fatal(err)
		}
		if err := os.WriteFile(e.path(p), bytes.ReplaceAll(b, []byte(templateDir), []byte(e.root)), 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
}

func removeAll(root string) {
	// A hostile call may have left directories without write permission.
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(root)
}

func (e *env) path(rel string) string { return filepath.Join(e.root, rel) }

func (e *env) mkdir(rel string) string {
	p := e.path(rel)
	if err := os.MkdirAll(p, 0o755); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) mkfile(rel, content string, mode os.FileMode) string {
	p := e.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) hostEnv() []string {
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin",
		"HOME=" + e.home, "LANG=C.UTF-8", "GIT_CONFIG_NOSYSTEM=1",
	}
}

func (e *env) git(dir string, args ...string) string {
	e.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = e.hostEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return string(out)
}

// scriptEnv are the ESC_* variables every call gets (the Profile allowlists
// ESC_*), so scripts never embed a canary.
func (e *env) scriptEnv() []string {
	vars := []string{
		"ESC_ROOT=" + e.root, "ESC_WS=" + e.ws, "ESC_OTHER=" + e.other,
		"ESC_PROBE=" + probeBin, "ESC_TESTPID=" + strconv.Itoa(os.Getpid()),
	}
	if v := theVictim.Load(); v != nil {
		vars = append(vars, "ESC_VICTIM="+strconv.Itoa(v.pid))
	}
	return vars
}

// parentEnv is what the "supervisor" would hold: the usual variables, the
// ESC_* helpers, and credentials that must never cross into the jail.
func (e *env) parentEnv() []string {
	return append([]string{
		"PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin",
		"HOME=" + e.home, "LANG=C.UTF-8", "USER=escape", "TERM=dumb",
		"LC_ESCAPE_CONTROL=envcontrol-" + e.canary[len(e.canary)-8:],
		"ESCAPE_TEST_API_KEY=" + e.canary, "GITHUB_TOKEN=" + e.canary,
		"AWS_SECRET_ACCESS_KEY=" + e.canary, "ANTHROPIC_API_KEY=" + e.canary,
		"SSH_AUTH_SOCK=" + e.path("agent.sock"), "DATABASE_URL=postgres://u:" + e.canary + "@db/x",
	}, e.scriptEnv()...)
}

// memoryBackstop is the timeout of the calls that touch hundreds of MiB
// (the memory cases): each page is a fault, and on a loaded VM (page
// faults of 25 µs, a load of 40 on 2 cores when the suite's passes all
// run) such a call took more than the default 60 s before it had done
// anything. They end by themselves or at their memory limit, so the longer
// backstop costs nothing on an idle machine.
const memoryBackstop = 10 * time.Minute

// defaultLimits bound a call of a pass whose calls get user namespaces or
// not (ns). The timeout is a backstop for a hostile command that hangs,
// not a budget: every call ends by itself well before it (cases that are
// about the timeout set their own), so a slow machine never turns into a
// failure.
//
// Without a user namespace an ordinary user's RLIMIT_NPROC counts every
// task of the uid, and the suite's passes run up to 16 calls each at once,
// each with its Go init and worker threads, beside the test binaries' own:
// such a call then gets brig's default budget, or its forks fail for what
// the others hold (cases about the process limit set their own). It is
// the pass that decides, not the machine: a pass without namespaces on a
// machine that has them gave the call running beside a fork bomb 256, and
// its sh could not fork while the other passes ran.
func defaultLimits(ns bool) jail.Limits {
	procs := uint64(256)
	if !ns && os.Getuid() != 0 {
		procs = jail.DefaultLimits().Processes
	}
	return jail.Limits{
		Timeout:     60 * time.Second,
		OutputBytes: 1 << 20,
		FileSize:    64 << 20,
		OpenFiles:   1024,
		Processes:   procs,
		Memory:      1 << 30,
		TmpBytes:    64 << 20,
	}
}

// profile is the Profile a default call of this fixture gets: exactly what
// `brig sandbox` builds, plus the probe directory as a read grant.
func (e *env) profile() policy.Profile {
	ns := e.pass.namespaces()
	p := policy.Profile{
		Workspace: e.ws, Dir: e.ws, Home: e.home, ParentEnv: e.parentEnv(),
		EnvAllow: []string{"ESC_*"}, Limits: defaultLimits(ns), Namespaces: ns,
		CacheRoot: e.path("cache"),
		BrigDirs:  []string{filepath.Join(e.home, ".config/brig"), filepath.Join(e.home, ".local/state/brig")},
		Read:      []string{binDir},
	}
	return p
}

type callCfg struct {
	prof  policy.Profile
	specs []func(*jail.Spec)
	io    supervisor.IO
	ctx   context.Context // cancels the call (nil: only its timeout and the test's deadline)
}

// withContext makes cancelling ctx cancel the call, as a user's interrupt does.
func withContext(ctx context.Context) opt { return func(c *callCfg) { c.ctx = ctx } }

type opt func(*callCfg)

func withRead(paths ...string) opt {
	return func(c *callCfg) { c.prof.Read = append(c.prof.Read, paths...) }
}
func withWrite(paths ...string) opt {
	return func(c *callCfg) { c.prof.Write = append(c.prof.Write, paths...) }
}
func withNetwork() opt     { return func(c *callCfg) { c.prof.Network = true } }
func withUnixSockets() opt { return func(c *callCfg) { c.prof.UnixSockets = true } }
func withLimits(f func(*jail.Limits)) opt {
	return func(c *callCfg) { f(&c.prof.Limits) }
}
func withWorkspace(ws string) opt {
	return func(c *callCfg) { c.prof.Workspace, c.prof.Dir = ws, ws }
}
func withIO(io supervisor.IO) opt { return func(c *callCfg) { c.io = io } }

// withSpec changes the compiled Spec, as a call the policy compiles for a
// file tool differs from the bash profile.
func withSpec(f func(*jail.Spec)) opt { return func(c *callCfg) { c.specs = append(c.specs, f) } }

// call runs argv in the jail of this fixture's pass.
func (e *env) call(argv []string, opts ...opt) (jail.Result, error) {
	e.t.Helper()
	return e.invoke(jail.Invocation{Argv: argv}, opts...)
}

// readFile runs the read_file tool on path, as the agent invokes it, in
// the jail of this fixture's pass, and returns what the model would be
// shown; a jail error is fatal, as for sh.
func (e *env) readFile(path string, opts ...opt) string {
	e.t.Helper()
	args, _ := json.Marshal(map[string]string{"path": path})
	def, ok := tools.NewRegistry().Lookup(string(tools.ReadFile))
	if !ok {
		e.t.Fatal("no read_file tool")
	}
	inv, err := def.Invocation(args)
	if err != nil {
		e.t.Fatal(err)
	}
	res, err := tools.FromJail(e.must(e.invoke(inv, opts...)), nil)
	if err != nil {
		e.t.Fatalf("%s: read_file %s: %v", e.label, path, err)
	}
	return res.Text
}

// invoke runs inv in the jail of this fixture's pass.
func (e *env) invoke(inv jail.Invocation, opts ...opt) (jail.Result, error) {
	e.t.Helper()
	argv := inv.Argv
	if argv == nil {
		argv = []string{inv.Tool, string(inv.Args)}
	}
	c := &callCfg{prof: e.profile()}
	for _, o := range opts {
		o(c)
	}
	if !c.prof.Namespaces && c.prof.CallTmp == "" {
		dir, err := os.MkdirTemp(e.root, "calltmp-")
		if err != nil {
			e.t.Fatal(err)
		}
		c.prof.CallTmp = dir
	}
	spec, err := c.prof.Spec()
	if err != nil {
		e.t.Fatalf("Profile.Spec: %v", err)
	}
	spec.Layers = e.pass.layers
	for _, f := range c.specs {
		f(&spec)
	}
	// The call's own Limits.Timeout bounds it; the test's deadline is the
	// backstop for a jail that never answers.
	parent := c.ctx
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithTimeout(parent, untilDeadline(e.t))
	defer cancel()
	res, err := sup.Run(ctx, spec, inv, c.io)
	e.log = append(e.log, fmt.Sprintf("$ %q (layers %+v, ns %v, net %v, unix %v)\n  exit=%d signal=%s timedout=%v limit=%q err=%v violations=%v\n  stdout: %s\n  stderr: %s",
		argv, spec.Layers, c.prof.Namespaces, c.prof.Network, c.prof.UnixSockets,
		res.ExitCode, res.Signal, res.TimedOut, res.LimitDetail, err, res.Violations, clip(res.Stdout), clip(res.Stderr)))
	return res, err
}

// sh runs a /bin/sh script in the jail; a jail error is fatal (it is never
// how an attack is judged).
func (e *env) sh(script string, opts ...opt) jail.Result {
	e.t.Helper()
	return e.must(e.call([]string{"/bin/sh", "-c", script}, opts...))
}

func (e *env) argv(argv []string, opts ...opt) jail.Result {
	e.t.Helper()
	return e.must(e.call(argv, opts...))
}

func (e *env) must(res jail.Result, err error) jail.Result {
	e.t.Helper()
	if err != nil {
		if why := unenforceable(e.pass, err); why != "" {
			notApplicable(e.t, "%s", why)
		}
		e.t.Fatalf("%s: the jail call itself failed: %v", e.label, err)
	}
	return res
}

// unenforceable says why a call the jail refused because this kernel
// cannot enforce it (jail.ErrUnenforceable) makes the case not applicable:
// a layer pass this kernel cannot run (say, without namespaces below
// Landlock ABI 6, where nothing would contain the call's processes), or
// a kernel on which brig refuses every call. It is "" for any other error,
// and for a refusal of the full jail on a kernel whose brig doctor report
// is OK: that is a jail bug, not a property of the kernel.
func unenforceable(p pass, err error) string {
	if !errors.Is(err, jail.ErrUnenforceable) {
		return ""
	}
	if p.name != "full" {
		return fmt.Sprintf("this kernel cannot run the %s pass, and the jail refuses it as it must: %v", p.name, err)
	}
	if doctorOK() {
		return ""
	}
	return fmt.Sprintf("brig refuses every call on this kernel (see brig doctor): %v", err)
}

var doctorOK = sync.OnceValue(func() bool {
	return doctor.Build(jail.DetectFeatures(context.Background()), nil, "").OK
})

func clip(b []byte) string {
	s := string(b)
	if len(s) > 1500 {
		s = s[:1500] + fmt.Sprintf("… (%d bytes)", len(b))
	}
	return strings.TrimRight(s, "\n")
}

// outside runs argv without any jail, as this test's user, in the
// workspace, with the same ESC_* variables, until it ends (the test's
// deadline is the only bound).
func (e *env) outside(argv ...string) (string, string) {
	e.t.Helper()
	return e.outsideUntil(nil, argv...)
}

// outsideUntil is outside for a command that does not end by itself: once
// done reports true (or the command ends), the command is killed.
func (e *env) outsideUntil(done func() bool, argv ...string) (string, string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), untilDeadline(e.t))
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = e.ws
	cmd.Env = append(e.hostEnv(), e.scriptEnv()...)
	// After the command ends, its output is read to the end: a second's
	// bound lost a control's output on a loaded machine ("WaitDelay
	// expired before I/O complete", the canary unread: CI, 2026-12-03).
	// Only a command killed once done holds may leave a process behind
	// with the pipes, and it gets the short bound.
	cmd.WaitDelay = untilDeadline(e.t)
	if done != nil {
		cmd.WaitDelay = time.Second
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Start()
	if err == nil {
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		if done != nil {
			go func() {
				waitFor(untilDeadline(e.t), func() bool { return ctx.Err() != nil || done() })
				cancel()
			}()
		}
		err = <-exited
	}
	e.log = append(e.log, fmt.Sprintf("outside$ %q err=%v\n  stdout: %s\n  stderr: %s", argv, err, clip(out.Bytes()), clip(errb.Bytes())))
	return out.String(), errb.String()
}

// ---------------------------------------------------------------------------
// Observations.

func output(res jail.Result) string { return string(res.Stdout) + string(res.Stderr) }

// controlFail reports a broken test: the action did not work even where it
// is granted, so the attack's outcome would prove nothing.
func controlFail(t *testing.T, format string, args ...any) {
	t.Helper()
	t.Fatalf("CONTROL FAILED (the test is broken, not the jail): "+format, args...)
}

func escaped(t *testing.T, format string, args ...any) {
	t.Helper()
	t.Errorf("ESCAPE: "+format, args...)
}

func (e *env) wantIn(res jail.Result, needle, what string) {
	e.t.Helper()
	if !strings.Contains(output(res), needle) {
		controlFail(e.t, "%s: %q does not appear in the output", what, needle)
	}
}

func (e *env) wantNotIn(res jail.Result, needle, what string) {
	e.t.Helper()
	if needle == "" {
		e.t.Fatal("empty needle")
	}
	if strings.Contains(output(res), needle) {
		escaped(e.t, "%s: %q appears in the jail's output", what, needle)
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func fileContent(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// markerPIDs lists the processes whose command line contains marker.
func markerPIDs(marker string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, d := range ents {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(marker)) {
			out = append(out, pid)
		}
	}
	return out
}

// killMarked kills the processes this test started that carry marker.
func killMarked(marker string) {
	for i := 0; i < 50; i++ {
		pids := markerPIDs(marker)
		if len(pids) == 0 {
			return
		}
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// untilDeadline is how long a wait may last: until shortly before the
// test's own deadline (go test -timeout), so that a slow machine waits
// longer instead of failing, and a hang still ends with the test's report.
func untilDeadline(t *testing.T) time.Duration {
	d, ok := t.Deadline()
	if !ok {
		return 10 * time.Minute
	}
	return max(time.Until(d)-15*time.Second, time.Second)
}

// waitEvent waits for an event a control caused (a signal counted, bytes at
// a sink, a process started), bounded only by the test's deadline.
func waitEvent(t *testing.T, cond func() bool) bool { return waitFor(untilDeadline(t), cond) }

// waitFor polls cond until it holds or the deadline passes.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// holdsFor polls cond during the whole window and reports whether it held
// every time (used to observe that something does NOT happen).
func holdsFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !cond() {
			return false
		}
		time.Sleep(25 * time.Millisecond)
	}
	return cond()
}

// ---------------------------------------------------------------------------
// Sinks: listeners in this test's namespaces that record what reaches them.

type sink struct {
	addr  string
	port  int
	mu    sync.Mutex
	data  []byte
	conns int
}

func (s *sink) add(b []byte, conn bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data = append(s.data, b...)
	if conn {
		s.conns++
	}
}

func (s *sink) got() ([]byte, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.data...), s.conns
}

func (s *sink) empty() bool {
	b, n := s.got()
	return len(b) == 0 && n == 0
}

// contains waits for needle to reach the sink (a control's data is on its
// way once the call returned; only the test's deadline bounds the wait).
func (s *sink) contains(t *testing.T, needle string) bool {
	return waitEvent(t, func() bool {
		b, _ := s.got()
		return bytes.Contains(b, []byte(needle))
	})
}

// quiet observes the sink for a short window after a call and reports
// whether nothing (no connection, no byte) reached it.
func (s *sink) quiet() bool { return holdsFor(300*time.Millisecond, s.empty) }

func serveStream(t *testing.T, ln net.Listener, s *sink) {
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.add(nil, true)
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					s.add(buf[:n], false)
					if err != nil {
						return
					}
				}
			}()
		}
	}()
}

func tcpSink(t *testing.T) *sink {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{addr: ln.Addr().String(), port: ln.Addr().(*net.TCPAddr).Port}
	serveStream(t, ln, s)
	return s
}

func unixSink(t *testing.T, path string) *sink {
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{addr: path}
	serveStream(t, ln, s)
	return s
}

// udpSink records datagrams; with dns it answers every query with an A
// record 10.66.77.88 (the "exfiltration worked" address).
func udpSink(t *testing.T, dns bool) *sink {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	s := &sink{addr: pc.LocalAddr().String(), port: pc.LocalAddr().(*net.UDPAddr).Port}
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			s.add(buf[:n], true)
			if dns && n >= 12 {
				_, _ = pc.WriteTo(dnsAnswer(buf[:n]), from)
			}
		}
	}()
	return s
}

// dnsAnswer echoes the question of q with one A record.
func dnsAnswer(q []byte) []byte {
	i := 12
	for i < len(q) && q[i] != 0 {
		i += int(q[i]) + 1
	}
	end := i + 5 // zero byte, QTYPE, QCLASS
	if end > len(q) {
		end = len(q)
	}
	r := append([]byte(nil), q[:end]...)
	r[2], r[3] = 0x81, 0x80               // response, recursion available
	r[6], r[7] = 0, 1                     // one answer
	r[8], r[9], r[10], r[11] = 0, 0, 0, 0 // no authority, no additional
	r = append(r, 0xc0, 0x0c, 0, 1, 0, 1) // name pointer, A, IN
	r = append(r, 0, 0, 0, 60, 0, 4, 10, 66, 77, 88)
	return r
}

// ---------------------------------------------------------------------------
// The victim: a dumpable process of this test's user, outside every jail,
// holding a secret in its environment, its memory and an open file.

type victim struct {
	pid    int
	addr   string
	length int
	fd     int
	secret string
	sigs   atomic.Int64
	cmd    *exec.Cmd
}

func getVictim(t *testing.T) *victim {
	t.Helper()
	victimOnce.Do(func() {
		v, err := startVictim(t)
		victimErr = err
		theVictim.Store(v)
	})
	if victimErr != nil {
		t.Fatalf("start the victim process: %v", victimErr)
	}
	return theVictim.Load()
}

func startVictim(t *testing.T) (*victim, error) {
	if probeBin == "" {
		return nil, fmt.Errorf("no probe: %s", probeWhy)
	}
	dir, err := os.MkdirTemp("/var/tmp", "brig-escape-victim-")
	if err != nil {
		return nil, err
	}
	v := &victim{secret: "VICTIMSECRET" + randHex(8)}
	file := filepath.Join(dir, "held-secret")
	if err := os.WriteFile(file, []byte(v.secret+"\n"), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(probeBin, "hold", file)
	cmd.Env = []string{"BRIG_VICTIM_SECRET=" + v.secret}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	v.cmd = cmd
	// The file stays open in the victim; the directory can go.
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		first := true
		for sc.Scan() {
			line := sc.Text()
			if first {
				first = false
				_, err := fmt.Sscanf(line, "READY pid=%d addr=%s len=%d fd=%d", &v.pid, &v.addr, &v.length, &v.fd)
				ready <- err
				continue
			}
			if line == "SIG" {
				v.sigs.Add(1)
			}
		}
	}()
	select {
	case err := <-ready:
		os.RemoveAll(dir)
		if err != nil {
			_ = cmd.Process.Kill()
			return nil, fmt.Errorf("victim said something unexpected: %v", err)
		}
	case <-time.After(untilDeadline(t)):
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("the victim did not start")
	}
	return v, nil
}

func stopVictim() {
	if v := theVictim.Load(); v != nil && v.cmd != nil {
		_ = v.cmd.Process.Kill()
		_ = v.cmd.Wait()
	}
}

// ---------------------------------------------------------------------------
// A pseudo-terminal pair opened by the test; everything the master side
// reads is collected.

type pty struct {
	master *os.File
	slave  *os.File // kept open so the terminal stays up
	path   string
	mu     sync.Mutex
	seen   []byte
}

func openPTY(t *testing.T) *pty {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	p := &pty{master: m, path: fmt.Sprintf("/dev/pts/%d", n)}
	p.slave, err = os.OpenFile(p.path, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open %s: %v", p.path, err)
	}
	go func() {
		buf := make([]byte, 1024)
		for {
			n, err := m.Read(buf)
			p.mu.Lock()
			p.seen = append(p.seen, buf[:max(n, 0)]...)
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { p.slave.Close(); m.Close() })
	return p
}

func (p *pty) has(needle string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return bytes.Contains(p.seen, []byte(needle))
}

// ---------------------------------------------------------------------------
// Misc.

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return -1
	}
	return fi.Size()
}

// procRlimitMsgqueue reads this process's RLIMIT_MSGQUEUE soft limit.
func msgqueueSoft() uint64 {
	var r unix.Rlimit
	_ = unix.Getrlimit(unix.RLIMIT_MSGQUEUE, &r)
	return r.Cur
}

func copyFile(dst, src string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// statFields returns the fields of /proc/PID/stat after the command name
// (field 3, the state, first), or nil when pid is gone.
func statFields(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 > len(s) {
		return nil
	}
	return strings.Fields(s[i+2:])
}

// niceOf returns the nice value of pid's main thread (field 19 of stat).
func niceOf(pid int) int {
	f := statFields(pid)
	if len(f) < 17 {
		return -100
	}
	n, _ := strconv.Atoi(f[16])
	return n
}

// childAbove returns the ancestor of pid (or pid itself) whose parent is
// ancestor, or 0 when ancestor is not above pid: given the test process,
// the init of the call pid belongs to.
func childAbove(pid, ancestor int) int {
	for range 64 {
		f := statFields(pid)
		if len(f) < 2 {
			return 0
		}
		ppid, _ := strconv.Atoi(f[1])
		switch ppid {
		case ancestor:
			return pid
		case 0, 1:
			return 0
		}
		pid = ppid
	}
	return 0
}

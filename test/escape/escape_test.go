// Package escape is brig's escape suite: hostile commands run through the
// real supervisor and jail on this kernel, each judged by an OBSERVABLE FACT
// (never by an exit status alone), each paired with a CONTROL that performs
// the same action where it is granted (or outside the jail) and must work —
// a failing control means the test is broken and stops the case.
//
// Families and how an escape is detected:
//
//	secrets     canary files in a fake $HOME (~/.ssh/id_rsa, ~/.aws/credentials,
//	            ~/.config/brig/credentials.toml, git's and npm's credentials
//	            under granted toolchain roots, with PATH holding $HOME/ and
//	            under a --read ~ grant), another project, credential
//	            environment variables    → the canary appears in stdout/stderr
//	traversal   .., absolute paths, /proc/self/{root,cwd}, symlinks made in the
//	            jail or shipped by the repository, a granted path swapped for a
//	            link after the decision, hard links, mv/cp of outside
//	            files                     → canary in the output, or the link /
//	                                        copy exists in the workspace afterwards
//	proc        /proc/<pid>/{environ,mem,root,fd} of the supervisor (this test
//	            process), of a dumpable victim process and of the jail's init
//	                                      → canary in the output
//	writes      files in another project, in the real /tmp and /dev/shm, in
//	            $HOME, ~/.gitconfig; chmod, mtime, xattr, unlink and rename of
//	            outside files; the supervisor's sweep of created protected
//	            paths tricked through a planted symlink
//	                                      → the file exists / changed (content,
//	                                        mode, mtime, xattr) afterwards
//	protected   .git/hooks, .git/config, .envrc, .vscode, .mcp.json, .brig,
//	            .husky, mv .git, nested repositories, .git FILE pointers,
//	            submodule gitdirs, a freshly planted nested repository, one
//	            planted by its shape (bare, any name), a new .git/modules
//	            entry, the core.hooksPath directory
//	                                      → the file exists / changed afterwards,
//	                                        or planted code runs when host git runs
//	network     TCP, MPTCP, UDP, DNS to sinks the test runs on the host
//	            loopback; raw and packet sockets; abstract and pathname unix
//	            sockets (outside and inside the workspace)
//	                                      → the sink received bytes, or the probe
//	                                        read back its own raw/sniffed packet
//	supervisor  ptrace / process_vm_readv of the supervisor (this test
//	            process) and of a victim (a dumpable process of the same user),
//	            kill -TERM, kill -0, pidfd_send_signal, kill -1, prlimit and
//	            renice of processes outside the call
//	                                      → canary bytes read, the signal counter
//	                                        of the target moves, its rlimit /
//	                                        nice value changes
//	kernel      keyctl, bpf, perf_event_open, io_uring, mount, unshare, clone
//	            with CLONE_NEWUSER, chroot, mknod, int 0x80, x32, personality
//	                                      → the probe prints data it could only
//	                                        get through the syscall (key read back,
//	                                        map value, io_uring write, mountinfo …)
//	terminal    TIOCSTI into a pty the test owns (also with high request bits)
//	                                      → the master side receives the bytes
//	survivors   setsid, double fork, nohup, a heartbeat daemon, a call that
//	            times out while trapping signals
//	                                      → a process with the marker argv exists
//	                                        after the call; the heartbeat grows
//	exhaustion  fork bomb, stdout/stderr floods, memory, file size
//	                                      → processes counted in /proc, bytes
//	                                        kept, bytes touched, file size
//
// Every case runs in several passes (see passes in harness_test.go): the
// full jail, Landlock alone, seccomp alone (namespaces stay on in both),
// Landlock+seccomp without namespaces, and Landlock alone without
// namespaces. The whole table runs as root and again as uid 65534
// (TestUnprivileged re-executes this binary under setpriv), and the full
// pass runs once more, as root and as uid 65534, where brig can create no
// user namespace at all (TestWithoutUserNamespaces: the composition
// without namespaces as users of Ubuntu, Docker and CI runners get it).
// There, cases whose control needs a new user namespace or root's
// privileges over the host are not applicable. TestGitCommit
// checks that git add + commit works in the jail, with namespaces and
// without, while the protected paths stay as they were. TestSupervisorNamespaces checks
// that a user who can create namespaces gets them from the supervisor.
//
// An "ESCAPE:" failure is a jail bug and must stay failing until the jail
// is fixed; a "CONTROL FAILED" failure means the test itself is broken. A
// case whose attack cannot exist here — its control cannot run outside the
// jail either (no IA32 emulation, no x32 ABI, CAP_MKNOD as uid 65534), or
// the kernel cannot run the pass at all (a layer pass below Landlock ABI 6
// without namespaces) — is NOT APPLICABLE: the summary counts it as n/a
// with its reason, never as a pass and never as a failure.
//
// No case has a wall-clock budget of its own: a control waits for the event
// it caused, and every wait is bounded only by the test's deadline (go test
// -timeout), so a loaded machine makes the suite slower, not red. Timeouts
// that are the point of a case (a flood, a process that ignores signals)
// are scaled up and retried when the machine was too slow to set the case
// up in time.
//
// The C probe (testdata/probe.c) is built with gcc by TestMain; without gcc
// the cases that need it are skipped with that reason.
package escape

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"brig/jail"
	"brig/supervisor"
)

func TestMain(m *testing.M) {
	// /proc/PID/environ shows the environment a process was STARTED with,
	// so re-execute once with a credential-looking canary in it.
	if os.Getenv(envSupSecret) == "" {
		env := append(os.Environ(), envSupSecret+"=SUPSECRET"+randHex(8))
		err := syscall.Exec("/proc/self/exe", os.Args, env)
		fmt.Fprintln(os.Stderr, "escape: re-exec with the canary environment:", err)
		os.Exit(2)
	}
	supSecret = os.Getenv(envSupSecret)
	memSecret = []byte("MEMSECRET" + randHex(8))
	// Cases mostly wait (timeouts, observation windows): let more of them
	// be in flight than GOMAXPROCS; sem bounds the jails actually running.
	flag.Parse()
	if f := flag.Lookup("test.parallel"); f != nil && !flagSet("test.parallel") {
		_ = f.Value.Set("16")
	}
	os.Exit(run(m))
}

func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func run(m *testing.M) int {
	unprivPass = os.Getenv(envUnpriv) == "1"
	noUserNSPass = os.Getenv(envNoUserNS) == "1"
	if binDir = os.Getenv(envBinDir); binDir == "" {
		var err error
		if binDir, err = os.MkdirTemp("/tmp", "brig-escape-bin-"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		defer os.RemoveAll(binDir)
		if err := os.Chmod(binDir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if err := build(); err != nil {
			fmt.Fprintln(os.Stderr, "escape:", err)
			return 2
		}
	}
	brigBin = filepath.Join(binDir, "brig")
	if fi, err := os.Stat(filepath.Join(binDir, "probe")); err == nil && fi.Mode()&0o111 != 0 {
		probeBin = filepath.Join(binDir, "probe")
	} else if probeWhy == "" {
		probeWhy = "the C probe was not built (gcc missing?)"
	}

	sigc := make(chan os.Signal, 64)
	signal.Notify(sigc, syscall.SIGTERM, syscall.SIGUSR1)
	go func() {
		for range sigc {
			sigCount.Add(1)
		}
	}()

	// Facts to check before supervisor.New makes this process
	// non-dumpable: the canary is in our environ, and a user namespace can
	// be created by this user.
	b, _ := os.ReadFile("/proc/self/environ")
	supEnvOK = bytes.Contains(b, []byte(supSecret))
	nsBefore = userNSWorks()

	var err error
	sup, err = supervisor.New(context.Background(), supervisor.Options{Executable: brigBin, KillGrace: 3 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, "escape: supervisor.New:", err)
		return 2
	}
	code := m.Run()
	stopVictim()
	removeTemplate()
	removeOurCgroups()
	printSummary()
	return code
}

// removeOurCgroups removes the (empty) per-call cgroups a root supervisor
// of this process left behind: the supervisor gives up removing one while
// processes of the call are still in it (see the fork bomb case).
func removeOurCgroups() {
	for _, h := range []string{"/sys/fs/cgroup/pids/brig", "/sys/fs/cgroup/memory/brig", "/sys/fs/cgroup/brig"} {
		dirs, _ := filepath.Glob(filepath.Join(h, fmt.Sprintf("call-%d-*", os.Getpid())))
		for _, d := range dirs {
			_ = os.Remove(d)
		}
	}
}

// build compiles brig, the C probe, and copies this test binary, all into
// binDir (0755) so uid 65534 can execute them.
func build() error {
	modRoot, err := filepath.Abs("../..")
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, "brig"), "./cmd/brig")
	cmd.Dir = modRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/brig: %v\n%s", err, out)
	}
	if gcc, err := exec.LookPath("gcc"); err != nil {
		probeWhy = "gcc is not installed: the C probes (kernel surface, ptrace, /proc/PID/mem, raw/packet sockets, TIOCSTI, fork bomb, memory) cannot be built"
	} else {
		src, _ := filepath.Abs("testdata/probe.c")
		cmd := exec.Command(gcc, "-O1", "-Wall", "-o", filepath.Join(binDir, "probe"), src)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("gcc probe.c: %v\n%s", err, out)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	return copyFile(filepath.Join(binDir, "escape.test"), self, 0o755)
}

// userNSWorks creates the namespaces the supervisor uses, the way it does,
// from this (still dumpable) process.
func userNSWorks() bool {
	cmd := exec.Command("/bin/true")
	uid, gid := os.Getuid(), os.Getgid()
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
	}
	return cmd.Run() == nil
}

// TestSupervisorNamespaces: where this user can create the namespaces
// (checked before supervisor.New), the supervisor must use them; losing
// them silently drops the PID, network and mount layers for every call.
func TestSupervisorNamespaces(t *testing.T) {
	t.Parallel()
	if !nsBefore {
		t.Skip("this user cannot create user namespaces here")
	}
	if !sup.Namespaces() {
		t.Errorf("JAIL BUG: uid %d can create user+mount+PID+net namespaces (checked before supervisor.New), but the supervisor reports Namespaces()=false: every call runs without the PID, network and mount namespaces (no private /tmp, no read-only protected mounts)", os.Getuid())
	}
}

// TestEscape runs every case of the table in every pass it belongs to.
func TestEscape(t *testing.T) {
	t.Parallel()
	if !sup.Namespaces() {
		t.Log("user namespaces are unavailable here: the namespace passes run without them")
	}
	table := cases()
	checkTable(t, table)
	only := map[string]bool{}
	for _, n := range strings.Split(os.Getenv(envPasses), ",") {
		if n != "" {
			only[n] = true
		}
	}
	for _, p := range passes {
		if len(only) > 0 && !only[p.name] {
			continue
		}
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			families := map[string][]escCase{}
			var order []string
			for _, c := range table {
				if p.mask != 0 && c.passes&p.mask == 0 {
					continue
				}
				if _, ok := families[c.family]; !ok {
					order = append(order, c.family)
				}
				families[c.family] = append(families[c.family], c)
			}
			for _, fam := range order {
				t.Run(fam, func(t *testing.T) {
					t.Parallel()
					for _, c := range families[fam] {
						t.Run(c.name, func(t *testing.T) { runCase(t, p, c) })
					}
				})
			}
		})
	}
}

func checkTable(t *testing.T, table []escCase) {
	seen := map[string]bool{}
	for _, c := range table {
		if c.control == nil || c.attack == nil {
			t.Fatalf("case %s/%s lacks a control or an attack", c.family, c.name)
		}
		if seen[c.family+"/"+c.name] {
			t.Fatalf("duplicate case %s/%s", c.family, c.name)
		}
		seen[c.family+"/"+c.name] = true
	}
}

func runCase(t *testing.T, p pass, c escCase) {
	t.Parallel()
	record(t, p.name, p.name+"/"+c.family)
	switch {
	case c.onlyRoot != "" && unprivPass:
		notApplicable(t, "as uid %d: %s", unprivUID, c.onlyRoot)
	case c.onlyUnpriv != "" && !unprivPass:
		t.Skipf("unprivileged only: %s", c.onlyUnpriv)
	case c.hostOnly != "" && noUserNSPass:
		notApplicable(t, "without user namespaces: %s", c.hostOnly)
	case c.probe && probeBin == "":
		t.Skipf("needs the C probe: %s", probeWhy)
	}
	if c.serial {
		serialMu.Lock()
		defer serialMu.Unlock()
	}
	sem <- struct{}{}
	defer func() { <-sem }()
	if c.probe {
		getVictim(t)
	}
	git := c.family == "protected"
	c.control(t, newEnv(t, p, "control", git))
	if t.Failed() {
		return
	}
	c.attack(t, newEnv(t, p, "attack", git))
}

// TestWithoutUserNamespaces re-executes this test binary (the root run
// only) in a user namespace whose user.max_user_namespaces is 0, mapping
// uid 0 and 65534 to themselves: the supervisor there can create no
// namespace, as on Ubuntu with AppArmor's restriction, under Docker's
// default profile or on CI runners, so its full pass is the composition
// without namespaces — the real one, not the NoNamespaces layer switch.
// That run includes TestGitCommit and its own unprivileged pass.
func TestWithoutUserNamespaces(t *testing.T) {
	t.Parallel()
	switch {
	case noUserNSPass:
		if sup.Namespaces() {
			t.Fatal("this run was started without user namespaces, but the supervisor has them: it proves nothing")
		}
		t.Skip("this process is the pass without user namespaces")
	case unprivPass:
		t.Skip("started by the root run")
	case os.Getuid() != 0:
		t.Skip("the pass without user namespaces is started by the root run (run the suite as root)")
	}
	args := []string{"-c", `echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"`, "sh",
		filepath.Join(binDir, "escape.test"), "-test.count=1", "-test.run", "^(TestEscape|TestGitCommit|TestUnprivileged|TestWithoutUserNamespaces)$"}
	ctx, cancel, timeoutArgs := childDeadline(t)
	defer cancel()
	args = append(args, timeoutArgs...)
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", args...)
	cmd.Dir = binDir
	ids := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}, {ContainerID: unprivUID, HostID: unprivUID, Size: 1}}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER, UidMappings: ids, GidMappings: ids, GidMappingsEnableSetgroups: true}
	cmd.Env = append(os.Environ(), envNoUserNS+"=1", envBinDir+"="+binDir, envPasses+"=full")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	text := out.String()
	if err != nil {
		t.Errorf("the pass without user namespaces failed (%v); its output follows\n%s", err, text)
		return
	}
	t.Logf("pass without user namespaces (root, and uid 65534 within it) passed:\n%s", summaryLines(text))
}

// TestAtOlderLandlockABIs re-executes this test binary (the root run only)
// with brig's Landlock capped (jail.TestABIEnv) at each ABI from 1 up to
// this kernel's, so the full jail is proved as it is on older kernels:
// with namespaces, without them (where ABI 6 is needed to contain a call's
// processes, below it the jail refuses as it must: not applicable), as root
// and as uid 65534. The layer passes run only at the kernel's own ABI.
func TestAtOlderLandlockABIs(t *testing.T) {
	t.Parallel()
	switch {
	case os.Getenv(jail.TestABIEnv) != "":
		t.Skip("this process is a capped run")
	case noUserNSPass || unprivPass:
		t.Skip("started by the root run")
	case os.Getuid() != 0:
		t.Skip("the capped runs are started by the root run (run the suite as root)")
	}
	kernel := jail.LandlockABI()
	if kernel < 2 {
		t.Skipf("this kernel has Landlock ABI %d: nothing below it to cap at", kernel)
	}
	for abi := 1; abi < kernel; abi++ {
		ctx, cancel, timeoutArgs := childDeadline(t)
		args := append([]string{"-test.count=1", "-test.run", "^(TestEscape|TestGitCommit|TestUnprivileged|TestWithoutUserNamespaces)$"}, timeoutArgs...)
		cmd := exec.CommandContext(ctx, filepath.Join(binDir, "escape.test"), args...)
		cmd.Dir = binDir
		cmd.Env = append(os.Environ(), jail.TestABIEnv+"="+strconv.Itoa(abi), envBinDir+"="+binDir, envPasses+"=full")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		cancel()
		if err != nil {
			t.Errorf("the run capped at Landlock ABI %d failed (%v); its output follows\n%s", abi, err, out.String())
			continue
		}
		t.Logf("capped at Landlock ABI %d: passed\n%s", abi, summaryLines(out.String()))
	}
}

// childDeadline gives a re-executed pass what is left of this test's
// deadline (go test -timeout), minus time to report: a slow machine makes
// it slower, never failed.
func childDeadline(t *testing.T) (context.Context, context.CancelFunc, []string) {
	d, ok := t.Deadline()
	if !ok {
		return context.Background(), func() {}, nil
	}
	left := time.Until(d) - 20*time.Second
	if left < time.Minute {
		t.Fatalf("only %s left before the test deadline for a re-executed pass: run go test with a longer -timeout", time.Until(d).Round(time.Second))
	}
	ctx, cancel := context.WithDeadline(context.Background(), d.Add(-10*time.Second))
	return ctx, cancel, []string{"-test.timeout=" + left.Round(time.Second).String()}
}

// summaryLines keeps a re-executed pass's failures, skips and summary.
func summaryLines(text string) string {
	var keep []string
	keepRe := regexp.MustCompile(`^\s*--- (FAIL|SKIP)|ESCAPE:|JAIL BUG|CONTROL FAILED|needs the C probe|escape suite summary|^\s+\S+\s+pass\s+\d+\s+fail|not applicable here|^\s+n/a `)
	for _, l := range strings.Split(text, "\n") {
		if keepRe.MatchString(l) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// TestUnprivileged re-executes this test binary as uid/gid 65534 (setpriv),
// which runs the whole table again with fixtures owned by that user.
// BRIG_ESCAPE_UNPRIV_RUN narrows what the unprivileged pass runs (a -run
// pattern); by default it runs everything.
func TestUnprivileged(t *testing.T) {
	t.Parallel()
	if unprivPass {
		t.Skip("this process is the unprivileged pass")
	}
	if os.Getuid() != 0 {
		t.Skip("the unprivileged pass is started by the root run (run the suite as root)")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatalf("setpriv (util-linux) is needed for the unprivileged pass: %v", err)
	}
	runPat := os.Getenv("BRIG_ESCAPE_UNPRIV_RUN")
	args := []string{"--reuid=65534", "--regid=65534", "--clear-groups", "--",
		filepath.Join(binDir, "escape.test"), "-test.count=1"}
	// No budget of its own: the pass gets what is left of this test's
	// deadline (go test -timeout), minus time to report, so a slow machine
	// makes it slower, never failed.
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		left := time.Until(d) - 20*time.Second
		if left < time.Minute {
			t.Fatalf("only %s left before the test deadline for the unprivileged pass: run go test with a longer -timeout", time.Until(d).Round(time.Second))
		}
		args = append(args, "-test.timeout="+left.Round(time.Second).String())
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-10*time.Second))
		defer cancel()
	}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	if runPat != "" {
		args = append(args, "-test.run", runPat)
	}
	cmd := exec.CommandContext(ctx, setpriv, args...)
	cmd.Dir = binDir
	cmd.Env = []string{
		"PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin",
		"HOME=/nonexistent", "LANG=C.UTF-8", "TMPDIR=/tmp",
		envUnpriv + "=1", envBinDir + "=" + binDir,
		envNoUserNS + "=" + os.Getenv(envNoUserNS), envPasses + "=" + os.Getenv(envPasses),
	}
	if v, ok := os.LookupEnv(jail.TestABIEnv); ok {
		cmd.Env = append(cmd.Env, jail.TestABIEnv+"="+v) // a run capped at an older Landlock stays capped
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	text := out.String()
	// Keep the log readable: failures and skips with their reasons, and the
	// child's own summary.
	var keep []string
	keepRe := regexp.MustCompile(`^\s*--- (FAIL|SKIP)|ESCAPE:|JAIL BUG|CONTROL FAILED|needs the C probe|^escape suite summary|^  \S+\s+pass\s+\d+\s+fail|^not applicable here|^  n/a `)
	for _, l := range strings.Split(text, "\n") {
		if keepRe.MatchString(l) {
			keep = append(keep, l)
		}
	}
	if err != nil {
		t.Errorf("the unprivileged pass (uid 65534) failed (%v); its output follows\n%s", err, text)
		return
	}
	t.Logf("unprivileged pass (uid 65534) passed:\n%s", strings.Join(keep, "\n"))
}

// TestGitCommit: git add + commit inside the jail must work in the
// workspace in both compositions: with namespaces (only hooks and config
// are read-only) and without them (the whole grant; the supervisor puts
// the protected paths back after the call). A hook planted and a config
// rewritten in the same call, and git run on them within it, leave
// nothing behind, and the protected files are byte for byte as before.
func TestGitCommit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		p    pass
	}{{"namespaces", passes[0]}, {"no-namespaces", passes[3]}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.p.namespaces() != !tc.p.layers.NoNamespaces {
				t.Skip("the supervisor has no namespaces (see TestSupervisorNamespaces)")
			}
			t.Parallel()
			sem <- struct{}{}
			defer func() { <-sem }()
			e := newEnv(t, tc.p, "git", true)
			before := strings.TrimSpace(e.git(e.ws, "rev-parse", "HEAD"))
			cfg := statSig(filepath.Join(e.ws, ".git/config"))
			hooks := statSig(filepath.Join(e.ws, ".git/hooks"))
			msg := "jailed commit " + randHex(4)
			res := e.sh(`echo change >> README.md && mkdir newdir && echo new > newdir/new.txt && echo top > top.txt && git add README.md newdir top.txt && git commit -q -m "` + msg + `" && git stash list && git log -1 --format=%s; ` +
				`printf '#!/bin/sh\necho hook-ran-in-the-jail\n' > .git/hooks/post-commit; chmod +x .git/hooks/post-commit; git config core.hooksPath .git/hooks; git commit -q --allow-empty -m second; echo done`)
			after := strings.TrimSpace(e.git(e.ws, "rev-parse", "HEAD~1"))
			subject := strings.TrimSpace(e.git(e.ws, "log", "-1", "--skip=1", "--format=%s"))
			if after == before || subject != msg {
				t.Fatalf("git commit in the jail did not create the commit (HEAD %s -> %s, subject %q)\nstdout: %s\nstderr: %s", before, after, subject, res.Stdout, res.Stderr)
			}
			if st := e.git(e.ws, "status", "--porcelain", "--", "README.md", "src", "newdir", "top.txt"); strings.TrimSpace(st) != "" {
				t.Errorf("workspace not clean after the jailed commit:\n%s", st)
			}
			if !strings.Contains(string(res.Stdout), "done") {
				t.Errorf("the script did not run to its end: %s", res.Stderr)
			}
			if exists(filepath.Join(e.ws, ".git/hooks/post-commit")) {
				escaped(t, ".git/hooks/post-commit exists after the call")
			}
			if got := statSig(filepath.Join(e.ws, ".git/config")); got != cfg {
				escaped(t, ".git/config changed: %s -> %s", cfg, got)
			}
			if got := statSig(filepath.Join(e.ws, ".git/hooks")); got != hooks {
				escaped(t, ".git/hooks changed: %s -> %s", hooks, got)
			}
		})
	}
}

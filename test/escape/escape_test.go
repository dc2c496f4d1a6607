// Package escape is brig's escape suite: hostile commands run through the
// real supervisor and jail on this kernel, each judged by an OBSERVABLE FACT
// (never by an exit status alone), each paired with a CONTROL that performs
// the same action where it is granted (or outside the jail) and must work —
// a failing control means the test is broken and stops the case.
//
// Families and how an escape is detected:
//
//	secrets     canary files in a fake $HOME (~/.ssh/id_rsa, ~/.aws/credentials,
//	            ~/.config/brig/credentials.toml), another project, credential
//	            environment variables    → the canary appears in stdout/stderr
//	traversal   .., absolute paths, /proc/self/{root,cwd}, symlinks made in the
//	            jail or shipped by the repository, hard links, mv/cp of outside
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
//	            submodule gitdirs, a freshly planted nested repository
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
// (TestUnprivileged re-executes this binary under setpriv). TestGitCommit
// checks that git add + commit works in the jail (and, without namespaces,
// fails without touching protected paths). TestSupervisorNamespaces checks
// that a user who can create namespaces gets them from the supervisor.
//
// An "ESCAPE:" failure is a jail bug and must stay failing until the jail
// is fixed; a "CONTROL FAILED" failure means the test itself is broken.
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
	"strings"
	"syscall"
	"testing"
	"time"

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
	if unprivPass {
		binDir = os.Getenv(envBinDir)
	} else {
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
	for _, p := range passes {
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
		t.Skipf("root only: %s", c.onlyRoot)
	case c.onlyUnpriv != "" && !unprivPass:
		t.Skipf("unprivileged only: %s", c.onlyUnpriv)
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
	// The pass gets what is left of this test's own deadline (the suite
	// grows, and the machine is shared), less a margin to report.
	budget := 10 * time.Minute
	if d, ok := t.Deadline(); ok {
		budget = time.Until(d) - 20*time.Second
	}
	args := []string{"--reuid=65534", "--regid=65534", "--clear-groups", "--",
		filepath.Join(binDir, "escape.test"), "-test.count=1", "-test.timeout=" + budget.String()}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	if runPat != "" {
		args = append(args, "-test.run", runPat)
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget+5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, setpriv, args...)
	cmd.Dir = binDir
	cmd.Env = []string{
		"PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin",
		"HOME=/nonexistent", "LANG=C.UTF-8", "TMPDIR=/tmp",
		envUnpriv + "=1", envBinDir + "=" + binDir,
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	text := out.String()
	// Keep the log readable: failures and skips with their reasons, and the
	// child's own summary.
	var keep []string
	keepRe := regexp.MustCompile(`^\s*--- (FAIL|SKIP)|ESCAPE:|JAIL BUG|CONTROL FAILED|root only:|needs the C probe|no x32 ABI|^escape suite summary|^  \S+\s+pass\s+\d+\s+fail`)
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
// workspace with namespaces (only hooks and config are read-only). Without
// namespaces (Landlock's split grants: no new entries in .git), it is
// expected to fail, without creating a commit and with the protected paths
// still protected.
func TestGitCommit(t *testing.T) {
	t.Parallel()
	t.Run("namespaces", func(t *testing.T) {
		if !sup.Namespaces() {
			t.Skip("the supervisor has no namespaces (see TestSupervisorNamespaces)")
		}
		t.Parallel()
		sem <- struct{}{}
		defer func() { <-sem }()
		e := newEnv(t, passes[0], "git", true)
		before := strings.TrimSpace(e.git(e.ws, "rev-parse", "HEAD"))
		msg := "jailed commit " + randHex(4)
		res := e.sh(`echo change >> README.md && echo new > src/new.txt && git add README.md src/new.txt && git commit -q -m "` + msg + `" && git log -1 --format=%s`)
		after := strings.TrimSpace(e.git(e.ws, "rev-parse", "HEAD"))
		subject := strings.TrimSpace(e.git(e.ws, "log", "-1", "--format=%s"))
		if after == before || subject != msg {
			t.Fatalf("git commit in the jail did not create the commit (HEAD %s -> %s, subject %q)\nstdout: %s\nstderr: %s", before, after, subject, res.Stdout, res.Stderr)
		}
		if st := e.git(e.ws, "status", "--porcelain", "--", "README.md", "src"); strings.TrimSpace(st) != "" {
			t.Errorf("workspace not clean after the jailed commit:\n%s", st)
		}
	})
	t.Run("no-namespaces", func(t *testing.T) {
		t.Parallel()
		sem <- struct{}{}
		defer func() { <-sem }()
		e := newEnv(t, passes[3], "git", true)
		before := strings.TrimSpace(e.git(e.ws, "rev-parse", "HEAD"))
		cfg := fileContent(filepath.Join(e.ws, ".git/config"))
		res := e.sh(`echo change >> README.md; git add -A; git commit -q -m nons; printf '#!/bin/sh\ntouch /tmp/pwned\n' > .git/hooks/pre-commit; git config core.hooksPath /tmp; echo done`)
		after := strings.TrimSpace(e.git(e.ws, "rev-parse", "HEAD"))
		if after != before {
			t.Errorf("without namespaces git commit was expected to fail, but HEAD moved %s -> %s", before, after)
		}
		if exists(filepath.Join(e.ws, ".git/hooks/pre-commit")) {
			escaped(t, ".git/hooks/pre-commit was created without namespaces")
		}
		if fileContent(filepath.Join(e.ws, ".git/config")) != cfg {
			escaped(t, ".git/config changed without namespaces")
		}
		if !strings.Contains(string(res.Stdout), "done") {
			t.Errorf("the script did not run to its end: %s", res.Stderr)
		}
	})
}

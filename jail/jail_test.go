package jail_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"brig/jail"
	"brig/policy"
	"brig/supervisor"
)

// The test binary is also the jail child: the supervisor re-executes it.
func TestMain(m *testing.M) {
	if jail.IsChild() {
		jail.ChildMain(map[string]jail.ToolFunc{"threads": threadsTool, "hang": hangTool, "netprobe": netprobeTool})
	}
	os.Exit(m.Run())
}

// threadReport is what threadsTool sees from inside the jail.
type threadReport struct {
	Threads  int               `json:"threads"`
	Status   map[string]string `json:"status"`    // tid → "Seccomp/NoNewPrivs/CapEff/CapBnd"
	OpenErrs map[int]string    `json:"open_errs"` // tid → error opening the forbidden file
}

// threadsTool proves every thread of the worker is restricted: it reads the
// kernel's own per-thread status, and opens a file outside its grant from
// many goroutines pinned to distinct OS threads.
func threadsTool(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
	var forbidden string
	if err := json.Unmarshal(args, &forbidden); err != nil {
		return nil, err
	}
	rep := threadReport{Status: map[string]string{}, OpenErrs: map[int]string{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	release := make(chan struct{})
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // stays locked: the thread dies with the goroutine
			_, err := os.ReadFile(forbidden)
			msg := "OPENED"
			if err != nil {
				msg = err.Error()
			}
			mu.Lock()
			rep.OpenErrs[unix.Gettid()] = msg
			mu.Unlock()
			<-release // hold the thread so the next goroutine gets another
		}()
	}
	// Give each goroutine its own thread before releasing them.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		mu.Lock()
		n := len(rep.OpenErrs)
		mu.Unlock()
		if n == 12 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", t.Name(), "status"))
		if err != nil {
			return nil, err
		}
		var fields []string
		for _, line := range strings.Split(string(b), "\n") {
			for _, k := range []string{"Seccomp:", "NoNewPrivs:", "CapEff:", "CapPrm:", "CapInh:", "CapAmb:"} {
				if strings.HasPrefix(line, k) {
					fields = append(fields, strings.Join(strings.Fields(line), " "))
				}
			}
		}
		rep.Status[t.Name()] = strings.Join(fields, "; ")
	}
	rep.Threads = len(tasks)
	close(release)
	wg.Wait()
	return json.Marshal(rep)
}

// hangTool never returns on its own.
func hangTool(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

type env struct {
	sup  *supervisor.Supervisor
	ws   string
	home string
	// outside is a directory off /tmp (which is private inside the jail),
	// so a refused read there is Landlock's doing, not a missing file.
	outside string
}

func newEnv(t *testing.T) env {
	t.Helper()
	if jail.LandlockABI() < 1 {
		t.Skip("Landlock unavailable on this kernel")
	}
	sup, err := supervisor.New(context.Background(), supervisor.Options{Executable: os.Args[0]})
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	outside, err := os.MkdirTemp("/var/tmp", "brig-jail-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	e := env{sup: sup, ws: filepath.Join(root, "ws"), home: filepath.Join(root, "home"), outside: outside}
	for _, d := range []string{e.ws, e.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e env) spec(t *testing.T, mutate func(*policy.Profile)) jail.Spec {
	t.Helper()
	lim := jail.DefaultLimits()
	lim.Timeout = 20 * time.Second
	p := policy.Profile{
		Workspace: e.ws, Dir: e.ws, Home: e.home, Limits: lim,
		ParentEnv:  []string{"PATH=/usr/bin:/bin", "HOME=" + e.home, "SECRET_TOKEN=canary-env"},
		Namespaces: e.sup.Namespaces(),
	}
	if !p.Namespaces {
		p.CallTmp = t.TempDir()
	}
	if mutate != nil {
		mutate(&p)
	}
	s, err := p.Spec()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (e env) sh(t *testing.T, spec jail.Spec, script string) jail.Result {
	t.Helper()
	res, err := e.sup.Run(context.Background(), spec, jail.Invocation{Argv: []string{"/bin/bash", "-c", script}}, supervisor.IO{})
	if err != nil {
		t.Fatalf("run %q: %v", script, err)
	}
	return res
}

// TestGrantUnderTmpWhileTheMasksAreMade: init makes the hidden paths'
// masks on a scratch tmpfs it mounts over /tmp for a moment. A worker
// forked before that found /tmp empty as it composed its grants, and a
// Go tool's call whose workspace lies under /tmp failed now and then
// ("grant write /tmp/…: stat …: no such file or directory"). Here the
// scratch is held over /tmp (jail.ScratchHoldFile) and the call must run.
func TestGrantUnderTmpWhileTheMasksAreMade(t *testing.T) {
	e := newEnv(t)
	if !e.sup.Namespaces() {
		t.Skip("no mount namespace here: no masks, no scratch")
	}
	ws, err := os.MkdirTemp("/tmp", "brig-jail-test-ws-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(ws) })
	e.ws = ws
	if err := os.WriteFile(jail.ScratchHoldFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(jail.ScratchHoldFile) })
	spec := e.spec(t, nil)
	// As a file tool's: no private /tmp, so the workspace's grant is
	// composed beside the view, not after it.
	spec.PrivateTmp = false
	args, _ := json.Marshal(filepath.Join(e.outside, "nothing"))
	start := time.Now()
	res, err := e.sup.Run(context.Background(), spec, jail.Invocation{Tool: "threads", Args: args}, supervisor.IO{})
	if err != nil {
		t.Fatalf("a Go tool's call with its workspace under /tmp, the masks' scratch held: %v", err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("the call: %+v", res)
	}
	// The control: the scratch was held, so the call overlapped it.
	if took := time.Since(start); took < jail.ScratchHold {
		t.Fatalf("the call took %v, less than the hold (%v): the scratch was not held and this test shows nothing", took, jail.ScratchHold)
	}
}

func TestEveryThreadIsRestricted(t *testing.T) {
	e := newEnv(t)
	canary := filepath.Join(e.outside, "secret")
	if err := os.WriteFile(canary, []byte("canary-bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(canary)
	run := func(spec jail.Spec) threadReport {
		res, err := e.sup.Run(context.Background(), spec, jail.Invocation{Tool: "threads", Args: args}, supervisor.IO{})
		if err != nil {
			t.Fatalf("threads tool: %v", err)
		}
		var rep threadReport
		if err := json.Unmarshal(res.Output, &rep); err != nil {
			t.Fatalf("decode %q: %v", res.Output, err)
		}
		return rep
	}

	rep := run(e.spec(t, nil))
	if rep.Threads < 12 {
		t.Fatalf("only %d threads observed; the test needs many", rep.Threads)
	}
	for tid, st := range rep.Status {
		// Seccomp 2 = filter mode; no_new_privs; no capability held or
		// inheritable (the bounding set is checked on the exec'd tool).
		for _, want := range []string{"Seccomp: 2", "NoNewPrivs: 1", "CapEff: 0000000000000000", "CapPrm: 0000000000000000", "CapInh: 0000000000000000", "CapAmb: 0000000000000000"} {
			if !strings.Contains(st, want) {
				t.Errorf("thread %s: status %q lacks %q", tid, st, want)
			}
		}
	}
	if len(rep.OpenErrs) != 12 {
		t.Fatalf("%d goroutines reported, want 12", len(rep.OpenErrs))
	}
	for tid, msg := range rep.OpenErrs {
		if msg == "OPENED" || !strings.Contains(msg, "permission denied") {
			t.Errorf("thread %d opened the file outside the grant: %s", tid, msg)
		}
	}

	// Control: with the file's directory granted, the same threads read it.
	rep = run(e.spec(t, func(p *policy.Profile) { p.Read = []string{e.outside} }))
	for tid, msg := range rep.OpenErrs {
		if msg != "OPENED" {
			t.Errorf("control: thread %d could not read a granted file: %s", tid, msg)
		}
	}
}

// TestHiddenPathsAreMasked: hidden paths inside a granted tree cannot be
// read, whether files or directories (two of each: the second mask of a
// kind is bound from the first) or a symlink (its target is masked), nor
// made readable with chmod; their siblings stay readable.
func TestHiddenPathsAreMasked(t *testing.T) {
	e := newEnv(t)
	const canary = "canary-hidden-bytes"
	dir := e.outside
	for _, f := range []string{"s1", "s2", "d/k", "d2/k", "s3"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(canary+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "open.txt"), []byte("visible-sibling\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("s3", filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []bool{true, false} {
		if ns && !e.sup.Namespaces() {
			continue
		}
		t.Run(fmt.Sprintf("namespaces=%v", ns), func(t *testing.T) {
			spec := e.spec(t, func(p *policy.Profile) {
				p.Read = []string{dir}
				if !ns {
					p.Namespaces, p.CallTmp = false, t.TempDir()
				}
			})
			spec.Layers.NoNamespaces = !ns
			for _, h := range []string{"s1", "d", "s2", "d2", "l", "missing"} {
				spec.Hidden = append(spec.Hidden, filepath.Join(dir, h))
			}
			res := e.sh(t, spec, "cd "+dir+` || exit 99
cat open.txt; cat s1 s2 d/k d2/k l s3; ls d d2; chmod 755 d d2; chmod 644 s1 s2 d/k d2/k s3; cat s1 s2 d/k d2/k s3; exit 0`)
			if res.ExitCode != 0 {
				t.Fatalf("exit %d: %s", res.ExitCode, res.Stderr)
			}
			out := string(res.Stdout)
			if strings.Contains(out, canary) {
				t.Errorf("a hidden path was read:\n%s\nstderr:\n%s", out, res.Stderr)
			}
			if !strings.Contains(out, "visible-sibling") {
				t.Errorf("control: the hidden paths' sibling could not be read:\nstdout:\n%s\nstderr:\n%s", out, res.Stderr)
			}
		})
	}
}

func TestExitStatusAndSignals(t *testing.T) {
	e := newEnv(t)
	spec := e.spec(t, nil)
	if res := e.sh(t, spec, "exit 7"); res.ExitCode != 7 {
		t.Errorf("exit 7 → %d", res.ExitCode)
	}
	res := e.sh(t, spec, "kill -KILL $$")
	if res.ExitCode != 128+9 || res.Signal != "SIGKILL" {
		t.Errorf("killed by SIGKILL → exit %d signal %q", res.ExitCode, res.Signal)
	}
	if res := e.sh(t, spec, "echo out; echo err >&2"); string(res.Stdout) != "out\n" || string(res.Stderr) != "err\n" {
		t.Errorf("output: stdout %q stderr %q", res.Stdout, res.Stderr)
	}
}

func TestExecGainsNoCapabilities(t *testing.T) {
	e := newEnv(t)
	const script = "grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):' /proc/self/status"
	res := e.sh(t, e.spec(t, nil), script)
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	if len(lines) != 7 {
		t.Fatalf("unexpected status lines: %q", res.Stdout)
	}
	for _, l := range lines {
		f := strings.Fields(l)
		switch f[0] {
		case "NoNewPrivs:", "Seccomp:":
			if f[1] == "0" {
				t.Errorf("the tool runs without %s", l)
			}
		default:
			if f[1] != "0000000000000000" {
				t.Errorf("the tool holds capabilities: %s", l)
			}
		}
	}
	// Control: as root outside the jail the same command shows capabilities.
	if os.Geteuid() == 0 {
		out, err := exec.Command("/bin/sh", "-c", script).Output()
		if err != nil || !strings.Contains(string(out), "CapEff:") || strings.Contains(string(out), "CapEff:\t0000000000000000") {
			t.Fatalf("control: root outside the jail: %q %v", out, err)
		}
	}
}

func TestEnvironmentIsAllowlisted(t *testing.T) {
	e := newEnv(t)
	res := e.sh(t, e.spec(t, nil), "env")
	if strings.Contains(string(res.Stdout), "canary-env") || strings.Contains(string(res.Stdout), "SECRET_TOKEN") {
		t.Fatalf("a credential crossed into the jail:\n%s", res.Stdout)
	}
	// Control: an allowlisted variable does cross.
	if !strings.Contains(string(res.Stdout), "HOME="+e.home) {
		t.Fatalf("HOME did not cross:\n%s", res.Stdout)
	}
}

func TestNoDescriptorCrosses(t *testing.T) {
	e := newEnv(t)
	// A descriptor the supervisor holds WITHOUT close-on-exec, as a C
	// library might create: it must not reach the tool.
	fd, err := unix.Open(filepath.Join(e.home), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	res := e.sh(t, e.spec(t, nil), "ls /proc/self/fd")
	fds := strings.Fields(string(res.Stdout))
	// ls itself holds one descriptor for the directory it lists.
	if len(fds) > 4 {
		t.Fatalf("descriptors beyond stdio crossed into the tool: %v", fds)
	}
	for _, f := range fds {
		if f == fmt.Sprint(fd) && fd > 3 {
			t.Fatalf("the supervisor's fd %d crossed: %v", fd, fds)
		}
	}
	// Control: the tool does see its own stdio.
	if len(fds) < 3 || fds[0] != "0" || fds[1] != "1" || fds[2] != "2" {
		t.Fatalf("stdio missing: %v", fds)
	}
}

func TestStageErrorsAreTyped(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		spec  func() jail.Spec
		inv   jail.Invocation
		stage jail.Stage
		errno syscall.Errno
	}{
		{"command not found", func() jail.Spec { return e.spec(t, nil) }, jail.Invocation{Argv: []string{"no-such-command-xyz"}}, jail.StageExec, syscall.ENOENT},
		{"working directory missing", func() jail.Spec {
			s := e.spec(t, nil)
			s.Dir = filepath.Join(e.ws, "gone")
			return s
		}, jail.Invocation{Argv: []string{"true"}}, jail.StageDir, syscall.ENOENT},
		{"required grant missing", func() jail.Spec {
			s := e.spec(t, nil)
			s.Paths = append(s.Paths, jail.PathRule{Path: filepath.Join(e.outside, "nope"), Access: jail.Read})
			return s
		}, jail.Invocation{Argv: []string{"true"}}, jail.StageLandlock, syscall.ENOENT},
		{"unknown tool", func() jail.Spec { return e.spec(t, nil) }, jail.Invocation{Tool: "nope"}, jail.StageTool, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := e.sup.Run(ctx, tc.spec(), tc.inv, supervisor.IO{})
			var se *jail.StageError
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want a *jail.StageError (result: exit %d, signal %q, stderr %q)", err, res.ExitCode, res.Signal, res.Stderr)
			}
			if se.Stage != tc.stage {
				t.Fatalf("stage %q, want %q (%v)", se.Stage, tc.stage, se)
			}
			if tc.errno != 0 && !errors.Is(err, tc.errno) {
				t.Fatalf("errno: %v, want %v", err, tc.errno)
			}
		})
	}
}

func TestTimeoutAndCancelKillTheTree(t *testing.T) {
	e := newEnv(t)
	marker := fmt.Sprintf("brig-test-marker-%d", time.Now().UnixNano())
	spec := e.spec(t, nil)
	spec.Limits.Timeout = 500 * time.Millisecond
	start := time.Now()
	// A survivor attempt: a new session in the background, double forked.
	res := e.sh(t, spec, "(setsid bash -c 'exec -a "+marker+" sleep 300' &) ; exec -a "+marker+" sleep 300")
	if !res.TimedOut {
		t.Fatalf("not reported as timed out: %+v", res)
	}
	// The command would run 300 s: ending well before proves the timeout
	// ended it, without a budget a loaded machine could exceed.
	if d := time.Since(start); d > 150*time.Second {
		t.Fatalf("the timeout took %s", d)
	}
	if pids := processesWith(marker); len(pids) > 0 {
		t.Fatalf("processes outlived the call: %v", pids)
	}

	// Cancel through the context.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(300 * time.Millisecond); cancel() }()
	spec.Limits.Timeout = 0
	res, err := e.sup.Run(ctx, spec, jail.Invocation{Argv: []string{"/bin/bash", "-c", "exec -a " + marker + " sleep 300"}}, supervisor.IO{})
	if err != nil || !res.Canceled {
		t.Fatalf("cancel: res %+v err %v", res, err)
	}
	if pids := processesWith(marker); len(pids) > 0 {
		t.Fatalf("processes outlived the cancelled call: %v", pids)
	}
	// Control: the marker is findable while a call runs (looked for until
	// it shows, however slow the machine; the timeout is a backstop).
	spec.Limits.Timeout = time.Minute
	res = e.sh(t, spec, "(exec -a "+marker+" sleep 60) & until ps -eo args | grep -q '^"+marker+"'; do sleep 0.05; done; echo FOUND")
	if strings.TrimSpace(string(res.Stdout)) != "FOUND" {
		t.Fatalf("control: the marker was not visible during the call: %+v", res)
	}
}

// processesWith lists host processes whose command line starts with marker.
func processesWith(marker string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.HasPrefix(string(b), marker) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestManyCallsAtOnce(t *testing.T) {
	e := newEnv(t)
	spec := e.spec(t, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.sup.Run(context.Background(), spec, jail.Invocation{Argv: []string{"/bin/sh", "-c", fmt.Sprintf("echo %d", i)}}, supervisor.IO{})
			if err != nil {
				errs <- err
				return
			}
			if got := strings.TrimSpace(string(res.Stdout)); got != fmt.Sprint(i) {
				errs <- fmt.Errorf("call %d printed %q", i, got)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestOutputCap(t *testing.T) {
	e := newEnv(t)
	spec := e.spec(t, nil)
	spec.Limits.OutputBytes = 1000
	res := e.sh(t, spec, "head -c 100000 /dev/zero | tr '\\0' x")
	if !res.StdoutTruncated {
		t.Fatal("not reported as truncated")
	}
	if n := strings.Count(string(res.Stdout), "x"); n != 1000 {
		t.Fatalf("kept %d bytes, want 1000", n)
	}
	if !strings.Contains(string(res.Stdout), "truncated after 1000 bytes") {
		t.Fatalf("no truncation notice in the stream: %q", res.Stdout[len(res.Stdout)-80:])
	}
	// Control: output under the cap is whole and not flagged.
	res = e.sh(t, spec, "echo short")
	if res.StdoutTruncated || string(res.Stdout) != "short\n" {
		t.Fatalf("control: %+v", res)
	}
}

func TestCrashedInitIsAnErrorNotAHang(t *testing.T) {
	e := newEnv(t)
	spec := e.spec(t, nil)
	spec.Limits.Timeout = time.Minute
	done := make(chan error, 1)
	go func() {
		_, err := e.sup.Run(context.Background(), spec, jail.Invocation{Tool: "hang"}, supervisor.IO{})
		done <- err
	}()
	// Find this call's init (a child of ours running the jail entry) and
	// kill it, as a crash would.
	var initPID int
	deadline := time.Now().Add(10 * time.Second)
	for initPID == 0 && time.Now().Before(deadline) {
		entries, _ := os.ReadDir("/proc")
		for _, en := range entries {
			up := ppid(en.Name())
			if up == "" {
				continue
			}
			cmd, _ := os.ReadFile(filepath.Join("/proc", en.Name(), "cmdline"))
			// This call's init has its worker (running the hang tool) as a
			// child; the init of an earlier test may still be exiting.
			kids, _ := os.ReadFile(filepath.Join("/proc", en.Name(), "task", en.Name(), "children"))
			if up == fmt.Sprint(os.Getpid()) && strings.HasPrefix(string(cmd), "brig-jail-init") && len(strings.TrimSpace(string(kids))) > 0 {
				fmt.Sscan(en.Name(), &initPID)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	if initPID == 0 {
		t.Fatal("control: the call's init process was not found")
	}
	if err := syscall.Kill(initPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var se *jail.StageError
		if !errors.As(err, &se) || se.Stage != jail.StageProtocol {
			t.Fatalf("want a protocol StageError saying init died, got %v", err)
		}
	case <-time.After(untilDeadline(t)):
		t.Fatal("Run hung after its init process crashed")
	}
}

// TestTerminatedInitEndsTheCall: a termination signal to a call's init
// (the parent-death signal, should the supervisor die, is one) ends the
// call and every process in it, a daemon that left the session included,
// and Run returns. In a PID namespace the kernel ends them with init,
// which handles no signal; without one, init kills the tree itself.
func TestTerminatedInitEndsTheCall(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(unix.SignalName(sig), func(t *testing.T) {
			e := newEnv(t)
			spec := e.spec(t, nil)
			spec.Limits.Timeout = 5 * time.Minute
			marker := fmt.Sprintf("brig-test-term-%d", time.Now().UnixNano())
			done := make(chan error, 1)
			go func() {
				_, err := e.sup.Run(context.Background(), spec, jail.Invocation{Argv: []string{"/bin/bash", "-c", "(setsid bash -c 'exec -a " + marker + " sleep 300' &) ; exec -a " + marker + " sleep 300"}}, supervisor.IO{})
				done <- err
			}()
			// Control: both processes run, and the call's init is found.
			initPID := 0
			for deadline := time.Now().Add(untilDeadline(t)); len(processesWith(marker)) < 2 || initPID == 0; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("control: the call's processes (%v) or its init (%d) were not found", processesWith(marker), initPID)
				}
				initPID = callInit(marker)
			}
			if err := syscall.Kill(initPID, sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				t.Logf("Run returned: %v", err)
			case <-time.After(untilDeadline(t)):
				t.Fatal("Run did not return after its init was told to stop")
			}
			for deadline := time.Now().Add(untilDeadline(t)); ; time.Sleep(10 * time.Millisecond) {
				left := processesWith(marker)
				if len(left) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("processes of the call outlived its init: %v", left)
				}
			}
		})
	}
}

// callInit finds the init of the call whose processes carry marker: the
// child of this process that is an ancestor of one of them (0: none yet).
func callInit(marker string) int {
	self := strconv.Itoa(os.Getpid())
	for _, p := range processesWith(marker) {
		for pid, up := p, ppid(p); up != "" && up != "0"; pid, up = up, ppid(up) {
			if up == self {
				n, _ := strconv.Atoi(pid)
				return n
			}
		}
	}
	return 0
}

// ppid is the parent of a host process, from /proc ("" once it is gone).
func ppid(pid string) string {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	if len(f) < 2 {
		return ""
	}
	return f[1]
}

// untilDeadline is how long a test may wait for an event: until shortly
// before its own deadline, so that a loaded machine is slower, not red.
func untilDeadline(t *testing.T) time.Duration {
	if d, ok := t.Deadline(); ok {
		return max(time.Until(d)-10*time.Second, time.Second)
	}
	return 10 * time.Minute
}

func TestSupervisorIsNotDumpable(t *testing.T) {
	newEnv(t) // supervisor.New marks the process
	v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	if err != nil || v != 0 {
		t.Fatalf("PR_GET_DUMPABLE = %d, %v; want 0", v, err)
	}
}

func TestPrivateTmpIsPerCall(t *testing.T) {
	e := newEnv(t)
	if !e.sup.Namespaces() {
		t.Skip("no user namespaces: /tmp is a per-call TMPDIR instead")
	}
	spec := e.spec(t, nil)
	name := fmt.Sprintf("brig-private-tmp-%d", time.Now().UnixNano())
	res := e.sh(t, spec, "f=$(mktemp /tmp/x.XXXXXX) && echo data > $f && echo secret > /tmp/"+name+" && cat /tmp/"+name+" && echo shm > /dev/shm/"+name)
	if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), "secret") {
		t.Fatalf("control: mktemp and writing /tmp inside the call failed: %+v %s", res, res.Stderr)
	}
	if _, err := os.Stat("/tmp/" + name); err == nil {
		os.Remove("/tmp/" + name)
		t.Fatal("a file written to the call's /tmp appeared in the host's /tmp")
	}
	if _, err := os.Stat("/dev/shm/" + name); err == nil {
		os.Remove("/dev/shm/" + name)
		t.Fatal("a file written to the call's /dev/shm appeared in the host's")
	}
	res = e.sh(t, spec, "cat /tmp/"+name+" /dev/shm/"+name+" 2>&1; ls /tmp")
	if strings.Contains(string(res.Stdout), "secret") || strings.Contains(string(res.Stdout), "shm\n") {
		t.Fatalf("the next call saw the previous call's /tmp: %q", res.Stdout)
	}
}

func TestReplacedProtectedSymlinkIsRestored(t *testing.T) {
	e := newEnv(t)
	for _, d := range []string{".git", "githooks", "plain-target"} {
		if err := os.MkdirAll(filepath.Join(e.ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	hooks := filepath.Join(e.ws, ".git", "hooks")
	if err := os.Symlink("../githooks", hooks); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(e.ws, "plain")
	if err := os.Symlink("plain-target", plain); err != nil {
		t.Fatal(err)
	}
	spec := e.spec(t, nil)
	res := e.sh(t, spec, "rm .git/hooks && mkdir .git/hooks && echo planted > .git/hooks/pre-commit; echo via-link > .git/hooks/../githooks/post-checkout; rm plain && mkdir plain && echo kept > plain/f")
	if target, err := os.Readlink(hooks); err != nil || target != "../githooks" {
		t.Fatalf(".git/hooks is no longer the original symlink: %q %v (stderr %s)", target, err, res.Stderr)
	}
	for _, p := range []string{filepath.Join(e.ws, "githooks", "pre-commit"), filepath.Join(e.ws, "githooks", "post-checkout")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("a hook was planted at %s", p)
		}
	}
	if !slices.Contains(res.Violations, hooks) {
		t.Errorf("the replacement was not reported: %v", res.Violations)
	}
	// Control: the same replacement of an unprotected symlink stands.
	if b, err := os.ReadFile(filepath.Join(plain, "f")); err != nil || string(b) != "kept\n" {
		t.Fatalf("control: replacing an ordinary symlink did not work: %q %v", b, err)
	}
}

func TestDanglingProtectedSymlinkTargetCannotBeCreated(t *testing.T) {
	e := newEnv(t)
	if err := os.MkdirAll(filepath.Join(e.ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../missing-hooks", filepath.Join(e.ws, ".git", "hooks")); err != nil {
		t.Fatal(err)
	}
	res := e.sh(t, e.spec(t, nil), "mkdir missing-hooks && echo planted > missing-hooks/pre-commit && mkdir other && echo ok > other/f")
	if _, err := os.Stat(filepath.Join(e.ws, "missing-hooks", "pre-commit")); err == nil {
		t.Fatalf("a hook was planted through a dangling .git/hooks symlink (stderr %s)", res.Stderr)
	}
	if !slices.Contains(res.Violations, filepath.Join(e.ws, "missing-hooks")) {
		t.Errorf("not reported: %v", res.Violations)
	}
	// Control: an ordinary new directory made by the same call stays.
	if _, err := os.Stat(filepath.Join(e.ws, "other", "f")); err != nil {
		t.Fatalf("control: %v", err)
	}
}

func TestSweepDoesNotFollowAPlantedSymlink(t *testing.T) {
	e := newEnv(t)
	// The call may write the fake home; brig's state directory in it does
	// not exist yet (so the supervisor sweeps it after the call).
	state := filepath.Join(e.home, ".local", "state", "brig")
	other := filepath.Join(e.outside, "other")
	keep := filepath.Join(other, "brig", "keep.txt")
	if err := os.MkdirAll(filepath.Dir(keep), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keep, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(state), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := e.spec(t, func(p *policy.Profile) {
		p.Write = []string{e.home}
		p.BrigDirs = []string{state}
	})
	res := e.sh(t, spec, "rm -rf "+filepath.Dir(state)+" && ln -s "+other+" "+filepath.Dir(state))
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("the sweep deleted a file outside every grant through a planted symlink: %v (violations %v)", err, res.Violations)
	}
	// The planted link itself (not what it points at) is taken out.
	if _, err := os.Lstat(filepath.Dir(state)); err == nil || !slices.Contains(res.Violations, filepath.Dir(state)) {
		t.Fatalf("the planted link on the way stayed (violations %v)", res.Violations)
	}
	// Control: creating the protected directory plainly is undone.
	if err := os.MkdirAll(filepath.Dir(state), 0o755); err != nil {
		t.Fatal(err)
	}
	res = e.sh(t, spec, "mkdir -p "+state+" && echo planted > "+filepath.Join(state, "x"))
	if _, err := os.Stat(state); err == nil || !slices.Contains(res.Violations, state) {
		t.Fatalf("control: the created protected directory was not swept (violations %v)", res.Violations)
	}
}

func TestNoSetIDBitsAndNoReachIntoOtherProcesses(t *testing.T) {
	e := newEnv(t)
	spec := e.spec(t, nil)
	res := e.sh(t, spec, `touch f g; chmod 755 f && echo chmod-ok
chmod u+s f 2>/dev/null || echo chmod-suid-refused
chmod g+s g 2>/dev/null || echo chmod-sgid-refused
python3 - <<'PY'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
try:
    os.open("h", os.O_CREAT | os.O_WRONLY, 0o4755)
    print("open-suid-allowed")
except PermissionError:
    print("open-suid-refused")
r = libc.syscall(452, -100, b"f", 0o4755, 0)  # fchmodat2
print("fchmodat2", r, ctypes.get_errno())
r = libc.prlimit(1, 7, None, None)  # RLIMIT_NOFILE of pid 1, read only
print("prlimit-other", r, ctypes.get_errno())
PY
stat -c '%a %n' f g`)
	out := string(res.Stdout)
	for _, want := range []string{"chmod-ok", "chmod-suid-refused", "chmod-sgid-refused", "open-suid-refused", "fchmodat2 -1 38", "prlimit-other -1 1", "755 f", "644 g"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s\n%s", want, out, res.Stderr)
		}
	}
}

func TestRepositoryCreatedByTheCallIsTakenOut(t *testing.T) {
	e := newEnv(t)
	if err := os.MkdirAll(filepath.Join(e.ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	// An existing nested repository is protected in place, not removed.
	if err := os.MkdirAll(filepath.Join(e.ws, "vendor", "old", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := e.spec(t, nil)
	res := e.sh(t, spec, "mkdir -p src/lib/.git/hooks && echo '#!/bin/sh' > src/lib/.git/hooks/post-checkout && echo code > src/lib/main.c")
	if _, err := os.Stat(filepath.Join(e.ws, "src", "lib", ".git")); err == nil {
		t.Fatalf("a repository planted by the call survived (violations %v)", res.Violations)
	}
	if !slices.Contains(res.Violations, filepath.Join(e.ws, "src", "lib", ".git")) {
		t.Errorf("not reported: %v", res.Violations)
	}
	// Control: the call's ordinary files stay, and so does the existing
	// nested repository.
	if _, err := os.Stat(filepath.Join(e.ws, "src", "lib", "main.c")); err != nil {
		t.Fatalf("control: the call's own file is gone: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "vendor", "old", ".git")); err != nil {
		t.Fatalf("control: an existing nested repository was removed: %v", err)
	}
}

func TestRenameAcrossDirectoriesInTheWorkspace(t *testing.T) {
	e := newEnv(t)
	// Landlock's "refer" right: renames and links across directories must
	// work inside the workspace (compilers write a temporary file and
	// rename it), with and without namespaces, and still fail out of it.
	// (Without namespaces the workspace root takes no new entries: work in
	// a directory below it.)
	if err := os.MkdirAll(filepath.Join(e.ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, layers := range []jail.Layers{{}, {NoNamespaces: true}} {
		spec := e.spec(t, func(p *policy.Profile) {
			if layers.NoNamespaces {
				p.Namespaces, p.CallTmp = false, t.TempDir()
			}
		})
		spec.Layers = layers
		res := e.sh(t, spec, `cd sub && rm -rf a && mkdir -p a/b && echo x > a/b/f && python3 -c '
import os
os.rename("a/b/f", "a/g")
os.link("a/g", "a/b/h")
print("moved")
try:
    os.rename("a/g", "`+e.outside+`/stolen")
    print("escaped")
except OSError as e:
    print("refused", e.errno)
'`)
		out := string(res.Stdout)
		if !strings.Contains(out, "moved") {
			t.Errorf("%+v: rename/link inside the workspace failed: %q %s", layers, out, res.Stderr)
		}
		if strings.Contains(out, "escaped") {
			t.Errorf("%+v: a file was moved out of the workspace", layers)
		}
	}
}

// TestDefaultAndBroadGrantsMaskSecrets: the secrets that sit under the
// toolchain roots and PATH entries of the default grant, and under a grant
// of the whole home directory, stay unreadable (a mask with a mount
// namespace, a split grant without), with and without namespaces; their
// siblings stay readable.
func TestDefaultAndBroadGrantsMaskSecrets(t *testing.T) {
	e := newEnv(t)
	const canary = "canary-secret-bytes"
	home, err := os.MkdirTemp("/var/tmp", "brig-jail-home-") // off the private /tmp
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	files := map[string]string{
		".ssh/id_rsa":                           canary,
		".config/git/credentials":               "https://u:" + canary + "@github.com\n",
		".config/git/config":                    "[user]\n\tname = visible-gitconfig\n",
		".npm-global/etc/npmrc":                 "//registry.npmjs.org/:_authToken=" + canary + "\n",
		".npm-global/bin/tool":                  "#!/bin/sh\necho visible-tool\n",
		".config/brig/credentials.toml":         "api_key = \"" + canary + "\"\n",
		".nvm/versions/node/v1.0.0/etc/npmrc":   "_authToken=" + canary + "\n",
		".nvm/versions/node/v1.0.0/bin/nodeish": "#!/bin/sh\necho visible-node\n",
		"notes.txt":                             "visible-notes\n",
	}
	for rel, content := range files {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	read := "cat ~/.ssh/id_rsa ~/.config/git/credentials ~/.npm-global/etc/npmrc ~/.config/brig/credentials.toml ~/.nvm/versions/node/v1.0.0/etc/npmrc; ls -la ~/.ssh ~/.npm-global/etc; chmod -R 777 ~/.ssh; cat ~/.ssh/id_rsa"
	for _, ns := range []bool{true, false} {
		if ns && !e.sup.Namespaces() {
			continue
		}
		for _, c := range []struct {
			name    string
			mutate  func(*policy.Profile)
			control string // read in the same call, must appear
		}{
			{"default grant with PATH=$HOME/", func(p *policy.Profile) {
				p.ParentEnv = []string{"PATH=" + home + "/:" + home + "/.npm-global/bin:" + home + "/.nvm/versions/node/v1.0.0/bin:/usr/bin:/bin", "HOME=" + home}
			}, "tool; nodeish; cat ~/.config/git/config"},
			{"--read ~", func(p *policy.Profile) { p.Read = []string{home} }, "cat ~/notes.txt ~/.config/git/config"},
		} {
			t.Run(fmt.Sprintf("%s/namespaces=%v", c.name, ns), func(t *testing.T) {
				spec := e.spec(t, func(p *policy.Profile) {
					p.Home = home
					p.BrigDirs = []string{filepath.Join(home, ".config/brig")}
					p.ParentEnv = []string{"PATH=/usr/bin:/bin", "HOME=" + home}
					c.mutate(p)
					if !ns {
						p.Namespaces, p.CallTmp = false, t.TempDir()
					}
				})
				spec.Layers.NoNamespaces = !ns
				res := e.sh(t, spec, c.control+"; "+read+"; exit 0")
				out := string(res.Stdout) + string(res.Stderr)
				if strings.Contains(out, canary) {
					t.Errorf("a secret was read:\n%s", out)
				}
				for _, want := range []string{"visible-gitconfig"} {
					if !strings.Contains(out, want) {
						t.Errorf("control: %s missing:\n%s", want, out)
					}
				}
				if c.name == "--read ~" && !strings.Contains(out, "visible-notes") {
					t.Errorf("control: ~/notes.txt under the --read ~ grant was not read:\n%s", out)
				}
				if c.name != "--read ~" && (!strings.Contains(out, "visible-tool") || !strings.Contains(out, "visible-node")) {
					t.Errorf("control: programs on PATH did not run:\n%s", out)
				}
				if b, _ := os.ReadFile(filepath.Join(home, ".ssh/id_rsa")); string(b) != canary {
					t.Errorf("the secret changed on disk: %q", b)
				}
			})
		}
	}
}

// TestProtectedLinkIntoAnotherWriteGrant: a protected path that is a
// symlink (.git/hooks), or is reached through one (.config is a link),
// leading into another place the call may write (the toolchain cache, an
// added directory) keeps what it reaches read-only, and that target's
// directories in place, whether or not the workspace itself is writable
// (a line that only reads runs with it read-only): git outside the jail
// runs what the link names.
func TestProtectedLinkIntoAnotherWriteGrant(t *testing.T) {
	e := newEnv(t)
	if !e.sup.Namespaces() {
		t.Skip("no mount namespace: protected paths are restored after the call instead (TestRestoreProtectedWithoutNamespaces)")
	}
	e.ws = filepath.Join(e.outside, "ws") // not under /tmp, which every call may write
	grant := filepath.Join(e.outside, "cache")
	target := filepath.Join(grant, "x", "hooks")
	for _, d := range []string{filepath.Join(e.ws, ".git"), target} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(target, filepath.Join(e.ws, ".git", "hooks")); err != nil {
		t.Fatal(err)
	}
	// A protected file reached through a link on its way: .config is a
	// link into the grant, .config/lefthook.yml (which git hooks obey)
	// a plain file there.
	cfg := filepath.Join(grant, "cfg")
	if err := os.MkdirAll(cfg, 0o755); err != nil {
		t.Fatal(err)
	}
	lefthook := filepath.Join(cfg, "lefthook.yml")
	if err := os.WriteFile(lefthook, []byte("pre-commit: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cfg, filepath.Join(e.ws, ".config")); err != nil {
		t.Fatal(err)
	}
	// .husky (husky's hooks) is a link to the root of a write grant.
	huskyGrant := filepath.Join(e.outside, "husky")
	if err := os.MkdirAll(huskyGrant, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(huskyGrant, filepath.Join(e.ws, ".husky")); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(target, "pre-commit")
	for _, readOnly := range []bool{true, false} {
		spec := e.spec(t, func(p *policy.Profile) {
			p.ReadOnly = readOnly
			p.Write = []string{grant, huskyGrant}
		})
		// Into the link's target directly, then by moving the target's
		// parent aside and making a new one where the link leads.
		for _, attack := range []string{
			"echo planted > " + planted,
			"mv " + filepath.Join(grant, "x") + " " + filepath.Join(grant, "y") + " && mkdir -p " + target + " && echo planted > " + planted,
		} {
			res := e.sh(t, spec, attack+"; echo ok > "+filepath.Join(grant, "other"))
			if _, err := os.Stat(planted); err == nil {
				t.Fatalf("read-only workspace %v: %q planted a hook through the protected link (stderr %s)", readOnly, attack, res.Stderr)
			}
			// Control: the grant is writable elsewhere.
			if b, err := os.ReadFile(filepath.Join(grant, "other")); err != nil || string(b) != "ok\n" {
				t.Fatalf("read-only workspace %v: control: writing elsewhere in the grant failed: %q %v (stderr %s)", readOnly, b, err, res.Stderr)
			}
			os.Remove(filepath.Join(grant, "other"))
			if _, err := os.Stat(filepath.Join(grant, "y")); err == nil {
				t.Fatalf("read-only workspace %v: the target's directory was moved aside", readOnly)
			}
		}
		res := e.sh(t, spec, "echo planted > "+filepath.Join(huskyGrant, "pre-commit"))
		if _, err := os.Stat(filepath.Join(huskyGrant, "pre-commit")); err == nil {
			t.Fatalf("read-only workspace %v: a hook was planted in the write grant .husky links to (stderr %s)", readOnly, res.Stderr)
		}
		res = e.sh(t, spec, "echo 'pre-commit: {commands: {x: {run: evil}}}' > "+filepath.Join(e.ws, ".config", "lefthook.yml")+"; echo ok > "+filepath.Join(cfg, "other"))
		if b, _ := os.ReadFile(lefthook); string(b) != "pre-commit: {}\n" {
			t.Fatalf("read-only workspace %v: a protected file reached through a link on its way was rewritten: %q (stderr %s)", readOnly, b, res.Stderr)
		}
		if _, err := os.Stat(filepath.Join(cfg, "other")); err != nil {
			t.Fatalf("read-only workspace %v: control: writing beside it failed: %v (stderr %s)", readOnly, err, res.Stderr)
		}
		os.Remove(filepath.Join(cfg, "other"))
		// The link on the way replaced by a directory holding another
		// lefthook.yml: put back after the call, reported.
		res = e.sh(t, spec, "rm .config && mkdir .config && echo 'pre-commit: {commands: {x: {run: evil}}}' > .config/lefthook.yml")
		if target, err := os.Readlink(filepath.Join(e.ws, ".config")); err != nil || target != cfg {
			t.Fatalf("read-only workspace %v: the link on the way to a protected file was replaced: %q %v (stderr %s)", readOnly, target, err, res.Stderr)
		}
		if b, _ := os.ReadFile(filepath.Join(e.ws, ".config", "lefthook.yml")); string(b) != "pre-commit: {}\n" {
			t.Fatalf("read-only workspace %v: lefthook.yml now reads %q", readOnly, b)
		}
		if !readOnly && !slices.Contains(res.Violations, filepath.Join(e.ws, ".config")) {
			t.Errorf("the replaced link was not reported: %v", res.Violations)
		}
	}
}

// TestReadOnlyMountInAWriteGrant (new user, 2026-12-03): a workspace on a
// read-only mount, or holding one, made every writing call fail to start
// ("set the access of …: operation not permitted"): the jail's user
// namespace locks a mount's read-only flag, and the write grant's clear of
// it failed for the whole tree. Now the call runs: what was read-only
// outside stays read-only (EROFS, the file absent), and the rest of the
// grant is writable (the control: a file written beside it).
func TestReadOnlyMountInAWriteGrant(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a read-only bind mount needs root")
	}
	e := newEnv(t)
	if !e.sup.Namespaces() {
		t.Skip("no mount namespace here: the jail does not remount")
	}
	roBind := func(dir string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "kept"), []byte("kept-bytes"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
			t.Fatalf("bind mount: %v", err)
		}
		t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
		if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
			t.Fatalf("make the bind mount read-only: %v", err)
		}
	}
	// A read-only directory inside a writable workspace.
	nested := filepath.Join(e.ws, "ro")
	roBind(nested)
	res := e.sh(t, e.spec(t, nil), `cat ro/kept; echo x > ro/new; echo y > beside && echo wrote-beside`)
	out := string(res.Stdout) + string(res.Stderr)
	if !strings.Contains(out, "kept-bytes") || !strings.Contains(out, "Read-only file system") || !strings.Contains(out, "wrote-beside") {
		t.Fatalf("a read-only mount in the workspace: %q (exit %d)", out, res.ExitCode)
	}
	if _, err := os.Stat(filepath.Join(nested, "new")); err == nil {
		t.Fatal("the read-only mount was written")
	}
	if b, err := os.ReadFile(filepath.Join(e.ws, "beside")); err != nil || string(b) != "y\n" {
		t.Fatalf("the control, a write beside it: %q, %v", b, err)
	}
	// The workspace itself on a read-only mount.
	ws := filepath.Join(e.outside, "rows")
	roBind(ws)
	e.ws = ws
	res = e.sh(t, e.spec(t, nil), `cat kept; echo x > new`)
	if out := string(res.Stdout) + string(res.Stderr); !strings.Contains(out, "kept-bytes") || !strings.Contains(out, "Read-only file system") || res.ExitCode == 0 {
		t.Fatalf("a workspace on a read-only mount: %q (exit %d)", out, res.ExitCode)
	}
	if _, err := os.Stat(filepath.Join(ws, "new")); err == nil {
		t.Fatal("the read-only workspace was written")
	}
}

package supervisor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"brig/jail"
	"brig/jail/filter"
	"brig/policy"
)

// processesWith lists the host pids whose command line contains token.
func processesWith(t *testing.T, token string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), token) {
			out = append(out, e.Name())
		}
	}
	return out
}

// waitExecOf waits (bounded generously: it is a wait, not a timing
// check) until exactly one process carrying token runs argv0, and returns
// its pid.
func waitExecOf(t *testing.T, argv0, token string) string {
	t.Helper()
	var pids []string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		pids = processesWith(t, token)
		if len(pids) == 1 {
			b, err := os.ReadFile(filepath.Join("/proc", pids[0], "cmdline"))
			if err == nil && strings.SplitN(string(b), "\x00", 2)[0] == argv0 {
				return pids[0]
			}
		}
	}
	t.Fatalf("no single process runs %s with %q: %v", argv0, token, pids)
	return ""
}

// waitGone waits (bounded) until no process carries token.
func waitGone(t *testing.T, token string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if len(processesWith(t, token)) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("processes carrying %q outlived the handle: %v", token, processesWith(t, token))
}

// TestStartLongLived runs a jailed shell that talks over its pipes: it
// cannot read a canary outside its grant but reads the workspace (the
// control), and its whole tree (including a setsid'd grandchild) dies with
// Kill and with the start context.
func TestStartLongLived(t *testing.T) {
	ctx := context.Background()
	sup, err := New(ctx, Options{Prewarm: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sup.Close()
	ws := t.TempDir()
	// Outside /tmp, so that Landlock (not the private /tmp) is what
	// refuses it.
	outside, err := os.MkdirTemp("/var/tmp", "brig-canary-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	if err := os.WriteFile(filepath.Join(ws, "control"), []byte("CONTROL-OK"), 0o644); err != nil {
		t.Fatal(err)
	}
	canary := filepath.Join(outside, "canary")
	if err := os.WriteFile(canary, []byte("CANARY-SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	prof := policy.Profile{Workspace: ws, Dir: ws, ReadOnly: true, Home: os.Getenv("HOME"), ParentEnv: os.Environ(), Limits: jail.DefaultLimits(), Namespaces: sup.Namespaces()}
	if !prof.Namespaces {
		prof.CallTmp = t.TempDir()
	}
	spec, err := prof.Spec()
	if err != nil {
		t.Fatal(err)
	}
	spec.Limits.Timeout = 0

	for _, how := range []string{"kill", "context"} {
		t.Run(how, func(t *testing.T) {
			token := fmt.Sprintf("98765%d.%d", os.Getpid()%1000, time.Now().UnixNano()%100000)
			script := fmt.Sprintf(`cat %s 2>/dev/null || echo canary-refused
cat control; echo
setsid sleep %s &
while read line; do echo "got:$line"; done`, canary, token)
			pctx, cancel := context.WithCancel(ctx)
			defer cancel()
			p, err := sup.Start(pctx, spec, jail.Invocation{Argv: []string{"sh", "-c", script}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Kill()
			out := bufio.NewReader(p.Stdout)
			readLine := func() string {
				t.Helper()
				l, err := out.ReadString('\n')
				if err != nil {
					t.Fatalf("read: %v (stderr %q)", err, p.StderrTail())
				}
				return strings.TrimSpace(l)
			}
			if got := readLine(); got != "canary-refused" || strings.Contains(got, "CANARY") {
				t.Fatalf("canary line %q", got)
			}
			if got := readLine(); got != "CONTROL-OK" {
				t.Fatalf("control line %q", got)
			}
			if _, err := fmt.Fprintln(p.Stdin, "ping"); err != nil {
				t.Fatal(err)
			}
			if got := readLine(); got != "got:ping" {
				t.Fatalf("echo %q", got)
			}
			if len(processesWith(t, token)) == 0 {
				t.Fatal("the grandchild is not running (the test would prove nothing)")
			}
			switch how {
			case "kill":
				p.Kill()
			case "context":
				cancel()
			}
			res, err := p.Wait()
			if err != nil {
				t.Fatal(err)
			}
			if !res.Canceled {
				t.Fatalf("result %+v", res)
			}
			waitGone(t, token)
			if _, err := out.ReadString('\n'); err == nil {
				t.Fatal("stdout still open after the tree died")
			}
		})
	}
}

// TestStartExitsByItself: a process that ends on its own reports its exit
// status and the tail of its standard error.
func TestStartExitsByItself(t *testing.T) {
	ctx := context.Background()
	sup, err := New(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	prof := policy.Profile{Workspace: ws, Dir: ws, ReadOnly: true, Home: os.Getenv("HOME"), ParentEnv: os.Environ(), Limits: jail.DefaultLimits(), Namespaces: sup.Namespaces()}
	if !prof.Namespaces {
		prof.CallTmp = t.TempDir()
	}
	spec, err := prof.Spec()
	if err != nil {
		t.Fatal(err)
	}
	p, err := sup.Start(ctx, spec, jail.Invocation{Argv: []string{"sh", "-c", "read x; echo \"bye $x\" >&2; exit 3"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(p.Stdin, "now")
	res, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || res.Canceled || strings.TrimSpace(string(res.Stderr)) != "bye now" {
		t.Fatalf("result %+v stderr %q", res, res.Stderr)
	}
	p.Kill() // after exit: a no-op
}

// converseRig drives one call through converse on a fresh child, so that a
// test can choose the child's base seccomp filter and what runs before the
// tool starts.
type converseRig struct {
	t    *testing.T
	sup  *Supervisor
	ws   string
	spec jail.Spec // the workspace profile's Spec
}

func newConverseRig(t *testing.T) converseRig {
	t.Helper()
	sup, err := New(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	prof := policy.Profile{Workspace: ws, Dir: ws, Limits: jail.DefaultLimits(), Namespaces: sup.Namespaces()}
	if !prof.Namespaces {
		prof.CallTmp = t.TempDir()
	}
	spec, err := prof.Spec()
	if err != nil {
		t.Fatal(err)
	}
	return converseRig{t: t, sup: sup, ws: ws, spec: spec}
}

// base is the base seccomp filter a child gets before its call.
func (r converseRig) base() []byte {
	r.t.Helper()
	b, err := r.sup.filter(filter.BaseFilterOptions(), false)
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

// run runs argv under spec on a child that got base (nil: none), with
// beforeTool run before the tool may start.
func (r converseRig) run(spec jail.Spec, base []byte, argv []string, beforeTool func() error) (jail.Result, error) {
	r.t.Helper()
	p, err := r.sup.plan(spec)
	if err != nil {
		r.t.Fatal(err)
	}
	c, err := r.sup.startChildStdin(p.flags, spec.Limits, nil, base, nil, true)
	if err != nil {
		r.t.Fatal(err)
	}
	defer c.discard()
	return r.sup.converse(context.Background(), c, spec, jail.Invocation{Argv: argv}, p, beforeTool)
}

// TestChildSeccompBaseMustMatch: a child that never got the base seccomp
// filter refuses a call that wants the seccomp layer (it would otherwise run
// with the narrowing filter alone), and one that loaded it refuses a call
// that switches the layer off; with the base filter sent, the call runs.
func TestChildSeccompBaseMustMatch(t *testing.T) {
	r := newConverseRig(t)
	wantSeccompRefusal := func(name string, err error) {
		t.Helper()
		var se *jail.StageError
		if !errors.As(err, &se) || se.Stage != jail.StageSeccomp {
			t.Errorf("%s: got %v, want a seccomp stage error", name, err)
		}
	}
	trueCmd := []string{"/bin/true"}
	_, err := r.run(r.spec, nil, trueCmd, nil)
	wantSeccompRefusal("no base filter", err)
	off := r.spec
	off.Layers.NoSeccomp = true
	_, err = r.run(off, r.base(), trueCmd, nil)
	wantSeccompRefusal("base filter on a call without seccomp", err)
	if res, err := r.run(r.spec, r.base(), trueCmd, nil); err != nil || res.ExitCode != 0 {
		t.Errorf("control: %+v %v", res, err)
	}
}

// TestToolWaitsForTheSnapshot: the tool starts only after what runs before
// it (the snapshot of the protected paths) has finished, however slow:
// a file that step writes last is there when the command starts.
func TestToolWaitsForTheSnapshot(t *testing.T) {
	r := newConverseRig(t)
	marker := filepath.Join(r.ws, "snapshot-done")
	res, err := r.run(r.spec, r.base(), []string{"/bin/sh", "-c", "test -e " + marker}, func() error {
		time.Sleep(300 * time.Millisecond)
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			t.Error(err)
		}
		return nil
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("the command started before the step before it had finished: %+v %v", res, err)
	}
}

// TestWorkerFailureWinsOverTheGoAhead: a worker that fails before the
// supervisor's go-ahead (a required grant that does not exist, with a slow
// snapshot) is reported with its own stage and reason, not as the failed
// send of {go}.
func TestWorkerFailureWinsOverTheGoAhead(t *testing.T) {
	r := newConverseRig(t)
	const missing = "/nonexistent-brig-grant"
	spec := r.spec
	spec.Paths = append(spec.Paths, jail.PathRule{Path: missing, Access: jail.Read})
	_, err := r.run(spec, r.base(), []string{"/bin/true"}, func() error { time.Sleep(300 * time.Millisecond); return nil })
	var se *jail.StageError
	if !errors.As(err, &se) || se.Stage != jail.StageLandlock || !strings.Contains(se.Msg, missing) {
		t.Fatalf("got %v, want the worker's landlock stage error naming %s", err, missing)
	}
}

// TestStartKeepsTheLastStderr: a process that writes its reason to standard
// error and exits at once is reported with that reason, every time: the
// stream is read to its end before the process counts as gone (an MCP
// server's crash once came back without its stderr).
func TestStartKeepsTheLastStderr(t *testing.T) {
	ctx := context.Background()
	sup, err := New(ctx, Options{Prewarm: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sup.Close()
	ws := t.TempDir()
	prof := policy.Profile{Workspace: ws, Dir: ws, ReadOnly: true, Limits: jail.DefaultLimits(), Namespaces: sup.Namespaces()}
	if !prof.Namespaces {
		prof.CallTmp = t.TempDir()
	}
	spec, err := prof.Spec()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		p, err := sup.Start(ctx, spec, jail.Invocation{Argv: []string{"/bin/sh", "-c", "echo crashing on purpose >&2; exit 3"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		<-p.Done()
		if tail := p.StderrTail(); !strings.Contains(tail, "crashing on purpose") {
			t.Fatalf("run %d: the stderr tail at the end is %q", i, tail)
		}
		if res, _ := p.Wait(); res.ExitCode != 3 {
			t.Fatalf("run %d: control: exit %d", i, res.ExitCode)
		}
	}
}

// TestStoppedInitIsReapedBeforeTheCallEnds: init that does not end a
// cancelled call within the grace period is killed, and the call counts as
// ended only once init has been reaped. In a PID namespace the kernel kills
// the call's processes as init exits, after init's report has already
// reached its end; the caller sweeps the protected paths as soon as the
// call ends, so nothing of the call may still run then. Init is stopped
// here: the deterministic form of an init starved by its call's fork bomb.
func TestStoppedInitIsReapedBeforeTheCallEnds(t *testing.T) {
	r := newConverseRig(t)
	r.sup.grace = 50 * time.Millisecond
	p, err := r.sup.plan(r.spec)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.sup.startChildStdin(p.flags, r.spec.Limits, nil, r.base(), nil, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.discard()
	// A sleep whose length no other process has: the shell and its sleep
	// both carry it.
	marker := fmt.Sprintf("300.%09d", time.Now().UnixNano()%1e9)
	t.Cleanup(func() { waitGone(t, marker) })
	started := filepath.Join(r.ws, "started")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		res jail.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		script := "touch started; sleep " + marker + "; :"
		res, err := r.sup.converse(ctx, c, r.spec, jail.Invocation{Argv: []string{"/bin/sh", "-c", script}}, p, nil)
		done <- outcome{res, err}
	}()
	for {
		if _, err := os.Stat(started); err == nil && len(processesWith(t, marker)) > 1 {
			break
		}
		select {
		case o := <-done:
			t.Fatalf("the call ended before it was cancelled: %+v %v", o.res, o.err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := c.proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	cancel()
	o := <-done
	if o.err != nil || !o.res.Canceled || o.res.Signal != "SIGKILL" {
		t.Fatalf("want a call cancelled by killing its init, got %+v %v", o.res, o.err)
	}
	if c.state == nil {
		t.Error("the call was reported ended before its killed init was reaped")
	}
	if pids := processesWith(t, marker); len(pids) > 0 {
		t.Errorf("the call's processes %v still ran when it was reported ended", pids)
	}
}

// TestWorkerIsBornInTheCallCgroups: a root call's worker and command are
// in the call's pids and memory cgroups, and no thread of init is (init
// must always be free to start the threads that clean up; on cgroup v1 its
// forking thread joins the call's cgroups only for the worker's fork).
func TestWorkerIsBornInTheCallCgroups(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a root supervisor gives calls cgroups")
	}
	if cg, err := newCallCgroup(100, 0); err != nil || cg == nil {
		t.Skipf("no call cgroup can be made here (%v)", err)
	} else {
		cg.remove()
	}
	ctx := context.Background()
	sup, spec := coldSupervisor(t)
	spec.Limits.Timeout = 0
	token := fmt.Sprintf("86420%d.%d", os.Getpid()%1000, time.Now().UnixNano()%100000)
	p, err := sup.Start(ctx, spec, jail.Invocation{Argv: []string{"sh", "-c", "echo up; exec sleep " + token}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	if l, err := bufio.NewReader(p.Stdout).ReadString('\n'); err != nil || l != "up\n" {
		t.Fatalf("the command did not start: %q %v (stderr %q)", l, err, p.StderrTail())
	}
	// "up" comes before the shell's exec of sleep: while the exec runs,
	// the process's cmdline reads empty, so wait for sleep itself.
	command := waitExecOf(t, "sleep", token)
	init := parentOf(t, command) // init reaps the command
	if !strings.Contains(cmdline(init), "__brig_jail_init") {
		t.Fatalf("the command's parent %s is not init: %q", init, cmdline(init))
	}
	// (The worker has exited once the command runs: the command, which
	// it started, is born in its cgroups.)
	threads := threadCgroups(t, command)
	if len(threads) == 0 {
		t.Fatal("the command's threads could not be listed")
	}
	for tid, paths := range threads {
		if len(paths) == 0 {
			t.Errorf("the command (thread %s) is in no pids or memory cgroup", tid)
		}
		for _, cg := range paths {
			if !strings.Contains(cg, "/brig/call-") {
				t.Errorf("the command (thread %s) is in cgroup %s, not the call's", tid, cg)
			}
		}
	}
	threads = threadCgroups(t, init)
	if len(threads) == 0 {
		t.Fatal("init's threads could not be listed (the test would prove nothing)")
	}
	for tid, paths := range threads {
		for _, cg := range paths {
			if strings.Contains(cg, "/brig/call-") {
				t.Errorf("init's thread %s is in the call's cgroup %s", tid, cg)
			}
		}
	}
}

func cmdline(pid string) string {
	b, _ := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
	return string(b)
}

// parentOf returns the parent pid of the host process pid.
func parentOf(t *testing.T, pid string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "PPid:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no parent in /proc/%s/status", pid)
	return ""
}

// threadCgroups returns, for each thread of the host process pid, the
// paths of its pids and memory cgroups: the v1 hierarchies where they are
// mounted, else the v2 one.
func threadCgroups(t *testing.T, pid string) map[string][]string {
	t.Helper()
	tasks, err := os.ReadDir(filepath.Join("/proc", pid, "task"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc", pid, "task", task.Name(), "cgroup"))
		if err != nil {
			continue // a thread that ended meanwhile
		}
		var v1, v2 []string
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			// ID:CONTROLLERS:PATH
			f := strings.SplitN(l, ":", 3)
			if len(f) != 3 {
				continue
			}
			if f[0] == "0" && f[1] == "" {
				v2 = append(v2, f[2])
				continue
			}
			for _, c := range strings.Split(f[1], ",") {
				if c == "pids" || c == "memory" {
					v1 = append(v1, f[2])
					break
				}
			}
		}
		if len(v1) > 0 {
			out[task.Name()] = v1
		} else {
			out[task.Name()] = v2
		}
	}
	return out
}

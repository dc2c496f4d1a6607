package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"brig/jail"
	"brig/policy"
)

// The test binary doubles as the jail child for the benchmarks.
func TestMain(m *testing.M) {
	if jail.IsChild() {
		jail.ChildMain(map[string]jail.ToolFunc{
			// exe names the program the worker runs (TestLightWorkerServesAllButFullCalls).
			"exe": func(context.Context, json.RawMessage) (json.RawMessage, error) {
				link, err := os.Readlink("/proc/self/exe")
				if err != nil {
					return nil, err
				}
				return json.Marshal(link)
			},
			// whoread (filetool_test.go), as a worker runs it.
			whoRead: func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
				return runWhoRead(func(name string) (*os.File, error) {
					return os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
				}, args)
			},
		}, jail.FileTool{Name: whoRead, Run: func(_ context.Context, open func(string) (*os.File, error), args json.RawMessage) (json.RawMessage, error) {
			return runWhoRead(open, args)
		}})
	}
	os.Exit(m.Run())
}

// coldSupervisor is a supervisor without a pool (closed when the test
// ends) and the default grant over a fresh workspace.
func coldSupervisor(t *testing.T) (*Supervisor, jail.Spec) {
	t.Helper()
	sup, err := New(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sup.Close)
	_, spec := workspaceSpec(t, sup)
	return sup, spec
}

// workspaceSpec is the default grant over a fresh workspace, for sup.
func workspaceSpec(tb testing.TB, sup *Supervisor) (ws string, spec jail.Spec) {
	tb.Helper()
	ws = tb.TempDir()
	p := policy.Profile{Workspace: ws, Dir: ws, Home: os.Getenv("HOME"), ParentEnv: os.Environ(), Limits: jail.DefaultLimits(), Namespaces: sup.Namespaces()}
	if !p.Namespaces {
		p.CallTmp = tb.TempDir()
	}
	spec, err := p.Spec()
	if err != nil {
		tb.Fatal(err)
	}
	return ws, spec
}

func TestCappedStream(t *testing.T) {
	var w bytes.Buffer
	c := newCappedStream("stdout", &w, 10)
	c.drain(strings.NewReader(strings.Repeat("a", 25)))
	if _, trunc := c.result(); !trunc {
		t.Fatal("not truncated")
	}
	if got := w.String(); !strings.HasPrefix(got, strings.Repeat("a", 10)+"\n[brig: stdout truncated after 10 bytes") || strings.Count(got, "a") != 10+strings.Count("[brig: stdout truncated after 10 bytes; the rest was discarded]", "a") {
		t.Fatalf("stream %q", got)
	}
	// Capture mode, under the cap: whole, not flagged.
	c = newCappedStream("stderr", nil, 10)
	c.drain(strings.NewReader("short"))
	if b, trunc := c.result(); trunc || string(b) != "short" {
		t.Fatalf("capture %q %v", b, trunc)
	}
}

func benchRun(b *testing.B, o Options) {
	ctx := context.Background()
	sup, err := New(ctx, o)
	if err != nil {
		b.Fatal(err)
	}
	defer sup.Close()
	_, spec := workspaceSpec(b, sup)
	inv := jail.Invocation{Argv: []string{"true"}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := sup.Run(ctx, spec, inv, IO{})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%v %+v", err, res)
		}
	}
}

// BenchmarkRunCold is one jailed call of true, starting the jail child.
func BenchmarkRunCold(b *testing.B) { benchRun(b, Options{}) }

// BenchmarkRunPrewarmed is the agent's case: a child is waiting.
func BenchmarkRunPrewarmed(b *testing.B) { benchRun(b, Options{Prewarm: true}) }

func TestPlanFailsClosed(t *testing.T) {
	spec := jail.Spec{Dir: "/"}
	for _, tc := range []struct {
		name   string
		abi    int
		userNS bool
		spec   jail.Spec
		refuse bool
	}{
		{"no Landlock", 0, true, spec, true},
		{"no namespaces and no scoping", 5, false, spec, true},
		{"private /tmp without namespaces", 7, false, jail.Spec{Dir: "/", PrivateTmp: true}, true},
		{"Landlock 6 without namespaces", 6, false, spec, false},
		{"namespaces with old Landlock", 1, true, spec, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			probed := make(chan struct{})
			close(probed) // the probe's answer is tc.userNS
			s := &Supervisor{landlockABI: tc.abi, userNS: tc.userNS, probed: probed, filters: map[filterKey]*compiled{}}
			tc.spec.Layers.NoSeccomp = true // the filter is not what is tested here
			_, err := s.plan(tc.spec)
			if refused := errors.Is(err, jail.ErrUnenforceable); refused != tc.refuse {
				t.Fatalf("refused=%v (%v), want %v", refused, err, tc.refuse)
			}
		})
	}
}

func TestWrittenRoots(t *testing.T) {
	ws := "/w/ws"
	cases := []struct {
		paths []jail.PathRule
		want  []string
	}{
		{nil, nil},
		{[]jail.PathRule{{Path: "/w/ws/a.go", Access: jail.Read}}, nil},
		{[]jail.PathRule{{Path: "/w/ws", Access: jail.Exec}, {Path: "/tmp", Access: jail.Write}}, nil},
		{[]jail.PathRule{{Path: "/w/ws/src", Access: jail.Write}}, []string{"/w/ws/src"}},
		{[]jail.PathRule{{Path: "/w/ws/src", Access: jail.Write}, {Path: "/w/ws", Access: jail.Write}}, []string{"/w/ws"}},
		{[]jail.PathRule{{Path: "/w", Access: jail.Write}}, []string{"/w/ws"}},
		{[]jail.PathRule{{Path: "/w/ws-other", Access: jail.Write}}, nil},
	}
	for _, c := range cases {
		got := writtenRoots(jail.Spec{Workspace: ws, Paths: c.paths})
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%+v: got %v, want %v", c.paths, got, c.want)
		}
	}
}

// TestProbeRunsNothingFromPath: the user-namespace probe at start runs
// no program at all (its child exits once its maps are written): neither
// a `true` planted in a directory on PATH (a workspace's .venv/bin) nor
// the jail's own binary runs, while the probe still answers that calls
// get namespaces where they can be made.
func TestProbeRunsNothingFromPath(t *testing.T) {
	dir := t.TempDir()
	canary := filepath.Join(dir, "canary")
	planted := filepath.Join(dir, "ws", ".venv", "bin")
	must(t, os.MkdirAll(planted, 0o755))
	for _, name := range []string{"true", "sh", "env", "unshare", "setpriv", "brig"} {
		must(t, os.WriteFile(filepath.Join(planted, name), []byte("#!/bin/sh\necho \"$0\" >> "+canary+"\n"), 0o755))
	}
	// The stand-in for the jail binary records any start.
	exe := filepath.Join(dir, "brig-jail")
	must(t, os.WriteFile(exe, []byte("#!/bin/sh\necho \"$0 $*\" >> "+canary+"\n"), 0o755))
	t.Setenv("PATH", planted+":"+os.Getenv("PATH"))
	// Control: the planted program does run when looked up on this PATH.
	if out, err := exec.Command("true").CombinedOutput(); err != nil {
		t.Fatalf("control: %v %s", err, out)
	}
	if _, err := os.Stat(canary); err != nil {
		t.Fatalf("control failed: the planted true did not run from PATH: %v", err)
	}
	must(t, os.Remove(canary))

	sup, err := New(context.Background(), Options{Executable: exe})
	if err != nil {
		t.Fatal(err)
	}
	ns := sup.Namespaces()
	sup.Close()
	if ns != jail.DetectFeatures(context.Background()).Namespaces() {
		t.Fatalf("the probe says namespaces %v, the kernel's features say otherwise", ns)
	}
	if !sup.probeUserNS(context.Background()) && ns {
		t.Fatal("a second probe failed")
	}
	// The probes are not waited for: give any program they might have
	// started the time to write, then look.
	time.Sleep(100 * time.Millisecond)
	if b, err := os.ReadFile(canary); err == nil {
		t.Fatalf("the probe ran a program: %s", b)
	}
	if _, err := New(context.Background(), Options{Executable: "brig"}); err == nil {
		t.Error("a relative executable name (looked up on PATH) was accepted")
	}
}

// TestPrewarmPool: a prewarmed supervisor has its pool waiting before the
// first call, takes from it for calls, refills it right away, and leaves
// no child behind when it closes.
func TestPrewarmPool(t *testing.T) {
	ctx := context.Background()
	sup, err := New(ctx, Options{Prewarm: true, PoolSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	sup.Warm()
	first := waitPool(t, sup, 2) // before any call
	_, spec := poolSpec(t, sup)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res, err := sup.Run(ctx, spec, jail.Invocation{Argv: []string{"true"}}, IO{}); err != nil || res.ExitCode != 0 {
				t.Errorf("call: %v %+v", err, res)
			}
		}()
	}
	wg.Wait()
	second := waitPool(t, sup, 2)
	// The calls took from the pool, and it is full again: with children
	// that serve calls in turn (a command's init, where calls get
	// namespaces) the same ones are back, having served both calls;
	// otherwise the children the calls took were replaced (the pool is
	// last in, first out: when the second call acquires only after the
	// first call's refill has added a child, on a loaded machine, it takes
	// that one, and one of the first pair stays).
	sup.mu.Lock()
	served := 0
	for _, c := range sup.warm[sup.commandKey()] {
		served += c.served
	}
	sup.mu.Unlock()
	taken := slices.DeleteFunc(slices.Clone(first), func(pid int) bool { return slices.Contains(second, pid) })
	if served != 2 && len(taken) == 0 {
		t.Errorf("no call took a waiting child (pool before %v, after %v, %d calls served by those back)", first, second, served)
	}
	sup.Close()
	waitPIDsGone(t, second)
}

// TestServingInitKeepsNothingBetweenCalls: an init that serves calls in
// turn (a command's, where calls get namespaces) runs its next call as a
// fresh one would: what the first call left — a process in the
// background, files in its private /tmp and /dev/shm, a System V shared
// memory segment, its write grant — is gone, and each call's output is
// its own. The first call proves each of those worked there.
func TestServingInitKeepsNothingBetweenCalls(t *testing.T) {
	ctx := context.Background()
	sup, ws, spec, p, pids := warmServing(t, 1, 1)
	// A write grant outside /tmp (whose grants the private /tmp carries
	// over), made writable again on the read-only view by a mount of its
	// own for each call.
	outside, err := os.MkdirTemp("/var/tmp", "brig-serving-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	spec.Paths = append(slices.Clone(spec.Paths), jail.PathRule{Path: outside, Access: jail.Write})
	// A duration no other process on the machine sleeps for.
	sleep := fmt.Sprintf("%d.%03d", 900+os.Getpid()%100, time.Now().Nanosecond()/1e6)
	_, haveIPC := exec.LookPath("ipcmk")
	ipc := `echo ipc-skipped`
	if haveIPC == nil {
		ipc = `ipcmk -M 4096 >/dev/null && echo "ipc:$(ipcs -m | grep -c '^0x')"`
	}
	// Counts the call's view of the background process, the same way in
	// both calls.
	sleeping := `ps=0
for d in /proc/[0-9]*; do
  if [ "$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null)" = "sleep ` + sleep + ` " ]; then ps=$((ps+1)); fi
done
echo "sleeping:$ps"
`
	first := `set -e
setsid sleep ` + sleep + ` </dev/null >/dev/null 2>&1 &
until [ -n "$(cat /proc/$!/cmdline 2>/dev/null)" ] && [ "$(tr '\0' ' ' </proc/$!/cmdline)" = "sleep ` + sleep + ` " ]; do sleep 0.01; done
` + sleeping + `echo kept >/tmp/mark; echo kept >/dev/shm/mark
echo one >one
echo outside >` + outside + `/one
` + ipc + `
echo "tmp:$(cat /tmp/mark) shm:$(cat /dev/shm/mark)"
echo first-call`
	var out1 bytes.Buffer
	res, err := sup.Run(ctx, spec, jail.Invocation{Argv: []string{"/bin/sh", "-c", first}}, IO{Stdout: &out1})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("first call: %v %+v (stdout %q, stderr %q)", err, res, out1.String(), res.Stderr)
	}
	for _, want := range []string{"sleeping:1", "tmp:kept shm:kept", "first-call"} {
		if !strings.Contains(out1.String(), want) {
			t.Fatalf("first call's output %q lacks %q", out1.String(), want)
		}
	}
	if haveIPC == nil && !strings.Contains(out1.String(), "ipc:1") {
		t.Fatalf("first call's output %q: its shared memory segment was not made", out1.String())
	}
	if b, err := os.ReadFile(filepath.Join(ws, "one")); err != nil || string(b) != "one\n" {
		t.Fatalf("the first call's write in the workspace: %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "one")); err != nil || string(b) != "outside\n" {
		t.Fatalf("the first call's write outside /tmp: %q, %v", b, err)
	}
	// Its result came once its tree was gone: the process it left behind
	// is, already.
	if left := processesRunning(t, "sleep\x00"+sleep+"\x00"); len(left) > 0 {
		t.Fatalf("the first call's background process outlived it: %v", left)
	}
	if back := waitPool(t, sup, 1); !slices.Equal(back, pids) {
		t.Fatalf("the pool held %v before the call and %v after: its init did not come back to serve the next", pids, back)
	}
	// What a call opens in init is closed once it is over: as many
	// descriptors after the first call as after the second (a clone of
	// a mount left open kept that mount alive, one more every call).
	// Init is back in the pool as soon as its result is in, while it may
	// still be making the next call's masks: the count is read once it
	// has stayed the same for a while.
	fds := func() int {
		t.Helper()
		count := func() int {
			entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pids[0]))
			if err != nil {
				t.Fatalf("count the waiting init's descriptors: %v", err)
			}
			return len(entries)
		}
		last, same := count(), 0
		for deadline := time.Now().Add(time.Minute); same < 20 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if n := count(); n == last {
				same++
			} else {
				last, same = n, 0
			}
		}
		return last
	}
	afterFirst := fds()

	// The second call, in the same init: the workspace read-only now.
	second := spec
	second.Paths = slices.Clone(spec.Paths)
	for i, r := range second.Paths {
		if r.Path == ws {
			second.Paths[i].Access = jail.Read
		}
	}
	check := sleeping + `test -e /tmp/mark && echo tmp-kept || echo tmp-clean
test -e /dev/shm/mark && echo shm-kept || echo shm-clean
if command -v ipcs >/dev/null; then echo "ipc:$(ipcs -m | grep -c '^0x')"; fi
(echo two >two) 2>/dev/null && echo wrote-two || echo refused-two`
	var out2 bytes.Buffer
	res, err = sup.Run(ctx, second, jail.Invocation{Argv: []string{"/bin/sh", "-c", check}}, IO{Stdout: &out2})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("second call: %v %+v (stdout %q, stderr %q)", err, res, out2.String(), res.Stderr)
	}
	got := out2.String()
	for _, want := range []string{"sleeping:0", "tmp-clean", "shm-clean", "refused-two"} {
		if !strings.Contains(got, want) {
			t.Errorf("second call's output %q lacks %q", got, want)
		}
	}
	if haveIPC == nil && !strings.Contains(got, "ipc:0") {
		t.Errorf("second call's output %q: the first call's shared memory segment is still there", got)
	}
	if strings.Contains(got, "first-call") {
		t.Errorf("second call's output %q holds the first call's", got)
	}
	if _, err := os.Stat(filepath.Join(ws, "two")); err == nil {
		t.Error("the second call wrote where only the first was granted to")
	}
	sup.mu.Lock()
	var served []int
	for _, c := range sup.warm[p.flags] {
		served = append(served, c.served)
	}
	sup.mu.Unlock()
	if !slices.Equal(served, []int{2}) {
		t.Errorf("calls served by the pool's children: %v, want one child that served both", served)
	}
	if n := fds(); n != afterFirst {
		t.Errorf("the waiting init holds %d descriptors after two calls, %d after one: a call left some open", n, afterFirst)
	}
}

// TestDeadWaitingChildIsSkipped: an init that died while it waited in
// the pool (the OOM killer's first choice, by design) is not handed to a
// call, which runs in another; the control is the same pool's call on a
// live child.
func TestDeadWaitingChildIsSkipped(t *testing.T) {
	ctx := context.Background()
	sup, _, spec, _ := pooledPlan(t, 1)
	sup.Warm()
	pids := waitPool(t, sup, 1)
	call := func() (jail.Result, error) {
		return sup.Run(ctx, spec, jail.Invocation{Argv: []string{"/bin/sh", "-c", "echo alive"}}, IO{})
	}
	if res, err := call(); err != nil || strings.TrimSpace(string(res.Stdout)) != "alive" {
		t.Fatalf("control: a call on the pool's live child: %v %+v", err, res)
	}
	waiting := waitPool(t, sup, 1)
	sup.mu.Lock()
	c := sup.warm[sup.commandKey()][0]
	sup.mu.Unlock()
	if c.exited() {
		t.Fatalf("init %d, waiting in the pool, counts as exited", c.proc.Pid)
	}
	if err := syscall.Kill(waiting[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Its descriptors close first, as it starts to die: from then on a
	// call must not take it.
	for deadline := time.Now().Add(time.Minute); !c.exited(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("init %d did not die", waiting[0])
		}
	}
	res, err := call()
	if err != nil || strings.TrimSpace(string(res.Stdout)) != "alive" {
		t.Fatalf("a call after the waiting init %d (pool before: %v) died: %v %+v", waiting[0], pids, err, res)
	}
}

// processesRunning returns the pids of the host's processes whose
// command line (NUL-separated) contains cmdline.
func processesRunning(t *testing.T, cmdline string) []int {
	t.Helper()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var pids []int
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err == nil && strings.Contains(string(b)+"\x00", cmdline) {
			pid, _ := strconv.Atoi(filepath.Base(d))
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestPrewarmPoolGrowsWithDemand: four calls at once (they wait for each
// other) grow a pool of two to four, so the next such burst finds a child
// for each; the pool stops at four, and Close ends every child it holds.
func TestPrewarmPoolGrowsWithDemand(t *testing.T) {
	ctx := context.Background()
	sup, err := New(ctx, Options{Prewarm: true, PoolSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer sup.Close()
	sup.Warm()
	waitPool(t, sup, 2)
	ws, spec := poolSpec(t, sup)
	burst := func(n int) {
		t.Helper()
		// Each call marks itself started, then waits until all n have:
		// they hold their children at the same time.
		script := fmt.Sprintf(`touch "started.$CALL"; until [ "$(ls | grep -c '^started\.')" -ge %d ]; do sleep 0.01; done; ls | grep -c '^started\.'`, n)
		runAtOnce(t, sup, ctx, spec, n, script, func(res jail.Result) bool {
			return strings.TrimSpace(string(res.Stdout)) == strconv.Itoa(n)
		})()
		matches, _ := filepath.Glob(filepath.Join(ws, "started.*"))
		for _, m := range matches {
			os.Remove(m)
		}
	}
	demand := func() int {
		sup.mu.Lock()
		defer sup.mu.Unlock()
		return sup.demand[sup.commandKey()]
	}
	burst(4)
	waitPool(t, sup, 4)
	// A wider burst does not grow it past maxPoolSize (its calls saw each
	// other, so without the bound the demand would be six).
	burst(maxPoolSize + 2)
	if d := demand(); d != maxPoolSize {
		t.Errorf("after %d calls at once the pool is filled to %d, want the bound %d", maxPoolSize+2, d, maxPoolSize)
	}
	pids := waitPool(t, sup, maxPoolSize)
	sup.Close()
	waitPIDsGone(t, pids)
}

// prestarted is a Prestart supervisor (brig sandbox's) whose one child is
// waiting, the spec of a usual command, and the waiting child's pids.
func prestarted(t *testing.T) (*Supervisor, jail.Spec, []int) {
	t.Helper()
	sup, err := New(context.Background(), Options{Prestart: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sup.Close)
	_, spec := poolSpec(t, sup)
	if p, err := sup.plan(spec); err != nil || p.base == nil {
		t.Skipf("no seccomp layer here (%v): calls never use the pool", err)
	}
	sup.Warm()
	return sup, spec, waitPool(t, sup, 1)
}

// TestPrestartStartsOneChildOnly: with Prestart, Warm starts one child for
// the usual command before any call, the call takes it, and no refill
// starts another (brig sandbox runs one call); a call planned otherwise
// starts its own.
func TestPrestartStartsOneChildOnly(t *testing.T) {
	ctx := context.Background()
	sup, spec, pids := prestarted(t)
	if res, err := sup.Run(ctx, spec, jail.Invocation{Argv: []string{"true"}}, IO{}); err != nil || res.ExitCode != 0 {
		t.Fatalf("call: %v %+v", err, res)
	}
	waitPIDsGone(t, pids) // the call took it: its init is gone with the call
	flags := sup.commandKey()
	sup.refill(flags)
	sup.mu.Lock()
	n, starts := len(sup.warm[flags])+sup.starting[flags], sup.starts
	sup.mu.Unlock()
	if n != 0 || starts != 0 {
		t.Errorf("after the call the pool holds or starts %d children (%d starts left), want none", n, starts)
	}
	// A second call still runs, in a child of its own.
	if res, err := sup.Run(ctx, spec, jail.Invocation{Argv: []string{"true"}}, IO{}); err != nil || res.ExitCode != 0 {
		t.Fatalf("second call: %v %+v", err, res)
	}
}

// TestPrestartCloseRemovesTheCallCgroup: brig sandbox closes its
// supervisor as soon as its one call returns; the call's cgroup is removed
// then, not left for the next brig's clean-up of dead supervisors' ones.
func TestPrestartCloseRemovesTheCallCgroup(t *testing.T) {
	ctx := context.Background()
	sup, spec, _ := prestarted(t)
	sup.mu.Lock()
	var dirs []string
	for _, c := range sup.warm[sup.commandKey()] {
		if c.cg != nil {
			dirs = c.cg.dirs
		}
	}
	sup.mu.Unlock()
	if len(dirs) == 0 {
		t.Skip("calls get no cgroup of their own here (not root, or no pids controller)")
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("control: the waiting child's cgroup %s: %v", d, err)
		}
	}
	if res, err := sup.Run(ctx, spec, jail.Invocation{Argv: []string{"true"}}, IO{}); err != nil || res.ExitCode != 0 {
		t.Fatalf("call: %v %+v", err, res)
	}
	sup.Close()
	for _, d := range dirs {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("the call's cgroup %s is still there after Close", d)
		}
	}
}

// TestToolsPoolHoldsOneUntilCallsNeedMore: where commands start without a
// worker, the Go tools' pool is filled to one child once a call that came
// at a model's pace is over — not after calls that come back to back —,
// while the commands' holds the pool size; a Go tool call that comes as
// the last one ends and finds no child ready raises it to the pool size.
func TestToolsPoolHoldsOneUntilCallsNeedMore(t *testing.T) {
	ctx := context.Background()
	sup, _, spec, p := pooledPlan(t, 2)
	if p.flags&directStart == 0 {
		t.Skip("commands start with a worker here: one pool serves them and the Go tools")
	}
	tools := p.flags &^ directStart
	if !sup.toolsOnly(tools) || sup.toolsOnly(p.flags) {
		t.Fatalf("toolsOnly: the tools' key %#x %v, the commands' %#x %v", tools, sup.toolsOnly(tools), p.flags, sup.toolsOnly(p.flags))
	}
	sup.Warm()
	waitPool(t, sup, 2)
	call := func(quiet time.Duration) {
		t.Helper()
		sup.mu.Lock()
		sup.quietSince = time.Now().Add(-quiet) // how long ago the last call ended
		sup.mu.Unlock()
		if res, err := sup.Run(ctx, spec, jail.Invocation{Argv: []string{"true"}}, IO{}); err != nil || res.ExitCode != 0 {
			t.Fatalf("call: %v %+v", err, res)
		}
	}
	// Back to back (an instant model): the Go tools' pool stays empty.
	call(-quietGap) // a moment ago, whatever this machine's delays
	waitPool(t, sup, 2)
	sup.mu.Lock()
	n := len(sup.warm[tools]) + sup.starting[tools]
	sup.mu.Unlock()
	if n != 0 {
		t.Fatalf("a call that came back to back started %d Go tools' children", n)
	}
	// At a model's pace: one child, and the commands' pool keeps two.
	call(2 * quietGap)
	waitPool(t, sup, 2)
	waitPoolOf(t, sup, tools, 1)
	// waitPoolOf saw one child and none starting: none will start until a
	// call takes one.
	sup.mu.Lock()
	n = len(sup.warm[tools]) + sup.starting[tools]
	sup.mu.Unlock()
	if n != 1 {
		t.Fatalf("the Go tools' pool went on to %d children", n)
	}

	// A Go tool call as the last one ends (its end set a little ahead,
	// so that no delay here makes it look like a model's pace), with no
	// child ready: the one waiting is taken away first.
	sup.mu.Lock()
	waiting := sup.warm[tools]
	sup.warm[tools] = nil
	sup.mu.Unlock()
	for _, c := range waiting {
		c.discard()
	}
	// After the discards, which wait for each child's end (tens of
	// milliseconds on a loaded machine, which made the call look paced).
	sup.mu.Lock()
	sup.lastEnd[tools] = time.Now().Add(quietGap / 2)
	sup.mu.Unlock()
	tp := p
	tp.flags = tools
	c, _, err := sup.acquire(ctx, tp, sup.limits, false, false)
	if err != nil {
		t.Fatal(err)
	}
	c.discard()
	waitPoolOf(t, sup, tools, 2)
}

// TestPrewarmPoolWaitsForTheBurst: the calls of a burst (Burst) take the
// waiting children and start no replacement while they run; the pool is
// filled again when the last of them ends.
func TestPrewarmPoolWaitsForTheBurst(t *testing.T) {
	ctx := context.Background()
	sup, err := New(ctx, Options{Prewarm: true, PoolSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer sup.Close()
	sup.Warm()
	waitPool(t, sup, 3)
	ws, spec := poolSpec(t, sup)
	flags := sup.commandKey()
	const n = 3
	// Each call marks itself started, then waits for the test's go.
	script := `touch "started.$CALL"; until [ -e release ]; do sleep 0.01; done`
	wait := runAtOnce(t, sup, Burst(ctx), spec, n, script, nil)
	deadline := time.Now().Add(time.Minute)
	for {
		matches, _ := filepath.Glob(filepath.Join(ws, "started.*"))
		if len(matches) == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d calls started", len(matches), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Every call runs and took a waiting child; what the pool holds or is
	// starting now, the burst started.
	settled := func() int {
		for {
			sup.mu.Lock()
			starting, warm := sup.starting[flags], len(sup.warm[flags])
			sup.mu.Unlock()
			if starting == 0 {
				return warm
			}
			if time.Now().After(deadline) {
				t.Fatalf("the pool is still starting %d children", starting)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if got := settled(); got != 0 {
		t.Errorf("%d replacements were started while the burst of %d calls ran, want none", got, n)
	}
	if err := os.WriteFile(filepath.Join(ws, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wait()
	waitPool(t, sup, 3)
}

// TestAcquireWaitsForAStartInFlight: a call that finds the pool empty
// while a refill is starting a child waits for that child instead of
// starting another beside it, and a call whose context ends while it
// waits starts nothing.
func TestAcquireWaitsForAStartInFlight(t *testing.T) {
	ctx := context.Background()
	sup, _, spec, p := pooledPlan(t, 1)
	// A start in flight, as the refill counts it; the pool is empty.
	sup.mu.Lock()
	sup.starting[p.flags]++
	sup.mu.Unlock()

	// Cancelled while waiting: an error, and no child started.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if c, _, err := sup.acquire(cancelled, p, spec.Limits, true, false); err == nil {
		c.discard()
		t.Fatal("a call that could not wait started a child of its own")
	} else if !errors.Is(err, context.Canceled) {
		t.Fatalf("want the context's end, got %v", err)
	}

	// The start lands: the waiting call gets that very child.
	landed, err := sup.startChildStdin(p.flags, jail.DefaultLimits(), nil, p.base, p.notify, false)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *child, 1)
	go func() {
		c, _, err := sup.acquire(ctx, p, spec.Limits, true, false)
		if err != nil {
			t.Error(err)
		}
		got <- c
	}()
	sup.mu.Lock()
	if surplus := sup.landStart(p.flags, landed); surplus != nil {
		sup.mu.Unlock()
		t.Fatal("the landed child was not kept")
	}
	sup.mu.Unlock()
	c := <-got
	if c != landed {
		t.Fatalf("the call took %v, want the child whose start it waited for (%v)", c, landed)
	}
	c.discard()
}

// TestReplacementFollowsACallAtAModelsPace: when calls come at a model's
// pace (the last one ended long ago) and another child waits, the child a
// call takes is replaced once the call is done, not beside it; when calls
// come back to back, or the pool is left empty, at once. A child that
// serves calls in turn (a command's init, where calls get namespaces) is
// never replaced beside its call: it comes back when the call is done.
func TestReplacementFollowsACallAtAModelsPace(t *testing.T) {
	ctx := context.Background()
	sup, ws, spec, p := pooledPlan(t, 2)
	sup.Warm()
	waitPool(t, sup, 2)
	// The decision for children that do not serve: those of a call
	// without the direct start, in a pool of two of their own.
	pw := p
	pw.flags &^= directStart
	sup.mu.Lock()
	sup.demand[pw.flags] = 2
	sup.mu.Unlock()
	sup.refill(pw.flags) // returns once that pool is full
	ended := func(flags uintptr, ago time.Duration) {
		sup.mu.Lock()
		sup.lastEnd[flags] = time.Now().Add(-ago)
		sup.mu.Unlock()
	}
	state := func(flags uintptr) (warm, starting int) {
		sup.mu.Lock()
		defer sup.mu.Unlock()
		return len(sup.warm[flags]), sup.starting[flags]
	}
	// takePaced acquires a child for a call planned as p, which came at a
	// model's pace or not, and drops it, and says whether its replacement
	// was left to the caller.
	takePaced := func(p plan, paced bool) bool {
		c, later, err := sup.acquire(ctx, p, spec.Limits, false, paced)
		if err != nil {
			t.Fatal(err)
		}
		// Dropped, not given back (as run does when a call fails).
		sup.mu.Lock()
		sup.returned(p.flags, c)
		sup.mu.Unlock()
		c.discard()
		return later
	}
	take := func(p plan) bool { return takePaced(p, false) }

	// At a model's pace, with a second child waiting: nothing is started.
	ended(pw.flags, time.Second)
	later := take(pw)
	if warm, starting := state(pw.flags); !later || warm != 1 || starting != 0 {
		t.Fatalf("at a model's pace: later=%v, %d waiting and %d starting; want the replacement left to the caller (true, 1, 0)", later, warm, starting)
	}
	if take(pw) {
		t.Fatal("the pool's last child was taken and its replacement left for later")
	}
	waitPoolOf(t, sup, pw.flags, 2)
	ended(pw.flags, 0) // back to back: the last call ended just now
	if take(pw) {
		t.Fatal("calls back to back and the replacement left for later")
	}
	waitPoolOf(t, sup, pw.flags, 2)
	// The model's answer was slow: even the pool's last child is replaced
	// once its call is done, not beside it.
	ended(pw.flags, 0)
	for want := 1; want >= 0; want-- {
		later := takePaced(pw, true)
		if warm, starting := state(pw.flags); !later || warm != want || starting != 0 {
			t.Fatalf("a call at a model's pace: later=%v, %d waiting and %d starting; want the replacement left to the caller (true, %d, 0)", later, warm, starting, want)
		}
	}
	sup.refill(pw.flags)
	waitPoolOf(t, sup, pw.flags, 2)

	if p.flags&directStart != 0 {
		// A serving child's replacement is always left for later, even
		// back to back: the caller gives the child back.
		ended(p.flags, 0)
		if !take(p) {
			t.Fatal("a serving child was taken back to back and replaced beside its call")
		}
		if warm, starting := state(p.flags); warm != 1 || starting != 0 {
			t.Fatalf("a serving child taken: %d waiting and %d starting, want 1 and 0", warm, starting)
		}
		sup.refill(p.flags)
		waitPool(t, sup, 2)
		// One on its last call is replaced at once, back to back, like
		// a child that serves one call: it will not come back.
		sup.mu.Lock()
		for _, c := range sup.warm[p.flags] {
			c.served = maxServed - 1
		}
		sup.mu.Unlock()
		ended(p.flags, 0)
		if take(p) {
			t.Fatal("a serving child on its last call was taken back to back and its replacement left for later")
		}
		// acquire started the replacement on a goroutine of its own
		// (refill), which may not have run yet: nothing else starts one
		// for these flags, so a pool full again is that replacement.
		waitPoolOf(t, sup, p.flags, 2)
	}

	// Through Run at a model's pace: the call runs beside no start, and the
	// pool is full again once it is done.
	ended(p.flags, time.Second)
	before := waitPool(t, sup, 2)
	script := `touch started; until [ -e release ]; do sleep 0.01; done`
	wait := runAtOnce(t, sup, ctx, spec, 1, script, nil)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(ws, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the call did not start")
		}
	}
	if warm, starting := state(p.flags); warm != 1 || starting != 0 {
		t.Errorf("while the call runs: %d waiting and %d starting, want 1 and 0", warm, starting)
	}
	if err := os.WriteFile(filepath.Join(ws, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wait()
	after := waitPool(t, sup, 2)
	if p.flags&directStart != 0 {
		slices.Sort(before)
		slices.Sort(after)
		if !slices.Equal(before, after) {
			t.Errorf("the pool before the call held %v, after it %v: the serving child that ran it did not come back", before, after)
		}
	}
}

// runAtOnce starts n calls of the shell script under spec at once, each
// with CALL=i in its environment, and returns a function that waits for
// them. A call fails the test unless it exits 0 and ok (nil: any such
// result) accepts its result.
func runAtOnce(t *testing.T, sup *Supervisor, ctx context.Context, spec jail.Spec, n int, script string, ok func(jail.Result) bool) (wait func()) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := spec
			s.Env = append(slices.Clone(spec.Env), fmt.Sprintf("CALL=%d", i))
			res, err := sup.Run(ctx, s, jail.Invocation{Argv: []string{"/bin/sh", "-c", script}}, IO{})
			if err != nil || res.ExitCode != 0 || (ok != nil && !ok(res)) {
				t.Errorf("call %d: %v %+v (stdout %q)", i, err, res, res.Stdout)
			}
		}()
	}
	return wg.Wait
}

// poolSpec is a plain workspace call's spec for sup.
func poolSpec(t *testing.T, sup *Supervisor) (string, jail.Spec) {
	t.Helper()
	ws, spec := workspaceSpec(t, sup)
	return ws, spec
}

// pooledPlan makes a prewarming supervisor with a pool of size (closed
// when the test ends), a workspace and the spec of a usual call there, and
// that call's plan; it skips the test where calls never use the pool.
func pooledPlan(t *testing.T, size int) (*Supervisor, string, jail.Spec, plan) {
	t.Helper()
	sup, err := New(context.Background(), Options{Prewarm: true, PoolSize: size})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sup.Close)
	ws, spec := poolSpec(t, sup)
	p, err := sup.plan(spec)
	if err != nil {
		t.Fatal(err)
	}
	p.flags |= sup.direct(p, jail.Invocation{Argv: []string{"true"}}, spec.Dir) // the tests' calls are commands
	if p.base == nil {
		t.Skip("no seccomp layer here: calls never use the pool")
	}
	return sup, ws, spec, p
}

// warmServing is pooledPlan for a test of the inits that serve commands
// in turn (and of the Go tools' pool beside theirs): it skips where
// commands start with a worker, warms the pool and waits until it holds
// want, whose pids it returns.
func warmServing(t *testing.T, size, want int) (*Supervisor, string, jail.Spec, plan, []int) {
	t.Helper()
	sup, ws, spec, p := pooledPlan(t, size)
	if p.flags&directStart == 0 {
		t.Skip("calls here start with a worker (no namespaces, or root on cgroup v2): each init serves one call, and one pool serves commands and Go tools")
	}
	sup.Warm()
	return sup, ws, spec, p, waitPool(t, sup, want)
}

// waitPool waits until sup's pool for the usual call holds want started
// children, all ready for a call, and starts no more; it returns their
// pids.
func waitPool(t *testing.T, sup *Supervisor, want int) []int {
	t.Helper()
	return waitPoolOf(t, sup, sup.commandKey(), want)
}

// waitPoolOf is waitPool for the pool of clone flags flags.
func waitPoolOf(t *testing.T, sup *Supervisor, flags uintptr, want int) []int {
	t.Helper()
	pool := func() (n int, pids []int, readying int) {
		sup.mu.Lock()
		defer sup.mu.Unlock()
		for _, c := range sup.warm[flags] {
			pids = append(pids, c.proc.Pid)
		}
		return len(sup.warm[flags]) + sup.starting[flags], pids, sup.readying[flags]
	}
	deadline := time.Now().Add(time.Minute)
	for {
		n, pids, readying := pool()
		if n == want && len(pids) == want && readying == 0 {
			return pids
		}
		if time.Now().After(deadline) {
			sup.mu.Lock()
			dbg := fmt.Sprintf("demand %d target %d starting %d readying %d closed %v", sup.demand[flags], sup.poolTarget(flags), sup.starting[flags], sup.readying[flags], sup.closed)
			sup.mu.Unlock()
			t.Fatalf("the pool holds %d children (%d started), want %d (%s)", n, len(pids), want, dbg)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitPIDsGone waits until every pid has exited.
func waitPIDsGone(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		deadline := time.Now().Add(time.Minute)
		for syscall.Kill(pid, 0) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("warm child %d outlived Close", pid)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// TestUnexecutableChildFallsBackToSelf: when the jail executable cannot be
// executed (permission denied), the call's child is the process's own
// binary, and the call runs.
func TestUnexecutableChildFallsBackToSelf(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "not-executable")
	if err := os.WriteFile(bad, []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sup, err := New(ctx, Options{Executable: bad})
	if err != nil {
		t.Fatal(err)
	}
	defer sup.Close()
	_, spec := workspaceSpec(t, sup)
	res, err := sup.Run(ctx, spec, jail.Invocation{Argv: []string{"/bin/sh", "-c", "echo ran"}}, IO{})
	if err != nil || strings.TrimSpace(string(res.Stdout)) != "ran" {
		t.Fatalf("%v %+v", err, res)
	}
}

// TestUnexecutableCarriedInitFallsBack: where the carried init cannot be
// executed (a host that forbids executing memory files answers EACCES),
// the call's init is brig itself — the same jail code — and the call
// runs; the user is told in the log. The carried file here is not
// executable.
func TestUnexecutableCarriedInitFallsBack(t *testing.T) {
	initProg, worker := copyOfSelf(t, "init", 0o644), copyOfSelf(t, "worker", 0o755)
	var logged bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logged.Write(p)
	}), nil))
	ctx := context.Background()
	sup, err := New(ctx, Options{Logger: logger, Programs: carried(initProg, worker)})
	if err != nil {
		t.Fatal(err)
	}
	defer sup.Close()
	_, spec := workspaceSpec(t, sup)
	res, err := sup.Run(ctx, spec, jail.Invocation{Argv: []string{"/bin/sh", "-c", `tr '\0' ' ' </proc/$PPID/cmdline`}}, IO{})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("the call did not run: %v %+v", err, res)
	}
	if got := string(res.Stdout); !strings.Contains(got, "__brig_jail_init") || strings.Contains(got, "__brig_carried") {
		t.Errorf("init's command line %q: want brig itself as init, not the carried program", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logged.String(), "could not be started") || !strings.Contains(logged.String(), "permission denied") {
		t.Errorf("the fallback was not logged with its cause: %q", logged.String())
	}
}

// copyOfSelf is a copy of the test binary (which doubles as the jail
// child) named name with mode, open for reading: a carried program.
func copyOfSelf(t *testing.T, name string, mode os.FileMode) *os.File {
	t.Helper()
	self, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, self, mode); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// carried gives init and worker as the carried programs, without a light
// worker.
func carried(initProg, worker *os.File) func() Programs {
	return func() Programs {
		return Programs{Init: initProg, Worker: func() (*os.File, error) { return worker, nil }}
	}
}

// TestLightWorkerServesAllButFullCalls: with a light worker, every call
// NeedsFull does not name runs in it (from the pool, prewarmed), and a
// call it names runs in the full worker, which is asked for only then;
// the call after that is light again. Which program ran is what the
// worker's own /proc/self/exe names (the "exe" tool of TestMain).
func TestLightWorkerServesAllButFullCalls(t *testing.T) {
	initProg := copyOfSelf(t, "init", 0o755)
	light, full := copyOfSelf(t, "worker-light", 0o755), copyOfSelf(t, "worker-full", 0o755)
	var asked atomic.Int32
	ctx := context.Background()
	sup, err := New(ctx, Options{Prewarm: true, Programs: func() Programs {
		return Programs{
			Init:      initProg,
			Worker:    func() (*os.File, error) { asked.Add(1); return full, nil },
			Light:     func() (*os.File, error) { return light, nil },
			NeedsFull: func(inv jail.Invocation) bool { return string(inv.Args) == `"full"` },
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer sup.Close()
	sup.Warm()
	_, spec := workspaceSpec(t, sup)
	exe := func(args string) string {
		t.Helper()
		res, err := sup.Run(ctx, spec, jail.Invocation{Tool: "exe", Args: json.RawMessage(args)}, IO{})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("the exe tool: %v %+v", err, res)
		}
		var link string
		if err := json.Unmarshal(res.Output, &link); err != nil {
			t.Fatalf("the exe tool's output %q: %v", res.Output, err)
		}
		return filepath.Base(link)
	}
	for i, step := range []struct{ args, want string }{
		{`"light"`, "worker-light"}, {`"light"`, "worker-light"}, {`"full"`, "worker-full"}, {`"light"`, "worker-light"},
	} {
		if got := exe(step.args); got != step.want {
			t.Errorf("call %d (%s) ran in %s, want %s", i, step.args, got, step.want)
		}
		if n := asked.Load(); (i < 2 && n != 0) || (i >= 2 && n != 1) {
			t.Errorf("after call %d the full worker was asked for %d times", i, n)
		}
	}
}

// TestInitStartsBeforeTheWorkerProgram: a carried init is started while
// the light worker's program is still being written (jailexe.Open writes
// it in the background) and gets it in a message once it exists, so the
// two overlap on a session's first Go tool call. The light worker's
// program is held back here: while the supervisor waits for it, the
// call's init already runs; once it is given, the call is served.
func TestInitStartsBeforeTheWorkerProgram(t *testing.T) {
	initProg, light := copyOfSelf(t, "init", 0o755), copyOfSelf(t, "worker-light", 0o755)
	asked, release := make(chan struct{}), make(chan struct{})
	var askOnce, releaseOnce sync.Once
	ctx := context.Background()
	sup, err := New(ctx, Options{Prewarm: true, Programs: func() Programs {
		return Programs{
			Init:   initProg,
			Worker: func() (*os.File, error) { return light, nil },
			Light: func() (*os.File, error) {
				askOnce.Do(func() { close(asked) })
				<-release
				return light, nil
			},
			NeedsFull: func(jail.Invocation) bool { return false },
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer sup.Close()
	defer releaseOnce.Do(func() { close(release) }) // before Close, should the test stop early
	_, spec := workspaceSpec(t, sup)
	type outcome struct {
		res jail.Result
		err error
	}
	served := make(chan outcome, 1)
	go func() {
		res, err := sup.Run(ctx, spec, jail.Invocation{Tool: "exe", Args: json.RawMessage(`"light"`)}, IO{})
		served <- outcome{res, err}
	}()
	<-asked
	// The worker's program is held back: an init the supervisor started
	// before asking for it stays, waiting for it. It is looked for more
	// than once: a vfork'd exec releases the supervisor before the new
	// program's arguments are in place, so a look at once can find its
	// cmdline still empty. Without such an init none ever appears, and
	// the looks end (5 s: a bound on the failure, not a measure).
	found := false
	for end := time.Now().Add(5 * time.Second); !found && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		found = len(initsOf(t, os.Getpid())) > 0
	}
	if !found {
		t.Fatal("the supervisor asked for the worker's program before any init was started")
	}
	releaseOnce.Do(func() { close(release) })
	if o := <-served; o.err != nil || o.res.ExitCode != 0 || !strings.Contains(string(o.res.Output), "worker-light") {
		t.Fatalf("the call after the worker's program was given: %v %+v", o.err, o.res)
	}
}

// TestInitsEarlyReportReachesTheCaller: a carried init that fails before
// its call comes (before it even asks for its worker's program, here) has
// its own report reach the caller, not the failed send of the call that
// followed. A script stands in for init: it reports a mount failure on its
// control socket and exits; the worker's program is given only once it is
// gone.
func TestInitsEarlyReportReachesTheCaller(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "reported")
	// After its report it leaves its pid as the host sees it (/proc is
	// still the host's here) in mark.
	script := "#!/bin/sh\nprintf '%s' '{\"error\":{\"stage\":\"mount\",\"msg\":\"planted: mount /proc refused\"}}' >&3\n" +
		"read -r pid rest </proc/self/stat\nprintf '%s' \"$pid\" >" + mark + ".new && mv " + mark + ".new " + mark + "\n"
	if err := os.WriteFile(filepath.Join(dir, "init"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	initProg, err := os.Open(filepath.Join(dir, "init"))
	if err != nil {
		t.Fatal(err)
	}
	defer initProg.Close()
	light := copyOfSelf(t, "worker-light", 0o755)
	ctx := context.Background()
	sup, err := New(ctx, Options{Programs: func() Programs {
		return Programs{
			Init:   initProg,
			Worker: func() (*os.File, error) { return light, nil },
			Light: func() (*os.File, error) {
				// Held back until the stand-in has reported and exited (a
				// zombie has no command line).
				for {
					if pid, err := os.ReadFile(mark); err == nil {
						if cmd, err := os.ReadFile("/proc/" + string(pid) + "/cmdline"); err != nil || len(cmd) == 0 {
							return light, nil
						}
					}
					time.Sleep(time.Millisecond)
				}
			},
			NeedsFull: func(jail.Invocation) bool { return false },
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer sup.Close()
	_, spec := workspaceSpec(t, sup)
	_, err = sup.Run(ctx, spec, jail.Invocation{Argv: []string{"/bin/true"}}, IO{})
	var se *jail.StageError
	if !errors.As(err, &se) || se.Stage != jail.StageMount || !strings.Contains(se.Msg, "planted") {
		t.Fatalf("Run = %v, want init's own report (stage mount, planted)", err)
	}
}

// initsOf lists the children of pid that run a jail init.
func initsOf(t *testing.T, pid int) []string {
	t.Helper()
	var out []string
	for _, p := range processesWith(t, "__brig_jail_init") {
		b, err := os.ReadFile(filepath.Join("/proc", p, "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...: the comm may hold spaces, so read
		// after its closing parenthesis.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestCarriedProgramsAtFixedDescriptors: with carried programs, init is
// executed through its descriptor handed over as fd 5 (its arguments say
// so), the worker's program comes in init's first message, and neither
// reaches the command. Many descriptors are open first, so that everything the fork
// hands over is numbered high: the fork may move its own error pipe onto
// the number above the highest of them, which is where a program named by
// its number in the supervisor's table used to sit (EACCES).
func TestCarriedProgramsAtFixedDescriptors(t *testing.T) {
	initProg, worker := copyOfSelf(t, "init", 0o755), copyOfSelf(t, "worker", 0o755)
	for range 150 {
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
	}
	ctx := context.Background()
	sup, err := New(ctx, Options{Programs: carried(initProg, worker)})
	if err != nil {
		t.Fatal(err)
	}
	defer sup.Close()
	_, spec := workspaceSpec(t, sup)
	// The command's parent is init (the worker starts it as init's child);
	// a program executed through /proc/self/fd/5 is named "5".
	script := `tr '\0' ' ' </proc/$PPID/cmdline; echo; cat /proc/$PPID/comm; ls /proc/self/fd | tr '\n' ' '`
	for i := range 5 {
		res, err := sup.Run(ctx, spec, jail.Invocation{Argv: []string{"/bin/sh", "-c", script}}, IO{})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("call %d: %v %+v", i, err, res)
		}
		lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
		if len(lines) != 3 || !strings.Contains(lines[0], "__brig_jail_init __brig_carried") || lines[1] != strconv.Itoa(jail.InitExeFD) {
			t.Fatalf("call %d: init was not started through the carried program: %q", i, res.Stdout)
		}
		// ls's own directory descriptor (3) besides stdio, nothing else.
		if fds := strings.Fields(lines[2]); len(fds) > 4 {
			t.Errorf("call %d: the command holds descriptors %v", i, fds)
		}
	}
}

// TestBeforeToolRunsBeforeTheTool: IO.BeforeTool runs before the tool
// starts (it sees nothing the tool writes, and the tool sees what it
// wrote); when it fails, the tool never runs and Run returns its error.
func TestBeforeToolRunsBeforeTheTool(t *testing.T) {
	ctx := context.Background()
	sup, ws, spec, _ := pooledPlan(t, 1)
	sup.Warm()
	script := `test -e before && echo ran > ran.txt`
	ran := filepath.Join(ws, "ran.txt")
	sawTool := false
	before := func() error {
		if _, err := os.Stat(ran); err == nil {
			sawTool = true
		}
		return os.WriteFile(filepath.Join(ws, "before"), nil, 0o644)
	}
	res, err := sup.Run(ctx, spec, jail.Invocation{Argv: []string{"/bin/sh", "-c", script}}, IO{BeforeTool: before})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("the call: %v %+v", err, res)
	}
	if sawTool {
		t.Error("BeforeTool ran after the tool had written")
	}
	if _, err := os.Stat(ran); err != nil {
		t.Fatalf("the tool did not run after BeforeTool: %v", err)
	}

	// A failing BeforeTool: the same call never runs.
	os.Remove(ran)
	refused := errors.New("no snapshot")
	_, err = sup.Run(ctx, spec, jail.Invocation{Argv: []string{"/bin/sh", "-c", script}}, IO{BeforeTool: func() error { return refused }})
	if !errors.Is(err, refused) {
		t.Fatalf("Run returned %v, want BeforeTool's error", err)
	}
	if _, err := os.Stat(ran); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the tool ran although BeforeTool failed (%v)", err)
	}
}

// TestRefillStartsOneAtATime: while a start is in flight, another refill
// starts nothing beside it; once none is, a refill fills the pool, each
// child ready for its call before the next one starts.
func TestRefillStartsOneAtATime(t *testing.T) {
	sup, _, _, p := pooledPlan(t, 2)
	state := func() (warm, starting int) {
		sup.mu.Lock()
		defer sup.mu.Unlock()
		return len(sup.warm[p.flags]), sup.starting[p.flags]
	}
	sup.mu.Lock()
	sup.starting[p.flags]++ // a start in flight, as another refill counts it
	sup.mu.Unlock()
	sup.refill(p.flags)
	if warm, starting := state(); warm != 0 || starting != 1 {
		t.Fatalf("beside a start in flight: %d waiting and %d starting, want 0 and 1", warm, starting)
	}
	sup.mu.Lock()
	sup.starting[p.flags]--
	sup.mu.Unlock()
	sup.refill(p.flags) // returns once the pool is full
	if warm, starting := state(); warm != 2 || starting != 0 {
		t.Fatalf("with none in flight: %d waiting and %d starting, want 2 and 0", warm, starting)
	}
	// What it added had finished starting: the base seccomp filter is
	// loaded, the last step, in each init's worker. Without the wait, the
	// last child would still be starting. A command's child (no worker)
	// keeps the filter for each call's command, which loads it first:
	// none of init's threads carries one (each call's thread builds its
	// view with init's privileges).
	sup.mu.Lock()
	pool := slices.Clone(sup.warm[p.flags])
	ready := readiness(pool)
	sup.mu.Unlock()
	if slices.Contains(ready, false) {
		t.Fatalf("after a refill the pool's children are ready: %v, want all (it did not wait for each to say {prepared})", ready)
	}
	for _, c := range pool {
		children := childrenOf(t, c.proc.Pid)
		var threads []string
		if p.flags&directStart != 0 {
			if len(children) != 0 {
				t.Fatalf("init %d of a command's child has children %v, want none", c.proc.Pid, children)
			}
			threads, _ = filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", c.proc.Pid))
		} else {
			if len(children) != 1 {
				t.Fatalf("init %d has children %v, want its worker alone", c.proc.Pid, children)
			}
			threads = []string{fmt.Sprintf("/proc/%d/status", children[0])}
		}
		filtered := 0
		for _, f := range threads {
			status, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(status), "\nSeccomp:\t2\n") {
				filtered++
			}
		}
		want := 1
		if p.flags&directStart != 0 {
			want = 0
		}
		if filtered != want {
			t.Errorf("child %d in the pool: %d of %v carry the base filter, want %d", c.proc.Pid, filtered, threads, want)
		}
	}
}

// TestAcquireTakesAReadyChildFirst: a child that joined the pool while it
// was still starting is taken only when no ready one waits — a call that
// took it would wait out its start — and then it still serves.
func TestAcquireTakesAReadyChildFirst(t *testing.T) {
	sup, _, spec, p := pooledPlan(t, 2)
	ctx := context.Background()
	sup.refill(p.flags) // returns once the pool is full, both children ready
	sup.mu.Lock()
	ready := slices.Clone(sup.warm[p.flags])
	sup.mu.Unlock()
	if len(ready) != 2 || !ready[0].ready || !ready[1].ready {
		t.Fatalf("after a refill the pool holds %d children (ready: %v), want 2 ready", len(ready), readiness(ready))
	}
	// The newest child still starting, as a refill leaves it in the pool
	// until its worker is ready.
	starting, err := sup.startChildStdin(p.flags, jail.DefaultLimits(), nil, p.base, p.notify, false)
	if err != nil {
		t.Fatal(err)
	}
	sup.mu.Lock()
	sup.warm[p.flags] = append(sup.warm[p.flags], starting)
	sup.mu.Unlock()

	take := func() *child {
		t.Helper()
		c, _, err := sup.acquire(ctx, p, spec.Limits, true, false) // a burst's: no refill beside
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.discard)
		return c
	}
	for i, want := range []*child{ready[1], ready[0]} {
		if got := take(); got != want {
			t.Fatalf("take %d got init %d, want %d (pool order: ready, ready, starting)", i+1, got.proc.Pid, want.proc.Pid)
		}
	}
	// The child left, never seen ready by a refill, serves the next call.
	var out bytes.Buffer
	res, err := sup.Run(Burst(ctx), spec, jail.Invocation{Argv: []string{"/bin/sh", "-c", "echo served"}}, IO{Stdout: &out})
	if err != nil || res.ExitCode != 0 || out.String() != "served\n" {
		t.Fatalf("the call on the starting child: %v, %+v, output %q", err, res, out.String())
	}
	sup.mu.Lock()
	left := slices.Contains(sup.warm[p.flags], starting)
	served := starting.served
	sup.mu.Unlock()
	// A child that serves calls in turn is back in the pool, one call
	// served; another is gone with its call.
	if starting.serves && served != 1 || !starting.serves && left {
		t.Fatalf("the call did not take the child left in the pool (back in it: %v, calls served: %d)", left, served)
	}
}

// readiness lists the ready flags of cs, for messages.
func readiness(cs []*child) []bool {
	r := make([]bool, len(cs))
	for i, c := range cs {
		r[i] = c.ready
	}
	return r
}

// childrenOf lists the children of every thread of pid.
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	var kids []int
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range strings.Fields(string(b)) {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatal(err)
			}
			kids = append(kids, n)
		}
	}
	return kids
}

// TestCommandsRunWithoutAWorker: where calls get their namespaces, a
// command is started by its init, with no worker (jail/direct.go), and
// starts as the worker would have started it: no capability of any kind,
// no_new_privs, the base and the call's seccomp filters, the call's
// limits, its directory, and (for root) the call's cgroups — while init's
// own thread, which built the view, holds its capabilities and no filter
// (the filter sits on the launcher's thread alone). A Go tool still runs
// in a worker (TestLightWorkerServesAllButFullCalls).
func TestCommandsRunWithoutAWorker(t *testing.T) {
	ctx := context.Background()
	sup := servingSupervisor(t)
	ws, spec := workspaceSpec(t, sup)
	spec.Limits.FileSize = 12345 * 1024
	script := `tr '\0' ' ' < /proc/1/cmdline; echo; grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp_filters):' /proc/self/status; ` +
		`grep -E '^(CapEff|Seccomp):' /proc/1/status | sed 's/^/init /'; grep -E '^Max (file size|core file size)' /proc/self/limits | tr -s ' '; pwd; grep -E ':(pids|memory):' /proc/self/cgroup || true`
	// The second call is served by the same init, from a thread made
	// before the call came (jail/direct.go): it starts the same way.
	for call := 1; call <= 2; call++ {
		res, err := sup.Run(ctx, spec, jail.Invocation{Argv: []string{"/bin/sh", "-c", script}}, IO{})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("call %d: %v %+v (stderr %q)", call, err, res, res.Stderr)
		}
		out := string(res.Stdout)
		for _, want := range []string{
			"__brig_direct", // init started it itself
			"CapInh:\t0000000000000000", "CapPrm:\t0000000000000000", "CapEff:\t0000000000000000",
			"CapBnd:\t0000000000000000", "CapAmb:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp_filters:\t2",
			"init Seccomp:\t0", // init's main thread: no filter
			"Max file size 12641280 12641280 bytes", "Max core file size 0 0 bytes", "\n" + ws + "\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("call %d: missing %q in what the command saw:\n%s", call, want, out)
			}
		}
		if strings.Contains(out, "init CapEff:\t0000000000000000") {
			t.Errorf("call %d: init's own thread has lost its capabilities, which it needs for the view:\n%s", call, out)
		}
		if os.Geteuid() == 0 && (!strings.Contains(out, ":pids:/brig/call-") || !strings.Contains(out, ":memory:/brig/call-")) {
			t.Errorf("call %d: the command is not in the call's pids and memory cgroups:\n%s", call, out)
		}
	}
}

// servingSupervisor is a prewarming supervisor whose commands are
// started by an init that serves calls in turn (jail/direct.go); the test
// is skipped where there is none.
func servingSupervisor(t *testing.T) *Supervisor {
	t.Helper()
	sup, err := New(context.Background(), Options{Prewarm: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sup.Close)
	if !sup.Namespaces() || !sup.directOK {
		t.Skip("calls here get no namespaces, or root's cgroup v2 asks for a worker: no init starts commands itself")
	}
	return sup
}

// TestCommandsGetTheUsersTimerSlack: init runs with
// jail.InitTimerSlack (its runtime's monitor wakes less often), and the
// command it starts, itself or through a worker, gets this process's
// (the user's) back.
func TestCommandsGetTheUsersTimerSlack(t *testing.T) {
	user := jail.TimerSlack()
	if user == 0 || user == jail.InitTimerSlack {
		t.Skipf("this process's timer slack (%d ns) cannot tell the user's from init's", user)
	}
	for _, direct := range []bool{true, false} {
		t.Run(map[bool]string{true: "direct", false: "worker"}[direct], func(t *testing.T) {
			ctx := context.Background()
			sup, err := New(ctx, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer sup.Close()
			if direct && (!sup.Namespaces() || !sup.directOK) {
				t.Skip("every call here has a worker")
			}
			sup.directOK = direct
			_, spec := workspaceSpec(t, sup)
			res, err := sup.Run(ctx, spec, jail.Invocation{Argv: []string{"/bin/cat", "/proc/self/timerslack_ns"}}, IO{})
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("the command: %v %+v (stderr %q)", err, res, res.Stderr)
			}
			if got := strings.TrimSpace(string(res.Stdout)); got != strconv.FormatUint(user, 10) {
				t.Errorf("the command's timer slack is %s ns, want the user's %d", got, user)
			}
			if os.Geteuid() != 0 {
				return // another process's slack is readable with CAP_SYS_NICE only
			}
			// Init's own, read while a call keeps it running.
			callCtx, cancel := context.WithCancel(ctx)
			ended := make(chan struct{})
			go func() {
				defer close(ended)
				_, _ = sup.Run(callCtx, spec, jail.Invocation{Argv: []string{"/bin/sleep", "60"}}, IO{})
			}()
			defer func() { cancel(); <-ended }()
			// The init serving that call: the parent of its sleep (another
			// init of this test, the first call's, may be on its way out).
			pid := ""
			for pid == "" {
				select {
				case <-ended:
					t.Fatal("the call ended before its init was found")
				case <-time.After(time.Millisecond):
				}
				pid = parentWith(t, "/bin/sleep\x0060\x00", "__brig_jail_init")
			}
			b, err := os.ReadFile("/proc/" + pid + "/timerslack_ns")
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(string(b)); got != strconv.Itoa(jail.InitTimerSlack) {
				t.Errorf("init %s's timer slack is %s ns, want %d", pid, got, jail.InitTimerSlack)
			}
		})
	}
}

// parentWith is the parent of a process whose command line contains
// token, when that parent is a child of this process whose command line
// contains parentToken ("" when there is none).
func parentWith(t *testing.T, token, parentToken string) string {
	t.Helper()
	for _, pid := range processesWith(t, token) {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		f := strings.Fields(string(stat))
		if err != nil || len(f) < 4 {
			continue
		}
		if !slices.Contains(processesWith(t, parentToken), f[3]) {
			continue
		}
		pstat, err := os.ReadFile("/proc/" + f[3] + "/stat")
		if pf := strings.Fields(string(pstat)); err == nil && len(pf) > 3 && pf[3] == strconv.Itoa(os.Getpid()) {
			return f[3]
		}
	}
	return ""
}

// TestWarmChildAnswersTheProbe: with Prestart (brig sandbox) or
// WarmAnswersProbe (brig -p), Warm's first start of a child in fresh
// namespaces answers the start-up probe, and no probe runs (the log says
// which answered); a start that fails gives its turn back and the probe
// proper answers, after which the child is tried again; and Namespaces
// before Warm runs the probe, so nothing waits for a Warm that never
// comes.
func TestWarmChildAnswersTheProbe(t *testing.T) {
	for name, opts := range map[string]Options{
		"Prestart":         {Prestart: true},
		"WarmAnswersProbe": {Prewarm: true, WarmAnswersProbe: true},
	} {
		t.Run(name, func(t *testing.T) { testWarmChildAnswersTheProbe(t, opts) })
	}
}

func testWarmChildAnswersTheProbe(t *testing.T, opts Options) {
	ctx := context.Background()
	var logs lockedBuffer
	debug := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	said := func() string { logs.mu.Lock(); defer logs.mu.Unlock(); return logs.b.String() }
	forget := func() { logs.mu.Lock(); logs.b.Reset(); logs.mu.Unlock() }
	namespaces := jail.DetectFeatures(ctx).Namespaces()
	with := func(o Options) Options {
		o.Prestart, o.Prewarm, o.WarmAnswersProbe, o.Logger = opts.Prestart, opts.Prewarm, opts.WarmAnswersProbe, debug
		return o
	}

	// Namespaces before Warm: the probe answers.
	sup, err := New(ctx, with(Options{}))
	if err != nil {
		t.Fatal(err)
	}
	if got := sup.Namespaces(); got != namespaces {
		t.Fatalf("Namespaces before Warm: %v, the kernel's features say %v", got, namespaces)
	}
	if strings.Contains(said(), "the jail child") {
		t.Fatalf("no child was started, yet one answered:\n%s", said())
	}
	sup.Close()

	// No such program (or no user namespaces): the start fails, the
	// probe answers, and the child is tried again with the answer.
	forget()
	sup, err = New(ctx, with(Options{Executable: "/nonexistent/brig-jail"}))
	if err != nil {
		t.Fatal(err)
	}
	sup.Warm()
	if got := sup.Namespaces(); got != namespaces {
		t.Fatalf("after a failed start the probe said %v, the kernel's features say %v", got, namespaces)
	}
	for deadline := time.Now().Add(time.Minute); strings.Count(said(), "prewarm a jail child") < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the child was not tried again after its first start failed:\n%s", said())
		}
	}
	if !strings.Contains(said(), "did not start in fresh namespaces; the probe decides") {
		t.Errorf("the failed start was not followed by the probe:\n%s", said())
	}
	sup.Close()

	// Control: where namespaces can be made, the child's start answers.
	if !namespaces {
		t.Skip("no user namespaces here: a child cannot start in them")
	}
	forget()
	sup, err = New(ctx, with(Options{}))
	if err != nil {
		t.Fatal(err)
	}
	defer sup.Close()
	sup.Warm()
	if !sup.Namespaces() {
		t.Fatalf("the child's start said no namespaces:\n%s", said())
	}
	waitPool(t, sup, 1)
	if log := said(); !strings.Contains(log, "started in fresh namespaces: calls get them") || strings.Contains(log, "probe decides") {
		t.Fatalf("the child's start did not answer the probe:\n%s", log)
	}
}

// TestServingPoolStartsWithOne: with the pool's size left to the
// supervisor, the commands' pool of inits that serve calls in turn holds
// one, which comes back after each call and is not replaced; a call that
// finds none ready right after another ended (calls side by side, an
// init's last call) grows it to the pool size.
func TestServingPoolStartsWithOne(t *testing.T) {
	ctx := context.Background()
	sup, _, spec, p, first := warmServing(t, 0, 1) // one waiting, none starting
	// Back to back, one init serves every call: it comes back, and
	// nothing is started beside it (a replacement started anyway, late,
	// retired it now and then).
	for range 10 {
		if res, err := sup.Run(ctx, spec, jail.Invocation{Argv: []string{"true"}}, IO{}); err != nil || res.ExitCode != 0 {
			t.Fatalf("call: %v %+v", err, res)
		}
	}
	if now := waitPool(t, sup, 1); now[0] != first[0] {
		t.Fatalf("ten calls back to back: the waiting init is %d, not %d which served them", now[0], first[0])
	}
	// The one init is held by a call when another comes.
	held, _, err := sup.acquire(ctx, p, spec.Limits, false, false)
	if err != nil {
		t.Fatal(err)
	}
	sup.mu.Lock()
	sup.lastEnd[p.flags] = time.Now() // a call ended just now
	sup.mu.Unlock()
	other, _, err := sup.acquire(ctx, p, spec.Limits, false, false)
	if err != nil {
		t.Fatal(err)
	}
	other.discard()
	// The pool grows to two: one started now, and the held one, which
	// counts as in the pool while out on its call, once it is back.
	started := waitPool(t, sup, 1)
	if started[0] == held.proc.Pid {
		t.Fatalf("the pool holds the init a call still holds (%d)", held.proc.Pid)
	}
	sup.giveBack(p.flags, held)
	if now := waitPool(t, sup, 2); !slices.Contains(now, held.proc.Pid) || !slices.Contains(now, started[0]) {
		t.Fatalf("the pool holds %v, want the new init %d and the one given back %d", now, started[0], held.proc.Pid)
	}
}

// TestToolsPoolFillsWhileTheModelThinks: a request the model is slow to
// answer starts the Go tools' pool (the cores are idle meanwhile), so
// that a session's first Go tool call finds a child waiting; an answer
// that comes at once starts nothing (an instant model's calls would
// share the cores with the start).
func TestToolsPoolFillsWhileTheModelThinks(t *testing.T) {
	sup, _, _, p, _ := warmServing(t, 2, 2)
	tools := p.flags &^ directStart
	toolChildren := func() int {
		sup.mu.Lock()
		defer sup.mu.Unlock()
		return len(sup.warm[tools]) + sup.starting[tools]
	}
	// Answered at once: nothing starts, however late the check runs.
	sup.ModelAsked()
	sup.ModelAnswered()
	time.Sleep(4 * quietGap)
	if n := toolChildren(); n != 0 {
		t.Fatalf("a request answered at once started %d Go tools' children", n)
	}
	// Not answered: the pool fills while the model thinks.
	sup.ModelAsked()
	waitPoolOf(t, sup, tools, 1)
	sup.ModelAnswered()
	// Once: later slow answers start no more (the pool keeps its one).
	sup.ModelAsked()
	time.Sleep(4 * quietGap)
	if n := toolChildren(); n != 1 {
		t.Fatalf("a second slow answer left %d Go tools' children, want the one", n)
	}
}

// TestModelAskedTimesTheNextCall: the agent's request to the model is
// what a call's pace is measured from, not Warm (brig's own start-up
// before it): a call right after it comes back to back. While a call
// runs, a request (a subagent's) changes nothing.
func TestModelAskedTimesTheNextCall(t *testing.T) {
	var sup Supervisor
	sup.quietSince = time.Now().Add(-2 * quietGap) // Warm, long before the first request
	if !sup.atModelsPace() {
		t.Fatal("control: a call long after Warm does not come at a model's pace")
	}
	asked := time.Now()
	sup.ModelAsked()
	if sup.quietSince.Before(asked) {
		t.Fatalf("after ModelAsked the pace is still measured from %v, before the request (%v)", sup.quietSince, asked)
	}
	sup.quietSince = time.Now().Add(-2 * quietGap)
	sup.running = 1
	was := sup.quietSince
	sup.ModelAsked()
	if !sup.quietSince.Equal(was) {
		t.Fatalf("a request while a call runs moved the pace's mark from %v to %v", was, sup.quietSince)
	}
}

// TestModelAnsweredJudgesThePace: once the agent says the model's answer
// is in, a call's pace is how long that answer took, not how long ago the
// request left: the agent's own work between the answer and the call (a
// first snapshot, a first policy check) is not the model's. A slow answer
// is a model's pace however soon its call follows; a quick one is not,
// however late its call starts. While a call runs nothing changes, and a
// new request forgets the last answer.
func TestModelAnsweredJudgesThePace(t *testing.T) {
	var sup Supervisor
	sup.ModelAsked()
	sup.askedAt = time.Now().Add(-2 * quietGap) // the model took twice the gap
	sup.ModelAnswered()
	if !sup.answered || sup.answerTook <= quietGap {
		t.Fatalf("a slow answer was recorded as answered=%v after %v", sup.answered, sup.answerTook)
	}
	if !sup.atModelsPace() {
		t.Fatal("a call right after a slow answer does not come at a model's pace")
	}

	sup.ModelAsked()
	sup.ModelAnswered() // answered at once
	sup.quietSince = time.Now().Add(-4 * quietGap)
	sup.askedAt = sup.quietSince // the request left long ago: the agent's work came after the answer
	if sup.atModelsPace() {
		t.Fatalf("a call after a quick answer (%v) comes at a model's pace because the request left long ago", sup.answerTook)
	}

	sup.running = 1
	was := sup.answerTook
	sup.askedAt = time.Now().Add(-4 * quietGap)
	sup.ModelAnswered() // a subagent's model, while a call runs
	if sup.answerTook != was {
		t.Fatalf("an answer while a call runs moved the recorded answer time from %v to %v", was, sup.answerTook)
	}
	if sup.atModelsPace() {
		t.Fatal("a call while another runs comes at a model's pace")
	}
	sup.running = 0

	sup.ModelAsked()
	if sup.answered {
		t.Fatal("a new request kept the last answer's time")
	}
	sup.quietSince = time.Now().Add(-2 * quietGap)
	if !sup.atModelsPace() {
		t.Fatal("control: with no answer reported, a call long after the request does not come at a model's pace")
	}
}

// TestAServingInitOutOnACallCountsAsInThePool: an init that serves calls
// in turn is out of the pool only for its call, and comes back after it.
// A refill meanwhile — the one that waited for it to get ready while a
// session's first call took it — starts nothing: a second init started
// there shared the cores with that first call. One that will not come
// back (its init died) is not counted, and the pool fills again.
func TestAServingInitOutOnACallCountsAsInThePool(t *testing.T) {
	ctx := context.Background()
	sup, _, spec, p, pids := warmServing(t, 0, 1)
	state := func() (warm, starting, away int) {
		sup.mu.Lock()
		defer sup.mu.Unlock()
		return len(sup.warm[p.flags]), sup.starting[p.flags], sup.away[p.flags]
	}
	c, later, err := sup.acquire(ctx, p, spec.Limits, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if c.proc.Pid != pids[0] || !later {
		t.Fatalf("took pid %d (later=%v), want the waiting init %d with its replacement left for later", c.proc.Pid, later, pids[0])
	}
	sup.refill(p.flags)
	if warm, starting, away := state(); warm+starting != 0 || away != 1 {
		t.Fatalf("with the pool's one init out on a call, a refill left %d waiting and %d starting (%d away); want none started, one away", warm, starting, away)
	}
	sup.giveBack(p.flags, c)
	if back := waitPoolOf(t, sup, p.flags, 1); back[0] != pids[0] {
		t.Fatalf("the pool holds %d after the call, want the same init %d back", back[0], pids[0])
	}
	if _, _, away := state(); away != 0 {
		t.Fatalf("%d inits counted away once the only one is back", away)
	}

	// Its init dies while it waits: the call takes a fresh one, and the
	// dead one is not counted as coming back.
	killWaiting(t, sup, p.flags, pids[0])
	c, _, err = sup.acquire(ctx, p, spec.Limits, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if c.proc.Pid == pids[0] {
		t.Fatal("the call took the dead init")
	}
	if _, _, away := state(); away != 0 {
		t.Fatalf("the dead init is still counted away (%d)", away)
	}
	c.discard()
	sup.refill(p.flags)
	if again := waitPoolOf(t, sup, p.flags, 1); again[0] == pids[0] || again[0] == c.proc.Pid {
		t.Fatalf("the pool holds %d, want a new init", again[0])
	}
}

// TestACallThatGetsNoChildAfterADeadOneFailsCleanly: the pool's serving
// init died while it waited, the call gave up waiting for another (its
// context ended while a start was under way), and the call's error comes
// back — its replacement's bookkeeping has no child to count back — with
// nothing counted away.
func TestACallThatGetsNoChildAfterADeadOneFailsCleanly(t *testing.T) {
	sup, _, spec, p, pids := warmServing(t, 0, 1)
	killWaiting(t, sup, p.flags, pids[0])
	// A start of another looks under way, so the call waits for it, and
	// its context is over.
	sup.mu.Lock()
	sup.starting[p.flags]++
	sup.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := sup.Run(ctx, spec, jail.Invocation{Argv: []string{"true"}}, IO{})
	sup.mu.Lock()
	sup.starting[p.flags]--
	away := sup.away[p.flags]
	sup.mu.Unlock()
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("the call without a child: %v, want the context's end", err)
	}
	if away != 0 {
		t.Fatalf("%d inits counted away after a call that got none", away)
	}
	// Control: the pool fills again and a call runs.
	sup.refill(p.flags)
	waitPoolOf(t, sup, p.flags, 1)
	if res, err := sup.Run(context.Background(), spec, jail.Invocation{Argv: []string{"true"}}, IO{}); err != nil || res.ExitCode != 0 {
		t.Fatalf("a call after it: %v %+v", err, res)
	}
}

// killWaiting kills the init with pid, which waits alone in the pool for
// flags, and waits until the pool's child shows it has exited.
func killWaiting(t *testing.T, sup *Supervisor, flags uintptr, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		sup.mu.Lock()
		gone := sup.warm[flags][0].exited()
		sup.mu.Unlock()
		if gone {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed init has not exited after a minute")
		}
	}
}

package supervisor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"brig/jail"
)

// TestOOMKillsByVersion reads the OOM-kill counter from the file of the
// cgroup version its limits name: memory.oom_control beside a v1
// memory.limit_in_bytes, memory.events beside a v2 memory.max. Each
// directory also holds the other version's file with another count, so
// reading the wrong one fails.
func TestOOMKillsByVersion(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n")
	write("memory.events", "low 0\nhigh 0\nmax 9\noom 8\noom_kill 7\noom_group_kill 0\n")
	for _, tc := range []struct {
		limit string
		want  uint64
	}{
		{"memory.limit_in_bytes", 3},
		{"memory.max", 7},
		{"pids.max", 0}, // no memory bound: nothing to count
	} {
		c := &callCgroup{limits: map[string]uint64{filepath.Join(dir, tc.limit): 1 << 30}}
		if got := c.oomKills(); got != tc.want {
			t.Errorf("with %s: oomKills() = %d, want %d", tc.limit, got, tc.want)
		}
	}
	var none *callCgroup
	if got := none.oomKills(); got != 0 {
		t.Errorf("no cgroup: oomKills() = %d, want 0", got)
	}
}

// TestUserTasksCountsARealUID checks the count brig budgets a call's
// process limit on top of where the kernel counts per uid (no user
// namespace, not root): every task of the uid, threads included, by real
// uid — a process whose effective uid differs counts for its real one —
// and nothing of other uids. It uses uids no one else runs (root only).
func TestUserTasksCountsARealUID(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("starts processes under other uids (run as root)")
	}
	const uid, other = 54321, 54322
	if n := userTasks(uid); n != 0 {
		t.Fatalf("uid %d already runs %d tasks here: pick another", uid, n)
	}
	// start runs argv as uid (real, effective and saved).
	start := func(uid uint32, argv ...string) *exec.Cmd {
		t.Helper()
		c := exec.Command(argv[0], argv[1:]...)
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: 65534}}
		if err := c.Start(); err != nil {
			t.Skipf("cannot start %s as uid %d: %v", argv[0], uid, err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		return c
	}
	start(uid, "/bin/sleep", "600")
	start(uid, "/bin/sleep", "600")
	start(other, "/bin/sleep", "600") // another uid: not counted
	// Real uid 0, effective uid: counted for 0, not for uid (once it has
	// switched).
	su := start(0, "/usr/bin/python3", "-c", fmt.Sprintf("import os,time; os.setresuid(0,%d,%d); time.sleep(600)", uid, uid))
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", su.Process.Pid))
		if strings.Contains(string(b), fmt.Sprintf("\nUid:\t0\t%d\t", uid)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the process of real uid 0 never took effective uid %d:\n%s", uid, b)
		}
	}
	waitTasks(t, uid, 2, "two sleeps (one thread each), beside a task of another uid and one of real uid 0 running as this one")
	// Threads count: a process of four threads is four tasks.
	start(uid, "/usr/bin/python3", "-c", "import threading,time\nfor _ in range(3): threading.Thread(target=time.sleep,args=(600,),daemon=True).start()\ntime.sleep(600)")
	waitTasks(t, uid, 6, "two sleeps and a process of four threads")
}

// waitTasks waits until userTasks(uid) is want, failing with what it
// counted after a minute (the processes take a moment to start).
func waitTasks(t *testing.T, uid int, want uint64, what string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); userTasks(uid) != want; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: userTasks(%d) = %d, want %d", what, uid, userTasks(uid), want)
		}
	}
}

// TestOOMKillsBeforeACallReuseTheLastCount: the count read at the end
// of a call is the next call's start count, once, without reading the
// cgroup again (a read of a memory cgroup's counters costs about 45 µs);
// a call with no count kept, and a cgroup handed to a new child, read it.
func TestOOMKillsBeforeACallReuseTheLastCount(t *testing.T) {
	dir := t.TempDir()
	set := func(n int) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "memory.events"), fmt.Appendf(nil, "oom 0\noom_kill %d\n", n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := &callCgroup{dirs: []string{dir}, limits: map[string]uint64{filepath.Join(dir, "memory.max"): 1 << 30}}
	set(2)
	if got := c.oomKillsBefore(); got != 2 {
		t.Fatalf("nothing kept: before = %d, want the file's 2", got)
	}
	if got := c.oomKillsAfter(); got != 2 {
		t.Fatalf("after = %d, want 2", got)
	}
	set(5) // not read for the next call's start
	if got := c.oomKillsBefore(); got != 2 {
		t.Errorf("the next call's start count = %d, want the last call's end count 2", got)
	}
	if got := c.oomKillsBefore(); got != 5 {
		t.Errorf("a start count with nothing kept since = %d, want the file's 5", got)
	}
	c.oomKillsAfter()
	set(7)
	var pool cgroupPool
	pool.put(c)
	got, err := pool.get(0, 1<<30)
	if err != nil || got != c {
		t.Fatalf("pool.get = %p, %v; want the cgroup put back", got, err)
	}
	if n := c.oomKillsBefore(); n != 7 {
		t.Errorf("a cgroup handed to a new child: start count %d, want the file's 7", n)
	}
}

// TestOOMKillsCountedAcrossOneInitsCalls: a serving init's calls share
// its cgroup, and each call's OOM count starts from the count read at the
// end of the one before (oomKillsBefore). A call the OOM killer struck is
// reported at its memory limit; the quiet call after it is not (its start
// count is the struck call's end count, not an older one); a third that
// is struck again is reported again.
func TestOOMKillsCountedAcrossOneInitsCalls(t *testing.T) {
	ctx := context.Background()
	sup := servingSupervisor(t)
	_, spec := workspaceSpec(t, sup)
	spec.Limits.Memory, spec.Limits.TmpBytes = 64<<20, 512<<20
	if probe, err := newCallCgroup(spec.Limits.Processes, spec.Limits.Memory); err != nil || !probe.boundsMemory() {
		t.Skipf("no memory cgroup for a call here (%v): the kernel's OOM killer is not the limit", err)
	} else {
		probe.remove()
	}
	// 256 MiB written to the call's own /tmp, whose pages count against
	// the call's memory (a process's own allocation meets its address
	// space limit first).
	hog := jail.Invocation{Argv: []string{"/bin/sh", "-c", "head -c 268435456 /dev/zero > /tmp/fill; echo $?"}}
	quiet := jail.Invocation{Argv: []string{"/bin/sh", "-c", "echo quiet"}}
	for i, tc := range []struct {
		inv       jail.Invocation
		wantLimit string
	}{{hog, jail.LimitMemory}, {quiet, ""}, {hog, jail.LimitMemory}, {quiet, ""}} {
		res, err := sup.Run(ctx, spec, tc.inv, IO{})
		if err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
		if res.Limit != tc.wantLimit {
			t.Errorf("call %d: limit %q (%s), want %q; exit %d, stdout %q", i+1, res.Limit, res.LimitDetail, tc.wantLimit, res.ExitCode, res.Stdout)
		}
	}
}

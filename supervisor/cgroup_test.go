package supervisor

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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

package jail

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestKillTree starts a tree of sleepers below a shell — one in a session
// of its own, one a grandchild — and checks that KillTree leaves none of
// them running while the shell, which it must not touch, still runs.
func TestKillTree(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	root := exec.Command("/bin/sh", "-c", `
sleep 300 &
setsid sleep 300 &
sh -c 'sleep 300 & wait' &
touch "$1"
wait
exec sleep 300`, "sh", ready)
	if err := root.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = root.Process.Kill(); _ = root.Wait() })
	running := func() int {
		n := 0
		for _, pid := range descendants(root.Process.Pid, nil) {
			if _, state := procStat(pid); state != 'Z' && state != 'X' && state != 0 {
				n++
			}
		}
		return n
	}
	// Control: the tree is there.
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil && running() >= 4 {
			break
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("the shell's sleepers never showed below it (%d running)", running())
		}
	}
	if err := KillTree(context.Background(), root.Process.Pid); err != nil {
		t.Fatalf("KillTree: %v", err)
	}
	if n := running(); n != 0 {
		t.Errorf("%d processes below the root still run after KillTree", n)
	}
	if _, state := procStat(root.Process.Pid); state == 'Z' || state == 0 {
		t.Errorf("KillTree killed the root itself (state %q)", state)
	}
}

package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"brig/jail"
)

// TestRecoverSweepsOnlyForGoneProcesses: a record left by a process that
// is gone is swept (the .envrc its call created is taken out, to the
// quarantine) and removed; one of a process still running (another
// session's call under way) and one of another workspace are left.
func TestRecoverSweepsOnlyForGoneProcesses(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	ws, other, pending := filepath.Join(root, "ws"), filepath.Join(root, "other"), filepath.Join(root, "pending")
	for _, d := range []string{ws, other, pending} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	sup, err := New(context.Background(), Options{QuarantineDir: filepath.Join(root, "quarantine"), PendingDir: pending})
	if err != nil {
		t.Fatal(err)
	}
	defer sup.Close()
	write := func(name string, rec pendingSweep) {
		b, _ := json.Marshal(rec)
		if err := os.WriteFile(filepath.Join(pending, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	envrc := filepath.Join(ws, ".envrc")
	rec := func(pid int, start uint64, w string) pendingSweep {
		return pendingSweep{PID: pid, PIDStart: start, Workspace: w, Paths: []jail.PathRule{{Path: w, Access: jail.Write}},
			Protected: []string{filepath.Join(w, ".envrc")}, Before: map[string]pendingState{filepath.Join(w, ".envrc"): {Missing: true}}}
	}
	if err := os.WriteFile(envrc, []byte("echo pwned\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write("live.json", rec(os.Getpid(), procStart(os.Getpid()), ws))
	write("other.json", rec(1<<22+7, 1, other))
	if undone, err := sup.RecoverSweeps(ws); err != nil || len(undone) != 0 {
		t.Fatalf("a running process's record was swept: %v %v", undone, err)
	}
	if _, err := os.Lstat(envrc); err != nil {
		t.Fatal("the .envrc went while its call's process runs")
	}
	write("gone.json", rec(1<<22+7, 1, ws)) // a PID above pid_max: gone
	undone, err := sup.RecoverSweeps(ws)
	if err != nil || len(undone) != 1 || undone[0] != envrc {
		t.Fatalf("RecoverSweeps = %v, %v; want the .envrc", undone, err)
	}
	if _, err := os.Lstat(envrc); err == nil {
		t.Error("the .envrc is still there")
	}
	for name, want := range map[string]bool{"gone.json": false, "live.json": true, "other.json": true} {
		if _, err := os.Stat(filepath.Join(pending, name)); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", name, err == nil, want)
		}
	}
}

// BenchmarkNotePending is the record a call that may write leaves before
// its tool starts and removes after its sweep, with a hundred protected
// paths (the default list in a repository): its cost on a call's path.
func BenchmarkNotePending(b *testing.B) {
	root := b.TempDir()
	sup := &Supervisor{pendingDir: filepath.Join(root, "pending")}
	ws := filepath.Join(root, "ws")
	spec := jail.Spec{Workspace: ws, Paths: []jail.PathRule{{Path: ws, Access: jail.Write}}}
	before := map[string]protectedState{}
	for i := range 110 {
		p := filepath.Join(ws, fmt.Sprintf(".config-entry-%03d/settings.json", i))
		spec.Protected = append(spec.Protected, p)
		before[p] = protectedState{missing: true}
	}
	for b.Loop() {
		donePending(sup.notePending(spec, before, callClock()))
	}
}

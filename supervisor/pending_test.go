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

// pendingRig makes dirs under a fresh root and a supervisor whose
// pending records are in root/pending and quarantine in root/quarantine.
func pendingRig(t *testing.T, dirs ...string) (string, *Supervisor) {
	t.Helper()
	root, _ := filepath.EvalSymlinks(t.TempDir())
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	sup, err := New(context.Background(), Options{QuarantineDir: filepath.Join(root, "quarantine"), PendingDir: filepath.Join(root, "pending")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sup.Close)
	return root, sup
}

// TestRecoverSweepsOnlyForGoneProcesses: a record left by a process that
// is gone is swept (the .envrc its call created is taken out, to the
// quarantine) and removed; one of a process still running (another
// session's call under way) and one of another workspace are left.
func TestRecoverSweepsOnlyForGoneProcesses(t *testing.T) {
	root, sup := pendingRig(t, "ws", "other", "pending")
	ws, other, pending := filepath.Join(root, "ws"), filepath.Join(root, "other"), filepath.Join(root, "pending")
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

// TestRecoverSweepTakesOutALinkIntoTheCache: the record of a call that a
// killed brig left unswept keeps the toolchain cache's root, so that the
// next session takes out a link the call made into it, as the sweep
// after the call would have (TestSweepTakesOutALinkIntoTheCache); the
// control, a link to elsewhere, stays.
func TestRecoverSweepTakesOutALinkIntoTheCache(t *testing.T) {
	root, sup := pendingRig(t, "ws", "pending", "cache/ws-1/d")
	ws, pending, cache := filepath.Join(root, "ws"), filepath.Join(root, "pending"), filepath.Join(root, "cache")
	start := callClock()
	for name, target := range map[string]string{"sub": filepath.Join(cache, "ws-1", "d"), "elsewhere": "/usr/share"} {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	spec := jail.Spec{Workspace: ws, Paths: []jail.PathRule{{Path: ws, Access: jail.Write}}, Cache: &jail.Cache{Root: cache, Name: "ws-1"}}
	sup.notePending(spec, map[string]protectedState{}, start)
	b, _ := os.ReadFile(filepath.Join(pending, fmt.Sprintf("%d-%d.json", os.Getpid(), pendingSeq.Load())))
	var rec pendingSweep
	if err := json.Unmarshal(b, &rec); err != nil || rec.CacheRoot != cache {
		t.Fatalf("the record: %s (%v)", b, err)
	}
	rec.PID, rec.PIDStart = 1<<22+7, 1 // as if its brig were gone
	b, _ = json.Marshal(rec)
	if err := os.WriteFile(filepath.Join(pending, "gone.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sup.RecoverSweeps(ws); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(ws, "sub")); err == nil {
		t.Error("the link into the cache stayed")
	}
	if _, err := os.Lstat(filepath.Join(ws, "elsewhere")); err != nil {
		t.Errorf("control: the link to elsewhere was taken out: %v", err)
	}
}

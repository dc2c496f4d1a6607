package checkpoint

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"brig/internal/checkpoint/treetest"
)

// envCrashChild names the store and the workspace of the re-executed
// process TestCrashBeforeTheSnapshotIsSynced kills.
const envCrashChild = "BRIG_CHECKPOINT_CRASH_CHILD"

// TestCrashBeforeTheSnapshotIsSynced: Before returns once its snapshot is
// written and leaves the journal's sync running beside the call. A process
// killed (SIGKILL) in that window — the call has deleted and changed files,
// the sync has not returned — leaves a store a new process undoes the call
// from.
func TestCrashBeforeTheSnapshotIsSynced(t *testing.T) {
	if os.Getenv(envCrashChild) != "" {
		t.Skip("this process is the crash test's child")
	}
	if os.Getenv(envUnpriv) != "" {
		t.Skip("nothing here depends on privileges; the root pass runs it")
	}
	r := newRig(t)
	r.seed()
	before := treetest.Read(t, r.ws)
	r.store.Close() // the child is the brig process now

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envCrashChild+"="+r.dir+"\n"+r.ws)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := bufio.NewScanner(out)
	var said []string
	for lines.Scan() && !strings.HasPrefix(lines.Text(), "after waits") {
		said = append(said, lines.Text())
	}
	if strings.Join(said, "|") != "before returned|sync under way" {
		t.Fatalf("the child said %q, not that Before returned with its sync under way", said)
	}
	// The call runs (what the child would have let it do), and brig dies
	// with the sync still under way.
	r.sh(`rm -rf src && echo half > README.md`)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	r.open()
	calls, err := r.store.Calls("s1")
	if err != nil || len(calls) != 1 || calls[0].ID != "crashed" || calls[0].Changes != nil {
		t.Fatalf("the killed process's call: %+v %v", calls, err)
	}
	r.mustUndo(UndoOptions{To: "crashed"})
	if d := treetest.Diff(before, treetest.Read(t, r.ws)); d != "" {
		t.Fatalf("not restored:\n%s", d)
	}
}

// TestCrashChild is the process TestCrashBeforeTheSnapshotIsSynced kills:
// its journal sync never returns.
func TestCrashChild(t *testing.T) {
	dir, ws, ok := strings.Cut(os.Getenv(envCrashChild), "\n")
	if !ok {
		t.Skip("run by TestCrashBeforeTheSnapshotIsSynced")
	}
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	syncing := make(chan struct{})
	s.datasync = func(*os.File) error {
		close(syncing)
		time.Sleep(time.Hour) // killed here
		return nil
	}
	p, err := s.Before(context.Background(), "s1", "crashed", "bash", []string{ws})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("before returned")
	<-syncing
	fmt.Println("sync under way")
	go p.After(context.Background())
	fmt.Println("after waits")
	time.Sleep(time.Hour)
}

// TestBeforeSyncFailureReported: a journal sync that fails after Before
// returned (a disk's I/O error) is reported by the call's After; the next
// call's snapshots sync again.
func TestBeforeSyncFailureReported(t *testing.T) {
	r := newRig(t)
	r.seed()
	r.store.datasync = func(*os.File) error { return unix.EIO }
	p, err := r.store.Before(context.Background(), "s1", "c1", "bash", []string{r.ws})
	if err != nil {
		t.Fatalf("Before waited for its sync: %v", err)
	}
	if _, err := p.After(context.Background()); !errors.Is(err, unix.EIO) || !strings.Contains(err.Error(), "before the call") {
		t.Fatalf("After of a call whose snapshot before was not synced: %v", err)
	}
	r.store.datasync = func(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
	if cs := r.call(`echo later > later.txt`); cs == nil || cs.Created != 1 {
		t.Fatalf("the next call's change set: %+v", cs)
	}
}

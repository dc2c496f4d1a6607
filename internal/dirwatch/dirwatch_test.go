package dirwatch

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// open opens dir (the caller closes it) and returns its key.
func open(t *testing.T, dir string) (int, Key) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	return fd, Key{Dev: st.Dev, Ino: st.Ino}
}

// TestWatcher: a change in a watched directory is reported against the
// drains before it and not after; each drain has a number of its own; an
// unwatched directory is reported as such; a removed one loses its watch.
func TestWatcher(t *testing.T) {
	w := New(Entries, 0)
	if w == nil {
		t.Skip("no inotify instance here")
	}
	defer w.Close()
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	fd, key := open(t, dir)
	defer unix.Close(fd)
	if !w.Add(fd, key) {
		t.Fatal("Add failed")
	}
	before := w.Drain()
	if watched, dirty := w.Since(key, before); !watched || dirty {
		t.Fatalf("right after Add: watched %v, dirty %v", watched, dirty)
	}
	sfd, subKey := open(t, sub)
	if watched, _ := w.Since(subKey, before); watched {
		t.Fatal("a directory never added is reported watched")
	}
	if again := w.Drain(); again <= before {
		t.Fatalf("a drain without events kept the number %d (was %d)", again, before)
	}
	if err := os.WriteFile(filepath.Join(dir, "new"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	after := w.Drain()
	if _, dirty := w.Since(key, before); !dirty {
		t.Fatal("a file made in the directory is not reported")
	}
	if _, dirty := w.Since(key, after); dirty {
		t.Fatal("a change is reported against the drain that read it")
	}
	if w.Lost(before) {
		t.Fatal("events reported lost")
	}
	// A removed directory's watch goes (IN_IGNORED), and says so (once
	// nothing holds the directory open).
	w.Add(sfd, subKey)
	unix.Close(sfd)
	s0 := w.Drain()
	if err := os.Remove(sub); err != nil {
		t.Fatal(err)
	}
	w.Drain()
	if watched, dirty := w.Since(subKey, s0); watched || !dirty {
		t.Fatalf("a removed directory: watched %v, dirty %v", watched, dirty)
	}
}

// TestWatcherOverflow: a lost event (the kernel's queue overflowed) makes
// every directory untrustworthy from that drain on.
func TestWatcherOverflow(t *testing.T) {
	w := &Watcher{wds: map[int32]Key{}, keys: map[Key]int32{}, dirty: map[Key]uint64{}, content: map[Key]map[string]uint64{}}
	w.seq = 7
	ev := make([]byte, unix.SizeofInotifyEvent)
	binary.NativeEndian.PutUint32(ev[0:], ^uint32(0)) // wd -1
	binary.NativeEndian.PutUint32(ev[4:], unix.IN_Q_OVERFLOW)
	w.record(ev, nil)
	if !w.Lost(6) || w.Lost(7) {
		t.Fatalf("an overflow read at drain 7: Lost(6) %v, Lost(7) %v", w.Lost(6), w.Lost(7))
	}
	var none *Watcher
	if watched, dirty := none.Since(Key{}, 0); watched || !dirty || !none.Lost(0) || none.Add(0, Key{}) {
		t.Fatal("a nil Watcher must report nothing watched and everything changed")
	}
}

func TestBudget(t *testing.T) {
	if b := Budget(8, 1024); b < 1024 {
		t.Fatalf("Budget(8, 1024) = %d, below its floor", b)
	}
	w := New(Entries, 1)
	if w == nil {
		t.Skip("no inotify instance here")
	}
	defer w.Close()
	a, b := t.TempDir(), t.TempDir()
	fa, ka := open(t, a)
	defer unix.Close(fa)
	fb, kb := open(t, b)
	defer unix.Close(fb)
	if !w.Add(fa, ka) || w.Add(fb, kb) || len(w.keys) != 1 {
		t.Fatalf("a budget of one watch: %d watches", len(w.keys))
	}
}

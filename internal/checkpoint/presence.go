package checkpoint

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Presence: which brig sessions have a workspace's store open. A session
// announces itself (Announce) with a file of its own in presenceDir,
// exclusively flocked for as long as the store is open. A call's change
// set says whether another session had the store open when the call began
// or ended (ChangeSet.Shared): whatever that session's calls wrote
// meanwhile is in this call's change set too — a snapshot cannot tell who
// wrote — and undoing the call would put it back. A file whose lock is
// free belongs to a process that is gone (a crash): it is removed when
// seen.

// presenceDir holds one file per session that has the store open.
const presenceDir = "open.d"

// presence is this process's own file in presenceDir, locked while open.
type presence struct {
	f    *os.File
	path string
}

// Announce marks the store as open for a session until Close, so that the
// calls of other sessions in the same workspace know (ChangeSet.Shared).
// A second call does nothing.
func (s *Store) Announce() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.here != nil {
		return nil
	}
	dir := filepath.Join(s.dir, presenceDir)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("checkpoint store: %w", err)
	}
	var id [6]byte
	if _, err := rand.Read(id[:]); err != nil {
		return fmt.Errorf("checkpoint store: %w", err)
	}
	name := strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(id[:])
	// Made and locked under a name the scan skips, then moved in: no
	// other process ever sees it unlocked (and takes it for a dead one's).
	tmp := filepath.Join(s.dir, ".open-"+name)
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("checkpoint store: %w", err)
	}
	final := filepath.Join(dir, name)
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("checkpoint store: announce this session: %w", err)
	}
	s.here = &presence{f: f, path: final}
	return nil
}

// othersOpen reports whether a session other than this process's has the
// store open (Announce), removing the files of those that are gone.
// Called with mu held.
func (s *Store) othersOpen() bool {
	dir := filepath.Join(s.dir, presenceDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	others := false
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") || (s.here != nil && p == s.here.path) {
			continue
		}
		f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		switch err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); {
		case errors.Is(err, unix.EWOULDBLOCK):
			others = true
		case err == nil:
			_ = os.Remove(p) // its session's process is gone
		}
		f.Close()
	}
	return others
}

// leave removes this process's presence file. Called with mu held.
func (s *Store) leave() {
	if s.here == nil {
		return
	}
	_ = os.Remove(s.here.path)
	s.here.f.Close()
	s.here = nil
}

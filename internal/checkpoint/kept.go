package checkpoint

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

	"brig/internal/fsutil"
)

// keptFile keeps, across sessions, what keepCovering decides on: the
// directories a conditional exclusion rule's name matched that a snapshot
// covered, and the markers calls made in them. Kept in memory only, a
// marker a call made in one session would exclude its directory in the
// next session's snapshots, and what a later call changed there would be
// out of undo's reach.
const keptFile = "kept.json"

// maxKeptFile bounds what loadKept reads.
const maxKeptFile = 4 << 20

type keptState struct {
	Covered []string              `json:"covered"`
	Markers map[string]keptMarker `json:"markers,omitempty"`
}

type keptMarker struct {
	Dev  uint64 `json:"dev"`
	Ino  uint64 `json:"ino"`
	Sec  int64  `json:"ctime_sec"`
	Nsec int64  `json:"ctime_nsec"`
}

// loadKept reads the kept state of earlier sessions (none: a first
// session, or a file that cannot be read, which is said).
func (s *Store) loadKept() {
	p := filepath.Join(s.dir, keptFile)
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	var st keptState
	if err == nil {
		defer f.Close()
		err = json.NewDecoder(&limited{f, maxKeptFile}).Decode(&st)
	}
	if err != nil {
		s.log.Warn("checkpoint: could not read which generated-looking directories undo covers; a call's marker made in an earlier session may exclude one", "path", p, "err", err)
		return
	}
	s.keptMu.Lock()
	defer s.keptMu.Unlock()
	s.covered, s.markers = map[string]bool{}, map[string]markerID{}
	for _, c := range st.Covered {
		s.covered[c] = true
	}
	for path, m := range st.Markers {
		s.markers[path] = markerID{dev: m.Dev, ino: m.Ino, ctime: unix.Timespec{Sec: m.Sec, Nsec: m.Nsec}}
	}
}

// saveKept writes the kept state when a snapshot changed it. Called with
// the store locked.
func (s *Store) saveKept() {
	s.keptMu.Lock()
	if !s.keptDirty {
		s.keptMu.Unlock()
		return
	}
	st := keptState{Markers: map[string]keptMarker{}}
	for c := range s.covered {
		st.Covered = append(st.Covered, c)
	}
	slices.Sort(st.Covered)
	for path, m := range s.markers {
		if s.covered[path] {
			st.Markers[path] = keptMarker{Dev: m.dev, Ino: m.ino, Sec: m.ctime.Sec, Nsec: m.ctime.Nsec}
		}
	}
	s.keptDirty = false
	s.keptMu.Unlock()
	data, err := json.Marshal(st)
	if err == nil {
		err = fsutil.WriteFileAtomic(filepath.Join(s.dir, keptFile), data, 0o600)
	}
	if err != nil {
		s.log.Warn("checkpoint: could not save which generated-looking directories undo covers", "err", err)
	}
}

// limited reads at most n bytes, then fails.
type limited struct {
	f *os.File
	n int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errors.New("larger than 4 MiB")
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.f.Read(p)
	l.n -= int64(n)
	return n, err
}

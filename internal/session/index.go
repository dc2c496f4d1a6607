package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"brig/internal/fsutil"
)

// indexVersion is the format of index.json; another version is rebuilt.
const indexVersion = 2 // 2: summaries carry the mode

// The index (sessions/index.json) caches each file's Summary with the file's
// identity (inode, size, modification time) and the offset up to which it
// was read. It is never trusted over the files: every listing stats each
// file; an entry whose identity matches is used as is, a file that grew (the
// normal case: records were appended) is read from the stored offset only,
// and anything else (a new file, a replaced one, a missing or unreadable
// index) is read in full. Appends never touch the index, so a save costs
// the same however many sessions there are.
type index struct {
	Version  int                    `json:"v"`
	Sessions map[string]*indexEntry `json:"sessions"`
}

type indexEntry struct {
	Summary
	Ino    uint64 `json:"ino"`
	Size   int64  `json:"size"`
	MTime  int64  `json:"mtime_ns"`
	Offset int64  `json:"offset"`          // end of the last complete record read
	Lines  int    `json:"lines"`           // lines up to Offset
	Err    string `json:"error,omitempty"` // the file is corrupt at this identity
}

// Filter selects sessions for List.
type Filter struct {
	// Workspace keeps the sessions of one workspace (its resolved absolute
	// path); empty keeps every workspace.
	Workspace string
}

// Problem is a session file that could not be listed.
type Problem struct {
	ID   string `json:"id"`
	Path string `json:"path"`
	Err  string `json:"error"`
}

func (p Problem) String() string { return p.Err }

// List returns the sessions that match f, the most recently updated first,
// and the files it had to skip (corrupt or unreadable), each by name.
func (s *Store) List(ctx context.Context, f Filter) ([]Summary, []Problem, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("list sessions: %w", err)
	}
	idx, dirty := s.readIndex()
	seen := make(map[string]bool, len(entries))
	var out []Summary
	var problems []Problem
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		id, ok := strings.CutSuffix(e.Name(), fileExt)
		if !ok || ValidateID(id) != nil || !e.Type().IsRegular() {
			continue
		}
		seen[id] = true
		ent, changed, err := s.refresh(id, idx.Sessions[id])
		if err != nil {
			problems = append(problems, Problem{ID: id, Path: s.Path(id), Err: err.Error()})
			continue
		}
		if changed {
			idx.Sessions[id] = ent
			dirty = true
		}
		if ent.Err != "" {
			problems = append(problems, Problem{ID: id, Path: s.Path(id), Err: ent.Err})
			continue
		}
		if f.Workspace == "" || ent.Workspace == f.Workspace {
			out = append(out, ent.Summary)
		}
	}
	for id := range idx.Sessions {
		if !seen[id] {
			delete(idx.Sessions, id)
			dirty = true
		}
	}
	if dirty {
		s.writeIndex(ctx, idx)
	}
	slices.SortFunc(out, func(a, b Summary) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return out, problems, nil
}

// Latest is the most recently updated session of workspace, for
// --continue. It is ErrNotFound when the workspace has none.
func (s *Store) Latest(ctx context.Context, workspace string) (Summary, error) {
	list, _, err := s.List(ctx, Filter{Workspace: workspace})
	if err != nil {
		return Summary{}, err
	}
	if len(list) == 0 {
		return Summary{}, noSessionError{workspace}
	}
	return list[0], nil
}

// noSessionError is Latest's ErrNotFound: it names the workspace, and
// says "no such session" only once ("no saved session for /ws: no such
// session" said it twice).
type noSessionError struct{ workspace string }

func (e noSessionError) Error() string { return "no saved session for " + e.workspace }

func (noSessionError) Is(target error) bool { return target == ErrNotFound }

// refresh brings an index entry up to date with session id's file. changed
// says whether the entry differs from old. An error is a file that cannot be
// opened at all; a corrupt one comes back as an entry with Err set.
func (s *Store) refresh(id string, old *indexEntry) (*indexEntry, bool, error) {
	f, err := os.OpenFile(s.Path(id), os.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, false, fmt.Errorf("session file %s: %w", s.Path(id), err)
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, false, fmt.Errorf("session file %s: %w", s.Path(id), err)
	}
	mtime := st.Mtim.Nano()
	if old != nil && old.Ino == st.Ino && old.Size == st.Size && old.MTime == mtime {
		return old, false, nil
	}
	ent := &indexEntry{Ino: st.Ino, Size: st.Size, MTime: mtime}
	start, line := int64(0), 0
	if old != nil && old.Err == "" && old.Ino == st.Ino && old.Offset > 0 && st.Size >= old.Offset {
		// Appended to since: read only the new records.
		ent.Summary, start, line = old.Summary, old.Offset, old.Lines
		if _, err := f.Seek(start, io.SeekStart); err != nil {
			return nil, false, fmt.Errorf("session file %s: %w", s.Path(id), err)
		}
	}
	sum := ent.Summary
	end, _, err := readRecords(f, start, line, func(rec Record, n int, _ int64) error {
		line = n
		if n == 1 && rec.Header != nil && rec.Header.ID != id {
			return fmt.Errorf("the header names session %q, not %q", rec.Header.ID, id)
		}
		return sum.apply(rec, n)
	})
	var ce *CorruptError
	switch {
	case errors.As(err, &ce):
		ce.Path = s.Path(id)
		ent.Err = ce.Error()
	case err != nil:
		return nil, false, fmt.Errorf("session file %s: %w", s.Path(id), err)
	case end == 0:
		ent.Err = (&CorruptError{Path: s.Path(id), Line: 1, Err: errors.New("no complete header record")}).Error()
	}
	ent.Summary, ent.Offset, ent.Lines = sum, end, line
	return ent, true, nil
}

// readIndex loads index.json; a missing, unreadable or foreign one starts
// empty (and dirty, so the rebuilt one is written).
func (s *Store) readIndex() (*index, bool) {
	fresh := &index{Version: indexVersion, Sessions: map[string]*indexEntry{}}
	b, err := os.ReadFile(filepath.Join(s.dir, indexName))
	if errors.Is(err, fs.ErrNotExist) {
		return fresh, true
	}
	var idx index
	if err == nil {
		err = json.Unmarshal(b, &idx)
	}
	if err == nil && idx.Version != indexVersion {
		err = fmt.Errorf("format %d, want %d", idx.Version, indexVersion)
	}
	if err != nil {
		s.log.Warn("session: rebuilding the session index from the files", "index", filepath.Join(s.dir, indexName), "reason", err)
		return fresh, true
	}
	if idx.Sessions == nil {
		idx.Sessions = map[string]*indexEntry{}
	}
	return &idx, false
}

// writeIndex saves the index. It is a cache: failing to save it costs the
// next listing time, not data, so a failure is only logged.
func (s *Store) writeIndex(ctx context.Context, idx *index) {
	path := filepath.Join(s.dir, indexName)
	b, err := json.Marshal(idx)
	if err == nil {
		err = fsutil.WithLock(ctx, path, func() error { return fsutil.WriteFileAtomic(path, b, 0o600) })
	}
	if err != nil {
		s.log.Warn("session: could not save the session index (listing still works, from the files)", "index", path, "err", err)
	}
}

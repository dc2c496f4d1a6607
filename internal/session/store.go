package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"brig/internal/fsutil"
)

// ErrNotFound is returned for a session id with no file.
var ErrNotFound = errors.New("no such session")

// ErrRemoved is returned by Append when the session's file was removed
// (brig sessions rm in another terminal) after it was opened.
var ErrRemoved = errors.New("the session was removed")

const (
	fileExt   = ".jsonl"
	tornExt   = ".torn" // torn tails cut off by a repair are kept here, never thrown away
	indexName = "index.json"
)

// Store is the sessions directory of one user.
type Store struct {
	dir string
	log *slog.Logger
	now func() time.Time
	// writeAt writes a batch of records; tests replace it to inject a
	// failing disk.
	writeAt func(f *os.File, b []byte, off int64) (int, error)
	// datasync makes a batch durable; tests replace it likewise.
	datasync func(f *os.File) error
	// syncDir makes a new session's name durable (fsutil.SyncDir); tests
	// replace it to see when that happens.
	syncDir func(dir string) error
}

// Option configures a Store.
type Option func(*Store)

// WithLogger sends the store's warnings (repairs, index rebuilds) to l.
func WithLogger(l *slog.Logger) Option { return func(s *Store) { s.log = l } }

// WithClock sets the clock that stamps records and names new sessions.
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// NewStore returns the store under stateDir (xdg.Resolve(env, home).State):
// sessions live in stateDir/sessions, which is created on first write.
func NewStore(stateDir string, opts ...Option) *Store {
	s := &Store{
		dir:      filepath.Join(stateDir, "sessions"),
		log:      slog.Default(),
		now:      time.Now,
		writeAt:  (*os.File).WriteAt,
		datasync: func(f *os.File) error { return unix.Fdatasync(int(f.Fd())) },
		syncDir:  fsutil.SyncDir,
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Dir is the directory that holds the session files.
func (s *Store) Dir() string { return s.dir }

// Path is the file of session id (which must be valid).
func (s *Store) Path(id string) string { return filepath.Join(s.dir, id+fileExt) }

// Session is an open session file that records are appended to. It is safe
// for use by several goroutines; other processes appending to the same
// session are serialised by a lock on the file.
type Session struct {
	store *Store
	id    string
	path  string
	mu    sync.Mutex
	f     *os.File
	// named is set while the file's header and name are written but not
	// yet synced (a new session before its first save): the first
	// append's sync, or Close, makes them durable. Guarded by mu.
	named bool
}

// ID is the session's id.
func (s *Session) ID() string { return s.id }

// Path is the session's file.
func (s *Session) Path() string { return s.path }

// Close releases the file, first making a new session's header and name
// durable if no append has. Appends after Close fail.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	var err error
	if s.named {
		err = s.syncNew()
	}
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	s.f = nil
	return err
}

// Create starts a new session with header h (ID, Created and Version are
// filled in) and returns it with its header durable on disk.
func (s *Store) Create(ctx context.Context, h Header) (*Session, error) {
	return s.create(ctx, h, true)
}

// CreateLater is Create that leaves the syncs to the first save: the header
// is written under the session's name (a kill -9 from here on leaves a
// session that loads), and the first append's sync, or Close, makes header
// and name durable against a power cut. brig -p creates its session just
// before its first request, whose message is saved and synced while the
// request leaves (AppendLater): the two syncs of a new file Create makes
// were the largest piece of its start (2.5–10 ms on a VM's disk). A power
// cut before that sync may leave the name with an empty file, which lists
// as corrupt; the interactive UI, which waits for the user first, uses
// Create.
func (s *Store) CreateLater(ctx context.Context, h Header) (*Session, error) {
	return s.create(ctx, h, false)
}

// create is Create, or CreateLater when durable is false.
func (s *Store) create(ctx context.Context, h Header, durable bool) (*Session, error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("sessions directory: %w", err)
	}
	h.Version = Version
	if h.Created.IsZero() {
		h.Created = s.now().UTC()
	}
	// The file is written under a temporary name and linked into place
	// with its header, so a listing never sees a session without one.
	tmp, err := os.CreateTemp(s.dir, ".new-*"+fileExt)
	if err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	defer os.Remove(tmp.Name())
	for range 8 {
		id, err := NewID(h.Created, nil)
		if err != nil {
			tmp.Close()
			return nil, err
		}
		h.ID = id
		path := s.Path(id)
		sess := &Session{store: s, id: id, path: path, f: tmp}
		if err := tmp.Truncate(0); err != nil {
			tmp.Close()
			return nil, fmt.Errorf("create session: %w", err)
		}
		if err := sess.writeHeader(ctx, h); err != nil {
			tmp.Close()
			return nil, err
		}
		if durable {
			if err := sess.sync(0); err != nil {
				tmp.Close()
				return nil, fmt.Errorf("create session: %w", err)
			}
		}
		if err := os.Link(tmp.Name(), path); errors.Is(err, fs.ErrExist) {
			continue
		} else if err != nil {
			tmp.Close()
			return nil, fmt.Errorf("create session: %w", err)
		}
		if durable {
			if err := s.syncDir(s.dir); err != nil {
				tmp.Close()
				return nil, fmt.Errorf("create session %s: %w", id, err)
			}
		}
		sess.named = !durable // CreateLater's first save syncs header and name
		return sess, nil
	}
	tmp.Close()
	return nil, errors.New("create session: no free id after 8 tries")
}

// Open opens session id for appending (to resume it) and returns its state.
// A corrupt file is an error (*CorruptError) and is not touched.
func (s *Store) Open(ctx context.Context, id string) (*Session, *State, error) {
	f, err := s.openFile(id, os.O_RDWR)
	if err != nil {
		return nil, nil, err
	}
	sess := &Session{store: s, id: id, path: s.Path(id), f: f}
	var st *State
	err = fsutil.WithFileLock(ctx, f, func() error {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		st, err = loadState(f, sess.path, id)
		return err
	})
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("open session %s: %w", id, err)
	}
	return sess, st, nil
}

// Load rebuilds session id's state without opening it for writing. A torn
// last record is left out with a warning in State.Warnings.
func (s *Store) Load(ctx context.Context, id string) (*State, error) {
	f, err := s.openFile(id, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := loadState(f, s.Path(id), id)
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	return st, nil
}

func (s *Store) openFile(id string, flag int) (*os.File, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(s.Path(id), flag|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("session %s: %w (see brig sessions list --all)", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	return f, nil
}

// Remove deletes session id's file (and a kept torn tail). An Append that
// races with it fails with ErrRemoved instead of writing into the void.
func (s *Store) Remove(ctx context.Context, id string) error {
	f, err := s.openFile(id, os.O_RDONLY)
	if err != nil {
		return err
	}
	defer f.Close()
	err = fsutil.WithFileLock(ctx, f, func() error {
		if err := os.Remove(s.Path(id)); err != nil {
			return err
		}
		if err := os.Remove(s.Path(id) + tornExt); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return fsutil.SyncDir(s.dir)
	})
	if err != nil {
		return fmt.Errorf("remove session %s: %w", id, err)
	}
	return nil
}

// Append writes recs to the end of the session and returns once they are on
// disk (written and fsynced). Records with a zero Time are
// stamped now. Either all of recs are saved or none are: several records
// go on one line (a batch) that a crash tears as a whole, and a failed write
// (a full disk) is cut back off so the file stays as it was.
//
// If the file ends in a torn record (an earlier writer died mid-write), the
// tail is first cut back to the last complete record, under the lock; the
// cut bytes are kept in a .torn file next to it and a warning is logged.
func (s *Session) Append(ctx context.Context, recs ...Record) error {
	_, err := s.append(ctx, recs, false, false)
	return err
}

// AppendLater is Append that returns as soon as recs are written to the
// file (a kill -9 of brig keeps them; a power cut may not) and syncs them
// in the background: synced waits for that and reports its error (nil
// once it is done). A failed sync cuts the records back off, as Append
// does; every other use of the session (an append, Close) waits for the
// sync. The turn loop saves its messages this way: a call's results are
// synced while the next request leaves, an answer while its calls start.
func (s *Session) AppendLater(ctx context.Context, recs ...Record) (synced func() error, err error) {
	return s.append(ctx, recs, false, true)
}

// writeHeader writes the header record into the new, empty file,
// unsynced (see Create).
func (s *Session) writeHeader(ctx context.Context, h Header) error {
	_, err := s.append(ctx, []Record{{Kind: KindHeader, Time: h.Created, Header: &h}}, true, false)
	return err
}

// append is Append (AppendLater when later is set, returning the wait for
// the sync); only Create may write the header (into an empty file), and
// that is not synced: see Create.
func (s *Session) append(ctx context.Context, recs []Record, header, later bool) (func() error, error) {
	if len(recs) == 0 {
		return func() error { return nil }, nil
	}
	now := s.store.now().UTC()
	stamped := make([]Record, len(recs))
	for i, r := range recs {
		if (r.Kind == KindHeader) != header || r.Kind == KindBatch {
			return nil, fmt.Errorf("session %s: append: a %q record cannot be appended (a header starts a session and only Create writes it)", s.id, r.Kind)
		}
		if err := r.check(); err != nil {
			return nil, fmt.Errorf("session %s: append: %w", s.id, err)
		}
		if r.Time.IsZero() {
			r.Time = now
		}
		stamped[i] = r
	}
	line := stamped[0]
	if len(stamped) > 1 {
		// One line for the whole batch: a crash mid-write tears the line,
		// and the reader drops all of it.
		line = Record{Kind: KindBatch, Time: now, Batch: stamped}
	}
	b, err := json.Marshal(line)
	if err != nil {
		return nil, fmt.Errorf("session %s: encode %s record: %w", s.id, line.Kind, err)
	}
	var buf bytes.Buffer
	buf.Grow(len(b) + 1)
	buf.Write(b)
	buf.WriteByte('\n')
	s.mu.Lock()
	if s.f == nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("session %s: append after Close", s.id)
	}
	unlock, err := fsutil.LockFile(ctx, s.f)
	if err != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("session %s: save %d record(s): %w", s.id, len(recs), err)
	}
	// The file's lock and s.mu are held until the records are synced (or
	// cut back off), in the background for AppendLater.
	release := func(err error) error {
		unlock()
		s.mu.Unlock()
		if err != nil {
			return fmt.Errorf("session %s: save %d record(s): %w", s.id, len(recs), err)
		}
		return nil
	}
	off, err := s.end(header)
	if err == nil {
		err = s.write(buf.Bytes(), off)
	}
	if err != nil || !later {
		if err == nil && !header {
			err = s.sync(off)
		}
		err = release(err)
		return func() error { return err }, err
	}
	done := make(chan error, 1)
	go func() { done <- release(s.sync(off)) }()
	return sync.OnceValue(func() error { return <-done }), nil
}

// end checks the file (not removed; empty exactly when the header is
// written) and returns where the next records go, after cutting a torn
// last record off. Called with both locks held.
func (s *Session) end(header bool) (int64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(s.f.Fd()), &st); err != nil {
		return 0, err
	}
	if st.Nlink == 0 {
		return 0, ErrRemoved
	}
	size := st.Size
	if (size == 0) != header {
		return 0, &CorruptError{Path: s.path, Line: 1, Err: errors.New("the file is empty or already started; refusing to append")}
	}
	if size > 0 {
		return s.repairTail(size)
	}
	return size, nil
}

// write puts b at off; on a failure the file is cut back to off so the
// previous records stay exactly as they were.
func (s *Session) write(b []byte, off int64) error {
	n, err := s.store.writeAt(s.f, b, off)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return s.cutBack(off, err)
	}
	return nil
}

// sync makes what was written after off durable; on a failure (a full
// disk shows at the sync with delayed allocation) it is cut back off. A
// new session's first sync also makes its header and name durable.
func (s *Session) sync(off int64) error {
	if err := s.store.datasync(s.f); err != nil {
		return s.cutBack(off, err)
	}
	if s.named {
		if err := s.store.syncDir(s.store.dir); err != nil {
			return fmt.Errorf("make the new session's file name durable: %w (the next save tries again)", explain(err))
		}
		s.named = false
	}
	return nil
}

// syncNew makes a new session's header and name durable (Close, when no
// append has). Called with mu held.
func (s *Session) syncNew() error {
	if err := s.store.datasync(s.f); err != nil {
		return fmt.Errorf("session %s: sync the new session's header: %w", s.id, explain(err))
	}
	if err := s.store.syncDir(s.store.dir); err != nil {
		return fmt.Errorf("session %s: make the new session's file name durable: %w", s.id, explain(err))
	}
	s.named = false
	return nil
}

// cutBack truncates the file to off after err and says what was kept.
func (s *Session) cutBack(off int64, err error) error {
	if terr := s.f.Truncate(off); terr != nil {
		return fmt.Errorf("%w; and cutting the partial write back failed: %v (the next save repairs it)", explain(err), terr)
	}
	if serr := unix.Fdatasync(int(s.f.Fd())); serr != nil {
		return fmt.Errorf("%w; and syncing the repaired file failed: %v", explain(err), serr)
	}
	return fmt.Errorf("%w (nothing of it was kept; the session up to the previous save is intact)", explain(err))
}

// explain turns the errors a full or broken disk gives into a sentence.
func explain(err error) error {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return fmt.Errorf("the disk is full: %w", err)
	case errors.Is(err, syscall.EDQUOT):
		return fmt.Errorf("the disk quota is exhausted: %w", err)
	case errors.Is(err, syscall.EIO):
		return fmt.Errorf("the disk reported an I/O error: %w", err)
	}
	return err
}

// repairTail cuts a torn last record off a file of the given size and
// returns the size of the complete records. Called with the lock held.
func (s *Session) repairTail(size int64) (int64, error) {
	var last [1]byte
	if _, err := s.f.ReadAt(last[:], size-1); err != nil {
		return 0, fmt.Errorf("read the end of the file: %w", err)
	}
	if last[0] == '\n' {
		return size, nil
	}
	keep, err := fsutil.LastNewline(s.f, size)
	if err != nil {
		return 0, err
	}
	if keep == 0 {
		return 0, &CorruptError{Path: s.path, Line: 1, Err: errors.New("the header record is incomplete; refusing to append")}
	}
	torn := make([]byte, size-keep)
	if _, err := s.f.ReadAt(torn, keep); err != nil {
		return 0, fmt.Errorf("read the torn tail: %w", err)
	}
	if err := fsutil.AppendSync(s.path+tornExt, torn); err != nil {
		return 0, fmt.Errorf("keep the torn tail before repairing: %w", err)
	}
	if err := s.f.Truncate(keep); err != nil {
		return 0, fmt.Errorf("cut the torn tail: %w", err)
	}
	if err := unix.Fdatasync(int(s.f.Fd())); err != nil {
		return 0, fmt.Errorf("sync the repair: %w", err)
	}
	s.store.log.Warn("session: cut an incomplete last record (left by a crash mid-write) before appending",
		"session", s.id, "file", s.path, "bytes", len(torn), "kept_in", s.path+tornExt)
	return keep, nil
}

package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"

	"brig/internal/dirwatch"
	"brig/internal/fsutil"
)

// The files of a store (one directory per workspace under brig's state
// directory, which no jail is ever granted).
const (
	packName    = "objects.pack"  // object bytes, appended
	indexName   = "objects.index" // one fixed-size record per object: hash, offset, length
	journalName = "journal.jsonl" // one JSON event per line: snapshots before/after calls, undos
	lockName    = "lock"          // flock: one writer at a time, across processes
	indexRecord = 32 + 8 + 8
)

// Defaults for Options.
const (
	DefaultMaxFileSize      = 64 << 20 // a bigger file is recorded by its stat only
	DefaultMaxSnapshotBytes = 1 << 30  // new content one snapshot may add to the store
	DefaultMinFree          = 1 << 30  // space a snapshot leaves free on the store's file system
	DefaultMaxStoreBytes    = 8 << 30  // content the whole store may hold
)

// Options tune a Store. Zero values take the defaults.
type Options struct {
	// MaxFileSize: files above it are recorded but not stored.
	MaxFileSize int64
	// MaxSnapshotBytes bounds the new content one snapshot stores; files
	// past it are recorded but not stored.
	MaxSnapshotBytes int64
	// MinFree is the space a snapshot leaves free on the file system that
	// holds the store: files that would take it below are recorded but
	// not stored. The store is never pruned, and a call can make files
	// that cost it little and the store their whole size (sparse ones
	// just past the sparse check's eighth: red team, 2026-12-03).
	MinFree int64
	// MaxStoreBytes bounds the store's whole pack: past it, files are
	// recorded but not stored (a call's cheap files, 1 GiB a call, would
	// otherwise take the disk down to MinFree: red team, 2026-12-03).
	MaxStoreBytes int64
	// Exclude decides which directories are not descended into
	// (DefaultExclusions when nil).
	Exclude *Exclusions
	Logger  *slog.Logger
}

// Store is one workspace's checkpoints: a content-addressed object store
// (file contents and directory trees, each stored once however many
// snapshots share it) and a journal of the snapshots taken around each call
// and of the undos. It is safe for concurrent use; processes sharing a
// store are serialised by a lock file.
type Store struct {
	dir  string
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	pack    *os.File // O_APPEND writer and reader
	index   *os.File
	lock    *os.File
	objects map[Hash]loc
	indexed int64 // bytes of the index already read
	trees   map[Hash]tree
	// stat is what the last snapshots saw of each file and symlink, by
	// device and inode: an entry whose stat data (change time included)
	// is unchanged keeps its hash without its content being read again.
	stat   map[statKey]Entry
	seeded map[string]bool
	// watch reports which directories changed since the last snapshot;
	// last is that snapshot, per root (this process's only).
	watch *dirwatch.Watcher
	last  map[string]lastSnap
	// here is this process's presence file once it has announced a
	// session (presence.go).
	here *presence
	// buf is the writers' buffer, kept between snapshots (one per call
	// before and after): allocating and clearing a fresh 1 MiB each time
	// was a measurable share of a call's cost. Writers run with mu held.
	buf *bufio.Writer
	// Conditional exclusions (keepCovering): covered are the directories
	// a conditional rule's name matched that a snapshot of this process
	// covered (its condition did not hold), markers the files a call made
	// that would exclude one of them, and callStart the coarse clock at
	// the start of the call whose after-snapshot is being taken (0 for
	// any other snapshot). keptMu guards the maps (the walk's goroutines);
	// callStart is set with mu held.
	keptMu    sync.Mutex
	covered   map[string]bool
	markers   map[string]markerID
	keptDirty bool // changed since loadKept or saveKept (kept.go)
	callStart unix.Timespec
	// datasync makes a journal append durable (unix.Fdatasync; a test
	// holds it to crash between the write and the sync).
	datasync func(*os.File) error
}

type loc struct{ off, n int64 }

// markerID identifies a file that makes a conditional exclusion hold.
type markerID struct {
	dev, ino uint64
	ctime    unix.Timespec
}

// coverable records that a snapshot covered the directory abs although a
// conditional exclusion rule's name matched it (its condition did not
// hold).
func (s *Store) coverable(abs string) {
	s.keptMu.Lock()
	defer s.keptMu.Unlock()
	if s.covered == nil {
		s.covered = map[string]bool{}
	}
	if !s.covered[abs] {
		s.covered[abs], s.keptDirty = true, true
	}
}

// keepCovering reports whether the directory abs, which a conditional
// exclusion rule would leave out because of marker, stays covered: a
// snapshot (of this session or an earlier one: kept.go) covered it before, and marker is a call's — it
// changed during the call whose after-snapshot this is, or it is the one
// such a snapshot found before. A call cannot hide what it changes in a
// covered directory (env/config.py) by making it look like a generated
// tree (touch env/pyvenv.cfg); a virtualenv it makes in a new directory,
// and a marker the user makes between calls (cargo init), still exclude.
func (s *Store) keepCovering(abs string, marker *unix.Stat_t) bool {
	if marker == nil {
		return false
	}
	id := markerID{dev: marker.Dev, ino: marker.Ino, ctime: marker.Ctim}
	s.keptMu.Lock()
	defer s.keptMu.Unlock()
	if !s.covered[abs] {
		return false
	}
	if s.markers[abs] == id {
		return true
	}
	start := s.callStart
	if start == (unix.Timespec{}) || !(id.ctime.Sec > start.Sec || id.ctime.Sec == start.Sec && id.ctime.Nsec >= start.Nsec) {
		delete(s.covered, abs) // the user's own marker: excluded from now on
		s.keptDirty = true
		return false
	}
	if s.markers == nil {
		s.markers = map[string]markerID{}
	}
	s.markers[abs], s.keptDirty = id, true
	return true
}

// Open opens (creating when missing) the store in dir.
func Open(dir string, opts Options) (*Store, error) {
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = DefaultMaxFileSize
	}
	if opts.MinFree <= 0 {
		opts.MinFree = DefaultMinFree
	}
	if opts.MaxStoreBytes <= 0 {
		opts.MaxStoreBytes = DefaultMaxStoreBytes
	}
	if opts.MaxSnapshotBytes <= 0 {
		opts.MaxSnapshotBytes = DefaultMaxSnapshotBytes
	}
	if opts.Exclude == nil {
		opts.Exclude = DefaultExclusions()
	}
	s := &Store{dir: dir, opts: opts, log: opts.Logger, objects: map[Hash]loc{}, trees: map[Hash]tree{}, stat: map[statKey]Entry{}, seeded: map[string]bool{}, last: map[string]lastSnap{}, watch: dirwatch.New(dirwatch.Contents, 0),
		datasync: func(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }}
	if s.log == nil {
		s.log = slog.Default()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("checkpoint store: %w", err)
	}
	s.loadKept()
	open := func(name string, flag int) (*os.File, error) {
		f, err := os.OpenFile(filepath.Join(dir, name), flag|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return nil, fmt.Errorf("checkpoint store: %w", err)
		}
		return f, nil
	}
	var err error
	if s.lock, err = open(lockName, os.O_RDWR); err != nil {
		return nil, err
	}
	if s.pack, err = open(packName, os.O_RDWR|os.O_APPEND); err != nil {
		s.Close()
		return nil, err
	}
	if s.index, err = open(indexName, os.O_RDWR|os.O_APPEND); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.readIndex(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// Close releases the store's files.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range []*os.File{s.pack, s.index, s.lock} {
		if f != nil {
			f.Close()
		}
	}
	s.pack, s.index, s.lock = nil, nil, nil
	s.leave()
	s.watch.Close()
	s.watch = nil
	return nil
}

// locked runs fn holding the store's mutex and its cross-process lock.
func (s *Store) locked(ctx context.Context, fn func() error) error {
	s.mu.Lock()
	return s.lockedHeld(ctx, fn)
}

// lockedHeld is locked for a caller that already holds the mutex (taken
// on another goroutine: AfterLater); it releases it.
func (s *Store) lockedHeld(ctx context.Context, fn func() error) error {
	defer s.mu.Unlock()
	if s.lock == nil {
		return errors.New("checkpoint store is closed")
	}
	return fsutil.WithFileLock(ctx, s.lock, func() error {
		if err := s.readIndex(); err != nil {
			return err
		}
		return fn()
	})
}

// readIndex reads the index records appended since the last read (by this
// process or another). A torn last record (a crash mid-append) is ignored
// here and cut off by the next append; a record pointing past the end of
// the pack is ignored (its object never reached the disk).
func (s *Store) readIndex() error {
	var st unix.Stat_t
	if err := unix.Fstat(int(s.index.Fd()), &st); err != nil {
		return fmt.Errorf("checkpoint index: %w", err)
	}
	whole := st.Size - st.Size%indexRecord
	if whole <= s.indexed {
		return nil
	}
	buf := make([]byte, whole-s.indexed)
	if _, err := s.index.ReadAt(buf, s.indexed); err != nil {
		return fmt.Errorf("checkpoint index: %w", err)
	}
	var pst unix.Stat_t
	if err := unix.Fstat(int(s.pack.Fd()), &pst); err != nil {
		return fmt.Errorf("checkpoint pack: %w", err)
	}
	for i := 0; i+indexRecord <= len(buf); i += indexRecord {
		var h Hash
		copy(h[:], buf[i:i+32])
		off := int64(binary.LittleEndian.Uint64(buf[i+32:]))
		n := int64(binary.LittleEndian.Uint64(buf[i+40:]))
		if off < 0 || n < 0 || off+n > pst.Size {
			continue
		}
		s.objects[h] = loc{off, n}
	}
	s.indexed = whole
	return nil
}

// read returns an object's bytes, checked against its hash.
func (s *Store) read(h Hash) ([]byte, error) {
	l, ok := s.objects[h]
	if !ok {
		return nil, fmt.Errorf("checkpoint: object %s is not in the store", h)
	}
	b := make([]byte, l.n)
	if _, err := s.pack.ReadAt(b, l.off); err != nil {
		return nil, fmt.Errorf("checkpoint: read object %s: %w", h, err)
	}
	if hashOf(b) != h {
		return nil, fmt.Errorf("checkpoint: object %s is damaged in %s", h, filepath.Join(s.dir, packName))
	}
	return b, nil
}

// Content returns a stored file's content.
func (s *Store) Content(h Hash) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.read(h)
}

// tree returns a stored directory tree (decoded once, then cached).
func (s *Store) tree(h Hash) (tree, error) {
	if t, ok := s.trees[h]; ok {
		return t, nil
	}
	b, err := s.read(h)
	if err != nil {
		return nil, err
	}
	t, err := decodeTree(b)
	if err != nil {
		return nil, fmt.Errorf("%w (object %s)", err, h)
	}
	s.trees[h] = t
	return t, nil
}

// writer appends new objects to the pack during one snapshot. Nothing it
// wrote counts until commit: the pack is synced, then the index records
// are appended and synced, so an index record never points at bytes that
// are not on disk. abort cuts the pack back.
type writer struct {
	s       *Store
	start   int64 // pack size when the snapshot began
	end     int64
	buf     *bufio.Writer
	pending map[Hash]loc
	order   []Hash
	added   int64 // content bytes stored
	// room is what may be stored before the file system's free space
	// falls below Options.MinFree (as it was when the snapshot began),
	// or the pack grows past Options.MaxStoreBytes; full says which.
	room int64
	full string
}

func (s *Store) newWriter() (*writer, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(s.pack.Fd()), &st); err != nil {
		return nil, fmt.Errorf("checkpoint pack: %w", err)
	}
	if s.buf == nil {
		s.buf = bufio.NewWriterSize(s.pack, 1<<20)
	}
	s.buf.Reset(s.pack)
	room := s.opts.MaxStoreBytes - st.Size
	full := fmt.Sprintf("this workspace's undo store holds %d MiB, all it keeps (remove %s to start it again)", s.opts.MaxStoreBytes>>20, s.dir)
	var fs unix.Statfs_t
	if err := unix.Fstatfs(int(s.pack.Fd()), &fs); err == nil {
		if free := int64(fs.Bavail)*fs.Bsize - s.opts.MinFree; free < room {
			room = free
			full = fmt.Sprintf("storing it would leave less than %d MiB free on the disk that holds brig's undo store", s.opts.MinFree>>20)
		}
	}
	return &writer{s: s, start: st.Size, end: st.Size, buf: s.buf, pending: map[Hash]loc{}, room: room, full: full}, nil
}

// has reports whether the object is stored or pending.
func (w *writer) has(h Hash) bool {
	if _, ok := w.s.objects[h]; ok {
		return true
	}
	_, ok := w.pending[h]
	return ok
}

// put stores b (once) and returns its hash.
func (w *writer) put(b []byte) (Hash, error) {
	h := hashOf(b)
	if w.has(h) {
		return h, nil
	}
	if _, err := w.buf.Write(b); err != nil {
		return h, fmt.Errorf("checkpoint pack: %w", err)
	}
	w.pending[h] = loc{w.end, int64(len(b))}
	w.order = append(w.order, h)
	w.end += int64(len(b))
	w.added += int64(len(b))
	return h, nil
}

// readPending reads an object written by this writer and not yet committed.
func (w *writer) get(h Hash) ([]byte, error) {
	if l, ok := w.pending[h]; ok {
		if err := w.buf.Flush(); err != nil {
			return nil, err
		}
		b := make([]byte, l.n)
		if _, err := w.s.pack.ReadAt(b, l.off); err != nil {
			return nil, err
		}
		return b, nil
	}
	return w.s.read(h)
}

// commit makes the written objects durable and indexed.
func (w *writer) commit() error {
	if err := w.buf.Flush(); err != nil {
		return fmt.Errorf("checkpoint pack: %w", err)
	}
	if len(w.order) == 0 {
		return nil
	}
	if err := unix.Fdatasync(int(w.s.pack.Fd())); err != nil {
		return fmt.Errorf("checkpoint pack: sync: %w", err)
	}
	if err := w.s.cutTornIndex(); err != nil {
		return err
	}
	rec := make([]byte, 0, len(w.order)*indexRecord)
	for _, h := range w.order {
		l := w.pending[h]
		rec = append(rec, h[:]...)
		rec = binary.LittleEndian.AppendUint64(rec, uint64(l.off))
		rec = binary.LittleEndian.AppendUint64(rec, uint64(l.n))
	}
	if _, err := w.s.index.Write(rec); err != nil {
		return fmt.Errorf("checkpoint index: %w", err)
	}
	if err := unix.Fdatasync(int(w.s.index.Fd())); err != nil {
		return fmt.Errorf("checkpoint index: sync: %w", err)
	}
	for _, h := range w.order {
		w.s.objects[h] = w.pending[h]
	}
	w.s.indexed += int64(len(rec))
	w.pending, w.order = map[Hash]loc{}, nil
	return nil
}

// abort cuts the pack back to where this writer began.
func (w *writer) abort() {
	w.buf.Reset(w.s.pack)
	if err := w.s.pack.Truncate(w.start); err != nil {
		w.s.log.Warn("checkpoint: could not cut back an aborted snapshot (wasted space only)", "err", err)
	}
}

// cutTornIndex cuts a torn last index record off before an append.
func (s *Store) cutTornIndex() error {
	var st unix.Stat_t
	if err := unix.Fstat(int(s.index.Fd()), &st); err != nil {
		return fmt.Errorf("checkpoint index: %w", err)
	}
	if r := st.Size % indexRecord; r != 0 {
		if err := s.index.Truncate(st.Size - r); err != nil {
			return fmt.Errorf("checkpoint index: cut a torn record: %w", err)
		}
	}
	return nil
}

// appendJournal appends events to the journal and syncs it. A torn last
// line (a crash mid-append) is cut off first.
func (s *Store) appendJournal(evs ...Event) error {
	f, err := s.writeJournal(evs)
	if err != nil {
		return err
	}
	return s.syncJournal(f)
}

// appendJournalLater is appendJournal that returns once the events are
// written — in the page cache, which a kill -9 of this process does not
// lose — and syncs them in the background; the function it returns waits
// for that sync and reports its failure.
func (s *Store) appendJournalLater(evs ...Event) (synced func() error, err error) {
	f, err := s.writeJournal(evs)
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- s.syncJournal(f) }()
	return sync.OnceValue(func() error { return <-done }), nil
}

// writeJournal appends evs to the journal, after cutting a torn last
// line, and returns the journal open for syncJournal.
func (s *Store) writeJournal(evs []Event) (*os.File, error) {
	var buf bytes.Buffer
	for _, ev := range evs {
		b, err := json.Marshal(ev)
		if err != nil {
			return nil, fmt.Errorf("checkpoint journal: %w", err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	f, err := os.OpenFile(filepath.Join(s.dir, journalName), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("checkpoint journal: %w", err)
	}
	end, err := cutTornLine(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("checkpoint journal: %w", err)
	}
	if _, err := f.WriteAt(buf.Bytes(), end); err != nil {
		_ = f.Truncate(end)
		f.Close()
		return nil, fmt.Errorf("checkpoint journal: %w", err)
	}
	return f, nil
}

// syncJournal makes what writeJournal wrote durable and closes f.
func (s *Store) syncJournal(f *os.File) error {
	defer f.Close()
	if err := s.datasync(f); err != nil {
		return fmt.Errorf("checkpoint journal: sync: %w", err)
	}
	return nil
}

// cutTornLine cuts bytes after the last newline of f and returns its new size.
func cutTornLine(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	keep, err := fsutil.LastNewline(f, st.Size())
	if err != nil {
		return 0, err
	}
	if keep != st.Size() {
		if err := f.Truncate(keep); err != nil {
			return 0, err
		}
	}
	return keep, nil
}

// journalTail is how much of the journal lastEvent reads at a time.
const journalTail = 64 << 10

// lastEvent calls visit with the journal's events from the newest back,
// reading the journal from its end in blocks of window bytes, until visit
// is done or returns an error; a torn last line is not an event. What a
// process needs of its history at start (the last snapshot of a root) is
// near the end, and the journal only grows: reading it whole, as Events
// does, made every session's first snapshot cost the workspace's whole
// history.
func (s *Store) lastEvent(window int, visit func(*Event) (done bool, err error)) error {
	f, err := os.OpenFile(filepath.Join(s.dir, journalName), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checkpoint journal: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("checkpoint journal: %w", err)
	}
	// end: the lines at and after it were visited (it is a line's start,
	// or the file's end).
	for end, size := fi.Size(), window; end > 0; {
		start := max(end-int64(size), 0)
		buf := make([]byte, end-start)
		if _, err := f.ReadAt(buf, start); err != nil {
			return fmt.Errorf("checkpoint journal: %w", err)
		}
		if start > 0 {
			// The bytes up to the first newline end a line that began
			// before start: the next block has it whole. The block's
			// last byte ends its own last line (or is the torn tail).
			nl := bytes.IndexByte(buf[:len(buf)-1], '\n')
			if nl < 0 {
				size *= 2 // no whole line in the block
				continue
			}
			buf, start = buf[nl+1:], start+int64(nl+1)
		}
		lines := bytes.SplitAfter(buf, []byte("\n"))
		at := end // where lines[k] starts, going back
		for k := len(lines) - 1; k >= 0; k-- {
			l := lines[k]
			at -= int64(len(l))
			if len(l) == 0 || l[len(l)-1] != '\n' {
				continue // nothing, or the torn tail
			}
			var ev Event
			if err := json.Unmarshal(l, &ev); err != nil {
				return fmt.Errorf("checkpoint journal %s: the line at byte %d is damaged: %w", filepath.Join(s.dir, journalName), at, err)
			}
			if done, err := visit(&ev); done || err != nil {
				return err
			}
		}
		end = start
	}
	return nil
}

// Events reads the journal: every complete event, in order. A torn last
// line is left out.
func (s *Store) Events() ([]Event, error) {
	f, err := os.OpenFile(filepath.Join(s.dir, journalName), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint journal: %w", err)
	}
	defer f.Close()
	var evs []Event
	br := bufio.NewReaderSize(f, 64<<10)
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return evs, nil // a torn tail, if any, is not an event
		}
		if err != nil {
			return nil, fmt.Errorf("checkpoint journal: %w", err)
		}
		var ev Event
		if err := json.Unmarshal(b, &ev); err != nil {
			return nil, fmt.Errorf("checkpoint journal %s: line %d is damaged: %w", filepath.Join(s.dir, journalName), line, err)
		}
		evs = append(evs, ev)
	}
}

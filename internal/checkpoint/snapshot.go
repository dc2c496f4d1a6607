package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"brig/internal/dirwatch"
	"brig/internal/safefs"
)

// racyWindow: a file whose status changed this close to the start of a
// snapshot may change again within the same timestamp tick (a few
// milliseconds on filesystems with coarse timestamps) without its stat
// data showing it, so its hash is not trusted by the next snapshot.
const racyWindow = int64(50 * time.Millisecond)

// RootState is one root of a snapshot: an absolute path and what was there
// (Type TypeNone when nothing was).
type RootState struct {
	Path  string `json:"path"`
	Entry Entry  `json:"entry"`
}

// Note is a path a snapshot or an undo says something about.
type Note struct {
	Path string `json:"path"`
	Why  string `json:"why"`
}

// Snapshot is the state of a set of roots at one moment: for each root,
// its entry, whose hash names the tree below it in the store.
type Snapshot struct {
	Roots []RootState `json:"roots"`
	// Excluded are the directories it did not descend into, and why.
	Excluded []Note `json:"excluded,omitempty"`
	// NotStored are files recorded without their content, and why.
	NotStored []Note `json:"not_stored,omitempty"`
	// Entries is how many names it recorded, Read how many files it read
	// (the others kept the hash of the last snapshot), Stored how many
	// bytes of new content it added to the store.
	Entries int   `json:"entries"`
	Read    int   `json:"read"`
	Stored  int64 `json:"stored"`
}

// root returns the state of the root at abs, if the snapshot has it.
func (sn *Snapshot) root(abs string) *RootState {
	for i := range sn.Roots {
		if sn.Roots[i].Path == abs {
			return &sn.Roots[i]
		}
	}
	return nil
}

// walker takes one snapshot. Directories are walked by up to GOMAXPROCS
// goroutines: the stat calls are most of a full walk's cost.
type walker struct {
	ctx   context.Context
	s     *Store
	start int64
	sem   chan struct{} // a token per extra goroutine

	// fast: directories the watcher saw nothing happen in since prevSeq
	// (when the last snapshot of this root was taken) are taken from that
	// snapshot without a system call. rootfd is the root directory, from
	// which a changed directory deep down is opened.
	fast    bool
	prevSeq uint64
	rootfd  int
	// since: prevSeq is known (a watched last snapshot), so a file the
	// watcher saw written since is read again whatever its stat data.
	since bool

	mu      sync.Mutex // guards w, sn's lists, updates, err and the store's tree cache
	w       *writer
	sn      *Snapshot
	updates []cached // what this walk saw, for the stat cache
	err     error

	entries, read atomic.Int64
	unwatched     atomic.Bool // a directory could not be watched: the next snapshot walks it all
}

// statKey identifies a file for the stat cache and the watcher.
type statKey = dirwatch.Key

// cached is what the stat cache keeps of a file or symlink.
type cached struct {
	key   statKey
	entry Entry
}

// lastSnap is the last snapshot of a root this process took, for the
// fast path of the next one.
type lastSnap struct {
	state RootState
	seq   uint64 // the watcher's last event when it started
	// watched: every directory in it had a watch.
	watched bool
}

// NormalizeRoots cleans roots, drops duplicates and roots inside other
// roots, and sorts them.
func NormalizeRoots(roots []string) ([]string, error) {
	var out []string
	for _, r := range roots {
		if !filepath.IsAbs(r) {
			return nil, fmt.Errorf("checkpoint: root %q is not absolute", r)
		}
		r = filepath.Clean(r)
		if r == "/" {
			return nil, errors.New("checkpoint: refusing to snapshot the whole filesystem (/)")
		}
		out = append(out, r)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	var kept []string
	for _, r := range out {
		if len(kept) > 0 && within(r, kept[len(kept)-1]) {
			continue
		}
		kept = append(kept, r)
	}
	return kept, nil
}

// snapshot walks roots (normalized) and writes what is new to w. With
// fast, a root this process snapshotted before, whose directories are all
// watched, is walked only where the watcher saw something happen since.
func (s *Store) snapshot(ctx context.Context, w *writer, roots []string, fast bool) (*Snapshot, error) {
	seq := s.watch.Drain()
	sn := &Snapshot{}
	var entries, read int64
	for _, r := range roots {
		if err := s.seed(r); err != nil {
			s.log.Warn("checkpoint: could not load the last snapshot's stat data (every file is read again)", "root", r, "err", err)
		}
		wk := &walker{ctx: ctx, s: s, w: w, start: time.Now().UnixNano(), sn: sn, rootfd: -1, sem: make(chan struct{}, max(runtime.GOMAXPROCS(0)-1, 0))}
		var prev *Entry
		if last, ok := s.last[r]; ok && last.watched && s.watch != nil && !s.watch.Lost(last.seq) {
			wk.since, wk.prevSeq = true, last.seq
			if fast {
				wk.fast, prev = true, &last.state.Entry
			}
		}
		st, err := wk.root(r, prev)
		if err != nil {
			return nil, err
		}
		sn.Roots = append(sn.Roots, st)
		for _, c := range wk.updates {
			s.stat[c.key] = c.entry
		}
		entries += wk.entries.Load()
		read += wk.read.Load()
		s.last[r] = lastSnap{state: st, seq: seq, watched: s.watch != nil && !wk.unwatched.Load()}
	}
	s.saveKept()
	sn.Entries, sn.Read = int(entries), int(read)
	sn.Stored = w.added
	slices.SortFunc(sn.Excluded, func(a, b Note) int { return strings.Compare(a.Path, b.Path) })
	slices.SortFunc(sn.NotStored, func(a, b Note) int { return strings.Compare(a.Path, b.Path) })
	return sn, nil
}

// root records the root at abs (prev: its last snapshot, for the fast
// path). Its parent must be a directory reachable without symlinks.
func (wk *walker) root(abs string, prev *Entry) (RootState, error) {
	pfd, err := openAbsDir(filepath.Dir(abs))
	if err != nil {
		return RootState{}, fmt.Errorf("checkpoint %s: %w", abs, err)
	}
	defer unix.Close(pfd)
	if wk.fast {
		if wk.rootfd, err = openDirAt(pfd, filepath.Base(abs)); err != nil {
			wk.fast = false
		} else {
			defer unix.Close(wk.rootfd)
		}
	}
	// A root may be a mount point of its own; below it, another
	// filesystem is not descended into.
	var ups []cached
	e, err := wk.entry(pfd, place{abs: filepath.Dir(abs)}, filepath.Base(abs), unix.DT_UNKNOWN, 0, &ups, true, prev)
	wk.mu.Lock()
	wk.updates = append(wk.updates, ups...)
	if err == nil {
		err = wk.err
	}
	wk.mu.Unlock()
	if err != nil {
		return RootState{}, err
	}
	e.Name = filepath.Base(abs)
	return RootState{Path: abs, Entry: e}, nil
}

// maxWalkPath bounds the path of a directory the walk goes into: each
// level holds its path (twice) while the levels below are read, and a
// chain of 3,000 nested directories of 250-character names, made by a
// call in a second, held the supervisor at 5.8 GB (red team, round 5).
// A directory beyond it is recorded as an excluded tree: its own stat, not
// its content (what changes below it is neither listed nor undone).
// jail's repository search has the same bound.
const maxWalkPath = 16 << 10

// place is a directory being walked: its absolute path and its path from
// the snapshot root (what slash patterns match, and what a changed
// directory is opened by on the fast path).
type place struct {
	abs, rel string
	key      statKey // the directory's own identity (zero: unknown)
}

func (p place) child(name string, isRoot bool) place {
	if isRoot {
		return place{abs: p.abs + "/" + name}
	}
	if p.rel == "" {
		return place{abs: p.abs + "/" + name, rel: name}
	}
	return place{abs: p.abs + "/" + name, rel: p.rel + "/" + name}
}

func entryOf(name string, st *unix.Stat_t) Entry {
	e := Entry{
		Name: name, Mode: st.Mode & 0o7777, Size: st.Size,
		MTime: st.Mtim.Nano(), CTime: st.Ctim.Nano(), Ino: st.Ino, Dev: st.Dev, UID: st.Uid, GID: st.Gid,
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		e.Type = TypeFile
	case unix.S_IFDIR:
		e.Type = TypeDir
		e.Size = 0 // a directory's size says nothing undo needs, and differs by filesystem
	case unix.S_IFLNK:
		e.Type = TypeSymlink
	default:
		e.Type = TypeOther
	}
	return e
}

// entry records name in the directory dirfd (at dir). dtype is the type
// the directory listing gave (unix.DT_*; a hint: a directory is opened
// without a stat first). parentDev is that directory's device (0 for a
// root); ups collects stat cache updates; prev is what the last snapshot
// had here (nil: unknown).
func (wk *walker) entry(dirfd int, dir place, name string, dtype uint8, parentDev uint64, ups *[]cached, isRoot bool, prev *Entry) (Entry, error) {
	if wk.entries.Add(1)%512 == 0 {
		if err := wk.ctx.Err(); err != nil {
			return Entry{}, err
		}
	}
	if dtype == unix.DT_DIR && len(dir.abs)+1+len(name) <= maxWalkPath {
		if fd, err := openDirAt(dirfd, name); err == nil {
			var st unix.Stat_t
			if err := unix.Fstat(fd, &st); err != nil {
				unix.Close(fd)
				return Entry{}, fmt.Errorf("checkpoint: stat %s/%s: %w", dir.abs, name, err)
			}
			e := entryOf(name, &st)
			err := wk.dirOrUnchanged(fd, dirfd, dir.child(name, isRoot), &e, &st, parentDev, prev)
			return e, err
		}
		// Not a directory any more, or unreadable: stat it first.
	}
	st, err := lstatAt(dirfd, name)
	if errors.Is(err, unix.ENOENT) {
		return Entry{Name: name}, nil
	}
	if err != nil {
		return Entry{}, fmt.Errorf("checkpoint: stat %s/%s: %w", dir.abs, name, err)
	}
	e := entryOf(name, &st)
	key := statKey{Dev: st.Dev, Ino: st.Ino}
	switch e.Type {
	case TypeFile:
		written := wk.since && dir.key != (statKey{}) && wk.s.watch.Written(dir.key, name, wk.prevSeq)
		wk.file(dirfd, dir, &e, &st, written)
		*ups = append(*ups, cached{key, e})
	case TypeSymlink:
		if c, ok := wk.s.stat[key]; ok && c.sameStat(&e) && c.Type == TypeSymlink {
			e.Link = c.Link
		} else if e.Link, err = readlinkAt(dirfd, name); err != nil {
			return Entry{}, fmt.Errorf("checkpoint: read symlink %s/%s: %w", dir.abs, name, err)
		}
		*ups = append(*ups, cached{key, e})
	case TypeDir:
		at := dir.child(name, isRoot)
		if len(at.abs) > maxWalkPath {
			// Recorded as a directory whose content brig does not look
			// at (README: Limits).
			wk.excluded(&e, at, fmt.Sprintf("deeper than brig walks (a path of more than %d KiB)", maxWalkPath>>10), FlagExcluded)
			return e, nil
		}
		fd, err := openDirAt(dirfd, name)
		if errors.Is(err, unix.EACCES) {
			var reopened func()
			if fd, reopened, err = openOwnDir(dirfd, name, &st); err == nil {
				defer reopened()
			}
		}
		if err != nil {
			if errors.Is(err, unix.ENOENT) {
				return Entry{Name: name}, nil
			}
			// Its mode is recorded (a chmod 000 is undone), not its
			// entries.
			wk.excluded(&e, at, "unreadable: "+errText(err), FlagUnreadable)
			return e, nil
		}
		var fst unix.Stat_t
		if err := unix.Fstat(fd, &fst); err != nil || fst.Ino != st.Ino || fst.Dev != st.Dev {
			unix.Close(fd)
			return Entry{}, fmt.Errorf("checkpoint: %s changed while it was read", at.abs)
		}
		if err := wk.dirOrUnchanged(fd, dirfd, at, &e, &st, parentDev, prev); err != nil {
			return Entry{}, err
		}
	}
	return e, nil
}

// dirOrUnchanged records the directory open at fd: from the last snapshot
// when the fast path applies and nothing happened in it, else by reading
// it (dir).
func (wk *walker) dirOrUnchanged(fd, parentfd int, at place, e *Entry, st *unix.Stat_t, parentDev uint64, prev *Entry) error {
	if !wk.fast || !reusable(prev) || prev.Dev != st.Dev || prev.Ino != st.Ino {
		return wk.dir(fd, parentfd, at, e, st, parentDev, nil)
	}
	watched, dirty := wk.s.watch.Since(statKey{Dev: st.Dev, Ino: st.Ino}, wk.prevSeq)
	switch {
	case !watched:
		return wk.dir(fd, parentfd, at, e, st, parentDev, nil)
	case dirty:
		t, err := wk.tree(prev.Hash)
		if err != nil {
			unix.Close(fd)
			return err
		}
		return wk.dir(fd, parentfd, at, e, st, parentDev, t)
	}
	unix.Close(fd)
	u, err := wk.unchanged(at, *prev)
	if err != nil {
		return err
	}
	e.Hash = u.Hash
	return nil
}

// reusable reports whether a recorded directory can be taken over by the
// fast path (it was read, not excluded).
func reusable(e *Entry) bool {
	return e != nil && e.Type == TypeDir && e.Flags&(FlagExcluded|FlagUnreadable) == 0 && !e.Hash.IsZero()
}

// unchanged is the fast path for a directory nothing happened in since the
// last snapshot: its entries are that snapshot's, except subdirectories
// something happened in below, which are read again.
func (wk *walker) unchanged(at place, prev Entry) (Entry, error) {
	t, err := wk.tree(prev.Hash)
	if err != nil {
		return Entry{}, err
	}
	var nt tree
	for i := range t {
		c := &t[i]
		if !reusable(c) {
			continue
		}
		ce, err := wk.below(at.child(c.Name, false), *c)
		if err != nil {
			return Entry{}, err
		}
		if ce.Hash != c.Hash || !ce.sameStat(c) {
			if nt == nil {
				nt = slices.Clone(t)
			}
			nt[i] = ce
		}
	}
	if nt == nil {
		return prev, nil
	}
	wk.mu.Lock()
	h, err := wk.w.put(nt.encode())
	wk.mu.Unlock()
	prev.Hash = h
	return prev, err
}

// below is the fast path for a subdirectory of an unchanged directory:
// taken over when nothing happened in it either, else opened from the root
// (without following links) and read.
func (wk *walker) below(at place, prev Entry) (Entry, error) {
	watched, dirty := wk.s.watch.Since(statKey{Dev: prev.Dev, Ino: prev.Ino}, wk.prevSeq)
	if watched && !dirty {
		return wk.unchanged(at, prev)
	}
	fd, err := openDirAt(wk.rootfd, at.rel)
	if err != nil {
		return Entry{}, fmt.Errorf("checkpoint: open %s: %w", at.abs, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return Entry{}, fmt.Errorf("checkpoint: stat %s: %w", at.abs, err)
	}
	e := entryOf(prev.Name, &st)
	wk.entries.Add(1)
	var t tree
	if watched && st.Dev == prev.Dev && st.Ino == prev.Ino {
		if t, err = wk.tree(prev.Hash); err != nil {
			unix.Close(fd)
			return Entry{}, err
		}
	}
	return e, wk.dir(fd, -1, at, &e, &st, st.Dev, t)
}

// tree reads a stored tree (the store's cache is shared by the goroutines).
func (wk *walker) tree(h Hash) (tree, error) {
	wk.mu.Lock()
	defer wk.mu.Unlock()
	return wk.s.tree(h)
}

// excluded marks a directory as not descended into, and says why.
func (wk *walker) excluded(e *Entry, at place, why string, flag Flags) {
	e.Flags |= flag
	e.Why = why
	wk.mu.Lock()
	wk.sn.Excluded = append(wk.sn.Excluded, Note{Path: at.abs, Why: why})
	wk.mu.Unlock()
}

// file records a regular file: its hash from the stat cache when its stat
// data is unchanged and the watcher saw no write to it (written), else its
// content, read and stored.
func (wk *walker) file(dirfd int, dir place, e *Entry, st *unix.Stat_t, written bool) {
	defer func() {
		if e.CTime >= wk.start-racyWindow || e.MTime >= wk.start-racyWindow {
			e.Flags |= FlagRacy
		}
	}()
	if c, ok := wk.s.stat[statKey{Dev: st.Dev, Ino: st.Ino}]; ok && !written && c.Flags&(FlagRacy|FlagNotStored) == 0 && c.sameStat(e) && wk.has(c.Hash) {
		e.Hash = c.Hash
		return
	}
	notStored := func(why string) {
		e.Flags |= FlagNotStored
		e.Why = why
		wk.mu.Lock()
		wk.sn.NotStored = append(wk.sn.NotStored, Note{Path: dir.abs + "/" + e.Name, Why: why})
		wk.mu.Unlock()
	}
	if e.Size > wk.s.opts.MaxFileSize {
		notStored(fmt.Sprintf("larger than %d MiB", wk.s.opts.MaxFileSize>>20))
		return
	}
	if st.Size > 1<<20 && st.Blocks*512 < st.Size/8 && sparseAt(dirfd, e.Name, st) {
		// Holes cost the call nothing and a copy their whole size: a
		// call making many would fill the store for the price of a few
		// KiB of its own. (Few blocks alone may be a compressing file
		// system's doing: the holes are looked for.)
		notStored(fmt.Sprintf("a sparse file (%d MiB, %d KiB of it on disk)", st.Size>>20, st.Blocks*512>>10))
		return
	}
	wk.read.Add(1)
	data, err := readFileAt(dirfd, e.Name, st, wk.s.opts.MaxFileSize)
	if err != nil {
		notStored("unreadable: " + errText(err))
		return
	}
	wk.mu.Lock()
	var h Hash
	switch {
	case wk.w.added+int64(len(data)) > wk.s.opts.MaxSnapshotBytes && !wk.w.has(hashOf(data)):
		err = fmt.Errorf("the snapshot's budget of %d MiB of new content was spent", wk.s.opts.MaxSnapshotBytes>>20)
	case wk.w.added+int64(len(data)) > wk.w.room && !wk.w.has(hashOf(data)):
		err = errors.New(wk.w.full)
	default:
		h, err = wk.w.put(data)
	}
	wk.mu.Unlock()
	if err != nil {
		notStored("not stored: " + errText(err))
		return
	}
	e.Hash = h
	if int64(len(data)) != e.Size {
		e.Flags |= FlagRacy // it changed while it was read: read it again next time
	}
}

func (wk *walker) has(h Hash) bool {
	wk.mu.Lock()
	defer wk.mu.Unlock()
	return wk.w.has(h)
}

// dir records the directory open at fd (which it closes; its parent is
// parentfd, -1 when not at hand): excluded ones by their own stat only,
// others entry by entry into a stored tree. With prev (the last snapshot's
// tree of this directory, on the fast path) subdirectories nothing
// happened in are taken from it. Subdirectories go to another goroutine
// when one is free.
func (wk *walker) dir(fd, parentfd int, at place, e *Entry, st *unix.Stat_t, parentDev uint64, prev tree) error {
	defer unix.Close(fd)
	if parentDev != 0 && st.Dev != parentDev {
		wk.excluded(e, at, "another filesystem mounted here", FlagExcluded)
		return nil
	}
	if at.rel != "" {
		why, conditional, marker := wk.s.opts.Exclude.match(parentfd, at.rel, e.Name, fd)
		switch {
		case why != "" && conditional && wk.s.keepCovering(at.abs, marker):
			// The file that would exclude it (env/pyvenv.cfg, Cargo.toml
			// beside target/) is a call's, and the directory was covered
			// before: excluding it would hide what the call changed
			// there from undo.
		case why != "":
			wk.excluded(e, at, why, FlagExcluded)
			return nil
		case conditional:
			wk.s.coverable(at.abs)
		}
	}
	key := statKey{Dev: st.Dev, Ino: st.Ino}
	if !wk.s.watch.Add(fd, key) {
		wk.unwatched.Store(true)
	}
	at.key = key
	ents, err := safefs.ReadDirents(fd)
	if err != nil {
		wk.excluded(e, at, "unreadable: "+errText(err), FlagUnreadable)
		return nil
	}
	t := make(tree, len(ents))
	var ups []cached
	var wg sync.WaitGroup
	for i, de := range ents {
		pe := prev.find(de.Name)
		// A subdirectory another goroutine can take: hand it over.
		if de.Type == unix.DT_DIR && len(wk.sem) < cap(wk.sem) {
			select {
			case wk.sem <- struct{}{}:
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() { <-wk.sem }()
					var sub []cached
					ce, err := wk.entry(fd, at, de.Name, de.Type, st.Dev, &sub, false, pe)
					wk.mu.Lock()
					wk.updates = append(wk.updates, sub...)
					if err != nil && wk.err == nil {
						wk.err = err
					}
					wk.mu.Unlock()
					t[i] = ce
				}()
				continue
			default:
			}
		}
		ce, err := wk.entry(fd, at, de.Name, de.Type, st.Dev, &ups, false, pe)
		if err != nil {
			wg.Wait()
			return err
		}
		t[i] = ce
	}
	wg.Wait()
	wk.mu.Lock()
	wk.updates = append(wk.updates, ups...)
	err = wk.err
	wk.mu.Unlock()
	if err != nil {
		return err
	}
	t = slices.DeleteFunc(t, func(c Entry) bool { return c.Type == TypeNone })
	wk.mu.Lock()
	h, err := wk.w.put(t.encode())
	wk.mu.Unlock()
	if err != nil {
		return err
	}
	e.Hash = h
	return nil
}

// seed fills the stat cache for root from the latest journalled snapshot
// that covers it, once per root and process: a new brig process does not
// read the whole workspace again.
func (s *Store) seed(root string) error {
	if s.seeded[root] {
		return nil
	}
	s.seeded[root] = true
	return s.lastEvent(journalTail, func(ev *Event) (bool, error) {
		for _, r := range ev.Roots {
			if !within(root, r.Path) {
				continue
			}
			e, err := s.lookup(r, root)
			if err != nil {
				return true, err
			}
			if e != nil {
				return true, s.seedEntry(root, e)
			}
		}
		return false, nil
	})
}

// lookup finds the entry at abs inside a root's recorded state (nil when
// absent).
func (s *Store) lookup(r RootState, abs string) (*Entry, error) {
	e := r.Entry
	rest := strings.TrimPrefix(strings.TrimPrefix(abs, r.Path), "/")
	for rest != "" {
		if e.Type != TypeDir || e.Hash.IsZero() {
			return nil, nil
		}
		t, err := s.tree(e.Hash)
		if err != nil {
			return nil, err
		}
		name, more, _ := strings.Cut(rest, "/")
		c := t.find(name)
		if c == nil {
			return nil, nil
		}
		e, rest = *c, more
	}
	return &e, nil
}

func (s *Store) seedEntry(abs string, e *Entry) error {
	switch e.Type {
	case TypeFile, TypeSymlink:
		if k := (statKey{Dev: e.Dev, Ino: e.Ino}); e.Ino != 0 {
			if _, ok := s.stat[k]; !ok {
				s.stat[k] = *e
			}
		}
	case TypeDir:
		if e.Hash.IsZero() {
			return nil
		}
		t, err := s.tree(e.Hash)
		if err != nil {
			return err
		}
		for i := range t {
			if err := s.seedEntry(abs+"/"+t[i].Name, &t[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err.Error()
}

// within reports whether p is dir or below it (both clean and absolute).
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
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

// walker takes one snapshot.
type walker struct {
	ctx    context.Context
	s      *Store
	w      *writer
	start  int64
	sn     *Snapshot
	budget int64
	seen   map[string]Entry // what this walk saw, for the stat cache
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

// snapshot walks roots (normalized) and writes what is new to w.
func (s *Store) snapshot(ctx context.Context, w *writer, roots []string) (*Snapshot, error) {
	wk := &walker{ctx: ctx, s: s, w: w, start: time.Now().UnixNano(), sn: &Snapshot{}, budget: s.opts.MaxSnapshotBytes, seen: map[string]Entry{}}
	for _, r := range roots {
		if err := s.seed(r); err != nil {
			s.log.Warn("checkpoint: could not load the last snapshot's stat data (every file is read again)", "root", r, "err", err)
		}
		st, err := wk.root(r)
		if err != nil {
			return nil, err
		}
		wk.sn.Roots = append(wk.sn.Roots, st)
	}
	for p, e := range wk.seen {
		s.stat[p] = e
	}
	wk.sn.Stored = w.added
	return wk.sn, nil
}

// root records the root at abs. Its parent must be a directory reachable
// without symlinks.
func (wk *walker) root(abs string) (RootState, error) {
	pfd, err := openAbsDir(filepath.Dir(abs))
	if err != nil {
		return RootState{}, fmt.Errorf("checkpoint %s: %w", abs, err)
	}
	defer unix.Close(pfd)
	// A root may be a mount point of its own; below it, another
	// filesystem is not descended into.
	e, err := wk.entry(pfd, abs, "", filepath.Base(abs), 0)
	if err != nil {
		return RootState{}, err
	}
	e.Name = filepath.Base(abs)
	return RootState{Path: abs, Entry: e}, nil
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

// entry records the name in dirfd, found at abs (rel from the root; "" for
// the root itself). parentDev is the device of the directory holding it.
func (wk *walker) entry(dirfd int, abs, rel, name string, parentDev uint64) (Entry, error) {
	wk.sn.Entries++
	if wk.sn.Entries%512 == 0 {
		if err := wk.ctx.Err(); err != nil {
			return Entry{}, err
		}
	}
	st, err := lstatAt(dirfd, name)
	if errors.Is(err, unix.ENOENT) {
		return Entry{Name: name}, nil
	}
	if err != nil {
		return Entry{}, fmt.Errorf("checkpoint: stat %s: %w", abs, err)
	}
	e := entryOf(name, &st)
	switch e.Type {
	case TypeFile:
		wk.file(dirfd, abs, &e, &st)
	case TypeSymlink:
		if c, ok := wk.s.stat[abs]; ok && c.sameStat(&e) {
			e.Link = c.Link
		} else if e.Link, err = readlinkAt(dirfd, name); err != nil {
			return Entry{}, fmt.Errorf("checkpoint: read symlink %s: %w", abs, err)
		}
		wk.seen[abs] = e
	case TypeDir:
		if err := wk.dir(dirfd, abs, rel, name, &e, &st, parentDev); err != nil {
			return Entry{}, err
		}
	}
	return e, nil
}

// file records a regular file: its hash from the stat cache when its stat
// data is unchanged, else its content, read and stored.
func (wk *walker) file(dirfd int, abs string, e *Entry, st *unix.Stat_t) {
	defer func() {
		if e.CTime >= wk.start-racyWindow || e.MTime >= wk.start-racyWindow {
			e.Flags |= FlagRacy
		}
		wk.seen[abs] = *e
	}()
	if c, ok := wk.s.stat[abs]; ok && c.Flags&(FlagRacy|FlagNotStored) == 0 && c.sameStat(e) && wk.w.has(c.Hash) {
		e.Hash = c.Hash
		return
	}
	notStored := func(why string) {
		e.Flags |= FlagNotStored
		e.Why = why
		wk.sn.NotStored = append(wk.sn.NotStored, Note{Path: abs, Why: why})
	}
	switch {
	case e.Size > wk.s.opts.MaxFileSize:
		notStored(fmt.Sprintf("larger than %d MiB", wk.s.opts.MaxFileSize>>20))
		return
	case wk.w.added+e.Size > wk.budget:
		notStored(fmt.Sprintf("the snapshot's budget of %d MiB of new content was spent", wk.budget>>20))
		return
	}
	wk.sn.Read++
	data, err := readFileAt(dirfd, filepath.Base(abs), st, wk.s.opts.MaxFileSize)
	if err != nil {
		notStored("unreadable: " + errText(err))
		return
	}
	h, err := wk.w.put(data)
	if err != nil {
		notStored("not stored: " + errText(err))
		return
	}
	e.Hash = h
	if int64(len(data)) != e.Size {
		e.Flags |= FlagRacy // it changed while it was read: read it again next time
	}
}

// dir records a directory: excluded ones by their own stat only, others
// entry by entry into a stored tree.
func (wk *walker) dir(dirfd int, abs, rel, name string, e *Entry, st *unix.Stat_t, parentDev uint64) error {
	exclude := func(why string) {
		e.Flags |= FlagExcluded
		e.Why = why
		wk.sn.Excluded = append(wk.sn.Excluded, Note{Path: abs, Why: why})
	}
	if parentDev != 0 && st.Dev != parentDev {
		exclude("another filesystem mounted here")
		return nil
	}
	fd, err := openDirAt(dirfd, name)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			*e = Entry{Name: name}
			return nil
		}
		// Its mode is recorded (a chmod 000 is undone), not its entries.
		e.Flags |= FlagUnreadable
		e.Why = "unreadable: " + errText(err)
		wk.sn.Excluded = append(wk.sn.Excluded, Note{Path: abs, Why: e.Why})
		return nil
	}
	f := os.NewFile(uintptr(fd), abs)
	defer f.Close()
	var fst unix.Stat_t
	if err := unix.Fstat(fd, &fst); err != nil || fst.Ino != st.Ino || fst.Dev != st.Dev {
		return fmt.Errorf("checkpoint: %s changed while it was read", abs)
	}
	if rel != "" {
		if why := wk.s.opts.Exclude.match(dirfd, rel, name, fd); why != "" {
			exclude(why)
			return nil
		}
	}
	names, err := f.Readdirnames(-1)
	if err != nil {
		exclude("unreadable: " + errText(err))
		return nil
	}
	slices.Sort(names)
	t := make(tree, 0, len(names))
	for _, n := range names {
		childRel := n
		if rel != "" {
			childRel = rel + "/" + n
		}
		ce, err := wk.entry(fd, abs+"/"+n, childRel, n, st.Dev)
		if err != nil {
			return err
		}
		if ce.Type != TypeNone {
			t = append(t, ce)
		}
	}
	h, err := wk.w.put(t.encode())
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
	evs, err := s.Events()
	if err != nil {
		return err
	}
	for i := len(evs) - 1; i >= 0; i-- {
		for _, r := range evs[i].Roots {
			if !within(root, r.Path) {
				continue
			}
			e, err := s.lookup(r, root)
			if err != nil {
				return err
			}
			if e != nil {
				return s.seedEntry(root, e)
			}
		}
	}
	return nil
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
		if _, ok := s.stat[abs]; !ok {
			s.stat[abs] = *e
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

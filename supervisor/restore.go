package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"brig/internal/safefs"
	"brig/jail"
)

// Protected paths without a mount namespace.
//
// With namespaces an existing protected path is a read-only mount and the
// directories on the way to it are mount points, so a call can change none
// of them. Without, Landlock could only keep them by refusing new entries
// in every directory on the way (the workspace root, .git), which breaks
// git commit and every build that creates a directory. So a call without
// namespaces gets the whole grant, and the supervisor puts the protected
// paths back afterwards: before the tool starts it records each one under
// a write grant (content, type, mode, owner, times, and the identity of
// the directories on the way); after the call, when no process of it is
// left, anything that differs is moved to the quarantine (or deleted) and
// the recorded version written in its place, every step inside
// directories opened without following a link (safefs).
//
// What this does not give, and namespaces do: during the call the call
// itself, and any program of the user that looks, sees the changed file
// (a git run in another terminal during the call would run a hook the call
// planted); it is undone only when the call ends.

// Bounds on what a call's record of its protected paths may hold. Beyond
// them the call is refused: brig must keep a copy of every protected file
// to put it back.
const (
	maxRecordBytes   = 64 << 20
	maxRecordEntries = 20000
)

// pnode is one recorded file, directory or link.
type pnode struct {
	st   unix.Stat_t
	data []byte            // a regular file's content
	link string            // a link's target
	kids map[string]*pnode // a directory's entries
}

func (n *pnode) kind() uint32 { return n.st.Mode & unix.S_IFMT }

// same reports whether st is the very file n recorded, unchanged: the same
// inode with the same change time, which every write, chmod, chown, link,
// unlink or rename of it moves and no process can set back.
func (n *pnode) same(st *unix.Stat_t) bool {
	return st.Dev == n.st.Dev && st.Ino == n.st.Ino && st.Ctim == n.st.Ctim && st.Mode&unix.S_IFMT == n.kind()
}

// pin is a directory on the way from a write grant to a protected path.
type pin struct {
	dev, ino uint64
	attrs    safefs.Attrs
}

// guarded is one protected path of a call and its record.
type guarded struct {
	path string
	root string // the write grant it lies in
	pins []pin  // the directories from root (exclusive) to its parent, as far as they existed
	node *pnode // nil: it did not exist
}

// protectStore keeps the last trusted record of every protected path, so
// that a call that starts while another call that can write the same path
// runs records what was there before that one, not what it may have
// planted; and so that files unchanged since the last call are not read
// again.
type protectStore struct {
	mu       sync.Mutex
	records  map[string]*guarded
	inflight map[string]int
}

// restoreGuard is what one call recorded; finish puts it back.
type restoreGuard struct {
	s     *Supervisor
	paths []*guarded
}

// beginRestore records the protected paths of spec that lie in its write
// grants (and not in a hidden path, which the grant leaves out entirely),
// for finish to put back. It fails when they hold more than brig keeps.
func (s *Supervisor) beginRestore(spec jail.Spec) (*restoreGuard, error) {
	if p, g := linkToWriteGrant(spec); p != "" {
		return nil, fmt.Errorf("%w: the protected path %s is a symbolic link to %s, which this call may write as a whole; without user namespaces brig cannot keep what a program outside the jail runs from there. Remove the link (or make %s a directory of its own), or give brig user namespaces (see brig doctor)",
			jail.ErrUnenforceable, p, g, p)
	}
	targets := restoreTargets(spec)
	st := &s.protect
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.records == nil {
		st.records, st.inflight = map[string]*guarded{}, map[string]int{}
	}
	g := &restoreGuard{s: s}
	b := budget{bytes: maxRecordBytes, entries: maxRecordEntries}
	for _, t := range targets {
		rec := st.records[t.path]
		if rec == nil || st.inflight[t.path] == 0 {
			// No call that could change it is running: what is there now
			// is the user's.
			fresh, err := record(t.path, t.root, rec, &b)
			if err != nil {
				for _, done := range g.paths {
					st.inflight[done.path]--
				}
				return nil, err
			}
			if fresh == nil {
				delete(st.records, t.path)
				continue // behind a link of the user's (see record)
			}
			rec = fresh
			st.records[t.path] = rec
		}
		st.inflight[t.path]++
		g.paths = append(g.paths, rec)
	}
	return g, nil
}

// linkToWriteGrant finds a protected path of spec that leads, through a
// symbolic link, to a directory that is itself one of spec's write grants
// (.husky -> the toolchain cache): what lies there cannot be recorded from
// a grant that holds it, nor put back. It returns "" when there is none.
func linkToWriteGrant(spec jail.Spec) (path, grant string) {
	absent := jail.ReadAbsence(spec.Protected)
	for _, p := range spec.Protected {
		if absent.Absent(p) {
			continue
		}
		t, err := filepath.EvalSymlinks(p)
		if err != nil || t == p {
			continue
		}
		for _, g := range spec.Paths {
			if g.Access == jail.Write && g.Path == t {
				if fi, err := os.Stat(t); err == nil && fi.IsDir() {
					return p, t
				}
			}
		}
	}
	return "", ""
}

// target is a protected path to record and the write grant it lies in.
type target struct{ path, root string }

// restoreTargets lists the protected paths of spec a call could change:
// those under a write grant and not hidden; a protected symbolic link's
// target too when it lies in a write grant (what git follows it to). A path
// inside another listed one is covered by it. Each is recorded from the
// outermost write grant that holds it: the call can rename or replace
// anything below that, the directories on the way included.
func restoreTargets(spec jail.Spec) []target {
	root := func(p string) string {
		r := ""
		for _, g := range spec.Paths {
			if g.Access == jail.Write && within(p, g.Path) && p != g.Path && (r == "" || len(g.Path) < len(r)) {
				r = g.Path
			}
		}
		if fi, err := os.Stat(r); r != "" && (err != nil || !fi.IsDir()) {
			return "" // a file grant, or a missing one: nothing lies below it
		}
		return r
	}
	hidden := func(p string) bool {
		return slices.ContainsFunc(spec.Hidden, func(h string) bool { return within(p, h) })
	}
	var paths []string
	isLink := map[string]bool{} // the directories on the way, each looked at once
	for _, p := range spec.Protected {
		paths = append(paths, p)
		// A link on the way (.config a link, .config/lefthook.yml in what
		// it names): the link is recorded, to be put back if replaced,
		// and so is the file where the path leads.
		linked := false
		for d := filepath.Dir(p); d != "/" && d != "."; d = filepath.Dir(d) {
			l, seen := isLink[d]
			if !seen {
				fi, err := os.Lstat(d)
				l = err == nil && fi.Mode()&os.ModeSymlink != 0
				isLink[d] = l
				if l {
					paths = append(paths, d)
				}
			}
			linked = linked || l
		}
		if linked {
			if r, err := filepath.EvalSymlinks(p); err == nil {
				paths = append(paths, r)
			}
		}
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			if t, err := os.Readlink(p); err == nil {
				if !filepath.IsAbs(t) {
					t = filepath.Join(filepath.Dir(p), t)
				}
				if r, err := filepath.EvalSymlinks(t); err == nil {
					t = r
				}
				paths = append(paths, filepath.Clean(t))
			}
		}
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	var out []target
	kept := map[string]bool{}
	covered := func(p string) bool {
		for d := filepath.Dir(p); d != "/" && d != "."; d = filepath.Dir(d) {
			if kept[d] {
				return true
			}
		}
		return false
	}
	for _, p := range paths { // sorted: a directory before what it holds
		r := root(p)
		if r == "" || hidden(p) || covered(p) {
			continue // covered: recorded with the directory that holds it
		}
		kept[p] = true
		out = append(out, target{path: p, root: r})
	}
	return out
}

// budget counts what a call's record may still hold.
type budget struct{ bytes, entries int64 }

func (b *budget) take(path string, bytes int64) error {
	b.bytes -= bytes
	b.entries--
	if b.bytes < 0 || b.entries < 0 {
		return fmt.Errorf("%w: the protected paths of this workspace hold more than %d MiB or %d entries (at %s); without user namespaces brig keeps a copy of each to put it back after a call. Move the large files out of protected paths, or give brig user namespaces (see brig doctor)",
			jail.ErrUnenforceable, maxRecordBytes>>20, maxRecordEntries, path)
	}
	return nil
}

// record reads what path holds now, reusing the content of files that are
// unchanged since prev. It returns nil for a path behind a symbolic link
// the user made on the way (a .git that is a link, say): what git reaches
// through it is listed as a protected path of its own, and the link itself
// too.
func record(path, root string, prev *guarded, b *budget) (*guarded, error) {
	g := &guarded{path: path, root: root}
	dir, err := safefs.Open(root)
	if err != nil {
		return nil, nil // the grant itself is a link or gone: nothing below it to record
	}
	defer func() { dir.Close() }()
	rel, _ := filepath.Rel(root, filepath.Dir(path))
	if rel != "." {
		for _, name := range strings.Split(rel, "/") {
			st, err := dir.Stat(name)
			if err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
				// A link the user made on the way: the protected path it
				// leads to is listed as itself. Missing, or a file: the
				// protected path cannot exist (yet).
				if err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
					return nil, nil
				}
				return g, nil
			}
			sub, err := dir.Sub(name)
			if err != nil {
				return g, nil
			}
			dir.Close()
			dir = sub
			g.pins = append(g.pins, pin{dev: st.Dev, ino: st.Ino, attrs: safefs.AttrsOf(&st)})
		}
	}
	var old *pnode
	if prev != nil {
		old = prev.node
	}
	g.node, err = recordNode(dir, filepath.Base(path), old, b)
	return g, err
}

// recordNode reads name in dir (nil when it is missing).
func recordNode(dir *safefs.Dir, name string, old *pnode, b *budget) (*pnode, error) {
	st, err := dir.Stat(name)
	if err != nil {
		return nil, nil
	}
	n := &pnode{st: st}
	p := filepath.Join(dir.Path(), name)
	switch n.kind() {
	case unix.S_IFREG:
		if err := b.take(p, st.Size); err != nil {
			return nil, err
		}
		if old != nil && old.same(&st) {
			n.data = old.data
			return n, nil
		}
		data, rst, err := dir.ReadFile(name, maxRecordBytes)
		if errors.Is(err, safefs.ErrTooLarge) {
			return nil, b.take(p, maxRecordBytes+1)
		}
		if err != nil {
			return nil, fmt.Errorf("record the protected file %s: %w", p, err)
		}
		n.st, n.data = rst, data
	case unix.S_IFLNK:
		if err := b.take(p, 0); err != nil {
			return nil, err
		}
		if n.link, err = dir.Readlink(name); err != nil {
			return nil, fmt.Errorf("record the protected link %s: %w", p, err)
		}
	case unix.S_IFDIR:
		if err := b.take(p, 0); err != nil {
			return nil, err
		}
		sub, err := dir.Sub(name)
		if err != nil {
			return nil, fmt.Errorf("record the protected directory %s: %w", p, err)
		}
		defer sub.Close()
		names, err := sub.Names()
		if err != nil {
			return nil, fmt.Errorf("record the protected directory %s: %w", p, err)
		}
		n.kids = make(map[string]*pnode, len(names))
		for _, k := range names {
			var ok *pnode
			if old != nil {
				ok = old.kids[k]
			}
			kid, err := recordNode(sub, k, ok, b)
			if err != nil {
				return nil, err
			}
			if kid != nil {
				n.kids[k] = kid
			}
		}
	default:
		// A FIFO, socket or device: recorded as present; one the call
		// replaced is taken out but cannot be made again.
		if err := b.take(p, 0); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// finish puts back every recorded path the call changed and returns the
// paths it undid. Every process of the call is dead by now.
func (g *restoreGuard) finish() []string {
	if g == nil {
		return nil
	}
	r := restorer{s: g.s, pinsDone: map[string]bool{}}
	for _, p := range g.paths {
		r.restore(p)
	}
	st := &g.s.protect
	st.mu.Lock()
	for _, p := range g.paths {
		st.inflight[p.path]--
	}
	st.mu.Unlock()
	slices.Sort(r.undone)
	return slices.Compact(r.undone)
}

// restorer undoes the changes of one call.
type restorer struct {
	s        *Supervisor
	pinsDone map[string]bool
	undone   []string
}

func (r *restorer) report(p string) { r.undone = append(r.undone, p) }

func (r *restorer) fail(p, what string, err error) {
	r.report(p)
	r.s.log.Error("could not put back a protected path the call changed", "path", p, "step", what, "err", err)
}

// restore puts one protected path back.
func (r *restorer) restore(g *guarded) {
	dir, err := safefs.Open(g.root)
	if err != nil {
		r.fail(g.path, "open its write grant", err)
		return
	}
	rel, _ := filepath.Rel(g.root, filepath.Dir(g.path))
	if rel != "." {
		for i, name := range strings.Split(rel, "/") {
			var want *pin
			if i < len(g.pins) {
				want = &g.pins[i]
			}
			sub := r.pin(dir, name, want)
			dir.Close()
			if sub == nil {
				return // nothing below can exist
			}
			dir = sub
		}
	}
	defer dir.Close()
	r.node(dir, filepath.Base(g.path), g.node)
}

// pin makes sure name in dir is the directory the record found on the way
// to a protected path (want; nil when there was none then) and opens it:
// the original is moved back if the call renamed it within dir, and
// anything but a directory in its place is taken out. A different
// directory the call made there stays (git run in it finds the protected
// files put back by path). Where there was no directory, a symbolic link
// the call put there (which would lead the protected path elsewhere) is
// taken out, and a file, which no protected path can lie below, stays.
// It returns nil when nothing is there to open.
func (r *restorer) pin(dir *safefs.Dir, name string, want *pin) *safefs.Dir {
	p := filepath.Join(dir.Path(), name)
	st, err := dir.Stat(name)
	isDir := err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
	switch {
	case want == nil && err != nil:
		return nil
	case want == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK:
		if !r.pinsDone[p] {
			r.pinsDone[p] = true
			r.report(p)
			if err := r.s.quarantine(dir, name); err != nil {
				r.fail(p, "take out the link the call put on the way to a protected path", err)
			}
		}
		return nil
	case want == nil && !isDir:
		return nil
	case want == nil && isDir:
		// Made by the call (it was not there before): what it holds is
		// checked below.
	case want != nil && isDir && st.Dev == want.dev && st.Ino == want.ino:
	case r.pinsDone[p]:
		// Already handled for another protected path below it.
	default:
		r.pinsDone[p] = true
		r.report(p)
		if want != nil {
			if orig := findInode(dir, want.dev, want.ino, name); orig != "" {
				if err == nil {
					if err := r.s.quarantine(dir, name); err != nil {
						r.fail(p, "take out what replaced it", err)
						return nil
					}
				}
				if err := dir.Rename(orig, dir, name); err != nil {
					r.fail(p, "move the original back from "+orig, err)
					return nil
				}
				break
			}
		}
		if err == nil && !isDir {
			if err := r.s.quarantine(dir, name); err != nil {
				r.fail(p, "take out what replaced it", err)
				return nil
			}
		}
		if err == nil && isDir {
			break
		}
		if want == nil {
			return nil
		}
		sub, err := dir.Mkdir(name)
		if err != nil {
			r.fail(p, "make it again", err)
			return nil
		}
		if err := sub.SetAttrs(want.attrs); err != nil {
			r.s.log.Warn("a directory on the way to a protected path was made again without its mode or times", "path", p, "err", err)
		}
		return sub
	}
	sub, err := dir.Sub(name)
	if err != nil {
		r.fail(p, "open it", err)
		return nil
	}
	return sub
}

// findInode returns the name of the entry of dir (other than skip) that is
// the inode dev/ino, or "".
func findInode(dir *safefs.Dir, dev, ino uint64, skip string) string {
	names, err := dir.Names()
	if err != nil {
		return ""
	}
	for _, n := range names {
		if n == skip {
			continue
		}
		if st, err := dir.Stat(n); err == nil && st.Dev == dev && st.Ino == ino {
			return n
		}
	}
	return ""
}

// node makes name in dir what n recorded (nil: nothing). It reports
// whether anything had to change.
func (r *restorer) node(dir *safefs.Dir, name string, n *pnode) bool {
	p := filepath.Join(dir.Path(), name)
	st, err := dir.Stat(name)
	if err != nil {
		if n == nil {
			return false
		}
		r.report(p)
		r.create(dir, name, n)
		return true
	}
	if n == nil {
		r.report(p)
		if err := r.s.quarantine(dir, name); err != nil {
			r.fail(p, "take out what the call created", err)
		}
		return true
	}
	if st.Dev != n.st.Dev || st.Ino != n.st.Ino || st.Mode&unix.S_IFMT != n.kind() {
		// Replaced. The original may have been renamed within dir.
		r.report(p)
		if orig := findInode(dir, n.st.Dev, n.st.Ino, name); orig != "" {
			if err := r.s.quarantine(dir, name); err != nil {
				r.fail(p, "take out what replaced it", err)
				return true
			}
			if err := dir.Rename(orig, dir, name); err != nil {
				r.fail(p, "move the original back from "+orig, err)
				return true
			}
			r.node(dir, name, n) // now the original: check what is in it
			return true
		}
		r.replace(dir, name, n)
		return true
	}
	if n.kind() != unix.S_IFDIR {
		if st.Ctim == n.st.Ctim {
			return false
		}
		// Written, linked, or its mode or owner changed: a new file
		// (any link the call made keeps the changed one).
		r.report(p)
		r.replace(dir, name, n)
		return true
	}
	// The same directory: its entries, then its own mode and times.
	sub, err := dir.Sub(name)
	if err != nil {
		r.fail(p, "open it", err)
		return true
	}
	defer sub.Close()
	changed := st.Ctim != n.st.Ctim
	names, err := sub.Names()
	if err != nil {
		r.fail(p, "list it", err)
		return true
	}
	for _, k := range names {
		if _, ok := n.kids[k]; !ok {
			changed = true
			r.node(sub, k, nil)
		}
	}
	kids := make([]string, 0, len(n.kids))
	for k := range n.kids {
		kids = append(kids, k)
	}
	slices.Sort(kids)
	for _, k := range kids {
		if r.node(sub, k, n.kids[k]) {
			changed = true
		}
	}
	if changed {
		r.report(p)
		if err := sub.SetAttrs(safefs.AttrsOf(&n.st)); err != nil {
			r.s.log.Warn("a protected directory was put back without its mode or times", "path", p, "err", err)
		}
	}
	return changed
}

// replace moves what is at name to the quarantine and makes n there.
func (r *restorer) replace(dir *safefs.Dir, name string, n *pnode) {
	p := filepath.Join(dir.Path(), name)
	if err := r.s.quarantine(dir, name); err != nil {
		r.fail(p, "take out the changed version", err)
		return
	}
	r.create(dir, name, n)
}

// create makes n at name in dir, which is free.
func (r *restorer) create(dir *safefs.Dir, name string, n *pnode) {
	p := filepath.Join(dir.Path(), name)
	a := safefs.AttrsOf(&n.st)
	switch n.kind() {
	case unix.S_IFREG:
		if err := dir.CreateFile(name, n.data, a); err != nil {
			r.fail(p, "write it again", err)
		}
	case unix.S_IFLNK:
		if err := dir.SymlinkAttrs(n.link, name, a); err != nil {
			r.fail(p, "make the link again", err)
		}
	case unix.S_IFDIR:
		sub, err := dir.Mkdir(name)
		if err != nil {
			r.fail(p, "make it again", err)
			return
		}
		defer sub.Close()
		for k, kid := range n.kids {
			r.create(sub, k, kid)
		}
		if err := sub.SetAttrs(a); err != nil {
			r.s.log.Warn("a protected directory was made again without its mode or times", "path", p, "err", err)
		}
	default:
		r.s.log.Warn("a protected special file (FIFO, socket or device) the call replaced was taken out and not made again", "path", p)
	}
}

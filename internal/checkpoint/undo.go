package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Call is one checkpointed call of a session, as the journal has it.
type Call struct {
	// N numbers the session's checkpointed calls from 1.
	N    int       `json:"n"`
	ID   string    `json:"id"`
	Tool string    `json:"tool"`
	Time time.Time `json:"time"`
	// Changes is what the call changed; nil when brig stopped before the
	// call ended and nothing came after it (its changes are worked out
	// from the workspace when it is undone).
	Changes *ChangeSet `json:"changes,omitempty"`
	Undone  bool       `json:"undone,omitempty"`
	// UndoneAt is when an undo restored what it changed.
	UndoneAt time.Time `json:"undone_at,omitzero"`

	before []RootState
	after  []RootState // nil: unfinished
}

// Calls lists session's checkpointed calls in order.
func (s *Store) Calls(session string) ([]Call, error) {
	evs, unlock, err := s.indexedEvents()
	if err != nil {
		return nil, err
	}
	defer unlock()
	return s.calls(evs, session)
}

// indexedEvents reads the journal's events, then locks the store and reads
// its index; unlock releases the lock.
func (s *Store) indexedEvents() (evs []Event, unlock func(), err error) {
	if evs, err = s.Events(); err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	if err := s.readIndex(); err != nil {
		s.mu.Unlock()
		return nil, nil, err
	}
	return evs, s.mu.Unlock, nil
}

func (s *Store) calls(evs []Event, session string) ([]Call, error) {
	var calls []Call
	byID := map[string]int{}
	for _, ev := range evs {
		if ev.Session != session {
			continue
		}
		switch ev.Kind {
		case EventBefore:
			byID[ev.Call] = len(calls)
			calls = append(calls, Call{N: len(calls) + 1, ID: ev.Call, Tool: ev.Tool, Time: ev.Time, before: ev.Roots})
		case EventAfter:
			if i, ok := byID[ev.Call]; ok {
				calls[i].after, calls[i].Changes = ev.Roots, ev.Changes
			}
		case EventUndo:
			for _, id := range ev.Undone {
				if i, ok := byID[id]; ok {
					calls[i].Undone, calls[i].UndoneAt = true, ev.Time
				}
			}
		}
	}
	// A call brig never saw the end of: the state before the next call
	// of the session is the best record of what it left.
	for i := range calls {
		c := &calls[i]
		if c.after != nil || i+1 >= len(calls) {
			continue
		}
		if after, ok := s.stateAt(c.before, calls[i+1].before); ok {
			c.after = after
			_, cs, err := s.diff(&Snapshot{Roots: c.before}, &Snapshot{Roots: after})
			if err == nil {
				cs.Unfinished = true
				c.Changes = cs
			}
		}
	}
	return calls, nil
}

// Undoable is a session with calls that changed files and are not undone.
type Undoable struct {
	Session string
	// Last is when the latest of those calls began.
	Last time.Time
}

// Undoable lists the sessions of the store, except one, that have a call
// brig undo would put back, the latest such call first. It reads the
// journal once.
func (s *Store) Undoable(except string) ([]Undoable, error) {
	evs, unlock, err := s.indexedEvents()
	if err != nil {
		return nil, err
	}
	defer unlock()
	bySession := map[string][]Event{}
	for _, ev := range evs {
		if ev.Session != except {
			bySession[ev.Session] = append(bySession[ev.Session], ev)
		}
	}
	var out []Undoable
	for id, sevs := range bySession {
		calls, err := s.calls(sevs, id)
		if err != nil {
			return nil, err
		}
		for i := len(calls) - 1; i >= 0; i-- {
			if undoable(calls[i]) {
				out = append(out, Undoable{Session: id, Last: calls[i].Time})
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b Undoable) int {
		if c := b.Last.Compare(a.Last); c != 0 {
			return c
		}
		return strings.Compare(b.Session, a.Session)
	})
	return out, nil
}

// CanUndo reports whether brig undo would put back what c changed.
func (c Call) CanUndo() bool { return undoable(c) }

// undoable reports whether an undo would put back what c changed: it is
// not undone, and changed something (or brig never saw it end).
func undoable(c Call) bool { return !c.Undone && (c.Changes == nil || !c.Changes.Empty()) }

// stateAt finds, for each root in roots, its state inside a later set of
// root states (which may name it or an ancestor).
func (s *Store) stateAt(roots, later []RootState) ([]RootState, bool) {
	var out []RootState
	for _, r := range roots {
		found := false
		for _, l := range later {
			if !within(r.Path, l.Path) {
				continue
			}
			e, err := s.lookup(l, r.Path)
			if err != nil {
				return nil, false
			}
			st := RootState{Path: r.Path, Entry: Entry{Name: filepath.Base(r.Path)}}
			if e != nil {
				st.Entry = *e
			}
			out = append(out, st)
			found = true
			break
		}
		if !found {
			return nil, false
		}
	}
	return out, true
}

// Conflict is a path an undo would overwrite although it changed after
// brig's call (outside brig), or cannot clear.
type Conflict struct {
	Path string `json:"path"`
	Why  string `json:"why"`
	// Kept is where a forced undo copied the file it overwrote, for the
	// user to take back; Link is the target of a symbolic link it
	// overwrote (said, not copied: a link copied out of the workspace
	// could point anywhere, and cp follows it). Both empty when nothing
	// was overwritten (a directory that holds other files is kept).
	Kept string `json:"kept,omitempty"`
	Link string `json:"link,omitempty"`
}

// UndoOptions say what to undo.
type UndoOptions struct {
	Session string
	// To is the earliest call to undo (an id, a unique id prefix, or its
	// number N); every later call of the session that is not undone yet
	// is undone with it. Empty: the last call that changed something.
	To string
	// Force overwrites changes made outside brig after the calls (the
	// overwritten state is kept in the store, in the undo's event).
	Force bool
	// DryRun plans and checks without changing anything.
	DryRun bool
}

// UndoReport is what an undo did (or, refused or dry, would do).
type UndoReport struct {
	Session string `json:"session"`
	Calls   []Call `json:"calls"` // undone, oldest first
	// Changes are what the undo changed (relative to the workspace as it
	// was just before it): restored, recreated or removed paths; when it
	// was not applied (a dry run, or refused), what it would change.
	Changes   []Change   `json:"changes,omitempty"`
	More      int        `json:"more,omitempty"`
	Restored  int        `json:"restored"`
	Removed   int        `json:"removed"`
	Conflicts []Conflict `json:"conflicts,omitempty"`
	// Left are paths the undo could not or would not put back (content
	// never stored, excluded trees, directories holding other files).
	Left    []Note `json:"left,omitempty"`
	Applied bool   `json:"applied"`
	Forced  bool   `json:"forced,omitempty"`
}

// ErrConflict is returned (wrapped) when an undo is refused because files
// changed outside brig after the calls; the report lists them.
var ErrConflict = errors.New("files changed after brig's calls")

// ErrNothing is returned when there is nothing to undo.
var ErrNothing = errors.New("nothing to undo")

// action is one path to put back.
type action struct {
	path    string
	target  Entry // TypeNone: remove
	current Entry
}

// Undo puts back what calls of a session changed. Unless forced, it
// refuses (ErrConflict, with the conflicts in the report) when a path the
// calls changed differs from what the last of them left there. It holds the
// store's lock throughout, so snapshots of other calls wait.
func (s *Store) Undo(ctx context.Context, o UndoOptions) (*UndoReport, error) {
	evs, err := s.Events()
	if err != nil {
		return nil, err
	}
	var rep *UndoReport
	err = s.locked(ctx, func() error {
		rep, err = s.undo(ctx, evs, o)
		return err
	})
	return rep, err
}

func (s *Store) undo(ctx context.Context, evs []Event, o UndoOptions) (*UndoReport, error) {
	rep := &UndoReport{Session: o.Session, Forced: o.Force}
	calls, err := s.calls(evs, o.Session)
	if err != nil {
		return nil, err
	}
	set, err := selectCalls(calls, o.To, o.Session)
	if err != nil {
		return nil, err
	}
	var rootPaths []string
	for _, c := range set {
		for _, r := range c.before {
			rootPaths = append(rootPaths, r.Path)
		}
	}
	if rootPaths, err = NormalizeRoots(rootPaths); err != nil {
		return nil, err
	}
	// The workspace as it is now, stored: it is what a conflict is judged
	// against, and what a forced undo overwrites is kept.
	w, err := s.newWriter()
	if err != nil {
		return nil, err
	}
	current, err := s.snapshot(ctx, w, rootPaths, false)
	if err == nil {
		err = w.commit()
	}
	if err != nil {
		w.abort()
		return nil, fmt.Errorf("snapshot before the undo: %w", err)
	}
	// For each path: what was there before the earliest call that changed
	// it, and what the latest one left.
	target, expected := map[string]Entry{}, map[string]Entry{}
	for _, c := range set {
		after := c.after
		if after == nil {
			after, _ = s.stateAt(c.before, current.Roots)
		}
		pairs, _, err := s.diff(&Snapshot{Roots: c.before}, &Snapshot{Roots: after})
		if err != nil {
			return nil, err
		}
		for _, p := range pairs {
			if _, ok := target[p.Path]; !ok {
				target[p.Path] = p.Before
			}
			expected[p.Path] = p.After
		}
		rep.Calls = append(rep.Calls, c)
	}
	paths := make([]string, 0, len(target))
	for p := range target {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	var actions []action
	for _, p := range paths {
		cur, err := s.currentAt(current, p)
		if err != nil {
			return nil, err
		}
		t, want := target[p], expected[p]
		if cur.sameContent(&t) && cur.Type == t.Type {
			continue // already as it was
		}
		if t.Type == TypeFile && t.Flags&FlagNotStored != 0 {
			rep.Left = append(rep.Left, Note{Path: p, Why: "its earlier content was not stored (" + t.Why + ")"})
			continue
		}
		if t.Type == TypeOther {
			rep.Left = append(rep.Left, Note{Path: p, Why: "a special file (FIFO, socket or device) is not recreated"})
			continue
		}
		if !cur.sameContent(&want) || cur.Type != want.Type {
			rep.Conflicts = append(rep.Conflicts, Conflict{Path: p, Why: describeConflict(cur, want)})
		}
		actions = append(actions, action{path: p, target: t, current: cur})
	}
	// A directory to remove must hold only what the calls created.
	affected := make(map[string]bool, len(actions))
	for _, a := range actions {
		affected[a.path] = true
	}
	for _, a := range actions {
		if a.current.Type != TypeDir || a.target.Type == TypeDir {
			continue
		}
		var others []string
		if a.current.Flags&FlagExcluded == 0 && !a.current.Hash.IsZero() {
			t, err := s.tree(a.current.Hash)
			if err != nil {
				return nil, err
			}
			for _, e := range t {
				if !affected[a.path+"/"+e.Name] {
					others = append(others, e.Name)
				}
			}
		}
		if len(others) > 0 {
			rep.Conflicts = append(rep.Conflicts, Conflict{Path: a.path, Why: fmt.Sprintf("the directory holds %s, which the undone calls did not create (it is kept)", strings.Join(capList(others, 5), ", "))})
		}
	}
	slices.SortFunc(rep.Conflicts, func(a, b Conflict) int { return strings.Compare(a.Path, b.Path) })
	if len(actions) == 0 {
		if len(rep.Left) == 0 {
			rep.Left = append(rep.Left, Note{Why: "the files are already as they were before these calls"})
		}
	}
	if o.DryRun || (len(rep.Conflicts) > 0 && !o.Force) {
		plan(actions, rep)
		if len(rep.Conflicts) > 0 && !o.Force {
			return rep, fmt.Errorf("%w: %d path(s) differ from what brig's calls left (use --force to overwrite them)", ErrConflict, len(rep.Conflicts))
		}
		return rep, nil
	}
	now := time.Now().UTC()
	if o.Force && len(rep.Conflicts) > 0 {
		if err := s.keepOverwritten(actions, rep, now); err != nil {
			return rep, fmt.Errorf("nothing was undone: could not copy what --force would overwrite: %w", err)
		}
	}
	left, err := s.apply(actions, rootPaths, rep)
	rep.Left = append(rep.Left, left...)
	if err != nil {
		return rep, err
	}
	rep.Applied = true
	ev := Event{Kind: EventUndo, Time: now, Session: o.Session, Roots: current.Roots, Forced: o.Force}
	for _, c := range set {
		ev.Undone = append(ev.Undone, c.ID)
	}
	for _, c := range rep.Conflicts {
		ev.Overwritten = append(ev.Overwritten, c.Path)
	}
	if err := s.appendJournal(ev); err != nil {
		return rep, fmt.Errorf("the files were restored, but the undo could not be journalled: %w", err)
	}
	for i := range rep.Calls {
		rep.Calls[i].Undone, rep.Calls[i].UndoneAt = true, ev.Time
	}
	return rep, nil
}

// OverwrittenDir is where a forced undo copies what it overwrites, under
// the store's directory: one directory per undo, the overwritten paths
// under it by their full path.
const OverwrittenDir = "overwritten"

// keepOverwritten copies what a forced undo is about to overwrite (the
// conflicting paths' current files) out of the store into plain files,
// and notes each copy, or a link's target, in its conflict: the journal
// keeps them too, but a user who wants an edit back needs a file to copy,
// not a hash.
func (s *Store) keepOverwritten(actions []action, rep *UndoReport, at time.Time) error {
	dir := filepath.Join(s.dir, OverwrittenDir, at.Format("20060102T150405.000Z"))
	current := make(map[string]Entry, len(actions))
	for _, a := range actions {
		current[a.path] = a.current
	}
	for i, c := range rep.Conflicts {
		e, ok := current[c.Path]
		if !ok {
			continue // a directory that holds other files: it is kept
		}
		dest := filepath.Join(dir, c.Path)
		switch {
		case e.Type == TypeFile && e.Flags&FlagNotStored == 0:
			data, err := s.read(e.Hash)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
				return err
			}
			if err := os.WriteFile(dest, data, 0o600); err != nil {
				return err
			}
		case e.Type == TypeSymlink:
			rep.Conflicts[i].Link = e.Link
			continue
		default:
			continue // removed by the user, or a directory: nothing to copy
		}
		rep.Conflicts[i].Kept = dest
	}
	return nil
}

// plan lists in rep.Changes what the actions would change, for an undo
// that is not carried out (a dry run, or one refused for conflicts): what
// apply would note, had everything gone well.
func plan(actions []action, rep *UndoReport) {
	note := func(p string, kind ChangeKind, t Type) {
		if len(rep.Changes) < MaxListed {
			rep.Changes = append(rep.Changes, Change{Path: p, Kind: kind, Type: t})
		} else {
			rep.More++
		}
	}
	for _, a := range actions {
		cur, t := a.current, a.target
		switch {
		case t.Type == TypeNone:
			if cur.Type != TypeNone {
				note(a.path, Deleted, cur.Type)
			}
		case t.Type == TypeDir && cur.Type == TypeDir:
			if cur.Mode != t.Mode {
				note(a.path, Mode, TypeDir)
			}
		case cur.Type == TypeNone || cur.Type == TypeDir:
			note(a.path, Created, t.Type)
		default:
			note(a.path, Modified, t.Type)
		}
	}
}

// selectCalls picks the calls to undo: the last one that changed
// something, or the one named by to and every later one not yet undone.
// session is the calls' session, named when to names none of them.
func selectCalls(calls []Call, to, session string) ([]Call, error) {
	changed := undoable
	if to == "" {
		for i := len(calls) - 1; i >= 0; i-- {
			if changed(calls[i]) {
				return []Call{calls[i]}, nil
			}
		}
		return nil, fmt.Errorf("%w: no call of this session changed a file that is not undone already", ErrNothing)
	}
	i, err := findCall(calls, to, session)
	if err != nil {
		return nil, err
	}
	if calls[i].Undone {
		return nil, fmt.Errorf("%w: call %d (%s) was undone already", ErrNothing, calls[i].N, calls[i].ID)
	}
	var set []Call
	for _, c := range calls[i:] {
		if changed(c) {
			set = append(set, c)
		}
	}
	if len(set) == 0 {
		return nil, fmt.Errorf("%w: neither call %d (%s) nor a later one changed a file", ErrNothing, calls[i].N, calls[i].ID)
	}
	return set, nil
}

// findCall resolves a call's number, id or unique id prefix among the
// calls of session, which its error names (brig undo --session, or the
// workspace's latest: "this session" did not say which).
func findCall(calls []Call, ref, session string) (int, error) {
	ref = strings.TrimPrefix(ref, "#")
	if n, err := strconv.Atoi(ref); err == nil {
		if n < 1 || n > len(calls) {
			has := fmt.Sprintf("%d checkpointed calls", len(calls))
			if len(calls) == 1 {
				has = "1 checkpointed call"
			}
			return 0, fmt.Errorf("no call %d in session %s (it has %s; brig changes %s lists them)", n, session, has, session)
		}
		return n - 1, nil
	}
	found := -1
	for i, c := range calls {
		if c.ID == ref {
			return i, nil
		}
		if strings.HasPrefix(c.ID, ref) {
			if found >= 0 {
				return 0, fmt.Errorf("%q names more than one call; give more of the id", ref)
			}
			found = i
		}
	}
	if found < 0 {
		return 0, fmt.Errorf("no call %q in session %s (brig changes %s lists them)", ref, session, session)
	}
	return found, nil
}

// currentAt is what the snapshot found at path (TypeNone when absent or
// when a directory on the way is not a directory any more).
func (s *Store) currentAt(sn *Snapshot, path string) (Entry, error) {
	for _, r := range sn.Roots {
		if within(path, r.Path) {
			e, err := s.lookup(r, path)
			if err != nil || e == nil {
				return Entry{Name: filepath.Base(path)}, err
			}
			return *e, nil
		}
	}
	return Entry{}, fmt.Errorf("checkpoint: %s is outside the snapshot", path)
}

func describeConflict(cur, want Entry) string {
	switch {
	case want.Type == TypeNone && cur.Type != TypeNone:
		return fmt.Sprintf("a %s was created here after brig's call removed it", cur.Type)
	case cur.Type == TypeNone:
		return fmt.Sprintf("the %s brig's call left here was removed afterwards", want.Type)
	case cur.Type != want.Type:
		return fmt.Sprintf("brig's call left a %s here; now it is a %s", want.Type, cur.Type)
	case cur.Mode != want.Mode && (cur.Type == TypeDir || cur.Hash == want.Hash && cur.Link == want.Link):
		return fmt.Sprintf("its permissions changed after brig's call (%04o, brig left %04o)", cur.Mode, want.Mode)
	case cur.Type == TypeSymlink:
		return fmt.Sprintf("the link now points to %q (brig's call left %q)", cur.Link, want.Link)
	}
	return "modified after brig's call"
}

func capList(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(slices.Clone(s[:n]), fmt.Sprintf("%d more", len(s)-n))
}

// apply carries out the actions, root by root, through descriptors opened
// without following symlinks: removals deepest first, then creations
// shallowest first, then directory permissions deepest first.
func (s *Store) apply(actions []action, roots []string, rep *UndoReport) ([]Note, error) {
	var left []Note
	var errs []error
	byRoot := map[string][]action{}
	for _, a := range actions {
		for _, r := range roots {
			if within(a.path, r) {
				byRoot[r] = append(byRoot[r], a)
				break
			}
		}
	}
	root := os.Geteuid() == 0
	for _, r := range roots {
		acts := byRoot[r]
		if len(acts) == 0 {
			continue
		}
		parent := filepath.Dir(r)
		pfd, err := openAbsDir(parent)
		if err != nil {
			errs = append(errs, fmt.Errorf("restore under %s: %w", r, err))
			continue
		}
		a := &applier{s: s, dirs: newDirCache(pfd), parent: parent, chown: root, rep: rep, modes: map[string]uint32{}}
		a.run(acts)
		a.dirs.close()
		unix.Close(pfd)
		left = append(left, a.left...)
		errs = append(errs, a.errs...)
	}
	return left, errors.Join(errs...)
}

// applier restores the actions under one root.
type applier struct {
	s      *Store
	dirs   *dirCache
	parent string
	chown  bool
	rep    *UndoReport
	left   []Note
	errs   []error
	// modes are directory permissions to set at the end (the target's,
	// or the original of a directory opened up to work inside it).
	modes map[string]uint32
	// kept are directories that could not be removed: nothing is created
	// at or below them.
	kept []string
}

func (a *applier) rel(p string) string { return strings.TrimPrefix(p, a.parent+"/") }

func (a *applier) isKept(p string) bool {
	for _, k := range a.kept {
		if within(p, k) && p != k {
			return true
		}
	}
	return false
}

func (a *applier) note(p string, kind ChangeKind, t Type) {
	if len(a.rep.Changes) < MaxListed {
		a.rep.Changes = append(a.rep.Changes, Change{Path: p, Kind: kind, Type: t})
	} else {
		a.rep.More++
	}
}

func (a *applier) fail(p string, err error) {
	a.errs = append(a.errs, fmt.Errorf("%s: %w", p, err))
}

// do runs op in the directory holding p; a directory that refuses (its
// permissions) is opened up once and put back at the end.
func (a *applier) do(p string, op func(dirfd int, name string) error) error {
	dir, name := split(a.rel(p))
	fd, err := a.dirs.get(dir)
	if err != nil {
		return err
	}
	err = op(fd, name)
	if !errors.Is(err, unix.EACCES) && !errors.Is(err, unix.EPERM) {
		return err
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&0o300 == 0o300 {
		return err
	}
	if cerr := chmodFd(fd, (st.Mode&0o7777)|0o700); cerr != nil {
		return err
	}
	full := filepath.Join(a.parent, dir)
	if _, ok := a.modes[full]; !ok {
		a.modes[full] = st.Mode & 0o7777
	}
	return op(fd, name)
}

func (a *applier) run(acts []action) {
	// Removals, deepest first (reverse order puts children before their
	// directory).
	for i := len(acts) - 1; i >= 0; i-- {
		act := acts[i]
		cur, t := act.current, act.target
		switch {
		case cur.Type == TypeNone:
			continue
		case cur.Type == TypeDir && t.Type == TypeDir:
			continue
		case cur.Type != TypeDir && (t.Type == TypeFile || t.Type == TypeSymlink):
			continue // replaced by a rename
		}
		isDir := cur.Type == TypeDir
		if isDir {
			a.dirs.forget(a.rel(act.path))
		}
		err := a.do(act.path, func(fd int, name string) error { return removeAt(fd, name, isDir) })
		switch {
		case err == nil:
			if t.Type == TypeNone {
				a.rep.Removed++
				a.note(act.path, Deleted, cur.Type)
			}
		case errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST):
			a.kept = append(a.kept, act.path)
			a.left = append(a.left, Note{Path: act.path, Why: "kept: the directory holds files the undone calls did not create"})
		default:
			a.fail(act.path, err)
		}
	}
	// Creations, shallowest first.
	for _, act := range acts {
		t := act.target
		if t.Type == TypeNone || a.isKept(act.path) {
			continue
		}
		uid, gid := -1, -1
		if a.chown {
			uid, gid = int(t.UID), int(t.GID)
		}
		var err error
		kind := Modified
		if act.current.Type == TypeNone || act.current.Type == TypeDir && t.Type != TypeDir {
			kind = Created
		}
		switch t.Type {
		case TypeDir:
			if act.current.Type == TypeDir && !slices.Contains(a.kept, act.path) {
				a.modes[act.path] = t.Mode
				if act.current.Mode != t.Mode {
					a.rep.Restored++
					a.note(act.path, Mode, TypeDir)
				}
				continue
			}
			if slices.Contains(a.kept, act.path) {
				continue
			}
			err = a.do(act.path, func(fd int, name string) error {
				if err := unix.Mkdirat(fd, name, 0o700); err != nil {
					return err
				}
				if uid >= 0 {
					return unix.Fchownat(fd, name, uid, gid, unix.AT_SYMLINK_NOFOLLOW)
				}
				return nil
			})
			a.modes[act.path] = t.Mode
		case TypeFile:
			var data []byte
			if data, err = a.s.read(t.Hash); err == nil {
				err = a.do(act.path, func(fd int, name string) error { return writeFileAt(fd, name, data, t.Mode, uid, gid) })
			}
		case TypeSymlink:
			err = a.do(act.path, func(fd int, name string) error { return symlinkAt(fd, name, t.Link, uid, gid) })
		}
		if err != nil {
			a.fail(act.path, err)
			continue
		}
		a.rep.Restored++
		a.note(act.path, kind, t.Type)
	}
	// Directory permissions, deepest first (a read-only directory is made
	// read-only after what goes inside it).
	dirs := make([]string, 0, len(a.modes))
	for d := range a.modes {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	for i := len(dirs) - 1; i >= 0; i-- {
		d := dirs[i]
		if a.isKept(d) {
			continue
		}
		var err error
		if d == a.parent {
			err = chmodFd(a.dirs.root, a.modes[d])
		} else {
			err = a.do(d, func(fd int, name string) error { return chmodDirAt(fd, name, a.modes[d]) })
		}
		if err != nil {
			a.fail(d, err)
		}
	}
}

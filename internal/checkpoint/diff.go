package checkpoint

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// pair is one path that differs between two snapshots: what was there
// before and after (Type TypeNone: nothing). Every descendant of a created
// or deleted directory is a pair of its own.
type pair struct {
	Path          string
	Before, After Entry
}

// ChangeKind is how one path changed.
type ChangeKind string

// The kinds of change.
const (
	Created  ChangeKind = "created"
	Modified ChangeKind = "modified" // content, symlink target, or what kind of file it is
	Mode     ChangeKind = "mode"     // permissions only
	Deleted  ChangeKind = "deleted"
)

// Change is one changed path, for display.
type Change struct {
	Path string     `json:"path"` // absolute
	Kind ChangeKind `json:"kind"`
	Type Type       `json:"type"` // what is there now (what was, when deleted)
}

// MaxListed bounds the changes a ChangeSet lists one by one (the counts
// are always whole).
const MaxListed = 200

// ChangeSet is what a call changed in the paths it could write.
type ChangeSet struct {
	Created     int `json:"created,omitempty"`  // files, symlinks and special files
	Modified    int `json:"modified,omitempty"` // content, mode, symlink target or type
	Deleted     int `json:"deleted,omitempty"`
	DirsCreated int `json:"dirs_created,omitempty"`
	DirsChanged int `json:"dirs_changed,omitempty"` // permissions
	DirsDeleted int `json:"dirs_deleted,omitempty"`
	// Changes lists the changed paths, at most MaxListed; More counts the
	// rest.
	Changes []Change `json:"changes,omitempty"`
	More    int      `json:"more,omitempty"`
	// Excluded are trees in the grant that snapshots leave out (undo
	// never touches them), with ExcludedChanged those whose own entry
	// changed during the call (created, removed, or an entry directly in
	// them added or removed).
	Excluded        []Note   `json:"excluded,omitempty"`
	ExcludedChanged []string `json:"excluded_changed,omitempty"`
	// NotRestorable are changed paths whose earlier content was not
	// stored (too large, unreadable): undo cannot bring them back.
	NotRestorable []Note `json:"not_restorable,omitempty"`
	// Unfinished: brig stopped before the call ended (a crash); the
	// changes are what differs from the snapshot before it.
	Unfinished bool `json:"unfinished,omitempty"`
	// Shared: another brig session had the workspace open when the call
	// began or ended (Store.Announce), so what it wrote meanwhile may be
	// counted here too, and undoing the call would put that back.
	Shared bool `json:"shared,omitempty"`
}

// Files is how many files (symlinks and special files included) changed.
func (c *ChangeSet) Files() int { return c.Created + c.Modified + c.Deleted }

// Empty reports whether nothing undo covers changed.
func (c *ChangeSet) Empty() bool {
	return c == nil || c.Files()+c.DirsCreated+c.DirsChanged+c.DirsDeleted == 0
}

// Summary says what changed in a few words: "3 files changed, 1 created,
// 1 deleted", "1 file created" (all of one kind: not "1 file changed, 1
// created", which reads as two), "1 directory created", "no files
// changed"; plus excluded trees that changed.
func (c *ChangeSet) Summary() string {
	if c == nil {
		return ""
	}
	var parts []string
	switch n := c.Files(); {
	case n > 0 && c.Created == n:
		parts = append(parts, plural(n, "file", "files")+" created")
	case n > 0 && c.Deleted == n:
		parts = append(parts, plural(n, "file", "files")+" deleted")
	case n > 0:
		parts = append(parts, plural(n, "file", "files")+" changed")
		if c.Created > 0 {
			parts = append(parts, fmt.Sprintf("%d created", c.Created))
		}
		if c.Deleted > 0 {
			parts = append(parts, fmt.Sprintf("%d deleted", c.Deleted))
		}
	}
	for _, d := range []struct {
		n    int
		what string
	}{{c.DirsCreated, "created"}, {c.DirsChanged, "changed"}, {c.DirsDeleted, "deleted"}} {
		if d.n > 0 {
			parts = append(parts, plural(d.n, "directory", "directories")+" "+d.what)
		}
	}
	if len(parts) == 0 && len(c.ExcludedChanged) == 0 {
		parts = append(parts, "no files changed")
	}
	if len(c.ExcludedChanged) > 0 {
		// Alone it says so: after "no files changed" it read as a
		// contradiction (new user, 2026-12-03).
		only := ""
		if len(parts) == 0 {
			only = "only "
		}
		names := make([]string, len(c.ExcludedChanged))
		for i, p := range c.ExcludedChanged {
			names[i] = filepath.Base(p)
		}
		slices.Sort(names)
		names = slices.Compact(names)
		parts = append(parts, only+strings.Join(names, ", ")+" changed (not covered by undo)")
	}
	if c.Shared && !c.Empty() {
		parts = append(parts, "another brig session had this workspace open: some may be its changes")
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// differ compares two snapshots' trees.
type differ struct {
	s     *Store
	pairs []pair
	cs    ChangeSet
}

// diff compares the roots two snapshots share.
func (s *Store) diff(before, after *Snapshot) ([]pair, *ChangeSet, error) {
	d := &differ{s: s}
	for _, b := range before.Roots {
		a := after.root(b.Path)
		if a == nil {
			continue
		}
		if err := d.entry(b.Path, b.Entry, a.Entry); err != nil {
			return nil, nil, err
		}
	}
	d.cs.Excluded = after.Excluded
	return d.pairs, &d.cs, nil
}

func (d *differ) add(p pair) {
	cs := &d.cs
	kind := Modified
	switch {
	case p.Before.Type == TypeNone:
		kind = Created
	case p.After.Type == TypeNone:
		kind = Deleted
	case p.Before.Type == p.After.Type && p.Before.Mode != p.After.Mode && (p.Before.Type == TypeDir || p.Before.Hash == p.After.Hash && p.Before.Link == p.After.Link):
		kind = Mode
	}
	bDir, aDir := p.Before.Type == TypeDir, p.After.Type == TypeDir
	switch {
	case bDir && aDir:
		cs.DirsChanged++
	case kind == Created && aDir:
		cs.DirsCreated++
	case kind == Deleted && bDir:
		cs.DirsDeleted++
	case kind == Created:
		cs.Created++
	case kind == Deleted:
		cs.Deleted++
	case bDir: // a directory replaced by a file or link
		cs.DirsDeleted++
		cs.Created++
	case aDir:
		cs.Deleted++
		cs.DirsCreated++
	default:
		cs.Modified++
	}
	if p.Before.Type == TypeFile && p.Before.Flags&FlagNotStored != 0 {
		cs.NotRestorable = append(cs.NotRestorable, Note{Path: p.Path, Why: p.Before.Why})
	}
	t := p.After.Type
	if t == TypeNone {
		t = p.Before.Type
	}
	if len(cs.Changes) < MaxListed {
		cs.Changes = append(cs.Changes, Change{Path: p.Path, Kind: kind, Type: t})
	} else {
		cs.More++
	}
	d.pairs = append(d.pairs, p)
}

// entry compares what was at path before and after.
func (d *differ) entry(path string, b, a Entry) error {
	bx, ax := b.Type == TypeDir && b.Flags&FlagExcluded != 0, a.Type == TypeDir && a.Flags&FlagExcluded != 0
	if bx || ax {
		// Undo leaves excluded trees alone; say they changed.
		if b.Type != a.Type || bx != ax || !b.sameStat(&a) {
			d.cs.ExcludedChanged = append(d.cs.ExcludedChanged, path)
		}
		return nil
	}
	switch {
	case b.Type == TypeNone && a.Type == TypeNone:
		return nil
	case b.Type == TypeDir && a.Type == TypeDir:
		if b.Mode != a.Mode {
			d.add(pair{Path: path, Before: b, After: a})
		}
		if (b.Flags|a.Flags)&FlagUnreadable != 0 {
			return nil // what is inside could not be read on one side: only its mode is known
		}
		if b.Hash == a.Hash {
			return nil
		}
		return d.trees(path, b.Hash, a.Hash)
	case b.Type == a.Type && b.sameContent(&a):
		return nil
	}
	// Created, deleted, changed, or replaced by another kind of file.
	d.add(pair{Path: path, Before: b, After: a})
	if b.Type == TypeDir {
		if err := d.trees(path, b.Hash, Hash{}); err != nil {
			return err
		}
	}
	if a.Type == TypeDir {
		return d.trees(path, Hash{}, a.Hash)
	}
	return nil
}

// trees compares two directory trees name by name (a zero hash is an
// empty tree).
func (d *differ) trees(path string, bh, ah Hash) error {
	var bt, at tree
	var err error
	if !bh.IsZero() {
		if bt, err = d.s.tree(bh); err != nil {
			return err
		}
	}
	if !ah.IsZero() {
		if at, err = d.s.tree(ah); err != nil {
			return err
		}
	}
	i, j := 0, 0
	for i < len(bt) || j < len(at) {
		var b, a Entry
		switch {
		case j >= len(at) || (i < len(bt) && bt[i].Name < at[j].Name):
			b = bt[i]
			a = Entry{Name: b.Name}
			i++
		case i >= len(bt) || at[j].Name < bt[i].Name:
			a = at[j]
			b = Entry{Name: a.Name}
			j++
		default:
			b, a = bt[i], at[j]
			i++
			j++
		}
		if err := d.entry(path+"/"+b.Name, b, a); err != nil {
			return err
		}
	}
	return nil
}

package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"

	"brig/internal/safefs"
)

// A hard link makes two names one file: a workspace file linked to a file
// outside it (a local `git clone` links .git/objects to the source's, uv
// links a venv's packages to its cache, pnpm node_modules to its store)
// is written there too when a call writes it, and neither Landlock nor a
// mount of the workspace tells the names apart. So before the first call
// that may write a workspace, brig gives each such file its own copy
// (what `git clone --no-hardlinks` or `UV_LINK_MODE=copy` would have
// made): same bytes, owner, mode and times, a new inode. A call cannot
// make a new link to a file outside (the view's mounts and Landlock's
// REFER refuse it), so links the user makes outside brig during a session
// are the ones left, until the next session.

const (
	// maxSharedFiles and maxSharedBytes bound the copies: more, and the
	// calls that may write are refused with what to do instead.
	maxSharedFiles = 200_000
	maxSharedBytes = 8 << 30
)

// sharedLinks remembers, by workspace, whether its shared files have
// their own copies (ownCopies).
type sharedLinks struct {
	mu   sync.Mutex
	done map[string]*linkCopy
}

type linkCopy struct {
	mu     sync.Mutex // held while the copies are made
	done   bool
	copied int    // files given their own copy
	sample string // one of them, for the note
	err    error  // why the calls that may write are refused
	told   bool   // the note went with a call's result

	// ahead is closed when the walk prepare started is over; found and
	// foundErr are its result (written before the close).
	ahead    chan struct{}
	found    []sharedFile
	foundErr error
}

// sharedFile is one name in the workspace of a file with more links than
// names there.
type sharedFile struct {
	dir, name string
	dev, ino  uint64
	size      int64
}

// entry is workspace's record, made on first use.
func (l *sharedLinks) entry(workspace string) *linkCopy {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done == nil {
		l.done = map[string]*linkCopy{}
	}
	c := l.done[workspace]
	if c == nil {
		c = &linkCopy{}
		l.done[workspace] = c
	}
	return c
}

// prepare starts the walk for workspace's shared files in the background
// (once), so that the session's first call that may write finds it done.
func (l *sharedLinks) prepare(workspace string) {
	c := l.entry(workspace)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ahead != nil || c.done {
		return
	}
	ch := make(chan struct{})
	c.ahead = ch
	go func() {
		defer close(ch)
		c.found, c.foundErr = scanShared(context.Background(), workspace)
	}()
}

// ensure gives workspace's shared files their own copies, once; it
// returns how many it copied (0 after the first call that reported them)
// and one of them, or why calls that may write the workspace are refused.
// The walk is prepare's when it started one, else its own.
func (l *sharedLinks) ensure(ctx context.Context, workspace string) (int, string, error) {
	c := l.entry(workspace)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.done {
		var shared []sharedFile
		err := errors.New("no walk yet")
		if c.ahead != nil {
			select {
			case <-c.ahead:
				shared, err = c.found, c.foundErr
			case <-ctx.Done():
				return 0, "", ctx.Err()
			}
		}
		if err != nil {
			shared, err = scanShared(ctx, workspace)
		}
		n, sample := 0, ""
		if err == nil {
			n, sample, err = ownCopies(ctx, workspace, shared)
		}
		if err != nil && ctx.Err() != nil {
			return 0, "", err // interrupted: the next call looks again
		}
		c.done, c.copied, c.sample, c.err = true, n, sample, err
	}
	if c.err != nil {
		return 0, "", c.err
	}
	if c.told || c.copied == 0 {
		return 0, "", nil
	}
	c.told = true
	return c.copied, c.sample, nil
}

// scanShared is findShared over the workspace at its path.
func scanShared(ctx context.Context, workspace string) ([]sharedFile, error) {
	root, err := safefs.Open(workspace)
	if err != nil {
		return nil, fmt.Errorf("look for files the workspace shares through hard links: %w", err)
	}
	defer root.Close()
	shared, err := findShared(ctx, root)
	if err != nil {
		return nil, fmt.Errorf("look for files the workspace shares through hard links: %w", err)
	}
	return shared, nil
}

// ownCopies replaces each name in shared (findShared's) with a copy of
// its own; the copies are synced before any replaces its file, and a
// name that is no longer the file found is left.
func ownCopies(ctx context.Context, workspace string, shared []sharedFile) (int, string, error) {
	if len(shared) == 0 {
		return 0, "", nil
	}
	root, err := safefs.Open(workspace)
	if err != nil {
		return 0, "", fmt.Errorf("give the workspace its own copies of its shared files: %w", err)
	}
	defer root.Close()
	var total int64
	for _, f := range shared {
		total += f.size
	}
	first := filepath.Join(workspace, shared[0].dir, shared[0].name)
	refuse := func(why string) error {
		return fmt.Errorf("%d files in the workspace (%s among them) are hard links to files outside it, so a call writing them would change those too; %s. Give the workspace its own copies and start again: in a local git clone, git repack -a -d; in a uv venv, UV_LINK_MODE=copy uv sync --reinstall; a single file, cp -p FILE FILE.new && mv FILE.new FILE", len(shared), first, why)
	}
	if len(shared) > maxSharedFiles || total > maxSharedBytes {
		return 0, "", refuse(fmt.Sprintf("brig copies at most %d files or %d GiB of them, and these are %d MiB", maxSharedFiles, maxSharedBytes>>30, total>>20))
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(workspace, &fs); err == nil && int64(fs.Bavail)*fs.Bsize < total+total/10+(256<<20) {
		return 0, "", refuse(fmt.Sprintf("their copies (%d MiB) would not leave room on the disk", total>>20))
	}

	type made struct {
		dir *safefs.Dir
		f   sharedFile
		tmp string
	}
	dirs := map[string]*safefs.Dir{}
	defer func() {
		for _, d := range dirs {
			d.Close()
		}
	}()
	var copies []made
	fail := func(err error) (int, string, error) {
		for _, m := range copies {
			_ = m.dir.RemoveOwnCopy(m.tmp)
		}
		return 0, "", refuse(err.Error())
	}
	for _, f := range shared {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		d := dirs[f.dir]
		if d == nil {
			if d, err = root.Sub(f.dir); err != nil {
				return fail(err)
			}
			dirs[f.dir] = d
		}
		tmp, err := d.CopyShared(f.name, f.dev, f.ino)
		if errors.Is(err, safefs.ErrChanged) {
			continue // gone or replaced since the walk: nothing shared left there
		}
		if err != nil {
			return fail(err)
		}
		copies = append(copies, made{d, f, tmp})
	}
	if err := root.Syncfs(); err != nil {
		return fail(err)
	}
	replaced := 0
	for i, m := range copies {
		err := m.dir.ReplaceWithCopy(m.tmp, m.f.name, m.f.dev, m.f.ino)
		if errors.Is(err, safefs.ErrChanged) {
			continue
		}
		replaced++
		if err != nil {
			for _, rest := range copies[i+1:] {
				_ = rest.dir.RemoveOwnCopy(rest.tmp)
			}
			return 0, "", refuse(err.Error())
		}
	}
	if err := root.Syncfs(); err != nil {
		return 0, "", fmt.Errorf("sync the workspace's own copies: %w", err)
	}
	return replaced, first, nil
}

// writableByCalls reports whether a call (brig's own user) could write
// the file st, perhaps after a chmod: its owner, root, or a file others
// may write. Anyone else's read-only file is no one's to write through.
func writableByCalls(st *unix.Stat_t) bool {
	uid := uint32(os.Geteuid())
	return uid == 0 || st.Uid == uid || st.Mode&0o022 != 0
}

// findShared walks the workspace (one file system: a mount inside it is
// not entered; links are not followed) for regular files whose link count
// is more than the names it has there, and removes the copies a stopped
// run of ownCopies left.
func findShared(ctx context.Context, root *safefs.Dir) ([]sharedFile, error) {
	self, err := root.StatSelf()
	if err != nil {
		return nil, err
	}
	type key struct{ dev, ino uint64 }
	type seen struct {
		names []sharedFile
		nlink uint64
	}
	byInode := map[key]*seen{}
	var order []key
	var walk func(d *safefs.Dir, rel string) error
	walk = func(d *safefs.Dir, rel string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		ents, err := d.Dirents()
		if errors.Is(err, unix.EACCES) {
			// Another user's directory brig's user cannot list: a call
			// cannot either, nor chmod it. One of brig's user's own, a
			// call can open up, so it must be looked in.
			if st, serr := d.StatSelf(); serr == nil && !writableByCalls(&st) {
				return nil
			}
			return fmt.Errorf("%s cannot be listed: make it readable (chmod u+rx) or move it out of the workspace, so that brig can look in it for hard links to files outside", d.Path())
		}
		if err != nil {
			return err
		}
		for _, e := range ents {
			switch e.Type {
			case unix.DT_DIR, unix.DT_REG, unix.DT_UNKNOWN:
			default:
				continue // links, FIFOs, sockets, devices
			}
			st, err := d.Stat(e.Name)
			if err != nil {
				if errors.Is(err, unix.ENOENT) {
					continue
				}
				return err
			}
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFDIR:
				if st.Dev != self.Dev {
					continue // another file system mounted here
				}
				sub, err := d.Sub(e.Name)
				if err != nil {
					if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EACCES) {
						continue
					}
					return err
				}
				err = walk(sub, filepath.Join(rel, e.Name))
				sub.Close()
				if err != nil {
					return err
				}
			case unix.S_IFREG:
				if safefs.IsOwnCopyName(e.Name) && st.Nlink == 1 {
					_ = d.RemoveOwnCopy(e.Name)
					continue
				}
				if st.Nlink < 2 || !writableByCalls(&st) {
					continue
				}
				k := key{st.Dev, st.Ino}
				s := byInode[k]
				if s == nil {
					s = &seen{nlink: uint64(st.Nlink)}
					byInode[k] = s
					order = append(order, k)
				}
				s.names = append(s.names, sharedFile{dir: rel, name: e.Name, dev: st.Dev, ino: st.Ino, size: st.Size})
			}
		}
		return nil
	}
	if err := walk(root, "."); err != nil {
		return nil, err
	}
	var out []sharedFile
	for _, k := range order {
		if s := byInode[k]; uint64(len(s.names)) < s.nlink {
			out = append(out, s.names...) // a link outside: every name here gets its own copy
		}
	}
	return out, nil
}

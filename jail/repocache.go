package jail

import (
	"runtime"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"brig/internal/dirwatch"
)

// RepoCache makes repeated Repositories searches of the same trees cheap:
// every call's grant and the sweep after it search the whole workspace, and
// in a real-size repository listing every directory is most of a call's
// time. It remembers, for each directory whose listing holds nothing the
// search looks at (no .git, no HEAD: its only part in the search is which
// of its entries are directories), that list of subdirectories, with the
// directory's device, inode and change time. The next search still visits
// every directory (an open and an fstat), but lists only those whose
// change time moved: adding, removing or renaming an entry sets it, and no
// process can set it back. What the search reads in files (HEAD, .git
// files, what modules/ holds) is never remembered: a directory with a .git,
// a HEAD, a .hg or a .jj is listed, and looked at, every time.
//
// Only directories on the file systems whose change times are kept by the
// kernel that makes the change are remembered (ext2/3/4, XFS, Btrfs, F2FS,
// tmpfs): a network or FUSE file system may answer from a cache of
// attributes, and an overlay's directories change time with copy-ups.
// Elsewhere every search lists every directory, as Repositories does.
//
// A change made in the same clock tick as the directory's last change can
// leave its change time as it was on file systems with coarse timestamps,
// so a directory changed less than a second before a search is not
// remembered by it (git's "racy" entries, the same way).
//
// With Watch, a remembered directory is not even looked at while the
// kernel reports nothing about it: an inotify watch (internal/dirwatch),
// added before the directory is looked at, reports every entry made,
// removed or renamed in it, and its own removal, renaming and attribute
// changes. Such a directory is trusted without a system call when its
// watch saw nothing since it was last looked at, no event was lost, the
// supervisor's mount table did not change since (a mount reports nothing
// to the directory it covers), and the name it was reached by still
// stands for it: its parent was trusted the same way, or was listed and
// the listing gives the same inode. The memory is a tree, and an event
// marks the directories above the one it is about, so a search passes
// over a subtree in which nothing was reported, and nothing needs a look
// every time (a .git, a HEAD, a directory not remembered or not watched),
// without visiting it: a search of an unchanged tree costs a few system
// calls whatever its size.
//
// It is safe for concurrent use; searches run one at a time. The zero
// value is not usable; a nil *RepoCache searches without remembering.
type RepoCache struct {
	mu    sync.Mutex
	roots map[string]*memoNode // by root searched
	// also are paths the caller protects besides what a search finds
	// (Protect): the programs of configured MCP servers.
	also  []string
	racy  time.Duration
	reads int // directories listed by the last search
	looks int // directories looked at (a stat or an open) by the last search
	watch *repoWatch
}

// trustedCtime are the file systems (statfs f_type) whose directories a
// RepoCache remembers.
var trustedCtime = map[int64]bool{
	unix.EXT4_SUPER_MAGIC:  true, // also ext2 and ext3
	unix.XFS_SUPER_MAGIC:   true,
	unix.BTRFS_SUPER_MAGIC: true,
	unix.F2FS_SUPER_MAGIC:  true,
	unix.TMPFS_MAGIC:       true,
}

// memoNode is what a search remembers of one directory of a trusted file
// system, and through kids, of those below it.
type memoNode struct {
	dev, ino uint64
	ctime    unix.Timespec
	// plain: nothing the search looks at is in it (no .git, no HEAD, no
	// .hg, no .jj), and
	// it had not changed within the racy window: names may be used
	// instead of listing it.
	plain bool
	names []string    // its subdirectories, in listing order
	kids  []*memoNode // kids[i] is names[i]'s node (nil: not remembered)
	// parent is the node it was last reached from (nil: a root).
	parent *memoNode
	// watched: its watch was in place before it was last looked at.
	// dirty: the watch reported something since; below: a watch of a
	// directory below it did.
	watched, dirty, below bool
	// always: a directory below it needs a look by every search (not
	// remembered, not plain, or not watched).
	always bool
}

// dirStat is what the search compares of a directory: its identity, its
// mount (a bind mount shows the same directory at another path: a
// directory in the root's mount has one path only) and its change time.
type dirStat struct {
	dev, ino, mnt uint64
	ctime         unix.Timespec
}

// statAt stats name in the directory open at dirfd without following a
// link ("" for dirfd itself); mnt is 0 where the kernel gives no mount id.
func statAt(dirfd int, name string) (dirStat, bool) {
	flags := unix.AT_SYMLINK_NOFOLLOW
	if name == "" {
		flags |= unix.AT_EMPTY_PATH
	}
	var sx unix.Statx_t
	if unix.Statx(dirfd, name, flags, unix.STATX_BASIC_STATS|unix.STATX_MNT_ID, &sx) != nil {
		return dirStat{}, false
	}
	ds := dirStat{dev: unix.Mkdev(sx.Dev_major, sx.Dev_minor), ino: sx.Ino, ctime: unix.Timespec{Sec: sx.Ctime.Sec, Nsec: int64(sx.Ctime.Nsec)}}
	if sx.Mask&unix.STATX_MNT_ID != 0 {
		ds.mnt = sx.Mnt_id
	}
	return ds, sx.Mode&unix.S_IFMT == unix.S_IFDIR
}

// same reports whether ds is the directory remembered, unchanged.
func (n *memoNode) same(ds dirStat) bool {
	return ds.dev == n.dev && ds.ino == n.ino && ds.ctime == n.ctime
}

func (n *memoNode) key() dirwatch.Key { return dirwatch.Key{Dev: n.dev, Ino: n.ino} }

// settle records that n's subtree was just searched: nothing reported
// below it is pending, and whether something below needs a look anyway.
func (n *memoNode) settle() {
	n.below, n.always = false, false
	for _, k := range n.kids {
		if k == nil || !k.plain || !k.watched || k.always {
			n.always = true
			return
		}
	}
}

// repoWatch is what tells a RepoCache which remembered directories may
// have changed: the watches, and the supervisor's mount table.
type repoWatch struct {
	dirs *dirwatch.Watcher
	// mounts is /proc/self/mountinfo, which poll(2) marks (POLLPRI) once
	// after each change of the mount table of the process's namespace.
	mounts int
	// index finds, per root searched, the node of a watched directory
	// (roots may overlap: a directory has a node in each); seq is the
	// last search's drain.
	index map[string]map[dirwatch.Key]*memoNode
	seq   uint64
	// untrusted are the roots whose next search may not trust the
	// watches: events were lost, or the mount table changed, since
	// their last search.
	untrusted map[string]bool
}

// drain reads the events queued since the last search and marks the
// directories they are about (and those above them), in every root. It
// reports whether the watches can be trusted for this search of root: no
// event was lost, and the mount table did not change, since root's last
// search (which done records).
func (rw *repoWatch) drain(root string) (trusted bool) {
	last := rw.seq
	rw.seq = rw.dirs.DrainFunc(func(key dirwatch.Key, gone bool) {
		for _, index := range rw.index {
			n := index[key]
			if n == nil {
				continue
			}
			if gone {
				delete(index, key)
			}
			n.dirty = true
			for p := n.parent; p != nil && !p.below; p = p.parent {
				p.below = true
			}
		}
	})
	fds := []unix.PollFd{{Fd: int32(rw.mounts), Events: unix.POLLPRI}}
	n, err := unix.Poll(fds, 0)
	moved := err != nil || n > 0 && fds[0].Revents&(unix.POLLPRI|unix.POLLERR|unix.POLLNVAL) != 0
	if moved || rw.dirs.Lost(last) {
		for r := range rw.index {
			rw.untrusted[r] = true
		}
	}
	return !rw.untrusted[root]
}

// done records a completed search of root: its memory is as good as its
// watches from now on.
func (rw *repoWatch) done(root string) { delete(rw.untrusted, root) }

func (rw *repoWatch) close() {
	rw.dirs.Close()
	unix.Close(rw.mounts)
}

// watchBudget is the share of the user's inotify watches a RepoCache may
// take: an eighth (editors and other watchers need theirs; the undo
// snapshots take one per directory as well). Past it, directories are
// looked at as without Watch.
func watchBudget() int { return dirwatch.Budget(8, 1024) }

// Watch makes c learn from inotify which remembered directories changed
// (see RepoCache). For a cache searched many times (a session's grants);
// without inotify or the mount table, c goes on as before.
func (c *RepoCache) Watch() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watch != nil {
		return
	}
	dirs := dirwatch.New(dirwatch.Entries, watchBudget())
	if dirs == nil {
		return
	}
	mounts, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		dirs.Close()
		return
	}
	c.watch = &repoWatch{dirs: dirs, mounts: mounts, index: map[string]map[dirwatch.Key]*memoNode{}, untrusted: map[string]bool{}}
	runtime.AddCleanup(c, func(rw *repoWatch) { rw.close() }, c.watch)
}

// NewRepoCache returns an empty cache.
func NewRepoCache() *RepoCache {
	return &RepoCache{roots: map[string]*memoNode{}, racy: time.Second}
}

// Repositories is the package's Repositories, listing again only the
// directories that changed since the last search of root.
func (c *RepoCache) Repositories(root string) ([]Repository, error) {
	out, _, err := c.Search(root)
	return out, err
}

// Search is Repositories, also returning the directories below root the
// search could not open (see the package function Search).
func (c *RepoCache) Search(root string) ([]Repository, []string, error) {
	repos, unlisted, _, err := c.SearchLinks(root, nil)
	return repos, unlisted, err
}

// SearchLinks is Search that also lists the symbolic links it meets in
// the directories it lists (those that changed since the last search)
// which lead into one of into, by their own target or through others.
func (c *RepoCache) SearchLinks(root string, into []string) (repos []Repository, unlisted, links []string, err error) {
	if c == nil {
		w := &repoWalk{shapes: map[string]bool{}, linksInto: into}
		out, err := w.run(root)
		return out, w.unlisted, w.links, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var now unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_REALTIME, &now)
	w := &repoWalk{shapes: map[string]bool{}, linksInto: into}
	var fsst unix.Statfs_t
	if unix.Statfs(root, &fsst) == nil && trustedCtime[int64(fsst.Type)] {
		if ds, ok := statAt(unix.AT_FDCWD, root); ok {
			w.remember, w.old, w.dev, w.mnt = true, c.roots[root], ds.dev, ds.mnt
			w.settled = unix.NsecToTimespec(now.Nano() - c.racy.Nanoseconds())
		}
	}
	if w.remember && c.watch != nil {
		w.watch = c.watch.dirs
		if w.index = c.watch.index[root]; w.index == nil {
			w.index = map[dirwatch.Key]*memoNode{}
			c.watch.index[root] = w.index
		}
		// Without mount ids a directory could be reached by two paths.
		w.trusted = c.watch.drain(root) && w.mnt != 0
	}
	out, err := w.run(root)
	if err == nil && w.stale {
		// A directory trusted on its watch was not the one remembered
		// (which the reports rule out): everything is looked at again.
		looks := w.looks
		w = &repoWalk{shapes: map[string]bool{}, remember: true, dev: w.dev, mnt: w.mnt, settled: w.settled, watch: w.watch, index: w.index, linksInto: into}
		out, err = w.run(root)
		w.looks += looks
	}
	c.reads, c.looks = w.reads, w.looks
	if err != nil || w.node == nil {
		delete(c.roots, root) // a file, or nothing to remember
		if c.watch != nil {
			delete(c.watch.index, root)
		}
		return out, w.unlisted, w.links, err
	}
	c.roots[root] = w.node
	if c.watch != nil && w.index != nil {
		c.watch.done(root)
	}
	return out, w.unlisted, w.links, nil
}

// Listed is how many directories the last search listed (the rest were
// remembered unchanged).
func (c *RepoCache) Listed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

// Protect adds paths to every protected list this cache's
// ProtectedPathsEnv returns from now on (a nil cache ignores them).
func (c *RepoCache) Protect(paths ...string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.also = append(c.also, paths...)
}

// Protected is what Protect added.
func (c *RepoCache) Protected() []string {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.also)
}

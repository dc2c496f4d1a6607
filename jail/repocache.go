package jail

import (
	"runtime"
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
// files, what modules/ holds) is never remembered: a directory with a .git
// or a HEAD is listed, and looked at, every time.
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
// watch saw nothing since it was remembered, no event was lost, the
// supervisor's mount table did not change since (a mount reports nothing
// to the directory it covers), and the name it was reached by still
// stands for it: its parent was trusted the same way, or was listed and
// the listing gives the same inode. A search of an unchanged tree then
// costs a few system calls whatever its size, instead of a look at every
// directory. Anything else is looked at as above.
//
// It is safe for concurrent use; searches run one at a time. The zero
// value is not usable; a nil *RepoCache searches without remembering.
type RepoCache struct {
	mu    sync.Mutex
	roots map[string]map[string]dirMemo // by root searched, by directory
	racy  time.Duration
	reads int // directories listed by the last search
	looks int // directories looked at (a stat or an open) by the last search
	watch *repoWatch
}

// repoWatch is what tells a RepoCache which remembered directories may
// have changed: the watches, and the supervisor's mount table.
type repoWatch struct {
	dirs *dirwatch.Watcher
	// mounts is /proc/self/mountinfo, which poll(2) marks (POLLPRI) once
	// after each change of the mount table of the process's namespace.
	mounts int
	// moved is the number of the last search that found the mount table
	// changed: nothing remembered before it is trusted on events alone.
	moved uint64
}

// drain reads the events queued so far and the mount table's state, and
// returns the number the search that starts now is known by.
func (rw *repoWatch) drain() uint64 {
	seq := rw.dirs.Drain()
	fds := []unix.PollFd{{Fd: int32(rw.mounts), Events: unix.POLLPRI}}
	n, err := unix.Poll(fds, 0)
	if err != nil || n > 0 && fds[0].Revents&(unix.POLLPRI|unix.POLLERR|unix.POLLNVAL) != 0 {
		rw.moved = seq
	}
	return seq
}

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
	c.watch = &repoWatch{dirs: dirs, mounts: mounts}
	runtime.AddCleanup(c, func(rw *repoWatch) { rw.close() }, c.watch)
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

// dirMemo is what a search remembers of one directory.
type dirMemo struct {
	dev, ino uint64
	ctime    unix.Timespec
	subdirs  []string // the entries that are directories, in listing order
	// watched: the directory had its watch before it was looked at, in
	// the search numbered seq.
	watched bool
	seq     uint64
}

func (m dirMemo) key() dirwatch.Key { return dirwatch.Key{Dev: m.dev, Ino: m.ino} }

// same reports whether st is the directory remembered, unchanged.
func (m dirMemo) same(st *unix.Stat_t) bool {
	return st.Dev == m.dev && st.Ino == m.ino && st.Ctim == m.ctime
}

// NewRepoCache returns an empty cache.
func NewRepoCache() *RepoCache {
	return &RepoCache{roots: map[string]map[string]dirMemo{}, racy: time.Second}
}

// Repositories is the package's Repositories, listing again only the
// directories that changed since the last search of root.
func (c *RepoCache) Repositories(root string) ([]Repository, error) {
	if c == nil {
		return Repositories(root)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var now unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_REALTIME, &now)
	w := &repoWalk{shapes: map[string]bool{}}
	var fsst unix.Statfs_t
	var st unix.Stat_t
	if unix.Statfs(root, &fsst) == nil && trustedCtime[int64(fsst.Type)] && unix.Lstat(root, &st) == nil {
		w.memo, w.next, w.dev = c.roots[root], make(map[string]dirMemo, len(c.roots[root])), st.Dev
		w.settled = unix.NsecToTimespec(now.Nano() - c.racy.Nanoseconds())
		if c.watch != nil {
			w.watch, w.seq = c.watch.dirs, c.watch.drain()
			w.moved = c.watch.moved
		}
	}
	out, err := w.run(root)
	if err == nil && w.stale {
		// A directory trusted on its watch was not the one remembered
		// (which the reports rule out): everything is looked at again.
		looks := w.looks
		w = &repoWalk{shapes: map[string]bool{}, next: map[string]dirMemo{}, dev: w.dev, settled: w.settled, watch: w.watch, seq: w.seq, moved: w.seq}
		out, err = w.run(root)
		w.looks += looks
	}
	c.reads, c.looks = w.reads, w.looks
	if err != nil || len(w.next) == 0 {
		delete(c.roots, root) // a file, or nothing to remember
		return out, err
	}
	c.roots[root] = w.next
	return out, nil
}

// Listed is how many directories the last search listed (the rest were
// remembered unchanged).
func (c *RepoCache) Listed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

// Looked is how many directories the last search looked at with a system
// call (listed, opened or stat'ed); with Watch, an unchanged tree's are
// trusted without one.
func (c *RepoCache) Looked() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.looks
}

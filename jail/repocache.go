package jail

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"
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
// It is safe for concurrent use; searches run one at a time. The zero
// value is not usable; a nil *RepoCache searches without remembering.
type RepoCache struct {
	mu    sync.Mutex
	roots map[string]map[string]dirMemo // by root searched, by directory
	racy  time.Duration
	reads int // directories listed by the last search
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
}

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
	}
	out, err := w.run(root)
	c.reads = w.reads
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

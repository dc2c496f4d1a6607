package jail

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"brig/internal/dirwatch"
	"brig/internal/gitconfig"
	"brig/internal/safefs"
	"brig/internal/sensitive"
)

// Repository is a git directory found in a tree: a .git directory, the
// gitdir a .git file or link names, a directory with git's repository shape
// (a bare repository, whatever its name), or one kept inside another git
// directory (modules/<name>, worktrees/<id>). It is also another version
// control system's control entry (Foreign).
type Repository struct {
	// GitDir is the git directory (absolute, clean).
	GitDir string
	// Worktree is the root of its working tree, where git runs hooks and
	// resolves relative settings; "" for a bare repository.
	Worktree string
	// DotGit is the .git entry that names GitDir ("" when GitDir was
	// found by its shape or inside another git directory).
	DotGit string
	// Kept: GitDir was found inside another git directory (modules/ or
	// worktrees/).
	Kept bool
	// Foreign is the system of a control entry that is not git's: "hg"
	// for a .hg, "jj" for a .jj (a directory, or a link, which Mercurial
	// follows). GitDir is that entry and Worktree the directory holding
	// it, a repository's root where Mercurial and jj read their config
	// (.hg/hgrc, .jj/repo/config.toml …): the Workspace entries are
	// protected there, and the supervisor takes out a new one whole.
	// "direnv" is an .envrc below the workspace's root (a monorepo's
	// service), which the user may have allowed: what it loads is
	// protected as at a root; a new one is left, as direnv runs none
	// the user has not allowed.
	Foreign string
}

// foreignControl are the names of other systems' control entries, each
// with its Repository.Foreign.
var foreignControl = map[string]string{".hg": "hg", ".jj": "jj"}

// gitInternals are the directories of a git directory that hold no
// repository of their own and need not be walked.
var gitInternals = map[string]bool{
	"objects": true, "refs": true, "logs": true, "hooks": true, "info": true,
	"lfs": true, "rr-cache": true, "branches": true, "remotes": true,
	"modules": true, "worktrees": true, "reftable": true,
}

// IsRepositoryShape reports whether git may treat dir as a git directory,
// whatever its name, by git's own test (setup.c is_git_directory) made
// wider where reading HEAD the way git does would be a second parser to
// keep in step with git's: a HEAD that is a symbolic link into refs/ or any
// regular file (git wants "ref:", any whitespace, "refs/…", or an object
// id in either case with anything after it — a stricter reading of it let
// a call plant a repository brig did not see), and either objects/ and
// refs/, or a commondir file (whose target holds them). Entries are looked
// at without following symbolic links (a link named objects counts as
// present: git would follow it); HEAD is not opened, so a planted FIFO
// cannot stall the check, and git, which would block on it, does not take
// such a directory either.
func IsRepositoryShape(dir string) bool {
	if !validHead(filepath.Join(dir, "HEAD")) {
		return false
	}
	if present(filepath.Join(dir, "commondir")) {
		return true
	}
	return present(filepath.Join(dir, "objects")) && present(filepath.Join(dir, "refs"))
}

func present(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// validHead is git's validate_headref, widened to every regular file (see
// IsRepositoryShape): a file git would refuse as HEAD only makes brig
// protect a directory git ignores.
func validHead(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil {
		return false
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		t, err := os.Readlink(p)
		return err == nil && strings.HasPrefix(t, "refs/")
	}
	return fi.Mode().IsRegular()
}

// Repositories finds every git directory under root: .git directories,
// what .git files and links name, directories with a repository's shape
// (IsRepositoryShape) whatever their name, and the repositories kept in
// each git directory's modules/ (recursively) and worktrees/; and every
// .hg and .jj entry (Repository.Foreign), which it descends into (a jj
// repository keeps a git one in .jj/repo/store/git). It does not
// descend into a git directory's objects, refs and other internals.
//
// Every call's grant and the sweep after it search the whole workspace, so
// the walk lists each directory with getdents alone (safefs.ReadDirents:
// the type from the listing, a stat only where the file system gives
// none) and opens each subdirectory from its parent's descriptor without
// following a link. It visits names in the order filepath.WalkDir would.
func Repositories(root string) ([]Repository, error) {
	return (&repoWalk{shapes: map[string]bool{}}).run(root)
}

// Search is Repositories, also returning the directories below root it
// could not open (their permissions deny brig: a repository in one is not
// found). The search at a call's start may pass over them (nothing there
// is granted that the kernel's permissions would not refuse brig too),
// but the sweep after a writing call must not: a call can make a
// directory of its own unlistable after planting a repository in it.
func Search(root string) ([]Repository, []string, error) {
	w := &repoWalk{shapes: map[string]bool{}}
	out, err := w.run(root)
	return out, w.unlisted, err
}

// repoWalk is one Repositories search.
type repoWalk struct {
	out    []Repository
	shapes map[string]bool // directories found to have a repository's shape
	// unlisted are the directories below the root it could not open
	// (their permissions): passed over, see Search.
	unlisted []string
	// linksInto, when set, are directories a symbolic link met in a
	// listed directory is checked against; links the ones leading into
	// them (RepoCache.SearchLinks).
	linksInto, links []string

	// With a RepoCache (on a file system it trusts): what the last search
	// remembered of the root, and what this one remembers; the file
	// system remembered (the root's); the time before which a change is
	// surely seen in a ctime; how many directories this one listed and
	// looked at.
	remember  bool
	old, node *memoNode
	dev, mnt  uint64
	settled   unix.Timespec
	reads     int
	looks     int
	// With RepoCache.Watch: the watches, the index of watched nodes, and
	// whether this search may trust them (trusted). stale: a directory
	// trusted on its watch turned out not to be the one remembered.
	watch   *dirwatch.Watcher
	index   map[dirwatch.Key]*memoNode
	trusted bool
	stale   bool
}

// run searches root.
func (w *repoWalk) run(root string) ([]Repository, error) {
	fi, err := os.Lstat(root)
	if err != nil {
		return nil, err
	}
	if w.consider(root, fi.Name(), fi.Mode().Type()) || !fi.IsDir() {
		return w.out, nil
	}
	root = filepath.Clean(root)
	if n := w.old; n != nil && w.quiet(n) && n.dev == w.dev && fi.Sys().(*syscall.Stat_t).Ino == n.ino {
		w.node = w.known(&lazyDir{path: root, node: n, parentFD: -1, fd: -1}, n, nil)
		return w.out, nil
	}
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: root, Err: err}
	}
	if w.node, err = w.dir(fd, root, w.old, nil); err != nil {
		return nil, &fs.PathError{Op: "readdirent", Path: root, Err: err}
	}
	return w.out, nil
}

// dir visits the directory open at fd (at path), which it closes. old is
// what the last search remembered there (nil: nothing), parent the node of
// the directory above (nil: none). It returns what this search remembers
// of the directory (nil: nothing), and reports only a failure to list it.
// An unreadable subtree is passed over: nothing in it can be granted
// either.
func (w *repoWalk) dir(fd int, path string, old, parent *memoNode) (*memoNode, error) {
	defer unix.Close(fd)
	prefix := childPrefix(path)
	var ds dirStat
	remember := false
	if w.remember {
		ds, remember = statAt(fd, "")
		remember = remember && ds.dev == w.dev && ds.mnt == w.mnt
	}
	w.looks++
	watched := false
	if remember && w.watch != nil {
		key := dirwatch.Key{Dev: ds.dev, Ino: ds.ino}
		if watched, _ = w.watch.Since(key, 0); !watched && w.watch.Add(fd, key) {
			// Watched from now on: looked at again, so that what the
			// memory will say (the change time compared, the listing)
			// comes after the watch.
			again, ok := statAt(fd, "")
			if watched = ok && again.dev == ds.dev && again.ino == ds.ino; watched {
				ds = again
			}
		}
	}
	if remember && old != nil && old.plain && old.same(ds) {
		// Nothing was added, removed or renamed here since the last
		// search: only its subdirectories need a look.
		old.watched, old.dirty, old.parent = watched, false, parent
		w.track(old)
		for i, name := range old.names {
			old.kids[i] = w.child(fd, prefix+name, name, old.kids[i], old, 0, false)
		}
		old.settle()
		return old, nil
	}
	ents, err := safefs.ReadDirents(fd)
	if err != nil {
		return nil, err
	}
	w.reads++
	var n *memoNode
	if remember {
		n = &memoNode{dev: ds.dev, ino: ds.ino, ctime: ds.ctime, parent: parent, watched: watched}
		w.track(n)
	}
	before := oldKids(old)
	plain := true
	for _, e := range ents {
		looked := e.Name == ".git" || e.Name == "HEAD" || e.Name == ".envrc" || foreignControl[e.Name] != ""
		if looked {
			plain = false
		}
		typ, ok := direntType(fd, e)
		if ok && typ == fs.ModeSymlink && len(w.linksInto) > 0 && leadsInto(fd, path, e.Name, w.linksInto) {
			w.links = append(w.links, prefix+e.Name)
		}
		if !ok || typ != fs.ModeDir && !looked {
			continue // the common case, a file of no interest: not even its path is made
		}
		p := prefix + e.Name // as filepath.Join: path is clean, and a name holds no slash
		if w.consider(p, e.Name, typ) || typ != fs.ModeDir {
			continue
		}
		kid := w.child(fd, p, e.Name, before(e.Name), n, e.Ino, true)
		if n != nil {
			n.names, n.kids = append(n.names, e.Name), append(n.kids, kid)
		}
	}
	if n == nil {
		return nil, nil
	}
	// A directory changed since w.settled may change again within the
	// same clock tick and keep its change time: it is listed next time.
	n.plain = plain && ds.ctime.Nano() < w.settled.Nano()
	n.settle()
	return n, nil
}

// maxWalkPath bounds the path of a directory the search goes into: each
// level holds its path while the levels below are read, so a chain of
// 3,000 nested directories of 250-character names (made by a call in a
// second) held the supervisor at gigabytes (red team, round 5). Real
// trees stay far below it; internal/checkpoint's walk has the same bound.
const maxWalkPath = 16 << 10

// childPrefix is what a name below the directory at path is appended to.
func childPrefix(path string) string {
	if path == "/" {
		return path
	}
	return path + "/"
}

// oldKids finds, name by name in listing order, the nodes old remembered
// for its subdirectories.
func oldKids(old *memoNode) func(name string) *memoNode {
	i := 0
	return func(name string) *memoNode {
		if old == nil {
			return nil
		}
		for i < len(old.names) && old.names[i] < name {
			i++
		}
		if i < len(old.names) && old.names[i] == name {
			return old.kids[i]
		}
		return nil
	}
}

// track indexes n when it is watched, so that the events about it mark it.
func (w *repoWalk) track(n *memoNode) {
	if w.index != nil && n.watched {
		w.index[n.key()] = n
	}
}

// quiet reports whether the remembered directory n is trusted on its
// watch alone: plain, watched since before it was last looked at, nothing
// reported about it since, and this search trusts the watches (nothing
// lost, the mount table unchanged). Whether the name it is reached by
// still stands for it is the caller's to know.
func (w *repoWalk) quiet(n *memoNode) bool {
	return w.trusted && n.plain && n.watched && !n.dirty
}

// child visits the subdirectory name (at path) of the directory open at
// fd, whose node is parent; old is what the last search remembered there.
// listed: fd was listed by this search, and ino is the inode the listing
// gave for name; else fd is a remembered directory whose entries did not
// change, so name stands for what it did then. A quiet old is trusted
// without a system call.
func (w *repoWalk) child(fd int, path, name string, old, parent *memoNode, ino uint64, listed bool) *memoNode {
	if old != nil && w.quiet(old) && (!listed || ino == old.ino) {
		return w.known(&lazyDir{parentFD: fd, name: name, path: path, node: old, fd: -1}, old, parent)
	}
	return w.descend(fd, path, name, old, parent)
}

// known visits n, a directory trusted on its watch (d: opened only if
// something below it must be looked at), under parent. Nothing below it
// is visited when nothing was reported there and nothing there needs a
// look every time.
func (w *repoWalk) known(d *lazyDir, n, parent *memoNode) *memoNode {
	defer d.close()
	n.parent = parent
	if !n.below && !n.always {
		return n
	}
	prefix := childPrefix(d.path)
	for i, name := range n.names {
		p, kid := prefix+name, n.kids[i]
		if kid != nil && w.quiet(kid) {
			n.kids[i] = w.known(&lazyDir{parent: d, parentFD: -1, name: name, path: p, node: kid, fd: -1}, kid, n)
			continue
		}
		if d.fd < 0 {
			w.looks++
		}
		fd, err := d.open()
		if err != nil {
			w.stale = true
			return n
		}
		n.kids[i] = w.descend(fd, p, name, kid, n)
	}
	n.settle()
	return n
}

// lazyDir is a directory the search passed through on the strength of its
// watch (node). It is opened, without following a link, from its parent's
// descriptor (opened the same way, or parentFD), or by path for the root.
type lazyDir struct {
	parent     *lazyDir
	parentFD   int // the parent's descriptor when it is open already (-1: none)
	name, path string
	node       *memoNode
	fd         int // -1 until opened
}

// open opens d and checks that it is the directory remembered.
func (d *lazyDir) open() (int, error) {
	if d.fd >= 0 {
		return d.fd, nil
	}
	pfd := d.parentFD
	if d.parent != nil {
		var err error
		if pfd, err = d.parent.open(); err != nil {
			return -1, err
		}
	}
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	var fd int
	var err error
	if pfd >= 0 {
		fd, err = unix.Openat(pfd, d.name, flags, 0)
	} else {
		fd, err = unix.Open(d.path, flags, 0)
	}
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Dev != d.node.dev || st.Ino != d.node.ino {
		unix.Close(fd)
		return -1, errNotRemembered
	}
	d.fd = fd
	return fd, nil
}

func (d *lazyDir) close() {
	if d.fd >= 0 {
		unix.Close(d.fd)
		d.fd = -1
	}
}

// errNotRemembered: a directory trusted on its watch is not the one
// remembered at its path.
var errNotRemembered = errors.New("not the directory remembered")

// descend visits the subdirectory name of the directory open at fd,
// opened without following a link, and returns what to remember of it. A
// remembered one without subdirectories of its own is only looked at (its
// inode and change time), not opened, when it is unchanged and, with
// watches, already watched (opening it adds the watch).
func (w *repoWalk) descend(fd int, path, name string, old, parent *memoNode) *memoNode {
	if len(path) > maxWalkPath {
		return nil // README: Limits (a repository this deep is not looked for)
	}
	if old != nil && old.plain && len(old.names) == 0 {
		watched, _ := w.watch.Since(old.key(), 0)
		if w.watch == nil || watched {
			w.looks++
			if ds, ok := statAt(fd, name); ok && ds.mnt == w.mnt && old.same(ds) {
				old.watched, old.dirty, old.parent = watched, false, parent
				w.track(old)
				old.settle()
				return old
			}
		}
	}
	sub, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
			w.unlisted = append(w.unlisted, path)
		}
		return nil
	}
	n, _ := w.dir(sub, path, old, parent)
	return n
}

// leadsInto reports whether the symbolic link name in the directory open
// at dirfd (at dir) leads into one of roots, or to a directory above one
// (from which a path leads into it: a link to ~/.cache/brig, to ~ or to
// /; red team, 2026-12-03): its target as written, or where it resolves
// through other links, as far as they exist (a link through a link to a
// directory a later call makes).
func leadsInto(dirfd int, dir, name string, roots []string) bool {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(dirfd, name, buf)
	if err != nil {
		return false
	}
	target := string(buf[:n])
	if !filepath.IsAbs(target) {
		target = filepath.Join(dir, target)
	}
	at := func(p string) bool {
		p = filepath.Clean(p)
		return slices.ContainsFunc(roots, func(r string) bool { return within(p, r) || within(r, p) })
	}
	return at(target) || at(resolveExisting(target))
}

// resolveExisting resolves the links of p as far as its path resolves,
// and joins the rest to that as written (realpath -m: a part that is
// missing, or a loop of links, does not resolve).
func resolveExisting(p string) string {
	var rest []string
	for q := filepath.Clean(p); ; q = filepath.Dir(q) {
		if r, err := filepath.EvalSymlinks(q); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		if q == "/" || q == "." {
			return p
		}
		rest = append([]string{filepath.Base(q)}, rest...)
	}
}

// direntType is an entry's type (fs.ModeDir, fs.ModeSymlink, 0 for a
// regular file …): from the listing, or from a stat of the entry where the
// listing gave none. ok is false when it is gone.
func direntType(dirfd int, e safefs.Dirent) (fs.FileMode, bool) {
	switch e.Type {
	case unix.DT_DIR:
		return fs.ModeDir, true
	case unix.DT_REG:
		return 0, true
	case unix.DT_LNK:
		return fs.ModeSymlink, true
	case unix.DT_UNKNOWN:
		var st unix.Stat_t
		if err := unix.Fstatat(dirfd, e.Name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return 0, false
		}
		return modeType(st.Mode), true
	}
	return fs.ModeIrregular, true // a FIFO, a socket, a device: none of them a directory or a link
}

// modeType is the fs type bits of a stat mode.
func modeType(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFREG:
		return 0
	}
	return fs.ModeIrregular
}

// consider looks at one entry of the walk (path, named name, of type typ)
// and reports whether the walk must not descend into it.
func (w *repoWalk) consider(path, name string, typ fs.FileMode) (skip bool) {
	isDir := typ == fs.ModeDir
	foreign := foreignControl[name]
	if name != ".git" && name != "HEAD" && name != ".envrc" && foreign == "" && (len(w.shapes) == 0 || !isDir) {
		return false // the common case: nothing to look at
	}
	parent := filepath.Dir(path)
	switch {
	case name == ".envrc" && !isDir:
		w.out = append(w.out, Repository{GitDir: path, Worktree: parent, Foreign: "direnv"})
		return false
	case foreign != "" && (isDir || typ == fs.ModeSymlink):
		// Walked on (a directory): what it holds is looked at as well.
		w.out = append(w.out, Repository{GitDir: path, Worktree: parent, Foreign: foreign})
		return false
	case name == ".git" && isDir:
		w.out = append(w.out, Repository{GitDir: path, Worktree: parent})
		w.out = append(w.out, kept(path)...)
		return true
	case name == ".git":
		gitdir := ""
		if typ == fs.ModeSymlink {
			if t, err := filepath.EvalSymlinks(path); err == nil {
				if fi, err := os.Stat(t); err == nil && fi.IsDir() {
					gitdir = t
				}
			}
		} else {
			gitdir = readGitdirFile(path)
		}
		r := Repository{GitDir: gitdir, Worktree: parent, DotGit: path}
		if gitdir == "" {
			r.GitDir = path // names nothing (yet): the entry itself is what matters
		}
		w.out = append(w.out, r)
		if gitdir != "" {
			w.out = append(w.out, kept(gitdir)...)
		}
	case name == "HEAD" && !isDir && filepath.Base(parent) != ".git" && !w.shapes[parent]:
		if IsRepositoryShape(parent) {
			w.shapes[parent] = true
			w.out = append(w.out, Repository{GitDir: parent})
			w.out = append(w.out, kept(parent)...)
		}
	case isDir && w.shapes[parent] && gitInternals[name]:
		return true
	}
	return false
}

// kept lists the repositories kept inside a git directory: each entry of
// modules/ (a submodule's git directory; names may hold slashes, so an
// entry without the shape that holds repositories is a directory on the
// way; one that holds none is listed itself, as git would make it a
// submodule's git directory) with its own kept repositories, and each
// entry of worktrees/.
func kept(gitdir string) []Repository {
	var out []Repository
	var modules func(dir string, depth int) bool
	modules = func(dir string, depth int) bool {
		entries, err := os.ReadDir(dir)
		if err != nil || depth > 8 {
			return false
		}
		listed := false
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			p := filepath.Join(dir, e.Name())
			switch {
			case IsRepositoryShape(p):
				out = append(out, Repository{GitDir: p, Kept: true})
				out = append(out, kept(p)...)
			case gitdirLike(p) || !modules(p, depth+1):
				out = append(out, Repository{GitDir: p, Kept: true})
			}
			listed = true
		}
		return listed
	}
	modules(filepath.Join(gitdir, "modules"), 0)
	worktrees, _ := os.ReadDir(filepath.Join(gitdir, "worktrees"))
	for _, w := range worktrees {
		if w.IsDir() {
			out = append(out, Repository{GitDir: filepath.Join(gitdir, "worktrees", w.Name()), Kept: true})
		}
	}
	return out
}

// gitdirLike reports whether dir holds any of a git directory's files.
func gitdirLike(dir string) bool {
	for _, n := range []string{"HEAD", "config", "objects", "refs", "commondir"} {
		if present(filepath.Join(dir, n)) {
			return true
		}
	}
	return false
}

// ProtectedPaths lists every path under workspace that must stay read-only,
// because a program outside the jail later runs it or obeys it:
//   - the sensitive.Workspace entries (brig's config, direnv, editor tasks,
//     hook managers' configuration …) at the root of the workspace, of
//     every working tree in it, and of every Mercurial and jj repository
//     (the directory holding a .hg or .jj);
//   - the control files of every git directory found by Repositories
//     (hooks, config, commondir, config.worktree, and for modules and
//     worktrees their own), and each .git file and the gitdir it names;
//   - for each repository, the directory every core.hooksPath names, the
//     config files its config includes, and the programs its settings run
//     (core.fsmonitor, core.pager, filters, aliases …), read from its own
//     config, the system and global configs and what they include —
//     where these lie inside the workspace.
//
// The workspace root's entries and git control files are listed whether or
// not they exist (a call must not create them); the global configs are
// the ones a git run from this process's environment reads. extra paths
// (brig's own config and state directories) are appended.
func ProtectedPaths(workspace string, extra ...string) ([]string, error) {
	return ProtectedPathsEnv(workspace, os.Environ(), extra...)
}

// ProtectedPathsEnv is ProtectedPaths with the global git configs that a
// git run with env reads (HOME, XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL,
// GIT_CONFIG_SYSTEM, GIT_CONFIG_NOSYSTEM).
func ProtectedPathsEnv(workspace string, env []string, extra ...string) ([]string, error) {
	return (*RepoCache)(nil).ProtectedPathsEnv(workspace, env, extra...)
}

// ProtectedPathsEnv is the package's ProtectedPathsEnv, searching the
// workspace for repositories with c (nil: afresh).
func (c *RepoCache) ProtectedPathsEnv(workspace string, env []string, extra ...string) ([]string, error) {
	repos, err := c.Repositories(workspace)
	if err != nil {
		return nil, err
	}
	home := envValue(env, "HOME")
	global := loadGlobal(env, home)

	var out []string
	trees := map[string]bool{}
	addTree := func(root string) {
		if trees[root] {
			return // a root holding a .git, a .hg and an .envrc is listed once
		}
		trees[root] = true
		for _, name := range sensitive.WorkspaceNames() {
			out = append(out, filepath.Join(root, name))
		}
		for _, p := range loadedFiles(root) {
			if p != workspace && within(p, workspace) {
				out = append(out, p)
			}
		}
	}
	roots := map[string]bool{workspace: true}
	for _, r := range repos {
		if r.Worktree != "" && r.Foreign == "" {
			roots[r.Worktree] = true
		}
	}
	inside := func(c configuredPath) {
		p := c.path
		switch {
		case p == "" || !within(p, workspace) && !within(workspace, p):
		case c.hooks && (roots[p] || within(workspace, p)):
			// Hooks straight in a working tree's root (hooksPath = .):
			// the hook files are what must stay, not the whole tree.
			for _, h := range hookNames {
				if within(filepath.Join(p, h), workspace) {
					out = append(out, filepath.Join(p, h))
				}
			}
		case p != workspace && within(p, workspace):
			out = append(out, p)
		}
	}
	addTree(workspace)
	out = append(out, gitdirProtected(filepath.Join(workspace, ".git"))...)
	// The workspace root is where a repository created there later runs
	// its hooks: a relative global core.hooksPath names a directory in it.
	atRoot := Repository{GitDir: filepath.Join(workspace, ".git"), Worktree: workspace}
	for _, p := range configured(atRoot, global, home) {
		inside(p)
	}
	for _, r := range repos {
		if r.Worktree != "" {
			addTree(r.Worktree)
		}
		if r.Foreign != "" {
			continue // no git directory: its root's entries are all
		}
		if r.DotGit != "" {
			out = append(out, r.DotGit)
		}
		if r.GitDir != r.DotGit {
			out = append(out, gitdirProtected(r.GitDir)...)
			if common := readCommondir(r.GitDir); common != "" {
				out = append(out, gitdirProtected(common)...)
			}
		}
		if r.GitDir == atRoot.GitDir && r.Worktree == atRoot.Worktree {
			continue // the workspace's own repository: configured above
		}
		for _, p := range configured(r, global, home) {
			inside(p)
		}
	}
	out = append(out, extra...)
	out = append(out, c.Protected()...)
	slices.Sort(out)
	return slices.Compact(out), nil
}

// loadedFiles lists the files that root's .envrc and mise configs load
// (sensitive.EnvrcLoads, MiseLoads), and what the shell files among them
// load in turn, a few levels down, each name resolved where it runs: in
// the tree's root, in a file's own directory after direnv's source_env,
// beside the script for "$(dirname "${BASH_SOURCE[0]}")". Each file is
// read without following a link on the way to it (safefs), so a link a
// repository commits reads nothing outside it; a file that cannot be read
// loads nothing.
func loadedFiles(root string) []string {
	var out []string
	seen := map[string]bool{}
	var visit func(file, base string, parse func([]byte) []sensitive.Loaded, depth int)
	visit = func(file, base string, parse func([]byte) []sensitive.Loaded, depth int) {
		if depth > maxLoadDepth || seen[file] {
			return
		}
		seen[file] = true
		if _, err := os.Lstat(file); err != nil {
			return // most trees have none of these: an lstat, not an open of the directory
		}
		d, err := safefs.Open(filepath.Dir(file))
		if err != nil {
			return
		}
		data, _, err := d.ReadFile(filepath.Base(file), maxLoaderSize)
		d.Close()
		if err != nil {
			return
		}
		for _, l := range parse(data) {
			p := l.Path
			switch {
			case filepath.IsAbs(p):
			case l.FromFile:
				p = filepath.Join(filepath.Dir(file), p)
			default:
				p = filepath.Join(base, p)
			}
			p = filepath.Clean(p)
			if fi, err := os.Lstat(p); l.Dir && err == nil && fi.IsDir() {
				p = filepath.Join(p, ".envrc")
			}
			out = append(out, p)
			if l.Script {
				next := base
				if l.Chdir {
					next = filepath.Dir(p)
				}
				visit(p, next, sensitive.EnvrcLoads, depth+1)
			}
		}
	}
	visit(filepath.Join(root, ".envrc"), root, sensitive.EnvrcLoads, 0)
	for _, name := range miseConfigs {
		visit(filepath.Join(root, name), root, sensitive.MiseLoads, 0)
	}
	return out
}

// miseConfigs are the config files mise reads in a directory.
var miseConfigs = []string{"mise.toml", ".mise.toml", "mise.local.toml", ".mise.local.toml", ".config/mise.toml", ".config/mise/config.toml", "mise/config.toml"}

const (
	// maxLoadDepth bounds how deep loadedFiles follows files that load
	// others (an .envrc sourcing .envrc.local sourcing …).
	maxLoadDepth = 4
	// maxLoaderSize is the largest .envrc or mise config read for what
	// it loads; a larger one is passed over (it loads nothing brig sees).
	maxLoaderSize = 256 << 10
)

// globalConfig is what the system and global git configs say.
type globalConfig struct {
	vals  []gitconfig.Value
	files []string
}

func loadGlobal(env []string, home string) globalConfig {
	var g globalConfig
	for _, f := range gitconfig.Files(env) {
		l := gitconfig.LoadSelected(f, home, usedSetting)
		g.vals = append(g.vals, l.Vals...)
		g.files = append(g.files, l.Files...)
	}
	return g
}

// usedSetting: configured looks at v (the rest of a config is not kept:
// a planted config of 64 MiB of other settings is not held in memory).
func usedSetting(v gitconfig.Value) bool {
	return v.Section == "core" && (v.Name == "worktree" || v.Name == "hookspath") || runsProgram(v)
}

// configured lists what a repository's configuration makes git run or
// read later: the directory of every core.hooksPath (git uses the last;
// every one is listed), the included config files, and the files its
// program settings name by path. Relative
// hooksPath values and program paths are resolved where git runs them: the
// working tree's root, or the git directory of a bare repository.
func configured(r Repository, global globalConfig, home string) []configuredPath {
	var vals []gitconfig.Value
	var out []configuredPath
	truncated := false
	vals = append(vals, global.vals...)
	for _, f := range global.files {
		out = append(out, configuredPath{path: f})
	}
	for _, dir := range []string{r.GitDir, readCommondir(r.GitDir)} {
		if dir == "" {
			continue
		}
		for _, f := range []string{"config", "config.worktree"} {
			l := gitconfig.LoadSelected(filepath.Join(dir, f), home, usedSetting)
			vals = append(vals, l.Vals...)
			for _, inc := range l.Files[1:] { // the config itself is a control file already
				out = append(out, configuredPath{path: inc})
			}
			truncated = truncated || l.Truncated
		}
	}
	base := r.Worktree
	if base == "" {
		base = r.GitDir
		for _, v := range vals {
			if v.Key() == "core.worktree" && v.File != "" && within(v.File, r.GitDir) {
				if wt := gitconfig.ExpandPath(v.Value, home, r.GitDir); wt != "" {
					base = wt
				}
			}
		}
	}
	if truncated {
		// Its config goes on beyond what brig reads (more than 4 MiB, or
		// 64 files, of includes): a program it names could be anywhere
		// in the repository, so all of it is protected.
		out = append(out, configuredPath{path: base})
	}
	for _, v := range vals {
		if v.Key() == "core.hookspath" {
			out = append(out, configuredPath{path: gitconfig.ExpandPath(v.Value, home, base), hooks: true})
			continue
		}
		if !runsProgram(v) {
			continue
		}
		for _, w := range programPaths(v.Value) {
			out = append(out, configuredPath{path: gitconfig.ExpandPath(w, home, base)})
		}
	}
	return out
}

// configuredPath is a path a repository's configuration names.
type configuredPath struct {
	path  string
	hooks bool // a core.hooksPath directory
}

// hookNames are the hooks git runs (githooks(5)).
var hookNames = []string{
	"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
	"prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout",
	"post-merge", "pre-push", "pre-receive", "update", "proc-receive", "post-receive",
	"post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite",
	"sendemail-validate", "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist",
	"p4-post-changelist", "p4-pre-submit", "post-index-change",
}

// runsProgram reports whether a setting names a program git runs (through
// the shell, from the working tree's root).
func runsProgram(v gitconfig.Value) bool {
	switch v.Section + "." + v.Name {
	case "core.fsmonitor", "core.pager", "core.editor", "core.sshcommand", "core.askpass",
		"core.gitproxy", "sequence.editor", "diff.external", "gpg.program", "credential.helper",
		"uploadpack.packobjectshook", "sendemail.smtpserver", "sendemail.sendmailcmd",
		"sendemail.tocmd", "sendemail.cccmd", "web.browser":
		return true
	}
	if v.Subsection == "" {
		return v.Section == "alias" || v.Section == "pager"
	}
	switch v.Section + "." + v.Name {
	case "filter.clean", "filter.smudge", "filter.process", "diff.command", "diff.textconv",
		"merge.driver", "difftool.cmd", "mergetool.cmd", "browser.cmd", "gpg.program",
		"credential.helper", "remote.uploadpack", "remote.receivepack":
		return true
	}
	return false
}

// programPaths are the words of a command line that name a file by path
// (they hold a slash): a script in the workspace that a setting runs must
// stay as it is.
func programPaths(cmd string) []string {
	var out []string
	for _, w := range strings.Fields(strings.TrimPrefix(cmd, "!")) {
		w = strings.Trim(w, `"'`)
		if strings.Contains(w, "/") {
			out = append(out, w)
		}
	}
	return out
}

// gitdirProtected lists the files of a git directory that decide what runs
// or where it goes: hooks, config (core.hooksPath, aliases, filters,
// fsmonitor, sshCommand), the pointers to other git directories, and the
// remotes of git's older formats (remotes/, branches/: a repository whose
// config has no origin pushes to what remotes/origin names); recursively
// for submodules and worktrees kept inside it.
func gitdirProtected(gitdir string) []string {
	out := []string{
		filepath.Join(gitdir, "hooks"),
		filepath.Join(gitdir, "config"),
		filepath.Join(gitdir, "commondir"),
		filepath.Join(gitdir, "config.worktree"),
		filepath.Join(gitdir, "remotes"),
		filepath.Join(gitdir, "branches"),
	}
	modules, _ := filepath.Glob(filepath.Join(gitdir, "modules", "*"))
	for _, m := range modules {
		out = append(out, gitdirProtected(m)...)
	}
	worktrees, _ := filepath.Glob(filepath.Join(gitdir, "worktrees", "*"))
	for _, w := range worktrees {
		out = append(out, filepath.Join(w, "config.worktree"), filepath.Join(w, "commondir"), filepath.Join(w, "gitdir"))
	}
	return out
}

// readGitdirFile parses "gitdir: PATH" from a .git file.
func readGitdirFile(dotgit string) string {
	fd, err := unix.Open(dotgit, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	f := os.NewFile(uintptr(fd), dotgit)
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return ""
	}
	p, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "gitdir:")
	if !ok {
		return ""
	}
	p = strings.TrimSpace(p)
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(dotgit), p)
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return filepath.Clean(p)
}

// readCommondir resolves a gitdir's commondir file, if any.
func readCommondir(gitdir string) string {
	fd, err := unix.Open(filepath.Join(gitdir, "commondir"), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	f := os.NewFile(uintptr(fd), "commondir")
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	b := make([]byte, 4096)
	n, _ := f.Read(b)
	p := strings.TrimSpace(string(b[:max(n, 0)]))
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(gitdir, p)
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return filepath.Clean(p)
}

func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// Absence tells which of a set of paths are surely absent, from one
// reading of each directory that holds several of them, instead of one
// lstat per path: the protected paths of a workspace are a hundred or so
// names, nearly all missing, in a few directories (the workspace's root,
// .git, .git/hooks), and they are looked up before and after every call.
// Its answers are those an lstat of each path would give at the moment
// of the reading: a directory is opened the way lstat resolves a path's
// parent (links on the way followed). Only a name the directory does not
// hold, or a directory that does not exist, counts as absent; anything
// else (present, or a directory that could not be read: a file, no read
// permission, too many entries to be worth reading) is left to the
// caller's own lstat.
//
// A listing answers for a lookup only where names match byte for byte:
// in a case-insensitive directory (ext4, f2fs or tmpfs with casefold, a
// FAT or NTFS volume, a share served by such a system) a lookup of .envrc
// finds .ENVRC, which the listing does not name, and what a protected
// path's later user (direnv, git) would open would go unseen. So a
// directory is read only on a filesystem known to match names exactly:
// btrfs, and ext4, f2fs and tmpfs when the directory is not casefolded
// (caseSensitive); any other is left to lstat.
type Absence struct {
	dirs map[string]map[string]bool // a directory read whole → its names; nil: it does not exist
}

// absenceMinShared is how many of the paths a directory must hold to be
// read: reading one costs about five lstats (open, two getdents, close).
const absenceMinShared = 5

// absenceMaxNames bounds a reading, per path looked up in the directory:
// a directory far larger than what is asked of it (a workspace of 10,000
// files at its root) costs more to read than the lstats it saves.
const absenceMaxNames = 16

// ReadAbsence reads the directories that hold at least absenceMinShared
// of paths (absolute, clean).
func ReadAbsence(paths []string) Absence {
	wanted := map[string]int{}
	for _, p := range paths {
		wanted[filepath.Dir(p)]++
	}
	a := Absence{dirs: map[string]map[string]bool{}}
	for dir, n := range wanted {
		if n < absenceMinShared {
			continue
		}
		if names, ok := readNames(dir, n*absenceMaxNames); ok {
			a.dirs[dir] = names
		}
	}
	return a
}

// readNames is dir's entries, if it has at most max; a dir that does not
// exist has none (nil, true); ok is false when it could not be read.
func readNames(dir string, max int) (map[string]bool, bool) {
	// O_DIRECTORY: a FIFO or device planted under the name is never
	// opened (ENOTDIR comes first), so it cannot stall the reading.
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true
	}
	if err != nil {
		return nil, false
	}
	f := os.NewFile(uintptr(fd), dir)
	defer f.Close()
	if !dirCaseSensitive(fd) {
		return nil, false
	}
	// A directory's size grows with its entries (ext4: blocks of them,
	// tmpfs: 20 bytes each, btrfs: twice their names' length): one far
	// too large is not read at all.
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Size > int64(max)*64 {
		return nil, false
	}
	names := map[string]bool{}
	for {
		batch, err := f.Readdirnames(256)
		for _, n := range batch {
			names[n] = true
		}
		if len(names) > max {
			return nil, false
		}
		if errors.Is(err, io.EOF) {
			return names, true
		}
		if err != nil {
			return nil, false // ENOTDIR, EACCES, an I/O error: the caller looks itself
		}
	}
}

// Absent reports whether p was surely absent when its directory was read;
// false means the caller must look (lstat) itself.
func (a Absence) Absent(p string) bool {
	names, read := a.dirs[filepath.Dir(p)]
	return read && !names[filepath.Base(p)]
}

// fsCasefoldFlag is FS_CASEFOLD_FL, the inode flag (chattr +F) of a
// directory whose lookups ignore case.
const fsCasefoldFlag = 0x40000000

// dirCaseSensitive reports whether the directory open at fd is known to
// match names byte for byte (see Absence).
func dirCaseSensitive(fd int) bool {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return false
	}
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	return caseSensitive(int64(st.Type), flags, err)
}

// caseSensitive is dirCaseSensitive's decision, given the filesystem's
// magic number and the directory's inode flags (or why they could not be
// read).
func caseSensitive(fsType int64, flags uint32, flagsErr error) bool {
	switch fsType {
	case unix.BTRFS_SUPER_MAGIC:
		return true // no case-insensitive directories
	case unix.EXT4_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC, unix.TMPFS_MAGIC:
		return flagsErr == nil && flags&fsCasefoldFlag == 0
	}
	return false
}

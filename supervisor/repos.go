package supervisor

import (
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"brig/internal/safefs"
	"brig/jail"
)

// callClock reads the clock the kernel stamps inode changes with (the
// coarse realtime clock), so that anything a call changes carries a ctime
// at or after the call's start. ctime cannot be set by a process: a call
// cannot make what it did look older.
func callClock() unix.Timespec {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &ts)
	return ts
}

// sweepAll runs the sweeps after a call whose processes are all gone: the
// protected paths (sweep), the repositories it made (sweepNewRepositories)
// and the links it left in git directories (sweepGitLinks). It returns
// what each undid.
func (s *Supervisor) sweepAll(spec jail.Spec, before map[string]protectedState, start unix.Timespec) []string {
	v := append(s.sweep(before), s.sweepNewRepositories(spec, start)...)
	return append(v, s.sweepGitLinks(spec, start)...)
}

// sweepNewRepositories takes out of the workspace what a call did to make
// git run its code later, outside any jail. git treats as a repository
// (and obeys its config: core.fsmonitor, hooks, aliases) any .git entry
// and any directory with a repository's shape, whatever its name (HEAD and
// objects/ and refs/, or HEAD and commondir: a bare repository, git init
// --bare), and it uses what sits in a git directory's modules/ and
// worktrees/. Every such git directory in the parts of the workspace the
// call could write is found (jail.Repositories); one that was known
// before the call is protected in place (its control files are in
// spec.Protected), and one that the call created or changed is undone:
//   - a new .git entry, and a new entry under modules/ or worktrees/, is
//     moved out whole, and so is a new .hg or .jj (a Mercurial or jj
//     repository: those obey its config, and run what it names);
//   - a directory given the shape elsewhere loses the control files the
//     call created or changed (HEAD, config, commondir, hooks …; objects/
//     and refs/ when the call made them), which breaks the shape and
//     removes what would run; the rest of the directory is the user's.
//
// A git directory that is not in the list but that the call did not touch
// (every control file older than the call, and every directory between it
// and the written root: see movedIn) predates it (a list computed at the
// session's start can miss a repository cloned since) and is left alone; a listed one is never taken out (it was read-only during the
// call). The workspace root's .git is always known: its control files are
// always listed. Inode times have the granularity of a clock tick, so a
// change made in the tick before the call counts as the call's: that can
// only take out a repository that was not listed.
func (s *Supervisor) sweepNewRepositories(spec jail.Spec, start unix.Timespec) []string {
	// known are the git directories listed before the call (their
	// control files are); knownDotGit the .git files and links that were
	// there before. The two differ at the workspace's root, whose
	// .git/config is always listed, a repository there or not: a .git
	// file a call wrote there, naming a git directory it made in a place
	// it could write outside the workspace (the toolchain cache), was
	// taken for the root's own and left for the user's next git status
	// to run its core.fsmonitor (red team, 2026-12-03).
	known, knownDotGit := map[string]bool{}, map[string]bool{}
	listed := map[string]bool{}
	for _, p := range spec.Protected {
		listed[p] = true
		switch filepath.Base(p) {
		case "config", "commondir":
			known[filepath.Dir(p)] = true
		case ".git":
			known[p], knownDotGit[p] = true, true // a .git file (or link) that was there before
		}
		// A .hg or .jj whose root was searched before the call: its
		// Workspace entries (.hg/hgrc, .jj/workspace-config.toml) are
		// listed. Every root's are, so one made at the workspace's root
		// or a git working tree's counts as known too; the entries
		// themselves are the protected-path sweep's there.
		if d := filepath.Dir(p); filepath.Base(d) == ".hg" || filepath.Base(d) == ".jj" {
			known[d] = true
		}
	}
	// The grant's memory, when it has one: it searched the workspace
	// just before the call, so only what changed since is listed again.
	cache := cmp.Or(spec.Repos, s.repos)
	// A link into the toolchain cache, which every call writes, makes what
	// a call left there part of the workspace to a shell that enters it:
	// a repository built in the cache ran its core.fsmonitor at the
	// user's next git status in the link (red team, 2026-12-03). The cache
	// is not searched (it is large, and no tool makes a repository there
	// that the user runs git in); a link into it that the call made is
	// taken out.
	var into []string
	if spec.Cache != nil && spec.Cache.Root != "" {
		into = []string{spec.Cache.Root}
	}
	var found []string
	takeLinks := func(links []string) {
		for _, l := range links {
			if changedSince(l, start) {
				found = append(found, s.takeOut(l)...)
			}
		}
	}
	for _, root := range writtenRoots(spec) {
		repos, unlisted, links, _ := cache.SearchLinks(root, into)
		takeLinks(links)
		// A directory the search cannot open hides what is in it: a call
		// planted a repository in src/x and ran chmod 111 src/x, and its
		// hooks stayed for the user's next git or hg there (red team,
		// 2026-12-03). Calls are refused while the workspace holds one
		// (the hard-link check), so this call closed it: it is opened to
		// its owner again and searched, nested ones in turn; one that
		// cannot be opened is taken out whole.
		for round := 0; len(unlisted) > 0; round++ {
			opened := false
			for _, d := range unlisted {
				if round < maxReopenRounds && s.openToOwner(d) {
					opened = true
					found = append(found, d)
				} else {
					found = append(found, s.takeOut(d)...)
				}
			}
			if !opened {
				break
			}
			repos, unlisted, links, _ = cache.SearchLinks(root, into)
			takeLinks(links)
		}
		for _, r := range repos {
			found = append(found, s.undoRepository(r, known, knownDotGit, listed, start, root)...)
		}
	}
	slices.Sort(found)
	return slices.Compact(found)
}

// maxReopenRounds bounds the searches after a call that closed directories
// inside directories it closed: deeper ones are taken out whole.
const maxReopenRounds = 16

// openToOwner gives a directory the call closed to listing its owner's
// read, write and search permission back (see sweepNewRepositories), reporting
// whether that changed its permissions.
func (s *Supervisor) openToOwner(p string) bool {
	d, err := safefs.Open(p)
	if err != nil {
		s.log.Warn("a directory the call closed to listing could not be opened", "path", p, "err", err)
		return false
	}
	defer d.Close()
	changed, err := d.OpenToOwner()
	if err != nil {
		s.log.Warn("a directory the call closed to listing could not be opened to its owner", "path", p, "err", err)
	}
	return changed // already open to its owner: brig is not the owner, or something else denies it
}

// undoRepository undoes one git directory the call created or changed,
// found under root, and returns the paths it took out.
func (s *Supervisor) undoRepository(r jail.Repository, known, knownDotGit, listed map[string]bool, start unix.Timespec, root string) []string {
	switch {
	case r.Foreign == "direnv":
		// An .envrc. What a known one loads, and the file itself, were
		// protected during the call. One the call made is taken out:
		// direnv runs none the user has not allowed, unless the user's
		// direnv.toml whitelists the directory ([whitelist] prefix),
		// where it runs any (new user, 2026-12-03).
		if !listed[r.GitDir] && (changedSince(r.GitDir, start) || movedIn(r.GitDir, root, start)) {
			return s.takeOut(r.GitDir)
		}
		return nil
	case r.Foreign != "":
		// A .hg or .jj (Mercurial and jj read their config in it and run
		// what it names) where none was before: the call made a
		// repository, taken out whole as a new .git is.
		if !known[r.GitDir] && (changedSince(r.GitDir, start) || movedIn(r.GitDir, root, start)) {
			return s.takeOut(r.GitDir)
		}
		// A known one (a root's, where one is always listed) keeps its
		// store, which jj writes; but a .jj/repo that is a file names the
		// repository jj loads, config and all, elsewhere (a secondary
		// workspace's): one the call wrote, or put where the directory
		// was, is taken out (red team, 2026-12-03).
		if repo := filepath.Join(r.GitDir, "repo"); r.Foreign == "jj" {
			if fi, err := os.Lstat(repo); err == nil && !fi.IsDir() && changedSince(repo, start) {
				return s.takeOut(repo)
			}
		}
		return nil
	case r.DotGit != "":
		// A .git file or link. One that was listed stayed read-only
		// during the call (the protected-path sweep restores a replaced
		// link); one that was not and changed was made by the call. What
		// it names is a git directory of its own, found by its shape if
		// it is here.
		if !knownDotGit[r.DotGit] && (changedSince(r.DotGit, start) || movedIn(r.DotGit, root, start)) {
			return s.takeOut(r.DotGit)
		}
		return nil
	case known[r.GitDir]:
		return nil
	}
	moved := movedIn(r.GitDir, root, start)
	switch {
	case !changedSince(r.GitDir, start) && !controlChanged(r.GitDir, start) && !moved:
		s.log.Info("a repository not listed when the call was granted predates it; left alone", "path", r.GitDir)
		return nil
	case r.Kept || filepath.Base(r.GitDir) == ".git" || keptPath(r.GitDir):
		return s.takeOut(r.GitDir)
	}
	// A directory given the shape: take out what the call made of it —
	// all of its control files when it was moved into reach (they keep
	// the old times of where it was made).
	made := func(p string) bool { return moved || changedSince(p, start) }
	var out []string
	for _, name := range []string{"HEAD", "commondir", "config", "config.worktree", "gitdir"} {
		p := filepath.Join(r.GitDir, name)
		if fi, err := os.Lstat(p); err == nil && !fi.IsDir() && made(p) {
			out = append(out, s.takeOut(p)...)
		}
	}
	if hooks := filepath.Join(r.GitDir, "hooks"); made(hooks) || entriesChanged(hooks, start) {
		if _, err := os.Lstat(hooks); err == nil {
			out = append(out, s.takeOut(hooks)...)
		}
	}
	for _, name := range []string{"objects", "refs"} {
		if p := filepath.Join(r.GitDir, name); jail.IsRepositoryShape(r.GitDir) && made(p) {
			out = append(out, s.takeOut(p)...)
		}
	}
	if jail.IsRepositoryShape(r.GitDir) && len(out) > 0 {
		s.log.Error("a directory the call gave a repository's shape still has it", "path", r.GitDir)
	}
	return out
}

// movedIn reports whether a directory between root and gitdir changed
// during the call. A repository made where no search could see it (under
// a path longer than PATH_MAX, or in a directory made unsearchable) and
// brought within reach by a later call keeps its own old times, but the
// directories it was renamed as or moved into, or made searchable again,
// do not. root itself changes whenever a call adds anything to it, so it
// does not count.
func movedIn(gitdir, root string, start unix.Timespec) bool {
	for d := filepath.Dir(gitdir); d != root && within(d, root); d = filepath.Dir(d) {
		if changedSince(d, start) {
			return true
		}
	}
	return false
}

// keptPath reports whether a git directory lies in another's modules/ or
// worktrees/ (found by a walk that started inside them, as after a file
// tool's call there).
func keptPath(gitdir string) bool {
	return strings.Contains(gitdir, "/.git/modules/") || strings.Contains(gitdir, "/.git/worktrees/")
}

// takeOut quarantines p from inside its parent opened without following
// symlinks, and reports it.
func (s *Supervisor) takeOut(p string) []string {
	dir, err := safefs.Open(filepath.Dir(p))
	if err != nil {
		s.log.Warn("a repository's directory was replaced by a symlink or vanished; left alone", "path", p, "err", err)
		return []string{p}
	}
	defer dir.Close()
	if err := s.quarantine(dir, filepath.Base(p)); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.log.Error("could not take out a repository the call created", "path", p, "err", err)
	}
	return []string{p}
}

// changedSince reports whether p (not followed if a link) changed at or
// after start: created, renamed, written, or its entries changed.
func changedSince(p string, start unix.Timespec) bool {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return false
	}
	return timeAtOrAfter(st.Ctim, start)
}

// controlChanged reports whether a git directory's control files changed
// at or after start.
func controlChanged(gitdir string, start unix.Timespec) bool {
	for _, name := range []string{"HEAD", "config", "commondir", "config.worktree", "gitdir", "hooks", "objects", "refs"} {
		if changedSince(filepath.Join(gitdir, name), start) {
			return true
		}
	}
	return entriesChanged(filepath.Join(gitdir, "hooks"), start)
}

// entriesChanged reports whether any entry of dir changed at or after
// start (a hook rewritten in place changes its own ctime, not the
// directory's).
func entriesChanged(dir string, start unix.Timespec) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if changedSince(filepath.Join(dir, e.Name()), start) {
			return true
		}
	}
	return false
}

// sweepGitLinks takes out of each known git directory the call could write
// the symbolic links and special files (FIFOs, sockets, devices) the call
// left there. git follows a link when it later writes its own files:
// COMMIT_EDITMSG on a commit, FETCH_HEAD on a fetch, the reflogs on every
// change of HEAD, the index and packed-refs through their lock files. A
// link planted in .git therefore makes the user's next git command, run
// outside any jail, write where the call chose (COMMIT_EDITMSG linked to
// ~/.bashrc, with a SQUASH_MSG of the call's making as the message); a
// FIFO there stalls it. git makes no link in a git directory itself,
// except a HEAD that names a ref (core.preferSymlinkRefs), which is left.
// Only what changed during the call is taken out (an entry's ctime, which
// a call cannot set back); a repository the call created is taken out
// whole by sweepNewRepositories. In each such git directory it then takes
// out the interrupted operations (sweepOperations), the replacements
// (sweepReplacements), the recorded conflict resolutions
// (sweepResolutions), the objects that are not what their ids name and
// the object caches (sweepObjects), the Git LFS objects that are not
// what their ids name (sweepLFS), and the other programs' files
// (sweepForeign) the call made.
func (s *Supervisor) sweepGitLinks(spec jail.Spec, start unix.Timespec) []string {
	var found []string
	seen := map[string]bool{}
	protected := map[string]bool{}
	for _, p := range spec.Protected {
		protected[p] = true
	}
	for _, gitdir := range gitDirsOf(spec) {
		if seen[gitdir] || !(filepath.Base(gitdir) == ".git" || jail.IsRepositoryShape(gitdir)) {
			continue
		}
		seen[gitdir] = true
		if !writesIn(spec, gitdir) {
			continue // read-only during the call
		}
		dir, err := safefs.Open(gitdir)
		if err != nil {
			continue // gone, or a link now: the other sweeps' concern
		}
		found = append(found, s.sweepGitDir(dir, start, false, true, false, protected)...)
		found = append(found, s.sweepOperations(dir, start)...)
		found = append(found, s.sweepReplacements(dir, start)...)
		found = append(found, s.sweepResolutions(dir, start)...)
		found = append(found, s.sweepObjects(dir, start)...)
		found = append(found, s.sweepLFS(dir, start)...)
		found = append(found, s.sweepForeign(dir, start)...)
		dir.Close()
	}
	slices.Sort(found)
	return found
}

// sweepGitDir is sweepGitLinks' walk of one directory of a git directory.
// In an object store (objects/, lfs/objects/) only the store's own entries
// and its non-fan-out directories (pack/, info/) are looked at: git writes
// objects through new names and never into one that exists, so a link
// among the objects can only be read, and the fan-out directories hold
// thousands of files. modules/ holds git directories of their own, each
// walked from its own config. The protected paths (hooks, config …) are
// the protected-path sweep's, which has put back the link a call replaced
// by the time this runs.
//
// An entry is the call's when it changed during the call, or when a
// directory between the git directory and it did (moved): a link keeps
// its change time when the directory holding it is renamed, so a call
// could park links where git does not look (objects/ab/logs/HEAD) and
// move the directory into place (logs) in a later call. The git
// directory's own time does not count (every commit changes it).
//
// A directory whose entries did not change during the call (its ctime is
// older: a new name in it, a link or FIFO included, changes it) and that
// was not moved is not listed when nothing below it can have changed
// either: it holds no directory (a link count of 2), or it is an object
// store, whose pack/ and info/ are opened by name.
func (s *Supervisor) sweepGitDir(dir *safefs.Dir, start unix.Timespec, store, top, moved bool, protected map[string]bool) []string {
	self, err := dir.StatSelf()
	if err != nil {
		return nil
	}
	changed := timeAtOrAfter(self.Ctim, start)
	moved = moved || !top && changed
	same := !changed && !moved
	var ents []safefs.Dirent
	switch {
	case same && self.Nlink == 2:
		return nil
	case same && store:
		ents = []safefs.Dirent{{Name: "info", Type: unix.DT_DIR}, {Name: "pack", Type: unix.DT_DIR}}
	default:
		if ents, err = dir.Dirents(); err != nil {
			s.log.Warn("could not list a git directory after a call", "path", dir.Path(), "err", err)
			return nil
		}
	}
	var found []string
	for _, e := range ents {
		if protected[filepath.Join(dir.Path(), e.Name)] || same && e.Type != unix.DT_DIR && e.Type != unix.DT_UNKNOWN {
			continue // protected: another sweep's; unchanged since before the call
		}
		typ := e.Type
		if typ == unix.DT_UNKNOWN {
			st, err := dir.Stat(e.Name)
			if err != nil {
				continue
			}
			typ = direntType(st.Mode)
		}
		switch typ {
		case unix.DT_REG:
			continue
		case unix.DT_DIR:
			if e.Name == "modules" || e.Name == "hooks" || store && fanOut(e.Name) {
				continue // walked on their own; read-only; objects
			}
			sub, err := dir.Sub(e.Name)
			if err != nil {
				continue
			}
			found = append(found, s.sweepGitDir(sub, start, e.Name == "objects", false, moved, protected)...)
			sub.Close()
			continue
		}
		st, err := dir.Stat(e.Name)
		if err != nil || !moved && !timeAtOrAfter(st.Ctim, start) {
			continue // gone, or there before the call
		}
		if typ == unix.DT_LNK && e.Name == "HEAD" {
			if t, err := dir.Readlink(e.Name); err == nil && strings.HasPrefix(t, "refs/") {
				continue // git's own symbolic-link HEAD
			}
		}
		p := filepath.Join(dir.Path(), e.Name)
		if err := s.quarantine(dir, e.Name); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.log.Error("could not take a link or special file out of a git directory", "path", p, "err", err)
		}
		found = append(found, p)
	}
	return found
}

// fanOut reports whether name is an object store's fan-out directory (two
// hex digits).
func fanOut(name string) bool {
	if len(name) != 2 {
		return false
	}
	for _, c := range name {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// direntType is the listing type of a file mode (for file systems whose
// listings give none).
func direntType(mode uint32) uint8 {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return unix.DT_REG
	case unix.S_IFDIR:
		return unix.DT_DIR
	case unix.S_IFLNK:
		return unix.DT_LNK
	}
	return unix.DT_UNKNOWN // FIFOs, sockets, devices: all taken out alike
}

// timeAtOrAfter reports whether t is at or after start.
func timeAtOrAfter(t, start unix.Timespec) bool {
	return t.Sec > start.Sec || t.Sec == start.Sec && t.Nsec >= start.Nsec
}

// gitDirsOf lists the git directories a call of spec may have written:
// those whose config the grant protects (a bash call's grant lists every
// repository's control files), and the one a write grant lies in (a file
// tool's grant is the one directory it writes, .git/rebase-merge, whose
// protected paths hold no config).
func gitDirsOf(spec jail.Spec) []string {
	var out []string
	for _, p := range spec.Protected {
		if filepath.Base(p) == "config" {
			out = append(out, filepath.Dir(p))
		}
	}
	for _, r := range spec.Paths {
		if !r.Access.Includes(jail.Write) || !within(r.Path, spec.Workspace) {
			continue
		}
		for d := r.Path; d != spec.Workspace && within(d, spec.Workspace); d = filepath.Dir(d) {
			if filepath.Base(d) == ".git" || jail.IsRepositoryShape(d) {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// writesIn reports whether spec lets a call write anything in gitdir: a
// bash call's grant of the repository, or a file tool's of one file in it
// (edit_file of .git/rebase-merge/git-rebase-todo grants that file's
// directory alone).
func writesIn(spec jail.Spec, gitdir string) bool {
	if ok, _ := spec.Allows(filepath.Join(gitdir, "COMMIT_EDITMSG"), jail.Write); ok {
		return true
	}
	for _, r := range spec.Paths {
		if r.Access.Includes(jail.Write) && within(r.Path, gitdir) {
			return true
		}
	}
	return false
}

// gitOperations are the states of git's interrupted operations: a rebase
// (rebase-merge, or rebase-apply for its apply backend and git am) and a
// cherry-pick or revert of several commits (sequencer). git status tells
// the user to continue one, and continuing it (--continue) runs, outside
// any jail, what the state says: an exec line of its to-do list, a merge
// strategy (git runs git-merge-NAME, from PATH, or for a name with a slash
// a path in the worktree) with its options (passed unquoted to the
// resolve and octopus scripts, where --index-output= overwrote a file of
// the user's choosing), and every commit or patch it still has to apply
// — written into the worktree outside the jail, where the hooks directory
// and the other protected paths are not guarded, so a picked commit that
// adds .githooks/post-commit has it run after that very commit (red team,
// 2026-12-02). So any such state a call created or changed is taken out.
var gitOperations = []string{"rebase-merge", "rebase-apply", "sequencer"}

// gitOperationFiles are single-file states of the same kind: the stash a
// merge started with --autostash applies when it ends.
var gitOperationFiles = []string{"MERGE_AUTOSTASH"}

// bisectState is a bisection's state: git status says one is in progress
// while BISECT_LOG exists, and git bisect reset — and git bisect start,
// before its own — checks out what BISECT_START names, writing that
// commit's files (a hooks directory's too) outside the jail (red team,
// 2026-12-02). It is taken out whole when the call changed any of it.
var bisectState = []string{"BISECT_START", "BISECT_LOG", "BISECT_NAMES", "BISECT_TERMS", "BISECT_EXPECTED_REV", "BISECT_ANCESTORS_OK", "BISECT_HEAD", "BISECT_RUN", "BISECT_FIRST_PARENT", "refs/bisect"}

// sweepOperations takes out of a git directory the state of every
// interrupted operation the call created or changed (gitOperations,
// gitOperationFiles, bisectState). The operation is then no longer in
// progress: HEAD stays where it stopped, and ORIG_HEAD and the reflog
// still name where it started. One that did not change during the call —
// the user's own, left as it was — stays.
func (s *Supervisor) sweepOperations(dir *safefs.Dir, start unix.Timespec) []string {
	var found []string
	// take quarantines rel (one element, or refs/bisect) of dir.
	take := func(rel string) {
		parent, name := dir, rel
		if d, base := filepath.Split(rel); d != "" {
			sub, err := dir.Sub(filepath.Clean(d))
			if err != nil {
				return
			}
			defer sub.Close()
			parent, name = sub, base
		}
		if _, err := parent.Stat(name); err != nil {
			return // not there: nothing to take
		}
		p := filepath.Join(dir.Path(), rel)
		if err := s.quarantine(parent, name); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.log.Error("could not take out an interrupted git operation the call changed", "path", p, "err", err)
		}
		found = append(found, p)
	}
	for _, name := range gitOperations {
		sub, err := dir.Sub(name)
		if err != nil {
			continue // none, or a link: sweepGitDir's
		}
		changed := stateChanged(sub, start)
		sub.Close()
		if changed {
			take(name)
		}
	}
	for _, name := range gitOperationFiles {
		if st, err := dir.Stat(name); err == nil && timeAtOrAfter(st.Ctim, start) {
			take(name)
		}
	}
	if bisectChanged(dir, start) {
		for _, name := range bisectState {
			take(name)
		}
	}
	return found
}

// bisectChanged reports whether the call changed any of a bisection's
// state (a file, or refs/bisect and what it holds).
func bisectChanged(dir *safefs.Dir, start unix.Timespec) bool {
	for _, name := range bisectState {
		if name == "refs/bisect" {
			if sub, err := dir.Sub(name); err == nil {
				changed := stateChanged(sub, start)
				sub.Close()
				if changed {
					return true
				}
			}
			continue
		}
		if st, err := dir.Stat(name); err == nil && timeAtOrAfter(st.Ctim, start) {
			return true
		}
	}
	return false
}

// stateChanged reports whether an operation's directory, or an entry in
// it, changed at or after start. One that cannot be listed counts as
// changed.
func stateChanged(sub *safefs.Dir, start unix.Timespec) bool {
	if self, err := sub.StatSelf(); err == nil && timeAtOrAfter(self.Ctim, start) {
		return true
	}
	ents, err := sub.Dirents()
	if err != nil {
		return true
	}
	for _, e := range ents {
		if st, err := sub.Stat(e.Name); err == nil && timeAtOrAfter(st.Ctim, start) {
			return true
		}
	}
	return false
}

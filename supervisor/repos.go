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
//     moved out whole;
//   - a directory given the shape elsewhere loses the control files the
//     call created or changed (HEAD, config, commondir, hooks …; objects/
//     and refs/ when the call made them), which breaks the shape and
//     removes what would run; the rest of the directory is the user's.
//
// A git directory that is not in the list but that the call did not touch
// (every control file older than the call) predates it (a list computed
// at the session's start can miss a repository cloned since) and is left
// alone; a listed one is never taken out (it was read-only during the
// call). The workspace root's .git is always known: its control files are
// always listed. Inode times have the granularity of a clock tick, so a
// change made in the tick before the call counts as the call's: that can
// only take out a repository that was not listed.
func (s *Supervisor) sweepNewRepositories(spec jail.Spec, start unix.Timespec) []string {
	known := map[string]bool{}
	for _, p := range spec.Protected {
		switch filepath.Base(p) {
		case "config", "commondir":
			known[filepath.Dir(p)] = true
		case ".git":
			known[p] = true // a .git file (or link) that was there before
		}
	}
	// The grant's memory, when it has one: it searched the workspace
	// just before the call, so only what changed since is listed again.
	cache := cmp.Or(spec.Repos, s.repos)
	var found []string
	for _, root := range writtenRoots(spec) {
		repos, _ := cache.Repositories(root)
		for _, r := range repos {
			found = append(found, s.undoRepository(r, known, start)...)
		}
	}
	slices.Sort(found)
	return slices.Compact(found)
}

// undoRepository undoes one git directory the call created or changed and
// returns the paths it took out.
func (s *Supervisor) undoRepository(r jail.Repository, known map[string]bool, start unix.Timespec) []string {
	switch {
	case r.DotGit != "":
		// A .git file or link. One that was listed stayed read-only
		// during the call (the protected-path sweep restores a replaced
		// link); one that was not and changed was made by the call. What
		// it names is a git directory of its own, found by its shape if
		// it is here.
		if !known[r.DotGit] && changedSince(r.DotGit, start) {
			return s.takeOut(r.DotGit)
		}
		return nil
	case known[r.GitDir]:
		return nil
	case !changedSince(r.GitDir, start) && !controlChanged(r.GitDir, start):
		s.log.Info("a repository not listed when the call was granted predates it; left alone", "path", r.GitDir)
		return nil
	case r.Kept || filepath.Base(r.GitDir) == ".git" || keptPath(r.GitDir):
		return s.takeOut(r.GitDir)
	}
	// A directory given the shape: take out what the call made of it.
	var out []string
	for _, name := range []string{"HEAD", "commondir", "config", "config.worktree", "gitdir"} {
		p := filepath.Join(r.GitDir, name)
		if fi, err := os.Lstat(p); err == nil && !fi.IsDir() && changedSince(p, start) {
			out = append(out, s.takeOut(p)...)
		}
	}
	if hooks := filepath.Join(r.GitDir, "hooks"); changedSince(hooks, start) || entriesChanged(hooks, start) {
		out = append(out, s.takeOut(hooks)...)
	}
	for _, name := range []string{"objects", "refs"} {
		if p := filepath.Join(r.GitDir, name); jail.IsRepositoryShape(r.GitDir) && changedSince(p, start) {
			out = append(out, s.takeOut(p)...)
		}
	}
	if jail.IsRepositoryShape(r.GitDir) && len(out) > 0 {
		s.log.Error("a directory the call gave a repository's shape still has it", "path", r.GitDir)
	}
	return out
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
	return st.Ctim.Sec > start.Sec || st.Ctim.Sec == start.Sec && st.Ctim.Nsec >= start.Nsec
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

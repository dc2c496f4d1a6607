package supervisor

import (
	"bytes"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"brig/internal/unprivtest"
	"brig/jail"
)

func mk(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if content == "/" {
		if err := os.MkdirAll(path, 0o755); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// shape makes dir look like a git directory to git.
func shape(t *testing.T, dir, config string) {
	t.Helper()
	mk(t, filepath.Join(dir, "HEAD"), "ref: refs/heads/main\n")
	mk(t, filepath.Join(dir, "objects"), "/")
	mk(t, filepath.Join(dir, "refs"), "/")
	if config != "" {
		mk(t, filepath.Join(dir, "config"), config)
	}
}

// startAfter returns a call start that is later than every change made so
// far, on the clock inode changes are stamped with.
func startAfter(t *testing.T, probe string) unix.Timespec {
	t.Helper()
	mk(t, probe, "x")
	var st unix.Stat_t
	if err := unix.Lstat(probe, &st); err != nil {
		t.Fatal(err)
	}
	for {
		now := callClock()
		if now.Sec > st.Ctim.Sec || now.Sec == st.Ctim.Sec && now.Nsec > st.Ctim.Nsec {
			return now
		}
	}
}

// TestSweepRepositoryShapes: after a call, what it did to make git run its
// code later is taken out — a directory given a repository's shape loses
// the control files it got (the user's files in it stay), a new entry
// under .git/modules or .git/worktrees and a new .git file go whole — while
// repositories that were listed, or that predate the call untouched, and
// ordinary files stay.
func TestSweepRepositoryShapes(t *testing.T) {
	ws, q, s := sweeper(t)
	fsmon := "[core]\n\tfsmonitor = touch /nonexistent/canary\n"

	// Before the call: the workspace's repository with a listed module, a
	// bare repository the list missed (cloned after the session began),
	// a user's directory and a worktree's .git file.
	shape(t, filepath.Join(ws, ".git"), "[core]\n")
	shape(t, filepath.Join(ws, ".git/modules/lib"), "[core]\n")
	shape(t, filepath.Join(ws, "fixtures/old.git"), "[core]\n\tbare = true\n")
	mk(t, filepath.Join(ws, "src/main.go"), "package main\n")
	mk(t, filepath.Join(ws, "wt/.git"), "gitdir: ../.git/worktrees/wt\n")
	protected, err := jail.ProtectedPathsEnv(ws, []string{"GIT_CONFIG_NOSYSTEM=1"})
	if err != nil {
		t.Fatal(err)
	}
	protected = slices.DeleteFunc(protected, func(p string) bool { return filepath.Dir(p) == filepath.Join(ws, "fixtures/old.git") })
	start := startAfter(t, filepath.Join(q, "probe"))
	// A listed .git file whose inode changed in the call's first tick
	// (a fixture rewritten just before, a chmod) is still not taken out.
	mk(t, filepath.Join(ws, "wt/.git"), "gitdir: ../.git/worktrees/wt\n")

	// The call.
	shape(t, filepath.Join(ws, "src"), fsmon)
	mk(t, filepath.Join(ws, "src/new.go"), "package main\n")
	shape(t, filepath.Join(ws, ".git/modules/evil"), fsmon)
	mk(t, filepath.Join(ws, ".git/worktrees/x/HEAD"), "ref: refs/heads/x\n")
	mk(t, filepath.Join(ws, ".git/worktrees/x/commondir"), "../..\n")
	mk(t, filepath.Join(ws, ".git/modules/lib/objects/ab/cdef"), "object")
	mk(t, filepath.Join(ws, "vendor/y/.git"), "gitdir: ../../src\n")
	if out, err := exec.Command("git", "init", "-q", "--bare", filepath.Join(ws, "made.git")).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v %s", err, out)
	}
	// A HEAD git reads and an older brig did not (red team, 2026-12-03).
	mk(t, filepath.Join(ws, "loose/HEAD"), "ref:\nrefs/heads/main\n")
	mk(t, filepath.Join(ws, "loose/objects/.keep"), "")
	mk(t, filepath.Join(ws, "loose/refs/heads/main"), "0123456789abcdef0123456789abcdef01234567\n")
	mk(t, filepath.Join(ws, "loose/config"), fsmon)

	spec := jail.Spec{Workspace: ws, Paths: []jail.PathRule{{Path: ws, Access: jail.Write}}, Protected: protected}
	found := s.sweepNewRepositories(spec, start)

	for _, gone := range []string{"src/HEAD", "src/config", ".git/modules/evil", ".git/worktrees/x", "vendor/y/.git", "made.git/HEAD", "made.git/config", "made.git/hooks", "loose/HEAD", "loose/config"} {
		if _, err := os.Lstat(filepath.Join(ws, gone)); err == nil {
			t.Errorf("%s is still in the workspace", gone)
		}
		if !slices.Contains(found, filepath.Join(ws, gone)) {
			t.Errorf("%s is not reported: %v", gone, found)
		}
	}
	for _, dir := range []string{"src", "made.git", "loose"} {
		if jail.IsRepositoryShape(filepath.Join(ws, dir)) {
			t.Errorf("%s still has a repository's shape", dir)
		}
	}
	// Controls: what was listed or predates the call untouched, and the
	// user's files, stay.
	for _, kept := range []string{"src/main.go", "src/new.go", ".git/config", ".git/HEAD", ".git/modules/lib/config", ".git/modules/lib/objects/ab/cdef", "fixtures/old.git/config", "fixtures/old.git/HEAD", "wt/.git"} {
		if _, err := os.Lstat(filepath.Join(ws, kept)); err != nil {
			t.Errorf("%s was taken out: %v", kept, err)
		}
	}
	if entries, _ := os.ReadDir(q); len(entries) < 2 {
		t.Errorf("nothing was moved to the quarantine: %v", entries)
	}

	// A later call that changes the unlisted repository's config has it
	// taken out.
	start = startAfter(t, filepath.Join(q, "probe2"))
	mk(t, filepath.Join(ws, "fixtures/old.git/config"), fsmon)
	found = s.sweepNewRepositories(spec, start)
	if _, err := os.Lstat(filepath.Join(ws, "fixtures/old.git/config")); err == nil || !slices.Contains(found, filepath.Join(ws, "fixtures/old.git/config")) {
		t.Errorf("a changed config of an unlisted repository stayed (found %v)", found)
	}
	if _, err := os.Lstat(filepath.Join(ws, "fixtures/old.git/HEAD")); err != nil {
		t.Error("control: its untouched HEAD was taken out")
	}
}

// TestSweepRemembersOnlyWhatNoCallChanged: the sweep's search remembers
// the workspace's directories between calls (jail.RepoCache) and still
// takes out what a call made deep in a remembered subtree or in a
// remembered directory, and lists only the directories that changed.
func TestSweepRemembersOnlyWhatNoCallChanged(t *testing.T) {
	ws, q, s := sweepFixture(t)
	protected, err := jail.ProtectedPathsEnv(ws, []string{"GIT_CONFIG_NOSYSTEM=1"})
	if err != nil {
		t.Fatal(err)
	}
	spec := jail.Spec{Workspace: ws, Paths: []jail.PathRule{{Path: ws, Access: jail.Write}}, Protected: protected}
	// Directories changed within the last second are never remembered
	// (a change in the same clock tick may keep their change time): the
	// tree ages past that first.
	time.Sleep(1100 * time.Millisecond)
	for range 2 { // a call that changed nothing, twice: the second search remembers
		if found := s.sweepNewRepositories(spec, startAfter(t, filepath.Join(q, "probe0"))); len(found) != 0 {
			t.Fatalf("a call that changed nothing had %v taken out", found)
		}
	}
	if n := s.repos.Listed(); n != 1 {
		t.Fatalf("the search after an unchanged call listed %d directories, want only the root (it has a .git)", n)
	}

	plantAndSweep(t, s, spec, q, "e/f")
	if n := s.repos.Listed(); n < 3 || n > 8 {
		t.Errorf("the search after the call listed %d directories, want those it changed (and the root)", n)
	}
}

// TestSweepSearchesWithTheGrantsMemory: a spec whose grant searched the
// workspace with a RepoCache (Spec.Repos) is swept with that memory, so the
// first call's sweep lists only what changed since its grant, and still
// takes out a repository the call made deep in a remembered subtree or in
// a remembered directory. The supervisor's own memory stays unused.
func TestSweepSearchesWithTheGrantsMemory(t *testing.T) {
	ws, q, s := sweepFixture(t)
	// The tree ages past the racy second (RepoCache) before the grant.
	time.Sleep(1100 * time.Millisecond)
	grant := jail.NewRepoCache()
	protected, err := grant.ProtectedPathsEnv(ws, []string{"GIT_CONFIG_NOSYSTEM=1"})
	if err != nil {
		t.Fatal(err)
	}
	if n := grant.Listed(); n != 8 {
		t.Fatalf("the grant's first search listed %d directories, want all eight", n)
	}
	spec := jail.Spec{Workspace: ws, Paths: []jail.PathRule{{Path: ws, Access: jail.Write}}, Protected: protected, Repos: grant}

	if found := s.sweepNewRepositories(spec, startAfter(t, filepath.Join(q, "probe0"))); len(found) != 0 {
		t.Fatalf("a call that changed nothing had %v taken out", found)
	}
	if n := grant.Listed(); n != 1 {
		t.Fatalf("the first sweep listed %d directories, want only the root (it has a .git): it did not search with the grant's memory", n)
	}
	if n := s.repos.Listed(); n != 0 {
		t.Fatalf("the supervisor's own memory listed %d directories; the grant's was given", n)
	}

	plantAndSweep(t, s, spec, q, "g")

	// Without a memory of its grant's, the sweep searches with its own.
	spec.Repos = nil
	if found := s.sweepNewRepositories(spec, startAfter(t, filepath.Join(q, "probe2"))); len(found) != 0 {
		t.Fatalf("a call that changed nothing had %v taken out", found)
	}
	if n := s.repos.Listed(); n == 0 {
		t.Fatal("control: a spec without the grant's memory was not searched with the supervisor's own")
	}
}

// sweepFixture is a workspace with a .git and plain directories (a/b/c,
// a/d, e/f, g, each with a file), a quarantine, and a supervisor that
// sweeps with a memory of its own.
func sweepFixture(t *testing.T) (ws, q string, s *Supervisor) {
	t.Helper()
	ws, q = t.TempDir(), t.TempDir()
	s = &Supervisor{quarantineDir: q, log: slog.New(slog.DiscardHandler), repos: jail.NewRepoCache()}
	shape(t, filepath.Join(ws, ".git"), "[core]\n")
	for _, d := range []string{"a/b/c", "a/d", "e/f", "g"} {
		mk(t, filepath.Join(ws, d, "file.go"), "package x\n")
	}
	return ws, q, s
}

// plantAndSweep is a call that plants a repository deep in a/b/c and
// gives the directory shaped a repository's shape, then the sweep after
// it: both must be taken out and reported, and the user's file beside the
// shape must stay.
func plantAndSweep(t *testing.T, s *Supervisor, spec jail.Spec, q, shaped string) {
	t.Helper()
	ws := spec.Workspace
	start := startAfter(t, filepath.Join(q, "probe1"))
	mk(t, filepath.Join(ws, "a/b/c/evil/.git/config"), "[core]\n\tfsmonitor = touch /nonexistent/canary\n")
	shape(t, filepath.Join(ws, shaped), "[core]\n\tfsmonitor = touch /nonexistent/canary\n")
	found := s.sweepNewRepositories(spec, start)
	for _, gone := range []string{"a/b/c/evil/.git", shaped + "/HEAD", shaped + "/config"} {
		if _, err := os.Lstat(filepath.Join(ws, gone)); err == nil || !slices.Contains(found, filepath.Join(ws, gone)) {
			t.Errorf("%s stayed in the workspace or was not reported: %v", gone, found)
		}
	}
	if _, err := os.Lstat(filepath.Join(ws, shaped, "file.go")); err != nil {
		t.Error("control: the user's file beside the shape was taken out")
	}
}

// TestSweepGitLinks: links and FIFOs a call left in a known git directory
// (where git would later write through them, outside the jail) are taken
// out — at its top, in logs/, in a module's git directory, an objects/
// fan-out directory replaced by a link — while git's own files, a link
// that predates the call, git's symbolic-link HEAD and a read-only call's
// git directory are left.
func TestSweepGitLinks(t *testing.T) {
	ws, q, s := sweeper(t)
	home, bashrc := userHome(t)
	gd := filepath.Join(ws, ".git")
	shape(t, gd, "[core]\n")
	shape(t, filepath.Join(gd, "modules/lib"), "[core]\n")
	mk(t, filepath.Join(gd, "logs/refs/heads/main"), "log\n")
	mk(t, filepath.Join(gd, "objects/ab/cdef"), "object")
	mk(t, filepath.Join(gd, "objects/pack/p.pack"), "pack")
	mk(t, filepath.Join(gd, "modules/lib/objects/pack/.keep"), "")
	if err := os.Symlink(bashrc, filepath.Join(gd, "ORIG_HEAD")); err != nil {
		t.Fatal(err) // the user's own, before the session
	}
	mk(t, filepath.Join(ws, "githooks/pre-commit"), "#!/bin/sh\n")
	if err := os.Symlink("../githooks", filepath.Join(gd, "hooks")); err != nil {
		t.Fatal(err) // the user's hooks, kept in the tree
	}
	protected, err := jail.ProtectedPathsEnv(ws, []string{"GIT_CONFIG_NOSYSTEM=1"})
	if err != nil {
		t.Fatal(err)
	}
	before := snapshotProtected(protected)
	start := startAfter(t, filepath.Join(q, "probe"))

	// The call.
	link := func(target, p string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(gd, p)); err != nil {
			t.Fatal(err)
		}
	}
	link(bashrc, "COMMIT_EDITMSG")
	mk(t, filepath.Join(gd, "SQUASH_MSG"), "touch /tmp/pwned\n")
	link(bashrc, "logs/HEAD")
	link(home, "logs/refs/heads/topic")
	link(bashrc, "modules/lib/FETCH_HEAD")
	link(home, "objects/cd")
	link(bashrc, "objects/ab/0123")
	link(bashrc, "modules/lib/objects/pack/p.pack") // its objects/ unchanged
	if err := unix.Mkfifo(filepath.Join(gd, "MERGE_MSG"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(gd, "HEAD")); err != nil {
		t.Fatal(err)
	}
	link("refs/heads/main", "HEAD")
	if err := os.Remove(filepath.Join(gd, "hooks")); err != nil {
		t.Fatal(err)
	}
	link(home, "hooks") // a protected link replaced: put back, not taken out

	readOnly := jail.Spec{Workspace: ws, Paths: []jail.PathRule{{Path: ws, Access: jail.Read}}, Protected: protected}
	if found := s.sweepGitLinks(readOnly, start); len(found) != 0 {
		t.Errorf("a read-only call's git directory was swept: %v", found)
	}
	if _, err := os.Lstat(filepath.Join(gd, "COMMIT_EDITMSG")); err != nil {
		t.Fatal("control: the read-only sweep took a link out")
	}

	spec := jail.Spec{Workspace: ws, Paths: []jail.PathRule{{Path: ws, Access: jail.Write}}, Protected: protected}
	found := s.sweepAll(spec, before, start)
	for _, gone := range []string{"COMMIT_EDITMSG", "logs/HEAD", "logs/refs/heads/topic", "modules/lib/FETCH_HEAD", "objects/cd", "MERGE_MSG", "modules/lib/objects/pack/p.pack"} {
		if _, err := os.Lstat(filepath.Join(gd, gone)); err == nil {
			t.Errorf(".git/%s is still there", gone)
		}
		if !slices.Contains(found, filepath.Join(gd, gone)) {
			t.Errorf(".git/%s is not reported: %v", gone, found)
		}
	}
	for _, kept := range []string{"SQUASH_MSG", "ORIG_HEAD", "HEAD", "config", "logs/refs/heads/main", "objects/ab/cdef", "objects/ab/0123", "objects/pack/p.pack", "modules/lib/config"} {
		if _, err := os.Lstat(filepath.Join(gd, kept)); err != nil {
			t.Errorf(".git/%s was taken out: %v", kept, err)
		}
	}
	if b, err := os.ReadFile(bashrc); err != nil || string(b) != "# the user's\n" {
		t.Errorf("the link's target changed: %q %v", b, err)
	}
	if target, err := os.Readlink(filepath.Join(gd, "hooks")); err != nil || target != "../githooks" {
		t.Errorf("the user's hooks link was not put back: %q %v", target, err)
	}
	// git still sees a repository, and a commit made now writes its
	// message into the git directory, not through a link.
	if !jail.IsRepositoryShape(gd) {
		t.Error("the git directory lost its shape")
	}
}

// TestSweepOperationsTheCallChanged: an interrupted rebase, am,
// cherry-pick or revert that the call created or changed is taken out,
// whatever it holds: continuing it outside the jail runs its exec lines,
// its merge strategy and options (resolve's --index-output= wrote any
// file), and writes the commits it still has to pick — a hooks directory
// included, whose new hook git then runs (red team, 2026-12-02). Controls:
// the same states as the user left them before the call stay.
func TestSweepOperationsTheCallChanged(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string // relative to the git directory
		gone  string
	}{
		{"an exec line", map[string]string{"rebase-merge/git-rebase-todo": "pick 1234 one\n  x   touch /tmp/pwned\n", "rebase-merge/head-name": "refs/heads/main\n"}, "rebase-merge"},
		{"a strategy in the worktree", map[string]string{"rebase-merge/strategy": "x/../ci/helper.sh\n"}, "rebase-merge"},
		{"git's own strategy with options", map[string]string{"rebase-merge/strategy": "resolve\n", "rebase-merge/strategy_opts": "--index-output=/home/u/.gitconfig\n"}, "rebase-merge"},
		{"a plain pick", map[string]string{"rebase-merge/git-rebase-todo": "pick 5678 tidy hooks\n"}, "rebase-merge"},
		{"a cherry-pick's options", map[string]string{"sequencer/opts": "[options]\n\tstrategy = resolve\n\tstrategy-option = index-output=/x\n", "sequencer/todo": "pick 5678 B\n"}, "sequencer"},
		{"git am's patches", map[string]string{"rebase-apply/0001": "From 5678\n", "rebase-apply/next": "1\n", "rebase-apply/last": "1\n"}, "rebase-apply"},
		{"a merge's autostash", map[string]string{"MERGE_AUTOSTASH": "5678\n"}, "MERGE_AUTOSTASH"},
		// git bisect reset checks out what BISECT_START names.
		{"a bisection", map[string]string{"BISECT_START": "5678\n", "BISECT_LOG": "# bad: [5678] wip\n", "BISECT_TERMS": "bad\ngood\n", "refs/bisect/bad": "5678\n"}, "BISECT_START"},
		{"a bisection's ref alone", map[string]string{"refs/bisect/bad": "5678\n"}, "refs/bisect"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, q, s := sweeper(t)
			gd := filepath.Join(ws, ".git")
			shape(t, gd, "[core]\n")
			other := filepath.Join(ws, "lib/.git")
			shape(t, other, "[core]\n")
			for f, c := range tc.files {
				mk(t, filepath.Join(other, f), c) // the user's own, before the call
			}
			spec := writeGrant(t, ws)
			start := startAfter(t, filepath.Join(q, "probe"))
			for f, c := range tc.files {
				mk(t, filepath.Join(gd, f), c)
			}
			found := s.sweepGitLinks(spec, start)
			if _, err := os.Lstat(filepath.Join(gd, tc.gone)); err == nil || !slices.Contains(found, filepath.Join(gd, tc.gone)) {
				t.Errorf("the state the call wrote stayed (found %v)", found)
			}
			if _, err := os.Lstat(filepath.Join(other, tc.gone)); err != nil {
				t.Error("control: a state older than the call was taken out")
			}
			if _, err := os.Lstat(filepath.Join(gd, "HEAD")); err != nil {
				t.Error("the repository lost its HEAD")
			}
			if tc.gone == "BISECT_START" {
				for _, rest := range []string{"BISECT_LOG", "BISECT_TERMS", "refs/bisect"} {
					if _, err := os.Lstat(filepath.Join(gd, rest)); err == nil {
						t.Errorf("%s of the bisection stayed", rest)
					}
				}
			}
		})
	}
	// A state the call changed by writing into one file in place (its
	// directory's own time unchanged) is taken out too.
	ws, q, s := sweeper(t)
	gd := filepath.Join(ws, ".git")
	shape(t, gd, "[core]\n")
	mk(t, filepath.Join(gd, "sequencer/todo"), "pick 1234 A\n")
	spec := writeGrant(t, ws)
	start := startAfter(t, filepath.Join(q, "probe"))
	f, err := os.OpenFile(filepath.Join(gd, "sequencer/todo"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("pick 5678 B\n")
	f.Close()
	if found := s.sweepGitLinks(spec, start); !slices.Contains(found, filepath.Join(gd, "sequencer")) {
		t.Errorf("a to-do list appended to in place stayed (found %v)", found)
	}
}

// TestSweepAfterAFileTool: a file tool's grant is the one directory it
// writes in (edit_file of .git/rebase-merge/git-rebase-todo), not the
// repository, and its writes are swept all the same (red team
// 2026-12-02: an exec line added with edit_file stayed).
func TestSweepAfterAFileTool(t *testing.T) {
	ws, q, s := sweeper(t)
	gd := filepath.Join(ws, ".git")
	shape(t, gd, "[core]\n")
	mk(t, filepath.Join(gd, "rebase-merge/git-rebase-todo"), "pick 1234 one\n")
	// As policy.fileSpec compiles it: the directory written, and the
	// protected paths under it (none here).
	fileTool := func(dir string) jail.Spec {
		return jail.Spec{Workspace: ws, Paths: []jail.PathRule{{Path: dir, Access: jail.Write, Exact: true}}}
	}
	start := startAfter(t, filepath.Join(q, "probe"))
	mk(t, filepath.Join(gd, "rebase-merge/git-rebase-todo"), "exec id > /tmp/pwned\npick 1234 one\n")

	// Control: a file tool that wrote elsewhere in the workspace leaves
	// the repository alone (its grant reaches nothing in it).
	if found := s.sweepGitLinks(fileTool(filepath.Join(ws, "src")), start); len(found) != 0 {
		t.Errorf("a call that could not write the repository swept it: %v", found)
	}
	found := s.sweepGitLinks(fileTool(filepath.Join(gd, "rebase-merge")), start)
	if _, err := os.Lstat(filepath.Join(gd, "rebase-merge")); err == nil || !slices.Contains(found, filepath.Join(gd, "rebase-merge")) {
		t.Errorf("the exec line a file tool wrote stayed (found %v)", found)
	}
}

// TestSweepTakesOutALinkOnTheWay: a call that makes a link on the way to a
// missing protected path (tools -> x, where core.hooksPath names the
// missing tools/hooks, with x/hooks/pre-commit ready) has the link taken
// out and reported, and what it pointed at is an ordinary directory
// again; through a link of the user's that predates the call, the path
// the call created where the link leads is taken out and the link stays.
func TestSweepTakesOutALinkOnTheWay(t *testing.T) {
	ws, _, s := sweeper(t)
	mk(t, filepath.Join(ws, "y/readme"), "the user's\n")
	if err := os.Symlink("y", filepath.Join(ws, "cfg")); err != nil {
		t.Fatal(err)
	}
	hooks, lefthook := filepath.Join(ws, "tools/hooks"), filepath.Join(ws, "cfg/lefthook.yml")
	before := snapshotProtected([]string{hooks, lefthook})

	mk(t, filepath.Join(ws, "x/hooks/pre-commit"), "#!/bin/sh\ntouch /tmp/pwned\n")
	if err := os.Symlink("x", filepath.Join(ws, "tools")); err != nil {
		t.Fatal(err)
	}
	mk(t, filepath.Join(ws, "y/lefthook.yml"), "pre-commit:\n  commands:\n    x:\n      run: touch /tmp/pwned\n")
	found := s.sweep(before)
	if _, err := os.Lstat(filepath.Join(ws, "tools")); err == nil || !slices.Contains(found, filepath.Join(ws, "tools")) {
		t.Errorf("the planted link tools stayed (found %v)", found)
	}
	if _, err := os.Stat(hooks); err == nil {
		t.Error("tools/hooks still leads to hooks")
	}
	if _, err := os.Lstat(filepath.Join(ws, "y/lefthook.yml")); err == nil || !slices.Contains(found, lefthook) {
		t.Errorf("the protected file made through the user's link stayed (found %v)", found)
	}
	// Controls: the user's link and files, and the call's ordinary directory.
	if target, err := os.Readlink(filepath.Join(ws, "cfg")); err != nil || target != "y" {
		t.Errorf("the user's link changed: %q %v", target, err)
	}
	for _, kept := range []string{"y/readme", "x/hooks/pre-commit"} {
		if _, err := os.Lstat(filepath.Join(ws, kept)); err != nil {
			t.Errorf("%s was taken out: %v", kept, err)
		}
	}

	// Beyond the user's link, the call replaced y by a link to a
	// directory outside: nothing there is touched (the sweep goes no
	// further than the user's own link leads).
	outside := t.TempDir()
	mk(t, filepath.Join(outside, "lefthook.yml"), "the user's own, elsewhere\n")
	before = snapshotProtected([]string{hooks, lefthook})
	if err := os.Rename(filepath.Join(ws, "y"), filepath.Join(ws, "y.old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "y")); err != nil {
		t.Fatal(err)
	}
	s.sweep(before)
	if _, err := os.Lstat(filepath.Join(outside, "lefthook.yml")); err != nil {
		t.Fatalf("the sweep took a file outside the workspace through a link the call made: %v", err)
	}
}

// TestSweepRepositoryMovedIntoReach: a repository a call made where no
// search saw it (here: simply unlisted, as under a path longer than
// PATH_MAX or in a directory made unsearchable) keeps its old times when a
// later call moves it into reach, but the directory it was renamed as
// changed: it is taken out. Control: an unlisted repository whose
// directories the call left alone stays.
func TestSweepRepositoryMovedIntoReach(t *testing.T) {
	ws, q, s := sweeper(t)
	fsmon := "[core]\n\tfsmonitor = touch /nonexistent/canary\n"
	shape(t, filepath.Join(ws, ".git"), "[core]\n")
	shape(t, filepath.Join(ws, "deep/W/.git"), fsmon)
	shape(t, filepath.Join(ws, "other/lib/.git"), "[core]\n")
	protected, err := jail.ProtectedPathsEnv(ws, []string{"GIT_CONFIG_NOSYSTEM=1"})
	if err != nil {
		t.Fatal(err)
	}
	protected = slices.DeleteFunc(protected, func(p string) bool {
		return within(p, filepath.Join(ws, "deep")) || within(p, filepath.Join(ws, "other"))
	})
	start := startAfter(t, filepath.Join(q, "probe"))
	if err := os.Rename(filepath.Join(ws, "deep/W"), filepath.Join(ws, "tools")); err != nil {
		t.Fatal(err)
	}
	spec := jail.Spec{Workspace: ws, Paths: []jail.PathRule{{Path: ws, Access: jail.Write}}, Protected: protected}
	found := s.sweepNewRepositories(spec, start)
	if _, err := os.Lstat(filepath.Join(ws, "tools/.git")); err == nil || !slices.Contains(found, filepath.Join(ws, "tools/.git")) {
		t.Errorf("a repository moved into reach stayed (found %v)", found)
	}
	if _, err := os.Lstat(filepath.Join(ws, "other/lib/.git/config")); err != nil {
		t.Error("control: an untouched unlisted repository was taken out")
	}
}

// TestSweepGitLinksMovedIntoPlace: links parked by an earlier call where
// the sweep does not look (an objects/ fan-out directory), with their old
// change times, are taken out once a later call moves their directory
// into place (logs/), and so is a rebase state moved in the same way;
// control: the user's own link in a directory the call did not touch
// stays.
func TestSweepGitLinksMovedIntoPlace(t *testing.T) {
	ws, q, s := sweeper(t)
	_, bashrc := userHome(t)
	gd := filepath.Join(ws, ".git")
	shape(t, gd, "[core]\n")
	mk(t, filepath.Join(gd, "info/exclude"), "")
	if err := os.Symlink(bashrc, filepath.Join(gd, "info/attributes")); err != nil {
		t.Fatal(err) // the user's own link, long before
	}
	// The earlier call parks a reflog directory of links and a rebase
	// state with an exec line in a fan-out directory.
	mk(t, filepath.Join(gd, "objects/ab/logs/refs/heads/main"), "log\n")
	if err := os.Symlink(bashrc, filepath.Join(gd, "objects/ab/logs/HEAD")); err != nil {
		t.Fatal(err)
	}
	mk(t, filepath.Join(gd, "objects/cd/git-rebase-todo"), "pick 1234 one\nexec touch /tmp/pwned\n")
	spec := writeGrant(t, ws)
	start := startAfter(t, filepath.Join(q, "probe"))
	if found := s.sweepGitLinks(spec, start); len(found) != 0 {
		t.Fatalf("nothing moved yet, but %v was taken out", found)
	}

	// The later call moves them into place.
	start = startAfter(t, filepath.Join(q, "probe2"))
	for from, to := range map[string]string{"objects/ab/logs": "logs", "objects/cd": "rebase-merge"} {
		if err := os.Rename(filepath.Join(gd, from), filepath.Join(gd, to)); err != nil {
			t.Fatal(err)
		}
	}
	found := s.sweepGitLinks(spec, start)
	for _, gone := range []string{"logs/HEAD", "rebase-merge"} {
		if _, err := os.Lstat(filepath.Join(gd, gone)); err == nil || !slices.Contains(found, filepath.Join(gd, gone)) {
			t.Errorf(".git/%s stayed (found %v)", gone, found)
		}
	}
	if _, err := os.Lstat(filepath.Join(gd, "info/attributes")); err != nil {
		t.Errorf("control: the user's own link was taken out: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(gd, "logs/refs/heads/main")); err != nil {
		t.Errorf("control: a reflog file was taken out: %v", err)
	}
}

// TestSweepRepositoryReachedThroughAGitFile: a repository-shaped h/g and
// a .git file h/tools/.git naming it, made where no search saw them, keep
// their old times when a later call makes h searchable again (chmod): the
// .git file and all of g's control files are taken out, since h changed
// during the call.
func TestSweepRepositoryReachedThroughAGitFile(t *testing.T) {
	ws, q, s := sweeper(t)
	shape(t, filepath.Join(ws, ".git"), "[core]\n")
	shape(t, filepath.Join(ws, "h/g"), "[core]\n\tfsmonitor = touch /nonexistent/canary\n")
	mk(t, filepath.Join(ws, "h/tools/.git"), "gitdir: ../g\n")
	protected, err := jail.ProtectedPathsEnv(ws, []string{"GIT_CONFIG_NOSYSTEM=1"})
	if err != nil {
		t.Fatal(err)
	}
	protected = slices.DeleteFunc(protected, func(p string) bool { return within(p, filepath.Join(ws, "h")) })
	start := startAfter(t, filepath.Join(q, "probe"))
	if err := os.Chmod(filepath.Join(ws, "h"), 0o755); err != nil { // "made searchable again"
		t.Fatal(err)
	}
	spec := jail.Spec{Workspace: ws, Paths: []jail.PathRule{{Path: ws, Access: jail.Write}}, Protected: protected}
	found := s.sweepNewRepositories(spec, start)
	for _, gone := range []string{"h/tools/.git", "h/g/config", "h/g/HEAD"} {
		if _, err := os.Lstat(filepath.Join(ws, gone)); err == nil {
			t.Errorf("%s stayed (found %v)", gone, found)
		}
	}
	if jail.IsRepositoryShape(filepath.Join(ws, "h/g")) {
		t.Error("h/g still has a repository's shape")
	}
}

// sweeper is a supervisor with what the sweeps need, over a fresh
// workspace, and its quarantine directory.
func sweeper(t *testing.T) (ws, q string, s *Supervisor) {
	t.Helper()
	ws, q = t.TempDir(), t.TempDir()
	return ws, q, &Supervisor{quarantineDir: q, log: slog.New(slog.DiscardHandler)}
}

// writeGrant is a call's grant that writes all of ws, with ws's protected
// paths as a grant compiled now lists them.
func writeGrant(t *testing.T, ws string) jail.Spec {
	t.Helper()
	protected, err := jail.ProtectedPathsEnv(ws, []string{"GIT_CONFIG_NOSYSTEM=1"})
	if err != nil {
		t.Fatal(err)
	}
	return jail.Spec{Workspace: ws, Paths: []jail.PathRule{{Path: ws, Access: jail.Write}}, Protected: protected}
}

// userHome is a home directory holding a ~/.bashrc, which a planted link
// would have git write.
func userHome(t *testing.T) (home, bashrc string) {
	t.Helper()
	home = t.TempDir()
	bashrc = filepath.Join(home, ".bashrc")
	mk(t, bashrc, "# the user's\n")
	return home, bashrc
}

// TestSweepNewMercurialAndJJRepositories: a .hg or .jj a call made in the
// workspace (Mercurial and jj obey the config in it and run the hooks and
// tools it names, outside any jail) is taken out whole, as a new nested
// .git is, and so is a link named .hg (Mercurial follows it). Controls:
// a Mercurial repository that was there before the call stays, though
// the call wrote in it (hg commit does), and so does a .hg made at the
// workspace's root, whose hgrc files are the protected-path sweep's.
func TestSweepNewMercurialAndJJRepositories(t *testing.T) {
	ws, q, s := sweeper(t)
	hook := "[hooks]\npre-status = touch /nonexistent/canary\n"
	shape(t, filepath.Join(ws, ".git"), "[core]\n")
	mk(t, filepath.Join(ws, "old/.hg/requires"), "store\n")
	mk(t, filepath.Join(ws, "old/a.go"), "package a\n")
	spec := writeGrant(t, ws)
	start := startAfter(t, filepath.Join(q, "probe"))

	// The call.
	mk(t, filepath.Join(ws, "src/.hg/requires"), "store\n")
	mk(t, filepath.Join(ws, "src/.hg/hgrc"), hook)
	mk(t, filepath.Join(ws, "src/main.go"), "package main\n")
	mk(t, filepath.Join(ws, "lib/.jj/repo/config.toml"), "[fix.tools.x]\ncommand = [\"touch\", \"/nonexistent/canary\"]\n")
	mk(t, filepath.Join(ws, "parked/hgrc"), hook)
	mk(t, filepath.Join(ws, "linked"), "/")
	if err := os.Symlink("../parked", filepath.Join(ws, "linked/.hg")); err != nil {
		t.Fatal(err)
	}
	mk(t, filepath.Join(ws, "old/.hg/dirstate"), "")
	mk(t, filepath.Join(ws, ".hg/requires"), "store\n")

	found := s.sweepNewRepositories(spec, start)
	for _, gone := range []string{"src/.hg", "lib/.jj", "linked/.hg"} {
		if _, err := os.Lstat(filepath.Join(ws, gone)); err == nil || !slices.Contains(found, filepath.Join(ws, gone)) {
			t.Errorf("%s stayed in the workspace or was not reported: %v", gone, found)
		}
	}
	for _, kept := range []string{"src/main.go", "old/.hg/requires", "old/.hg/dirstate", ".hg/requires", "parked/hgrc"} {
		if _, err := os.Lstat(filepath.Join(ws, kept)); err != nil {
			t.Errorf("control: %s was taken out: %v", kept, err)
		}
	}
}

// TestSweepLooksInClosedDirectories (red team, 2026-12-03): a call that
// plants a repository in a directory and then closes the directory to
// listing (chmod 111) hid it from the sweep, and its hooks stayed for the
// user's next git or hg there. The sweep opens such a directory to its
// owner again (nested ones in turn) and takes out what the call made in
// it. Control: a closed directory holding nothing of the kind stays, open
// to its owner, with its other permission bits as they were. Run as root
// and, through TestSweepClosedDirectoriesUnprivileged, as uid 65534, where
// the permissions hold against brig too.
func TestSweepLooksInClosedDirectories(t *testing.T) {
	ws, q, s := sweeper(t)
	shape(t, filepath.Join(ws, ".git"), "[core]\n")
	mk(t, filepath.Join(ws, "src/x/main.go"), "package x\n")
	mk(t, filepath.Join(ws, "empty/README"), "hi\n")
	spec := writeGrant(t, ws)
	start := startAfter(t, filepath.Join(q, "probe"))

	// The call.
	hook := "[hooks]\npre-status = touch /nonexistent/canary\n"
	mk(t, filepath.Join(ws, "src/x/.hg/hgrc"), hook)
	shape(t, filepath.Join(ws, "lib/y/.git"), "[core]\n\tfsmonitor = touch /nonexistent/canary\n")
	mk(t, filepath.Join(ws, "deep/a/b/.hg/hgrc"), hook)
	for _, d := range []string{"src/x", "lib/y", "deep/a/b", "deep/a", "empty"} {
		if err := os.Chmod(filepath.Join(ws, d), 0o111); err != nil {
			t.Fatal(err)
		}
	}

	found := s.sweepNewRepositories(spec, start)
	for _, d := range []string{"src/x", "lib/y", "deep/a/b", "deep/a", "empty"} {
		if err := os.Chmod(filepath.Join(ws, d), 0o755); err != nil && !os.IsNotExist(err) {
			t.Logf("chmod %s: %v", d, err)
		}
	}
	for _, gone := range []string{"src/x/.hg", "lib/y/.git", "deep/a/b/.hg"} {
		if _, err := os.Lstat(filepath.Join(ws, gone)); err == nil {
			t.Errorf("%s stayed in the workspace (found: %v)", gone, found)
		}
	}
	for _, kept := range []string{"src/x/main.go", "empty/README"} {
		if _, err := os.Lstat(filepath.Join(ws, kept)); err != nil {
			t.Errorf("control: %s was taken out: %v", kept, err)
		}
	}
}

// envReposUnpriv marks the re-executed unprivileged pass of
// TestSweepLooksInClosedDirectories.
const envReposUnpriv = "BRIG_REPOS_UNPRIV"

// TestSweepClosedDirectoriesUnprivileged runs the closed-directory sweep
// as uid/gid 65534, where a directory closed to listing is closed to the
// supervisor too (root reads it anyway), and checks there that the closed
// control was opened to its owner with its other bits kept.
func TestSweepClosedDirectoriesUnprivileged(t *testing.T) {
	if unprivtest.Active(envReposUnpriv) {
		ws, q, s := sweeper(t)
		mk(t, filepath.Join(ws, "empty/README"), "hi\n")
		spec := writeGrant(t, ws)
		start := startAfter(t, filepath.Join(q, "probe"))
		if err := os.Chmod(filepath.Join(ws, "empty"), 0o151); err != nil {
			t.Fatal(err)
		}
		s.sweepNewRepositories(spec, start)
		fi, err := os.Stat(filepath.Join(ws, "empty"))
		if err != nil || fi.Mode().Perm() != 0o751 {
			t.Fatalf("the closed control: %v, %v; want it kept, mode 0751", fi, err)
		}
		return
	}
	out := unprivtest.Rerun(t, envReposUnpriv, "^TestSweep(LooksInClosedDirectories|ClosedDirectoriesUnprivileged)$")
	if !bytes.Contains(out, []byte("--- PASS: TestSweepLooksInClosedDirectories")) || !bytes.Contains(out, []byte("--- PASS: TestSweepClosedDirectoriesUnprivileged")) {
		t.Fatalf("the unprivileged pass did not run the sweep tests:\n%s", out)
	}
}

// TestSweepJJRepoFileAtTheRoot (red team, 2026-12-03): a .jj at the
// workspace's root counts as known, so only its listed entries were
// protected; a .jj/repo written as a file names the repository jj loads,
// config and all, elsewhere. One the call wrote, or put where the
// directory was, is taken out. Controls: a .jj/repo file that was there
// before the call (a secondary workspace's) stays, and so does the store
// directory the call wrote in.
func TestSweepJJRepoFileAtTheRoot(t *testing.T) {
	for _, c := range []struct {
		name   string
		before func(ws string)
		call   func(ws string)
		kept   bool
	}{
		{"made by the call", func(string) {}, func(ws string) {
			mk(t, filepath.Join(ws, "ev/repo/config.toml"), "[aliases]\n")
			mk(t, filepath.Join(ws, ".jj/working_copy"), "/")
			mk(t, filepath.Join(ws, ".jj/repo"), filepath.Join(ws, "ev/repo"))
		}, false},
		{"put where the store was", func(ws string) { mk(t, filepath.Join(ws, ".jj/repo/store/x"), "x") }, func(ws string) {
			if err := os.Rename(filepath.Join(ws, ".jj/repo"), filepath.Join(ws, "old")); err != nil {
				t.Fatal(err)
			}
			mk(t, filepath.Join(ws, ".jj/repo"), filepath.Join(ws, "old"))
		}, false},
		{"a secondary workspace's, from before", func(ws string) { mk(t, filepath.Join(ws, ".jj/repo"), "/elsewhere/.jj/repo") }, func(ws string) {
			mk(t, filepath.Join(ws, ".jj/working_copy/checkout"), "x")
		}, true},
		{"the store written", func(ws string) { mk(t, filepath.Join(ws, ".jj/repo/store/x"), "x") }, func(ws string) {
			mk(t, filepath.Join(ws, ".jj/repo/op_heads/y"), "y")
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws, q, s := sweeper(t)
			c.before(ws)
			spec := writeGrant(t, ws)
			start := startAfter(t, filepath.Join(q, "probe"))
			c.call(ws)
			found := s.sweepNewRepositories(spec, start)
			_, err := os.Lstat(filepath.Join(ws, ".jj/repo"))
			if kept := err == nil; kept != c.kept {
				t.Errorf(".jj/repo kept %v, want %v (found %v)", kept, c.kept, found)
			}
		})
	}
}

// TestSweepGitFileAtARootWithoutRepository (red team, 2026-12-03): in a
// workspace that is not a repository, a call wrote a .git file at the
// root naming a git directory it made where it could write outside the
// workspace (the toolchain cache), with a core.fsmonitor; the sweep took
// the root's always-listed .git/config for a repository there and left
// the file, so the user's next git status ran the fsmonitor. It is taken
// out now; the controls: a .git file at the root from before the call
// stays, and so does one in a workspace whose root is a repository.
func TestSweepGitFileAtARootWithoutRepository(t *testing.T) {
	elsewhere := t.TempDir()
	shape(t, filepath.Join(elsewhere, "gd"), "[core]\n\tfsmonitor = touch /nonexistent/canary\n")
	pointer := "gitdir: " + filepath.Join(elsewhere, "gd") + "\n"
	for _, c := range []struct {
		name   string
		before func(ws string)
		kept   bool
	}{
		{"made by the call", func(string) {}, false},
		{"there before the call", func(ws string) { mk(t, filepath.Join(ws, ".git"), pointer) }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws, q, s := sweeper(t)
			c.before(ws)
			spec := writeGrant(t, ws)
			before := snapshotProtected(spec.Protected)
			start := startAfter(t, filepath.Join(q, "probe"))
			if !c.kept {
				mk(t, filepath.Join(ws, ".git"), pointer)
			}
			var logged bytes.Buffer
			s.log = slog.New(slog.NewTextHandler(&logged, nil))
			found := s.sweepAll(spec, before, start)
			_, err := os.Lstat(filepath.Join(ws, ".git"))
			if kept := err == nil; kept != c.kept {
				t.Errorf(".git kept %v, want %v (found %v)", kept, c.kept, found)
			}
			if bytes.Contains(logged.Bytes(), []byte("could not look at a protected path")) {
				t.Errorf("a warning for what lies below a file:\n%s", logged.String())
			}
		})
	}
}

// TestSweepTakesOutALinkIntoTheCache (red team, 2026-12-03): a call built
// a repository (with a core.fsmonitor) in the toolchain cache, which every
// call may write, and linked a directory of the workspace to it; the
// user's git status in the link ran the fsmonitor. A link the call made
// into the cache is taken out, by its own target or through another
// link; the controls: a link to elsewhere, and one into the cache from
// before the call, stay.
func TestSweepTakesOutALinkIntoTheCache(t *testing.T) {
	ws, q, s := sweeper(t)
	cacheRoot := t.TempDir()
	d := filepath.Join(cacheRoot, "ws-1", "xdg", "d")
	shape(t, filepath.Join(d, ".git"), "[core]\n\tfsmonitor = touch /nonexistent/canary\n")
	mk(t, filepath.Join(ws, "src/main.go"), "package main\n")
	if err := os.Symlink(d, filepath.Join(ws, "old")); err != nil { // before the call
		t.Fatal(err)
	}
	spec := writeGrant(t, ws)
	spec.Cache = &jail.Cache{Root: cacheRoot, Name: "ws-1"}
	start := startAfter(t, filepath.Join(q, "probe"))
	// Red team, 2026-12-03: a link to a directory above the cache, and
	// one through it to a directory a later call makes, were kept.
	for name, target := range map[string]string{"sub": d, "rel": "src/../hop", "elsewhere": "/usr/share", "up": filepath.Dir(cacheRoot), "later": "up2/" + filepath.Base(cacheRoot) + "/ws-1/not-yet", "up2": filepath.Dir(cacheRoot)} {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(d, filepath.Join(ws, "hop")); err != nil {
		t.Fatal(err)
	}
	found := s.sweepNewRepositories(spec, start)
	for _, gone := range []string{"sub", "hop", "rel", "up", "up2", "later"} {
		if _, err := os.Lstat(filepath.Join(ws, gone)); err == nil {
			t.Errorf("the link %s into the cache stayed (found %v)", gone, found)
		}
	}
	for _, kept := range []string{"elsewhere", "old", "src/main.go"} {
		if _, err := os.Lstat(filepath.Join(ws, kept)); err != nil {
			t.Errorf("control: %s was taken out: %v", kept, err)
		}
	}
}

// TestSweepTakesOutANewEnvrc (new user, 2026-12-03): an .envrc a call made
// in a subdirectory was left, as direnv runs none the user has not
// allowed; but a direnv.toml [whitelist] prefix over the code runs any.
// One the call made is taken out; the control, one from before the call
// (protected during it), stays.
func TestSweepTakesOutANewEnvrc(t *testing.T) {
	ws, q, s := sweeper(t)
	mk(t, filepath.Join(ws, "old/.envrc"), "dotenv\n")
	spec := writeGrant(t, ws)
	start := startAfter(t, filepath.Join(q, "probe"))
	mk(t, filepath.Join(ws, "svc/.envrc"), "dotenv\n")
	found := s.sweepNewRepositories(spec, start)
	if _, err := os.Lstat(filepath.Join(ws, "svc/.envrc")); err == nil || !slices.Contains(found, filepath.Join(ws, "svc/.envrc")) {
		t.Errorf("the new .envrc stayed (found %v)", found)
	}
	if _, err := os.Lstat(filepath.Join(ws, "old/.envrc")); err != nil {
		t.Errorf("control: the .envrc from before was taken out: %v", err)
	}
}

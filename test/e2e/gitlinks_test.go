package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"brig/test/fakeprovider"
)

// TestGitLinksPlantedByACallAreTakenOut: the repository's own code, run
// by an allowed make test in auto mode (the policy asks about a command
// line that names a path in .git itself), links .git/COMMIT_EDITMSG to
// the user's ~/.bashrc (with a SQUASH_MSG of its making as the message to
// come) and leaves a FIFO and a linked reflog in .git: they are taken out
// after the call, and the model is told; its next call finds no link.
// The user's own commit afterwards, outside brig, leaves ~/.bashrc as it
// was. Control: the call's ordinary file in .git stays.
func TestGitLinksPlantedByACallAreTakenOut(t *testing.T) {
	plant := `ln -sf "$$HOME/.bashrc" .git/COMMIT_EDITMSG; printf 'touch pwned\n' > .git/SQUASH_MSG; mkfifo .git/MERGE_MSG; mkdir -p .git/logs; ln -sf "$$HOME/.profile" .git/logs/HEAD; echo planted`
	e := newEnv(t, "anthropic",
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("bash", bashInput("make test"))}},
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("bash", `{"command":"test -L .git/COMMIT_EDITMSG && echo LINKED; test -e .git/MERGE_MSG && echo FIFO; test -L .git/logs/HEAD && echo REFLOG; echo checked"}`)},
			Check: []fakeprovider.Check{{Contains: "planted"}, {Contains: "brig undid it"}, {Contains: ".git/COMMIT_EDITMSG"}, {Contains: ".git/MERGE_MSG"}, {Contains: ".git/logs/HEAD"}}},
		fakeprovider.Turn{Text: "done",
			Check: []fakeprovider.Check{{Contains: "checked"}, {NotContains: "LINKED"}, {NotContains: "FIFO"}, {NotContains: "REFLOG"}}},
	)
	git := func(args ...string) {
		t.Helper()
		c := exec.Command("git", args...)
		c.Dir = e.ws
		c.Env = append(os.Environ(), "HOME="+e.home, "GIT_EDITOR=true", "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	os.RemoveAll(filepath.Join(e.ws, ".git"))
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(e.ws, "Makefile"), []byte("test:\n\t@"+plant+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rc := filepath.Join(e.home, ".bashrc")
	if err := os.WriteFile(rc, []byte("# the user's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.run(t, "--model", "claude-sonnet-4-5", "--mode", "auto", "-p", "plant links in .git")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	e.srv.Verify(t)
	if b, err := os.ReadFile(filepath.Join(e.ws, ".git/SQUASH_MSG")); err != nil || string(b) != "touch pwned\n" {
		t.Errorf("control: the call's ordinary file in .git is gone or changed: %q %v", b, err)
	}
	// The user commits afterwards, outside brig.
	git("add", "main.go")
	git("commit", "-q")
	if b, err := os.ReadFile(rc); err != nil || string(b) != "# the user's\n" {
		t.Errorf("~/.bashrc after the user's commit: %q %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(e.home, ".profile")); err == nil {
		t.Error("the user's commit wrote ~/.profile through a reflog link")
	}
}

// bashInput is a bash call's input for command.
func bashInput(command string) string {
	b, _ := json.Marshal(map[string]string{"command": command})
	return string(b)
}

// TestInterruptedOperationsThatRunProgramsAreTakenOut (red team
// 2026-12-02): the user is in the middle of a rebase that stopped on a
// conflict. The model, in edit mode, writes .git/rebase-merge/strategy
// with write_file (git runs a strategy as git-merge-NAME, and a name with
// a slash is a path in the working tree). The operation is taken out after
// the call and the model is told; the user's git rebase --continue afterwards runs nothing (the
// canary is absent). Control: the helper script the model wrote stays,
// and running it by hand writes the canary, so its absence means git
// never ran it.
func TestInterruptedOperationsThatRunProgramsAreTakenOut(t *testing.T) {
	e := newEnv(t, "anthropic",
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{
			tc("write_file", `{"path":"helper.sh","content":"#!/bin/sh\necho ran > \"$(dirname \"$0\")/canary\"\nexit 0\n"}`),
			tc("write_file", `{"path":".git/rebase-merge/strategy","content":"x/../helper.sh\n"}`)}},
		fakeprovider.Turn{Text: "Resolved: run git add README.md && git rebase --continue.",
			Check: []fakeprovider.Check{{Call: 1, Contains: "brig undid it"}, {Call: 1, Contains: ".git/rebase-merge"}}},
	)
	git := func(args ...string) (string, error) {
		t.Helper()
		c := exec.Command("git", args...)
		c.Dir = e.ws
		c.Env = append(os.Environ(), "HOME="+e.home, "GIT_EDITOR=true", "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x", "GIT_CONFIG_NOSYSTEM=1")
		out, err := c.CombinedOutput()
		return string(out), err
	}
	must := func(args ...string) {
		t.Helper()
		if out, err := git(args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	os.RemoveAll(filepath.Join(e.ws, ".git"))
	must("init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(e.ws, "README.md"), []byte("base\n"), 0o644)
	must("add", ".")
	must("commit", "-qm", "base")
	must("checkout", "-qb", "topic")
	os.WriteFile(filepath.Join(e.ws, "README.md"), []byte("topic\n"), 0o644)
	must("commit", "-qam", "topic")
	must("checkout", "-q", "main")
	os.WriteFile(filepath.Join(e.ws, "README.md"), []byte("main\n"), 0o644)
	must("commit", "-qam", "main")
	must("checkout", "-q", "topic")
	if _, err := git("rebase", "main"); err == nil {
		t.Fatal("the rebase did not stop on its conflict")
	}
	if _, err := os.Stat(filepath.Join(e.ws, ".git/rebase-merge")); err != nil {
		t.Fatalf("no rebase in progress: %v", err)
	}

	// --yes: a write_file into .git asks in every mode (it is git's
	// history), and what is tested here is the sweep after it ran.
	r := e.run(t, "--model", "claude-sonnet-4-5", "--mode", "edit", "--yes", "-p", "resolve the conflict")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	e.srv.Verify(t)
	if _, err := os.Stat(filepath.Join(e.ws, ".git/rebase-merge/strategy")); err == nil {
		t.Error("the planted strategy is still there")
	}
	os.WriteFile(filepath.Join(e.ws, "README.md"), []byte("resolved\n"), 0o644)
	must("add", "README.md")
	out, _ := git("rebase", "--continue") // fails: no rebase in progress any more
	canary := filepath.Join(e.ws, "canary")
	if _, err := os.Stat(canary); err == nil {
		t.Fatalf("git rebase --continue ran the planted strategy:\n%s", out)
	}
	// Control: the script is there and works, so git would have run it.
	if b, err := exec.Command("sh", filepath.Join(e.ws, "helper.sh")).CombinedOutput(); err != nil {
		t.Fatalf("control: helper.sh: %v\n%s", err, b)
	}
	if _, err := os.Stat(canary); err != nil {
		t.Fatalf("control: helper.sh run by hand wrote no canary: %v", err)
	}
}

// TestOtherProgramsFilesAndReplacementsAreTakenOut (red team
// 2026-12-02): the repository's make test, allowed in auto mode, writes
// .git/lazygit.yml (lazygit runs the pager it names when it shows a diff)
// and replaces the user's feature branch with a commit that adds an
// .envrc (git log still shows the branch unchanged; checking it out would
// write the file, outside any jail). Both are taken out after the call
// and the model is told; the user's own git switch afterwards writes no
// .envrc. Control: the same commands run outside brig, in a copy of the
// repository, do make the switch write it; and write_file of
// .git/lazygit.yml is refused up front with the reason.
func TestOtherProgramsFilesAndReplacementsAreTakenOut(t *testing.T) {
	plant := `printf 'git:\n  paging:\n    pager: touch pwned\n' > .git/lazygit.yml; ` +
		`F=$$(git rev-parse feature); blob=$$(printf 'touch pwned\n' | git hash-object -w --stdin); ` +
		`tree=$$( (git ls-tree $$F; printf '100644 blob %s\t.envrc\n' $$blob) | git mktree); ` +
		`new=$$(git cat-file commit $$F | sed "s/^tree .*/tree $$tree/" | git hash-object -t commit -w --stdin); ` +
		`git replace $$F $$new && echo planted`
	e := newEnv(t, "anthropic",
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("bash", bashInput("make test"))}},
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("write_file", `{"path":".git/lazygit.yml","content":"git: {}\n"}`)},
			Check: []fakeprovider.Check{{Contains: "planted"}, {Contains: "brig undid it"}, {Contains: ".git/lazygit.yml"}, {Contains: ".git/refs/replace/"}}},
		fakeprovider.Turn{Text: "done",
			Check: []fakeprovider.Check{{Contains: "protected"}, {Contains: ".git/lazygit.yml"}}},
	)
	env := append(os.Environ(), "HOME="+e.home, "GIT_EDITOR=true", "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x", "GIT_CONFIG_NOSYSTEM=1")
	git := func(dir string, args ...string) string {
		t.Helper()
		c := exec.Command("git", args...)
		c.Dir, c.Env = dir, env
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	os.RemoveAll(filepath.Join(e.ws, ".git"))
	if err := os.WriteFile(filepath.Join(e.ws, "Makefile"), []byte("test:\n\t@"+plant+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(e.ws, "init", "-q", "-b", "main")
	git(e.ws, "add", ".")
	git(e.ws, "commit", "-qm", "base")
	git(e.ws, "switch", "-qc", "feature")
	if err := os.WriteFile(filepath.Join(e.ws, "feature.txt"), []byte("the user's work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(e.ws, "add", "feature.txt")
	git(e.ws, "commit", "-qm", "my feature work")
	git(e.ws, "switch", "-q", "main")
	before := git(e.ws, "rev-parse", "feature")

	// Control: outside brig, in a copy, the same commands make the user's
	// switch to feature write the .envrc.
	ctl := t.TempDir()
	git(ctl, "clone", "-q", "--no-hardlinks", e.ws, "repo")
	git(filepath.Join(ctl, "repo"), "branch", "feature", "origin/feature")
	mk := exec.Command("make", "-s", "test")
	mk.Dir, mk.Env = filepath.Join(ctl, "repo"), env
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("control: make test: %v\n%s", err, out)
	}
	git(filepath.Join(ctl, "repo"), "switch", "-q", "feature")
	if _, err := os.Stat(filepath.Join(ctl, "repo", ".envrc")); err != nil {
		t.Fatalf("control: the replacement did not make git switch write .envrc: %v", err)
	}

	r := e.run(t, "--model", "claude-sonnet-4-5", "--mode", "auto", "-p", "run the tests")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	e.srv.Verify(t)
	if _, err := os.Lstat(filepath.Join(e.ws, ".git/lazygit.yml")); err == nil {
		t.Error(".git/lazygit.yml is still there")
	}
	// The user afterwards, outside brig.
	if got := git(e.ws, "rev-parse", "feature"); got != before {
		t.Errorf("feature moved: %s -> %s", before, got)
	}
	git(e.ws, "switch", "-q", "feature")
	if _, err := os.Lstat(filepath.Join(e.ws, ".envrc")); err == nil {
		t.Error("the user's git switch wrote the call's .envrc: the replacement stayed")
	}
}

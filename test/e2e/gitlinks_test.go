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

	r := e.run(t, "--model", "claude-sonnet-4-5", "--mode", "edit", "-p", "resolve the conflict")
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

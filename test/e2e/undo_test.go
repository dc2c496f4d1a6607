package e2e

import (
	"brig/internal/checkpoint/treetest"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"brig/test/fakeprovider"
	"brig/test/scenario"

	"golang.org/x/sys/unix"
)

// messyWorkspace fills the workspace with what the scenario damages: a
// source tree, a text file, a binary, a script, a symlink.
func messyWorkspace(t *testing.T, ws string) {
	t.Helper()
	files := map[string]string{
		"src/app/main.go": "package main\n\nfunc main() { println(\"hello\") }\n",
		"src/app/util.go": "package main\n\nfunc util() int { return 1 }\n",
		"src/lib/lib.go":  "package lib\n",
		"README.md":       "# demo\nhello world\n",
		"notes.txt":       "keep me\n",
	}
	for p, c := range files {
		os.MkdirAll(filepath.Join(ws, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(ws, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(ws, "logo.bin"), []byte{0x89, 'P', 'N', 'G', 0, 0, 0xff, 0xfe, '\r', '\n', 0}, 0o644)
	os.WriteFile(filepath.Join(ws, "run.sh"), []byte("#!/bin/sh\necho run\n"), 0o755)
	if err := os.Symlink("README.md", filepath.Join(ws, "readme-link")); err != nil {
		t.Fatal(err)
	}
}

// TestUndoScenario: the model makes a mess with bash and the file tools;
// brig changes lists each call's change set; brig undo puts back the last
// call, brig undo --to the first, byte for byte; the model is told at its
// next turn; brig log verify passes, then fails after a one-byte edit.
func TestUndoScenario(t *testing.T) {
	mess := `rm -rf src && sed -i 's/hello/HELLO/' README.md && printf '\001\002\003' >> logo.bin && chmod 600 run.sh && ln -sf notes.txt readme-link && mkdir -p gen/a/b && printf 'generated\n' > gen/a/b/out.txt`
	e := newEnv(t, "anthropic",
		fakeprovider.Turn{Text: "Cleaning up.", ToolCalls: []fakeprovider.ToolCall{scenario.Bash(mess)}},
		fakeprovider.Turn{
			Check:     []fakeprovider.Check{scenario.Has(0, "[exit code 0]")},
			ToolCalls: []fakeprovider.ToolCall{tc("write_file", `{"path":"new.txt","content":"one\n"}`), tc("edit_file", `{"path":"notes.txt","old_string":"keep","new_string":"drop"}`)},
		},
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{scenario.Bash("echo two >> new.txt && rm notes.txt")}},
		fakeprovider.Turn{Text: "Done."},
		// After the undo, the next turn: the model is told.
		fakeprovider.Turn{Text: "Understood."},
	)
	messyWorkspace(t, e.ws)
	before := treetest.Read(t, e.ws, ".git")
	r := e.run(t, append(modelArgs("anthropic"), "-p", "tidy up", "--mode", "auto", "--yes", "--output", "json")...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var sum struct {
		Session string
		Calls   []struct {
			Name    string
			Changes *struct {
				Created, Modified, Deleted int
				DirsCreated                int `json:"dirs_created"`
				DirsDeleted                int `json:"dirs_deleted"`
			}
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if len(sum.Calls) != 4 {
		t.Fatalf("calls %+v", sum.Calls)
	}
	// The shell command's change set, as -p reports it.
	c := sum.Calls[0].Changes
	if c == nil || c.Deleted != 3 || c.DirsDeleted != 3 || c.Modified != 4 || c.Created != 1 || c.DirsCreated != 3 {
		t.Fatalf("the bash call's change set: %+v", c)
	}
	r = e.run(t, "changes")
	for _, want := range []string{"1 ", "bash", "8 files changed, 1 created, 3 deleted, 3 directories created, 3 directories deleted",
		"write_file", "1 file created", "edit_file", "deleted  src/app/main.go", "2 files changed, 1 deleted"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("brig changes lacks %q:\n%s\n%s", want, r.stdout, r.stderr)
		}
	}

	// Undo the last call: new.txt back to one line, notes.txt back.
	r = e.run(t, "undo")
	if r.code != 0 || !strings.Contains(r.stdout, "undid call 4 (bash") {
		t.Fatalf("undo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(e.ws + "/new.txt"); string(b) != "one\n" {
		t.Fatalf("new.txt after undoing the last call: %q", b)
	}
	if b, _ := os.ReadFile(e.ws + "/notes.txt"); string(b) != "drop me\n" {
		t.Fatalf("notes.txt after undoing the last call: %q", b)
	}
	// Undo from the first call on: everything as it was.
	r = e.run(t, "undo", "--to", "1")
	if r.code != 0 {
		t.Fatalf("undo --to 1: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if d := treetest.Diff(before, treetest.Read(t, e.ws, ".git")); d != "" {
		t.Fatalf("the workspace is not as it was:\n%s\n%s", d, r.stdout)
	}
	r = e.run(t, "changes")
	if strings.Count(r.stdout, "· undone") != 4 {
		t.Fatalf("brig changes does not mark the undone calls:\n%s", r.stdout)
	}
	if r = e.run(t, "undo"); r.code != 1 || !strings.Contains(r.stderr, "nothing to undo") {
		t.Fatalf("a third undo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// The model is told what was undone at its next turn.
	r = e.run(t, append(modelArgs("anthropic"), "-c", "-p", "what now?")...)
	if r.code != 0 {
		t.Fatalf("continue: exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	last, _ := json.Marshal(reqs[len(reqs)-1].Decoded["messages"])
	for _, want := range []string{"[brig] The user undid one of your earlier tool calls", "[brig] The user undid 3 of your earlier tool calls", "restored: README.md", "what now?"} {
		if !bytes.Contains(last, []byte(want)) {
			t.Fatalf("the model was not told %q:\n%s", want, last)
		}
	}

	// The audit log: every call, the undos; verify passes, then fails
	// after a one-byte edit, saying where.
	r = e.run(t, "log", "--tool", "bash")
	if strings.Count(r.stdout, " bash ") != 2 || !strings.Contains(r.stdout, "allow") {
		t.Fatalf("brig log --tool bash:\n%s\n%s", r.stdout, r.stderr)
	}
	r = e.run(t, "log", "--json", "--kind", "call")
	var rec struct {
		Call struct {
			Args     map[string]any
			Decision struct{ Tier, Mode string }
			Grant    struct{ Write []string }
			Changes  struct{ Summary string }
		}
	}
	if err := json.Unmarshal([]byte(strings.SplitN(r.stdout, "\n", 2)[0]), &rec); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if rec.Call.Args["command"] != mess || rec.Call.Decision.Mode != "auto" || !slices.Contains(rec.Call.Grant.Write, e.ws) || !strings.HasPrefix(rec.Call.Changes.Summary, "8 files changed") {
		t.Fatalf("the first call's record: %+v", rec.Call)
	}
	// The -c without --mode went on in ask, not the saved auto: recorded.
	if r = e.run(t, "log", "--kind", "mode"); !strings.Contains(r.stdout, "auto → ask") && !strings.Contains(r.stdout, "auto -> ask") {
		t.Errorf("brig log --kind mode does not show the resume's auto to ask:\n%s\n%s", r.stdout, r.stderr)
	}
	if r = e.run(t, "log", "verify"); r.code != 0 || !strings.Contains(r.stdout, "intact: 7 records") || !strings.Contains(r.stdout, "checked against 2 heads kept elsewhere") {
		t.Fatalf("log verify: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	logPath := filepath.Join(e.home, ".local/state/brig/audit/audit.jsonl")
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte(`"tier":"allow"`))
	b[i+len(`"tier":"`)] = 'A'
	os.WriteFile(logPath, b, 0o600)
	r = e.run(t, "log", "verify")
	if r.code != 1 || !regexp.MustCompile(`The chain breaks at line \d+ \(record \d+\): its content does not match its hash`).MatchString(r.stdout+r.stderr) {
		t.Fatalf("log verify after a one-byte edit: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestUndoConflictCLI: in a workspace that is not a git repository, a
// file changed outside brig after the call makes brig undo refuse and list
// it; --force restores.
func TestUndoConflictCLI(t *testing.T) {
	e := newEnv(t, "anthropic",
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{scenario.Bash("echo brig >> main.go && echo new > made.txt")}},
		fakeprovider.Turn{Text: "ok"},
	)
	if err := os.RemoveAll(e.ws + "/.git"); err != nil {
		t.Fatal(err)
	}
	before := treetest.Read(t, e.ws, ".git")
	if r := e.run(t, append(modelArgs("anthropic"), "-p", "x", "--mode", "auto", "--yes")...); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	os.WriteFile(e.ws+"/main.go", []byte("the user's own edit\n"), 0o644)
	r := e.run(t, "undo")
	if r.code != 1 || !strings.Contains(r.stdout, "conflict  main.go: modified after brig's call") || !strings.Contains(r.stderr, "nothing was undone") {
		t.Fatalf("undo over an outside edit: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(e.ws + "/main.go"); string(b) != "the user's own edit\n" {
		t.Fatalf("a refused undo changed main.go: %q", b)
	}
	if r = e.run(t, "undo", "--force"); r.code != 0 {
		t.Fatalf("undo --force: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if d := treetest.Diff(before, treetest.Read(t, e.ws, ".git")); d != "" {
		t.Fatalf("after --force:\n%s", d)
	}
}

// TestUndoShellInATmpWorkspace: a workspace in /tmp is carried into the
// call's private /tmp as itself, so what a shell command changed there is
// snapshotted and undone like anywhere else (it once was not: every grant
// below /tmp was taken for the call's own scratch space).
func TestUndoShellInATmpWorkspace(t *testing.T) {
	e := newEnvIn(t, "/tmp", "anthropic",
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{scenario.Bash("echo brig >> main.go && echo new > made.txt")}},
		fakeprovider.Turn{Text: "ok"},
	)
	if err := os.RemoveAll(e.ws + "/.git"); err != nil {
		t.Fatal(err)
	}
	before := treetest.Read(t, e.ws, ".git")
	if r := e.run(t, append(modelArgs("anthropic"), "-p", "x", "--mode", "auto")...); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(e.ws + "/made.txt"); err != nil {
		t.Fatalf("control: the command did not run in the workspace: %v", err)
	}
	r := e.run(t, "changes")
	if r.code != 0 || !strings.Contains(r.stdout, "created  made.txt") || !strings.Contains(r.stdout, "modified main.go") {
		t.Fatalf("brig changes: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r = e.run(t, "undo"); r.code != 0 {
		t.Fatalf("undo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if d := treetest.Diff(before, treetest.Read(t, e.ws, ".git")); d != "" {
		t.Fatalf("after undo:\n%s", d)
	}
}

// TestUndoAfterCrash: brig is SIGKILLed while a command that has already
// deleted and changed files is still running; the snapshot taken before
// the call puts everything back.
func TestUndoAfterCrash(t *testing.T) {
	marker := "brig-e2e-undo-crash-" + filepath.Base(t.TempDir())
	e := newEnv(t, "anthropic",
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{scenario.Bash("rm -rf src && echo half > README.md && touch " + marker + ".started && exec -a " + marker + " sleep 60")}},
		fakeprovider.Turn{Text: "never reached"},
	)
	messyWorkspace(t, e.ws)
	before := treetest.Read(t, e.ws, ".git")
	c := e.cmd(append(modelArgs("anthropic"), "-p", "x", "--mode", "auto", "--yes")...)
	c.Stdout, c.Stderr = io.Discard, io.Discard
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); !running(marker); {
		if time.Now().After(deadline) {
			c.Process.Kill()
			t.Fatal("the tool call never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.Process.Kill()
	c.Wait()
	for deadline := time.Now().Add(10 * time.Second); running(marker); {
		if time.Now().After(deadline) {
			t.Fatal("the call outlived brig")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(e.ws + "/src"); err == nil {
		t.Fatal("the call had not run yet")
	}
	r := e.run(t, "changes")
	if !strings.Contains(r.stdout, "brig stopped before it finished") {
		t.Fatalf("brig changes after the crash:\n%s\n%s", r.stdout, r.stderr)
	}
	r = e.run(t, "undo")
	if r.code != 0 {
		t.Fatalf("undo after the crash: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	got := treetest.Read(t, e.ws, ".git")
	delete(got, marker+".started") // created by the call; removed too
	if d := treetest.Diff(before, got); d != "" {
		t.Fatalf("after undo:\n%s", d)
	}
	if r = e.run(t, "log", "verify"); r.code != 0 {
		t.Fatalf("log verify after a crash: exit %d\n%s", r.code, r.stdout)
	}
	// Resuming answers the interrupted call, and the log records it.
	e.srv.SetScript(fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "resumed"}}})
	if r = e.run(t, append(modelArgs("anthropic"), "-c", "-p", "go on")...); r.code != 0 {
		t.Fatalf("continue: exit %d\n%s", r.code, r.stderr)
	}
	if r = e.run(t, "log"); !strings.Contains(r.stdout, "bash         unfinished") {
		t.Fatalf("log after the resume:\n%s", r.stdout)
	}
	r = e.run(t, "log", "--json")
	if !strings.Contains(r.stdout, `brig stopped before this call finished`) {
		t.Fatalf("the interrupted call is not in the log:\n%s", r.stdout)
	}
}

// TestUndoPlantedSymlinks: a call replaces a directory and a file with
// symlinks to places outside the workspace; undo restores the workspace
// and writes nothing through the links — as root, and as an ordinary user
// (uid 65534), for whom the targets are writable.
func TestUndoPlantedSymlinks(t *testing.T) {
	t.Run("root", func(t *testing.T) { plantedSymlinks(t, false) })
	t.Run("unprivileged", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("needs root to switch to uid 65534")
		}
		plantedSymlinks(t, true)
	})
}

func plantedSymlinks(t *testing.T, unpriv bool) {
	e := newEnv(t, "anthropic")
	messyWorkspace(t, e.ws)
	outside := filepath.Join(filepath.Dir(e.ws), "outside")
	os.MkdirAll(outside+"/app", 0o755)
	os.WriteFile(outside+"/app/main.go", []byte("outside canary\n"), 0o644)
	os.WriteFile(outside+"/README.md", []byte("outside readme\n"), 0o644)
	plant := "rm -rf src/app README.md && ln -s " + outside + "/app src/app && ln -s " + outside + "/README.md README.md"
	e.srv.SetScript(fakeprovider.Script{Turns: []fakeprovider.Turn{
		{ToolCalls: []fakeprovider.ToolCall{scenario.Bash(plant)}},
		{Check: []fakeprovider.Check{scenario.Has(0, "[exit code 0]")}, Text: "planted"},
	}})
	bin := brig
	if unpriv {
		// Everything belongs to the ordinary user, who could write the
		// targets too: only not following the links keeps them intact.
		for _, d := range []string{filepath.Dir(e.ws)} {
			if out, err := exec.Command("chown", "-R", "65534:65534", d).CombinedOutput(); err != nil {
				t.Fatalf("chown: %v %s", err, out)
			}
		}
		os.Chmod(filepath.Dir(e.ws), 0o755)
		dir := t.TempDir()
		os.Chmod(dir, 0o755)
		bin = filepath.Join(dir, "brig")
		if out, err := exec.Command("cp", brig, bin).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
	}
	outBefore := treetest.Read(t, outside, ".git")
	before := treetest.Read(t, e.ws, ".git")
	run := func(args ...string) result {
		t.Helper()
		var c *exec.Cmd
		if unpriv {
			c = exec.Command("setpriv", append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", "--", bin}, args...)...)
		} else {
			c = exec.Command(bin, args...)
		}
		c.Dir, c.Env = e.ws, e.vars
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return result{code, out.String(), errb.String()}
	}
	// The policy counts the links' targets as reads outside the
	// workspace; the user grants them read-only, as a user would.
	if r := run(append(modelArgs("anthropic"), "-p", "x", "--mode", "auto", "--yes", "--add-dir", outside+":ro")...); r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	e.srv.Verify(t)
	if fi, err := os.Lstat(e.ws + "/src/app"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the call did not plant the link: %v", err)
	}
	if r := run("undo"); r.code != 0 {
		t.Fatalf("undo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if d := treetest.Diff(before, treetest.Read(t, e.ws, ".git")); d != "" {
		t.Fatalf("the workspace is not restored:\n%s", d)
	}
	if d := treetest.Diff(outBefore, treetest.Read(t, outside, ".git")); d != "" {
		t.Fatalf("undo wrote through a planted link:\n%s", d)
	}
}

// TestAuditTrustAndMode: trusting and revoking a repository's config and
// changing a session's mode are in the audit log, which verifies.
func TestAuditTrustAndMode(t *testing.T) {
	e := newEnv(t, "anthropic", fakeprovider.Turn{Text: "one"}, fakeprovider.Turn{Text: "two"})
	os.MkdirAll(e.ws+"/.brig", 0o755)
	os.WriteFile(e.ws+"/.brig/config.toml", []byte("[permissions]\ndeny = [\"Bash(curl:*)\"]\n"), 0o644)
	for _, args := range [][]string{{"trust", "--yes"}, {"trust", "--revoke"}} {
		if r := e.run(t, args...); r.code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	if r := e.run(t, append(modelArgs("anthropic"), "-p", "x", "--mode", "edit")...); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if r := e.run(t, append(modelArgs("anthropic"), "-c", "-p", "y", "--mode", "plan")...); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	r := e.run(t, "log")
	for _, want := range []string{"trust config   " + e.ws + "/.brig/config.toml", "revoke config", "mode         edit → plan"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("brig log lacks %q:\n%s", want, r.stdout)
		}
	}
	if r = e.run(t, "log", "verify"); r.code != 0 || !strings.Contains(r.stdout, "intact: 3 records") {
		t.Fatalf("verify: exit %d\n%s", r.code, r.stdout)
	}
}

// TestCrashWhileTheSnapshotAfterIsTaken: brig is SIGKILLed after a call
// has ended and its result has gone to the model, while the snapshot of
// what the call changed is still to be taken (it waits here on the
// checkpoint store's lock, which the test holds). The session kept the
// result (the model gets it again on --continue), undo puts back what the
// call did, the audit log verifies; the call has no record in it until the
// session is resumed, which writes one saying what happened (README, "The
// audit log").
func TestCrashWhileTheSnapshotAfterIsTaken(t *testing.T) {
	e := newEnv(t, "anthropic",
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{scenario.Bash("echo made > made.txt && until [ -e release ]; do sleep 0.01; done && echo call-output-8d2f")}},
		fakeprovider.Turn{Text: "never shown"},
	)
	c := e.cmd(append(modelArgs("anthropic"), "-p", "x", "--mode", "auto", "--yes")...)
	c.Stdout, c.Stderr = io.Discard, io.Discard
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			c.Process.Kill()
			c.Wait()
		}
	}()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); !ok(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal(what)
			}
		}
	}
	// The call runs: its snapshot before is taken, and the store unlocked.
	waitFor("the call never started", func() bool { _, err := os.Stat(e.ws + "/made.txt"); return err == nil })
	locks, _ := filepath.Glob(e.home + "/.local/state/brig/checkpoints/*/lock")
	if len(locks) != 1 {
		t.Fatalf("checkpoint store locks: %v", locks)
	}
	lock, err := os.OpenFile(locks[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.ws+"/release", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// The result reaches the model while the snapshot after waits.
	waitFor("the result never went to the model", func() bool { return len(e.srv.Requests()) >= 2 })
	if !bytes.Contains(e.srv.Requests()[1].Body, []byte("call-output-8d2f")) {
		t.Fatalf("the second request lacks the call's output:\n%s", e.srv.Requests()[1].Body)
	}
	c.Process.Kill()
	c.Wait()
	killed = true
	unix.Flock(int(lock.Fd()), unix.LOCK_UN)

	if r := e.run(t, "changes"); !strings.Contains(r.stdout, "brig stopped before it finished") {
		t.Fatalf("brig changes after the crash:\n%s\n%s", r.stdout, r.stderr)
	}
	if r := e.run(t, "log", "verify"); r.code != 0 {
		t.Fatalf("log verify after the crash: exit %d\n%s", r.code, r.stdout)
	}
	if r := e.run(t, "log", "--json"); r.code != 0 || strings.Contains(r.stdout, "until [ -e release ]") {
		t.Fatalf("the killed call has a record before the resume (update the README and this test):\n%s", r.stdout)
	}
	// Resuming sends the saved result again, and the history is valid.
	e.srv.SetScript(fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "resumed"}}})
	if r := e.run(t, append(modelArgs("anthropic"), "-c", "-p", "go on")...); r.code != 0 || !strings.Contains(r.stdout, "resumed") {
		t.Fatalf("continue: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := e.srv.Requests()
	if last := reqs[len(reqs)-1]; last.Reject != "" || !bytes.Contains(last.Body, []byte("call-output-8d2f")) {
		t.Fatalf("the resumed request (refused: %q) lacks the saved result", last.Reject)
	}
	// The resume wrote the record the crash left out, once, and the chain holds.
	r := e.run(t, "log", "--json")
	if strings.Count(r.stdout, "until [ -e release ]") != 1 || !strings.Contains(r.stdout, "before its record was written") {
		t.Fatalf("the log after the resume:\n%s", r.stdout)
	}
	if r := e.run(t, "log", "verify"); r.code != 0 {
		t.Fatalf("log verify after the resume: exit %d\n%s", r.code, r.stdout)
	}
	if r := e.run(t, "undo"); r.code != 0 {
		t.Fatalf("undo after the crash: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(e.ws + "/made.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("undo left what the call made: %v", err)
	}
}

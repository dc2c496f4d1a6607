package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"brig/test/fakeprovider"
	"brig/test/scenario"
)

// TestReadingLineRunsReadOnly: through the real binary in auto mode, a
// line of reading commands (cat, git status, ls) gives the model its
// output, takes no undo snapshot and is granted the workspace read-only —
// git status, which refreshes a stale index where it can write, leaves
// the index as it was (the control: the same git status outside brig
// rewrites it) —, while the next call, which writes, is snapshotted and
// granted the workspace.
func TestReadingLineRunsReadOnly(t *testing.T) {
	e := newEnv(t, "anthropic",
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{scenario.Bash("cat notes.txt && git status --short && ls")}},
		fakeprovider.Turn{
			Check:     []fakeprovider.Check{scenario.Has(0, "keep me"), scenario.Has(0, "[exit code 0]"), scenario.Lacks(0, "[brig:"), scenario.Has(0, "notes.txt")},
			ToolCalls: []fakeprovider.ToolCall{scenario.Bash("touch made.txt && echo made")},
		},
		fakeprovider.Turn{Check: []fakeprovider.Check{scenario.Has(0, "made"), scenario.Has(0, "[exit code 0]")}, Text: "Done."},
	)
	if err := os.WriteFile(e.ws+"/notes.txt", []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(e.ws, "init", "-q")
	git(e.ws, "add", "notes.txt")
	git(e.ws, "commit", "-qm", "init")
	// A stale stat cache, and an index written an hour ago: git status
	// would rewrite the index to refresh it, with a new time.
	stamp := func(dir string) {
		stale, old := time.Now().Add(time.Hour), time.Now().Add(-time.Hour)
		if err := os.Chtimes(dir+"/notes.txt", stale, stale); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(dir+"/.git/index", old, old); err != nil {
			t.Fatal(err)
		}
	}
	indexTime := func(dir string) time.Time {
		fi, err := os.Stat(filepath.Join(dir, ".git/index"))
		if err != nil {
			t.Fatal(err)
		}
		return fi.ModTime()
	}
	// The control: outside brig, in a copy, git status rewrites the index.
	ctl := t.TempDir()
	if out, err := exec.Command("cp", "-a", e.ws+"/.", ctl).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	stamp(ctl)
	was := indexTime(ctl)
	git(ctl, "status", "--short")
	if indexTime(ctl).Equal(was) {
		t.Fatal("control: git status outside brig did not rewrite a stale index; the test proves nothing here")
	}
	stamp(e.ws)
	before := indexTime(e.ws)

	r := e.run(t, append(modelArgs("anthropic"), "-p", "look around", "--mode", "auto", "--output", "json")...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var sum struct {
		Calls []struct {
			Name    string
			Changes *struct{ Created int }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if len(sum.Calls) != 2 || sum.Calls[0].Changes != nil || sum.Calls[1].Changes == nil || sum.Calls[1].Changes.Created != 1 {
		t.Fatalf("the reading call has no change set and the writing one has one: %s", r.stdout)
	}
	if !indexTime(e.ws).Equal(before) {
		t.Fatal("git status in the reading line rewrote the index: the workspace was writable")
	}
	if _, err := os.Stat(e.ws + "/made.txt"); err != nil {
		t.Fatalf("the writing call's file: %v", err)
	}
	// The audit log records each call's grant.
	r = e.run(t, "log", "--json", "--kind", "call")
	var grants [][]string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var rec struct {
			Call struct{ Grant struct{ Write []string } }
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		grants = append(grants, rec.Call.Grant.Write)
	}
	if len(grants) != 2 || slices.Contains(grants[0], e.ws) || !slices.Contains(grants[1], e.ws) {
		t.Fatalf("the grants' write paths: %v (workspace %s)", grants, e.ws)
	}
}

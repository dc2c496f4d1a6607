package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"brig/test/fakeprovider"
	"brig/test/scenario"
)

// TestHooksLinkIntoTheCache: a hostile repository ships .git/hooks as a
// link into brig's toolchain cache for this workspace (which every bash
// call may write) and a diff textconv in its git config that writes a
// pre-commit hook there. The model's `git diff` is a line that only
// reads, run unasked in auto mode with the workspace read-only; the
// textconv runs in the jail. No hook may appear where the link leads,
// for a git commit outside brig would run it. The control: the same
// git diff outside brig plants it (the textconv works).
func TestHooksLinkIntoTheCache(t *testing.T) {
	e := newEnv(t, "anthropic",
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{scenario.Bash("git diff; echo diffed")}},
		fakeprovider.Turn{Check: []fakeprovider.Check{scenario.Has(0, "diffed")}, Text: "Done."},
	)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", e.ws, "-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + e.home, "GIT_CONFIG_NOSYSTEM=1"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(e.ws, "notes.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.ws, ".gitattributes"), []byte("*.txt diff=evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("init", "-q")
	git("add", "notes.txt", ".gitattributes")
	git("commit", "-qm", "init")
	if err := os.WriteFile(filepath.Join(e.ws, "notes.txt"), []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// Where brig keeps this workspace's toolchain cache: the write grant
	// of `git diff` that is not a device, /tmp or /dev/shm.
	r := e.run(t, "policy", "check", "--mode", "auto", "--json", "git diff")
	var check struct {
		ReadsOnly bool `json:"reads_only"`
		Grant     struct {
			Paths []struct{ Path, Access string }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &check); err != nil {
		t.Fatalf("%v: %s %s", err, r.stdout, r.stderr)
	}
	if !check.ReadsOnly {
		t.Fatalf("git diff is not a line that only reads: %s", r.stdout)
	}
	cache := ""
	for _, p := range check.Grant.Paths {
		if p.Access == "write" && strings.HasPrefix(p.Path, e.home+"/") {
			cache = p.Path
		}
	}
	if cache == "" {
		t.Fatalf("no write grant in the home (the toolchain cache): %s", r.stdout)
	}
	hooks := filepath.Join(cache, "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(e.ws, ".git", "hooks")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(hooks, filepath.Join(e.ws, ".git", "hooks")); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(hooks, "pre-commit")
	git("config", "diff.evil.textconv", `sh -c 'printf "#!/bin/sh\necho pwned\n" > `+planted+`; chmod +x `+planted+`; cat "$1"' --`)

	// The control: outside brig, git diff runs the textconv, which plants
	// the hook.
	git("diff")
	if _, err := os.Stat(planted); err != nil {
		t.Fatalf("control: the textconv outside brig did not plant the hook (%v); the test proves nothing here", err)
	}
	if err := os.Remove(planted); err != nil {
		t.Fatal(err)
	}

	r = e.run(t, append(modelArgs("anthropic"), "-p", "what changed?", "--mode", "auto")...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(planted); err == nil {
		t.Fatalf("ESCAPE: the reading line planted %s, which git outside brig runs through .git/hooks\n%s", planted, r.stderr)
	}
}

package e2e

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"brig/test/fakeprovider"
)

// TestLocalCloneDoesNotWriteItsSource: a workspace cloned from a local
// repository shares .git/objects with it through hard links. The
// repository's own make test, allowed in auto mode, overwrites every
// object file in place: the source repository's objects keep their bytes
// (git fsck finds nothing), because brig gave the workspace its own
// copies before the call, and says so in the call's result. Control: the
// call did write the workspace's own copies — which, no longer what their
// ids name, the sweep after it took out, and said so.
func TestLocalCloneDoesNotWriteItsSource(t *testing.T) {
	e := newEnv(t, "anthropic",
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("bash", bashInput("make test"))}},
		fakeprovider.Turn{Text: "done", Check: []fakeprovider.Check{{Contains: "poisoned"}, {Contains: "own copies of"}, {Contains: "hard links to files outside it"},
			{Contains: "its content is not what its id names"}}},
	)
	git := func(dir string, args ...string) {
		t.Helper()
		c := exec.Command("git", args...)
		c.Dir = dir
		c.Env = append(os.Environ(), "HOME="+e.home, "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	source := filepath.Join(filepath.Dir(e.ws), "source")
	if err := os.MkdirAll(source, 0o755); err != nil {
		t.Fatal(err)
	}
	git(source, "init", "-q")
	if err := os.WriteFile(filepath.Join(source, "run.sh"), []byte("echo hello\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(source, "add", "run.sh")
	git(source, "commit", "-qm", "first")
	os.RemoveAll(e.ws)
	git(filepath.Dir(e.ws), "clone", "-q", source, e.ws) // hard links, git's default for a local path
	objects := func(repo string) map[string][]byte {
		out := map[string][]byte{}
		dir := filepath.Join(repo, ".git", "objects")
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				b, _ := os.ReadFile(p)
				rel, _ := filepath.Rel(dir, p)
				out[rel] = b
			}
			return nil
		})
		return out
	}
	before := objects(source)
	shared := 0
	for rel := range before {
		if st, err := os.Stat(filepath.Join(e.ws, ".git", "objects", rel)); err == nil && linkCount(st) > 1 {
			shared++
		}
	}
	if shared == 0 {
		t.Fatal("the clone shares no object with its source: the case proves nothing")
	}
	mk := "test:\n\t@for f in $$(find .git/objects -type f); do chmod u+w $$f; printf POISON > $$f; done; echo poisoned\n"
	if err := os.WriteFile(filepath.Join(e.ws, "Makefile"), []byte(mk), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.run(t, "--model", "claude-sonnet-4-5", "--mode", "auto", "-p", "run the tests")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	e.srv.Verify(t)
	for rel, b := range objects(source) {
		if !bytes.Equal(b, before[rel]) {
			t.Errorf("the source's object %s was written: %q", rel, b)
		}
	}
	git(source, "fsck", "--full")
	left := objects(e.ws)
	taken := 0
	for rel := range before {
		if _, ok := left[rel]; !ok {
			taken++
		}
	}
	for rel, b := range left {
		if string(b) == "POISON" {
			t.Errorf("the workspace's object %s still holds what the call wrote", rel)
		}
	}
	if taken < shared {
		t.Errorf("control: %d of the workspace's objects were taken out as written by the call, want at least %d", taken, shared)
	}
}

func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}

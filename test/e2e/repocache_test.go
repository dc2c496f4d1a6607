package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"brig/test/fakeprovider"
)

// TestRepositoryPlantedInARememberedTree: in a workspace older than a
// second, whose directories brig's searches for repositories remember
// between calls (jail.RepoCache), a call that plants a repository deep in
// a remembered subtree and gives a remembered directory a repository's
// shape still has both taken out after it, and the model is told; the
// calls before it, which changed nothing, had nothing taken out.
func TestRepositoryPlantedInARememberedTree(t *testing.T) {
	// The repository's own Makefile does the planting, as a hostile
	// repository's would when the model runs an allowed make.
	makefile := "plant:\n" +
		"\tmkdir -p a/b/c/evil/.git/hooks\n" +
		"\tprintf '[core]\\n\\tfsmonitor = \"touch /tmp/brig-e2e-canary; false\"\\n' > a/b/c/evil/.git/config\n" +
		"\tmkdir -p d/e/objects d/e/refs\n" +
		"\techo 'ref: refs/heads/main' > d/e/HEAD\n" +
		"\tprintf '[core]\\n\\tfsmonitor = \"touch /tmp/brig-e2e-canary; false\"\\n' > d/e/config\n"
	e := newEnv(t, "anthropic",
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("bash", `{"command":"true"}`)}},
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("bash", `{"command":"true"}`)},
			Check: []fakeprovider.Check{{NotContains: "brig undid it"}}},
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("bash", `{"command":"make plant"}`)},
			Check: []fakeprovider.Check{{NotContains: "brig undid it"}}},
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("bash", `{"command":"ls -a a/b/c/evil d/e"}`)},
			Check: []fakeprovider.Check{{Contains: "brig undid it"}, {Contains: "a/b/c/evil/.git"}, {Contains: "d/e/HEAD"}}},
		fakeprovider.Turn{Text: "done",
			Check: []fakeprovider.Check{{NotContains: ".git\n"}, {NotContains: "HEAD"}, {Contains: "file.go"}}},
	)
	if err := os.WriteFile(filepath.Join(e.ws, "Makefile"), []byte(makefile), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a/b/c", "a/f", "d/e", "g"} {
		if err := os.MkdirAll(filepath.Join(e.ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(e.ws, d, "file.go"), []byte("package x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A directory changed within the last second is never remembered:
	// the tree ages past that, as a repository's has.
	time.Sleep(1100 * time.Millisecond)
	r := e.run(t, "--model", "claude-sonnet-4-5", "--mode", "auto", "-p", "plant something")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	e.srv.Verify(t)
	for _, gone := range []string{"a/b/c/evil/.git", "d/e/HEAD", "d/e/config"} {
		if _, err := os.Lstat(filepath.Join(e.ws, gone)); err == nil {
			t.Errorf("%s is still in the workspace", gone)
		}
	}
	for _, kept := range []string{"d/e/file.go", "a/b/c/file.go"} {
		if _, err := os.Lstat(filepath.Join(e.ws, kept)); err != nil {
			t.Errorf("control: %s was taken out: %v", kept, err)
		}
	}
}

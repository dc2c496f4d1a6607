package e2e

import (
	"os"
	"path/filepath"
	"strings"
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
	agedPlantingTree(t, e.ws)
	r := e.run(t, "--model", "claude-sonnet-4-5", "--mode", "auto", "-p", "plant something")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	e.srv.Verify(t)
	checkPlantedTakenOut(t, e.ws)
}

// TestSandboxRepositoryPlantedInARememberedTree: `brig sandbox` runs one
// call, whose sweep searches with the memory of the grant made just
// before it (jail.Spec.Repos): a repository the command plants deep in a
// remembered subtree, and the shape it gives a remembered directory, are
// still taken out, and the user is told.
func TestSandboxRepositoryPlantedInARememberedTree(t *testing.T) {
	e := newEnv(t, "anthropic")
	agedPlantingTree(t, e.ws)
	r := e.run(t, "sandbox", "--", "make", "plant")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, said := range []string{e.ws + "/a/b/c/evil/.git", e.ws + "/d/e/HEAD"} {
		if !strings.Contains(r.stderr, "the protected path "+said+"; brig undid it") {
			t.Errorf("the user was not told of %s:\n%s", said, r.stderr)
		}
	}
	checkPlantedTakenOut(t, e.ws)
}

// agedPlantingTree writes a Makefile whose plant target plants a
// repository deep in a subtree and gives another directory a
// repository's shape, as a hostile repository's would when the model runs
// an allowed make, and lets the tree age past the second within which a
// changed directory is never remembered (jail.RepoCache).
func agedPlantingTree(t *testing.T, ws string) {
	t.Helper()
	makefile := "plant:\n" +
		"\tmkdir -p a/b/c/evil/.git/hooks\n" +
		"\tprintf '[core]\\n\\tfsmonitor = \"touch /tmp/brig-e2e-canary; false\"\\n' > a/b/c/evil/.git/config\n" +
		"\tmkdir -p d/e/objects d/e/refs\n" +
		"\techo 'ref: refs/heads/main' > d/e/HEAD\n" +
		"\tprintf '[core]\\n\\tfsmonitor = \"touch /tmp/brig-e2e-canary; false\"\\n' > d/e/config\n"
	if err := os.WriteFile(filepath.Join(ws, "Makefile"), []byte(makefile), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a/b/c", "a/f", "d/e", "g"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, d, "file.go"), []byte("package x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(1100 * time.Millisecond)
}

// checkPlantedTakenOut checks that what agedPlantingTree's make planted
// is gone and the user's files beside it are not.
func checkPlantedTakenOut(t *testing.T, ws string) {
	t.Helper()
	for _, gone := range []string{"a/b/c/evil/.git", "d/e/HEAD", "d/e/config"} {
		if _, err := os.Lstat(filepath.Join(ws, gone)); err == nil {
			t.Errorf("%s is still in the workspace", gone)
		}
	}
	for _, kept := range []string{"d/e/file.go", "a/b/c/file.go"} {
		if _, err := os.Lstat(filepath.Join(ws, kept)); err != nil {
			t.Errorf("control: %s was taken out: %v", kept, err)
		}
	}
}

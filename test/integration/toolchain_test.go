// Package integration runs the real brig binary the way a user does, and
// checks that everyday development work still succeeds inside the jail:
// Go, Node and Python test runners and git commits in the workspace.
package integration

import (
	"brig/test/brigbin"
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var brig string

func TestMain(m *testing.M) {
	brigbin.Main(m, &brig)
}

// workspace makes a git repository at a stable path, emptied but kept
// (with its .git) from one run to the next: the jail's toolchain cache
// belongs to the repository's identity (the directory and its .git), so it
// is reused only while they stay.
func workspace(t *testing.T, name string) string {
	t.Helper()
	// One path per checkout: runs of other checkouts on this machine
	// must not empty it under this one.
	mod, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(mod))
	ws := filepath.Join(os.TempDir(), fmt.Sprintf("brig-integration-%x-%s", sum[:4], name))
	empty := func() {
		entries, _ := os.ReadDir(ws)
		for _, e := range entries {
			// The git test wants a fresh repository; it needs no cache.
			if e.Name() != ".git" || name == "git" {
				os.RemoveAll(filepath.Join(ws, e.Name()))
			}
		}
	}
	empty()
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(empty)
	git(t, ws, "init", "-q")
	git(t, ws, "config", "user.email", "test@example.com")
	git(t, ws, "config", "user.name", "Test")
	return ws
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sandbox runs `brig sandbox -- sh -c script` in dir.
func sandbox(t *testing.T, dir, script string) (string, int) {
	t.Helper()
	cmd := exec.Command(brig, "sandbox", "--timeout", "5m", "--", "sh", "-c", script)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run brig: %v", err)
	}
	return out.String(), code
}

func TestGoTestAndBuildInTheJail(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not installed")
	}
	ws := workspace(t, "go")
	write(t, filepath.Join(ws, "go.mod"), "module example.com/x\n\ngo 1.21\n")
	write(t, filepath.Join(ws, "x.go"), "package x\n\nfunc Add(a, b int) int { return a + b }\n")
	// httptest listens on 127.0.0.1: the call's private loopback.
	write(t, filepath.Join(ws, "x_test.go"), `package x

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestAdd(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "3") }))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "3" || Add(1, 2) != 3 {
		t.Fatal("bad")
	}
}
`)
	out, code := sandbox(t, ws, "go test -count=1 ./... && go build -o x.bin . && echo BUILD-OK")
	if code != 0 || !strings.Contains(out, "ok  \texample.com/x") || !strings.Contains(out, "BUILD-OK") {
		t.Fatalf("go test/build in the jail failed (exit %d):\n%s", code, out)
	}
}

func TestNpmTestInTheJail(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	ws := workspace(t, "npm")
	write(t, filepath.Join(ws, "package.json"), `{"name":"x","version":"1.0.0","scripts":{"test":"node test.js"}}`)
	write(t, filepath.Join(ws, "test.js"), "require('assert').strictEqual(1 + 2, 3); console.log('NODE-OK');\n")
	out, code := sandbox(t, ws, "npm test")
	if code != 0 || !strings.Contains(out, "NODE-OK") {
		t.Fatalf("npm test in the jail failed (exit %d):\n%s", code, out)
	}
}

func TestPytestInTheJail(t *testing.T) {
	// Debian's pytest (python3-pytest) runs with the system interpreter;
	// .ci/run installs it.
	if exec.Command("/usr/bin/python3", "-c", "import pytest").Run() != nil {
		t.Skip("pytest is not installed for /usr/bin/python3 (apt-get install python3-pytest)")
	}
	ws := workspace(t, "py")
	write(t, filepath.Join(ws, "test_x.py"), "def test_add():\n    assert 1 + 2 == 3\n")
	out, code := sandbox(t, ws, "/usr/bin/python3 -m pytest -q")
	if code != 0 || !strings.Contains(out, "1 passed") {
		t.Fatalf("pytest in the jail failed (exit %d):\n%s", code, out)
	}
}

func TestCargoBuildAndTestInTheJail(t *testing.T) {
	if _, err := exec.LookPath("cargo"); err != nil {
		t.Skip("cargo is not installed")
	}
	ws := workspace(t, "cargo")
	write(t, filepath.Join(ws, "Cargo.toml"), "[package]\nname = \"x\"\nversion = \"0.1.0\"\nedition = \"2021\"\n")
	write(t, filepath.Join(ws, "src", "lib.rs"), "pub fn add(a: i32, b: i32) -> i32 { a + b }\n\n#[test]\nfn adds() { assert_eq!(add(1, 2), 3); }\n")
	out, code := sandbox(t, ws, "cargo test 2>&1")
	if code != 0 || !strings.Contains(out, "test result: ok. 1 passed") {
		t.Fatalf("cargo test in the jail failed (exit %d):\n%s", code, out)
	}
}

func TestGitCommitWorksAndHooksStayProtected(t *testing.T) {
	ws := workspace(t, "git")
	write(t, filepath.Join(ws, "a.txt"), "a\n")
	out, code := sandbox(t, ws, "git add a.txt && git commit -qm 'from the jail' && echo COMMITTED; echo planted > .git/hooks/pre-commit; echo '[core] hooksPath = /tmp' >> .git/config")
	if code != 0 && !strings.Contains(out, "COMMITTED") {
		t.Fatalf("git commit in the jail failed (exit %d):\n%s", code, out)
	}
	if log := git(t, ws, "log", "--format=%s"); strings.TrimSpace(log) != "from the jail" {
		t.Fatalf("the commit is not in the repository: %q\n%s", log, out)
	}
	if _, err := os.Stat(filepath.Join(ws, ".git", "hooks", "pre-commit")); err == nil {
		t.Fatalf("a hook was planted:\n%s", out)
	}
	if cfg, _ := os.ReadFile(filepath.Join(ws, ".git", "config")); strings.Contains(string(cfg), "hooksPath") {
		t.Fatalf(".git/config was changed:\n%s", cfg)
	}
}

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"brig/jail"
)

// The test binary doubles as the jail child, as brig itself does.
func TestMain(m *testing.M) {
	if jail.IsChild() {
		jail.ChildMain(nil)
	}
	os.Exit(m.Run())
}

// TestRemovedWorkingDirectory (new user, 2026-12-03): brig started in a
// directory removed since the shell entered it says so and what to do,
// not "getwd: no such file or directory" alone.
func TestRemovedWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	gone := filepath.Join(dir, "gone")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	// The child starts in the directory, which is then removed under it.
	cmd := exec.Command("/bin/sh", "-c", `cd "$1" && rmdir "$1" && exec "$2" -test.run='^TestHelperWorkingDir$'`, "sh", gone, os.Args[0])
	cmd.Env = append(os.Environ(), "BRIG_TEST_WORKINGDIR=1")
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "the current directory no longer exists") || !strings.Contains(string(out), "cd to one that exists") {
		t.Fatalf("in a removed directory: %s", out)
	}
	// The control: in a directory that exists, the working directory is it.
	if cwd, err := workingDir(); err != nil || cwd == "" {
		t.Fatalf("control: %q, %v", cwd, err)
	}
}

// TestHelperWorkingDir is TestRemovedWorkingDirectory's child: it prints
// workingDir's answer in the directory it was started in.
func TestHelperWorkingDir(t *testing.T) {
	if os.Getenv("BRIG_TEST_WORKINGDIR") == "" {
		t.Skip("run by TestRemovedWorkingDirectory")
	}
	_, err := workingDir()
	fmt.Println(err)
}

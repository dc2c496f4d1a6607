package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResolveWorkspaceRefusesWhatRecordsCannotName: a workspace whose
// path is not UTF-8 (its sessions and undo records would name another
// path) and a file given as the workspace are refused with the fix; the
// control, a UTF-8 directory, resolves.
func TestResolveWorkspaceRefusesWhatRecordsCannotName(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(root, "ws\xff")
	good := filepath.Join(root, "wsé")
	file := filepath.Join(root, "f")
	for _, d := range []string{bad + "/.git", good + "/.git"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := resolveWorkspace("", bad); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") || !strings.Contains(err.Error(), "rename") {
		t.Errorf("non-UTF-8 workspace: got %v, want an error saying to rename it", err)
	}
	if _, err := resolveWorkspace(file, root); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a file as the workspace: got %v", err)
	}
	if ws, err := resolveWorkspace("", good); err != nil || ws != good {
		t.Errorf("control: got %q, %v; want %q", ws, err, good)
	}
}

// TestResolveWorkspaceThatDoesNotExist (new user, 2026-12-03): a
// --workspace that does not exist is said as its neighbours say theirs,
// with the fix, not as "lstat /nonexist: no such file or directory".
func TestResolveWorkspaceThatDoesNotExist(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexist")
	_, err := resolveWorkspace(missing, "/")
	if want := "--workspace " + missing + " does not exist: pass an existing project directory"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	if _, err := resolveWorkspace("", missing); err == nil || !strings.Contains(err.Error(), "the current directory "+missing+" no longer exists") {
		t.Errorf("a removed current directory: %v", err)
	}
}

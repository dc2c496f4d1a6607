package mcp

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestProgramsNamesWhatServersRunFromTheWorkspace: a script a server's
// arguments name is protected as its directory (or as the file, at the
// workspace's root), a command given as a path too; a name found on PATH,
// an option, a file outside the workspace, a missing one and an HTTP
// server's URL are not.
func TestProgramsNamesWhatServersRunFromTheWorkspace(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	ws := filepath.Join(root, "ws")
	for _, f := range []string{"tools/srv.py", "mcp/index.js", "run.sh", "sub/bin/server"} {
		p := filepath.Join(ws, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "outside.py"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Servers: []Server{
		{Name: "a", Transport: Stdio, Command: "python3", Args: []string{"-u", "tools/srv.py", "--flag"}},
		{Name: "b", Transport: Stdio, Command: "node", Args: []string{"./mcp/index.js"}},
		{Name: "c", Transport: Stdio, Command: "sh", Args: []string{"run.sh", "missing.sh", root + "/outside.py"}},
		{Name: "d", Transport: Stdio, Command: "./bin/server", Dir: "sub"},
		{Name: "e", Transport: HTTP, URL: "http://127.0.0.1:1/mcp"},
	}}
	got := Programs(cfg, ws)
	want := []string{ws + "/mcp", ws + "/run.sh", ws + "/sub/bin", ws + "/tools"}
	if !slices.Equal(got, want) {
		t.Errorf("Programs = %q\nwant %q", got, want)
	}
}

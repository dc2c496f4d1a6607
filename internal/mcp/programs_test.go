package mcp

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestProgramsNamesWhatServersRunFromTheWorkspace: a script a server's
// arguments name is protected as its directory (or as the file, at the
// workspace's root), a command given as a path too, a directory argument
// whole, an option's value, and a link at the root as the link (and its
// target's directory); a name found on PATH, an option, a file outside the
// workspace, a missing one, the workspace itself and an HTTP server's URL
// are not.
func TestProgramsNamesWhatServersRunFromTheWorkspace(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	ws := filepath.Join(root, "ws")
	for _, f := range []string{"tools/srv.py", "mcp/index.js", "run.sh", "sub/bin/server", "real/entry.py", "server/package.json", "loader.js", "pkg/__init__.py"} {
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
	if err := os.Symlink("real/entry.py", filepath.Join(ws, "entry.py")); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Servers: []Server{
		{Name: "a", Transport: Stdio, Command: "python3", Args: []string{"-u", "tools/srv.py", "--flag"}},
		{Name: "b", Transport: Stdio, Command: "node", Args: []string{"./mcp/index.js"}},
		{Name: "c", Transport: Stdio, Command: "sh", Args: []string{"run.sh", "missing.sh", root + "/outside.py"}},
		{Name: "d", Transport: Stdio, Command: "./bin/server", Dir: "sub"},
		{Name: "e", Transport: HTTP, URL: "http://127.0.0.1:1/mcp"},
		{Name: "f", Transport: Stdio, Command: "python3", Args: []string{"entry.py"}},                     // a link at the root, to real/
		{Name: "g", Transport: Stdio, Command: "node", Args: []string{"--require=./loader.js", "server"}}, // an option's value; a directory
		{Name: "h", Transport: Stdio, Command: "python3", Args: []string{"-m", "pkg", "."}},               // a package; the workspace itself is not
		// Red team, 2026-12-03: a dotted module named nothing, and a
		// pkg.py made beside a namespace package is what Python imports.
		{Name: "i", Transport: Stdio, Command: "python3", Args: []string{"-m", "srvb.server"}},
	}}
	got := Programs(cfg, ws)
	want := []string{ws + "/entry.py", ws + "/loader.js", ws + "/mcp", ws + "/pkg", ws + "/pkg.py", ws + "/pkg.pyc", ws + "/real", ws + "/run.sh", ws + "/server",
		ws + "/srvb", ws + "/srvb.py", ws + "/srvb.pyc", ws + "/sub/bin", ws + "/tools"}
	if !slices.Equal(got, want) {
		t.Errorf("Programs = %q\nwant %q", got, want)
	}
}

package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestListDirectory(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b.txt"), "12345")
	writeFile(t, filepath.Join(dir, "sub", "x"), "")
	os.Symlink("b.txt", filepath.Join(dir, "a-link"))
	res := call(t, ListDirectory, obj{"path": dir})
	want := "a-link -> b.txt\nb.txt (5 B)\nsub/"
	if res.IsError || res.Text != want {
		t.Fatalf("got %q, want %q", res.Text, want)
	}
	if res := call(t, ListDirectory, obj{"path": filepath.Join(dir, "nope")}); !res.IsError {
		t.Fatal("missing directory listed")
	}
}

func TestMoveCopyDelete(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeFile(t, "src/a.txt", "A")
	writeFile(t, "src/deep/b.txt", "B")
	os.Chmod("src/a.txt", 0o600)
	os.Symlink("/etc/passwd", "src/outside-link")
	writeFile(t, "other.txt", "O")

	steps := []struct {
		name    string
		tool    Name
		args    obj
		wantErr string
		check   func(t *testing.T)
	}{
		{"mkdir", CreateDirectory, obj{"path": "made/deeper"}, "", func(t *testing.T) {
			if fi, err := os.Stat("made/deeper"); err != nil || !fi.IsDir() {
				t.Fatal("not created")
			}
		}},
		{"copy tree keeps links as links", CopyPath, obj{"source": "src", "destination": "copy"}, "", func(t *testing.T) {
			if readString(t, "copy/deep/b.txt") != "B" {
				t.Fatal("content")
			}
			if fi, _ := os.Stat("copy/a.txt"); fi.Mode().Perm() != 0o600 {
				t.Fatalf("mode %v", fi.Mode().Perm())
			}
			if target, err := os.Readlink("copy/outside-link"); err != nil || target != "/etc/passwd" {
				t.Fatalf("link %q %v", target, err)
			}
		}},
		{"copy refuses to overwrite", CopyPath, obj{"source": "other.txt", "destination": "src/a.txt"}, "set overwrite", nil},
		{"copy overwrites when asked", CopyPath, obj{"source": "other.txt", "destination": "src/a.txt", "overwrite": true}, "", func(t *testing.T) {
			if readString(t, "src/a.txt") != "O" {
				t.Fatal("not overwritten")
			}
		}},
		{"move into a directory path refused", MovePath, obj{"source": "other.txt", "destination": "made"}, "is a directory", nil},
		{"move", MovePath, obj{"source": "other.txt", "destination": "moved/o.txt"}, "", func(t *testing.T) {
			if _, err := os.Stat("other.txt"); !os.IsNotExist(err) || readString(t, "moved/o.txt") != "O" {
				t.Fatal("not moved")
			}
		}},
		{"delete non-empty needs recursive", DeletePath, obj{"path": "copy"}, "recursive", nil},
		{"delete recursive", DeletePath, obj{"path": "copy", "recursive": true}, "", func(t *testing.T) {
			if _, err := os.Stat("copy"); !os.IsNotExist(err) {
				t.Fatal("still there")
			}
		}},
		{"delete a link, not its target", DeletePath, obj{"path": "src/outside-link"}, "", func(t *testing.T) {
			if _, err := os.Stat("/etc/passwd"); err != nil {
				t.Fatal(err)
			}
		}},
		{"delete the working directory refused", DeletePath, obj{"path": ".", "recursive": true}, "working directory", nil},
		{"delete a parent refused", DeletePath, obj{"path": "..", "recursive": true}, "working directory", nil},
		{"delete missing", DeletePath, obj{"path": "nope"}, "no such file", nil},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			res := call(t, s.tool, s.args)
			if s.wantErr != "" {
				if !res.IsError || !strings.Contains(res.Text, s.wantErr) {
					t.Fatalf("want error %q, got %+v", s.wantErr, res)
				}
				return
			}
			if res.IsError {
				t.Fatal(res.Text)
			}
			s.check(t)
		})
	}
}

func TestGlob(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.go", "src/b.go", "src/deep/c.go", "src/deep/c_test.go", "node_modules/m/x.go", ".git/hooks/h.go", "README.md", ".github/w.yml"} {
		writeFile(t, filepath.Join(dir, f), "")
	}
	t.Chdir(dir)
	tests := []struct {
		args obj
		want []string
	}{
		{obj{"pattern": "**/*.go"}, []string{"a.go", "src/b.go", "src/deep/c.go", "src/deep/c_test.go"}},
		{obj{"pattern": "*.go"}, []string{"a.go"}},
		{obj{"pattern": "src/**/*_test.go"}, []string{"src/deep/c_test.go"}},
		{obj{"pattern": "*.go", "path": "src"}, []string{"src/b.go"}},
		{obj{"pattern": "src/*"}, []string{"src/b.go", "src/deep/"}},
		{obj{"pattern": "**/*.{md,yml}"}, []string{".github/w.yml", "README.md"}},
		{obj{"pattern": "**/x.go", "include_ignored": true}, []string{"node_modules/m/x.go"}},
		{obj{"pattern": "**/x.go"}, nil},
		{obj{"pattern": filepath.Join(dir, "src", "*.go")}, []string{filepath.Join(dir, "src", "b.go")}},
	}
	for _, tt := range tests {
		res := call(t, Glob, tt.args)
		want := strings.Join(tt.want, "\n")
		if want == "" {
			want = "no matches"
		}
		if res.IsError || res.Text != want {
			t.Errorf("glob %v = %q, want %q", tt.args, res.Text, want)
		}
	}
	if res := call(t, Glob, obj{"pattern": "[unclosed"}); !res.IsError {
		t.Error("bad pattern accepted")
	}
}

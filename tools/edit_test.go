package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brig/tools/textfile"
)

func TestEditFile(t *testing.T) {
	large := strings.Repeat("filler line of text\n", 400_000) + "needle\n" + strings.Repeat("tail\n", 10) // ~8 MB
	tests := []struct {
		name     string
		content  string
		args     obj
		want     string // file afterwards ("" = unchanged)
		wantErr  string
		diffHas  string
		replaced string
	}{
		{name: "unique match", content: "a\nb\nc\n", args: obj{"old_string": "b", "new_string": "B"},
			want: "a\nB\nc\n", diffHas: "-b\n+B\n", replaced: "1 replacement (+1 -1 lines)"},
		{name: "no match", content: "a\nb\n", args: obj{"old_string": "zzz", "new_string": "y"}, wantErr: "not found"},
		{name: "indentation hint", content: "func f() {\n\treturn\n}\n", args: obj{"old_string": "    return", "new_string": "\treturn 1"}, wantErr: "whitespace"},
		{name: "line-number hint", content: "a\nb\n", args: obj{"old_string": "     1\ta", "new_string": "x"}, wantErr: "line-number prefixes"},
		{name: "several matches", content: "x\ny\nx\nx\n", args: obj{"old_string": "x", "new_string": "z"}, wantErr: "occurs 3 times (lines 1, 3, 4)"},
		{name: "replace all", content: "x\ny\nx\n", args: obj{"old_string": "x", "new_string": "z", "replace_all": true},
			want: "z\ny\nz\n", replaced: "2 replacements"},
		{name: "CRLF kept", content: "one\r\ntwo\r\nthree\r\n", args: obj{"old_string": "one\ntwo", "new_string": "uno\ndos\nextra"},
			want: "uno\r\ndos\r\nextra\r\nthree\r\n"},
		{name: "UTF-8", content: "naïve café\n日本語\n", args: obj{"old_string": "日本語", "new_string": "中文 ✓"},
			want: "naïve café\n中文 ✓\n"},
		{name: "large file", content: large, args: obj{"old_string": "needle\n", "new_string": "found\n"},
			want: strings.Replace(large, "needle\n", "found\n", 1), diffHas: "-needle\n+found\n"},
		{name: "stale hash", content: "a\n", args: obj{"old_string": "a", "new_string": "b", "expected_hash": "0123456789abcdef"}, wantErr: "changed since it was read"},
		{name: "fresh hash", content: "a\n", args: obj{"old_string": "a", "new_string": "b", "expected_hash": textfile.HashContent([]byte("a\n"))}, want: "b\n"},
		{name: "cut marker", content: "a\n", args: obj{"old_string": "a… " + lineCutMarker + ", 9 more bytes]", "new_string": "b"}, wantErr: "line-cut marker"},
		{name: "binary", content: "a\x00b", args: obj{"old_string": "a", "new_string": "b"}, wantErr: "binary"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.txt")
			writeFile(t, path, tt.content)
			tt.args["path"] = path
			res := call(t, EditFile, tt.args)
			got := readString(t, path)
			if tt.wantErr != "" {
				if !res.IsError || !strings.Contains(res.Text, tt.wantErr) {
					t.Fatalf("want error %q, got %q", tt.wantErr, res.Text)
				}
				if got != tt.content {
					t.Fatal("the file changed although the edit was refused")
				}
				return
			}
			if res.IsError {
				t.Fatalf("error: %s", res.Text)
			}
			if got != tt.want {
				t.Fatalf("file = %q, want %q", trunc(got), trunc(tt.want))
			}
			if !strings.Contains(res.Meta.Diff, tt.diffHas) || !strings.Contains(res.Text, tt.diffHas) {
				t.Errorf("diff lacks %q:\n%s", tt.diffHas, res.Text)
			}
			if !strings.Contains(res.Text, tt.replaced) {
				t.Errorf("text lacks %q: %s", tt.replaced, res.Text)
			}
			if res.Meta.Hash != textfile.HashContent([]byte(got)) || !strings.Contains(res.Text, "[hash "+res.Meta.Hash+"]") {
				t.Errorf("hash %q does not describe the new content", res.Meta.Hash)
			}
			if len(res.Text) > MaxDiffModelBytes+512 {
				t.Errorf("model text is %d bytes", len(res.Text))
			}
		})
	}
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

func TestEditKeepsModeAndFollowsSymlinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.sh")
	writeFile(t, real, "echo hi\n")
	if err := os.Chmod(real, 0o751); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.sh")
	if err := os.Symlink("real.sh", link); err != nil {
		t.Fatal(err)
	}
	res := call(t, EditFile, obj{"path": link, "old_string": "hi", "new_string": "there"})
	if res.IsError {
		t.Fatal(res.Text)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced by a file")
	}
	fi, _ := os.Stat(real)
	if got := readString(t, real); got != "echo there\n" || fi.Mode().Perm() != 0o751 {
		t.Fatalf("real file %q mode %v", got, fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Fatalf("a temporary file was left behind: %v", entries)
	}
}

func TestMultiEditIsAllOrNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.go")
	orig := "package m\n\nfunc A() {}\nfunc B() {}\n"
	writeFile(t, path, orig)

	res := call(t, MultiEdit, obj{"path": path, "edits": []obj{
		{"old_string": "func A()", "new_string": "func Alpha()"},
		{"old_string": "func Missing()", "new_string": "x"},
	}})
	if !res.IsError || !strings.Contains(res.Text, "edit 2 of 2") || !strings.Contains(res.Text, "nothing was written") {
		t.Fatalf("got %q", res.Text)
	}
	if readString(t, path) != orig {
		t.Fatal("a failed multi_edit changed the file")
	}

	// Edits apply in order: the second sees the first's result.
	res = call(t, MultiEdit, obj{"path": path, "edits": []obj{
		{"old_string": "func A()", "new_string": "func Alpha()"},
		{"old_string": "func Alpha() {}", "new_string": "func Alpha() { B() }"},
		{"old_string": "func", "new_string": "func /*x*/", "replace_all": true},
	}})
	if res.IsError {
		t.Fatal(res.Text)
	}
	want := "package m\n\nfunc /*x*/ Alpha() { B() }\nfunc /*x*/ B() {}\n"
	if got := readString(t, path); got != want {
		t.Fatalf("got %q", got)
	}
	if !strings.Contains(res.Text, "4 replacements") {
		t.Errorf("text: %s", res.Text)
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	t.Run("creates parents", func(t *testing.T) {
		p := filepath.Join(dir, "a", "b", "new.txt")
		res := call(t, WriteFile, obj{"path": p, "content": "hello\n"})
		if res.IsError || readString(t, p) != "hello\n" || !strings.HasPrefix(res.Text, "Created") {
			t.Fatalf("%+v", res)
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
			t.Errorf("mode %v", fi.Mode().Perm())
		}
	})
	t.Run("keeps the mode and diffs", func(t *testing.T) {
		p := filepath.Join(dir, "run.sh")
		writeFile(t, p, "old\n")
		os.Chmod(p, 0o700)
		res := call(t, WriteFile, obj{"path": p, "content": "new\n"})
		if res.IsError || readString(t, p) != "new\n" {
			t.Fatalf("%+v", res)
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o700 {
			t.Errorf("mode %v", fi.Mode().Perm())
		}
		if !strings.Contains(res.Meta.Diff, "-old\n+new\n") || res.Meta.Atomic == nil || !*res.Meta.Atomic {
			t.Errorf("meta %+v", res.Meta)
		}
	})
	t.Run("dangling symlink refused", func(t *testing.T) {
		p := filepath.Join(dir, "dangling")
		os.Symlink(filepath.Join(dir, "nowhere", "x"), p)
		if res := call(t, WriteFile, obj{"path": p, "content": "x"}); !res.IsError {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("directory refused", func(t *testing.T) {
		if res := call(t, WriteFile, obj{"path": dir, "content": "x"}); !res.IsError || !strings.Contains(res.Text, "is a directory") {
			t.Fatalf("%+v", res)
		}
	})
}

func TestCommonLines(t *testing.T) {
	tests := []struct {
		a, b     string
		pre, suf int
	}{
		{"x\ny\nz\n", "x\nY\nz\n", 2, 2},
		{"abc", "abd", 0, 0},
		{"same\n", "same\n", 5, 0},
		{"a\nb\n", "a\nb\nc\n", 4, 0},
	}
	for _, tt := range tests {
		pre, suf := commonLines(tt.a, tt.b)
		if pre != tt.pre || suf != tt.suf {
			t.Errorf("commonLines(%q, %q) = %d, %d; want %d, %d", tt.a, tt.b, pre, suf, tt.pre, tt.suf)
		}
	}
}

package userfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadFile: the user's file in the user's directories is read; one that
// someone else can write, or that sits in a directory someone else can
// write, is refused with the command that fixes it — and after running that
// command, it is read.
func TestReadFile(t *testing.T) {
	me := Me()
	other := me.UID + 1000
	private := func(gid int) bool { return gid == me.GID }
	notPrivate := func(int) bool { return false }
	for _, tc := range []struct {
		name     string
		fileMode os.FileMode
		dirMode  os.FileMode
		owner    int // file owner; -1: mine
		private  func(int) bool
		wantErr  string // "" = read
		fix      func(dir, file string) error
	}{
		{name: "mine", fileMode: 0o644, dirMode: 0o755, owner: -1},
		{name: "mine, private", fileMode: 0o600, dirMode: 0o700, owner: -1},
		{name: "world-writable file", fileMode: 0o666, dirMode: 0o755, owner: -1, wantErr: "writable by everyone",
			fix: func(_, f string) error { return os.Chmod(f, 0o644) }},
		{name: "group-writable file, shared group", fileMode: 0o664, dirMode: 0o755, owner: -1, private: notPrivate, wantErr: "writable by its group",
			fix: func(_, f string) error { return os.Chmod(f, 0o644) }},
		{name: "group-writable file, user private group", fileMode: 0o664, dirMode: 0o775, owner: -1, private: private},
		{name: "world-writable directory", fileMode: 0o644, dirMode: 0o777, owner: -1, wantErr: "writable by everyone",
			fix: func(d, _ string) error { return os.Chmod(d, 0o755) }},
		{name: "group-writable directory, shared group", fileMode: 0o644, dirMode: 0o775, owner: -1, private: notPrivate, wantErr: "writable by its group",
			fix: func(d, _ string) error { return os.Chmod(d, 0o755) }},
		{name: "another user's file", fileMode: 0o644, dirMode: 0o755, owner: other, wantErr: "is owned by uid",
			fix: func(_, f string) error { return os.Chown(f, me.UID, -1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.owner >= 0 && os.Getuid() != 0 {
				t.Skip("giving a file to another user needs root")
			}
			root := t.TempDir()
			if err := os.Chmod(root, 0o755); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(root, "brig")
			file := filepath.Join(dir, "config.toml")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte("x = 1\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(file, tc.fileMode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, tc.dirMode); err != nil {
				t.Fatal(err)
			}
			if tc.owner >= 0 {
				if err := os.Chown(file, tc.owner, -1); err != nil {
					t.Fatal(err)
				}
			}
			w := me
			w.PrivateGroup = tc.private
			if w.PrivateGroup == nil {
				w.PrivateGroup = notPrivate
			}
			data, err := w.ReadFile(file, 1<<20)
			if tc.wantErr == "" {
				if err != nil || string(data) != "x = 1\n" {
					t.Fatalf("got %q, %v; want the file read", data, err)
				}
				return
			}
			var ue *Error
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "Run: ") {
				t.Fatalf("got %v; want an error saying %q and what to run", err, tc.wantErr)
			}
			if data != nil {
				t.Errorf("data returned with the error: %q", data)
			}
			if err := tc.fix(dir, file); err != nil {
				t.Fatal(err)
			}
			if _, err := w.ReadFile(file, 1<<20); err != nil {
				t.Errorf("after the fix (%s): %v", ue.Fix, err)
			}
		})
	}
}

// TestStickyRootDirectory: a world-writable directory on the way is fine
// when it is root's and sticky (/tmp), since no one else can rename or
// replace the user's entries in it.
func TestStickyRootDirectory(t *testing.T) {
	fi, err := os.Stat("/tmp")
	if err != nil || fi.Mode()&os.ModeSticky == 0 || fi.Mode().Perm()&0o002 == 0 {
		t.Skip("/tmp is not a sticky world-writable directory here")
	}
	if err := Me().CheckDirs("/tmp"); err != nil {
		t.Fatalf("/tmp refused: %v", err)
	}
}

// TestMissing: a missing file is fs.ErrNotExist (callers treat it as empty),
// not a refusal.
func TestMissing(t *testing.T) {
	_, err := ReadFile(filepath.Join(t.TempDir(), "none.toml"), 10)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("got %v, want fs.ErrNotExist", err)
	}
}

package userfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"brig/internal/hangtest"
)

// TestReadRegular: a repository's file is read when it is a regular file
// within the limit; a link (to /dev/zero, or even to a regular file), a
// FIFO with no writer, a device, a directory and a file over the limit are
// refused with an error naming the file, without blocking; a missing file
// is fs.ErrNotExist.
func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	if err := os.WriteFile(p("ok.toml"), []byte("x = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("big.toml"), make([]byte, 4<<20+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p("fifo.toml"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink("/dev/zero", p("zero.toml"))
	os.Symlink("ok.toml", p("link.toml"))
	os.Mkdir(p("dir.toml"), 0o755)

	var data []byte
	var err error
	hangtest.Within(t, "ReadRegular of a regular file", func() { data, err = ReadRegular(p("ok.toml"), 4<<20) })
	if err != nil || string(data) != "x = 1\n" {
		t.Fatalf("a regular file: %q, %v", data, err)
	}
	for _, tc := range []struct{ path, want string }{
		{p("zero.toml"), "is a symbolic link"},
		{p("link.toml"), "is a symbolic link"},
		{p("fifo.toml"), "is not a regular file (a FIFO)"},
		{"/dev/zero", "is not a regular file (a character device)"},
		{p("dir.toml"), "is not a regular file (a directory)"},
		{p("big.toml"), "is larger than 4 MiB"},
	} {
		hangtest.Within(t, "ReadRegular("+tc.path+")", func() { data, err = ReadRegular(tc.path, 4<<20) })
		var re *RefusedError
		if !errors.As(err, &re) || re.Path != tc.path || !strings.HasPrefix(err.Error(), tc.path+" "+tc.want) {
			t.Errorf("%s: got %q, %v; want an error %q naming it", tc.path, data, err, tc.want)
		}
		if data != nil {
			t.Errorf("%s: data returned with the error", tc.path)
		}
	}
	if _, err := ReadRegular(p("missing.toml"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
}

// TestReadFileDoesNotBlock: the user's own file is read through a link (a
// dotfiles manager's), but a FIFO or a device where it should be is refused
// without blocking, and so is a file over the limit.
func TestReadFileDoesNotBlock(t *testing.T) {
	root := t.TempDir()
	os.Chmod(root, 0o755)
	dir := filepath.Join(root, "brig")
	os.Mkdir(dir, 0o700)
	p := func(name string) string { return filepath.Join(dir, name) }
	if err := os.WriteFile(p("real.toml"), []byte("x = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Symlink("real.toml", p("config.toml"))
	if err := syscall.Mkfifo(p("fifo.toml"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Symlink("/dev/zero", p("zero.toml"))
	w := Me()
	w.PrivateGroup = func(int) bool { return false }
	var data []byte
	var err error
	hangtest.Within(t, "ReadFile through a link", func() { data, err = w.ReadFile(p("config.toml"), 1<<20) })
	if err != nil || string(data) != "x = 1\n" {
		t.Fatalf("through a link: %q, %v", data, err)
	}
	for _, tc := range []struct {
		path, want string
		limit      int64
	}{
		{p("fifo.toml"), "is not a regular file (a FIFO)", 1 << 20},
		{p("zero.toml"), "is not a regular file (a character device)", 1 << 20},
		{p("real.toml"), "is larger than 4 bytes", 4},
	} {
		hangtest.Within(t, "ReadFile("+tc.path+")", func() { data, err = w.ReadFile(tc.path, tc.limit) })
		var re *RefusedError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %q, %v; want %q", tc.path, data, err, tc.want)
		}
	}
}

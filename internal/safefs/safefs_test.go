package safefs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// victim is a file and a directory outside the place under test, which a
// planted link points at; they must come out of every operation unchanged.
type victim struct {
	file, dir string
	content   string
	mode      os.FileMode
}

func newVictim(t *testing.T) victim {
	t.Helper()
	root := t.TempDir()
	v := victim{file: filepath.Join(root, "important.txt"), dir: filepath.Join(root, "precious"), content: "do not touch\n", mode: 0o640}
	if err := os.WriteFile(v.file, []byte(v.content), v.mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(v.file, v.mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(v.dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(v.dir, "keep"), []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	return v
}

// check fails the test unless the victim's file has its content, size and
// mode, and its directory holds exactly its one file.
func (v victim) check(t *testing.T) {
	t.Helper()
	fi, err := os.Lstat(v.file)
	if err != nil {
		t.Fatalf("the victim file is gone: %v", err)
	}
	b, _ := os.ReadFile(v.file)
	if string(b) != v.content || fi.Size() != int64(len(v.content)) || fi.Mode() != v.mode {
		t.Fatalf("the victim file changed: %q, size %d, mode %v (want %q, %d, %v)", b, fi.Size(), fi.Mode(), v.content, len(v.content), v.mode)
	}
	entries, err := os.ReadDir(v.dir)
	if err != nil || len(entries) != 1 || entries[0].Name() != "keep" {
		t.Fatalf("the victim directory changed: %v %v", entries, err)
	}
	if fi, err := os.Lstat(v.dir); err != nil || fi.Mode() != os.ModeDir|0o750 {
		t.Fatalf("the victim directory's mode changed: %v %v", fi, err)
	}
}

func openTemp(t *testing.T) (*Dir, string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, root
}

// plants are the things a call can leave where brig expects its own file
// or directory.
func plants(v victim) map[string]func(t *testing.T, p string) {
	return map[string]func(t *testing.T, p string){
		"symlink to a file":      func(t *testing.T, p string) { must(t, os.Symlink(v.file, p)) },
		"symlink to a directory": func(t *testing.T, p string) { must(t, os.Symlink(v.dir, p)) },
		"dangling symlink":       func(t *testing.T, p string) { must(t, os.Symlink(filepath.Join(v.dir, "new"), p)) },
		"hard link":              func(t *testing.T, p string) { must(t, os.Link(v.file, p)) },
		"fifo":                   func(t *testing.T, p string) { must(t, unix.Mkfifo(p, 0o600)) },
		"regular file":           func(t *testing.T, p string) { must(t, os.WriteFile(p, []byte("planted"), 0o644)) },
		"directory with a link inside": func(t *testing.T, p string) {
			must(t, os.Mkdir(p, 0o755))
			must(t, os.Symlink(v.dir, filepath.Join(p, "inner")))
			must(t, os.Symlink(v.file, filepath.Join(p, "file")))
		},
		"unreadable directory": func(t *testing.T, p string) {
			must(t, os.MkdirAll(filepath.Join(p, "deep"), 0o755))
			must(t, os.Chmod(filepath.Join(p, "deep"), 0))
			must(t, os.Chmod(p, 0))
		},
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestWriteNewReplacesWhatWasPlanted(t *testing.T) {
	for name, plant := range plants(newVictim(t)) {
		t.Run(name, func(t *testing.T) {
			v := newVictim(t)
			d, root := openTemp(t)
			plant(t, filepath.Join(root, "npmrc"))
			if err := d.WriteNew("npmrc", []byte("fresh"), 0o600); err != nil {
				t.Fatalf("WriteNew over a %s: %v", name, err)
			}
			v.check(t)
			fi, err := os.Lstat(filepath.Join(root, "npmrc"))
			if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
				t.Fatalf("npmrc is %v (%v), want a regular file of mode 0600", fi, err)
			}
			if b, _ := os.ReadFile(filepath.Join(root, "npmrc")); string(b) != "fresh" {
				t.Fatalf("npmrc holds %q", b)
			}
		})
	}
}

func TestMkdirReplaceReplacesWhatWasPlanted(t *testing.T) {
	for name, plant := range plants(newVictim(t)) {
		t.Run(name, func(t *testing.T) {
			v := newVictim(t)
			d, root := openTemp(t)
			plant(t, filepath.Join(root, "go-build"))
			sub, replaced, err := d.MkdirReplace("go-build", 0o700)
			if err != nil {
				t.Fatalf("MkdirReplace over a %s: %v", name, err)
			}
			defer sub.Close()
			isDir := name == "directory with a link inside" || name == "unreadable directory"
			if (replaced == "") != isDir {
				t.Errorf("replaced=%q for a %s", replaced, name)
			}
			// Something made through the opened directory lands in it.
			if err := sub.WriteNew("x", []byte("y"), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(filepath.Join(root, "go-build", "x")); err != nil {
				t.Fatalf("the file made through the directory is not there: %v", err)
			}
			v.check(t)
			must(t, d.RemoveAll("go-build")) // what the test's cleanup cannot remove as an ordinary user
		})
	}
}

func TestRemoveAllFollowsNothing(t *testing.T) {
	for name, plant := range plants(newVictim(t)) {
		t.Run(name, func(t *testing.T) {
			v := newVictim(t)
			d, root := openTemp(t)
			plant(t, filepath.Join(root, "stale"))
			if err := d.RemoveAll("stale"); err != nil {
				t.Fatalf("RemoveAll of a %s: %v", name, err)
			}
			if _, err := os.Lstat(filepath.Join(root, "stale")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("still there: %v", err)
			}
			v.check(t)
		})
	}
	d, _ := openTemp(t)
	if err := d.RemoveAll("missing"); err != nil {
		t.Fatalf("a missing name: %v", err)
	}
}

func TestOpenRefusesLinks(t *testing.T) {
	v := newVictim(t)
	d, root := openTemp(t)
	must(t, os.Symlink(v.dir, filepath.Join(root, "link")))
	must(t, os.MkdirAll(filepath.Join(root, "a", "b"), 0o755))
	if _, err := Open(filepath.Join(root, "link")); !errors.Is(err, unix.ELOOP) {
		t.Errorf("Open through a symlink: %v, want ELOOP", err)
	}
	if _, err := Open(root + "/link/../a"); !errors.Is(err, unix.ELOOP) {
		t.Errorf("Open through a symlink and ..: %v, want ELOOP", err)
	}
	if _, err := d.Sub("link"); !errors.Is(err, unix.ELOOP) {
		t.Errorf("Sub of a symlink: %v, want ELOOP", err)
	}
	if _, err := d.Sub("../" + filepath.Base(root)); !errors.Is(err, unix.EXDEV) {
		t.Errorf("Sub leaving the directory: %v, want EXDEV", err)
	}
	sub, err := d.Sub("a/b")
	if err != nil {
		t.Fatalf("Sub of a real path: %v", err)
	}
	sub.Close()
	for _, bad := range []string{"", ".", "..", "a/b"} {
		if err := d.WriteNew(bad, nil, 0o600); err == nil {
			t.Errorf("WriteNew(%q) accepted a name that is not one element", bad)
		}
	}
	if _, err := Open("relative"); err == nil {
		t.Error("Open accepted a relative path")
	}
}

func TestRenameNeverReplaces(t *testing.T) {
	d, root := openTemp(t)
	q, qroot := openTemp(t)
	must(t, os.Symlink("/etc/passwd", filepath.Join(root, "hooks")))
	must(t, os.WriteFile(filepath.Join(qroot, "taken"), []byte("old"), 0o600))
	must(t, os.WriteFile(filepath.Join(root, "taken"), []byte("new"), 0o600))
	if err := d.Rename("hooks", q, "hooks"); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(filepath.Join(qroot, "hooks")); err != nil || target != "/etc/passwd" {
		t.Fatalf("the link was not moved as a link: %q %v", target, err)
	}
	if err := d.Rename("taken", q, "taken"); !errors.Is(err, unix.EEXIST) {
		t.Fatalf("Rename over an existing file: %v, want EEXIST", err)
	}
	if b, _ := os.ReadFile(filepath.Join(qroot, "taken")); string(b) != "old" {
		t.Fatalf("the existing file was replaced: %q", b)
	}
}

func TestRemoveAllUnder(t *testing.T) {
	v := newVictim(t)
	_, root := openTemp(t)
	tmp := filepath.Join(root, "brig-call-1")
	must(t, os.Mkdir(tmp, 0o700))
	must(t, os.Symlink(v.dir, filepath.Join(tmp, "d")))
	must(t, os.Symlink(v.file, filepath.Join(tmp, "f")))
	if err := RemoveAllUnder(tmp); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("still there: %v", err)
	}
	v.check(t)
	if err := RemoveAllUnder(filepath.Join(root, "missing", "x")); err != nil {
		t.Fatalf("a missing parent: %v", err)
	}
}

// TestKeepOrWriteNew checks that a file that already is exactly brig's is
// kept (the same inode: nothing was written), and that every planted thing
// and every near miss — the same size with other bytes, another mode, a
// setuid bit, a second link, a byte more — is replaced as WriteNew
// replaces it, leaving what a link points at unchanged.
func TestKeepOrWriteNew(t *testing.T) {
	ino := func(t *testing.T, p string) uint64 {
		t.Helper()
		var st unix.Stat_t
		must(t, unix.Lstat(p, &st))
		return st.Ino
	}
	for _, data := range []string{"", "# brig\n"} {
		t.Run("kept/"+data, func(t *testing.T) {
			d, root := openTemp(t)
			p := filepath.Join(root, "go.env")
			wrote, err := d.KeepOrWriteNew("go.env", []byte(data), 0o600)
			if err != nil || !wrote {
				t.Fatalf("a missing file: wrote %v, %v; want it written", wrote, err)
			}
			first := ino(t, p)
			wrote, err = d.KeepOrWriteNew("go.env", []byte(data), 0o600)
			if err != nil || wrote || ino(t, p) != first {
				t.Fatalf("an intact file: wrote %v, %v, inode %d → %d; want it kept", wrote, err, first, ino(t, p))
			}
		})
	}
	nearMisses := map[string]func(t *testing.T, p string){
		"same size, other bytes": func(t *testing.T, p string) { must(t, os.WriteFile(p, []byte("# evil\n"), 0o600)) },
		"a byte more":            func(t *testing.T, p string) { must(t, os.WriteFile(p, []byte("# brig\n\n"), 0o600)) },
		"empty":                  func(t *testing.T, p string) { must(t, os.WriteFile(p, nil, 0o600)) },
		"mode 0644": func(t *testing.T, p string) {
			must(t, os.WriteFile(p, []byte("# brig\n"), 0o600))
			must(t, os.Chmod(p, 0o644))
		},
		"setuid": func(t *testing.T, p string) {
			must(t, os.WriteFile(p, []byte("# brig\n"), 0o600))
			must(t, unix.Chmod(p, 0o4600))
		},
		"a second link": func(t *testing.T, p string) {
			must(t, os.WriteFile(p, []byte("# brig\n"), 0o600))
			must(t, os.Link(p, p+".other"))
		},
	}
	for name, plant := range plants(newVictim(t)) {
		nearMisses[name] = plant
	}
	for name, plant := range nearMisses {
		t.Run("replaced/"+name, func(t *testing.T) {
			v := newVictim(t)
			d, root := openTemp(t)
			p := filepath.Join(root, "go.env")
			plant(t, p)
			wrote, err := d.KeepOrWriteNew("go.env", []byte("# brig\n"), 0o600)
			if err != nil || !wrote {
				t.Fatalf("over %s: wrote %v, %v; want it written anew", name, wrote, err)
			}
			v.check(t)
			var st unix.Stat_t
			must(t, unix.Lstat(p, &st))
			if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&0o7777 != 0o600 || st.Nlink != 1 {
				t.Fatalf("go.env is mode %o with %d links, want a regular file of mode 0600 with one", st.Mode, st.Nlink)
			}
			if b, _ := os.ReadFile(p); string(b) != "# brig\n" {
				t.Fatalf("go.env holds %q", b)
			}
		})
	}
}

// TestMkdirReplaceSetsTheMode checks that an existing directory whose mode
// a call changed gets brig's back (the chmod is skipped only when the mode
// already is brig's), setuid, setgid and sticky bits included.
func TestMkdirReplaceSetsTheMode(t *testing.T) {
	for _, mode := range []uint32{0o700, 0o755, 0o000, 0o1700, 0o2700} {
		d, root := openTemp(t)
		p := filepath.Join(root, "go-build")
		must(t, os.Mkdir(p, 0o700))
		must(t, unix.Chmod(p, mode))
		sub, replaced, err := d.MkdirReplace("go-build", 0o700)
		if err != nil || replaced != "" {
			t.Fatalf("mode %o: %v, replaced %q", mode, err, replaced)
		}
		sub.Close()
		var st unix.Stat_t
		must(t, unix.Lstat(p, &st))
		if st.Mode&0o7777 != 0o700 {
			t.Fatalf("a directory of mode %o came out as %o, want 0700", mode, st.Mode&0o7777)
		}
	}
}

func TestExchangeSwapsLinksAsLinks(t *testing.T) {
	d, root := openTemp(t)
	must(t, os.Symlink("/etc/passwd", filepath.Join(root, "a")))
	must(t, os.WriteFile(filepath.Join(root, "b"), []byte("b"), 0o600))
	if err := d.Exchange("a", "b"); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(filepath.Join(root, "b")); err != nil || target != "/etc/passwd" {
		t.Fatalf("b after the exchange: %q %v, want the link", target, err)
	}
	if got, err := os.ReadFile(filepath.Join(root, "a")); err != nil || string(got) != "b" {
		t.Fatalf("a after the exchange: %q %v, want the file", got, err)
	}
	if err := d.Exchange("a", "missing"); !errors.Is(err, unix.ENOENT) {
		t.Fatalf("Exchange with a missing name: %v, want ENOENT", err)
	}
	if err := d.Exchange("a", "x/y"); err == nil {
		t.Fatal("Exchange accepted a name that is not one element")
	}
}

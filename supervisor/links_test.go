package supervisor

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"brig/internal/safefs"
	"brig/internal/unprivtest"
)

func inode(t *testing.T, p string) (uint64, uint64) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino, uint64(st.Nlink)
}

// TestSharedFilesGetTheirOwnCopies: a workspace file that is a hard link
// to a file outside (a local clone's object, say) is given its own copy
// before the first call that may write, with the same bytes, mode and
// times; the file outside keeps its inode and bytes. Controls: a pair of
// names linked to each other inside the workspace, a symbolic link to the
// outside file and a file with one link are left as they were; a copy a
// stopped run left is removed; the note is given once.
func TestSharedFilesGetTheirOwnCopies(t *testing.T) {
	root := t.TempDir()
	ws, outside := filepath.Join(root, "ws"), filepath.Join(root, "outside")
	for _, d := range []string{ws + "/.git/objects/ab", ws + "/sub", outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string, mode os.FileMode) {
		if err := os.WriteFile(p, []byte(s), mode); err != nil {
			t.Fatal(err)
		}
	}
	link := func(from, to string) {
		if err := os.Link(from, to); err != nil {
			t.Fatal(err)
		}
	}
	write(outside+"/obj", "object bytes", 0o444)
	link(outside+"/obj", ws+"/.git/objects/ab/cdef")
	write(outside+"/rc", "rc bytes", 0o644)
	link(outside+"/rc", ws+"/sub/rc")
	write(ws+"/one", "inside", 0o644)
	link(ws+"/one", ws+"/two") // both names inside
	write(ws+"/plain", "plain", 0o644)
	if err := os.Symlink(outside+"/rc", ws+"/sym"); err != nil {
		t.Fatal(err)
	}
	write(ws+"/.brig-own-0123456789abcdef", "left by a stopped run", 0o600)
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(ws+"/.git/objects/ab/cdef", old, old); err != nil {
		t.Fatal(err)
	}
	objIno, _ := inode(t, outside+"/obj")
	rcIno, _ := inode(t, outside+"/rc")
	oneIno, _ := inode(t, ws+"/one")

	var l sharedLinks
	n, sample, err := l.ensure(context.Background(), ws)
	if err != nil || n != 2 || !strings.HasPrefix(sample, ws) {
		t.Fatalf("ensure: %d %q %v; want the two shared files copied", n, sample, err)
	}
	for _, c := range []struct{ in, out, want string }{{ws + "/.git/objects/ab/cdef", outside + "/obj", "object bytes"}, {ws + "/sub/rc", outside + "/rc", "rc bytes"}} {
		in, nin := inode(t, c.in)
		out, nout := inode(t, c.out)
		if in == out || nin != 1 || nout != 1 {
			t.Errorf("%s still shares %s (inodes %d %d, links %d %d)", c.in, c.out, in, out, nin, nout)
		}
		for _, p := range []string{c.in, c.out} {
			if b, _ := os.ReadFile(p); !bytes.Equal(b, []byte(c.want)) {
				t.Errorf("%s holds %q, want %q", p, b, c.want)
			}
		}
	}
	if o, _ := inode(t, outside+"/obj"); o != objIno {
		t.Error("the file outside was replaced, not left")
	}
	if o, _ := inode(t, outside+"/rc"); o != rcIno {
		t.Error("the file outside was replaced, not left")
	}
	fi, err := os.Stat(ws + "/.git/objects/ab/cdef")
	if err != nil || fi.Mode().Perm() != 0o444 || !fi.ModTime().Equal(old) {
		t.Errorf("the copy's mode or time: %v %v %v", fi.Mode(), fi.ModTime(), err)
	}
	if a, na := inode(t, ws+"/one"); a != oneIno || na != 2 {
		t.Error("a pair linked only inside the workspace was copied")
	}
	if target, err := os.Readlink(ws + "/sym"); err != nil || target != outside+"/rc" {
		t.Errorf("the symbolic link: %q %v", target, err)
	}
	if _, err := os.Lstat(ws + "/.brig-own-0123456789abcdef"); !os.IsNotExist(err) {
		t.Errorf("the copy a stopped run left is still there: %v", err)
	}
	if n, _, err := l.ensure(context.Background(), ws); n != 0 || err != nil {
		t.Errorf("the second call: %d %v; want nothing more to say", n, err)
	}
}

// envLinksUnpriv marks the re-executed unprivileged pass of
// TestSharedFilesGetTheirOwnCopies.
const envLinksUnpriv = "BRIG_LINKS_UNPRIV"

// TestSharedFilesUnprivileged runs TestSharedFilesGetTheirOwnCopies again
// as uid/gid 65534 (setpriv): an ordinary user's read-only object file,
// which root could have opened for writing anyway, is copied just the same.
func TestSharedFilesUnprivileged(t *testing.T) {
	out := unprivtest.Rerun(t, envLinksUnpriv, "^TestSharedFiles(GetTheirOwnCopies|Unlistable)$")
	if !bytes.Contains(out, []byte("--- PASS: TestSharedFilesGetTheirOwnCopies")) || !bytes.Contains(out, []byte("--- PASS: TestSharedFilesUnlistable")) {
		t.Fatalf("the unprivileged pass did not run the copy test:\n%s", out)
	}
}

// BenchmarkFindShared is the walk before a session's first call that may
// write, in a workspace of 10,000 files in 100 directories with none
// shared: what that call waits for once.
func BenchmarkFindShared(b *testing.B) {
	ws := b.TempDir()
	for d := range 100 {
		dir := filepath.Join(ws, fmt.Sprintf("d%02d", d))
		if err := os.Mkdir(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.go", f)), []byte("package x\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	root, err := safefs.Open(ws)
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	for b.Loop() {
		shared, err := findShared(context.Background(), root)
		if err != nil || len(shared) != 0 {
			b.Fatalf("%d shared, %v", len(shared), err)
		}
	}
}

// TestSharedFilesFoundAhead: the walk started at the session's start is
// the one the first writing call uses; a shared file it found that is
// gone by then is passed over, not a reason to refuse the call, and the
// others still get their copies.
func TestSharedFilesFoundAhead(t *testing.T) {
	root := t.TempDir()
	ws, outside := filepath.Join(root, "ws"), filepath.Join(root, "outside")
	for _, d := range []string{ws, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(outside, n), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(filepath.Join(outside, n), filepath.Join(ws, n)); err != nil {
			t.Fatal(err)
		}
	}
	var l sharedLinks
	l.prepare(ws)
	<-l.entry(ws).ahead
	if found := l.entry(ws).found; len(found) != 2 {
		t.Fatalf("the walk ahead found %d shared files, want 2", len(found))
	}
	if err := os.Remove(filepath.Join(ws, "a")); err != nil {
		t.Fatal(err)
	}
	n, _, err := l.ensure(context.Background(), ws)
	if err != nil || n != 1 {
		t.Fatalf("ensure: %d %v; want b copied and a passed over", n, err)
	}
	if _, nl := inode(t, filepath.Join(ws, "b")); nl != 1 {
		t.Errorf("b still has %d links", nl)
	}
}

// TestSharedFilesUnlistable (the unprivileged pass only): a directory of
// brig's user's own that it cannot list (mode 000) could hide a shared
// file a call opens up with chmod; the walk refuses with what to do,
// rather than pass it over.
func TestSharedFilesUnlistable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root lists any directory: TestSharedFilesUnprivileged runs this as a user")
	}
	ws := t.TempDir()
	closed := filepath.Join(ws, "closed")
	if err := os.Mkdir(closed, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(closed, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(closed, 0o755) })
	var l sharedLinks
	_, _, err := l.ensure(context.Background(), ws)
	if err == nil || !strings.Contains(err.Error(), "cannot be listed: make it readable (chmod u+rx)") {
		t.Fatalf("ensure: %v; want a refusal that says what to do", err)
	}
}

package jail

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// names are protected-path-like names under dir.
func names(dir string, n int) []string {
	var ps []string
	for i := range n {
		ps = append(ps, filepath.Join(dir, fmt.Sprintf("hook-%d", i)))
	}
	return ps
}

// TestAbsenceAgreesWithLstat: whatever a directory holds under the names
// asked about (a file, a directory, a link — dangling or not —, a FIFO),
// a path reported absent is one lstat does not find, and every path lstat
// does not find in a directory that was read is reported absent.
func TestAbsenceAgreesWithLstat(t *testing.T) {
	dir := t.TempDir()
	ps := names(dir, 12)
	mustWrite(t, ps[1], "x")
	if err := os.Mkdir(ps[3], 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/nonexistent", ps[5]); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ps[1], ps[7]); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(ps[9], 0o644); err != nil {
		t.Fatal(err)
	}
	a := ReadAbsence(ps)
	for _, p := range ps {
		_, err := os.Lstat(p)
		missing := errors.Is(err, fs.ErrNotExist)
		if got := a.Absent(p); got != missing {
			t.Errorf("%s: Absent %v, but lstat says missing=%v (%v)", filepath.Base(p), got, missing, err)
		}
	}
}

// TestAbsenceLeavesTheRestToLstat: only a directory read whole answers;
// a path is never reported absent when its directory was not read — too
// few of the paths in it, too many entries, not a directory (a file, a
// FIFO, which must not stall the reading either) — and a directory that
// does not exist makes every path in it absent, as lstat would.
func TestAbsenceLeavesTheRestToLstat(t *testing.T) {
	root := t.TempDir()
	few := filepath.Join(root, "few")
	big := filepath.Join(root, "big")
	file := filepath.Join(root, "file")
	fifo := filepath.Join(root, "fifo")
	gone := filepath.Join(root, "gone")
	for _, d := range []string{few, big} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := range absenceMinShared * absenceMaxNames * 2 {
		mustWrite(t, filepath.Join(big, fmt.Sprintf("other-%d", i)), "")
	}
	mustWrite(t, file, "")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	var ps []string
	ps = append(ps, names(few, absenceMinShared-1)...)
	ps = append(ps, names(big, absenceMinShared)...)
	ps = append(ps, names(file, absenceMinShared)...)
	ps = append(ps, names(fifo, absenceMinShared)...)
	a := ReadAbsence(append(ps, names(gone, absenceMinShared)...))
	for _, p := range ps {
		if a.Absent(p) {
			t.Errorf("%s reported absent, though its directory was not read", p)
		}
	}
	for _, p := range names(gone, absenceMinShared) {
		if !a.Absent(p) {
			t.Errorf("%s not reported absent, though its directory does not exist", p)
		}
	}
	// The control: the same number of paths in a small directory are
	// answered from its reading.
	small := names(few, absenceMinShared)
	if a := ReadAbsence(small); !a.Absent(small[0]) {
		t.Errorf("%s not reported absent from a directory read whole", small[0])
	}
}

// TestAbsenceFollowsALinkOnTheWay: a directory reached through a link is
// read where the link leads, as lstat of a path under it resolves it.
func TestAbsenceFollowsALinkOnTheWay(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(real, "hook-0"), "")
	ps := names(filepath.Join(root, "link"), absenceMinShared)
	a := ReadAbsence(ps)
	if a.Absent(ps[0]) {
		t.Errorf("%s (a file through the link) reported absent", ps[0])
	}
	if !a.Absent(ps[1]) {
		t.Errorf("%s not reported absent", ps[1])
	}
}

func mustWrite(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

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
	dir := readableTempDir(t)
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
	root := readableTempDir(t)
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
	root := readableTempDir(t)
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

// readableTempDir is a temporary directory that ReadAbsence reads (its
// filesystem is known to match names byte for byte), or skips the test.
func readableTempDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if !dirCaseSensitive(fd) {
		t.Skipf("%s is on a filesystem whose directories ReadAbsence leaves to lstat (case-insensitivity not ruled out)", dir)
	}
	return dir
}

// TestAbsenceReadsOnlyCaseSensitiveDirectories: a listing stands for a
// lookup only where names match byte for byte. A casefolded directory
// (chattr +F on ext4, f2fs, tmpfs), one whose flags cannot be read, and
// any filesystem not known to be case-sensitive (FAT, NTFS, XFS — which
// has a case-insensitive format —, FUSE, network shares, overlays) are
// left to lstat; this kernel has no casefold support to make one, so the
// decision is checked by table, and on a real directory of each kind
// that is here.
func TestAbsenceReadsOnlyCaseSensitiveDirectories(t *testing.T) {
	const (
		msdos   = 0x4d44
		xfs     = 0x58465342
		fuse    = 0x65735546
		smb2    = 0xfe534d42
		overlay = 0x794c7630
	)
	for _, c := range []struct {
		name   string
		fsType int64
		flags  uint32
		err    error
		want   bool
	}{
		{"ext4", unix.EXT4_SUPER_MAGIC, 0x80000, nil, true},
		{"ext4 casefolded", unix.EXT4_SUPER_MAGIC, 0x80000 | fsCasefoldFlag, nil, false},
		{"f2fs casefolded", unix.F2FS_SUPER_MAGIC, fsCasefoldFlag, nil, false},
		{"tmpfs", unix.TMPFS_MAGIC, 0, nil, true},
		{"tmpfs casefolded", unix.TMPFS_MAGIC, fsCasefoldFlag, nil, false},
		{"tmpfs without inode flags (before 6.0)", unix.TMPFS_MAGIC, 0, unix.ENOTTY, false},
		{"btrfs", unix.BTRFS_SUPER_MAGIC, 0, unix.ENOTTY, true},
		{"vfat", msdos, 0, nil, false},
		{"xfs", xfs, 0, nil, false},
		{"fuse", fuse, 0, nil, false},
		{"smb", smb2, 0, nil, false},
		{"overlay", overlay, 0, nil, false},
		{"ramfs", unix.RAMFS_MAGIC, 0, unix.ENOTTY, false},
	} {
		if got := caseSensitive(c.fsType, c.flags, c.err); got != c.want {
			t.Errorf("%s: caseSensitive = %v, want %v", c.name, got, c.want)
		}
	}
	// /proc is none of the known ones: five missing names in one of its
	// directories are each left to lstat.
	ps := names("/proc/self", absenceMinShared)
	a := ReadAbsence(ps)
	for _, p := range ps {
		if a.Absent(p) {
			t.Errorf("%s reported absent from a listing of a procfs directory", p)
		}
	}
	// The control: the same in a temporary directory is read.
	ps = names(readableTempDir(t), absenceMinShared)
	if !ReadAbsence(ps).Absent(ps[0]) {
		t.Errorf("%s not reported absent from a directory read whole", ps[0])
	}
}

func mustWrite(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

package jailexe

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// keep returns the program base (data, whose SHA-256 the build declared
// as sum) from the directory dir, where it is kept between runs: opened
// read-only at a descriptor numbered highFD or above, close-on-exec. A
// file already there serves when it passes keptFile's checks; otherwise
// it is written anew. It fails, and the caller writes a memfd instead,
// when dir cannot be made or opened, is not this user's alone, or lies on
// a file system mounted noexec, or when the write fails.
//
// Everything is reached from one descriptor of dir, opened without
// following a link and checked first, so nothing in the path after that
// check decides which file is read; and what is executed is the file
// checked, through its descriptor.
func keep(dir, base, sum, data string) (*os.File, error) {
	if !isSum(sum) {
		return nil, fmt.Errorf("no SHA-256 declared for %s", base)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	defer unix.Close(dfd)
	if err := keepable(dfd, dir); err != nil {
		return nil, err
	}
	name := base + "-" + sum
	if f, err := openKept(dfd, name, len(data)); err == nil {
		return f, nil
	}
	if err := writeKept(dfd, base, name, data); err != nil {
		return nil, fmt.Errorf("write %s: %w", name, err)
	}
	return openKept(dfd, name, len(data))
}

// openKept opens the kept program name in the directory dfd when it
// passes keptFile's checks, at a high close-on-exec descriptor.
func openKept(dfd int, name string, size int) (*os.File, error) {
	// O_NONBLOCK: a FIFO there must fail the checks, not hang the open.
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := keptFile(fd, size); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	high, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, highFD)
	unix.Close(fd)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(high), name), nil
}

// keptFile checks a kept program: a regular file of this user's that no
// one else can write, executable by its owner, of the size the build
// embedded. (What is in it is the build's, by its name: only this user
// writes in the directory, and always a whole, synced file.)
func keptFile(fd, size int) error {
	if err := ownedAlone(fd, unix.S_IFREG); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&0o100 == 0 {
		return errors.New("not executable by its owner")
	}
	if st.Size != int64(size) {
		return fmt.Errorf("%d bytes, not the %d built", st.Size, size)
	}
	return nil
}

// ownedAlone checks that fd is of the file type typ (unix.S_IFDIR,
// unix.S_IFREG), owned by this process's user and writable by no one
// else.
func ownedAlone(fd int, typ uint32) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	switch {
	case st.Mode&unix.S_IFMT != typ:
		return fmt.Errorf("not a %s", map[uint32]string{unix.S_IFDIR: "directory", unix.S_IFREG: "regular file"}[typ])
	case int(st.Uid) != os.Geteuid():
		return fmt.Errorf("owned by uid %d, not this user (%d)", st.Uid, os.Geteuid())
	case st.Mode&0o022 != 0:
		return fmt.Errorf("writable by others (mode %#o)", st.Mode&0o7777)
	}
	return nil
}

// keepable checks that the directory dfd (named dir) may hold programs:
// this user's alone, and not on a file system mounted noexec.
func keepable(dfd int, dir string) error {
	if err := ownedAlone(dfd, unix.S_IFDIR); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	var fs unix.Statfs_t
	if err := unix.Fstatfs(dfd, &fs); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if fs.Flags&unix.ST_NOEXEC != 0 {
		return fmt.Errorf("%s is on a file system mounted noexec", dir)
	}
	return nil
}

// Where says, without writing anything, where this build's jail programs
// run from: "" when it carries none (brig re-executes itself); kept in
// dir (true), or, with the reason, written into memory at every start
// (false). A dir not made yet counts as kept: the first run makes it.
func Where(dir string) (carried, kept bool, why string) {
	if Sum == "" || InitSum == "" || embedded[workerName] == "" {
		return false, false, "this build carries no jail programs: each call re-executes brig itself (build with make build)"
	}
	if dir == "" {
		return true, false, "no home directory to keep them in"
	}
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		// Made by the first run, on the file system of its nearest
		// existing parent.
		parent := filepath.Dir(dir)
		for {
			var fs unix.Statfs_t
			err := unix.Statfs(parent, &fs)
			if err == nil && fs.Flags&unix.ST_NOEXEC != 0 {
				return true, false, fmt.Sprintf("%s would be on a file system mounted noexec (%s)", dir, parent)
			}
			if !errors.Is(err, unix.ENOENT) || parent == filepath.Dir(parent) {
				break
			}
			parent = filepath.Dir(parent)
		}
		return true, true, "the first run writes them into " + dir
	}
	if err != nil {
		return true, false, fmt.Sprintf("open %s: %v", dir, err)
	}
	defer unix.Close(dfd)
	if err := keepable(dfd, dir); err != nil {
		return true, false, err.Error()
	}
	return true, true, "kept in " + dir
}

// writeKept writes data as name in the directory dfd: into an unnamed
// file (O_TMPFILE), synced, then linked in under name, so the name never
// holds a partial program, even after a crash. A file already under name
// (one that failed keptFile's checks) is removed first; another brig
// that links the same program in at the same moment wins, which is as
// good. Other versions of base (names with other sums) are removed: a
// build keeps only its own. The file is mode 0500: in a call's user
// namespace this user is the owner, which is all the exec needs.
func writeKept(dfd int, base, name, data string) error {
	fd, err := unix.Openat(dfd, ".", unix.O_WRONLY|unix.O_TMPFILE|unix.O_CLOEXEC, 0o500)
	if err != nil {
		return fmt.Errorf("an unnamed file: %w", err)
	}
	f := os.NewFile(uintptr(fd), name)
	err = copyOut(f, data)
	if err == nil {
		if err = unix.Fdatasync(fd); err != nil {
			err = fmt.Errorf("sync: %w", err)
		}
	}
	// The name appears only once this process holds no descriptor that
	// may write the file: another brig starting beside this one may exec
	// it as soon as it is there, and an exec is refused while the file is
	// open for writing (ETXTBSY). It is linked in through a read-only
	// descriptor of the unnamed file.
	ro := -1
	if err == nil {
		if ro, err = unix.Open("/proc/self/fd/"+strconv.Itoa(fd), unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
			err = fmt.Errorf("reopen it read-only: %w", err)
		}
	}
	f.Close()
	if err != nil {
		return err
	}
	defer unix.Close(ro)
	if err := unix.Unlinkat(dfd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("remove the file there: %w", err)
	}
	beforeLink(ro)
	// linkat with AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; through
	// /proc/self/fd it needs nothing.
	err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(ro), dfd, name, unix.AT_SYMLINK_FOLLOW)
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("link it in: %w", err)
	}
	removeOtherVersions(dfd, base, name)
	return nil
}

// beforeLink is called with the read-only descriptor of a program about
// to be linked in under its name (a test looks then for writers).
var beforeLink = func(ro int) {}

// removeOtherVersions removes the kept programs named base-<sum> in the
// directory dfd but name: other builds' copies. A brig of another build
// that still runs keeps its open descriptor, and writes its own again
// when it next starts.
func removeOtherVersions(dfd int, base, name string) {
	d, err := unix.Openat(dfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(d), "programs")
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return
	}
	for _, n := range names {
		if s, ok := strings.CutPrefix(n, base+"-"); ok && n != name && isSum(s) {
			_ = unix.Unlinkat(dfd, n, 0)
		}
	}
}

// isSum reports whether s is a SHA-256 in lower-case hex, as build.sh
// declares them and kept programs are named.
func isSum(s string) bool { return len(s) == 64 && strings.Trim(s, "0123456789abcdef") == "" }

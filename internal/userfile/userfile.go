// Package userfile reads the files that decide what brig allows — its
// global config, the user's rules for a workspace, the trust stores, the
// credentials — only when no one but the user can have written them: the
// file is the user's and writable by no one else, and so is every
// directory on the way to it (or root's, as /home is). Someone else who can
// write any of them (another local account, a group) could otherwise
// rewrite brig's policy for the user's next session.
//
// A group-writable entry is accepted when the group is the user's own
// private group (the user's primary group, named after the user, with no
// other members: the umask 002 convention of Fedora and others), and a
// writable directory when it is sticky (/tmp, root's or the user's): in
// both cases no one else can change or replace the user's entry.
//
// It must not decide what the files say; its callers parse them.
package userfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Who is the user the checks are for (the process's own, by default).
type Who struct {
	UID, GID int
	// PrivateGroup reports whether gid is the user's private group; nil:
	// read /etc/group.
	PrivateGroup func(gid int) bool
}

// Me is the process's real user.
func Me() Who { return Who{UID: os.Getuid(), GID: os.Getgid()} }

// ReadFile reads the file at path after checking it and the directories on
// the way to it. A missing file is an error wrapping fs.ErrNotExist. The
// file's own check is made on the descriptor that is read, so a file
// swapped in between cannot slip through.
func ReadFile(path string, limit int64) ([]byte, error) { return Me().ReadFile(path, limit) }

// ReadFile is the package's ReadFile for w.
func (w Who) ReadFile(path string, limit int64) ([]byte, error) {
	f, st, err := openRegular(path, true)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := w.checkEntry(path, st, false); err != nil {
		return nil, err
	}
	if err := w.CheckDirs(filepath.Dir(path)); err != nil {
		return nil, err
	}
	return readLimited(f, path, st, limit)
}

// ReadRegular reads a file no one vouches for (a repository's own config,
// which its author wrote): no owner is checked, but it must be a regular
// file itself, not a symbolic link (a link committed to a repository can
// point anywhere: /dev/zero, a FIFO, the user's secrets), and at most limit
// bytes long. It never blocks on opening (a FIFO or a device is refused
// before it is opened) and never takes a controlling terminal. What is
// refused is a *RefusedError naming the file; a missing file is an error
// wrapping fs.ErrNotExist.
func ReadRegular(path string, limit int64) ([]byte, error) {
	f, st, err := openRegular(path, false)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, path, st, limit)
}

// RefusedError is a file that is there but is not read: a link where none
// is followed, something other than a regular file, or a file over the
// limit. Its message names the file and says what to do.
type RefusedError struct {
	Path string
	Why  string // "is not a regular file (a FIFO); …"
}

func (e *RefusedError) Error() string { return e.Path + " " + e.Why }

// openRegular opens the regular file at path (through a final symbolic
// link only when follow) and returns it with its status. It looks before
// it opens, so a FIFO or a device is never opened; the open cannot block
// or take a controlling terminal; and the status is the descriptor's, so
// a file swapped in between is caught.
func openRegular(path string, follow bool) (*os.File, *unix.Stat_t, error) {
	var st unix.Stat_t
	stat, flags := unix.Lstat, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NOFOLLOW
	if follow {
		stat, flags = unix.Stat, flags&^unix.O_NOFOLLOW
	}
	if err := stat(path, &st); err != nil {
		return nil, nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if err := regular(path, &st); err != nil {
		return nil, nil, err
	}
	var fd int
	var err error
	for {
		if fd, err = unix.Open(path, flags, 0); err != unix.EINTR {
			break
		}
	}
	if errors.Is(err, unix.ELOOP) && !follow {
		return nil, nil, &RefusedError{Path: path, Why: whyLink}
	}
	if err != nil {
		return nil, nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	var fst unix.Stat_t
	if err := unix.Fstat(fd, &fst); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if err := regular(path, &fst); err != nil {
		f.Close()
		return nil, nil, err
	}
	if fst.Dev != st.Dev || fst.Ino != st.Ino {
		f.Close()
		return nil, nil, fmt.Errorf("%s was replaced while brig was opening it; try again", path)
	}
	return f, &fst, nil
}

const whyLink = "is a symbolic link; brig does not follow a link to read this file (replace the link with a copy of the file it points to)"

// regular refuses what st says is not a regular file.
func regular(path string, st *unix.Stat_t) error {
	var kind string
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return nil
	case unix.S_IFLNK:
		return &RefusedError{Path: path, Why: whyLink}
	case unix.S_IFDIR:
		kind = "a directory"
	case unix.S_IFIFO:
		kind = "a FIFO"
	case unix.S_IFCHR:
		kind = "a character device"
	case unix.S_IFBLK:
		kind = "a block device"
	case unix.S_IFSOCK:
		kind = "a socket"
	default:
		kind = fmt.Sprintf("mode %o", st.Mode&unix.S_IFMT)
	}
	return &RefusedError{Path: path, Why: "is not a regular file (" + kind + "); brig reads its configuration only from one"}
}

// readLimited reads f, refusing it when it is longer than limit.
func readLimited(f *os.File, path string, st *unix.Stat_t, limit int64) ([]byte, error) {
	tooLarge := &RefusedError{Path: path, Why: fmt.Sprintf("is larger than %s; brig does not read a configuration file that large", sizeText(limit))}
	if st.Size > limit {
		return nil, tooLarge
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge
	}
	return data, nil
}

// sizeText says n bytes the way a person reads it: "4 MiB", "64 KiB", "100 bytes".
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Check checks the file at path (following a link, as reading it would)
// and the directories on the way to it; a missing file is not an error.
func Check(path string) error { return Me().Check(path) }

// Check is the package's Check for w.
func (w Who) Check(path string) error {
	var st unix.Stat_t
	err := unix.Stat(path, &st)
	if errors.Is(err, unix.ENOENT) {
		return w.CheckDirs(filepath.Dir(path))
	}
	if err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if err := w.checkEntry(path, &st, st.Mode&unix.S_IFMT == unix.S_IFDIR); err != nil {
		return err
	}
	return w.CheckDirs(filepath.Dir(path))
}

// CheckDirs checks dir and every directory above it up to /. Directories
// that do not exist (yet) are skipped.
func (w Who) CheckDirs(dir string) error {
	dir = filepath.Clean(dir)
	for {
		var st unix.Stat_t
		if err := unix.Stat(dir, &st); err == nil {
			if err := w.checkEntry(dir, &st, true); err != nil {
				return err
			}
		} else if !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("stat %s: %w", dir, err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil
		}
		dir = parent
	}
}

// Error is a file or directory that someone else can change.
type Error struct {
	Path string
	Why  string // "is owned by uid 1001", "is writable by others (mode 0666)"
	Fix  string // the command that fixes it
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s, so someone other than you could rewrite what brig allows; brig does not read it. Run: %s", e.Path, e.Why, e.Fix)
}

// checkEntry checks one file (dir false) or directory.
func (w Who) checkEntry(path string, st *unix.Stat_t, dir bool) error {
	uid := int(st.Uid)
	perm := st.Mode & 0o7777
	rootsOK := dir // a directory on the way may be root's (/home); the file itself is the user's
	if uid != w.UID && !(rootsOK && uid == 0) {
		return &Error{Path: path, Why: fmt.Sprintf("is owned by uid %d, not by you (uid %d)", uid, w.UID),
			Fix: fmt.Sprintf("chown %d %s (or remove it)", w.UID, path)}
	}
	if dir && perm&unix.S_ISVTX != 0 {
		// Sticky (/tmp): whoever can write it can add entries, but not
		// rename or remove the user's.
		return nil
	}
	if perm&0o002 != 0 {
		return &Error{Path: path, Why: fmt.Sprintf("is writable by everyone (mode %04o)", perm),
			Fix: "chmod o-w " + path}
	}
	if perm&0o020 != 0 && !w.privateGroup(int(st.Gid)) {
		return &Error{Path: path, Why: fmt.Sprintf("is writable by its group (gid %d, mode %04o)", st.Gid, perm),
			Fix: "chmod g-w " + path}
	}
	return nil
}

func (w Who) privateGroup(gid int) bool {
	if gid != w.GID {
		return false
	}
	if w.PrivateGroup != nil {
		return w.PrivateGroup(gid)
	}
	return privateGroupInEtc(w.UID, gid)
}

// privateGroupInEtc reports whether /etc/group's gid is named after the
// user uid and lists no member but that user (a user private group).
func privateGroupInEtc(uid, gid int) bool {
	user := nameOf("/etc/passwd", uid)
	if user == "" {
		return false
	}
	f, err := os.Open("/etc/group")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) < 4 || fields[2] != strconv.Itoa(gid) {
			continue
		}
		if fields[0] != user {
			return false
		}
		for _, m := range strings.Split(fields[3], ",") {
			if m != "" && m != user {
				return false
			}
		}
		return true
	}
	return false
}

// nameOf returns the name of uid in the passwd file at path.
func nameOf(path string, uid int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) >= 3 && fields[2] == strconv.Itoa(uid) {
			return fields[0]
		}
	}
	return ""
}

// IsNotExist reports whether err says the file is missing.
func IsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

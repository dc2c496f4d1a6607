package safefs

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// What restoring a file the way it was needs: its status read without
// following a link, its content read without following a link or blocking
// on a FIFO, and new files, directories and links made exclusively with a
// given owner, mode and times.

// ErrTooLarge is returned by ReadFile for a file longer than its limit.
var ErrTooLarge = errors.New("file larger than the limit")

// Attrs are the owner, permission bits (with setuid, setgid and sticky)
// and times a new entry gets.
type Attrs struct {
	Perm         uint32
	UID, GID     uint32
	Atime, Mtime unix.Timespec
}

// AttrsOf returns the Attrs recorded in st.
func AttrsOf(st *unix.Stat_t) Attrs {
	return Attrs{Perm: st.Mode & 0o7777, UID: st.Uid, GID: st.Gid, Atime: st.Atim, Mtime: st.Mtim}
}

// Stat describes the entry name itself (a link is not followed).
func (d *Dir) Stat(name string) (unix.Stat_t, error) {
	var st unix.Stat_t
	if err := checkName(name); err != nil {
		return st, err
	}
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return st, &os.PathError{Op: "lstat", Path: d.join(name), Err: err}
	}
	return st, nil
}

// StatSelf describes the opened directory itself.
func (d *Dir) StatSelf() (unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return st, &os.PathError{Op: "fstat", Path: d.path, Err: err}
	}
	return st, nil
}

// OpenFile opens the regular file name for reading (not through a link,
// never blocking on a FIFO or a device) and returns it with its status.
func (d *Dir) OpenFile(name string) (*os.File, unix.Stat_t, error) {
	var st unix.Stat_t
	if err := checkName(name); err != nil {
		return nil, st, err
	}
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, st, &os.PathError{Op: "open", Path: d.join(name), Err: err}
	}
	f := os.NewFile(uintptr(fd), d.join(name))
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, st, &os.PathError{Op: "fstat", Path: d.join(name), Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		f.Close()
		return nil, st, &os.PathError{Op: "read", Path: d.join(name), Err: errors.New("not a regular file")}
	}
	return f, st, nil
}

// ReadFile reads the regular file name (not through a link, never blocking
// on a FIFO or a device) and returns its content and status; a file longer
// than limit bytes is an error wrapping ErrTooLarge.
func (d *Dir) ReadFile(name string, limit int64) ([]byte, unix.Stat_t, error) {
	f, st, err := d.OpenFile(name)
	if err != nil {
		return nil, st, err
	}
	defer f.Close()
	if st.Size > limit {
		return nil, st, &os.PathError{Op: "read", Path: d.join(name), Err: ErrTooLarge}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, st, &os.PathError{Op: "read", Path: d.join(name), Err: err}
	}
	if int64(len(data)) > limit {
		return nil, st, &os.PathError{Op: "read", Path: d.join(name), Err: ErrTooLarge}
	}
	return data, st, nil
}

// CreateFile creates name exclusively (it fails if anything is there) as
// a regular file holding data, with the owner, mode and times of a. An
// owner this process may not give (an ordinary user's file given to
// another user) is left as the process's own.
func (d *Dir) CreateFile(name string, data []byte, a Attrs) error {
	if err := checkName(name); err != nil {
		return err
	}
	fd, err := unix.Openat(d.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NOCTTY, 0o600)
	if err != nil {
		return &os.PathError{Op: "create", Path: d.join(name), Err: err}
	}
	f := os.NewFile(uintptr(fd), d.join(name))
	_, werr := f.Write(data)
	aerr := setFdAttrs(fd, a)
	if err := errors.Join(werr, aerr, f.Close()); err != nil {
		return fmt.Errorf("create %s: %w", d.join(name), err)
	}
	return nil
}

// setFdAttrs gives an open file its owner, then its mode (a change of owner
// clears setuid and setgid), then its times.
func setFdAttrs(fd int, a Attrs) error {
	if err := unix.Fchown(fd, int(a.UID), int(a.GID)); err != nil && err != unix.EPERM {
		return fmt.Errorf("fchown: %w", err)
	}
	if err := unix.Fchmod(fd, a.Perm); err != nil {
		return fmt.Errorf("fchmod: %w", err)
	}
	if err := unix.UtimesNanoAt(fd, "", []unix.Timespec{a.Atime, a.Mtime}, unix.AT_EMPTY_PATH); err != nil {
		// Older kernels want the path form.
		if err := unix.UtimesNano(fmt.Sprintf("/proc/self/fd/%d", fd), []unix.Timespec{a.Atime, a.Mtime}); err != nil {
			return fmt.Errorf("set times: %w", err)
		}
	}
	return nil
}

// Mkdir creates the directory name exclusively and opens it. Its mode is
// 0700 until SetAttrs gives it its own (so that nothing else can enter
// it while it is filled).
func (d *Dir) Mkdir(name string) (*Dir, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if err := unix.Mkdirat(d.fd, name, 0o700); err != nil {
		return nil, &os.PathError{Op: "mkdir", Path: d.join(name), Err: err}
	}
	return d.Sub(name)
}

// SetAttrs gives the opened directory itself the owner, mode and times of
// a (through its descriptor: the very directory that was opened).
func (d *Dir) SetAttrs(a Attrs) error {
	self := fmt.Sprintf("/proc/self/fd/%d", d.fd)
	if err := unix.Fchownat(d.fd, "", int(a.UID), int(a.GID), unix.AT_EMPTY_PATH); err != nil && err != unix.EPERM {
		return &os.PathError{Op: "chown", Path: d.path, Err: err}
	}
	if err := unix.Fchmodat(unix.AT_FDCWD, self, a.Perm, 0); err != nil {
		return &os.PathError{Op: "chmod", Path: d.path, Err: err}
	}
	if err := unix.UtimesNano(self, []unix.Timespec{a.Atime, a.Mtime}); err != nil {
		return &os.PathError{Op: "utimes", Path: d.path, Err: err}
	}
	return nil
}

// SymlinkAttrs creates name as a symbolic link to target, with the owner
// and times of a (a link has no mode of its own); it fails if name exists.
func (d *Dir) SymlinkAttrs(target, name string, a Attrs) error {
	if err := d.Symlink(target, name); err != nil {
		return err
	}
	if err := unix.Fchownat(d.fd, name, int(a.UID), int(a.GID), unix.AT_SYMLINK_NOFOLLOW); err != nil && err != unix.EPERM {
		return &os.PathError{Op: "lchown", Path: d.join(name), Err: err}
	}
	if err := unix.UtimesNanoAt(d.fd, name, []unix.Timespec{a.Atime, a.Mtime}, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &os.PathError{Op: "utimes", Path: d.join(name), Err: err}
	}
	return nil
}

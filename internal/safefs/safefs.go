// Package safefs owns the supervisor's file operations in places a jailed
// call can write: the workspace (the sweep after a call, quarantine moves),
// brig's per-workspace toolchain caches, and a call's temporary directory.
//
// Every operation is relative to a directory descriptor that was opened
// without following a symbolic link at any step (openat2 with
// RESOLVE_NO_SYMLINKS, and RESOLVE_BENEATH below an opened directory).
// Names handed to the methods of Dir are single path elements acted on with
// the *at system calls, which never follow a final symbolic link either:
// a link is inspected, removed or renamed as the link it is. Files are
// created exclusively (O_CREAT|O_EXCL), so brig never writes through
// something a call left in its place; whatever has the wrong type is
// removed and replaced, and the caller is told.
//
// It must not decide what is created, removed or moved, nor where: callers
// own the names and the reasons.
package safefs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Dir is an open directory. Operations through it never leave it and never
// follow a symbolic link.
type Dir struct {
	fd   int // O_PATH (O_RDONLY when ListSub opened it)
	path string
}

// Open opens the directory at the absolute path, refusing a symbolic link
// at every step of the path (an error wrapping unix.ELOOP) and anything
// that is not a directory. Callers pass canonical paths (the policy's
// resolved workspace, say), which have no links on the way.
func Open(path string) (*Dir, error) {
	if !filepath.IsAbs(path) {
		return nil, &os.PathError{Op: "open", Path: path, Err: errors.New("not an absolute path")}
	}
	return openat2(unix.AT_FDCWD, path, path, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
}

// OpenResolved resolves the links of path first and opens the result with
// Open. It is for brig's own directories (the cache root, the quarantine),
// which no call can write: links there are the user's own choice (a ~/.cache
// on another disk) and are followed once, here.
func OpenResolved(path string) (*Dir, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	return Open(real)
}

// MkdirAllResolved creates path (and its parents, mode perm) when missing
// and opens it with OpenResolved. Only for brig's own directories, as
// OpenResolved.
func MkdirAllResolved(path string, perm os.FileMode) (*Dir, error) {
	if err := os.MkdirAll(path, perm); err != nil {
		return nil, err
	}
	return OpenResolved(path)
}

// RemoveAllUnder removes the tree at path, which may be written by a call,
// from its parent directory, which must not be (a call's own temporary
// directory under the supervisor's TMPDIR, say). Nothing below the parent
// is followed. A missing path is not an error.
func RemoveAllUnder(path string) error {
	parent, err := OpenResolved(filepath.Dir(path))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer parent.Close()
	return parent.RemoveAll(filepath.Base(path))
}

func openat2(dirfd int, name, display string, resolve uint64) (*Dir, error) {
	fd, err := unix.Openat2(dirfd, name, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: resolve,
	})
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: display, Err: err}
	}
	return &Dir{fd: fd, path: display}, nil
}

// Path is the path the directory was opened at (for messages).
func (d *Dir) Path() string { return d.path }

// Close releases the descriptor.
func (d *Dir) Close() error { return unix.Close(d.fd) }

func (d *Dir) join(name string) string { return filepath.Join(d.path, name) }

// checkName refuses anything but one path element.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.Contains(name, "/") {
		return fmt.Errorf("safefs: %q is not a single path element", name)
	}
	return nil
}

// Sub opens the directory rel (one or more elements, relative) below d,
// refusing symbolic links at every step and any step out of d.
func (d *Dir) Sub(rel string) (*Dir, error) {
	if filepath.IsAbs(rel) {
		return nil, &os.PathError{Op: "open", Path: rel, Err: errors.New("not a relative path")}
	}
	return openat2(d.fd, rel, d.join(rel), unix.RESOLVE_BENEATH|unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
}

// ListSub opens the directory name (one element, not through a link)
// and lists it: the cheapest way through many small directories (an
// object store's fan-out), one open where Sub and Dirents take two.
func (d *Dir) ListSub(name string) (*Dir, []Dirent, error) {
	if err := checkName(name); err != nil {
		return nil, nil, err
	}
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, &os.PathError{Op: "open", Path: d.join(name), Err: err}
	}
	sub := &Dir{fd: fd, path: d.join(name)}
	ents, err := ReadDirents(fd)
	if err != nil {
		sub.Close()
		return nil, nil, &os.PathError{Op: "getdents", Path: sub.path, Err: err}
	}
	return sub, ents, nil
}

// Lstat describes the entry name itself (a link is not followed).
func (d *Dir) Lstat(name string) (os.FileMode, error) {
	if err := checkName(name); err != nil {
		return 0, err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, &os.PathError{Op: "lstat", Path: d.join(name), Err: err}
	}
	return fileMode(st.Mode), nil
}

// fileMode converts a st_mode to an os.FileMode (type and permission bits).
func fileMode(m uint32) os.FileMode {
	mode := os.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= os.ModeDir
	case unix.S_IFLNK:
		mode |= os.ModeSymlink
	case unix.S_IFIFO:
		mode |= os.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= os.ModeSocket
	case unix.S_IFCHR:
		mode |= os.ModeDevice | os.ModeCharDevice
	case unix.S_IFBLK:
		mode |= os.ModeDevice
	}
	return mode
}

// Kind names a file type for messages: "a symbolic link", "a directory" …
func Kind(m os.FileMode) string {
	switch {
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a file"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device node"
	}
	return "an unknown kind of file"
}

// Readlink returns the target of the symbolic link name.
func (d *Dir) Readlink(name string) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(d.fd, name, buf)
	if err != nil {
		return "", &os.PathError{Op: "readlink", Path: d.join(name), Err: err}
	}
	return string(buf[:n]), nil
}

// Symlink creates name as a symbolic link to target; it fails if name
// exists.
func (d *Dir) Symlink(target, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := unix.Symlinkat(target, d.fd, name); err != nil {
		return &os.PathError{Op: "symlink", Path: d.join(name), Err: err}
	}
	return nil
}

// Names lists the entries of d.
func (d *Dir) Names() ([]string, error) {
	f, err := d.readable()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, &os.PathError{Op: "readdir", Path: d.path, Err: err}
	}
	return names, nil
}

// Dirents lists the entries of d with the types the listing gives
// (ReadDirents): no stat per entry.
func (d *Dir) Dirents() ([]Dirent, error) {
	f, err := d.readable()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := ReadDirents(int(f.Fd()))
	if err != nil {
		return nil, &os.PathError{Op: "getdents", Path: d.path, Err: err}
	}
	return ents, nil
}

// readable opens d itself for reading its entries.
func (d *Dir) readable() (*os.File, error) {
	fd, err := unix.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: d.path, Err: err}
	}
	return os.NewFile(uintptr(fd), d.path), nil
}

// chmod sets d's own permission bits (through its descriptor: the very
// directory that was opened, whatever its name points at now).
func (d *Dir) chmod(perm os.FileMode) error {
	return unix.Fchmodat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", d.fd), uint32(perm.Perm()), 0)
}

// chmodIfNeeded is chmod, skipped when the directory's mode bits (setuid,
// setgid and sticky included) already are perm: a chmod goes through
// /proc/self/fd, a lookup in procfs that costs more than the fstat.
func (d *Dir) chmodIfNeeded(perm os.FileMode) error {
	var st unix.Stat_t
	if unix.Fstat(d.fd, &st) == nil && st.Mode&0o7777 == uint32(perm.Perm()) {
		return nil
	}
	return d.chmod(perm)
}

// OpenToOwner gives d's owner read, write and search permission on it
// (u+rwx), keeping its other bits, and reports whether that changed
// anything: a directory a call closed is opened again so that what is in
// it can be looked at, and what the call made there taken out.
func (d *Dir) OpenToOwner() (bool, error) {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return false, &os.PathError{Op: "fstat", Path: d.path, Err: err}
	}
	if st.Mode&0o700 == 0o700 {
		return false, nil
	}
	// Through the descriptor, as chmod, keeping setgid and sticky bits.
	if err := unix.Fchmodat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", d.fd), st.Mode&0o7777|0o700, 0); err != nil {
		return false, &os.PathError{Op: "chmod", Path: d.path, Err: err}
	}
	return true, nil
}

// maxRetries bounds the loops that race against a process that changes a
// directory at the same time (a concurrent call of the same workspace).
const maxRetries = 5

// MkdirReplace makes sure name is a directory and opens it. A missing one
// is created with mode perm; anything else in its place (a symbolic link,
// a file) is removed first, and replaced describes what it was ("" when
// nothing was replaced). An existing directory is kept, with its mode set
// to perm (a call may have closed it to its owner).
func (d *Dir) MkdirReplace(name string, perm os.FileMode) (sub *Dir, replaced string, err error) {
	if err := checkName(name); err != nil {
		return nil, "", err
	}
	for range maxRetries {
		err := unix.Mkdirat(d.fd, name, uint32(perm.Perm()))
		if err != nil && err != unix.EEXIST {
			return nil, replaced, &os.PathError{Op: "mkdir", Path: d.join(name), Err: err}
		}
		if err == unix.EEXIST {
			m, err := d.Lstat(name)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, replaced, err
			}
			if !m.IsDir() {
				replaced = Kind(m)
				if err := d.RemoveAll(name); err != nil {
					return nil, replaced, err
				}
				continue
			}
		}
		sub, err := d.Sub(name)
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, os.ErrNotExist) {
			continue // swapped under us: look again
		}
		if err != nil {
			return nil, replaced, err
		}
		if err := sub.chmodIfNeeded(perm); err != nil {
			sub.Close()
			return nil, replaced, &os.PathError{Op: "chmod", Path: sub.path, Err: err}
		}
		return sub, replaced, nil
	}
	return nil, replaced, &os.PathError{Op: "mkdir", Path: d.join(name), Err: errors.New("it keeps being replaced by something else")}
}

// WriteNew replaces name by a new file holding data with mode perm: what
// was there (a file, a symbolic link, a directory tree) is removed, never
// written through, and the new file is created exclusively.
func (d *Dir) WriteNew(name string, data []byte, perm os.FileMode) error {
	if err := checkName(name); err != nil {
		return err
	}
	for range maxRetries {
		if err := d.RemoveAll(name); err != nil {
			return err
		}
		fd, err := unix.Openat(d.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NOCTTY, uint32(perm.Perm()))
		if err == unix.EEXIST {
			continue // made again meanwhile
		}
		if err != nil {
			return &os.PathError{Op: "create", Path: d.join(name), Err: err}
		}
		f := os.NewFile(uintptr(fd), d.join(name))
		_, werr := f.Write(data)
		// The umask may have narrowed the mode; the caller's is exact.
		cerr := f.Chmod(perm.Perm())
		if err := errors.Join(werr, cerr, f.Close()); err != nil {
			return fmt.Errorf("write %s: %w", d.join(name), err)
		}
		return nil
	}
	return &os.PathError{Op: "create", Path: d.join(name), Err: errors.New("it keeps being created by something else")}
}

// KeepOrWriteNew makes sure name is a file holding exactly data with mode
// perm, like WriteNew, but leaves it alone when it already is one: a
// regular file of this process's user, with no other link to it, whose
// mode bits (setuid, setgid and sticky included) are perm and whose
// content is data. Anything else is replaced as WriteNew replaces it. It
// reports whether it wrote. Whoever can write the directory can change the
// file right after either way; what it guarantees is the state it found
// or made, as WriteNew does.
func (d *Dir) KeepOrWriteNew(name string, data []byte, perm os.FileMode) (wrote bool, err error) {
	if err := checkName(name); err != nil {
		return false, err
	}
	if d.holds(name, data, perm) {
		return false, nil
	}
	return true, d.WriteNew(name, data, perm)
}

// holds reports whether name is the file KeepOrWriteNew keeps. The entry is
// looked at without following a link, and only a regular file is opened
// (never a FIFO or a device, which an open could block on or act upon).
func (d *Dir) holds(name string, data []byte, perm os.FileMode) bool {
	var st unix.Stat_t
	if unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || !sameFile(&st, nil, len(data), perm) {
		return false
	}
	if len(data) == 0 {
		return true
	}
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	f := os.NewFile(uintptr(fd), d.join(name))
	defer f.Close()
	var again unix.Stat_t
	if unix.Fstat(fd, &again) != nil || !sameFile(&again, &st, len(data), perm) {
		return false // replaced between the two looks
	}
	got := make([]byte, len(data)+1)
	n, err := io.ReadFull(f, got)
	if err != io.ErrUnexpectedEOF || n != len(data) {
		return false
	}
	return string(got[:n]) == string(data)
}

// sameFile reports whether st is a regular file of this process's user
// with one link, mode bits perm and size n — and, when was is given, the
// same inode as was.
func sameFile(st, was *unix.Stat_t, n int, perm os.FileMode) bool {
	if was != nil && (st.Dev != was.Dev || st.Ino != was.Ino) {
		return false
	}
	return st.Mode&unix.S_IFMT == unix.S_IFREG && st.Mode&0o7777 == uint32(perm.Perm()) &&
		st.Uid == uint32(os.Geteuid()) && st.Nlink == 1 && st.Size == int64(n)
}

// RemoveAll removes name and, for a directory, everything below it. A
// symbolic link is removed, not followed. Directories without the owner's
// read, write or search permission are opened up first (a call can leave
// them so). A missing name is not an error.
func (d *Dir) RemoveAll(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	for range maxRetries {
		err := unix.Unlinkat(d.fd, name, 0)
		switch err {
		case nil, unix.ENOENT:
			return nil
		case unix.EISDIR, unix.EPERM:
			// A directory (EPERM is what some filesystems say).
		default:
			return &os.PathError{Op: "remove", Path: d.join(name), Err: err}
		}
		sub, serr := d.Sub(name)
		if errors.Is(serr, unix.ENOTDIR) && err == unix.EPERM {
			return &os.PathError{Op: "remove", Path: d.join(name), Err: err} // not a directory: really refused
		}
		if errors.Is(serr, unix.ELOOP) || errors.Is(serr, unix.ENOTDIR) || errors.Is(serr, os.ErrNotExist) {
			continue // replaced meanwhile: unlink again
		}
		if serr != nil {
			return serr
		}
		err = sub.removeContents()
		sub.Close()
		if err != nil {
			return err
		}
		switch err := unix.Unlinkat(d.fd, name, unix.AT_REMOVEDIR); err {
		case nil, unix.ENOENT:
			return nil
		case unix.ENOTEMPTY, unix.EEXIST, unix.ENOTDIR:
			continue // refilled or replaced meanwhile
		default:
			return &os.PathError{Op: "remove", Path: d.join(name), Err: err}
		}
	}
	return &os.PathError{Op: "remove", Path: d.join(name), Err: errors.New("it keeps being refilled")}
}

func (d *Dir) removeContents() error {
	// Best effort: as the owner we may open up a directory a call closed.
	_ = d.chmod(0o700)
	f, err := d.readable()
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		names, err := f.Readdirnames(256)
		for _, n := range names {
			if rerr := d.RemoveAll(n); rerr != nil {
				return rerr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &os.PathError{Op: "readdir", Path: d.path, Err: err}
		}
	}
}

// Rename moves name in d to toName in to, without replacing anything there
// (renameat2 RENAME_NOREPLACE). A symbolic link is moved as the link.
func (d *Dir) Rename(name string, to *Dir, toName string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := checkName(toName); err != nil {
		return err
	}
	if err := unix.Renameat2(d.fd, name, to.fd, toName, unix.RENAME_NOREPLACE); err != nil {
		return &os.LinkError{Op: "rename", Old: d.join(name), New: to.join(toName), Err: err}
	}
	return nil
}

// Exchange swaps the entries a and b of d in one step (renameat2
// RENAME_EXCHANGE): whoever looks at either name sees the old entry or the
// new one, never none. Links are swapped as the links they are.
func (d *Dir) Exchange(a, b string) error {
	if err := checkName(a); err != nil {
		return err
	}
	if err := checkName(b); err != nil {
		return err
	}
	if err := unix.Renameat2(d.fd, a, d.fd, b, unix.RENAME_EXCHANGE); err != nil {
		return &os.LinkError{Op: "exchange", Old: d.join(a), New: d.join(b), Err: err}
	}
	return nil
}

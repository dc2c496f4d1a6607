package checkpoint

// Descriptor-relative file operations for directories a jailed call could
// write (SPEC §1: the supervisor never follows a link there). Every path is
// resolved from a directory descriptor with openat2(RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS), every final component is operated on with the *at
// system calls that do not follow it (unlinkat, renameat, symlinkat,
// fstatat(AT_SYMLINK_NOFOLLOW), openat(O_NOFOLLOW)), and files are created
// with O_EXCL under a fresh name, then renamed into place. A symlink found
// where a directory should be is an error, never a way through.
//
// This belongs in the shared leaf for the supervisor's file operations in
// call-writable places (SPEC §8); it lives here until that leaf exists.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// resolveFlags never follow a symlink (magic /proc links included) and never
// leave the starting directory.
const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// openAbsDir opens an absolute directory path with no symlink anywhere on
// the way (brig's workspace and grant paths are canonical, so a symlink on
// the way is something a call planted).
func openAbsDir(path string) (int, error) {
	if !filepath.IsAbs(path) {
		return -1, fmt.Errorf("%s: not an absolute path", path)
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return -1, &os.PathError{Op: "open directory (no symlinks)", Path: path, Err: err}
	}
	return fd, nil
}

// openDirAt opens the directory rel (one or more components) beneath dirfd,
// following no symlink.
func openDirAt(dirfd int, rel string) (int, error) {
	fd, err := unix.Openat2(dirfd, rel, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC | unix.O_NOFOLLOW,
		Resolve: resolveFlags,
	})
	if err != nil {
		return -1, &os.PathError{Op: "open directory (no symlinks)", Path: rel, Err: err}
	}
	return fd, nil
}

// openOwnDir opens the directory name beneath dirfd, which its mode keeps
// this process from reading although it is this process's user's (st is
// its lstat), by giving its owner read and search for as long as it is
// read: the returned function puts the mode back and must be called once
// the directory's walk is done. A call's `chmod 000 src` after changing
// what is in it hid those changes from the change list and from undo,
// which said the files were as before (red team, round 5; root reads it
// anyway). Only the owner's bits change: no other user gains anything
// meanwhile. Anything else is refused with the error that refused it.
func openOwnDir(dirfd int, name string, st *unix.Stat_t) (int, func(), error) {
	if st.Uid != uint32(os.Geteuid()) {
		return -1, nil, unix.EACCES
	}
	pfd, err := openPathAt(dirfd, name)
	if err != nil {
		return -1, nil, err
	}
	var pst unix.Stat_t
	if err := unix.Fstat(pfd, &pst); err != nil || pst.Ino != st.Ino || pst.Dev != st.Dev || pst.Uid != st.Uid {
		unix.Close(pfd)
		return -1, nil, unix.EACCES
	}
	mode := pst.Mode & 0o7777
	if err := chmodFd(pfd, mode|0o500); err != nil {
		unix.Close(pfd)
		return -1, nil, err
	}
	restore := func() {
		_ = chmodFd(pfd, mode)
		unix.Close(pfd)
	}
	fd, err := unix.Openat(pfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		restore()
		return -1, nil, err
	}
	return fd, restore, nil
}

// openPathAt opens the directory rel beneath dirfd as an O_PATH descriptor
// (usable as the directory of the *at calls, and needing no permission on
// the directory itself), following no symlink.
func openPathAt(dirfd int, rel string) (int, error) {
	fd, err := unix.Openat2(dirfd, rel, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC | unix.O_NOFOLLOW,
		Resolve: resolveFlags,
	})
	if err != nil {
		return -1, &os.PathError{Op: "open directory (no symlinks)", Path: rel, Err: err}
	}
	return fd, nil
}

// chmodFd sets the permissions of the file fd refers to; an O_PATH
// descriptor (which fchmod refuses) goes through its /proc/self/fd link,
// which names that very inode.
func chmodFd(fd int, mode uint32) error {
	err := unix.Fchmod(fd, mode&0o7777)
	if errors.Is(err, unix.EBADF) {
		err = unix.Chmod(fmt.Sprintf("/proc/self/fd/%d", fd), mode&0o7777)
	}
	return err
}

// lstatAt is fstatat(AT_SYMLINK_NOFOLLOW) of one name in dirfd.
func lstatAt(dirfd int, name string) (unix.Stat_t, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		return st, err
	}
}

// readlinkAt reads the symlink name in dirfd.
func readlinkAt(dirfd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
		if size > 1<<16 {
			return "", unix.ENAMETOOLONG
		}
	}
}

// openFileAt opens the regular file name in dirfd for reading without
// following a symlink, without blocking on a FIFO and without taking a
// terminal; it fails unless what it opened is the regular file want
// describes (same inode and device), so a swap between the stat and the
// open is noticed.
func openFileAt(dirfd int, name string, want *unix.Stat_t) (*os.File, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || (want != nil && (st.Ino != want.Ino || st.Dev != want.Dev)) {
		unix.Close(fd)
		return nil, fmt.Errorf("%s changed while it was read", name)
	}
	return os.NewFile(uintptr(fd), name), nil
}

// readFileAt reads a regular file of at most max bytes (see openFileAt).
func readFileAt(dirfd int, name string, want *unix.Stat_t, max int64) ([]byte, error) {
	f, err := openFileAt(dirfd, name, want)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s grew past %d bytes while it was read", name, max)
	}
	return data, nil
}

// sparseAt reports whether the regular file name (want) holds less than
// an eighth of its size as data, the rest holes (SEEK_DATA, SEEK_HOLE).
func sparseAt(dirfd int, name string, want *unix.Stat_t) bool {
	f, err := openFileAt(dirfd, name, want)
	if err != nil {
		return false
	}
	defer f.Close()
	fd := int(f.Fd())
	var data int64
	for off := int64(0); off < want.Size; {
		start, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if err != nil {
			break // ENXIO: no data after off
		}
		end, err := unix.Seek(fd, start, unix.SEEK_HOLE)
		if err != nil {
			return false
		}
		data += end - start
		if data >= want.Size/8 {
			return false
		}
		off = end
	}
	return true
}

// tempName is a fresh name for a file created next to its final place.
func tempName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return ".brig-undo-" + hex.EncodeToString(b[:])
}

// writeFileAt puts a regular file with data and mode at name in dirfd: it
// is written under a fresh name created with O_EXCL (a name planted in the
// meantime makes the create fail, never write elsewhere), synced, given its
// mode (and owner, when uid >= 0) and renamed over whatever is at name (a
// symlink there is replaced, not followed).
func writeFileAt(dirfd int, name string, data []byte, mode uint32, uid, gid int) error {
	tmp := tempName()
	fd, err := unix.Openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	ok := false
	defer func() {
		if !ok {
			f.Close()
			_ = unix.Unlinkat(dirfd, tmp, 0)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if uid >= 0 {
		if err := unix.Fchown(fd, uid, gid); err != nil {
			return fmt.Errorf("chown %s: %w", name, err)
		}
	}
	// After chown, which clears set-id bits.
	if err := unix.Fchmod(fd, mode&0o7777); err != nil {
		return fmt.Errorf("chmod %s: %w", name, err)
	}
	if err := unix.Fdatasync(fd); err != nil {
		return fmt.Errorf("sync %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", name, err)
	}
	if err := unix.Renameat(dirfd, tmp, dirfd, name); err != nil {
		return fmt.Errorf("rename into %s: %w", name, err)
	}
	ok = true
	return nil
}

// symlinkAt puts a symlink to target at name in dirfd, replacing what is
// there (made under a fresh name, then renamed over it).
func symlinkAt(dirfd int, name, target string, uid, gid int) error {
	tmp := tempName()
	if err := unix.Symlinkat(target, dirfd, tmp); err != nil {
		return fmt.Errorf("symlink %s: %w", name, err)
	}
	if uid >= 0 {
		if err := unix.Fchownat(dirfd, tmp, uid, gid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			_ = unix.Unlinkat(dirfd, tmp, 0)
			return fmt.Errorf("chown %s: %w", name, err)
		}
	}
	if err := unix.Renameat(dirfd, tmp, dirfd, name); err != nil {
		_ = unix.Unlinkat(dirfd, tmp, 0)
		return fmt.Errorf("rename into %s: %w", name, err)
	}
	return nil
}

// chmodDirAt sets the mode of the directory name in dirfd (opened without
// following a symlink, so a link planted there is refused).
func chmodDirAt(dirfd int, name string, mode uint32) error {
	fd, err := openPathAt(dirfd, name)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return chmodFd(fd, mode)
}

// removeAt removes name from dirfd: an empty directory with rmdir, anything
// else (a file, a symlink — never its target) with unlink.
func removeAt(dirfd int, name string, isDir bool) error {
	flags := 0
	if isDir {
		flags = unix.AT_REMOVEDIR
	}
	err := unix.Unlinkat(dirfd, name, flags)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}

// split cuts a path relative to a root into its directory part and its
// last component ("" directory for a top-level name).
func split(rel string) (dir, base string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "", rel
	}
	return rel[:i], rel[i+1:]
}

// dirCache keeps directory descriptors opened beneath one root during a
// restore, so each directory is opened (without symlinks) once.
type dirCache struct {
	root int
	fds  map[string]int
}

func newDirCache(root int) *dirCache { return &dirCache{root: root, fds: map[string]int{"": root}} }

// get opens rel beneath the root (cached).
func (c *dirCache) get(rel string) (int, error) {
	if fd, ok := c.fds[rel]; ok {
		return fd, nil
	}
	fd, err := openPathAt(c.root, rel)
	if err != nil {
		return -1, err
	}
	c.fds[rel] = fd
	return fd, nil
}

// forget closes the descriptors of rel and everything below it (it is
// about to be removed or replaced).
func (c *dirCache) forget(rel string) {
	for k, fd := range c.fds {
		if k != "" && (k == rel || strings.HasPrefix(k, rel+"/")) {
			unix.Close(fd)
			delete(c.fds, k)
		}
	}
}

// close closes every descriptor but the root's.
func (c *dirCache) close() {
	for k, fd := range c.fds {
		if k != "" {
			unix.Close(fd)
		}
	}
	c.fds = map[string]int{"": c.root}
}

package safefs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrChanged is returned by CopyShared and ReplaceWithCopy when the name
// is gone or no longer the file the caller found.
var ErrChanged = errors.New("changed since it was found")

// OwnCopyPrefix starts the name of a copy CopyShared makes before
// ReplaceWithCopy moves it over the file it copies.
const OwnCopyPrefix = ".brig-own-"

// IsOwnCopyName reports whether name is one CopyShared makes: a copy left
// by a run that stopped before moving it (its file is still the shared
// one, so the copy is only disk space).
func IsOwnCopyName(name string) bool {
	rest, ok := strings.CutPrefix(name, OwnCopyPrefix)
	if !ok || len(rest) != 16 {
		return false
	}
	_, err := hex.DecodeString(rest)
	return err == nil
}

// CopyShared copies the regular file name — which must still be the
// file (dev, ino) the caller found, with another link — to a new file
// beside it, with its owner, mode and times, and returns the copy's name.
// Nothing is followed or replaced; the copy is not synced (the caller
// syncs the filesystem once for all its copies, then replaces).
func (d *Dir) CopyShared(name string, dev, ino uint64) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	src, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err == unix.ENOENT || err == unix.ELOOP {
		return "", &os.PathError{Op: "open", Path: d.join(name), Err: ErrChanged}
	}
	if err != nil {
		return "", &os.PathError{Op: "open", Path: d.join(name), Err: err}
	}
	in := os.NewFile(uintptr(src), d.join(name))
	defer in.Close()
	var st unix.Stat_t
	if err := unix.Fstat(src, &st); err != nil {
		return "", &os.PathError{Op: "fstat", Path: d.join(name), Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Dev != dev || st.Ino != ino {
		return "", &os.PathError{Op: "copy", Path: d.join(name), Err: ErrChanged}
	}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", err
	}
	tmp := OwnCopyPrefix + hex.EncodeToString(rnd[:])
	dst, err := unix.Openat(d.fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NOCTTY, 0o600)
	if err != nil {
		return "", &os.PathError{Op: "create", Path: d.join(tmp), Err: err}
	}
	out := os.NewFile(uintptr(dst), d.join(tmp))
	_, cerr := io.Copy(out, in)
	aerr := setFdAttrs(dst, AttrsOf(&st))
	if err := errors.Join(cerr, aerr, out.Close()); err != nil {
		_ = unix.Unlinkat(d.fd, tmp, 0)
		return "", fmt.Errorf("copy %s: %w", d.join(name), err)
	}
	return tmp, nil
}

// ReplaceWithCopy moves the copy CopyShared made over name, when name is
// still the file (dev, ino) it copied; otherwise the copy is removed and
// name left as it is.
func (d *Dir) ReplaceWithCopy(tmp, name string, dev, ino uint64) error {
	if err := checkName(name); err != nil {
		return err
	}
	if !IsOwnCopyName(tmp) {
		return fmt.Errorf("safefs: %q is not a copy's name", tmp)
	}
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Dev != dev || st.Ino != ino {
		_ = unix.Unlinkat(d.fd, tmp, 0)
		return &os.PathError{Op: "replace", Path: d.join(name), Err: ErrChanged}
	}
	if err := unix.Renameat(d.fd, tmp, d.fd, name); err != nil {
		_ = unix.Unlinkat(d.fd, tmp, 0)
		return &os.LinkError{Op: "rename", Old: d.join(tmp), New: d.join(name), Err: err}
	}
	return nil
}

// RemoveOwnCopy removes a copy CopyShared made and left (IsOwnCopyName).
func (d *Dir) RemoveOwnCopy(name string) error {
	if !IsOwnCopyName(name) {
		return fmt.Errorf("safefs: %q is not a copy's name", name)
	}
	if err := unix.Unlinkat(d.fd, name, 0); err != nil {
		return &os.PathError{Op: "remove", Path: d.join(name), Err: err}
	}
	return nil
}

// Syncfs flushes the filesystem d is on.
func (d *Dir) Syncfs() error {
	fd, err := unix.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: d.path, Err: err}
	}
	defer unix.Close(fd)
	if err := unix.Syncfs(fd); err != nil {
		return &os.PathError{Op: "syncfs", Path: d.path, Err: err}
	}
	return nil
}

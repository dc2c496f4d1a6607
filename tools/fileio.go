package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"brig/internal/fsutil"
	"brig/tools/textfile"
)

// readForEdit reads a whole regular file that a tool is about to change.
// It refuses what cannot be edited safely as text.
func readForEdit(op, path string) ([]byte, fs.FileInfo, *Result) {
	fi, err := os.Stat(path)
	if err != nil {
		r := fsError(op, path, err)
		return nil, nil, &r
	}
	if fi.IsDir() {
		r := errorf("%s %s: is a directory", op, path)
		return nil, nil, &r
	}
	if !fi.Mode().IsRegular() {
		r := errorf("%s %s: not a regular file", op, path)
		return nil, nil, &r
	}
	if fi.Size() > MaxEditFileBytes {
		r := errorf("%s %s: the file is %d bytes, more than the %d bytes this tool edits; use bash (sed, a script) for files this large", op, path, fi.Size(), MaxEditFileBytes)
		return nil, nil, &r
	}
	b, err := os.ReadFile(path)
	if err != nil {
		r := fsError(op, path, err)
		return nil, nil, &r
	}
	if len(b) > MaxEditFileBytes {
		r := errorf("%s %s: the file grew beyond %d bytes while being read", op, path, MaxEditFileBytes)
		return nil, nil, &r
	}
	if textfile.LooksBinary(b) {
		r := errorf("%s %s: binary file; this tool edits text only", op, path)
		return nil, nil, &r
	}
	return b, fi, nil
}

// writeTarget is the file a write really lands on: the target of a symlink
// (so editing a linked file keeps the link), or the path itself.
func writeTarget(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return path, nil
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("%s is a symlink whose target cannot be resolved: %w", path, err)
	}
	return real, nil
}

// writeAtomic replaces path's content: a temporary file in the same
// directory, fsync, rename over the target, fsync of the directory. An
// existing file keeps its permission bits; a new one gets mode. When the
// jail granted the file but not its directory (no temporary file can be
// created there), an existing file is rewritten in place instead, and
// atomic is false.
func writeAtomic(path string, data []byte, mode fs.FileMode) (atomic bool, err error) {
	target, err := writeTarget(path)
	if err != nil {
		return false, err
	}
	existing := false
	if fi, err := os.Stat(target); err == nil {
		if !fi.Mode().IsRegular() {
			return false, fmt.Errorf("%s is not a regular file", path)
		}
		mode = fi.Mode().Perm()
		existing = true
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".brig-*")
	if err != nil {
		if existing && (errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)) {
			return false, writeInPlace(target, data)
		}
		return false, err
	}
	committed := false
	defer func() {
		if !committed {
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return false, err
	}
	committed = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // durability of the rename; best effort
		d.Close()
	}
	return true, nil
}

// writeInPlace truncates and rewrites an existing file (no new directory
// entry is needed).
func writeInPlace(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	return fsutil.WriteSyncClose(f, data)
}

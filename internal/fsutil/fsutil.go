// Package fsutil owns brig's durable file writes: atomic replacement (temp
// file, fsync, rename, fsync of the directory) and advisory locks that
// serialise writers across processes.
//
// It must not decide what is written or where: callers own their formats
// and paths.
package fsutil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// WriteFileAtomic replaces path with data so that a reader, or a crash at any
// moment, sees either the old contents or the new, never a mix. The file gets
// mode perm; its directory is created (0700) when missing.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: flush: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	ok = true
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// WithLock runs fn while holding an exclusive advisory lock on path+".lock"
// (created when missing, and removed again when fn returns, so no lock
// files are left beside the user's files). It waits for another holder
// until ctx is done.
func WithLock(ctx context.Context, path string, fn func() error) error {
	lockPath := path + ".lock"
	if err := os.MkdirAll(filepath.Dir(lockPath), 0o700); err != nil {
		return fmt.Errorf("lock %s: %w", lockPath, err)
	}
	for {
		f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o600)
		if err != nil {
			return fmt.Errorf("lock %s: %w", lockPath, err)
		}
		again := false
		err = WithFileLock(ctx, f, func() error {
			// The holder before us may have removed the file we locked:
			// then the lock guards nothing, and we start over.
			var held, named unix.Stat_t
			if unix.Fstat(int(f.Fd()), &held) != nil || unix.Lstat(lockPath, &named) != nil || held.Ino != named.Ino || held.Dev != named.Dev {
				again = true
				return nil
			}
			defer os.Remove(lockPath) // while still holding it
			return fn()
		})
		f.Close()
		if !again {
			return err
		}
	}
}

// WithFileLock runs fn while holding an exclusive advisory lock (flock) on
// the open file f, for callers that lock the file they write rather than a
// companion lock file. It waits for another holder until ctx is done. Locks
// taken through different opens of one file exclude each other, also within
// one process; a single *os.File shared by goroutines needs its own mutex.
func WithFileLock(ctx context.Context, f *os.File, fn func() error) error {
	unlock, err := LockFile(ctx, f)
	if err != nil {
		return err
	}
	defer unlock()
	return fn()
}

// LockFile takes the exclusive advisory lock WithFileLock holds, for a
// caller that releases it later (from another goroutine); unlock releases
// it.
func LockFile(ctx context.Context, f *os.File) (unlock func(), err error) {
	for delay := time.Millisecond; ; delay = min(delay*2, 50*time.Millisecond) {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("lock %s: %w", f.Name(), ctx.Err())
		case <-time.After(delay):
		}
	}
	return func() { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN) }, nil
}

// SyncDir flushes dir's entries (a created, renamed or removed file) to disk.
func SyncDir(dir string) error { return syncDir(dir) }

// AppendSync appends b to the file at path (created 0600, never through a
// symbolic link) and syncs it before closing.
func AppendSync(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	return WriteSyncClose(f, b)
}

// WriteSyncClose writes b to f, syncs it and closes it, returning the
// first error (f is closed either way).
func WriteSyncClose(f *os.File, b []byte) error {
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// LastNewline returns the offset just past the last '\n' in f before size
// (0 if there is none), reading backwards in blocks: where the last whole
// line of an append-only file ends. The first block is small, since such a
// file nearly always ends with its newline (every append checks it); the
// blocks grow to 64 KiB.
func LastNewline(f *os.File, size int64) (int64, error) {
	const first, most = 512, 64 << 10
	var buf []byte
	for end, block := size, int64(first); end > 0; block = min(block*8, most) {
		start := max(end-block, 0)
		if int64(cap(buf)) < end-start {
			buf = make([]byte, end-start)
		}
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil {
			return 0, fmt.Errorf("read the end of %s: %w", f.Name(), err)
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

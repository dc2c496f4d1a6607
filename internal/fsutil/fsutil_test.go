package fsutil

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestWriteFileAtomicReplacesAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "f.toml")
	for _, content := range []string{"one", "two"} {
		if err := WriteFileAtomic(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != content {
			t.Fatalf("got %q, %v; want %q", got, err, content)
		}
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Fatalf("temp files left behind: %v", entries)
	}
}

func TestWithLockSerialises(t *testing.T) {
	p := filepath.Join(t.TempDir(), "counter")
	if err := os.WriteFile(p, []byte{0}, 0o600); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				err := WithLock(context.Background(), p, func() error {
					b, err := os.ReadFile(p)
					if err != nil {
						return err
					}
					return os.WriteFile(p, []byte{b[0] + 1}, 0o600)
				})
				if err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	b, _ := os.ReadFile(p)
	if b[0] != 160 {
		t.Fatalf("counter %d, want 160: a read-modify-write was not serialised", b[0])
	}
	if _, err := os.Lstat(p + ".lock"); !os.IsNotExist(err) {
		t.Errorf("the lock file was left behind: %v", err)
	}
}

func TestWithLockHonoursContext(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	held := make(chan struct{})
	release := make(chan struct{})
	go WithLock(context.Background(), p, func() error { close(held); <-release; return nil })
	<-held
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	ran := false
	err := WithLock(ctx, p, func() error { ran = true; return nil })
	if err == nil || ran {
		t.Fatalf("second holder ran (%v) or no error (%v) while the lock was held", ran, err)
	}
}

func TestWithFileLockExcludesOtherOpensOfTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	open := func() *os.File {
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	held := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- WithFileLock(context.Background(), a, func() error { close(held); <-release; return nil })
	}()
	<-held
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	ran := false
	if err := WithFileLock(ctx, b, func() error { ran = true; return nil }); err == nil || ran {
		t.Fatalf("second open ran (%v) or no error (%v) while the first held the lock", ran, err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := WithFileLock(context.Background(), b, func() error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("after release: ran=%v err=%v", ran, err)
	}
}

// TestLastNewline: the end of the last whole line wherever the newline
// lies relative to the growing blocks (the first 512 bytes, then 4 KiB,
// then 64 KiB at a time), and 0 without any.
func TestLastNewline(t *testing.T) {
	for _, tc := range []struct {
		name     string
		size, nl int // file size; where its last newline is (-1: none)
	}{
		{"empty", 0, -1},
		{"ends with its newline", 100000, 99999},
		{"no newline", 200000, -1},
		{"a short torn tail", 1000, 900},
		{"torn tail of exactly the first block", 1000, 1000 - 512 - 1},
		{"newline at the start of the first block", 1000, 1000 - 512},
		{"in the second block", 10000, 10000 - 3000},
		{"beyond the first 64 KiB block", 300000, 100},
		{"the first byte", 70000, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := bytes.Repeat([]byte{'x'}, tc.size)
			if tc.nl >= 0 {
				data[tc.nl] = '\n'
			}
			p := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := LastNewline(f, int64(tc.size))
			if err != nil {
				t.Fatal(err)
			}
			if want := int64(tc.nl + 1); got != want {
				t.Errorf("LastNewline = %d, want %d", got, want)
			}
		})
	}
}

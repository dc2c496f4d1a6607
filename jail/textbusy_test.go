//go:build cgo

package jail

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestRetryTextBusy: an exec refused with ETXTBSY is tried again, up to
// textBusyTries times with a wait between tries; any other outcome ends
// the tries at once.
func TestRetryTextBusy(t *testing.T) {
	busyThen := func(n int, last error) (func() error, *int) {
		calls := 0
		return func() error {
			calls++
			if calls <= n {
				return fmt.Errorf("exec: %w", syscall.ETXTBSY)
			}
			return last
		}, &calls
	}
	var waits []int
	wait := func(try int) { waits = append(waits, try) }

	start, calls := busyThen(2, nil)
	if err := retryTextBusy(start, wait); err != nil || *calls != 3 || !slices.Equal(waits, []int{0, 1}) {
		t.Fatalf("busy twice, then started: %v after %d tries, waits %v", err, *calls, waits)
	}
	waits = nil
	start, calls = busyThen(1000, nil)
	if err := retryTextBusy(start, wait); !errors.Is(err, syscall.ETXTBSY) || *calls != textBusyTries || len(waits) != textBusyTries-1 {
		t.Fatalf("always busy: %v after %d tries, %d waits", err, *calls, len(waits))
	}
	waits = nil
	start, calls = busyThen(0, syscall.ENOENT)
	if err := retryTextBusy(start, wait); !errors.Is(err, syscall.ENOENT) || *calls != 1 || len(waits) != 0 {
		t.Fatalf("another error: %v after %d tries, %d waits", err, *calls, len(waits))
	}
}

// TestStartInNamespacesMeetsTextBusy: the kernel refuses to exec a program
// that is open for writing with ETXTBSY — the error StartInNamespaces
// tries again on — and once the writer has closed it, the same start
// runs it (the control).
func TestStartInNamespacesMeetsTextBusy(t *testing.T) {
	nsShell(t) // skips where user namespaces are not available
	prog := filepath.Join(t.TempDir(), "prog")
	w, err := os.OpenFile(prog, os.O_WRONLY|os.O_CREATE, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString("#!/bin/sh\nexit 0\n"); err != nil {
		t.Fatal(err)
	}
	uid, gid := os.Getuid(), os.Getgid()
	p := NSProcess{
		Path: prog, Args: []string{"prog"}, Env: []string{}, Dir: "/",
		Files:      []*os.File{nil, nil, nil},
		Cloneflags: syscall.CLONE_NEWUSER,
		UIDMap:     fmt.Sprintf("%d %d 1", uid, uid),
		GIDMap:     fmt.Sprintf("%d %d 1", gid, gid),
	}
	if _, err := StartInNamespaces(p); !errors.Is(err, syscall.ETXTBSY) {
		t.Fatalf("a program open for writing: %v, want ETXTBSY", err)
	}
	w.Close()
	proc, err := StartInNamespaces(p)
	if err != nil {
		t.Fatalf("control: the program once its writer closed it: %v", err)
	}
	if st, err := proc.Wait(); err != nil || !st.Success() {
		t.Fatalf("control: %v %v", st, err)
	}
}

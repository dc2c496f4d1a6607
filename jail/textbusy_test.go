//go:build cgo

package jail

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

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

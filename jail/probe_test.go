//go:build cgo

package jail

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestNamespaceProbeRunsNothing: a start without a program (the probe of
// whether calls get namespaces) makes every namespace a call's init gets,
// writes its maps and exits 0 without executing anything: a `true` and a
// `sh` planted first on PATH never run, where the same start with the
// planted program as its Path does run it (the control). A map that
// cannot be written is reported as the probe's failing step.
func TestNamespaceProbeRunsNothing(t *testing.T) {
	nsShell(t) // skips where user namespaces are not available
	dir := t.TempDir()
	canary := filepath.Join(dir, "canary")
	for _, name := range []string{"true", "sh"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\necho \"$0\" >> "+canary+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	uid, gid := os.Getuid(), os.Getgid()
	probe := NSProcess{
		Files:      []*os.File{nil, nil, nil},
		Cloneflags: unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS,
		UIDMap:     fmt.Sprintf("%d %d 1", uid, uid),
		GIDMap:     fmt.Sprintf("%d %d 1", gid, gid),
	}
	start := func(p NSProcess) error {
		t.Helper()
		proc, err := StartInNamespaces(p)
		if err != nil {
			return err
		}
		st, err := proc.Wait()
		if err != nil {
			return err
		}
		if !st.Success() {
			return fmt.Errorf("exited %v", st)
		}
		return nil
	}
	if err := start(probe); err != nil {
		t.Fatalf("the probe failed where namespaces can be made: %v", err)
	}
	if b, err := os.ReadFile(canary); err == nil {
		t.Fatalf("the probe ran a program: %s", b)
	}

	control := probe
	control.Path, control.Args, control.Env = filepath.Join(dir, "true"), []string{"true"}, []string{}
	if err := start(control); err != nil {
		t.Fatalf("control: %v", err)
	}
	if b, err := os.ReadFile(canary); err != nil || !strings.Contains(string(b), "true") {
		t.Fatalf("control: the program given as Path did not run: %q %v", b, err)
	}

	bad := probe
	bad.UIDMap = "not a map"
	err := start(bad)
	if err == nil || !strings.Contains(err.Error(), "start a namespace probe: write its uid_map") {
		t.Fatalf("a probe whose map cannot be written: %v", err)
	}
}

package jail

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProbeCommand: a namespace probe starts a root-owned true that no one
// else can write, or brig itself as a probe; never a name looked up on
// PATH, and never a file another user (or a call) could have replaced.
func TestProbeCommand(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // nothing on it matters
	path, argv := ProbeCommand(func() string { return "/proc/self/exe" })
	switch {
	case path == "/proc/self/exe":
		if strings.Join(argv, " ") != strings.Join(ProbeArgs(), " ") {
			t.Fatalf("brig as a probe with %q", argv)
		}
	case path == "/usr/bin/true" || path == "/bin/true":
		if !rootOwned(path, false) || !rootOwned(filepath.Dir(path), true) {
			t.Fatalf("%s is not root's alone", path)
		}
	default:
		t.Fatalf("the probe is %q", path)
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "true")
	if err := os.WriteFile(f, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if rootOwned(dir, true) != (os.Getuid() == 0) || rootOwned(f, false) != (os.Getuid() == 0) {
		t.Fatal("ownership judged wrongly")
	}
	if err := os.Chmod(f, 0o777); err != nil {
		t.Fatal(err)
	}
	if rootOwned(f, false) {
		t.Fatal("a world-writable file was trusted")
	}
}

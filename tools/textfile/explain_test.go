package textfile

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"brig/internal/unprivtest"
)

// envUnpriv marks the re-executed unprivileged pass.
const envUnpriv = "BRIG_TEXTFILE_UNPRIV"

// TestExplainPermissionByMode (new user, 2026-12-02): a file tool refused
// by the file's own mode was told "the jail refused it", and a model asks
// for a grant that cannot help. A refusal access(2) repeats is the mode's
// (a file of mode 000, a new name in a directory of mode 555); control: a
// refusal of a file whose mode allows it is the jail's. Root's power over
// modes hides the first kind, so it runs as uid 65534 (TestExplainUnprivileged).
func TestExplainPermissionByMode(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root reads a file of mode 000: the unprivileged pass runs this")
	}
	dir := t.TempDir()
	locked, fine, ro := filepath.Join(dir, "locked.txt"), filepath.Join(dir, "fine.txt"), filepath.Join(dir, "ro")
	for _, p := range []string{locked, fine} {
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
	denied := func(p string) error { return &fs.PathError{Op: "open", Path: p, Err: syscall.EACCES} }
	for _, c := range []struct {
		op, path string
		jail     bool
	}{
		{"read", locked, false},
		{"write", filepath.Join(ro, "new.txt"), false},
		{"edit", locked, false},
		{"read", fine, true}, // control: its mode allows it
		{"write", fine, true},
	} {
		got := Explain(c.op, c.path, denied(c.path))
		if byJail := strings.Contains(got, "the jail refused it"); byJail != c.jail || !byJail && !strings.Contains(got, "not by brig's jail") {
			t.Errorf("%s %s: %q (want the jail's: %v)", c.op, c.path, got, c.jail)
		}
	}
}

// TestExplainUnprivileged runs TestExplainPermissionByMode as uid 65534.
func TestExplainUnprivileged(t *testing.T) {
	out := unprivtest.Rerun(t, envUnpriv, "TestExplainPermissionByMode")
	if !bytes.Contains(out, []byte("--- PASS: TestExplainPermissionByMode")) {
		t.Fatalf("the unprivileged pass did not pass:\n%s", out)
	}
}

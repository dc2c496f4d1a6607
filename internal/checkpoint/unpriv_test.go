package checkpoint

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// envUnpriv marks the re-executed unprivileged pass.
const envUnpriv = "BRIG_CHECKPOINT_UNPRIV"

// TestUnprivileged runs every test of the package again as uid/gid 65534 (setpriv):
// without root's power over permissions, the restore must still put back
// modes and files, and a planted symlink must still not be written
// through.
func TestUnprivileged(t *testing.T) {
	if os.Getenv(envUnpriv) != "" {
		t.Skip("this process is the unprivileged pass")
	}
	if os.Getuid() != 0 {
		t.Skip("the unprivileged pass is started by a root run")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatalf("setpriv (util-linux) is needed for the unprivileged pass: %v", err)
	}
	// The test binary, where uid 65534 can run it.
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "checkpoint.test")
	copyFile(t, os.Args[0], bin)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--",
		bin, "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "TMPDIR=/tmp", envUnpriv + "=1"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("the unprivileged pass failed: %v\n%s", err, out.String())
	}
	if !bytes.Contains(out.Bytes(), []byte("--- PASS: TestSymlinkPlanted")) || !bytes.Contains(out.Bytes(), []byte("--- PASS: TestPermissions")) {
		t.Fatalf("the unprivileged pass did not run the symlink test:\n%s", out.String())
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

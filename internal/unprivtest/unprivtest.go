// Package unprivtest is a test helper: a root test run starts its own
// test binary again as uid/gid 65534 (setpriv), so that a test which
// root's power over file permissions would pass anyway also runs as an
// ordinary user. Tests only; it owns nothing else.
package unprivtest

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

// Active reports whether this process is the unprivileged pass that
// Rerun started with the marker env.
func Active(env string) bool { return os.Getenv(env) != "" }

// Rerun runs the test binary again as uid/gid 65534 with env set, on
// the tests run selects (-test.run; "" for all), and returns its output.
// It fails the test if the pass fails; it skips when not run as root or
// when this process is the pass itself.
func Rerun(t *testing.T, env, run string) []byte {
	t.Helper()
	if Active(env) {
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
	bin := filepath.Join(dir, filepath.Base(os.Args[0]))
	copyFile(t, os.Args[0], bin)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"--reuid=65534", "--regid=65534", "--clear-groups", "--", bin, "-test.count=1", "-test.v"}
	if run != "" {
		args = append(args, "-test.run="+run)
	}
	cmd := exec.CommandContext(ctx, setpriv, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "TMPDIR=/tmp", env + "=1"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("the unprivileged pass failed: %v\n%s", err, out.String())
	}
	return out.Bytes()
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

// Package composition runs a test binary's scenario tests again in the
// environments brig must work the same in: without user namespaces (a user
// namespace whose user.max_user_namespaces is 0, so brig inside can create
// none: Ubuntu's AppArmor restriction, Docker's default profile and CI
// runners look the same to it), as an unprivileged user, both,
// and with brig's Landlock capped at older kernels' ABIs (jail.TestABIEnv).
// It owns nothing but the re-execution.
package composition

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"brig/jail"
)

// Env names the composition a re-executed test binary runs in; unset in
// the test's own run.
const Env = "BRIG_TEST_COMPOSITION"

// BinEnv hands the re-executed test binary the brig binary the first run
// built (test/brigbin uses it instead of building again).
const BinEnv = "BRIG_TEST_BRIG"

// A Composition is one environment to re-run the scenario tests in.
type Composition struct {
	Name   string
	NoNS   bool // in a user namespace that cannot create another
	Unpriv bool // as the caller's unprivileged uid and gid
	ABI    int  // brig's Landlock capped at this ABI (0: the kernel's)
}

// All are the compositions besides the test's own (root, namespaces).
var All = []Composition{
	{Name: "no-userns", NoNS: true},
	{Name: "unprivileged", Unpriv: true},
	{Name: "no-userns-unprivileged", NoNS: true, Unpriv: true},
	// Ubuntu 22.04's kernel, and 24.04's (namespaces through brig's
	// AppArmor profile); the oldest ABI that works without namespaces.
	{Name: "landlock-abi-1", ABI: 1},
	{Name: "landlock-abi-4", ABI: 4},
	{Name: "landlock-abi-6-no-userns", NoNS: true, ABI: 6},
}

// Current is the composition this process runs in ("" for the test's own
// run).
func Current() string { return os.Getenv(Env) }

// UIDEnv hands the re-executed test binary the uid its unprivileged
// compositions run as, for Verify.
const UIDEnv = "BRIG_TEST_COMPOSITION_UID"

// Run re-executes this test binary for pattern (a -test.run expression) in
// every composition, as subtests, with brig (a binary the first run built)
// copied where uid can run it. uid is the unprivileged compositions' user
// and group: each test package passes its own, none a real account's, so
// that packages go test runs at the same time never share a uid's process
// budget (RLIMIT_NPROC counts every process of the uid), its tmux socket
// directory or the right to signal each other's processes. It does nothing
// in a re-executed run, and skips the compositions this machine cannot make
// (an unprivileged test run cannot switch users) with the reason.
func Run(t *testing.T, pattern, brig string, uid int) {
	if Current() != "" {
		t.Skip("this run is itself one of the compositions")
	}
	dir, err := os.MkdirTemp("/var/tmp", "brig-composition-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	testBin, brigBin := filepath.Join(dir, filepath.Base(self)), filepath.Join(dir, "brig")
	for _, c := range [][2]string{{self, testBin}, {brig, brigBin}} {
		if err := copyFile(c[1], c[0]); err != nil {
			t.Fatal(err)
		}
	}
	wd, _ := os.Getwd()
	for _, c := range All {
		t.Run(c.Name, func(t *testing.T) {
			if c.Unpriv && os.Getuid() != 0 {
				t.Skipf("switching to uid %d needs a root test run", uid)
			}
			if c.ABI >= jail.LandlockABI() {
				t.Skipf("this kernel has Landlock ABI %d: capping at %d changes nothing", jail.LandlockABI(), c.ABI)
			}
			argv := []string{testBin, "-test.count=1", "-test.v", "-test.run", pattern}
			ctx := context.Background()
			if d, ok := t.Deadline(); ok {
				left := time.Until(d) - 20*time.Second
				if left < time.Minute {
					t.Fatalf("only %s left before the test deadline: run go test with a longer -timeout", time.Until(d).Round(time.Second))
				}
				argv = append(argv, "-test.timeout="+left.Round(time.Second).String())
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, d.Add(-10*time.Second))
				defer cancel()
			}
			if c.Unpriv {
				argv = append([]string{"setpriv", fmt.Sprintf("--reuid=%d", uid), fmt.Sprintf("--regid=%d", uid), "--clear-groups", "--"}, argv...)
			}
			var attr *syscall.SysProcAttr
			if c.NoNS {
				// uid 0 and uid mapped to themselves; then no more
				// user namespaces may be made inside.
				argv = append([]string{"/bin/sh", "-c", `echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"`, "sh"}, argv...)
				ids := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}, {ContainerID: uid, HostID: uid, Size: 1}}
				attr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER, UidMappings: ids, GidMappings: ids, GidMappingsEnableSetgroups: true}
				if os.Getuid() != 0 {
					own := []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
					attr.UidMappings, attr.GidMappings = own, []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
					attr.GidMappingsEnableSetgroups = false
				}
			}
			path, err := exec.LookPath(argv[0])
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.CommandContext(ctx, path, argv[1:]...)
			cmd.Dir = wd
			cmd.SysProcAttr = attr
			cmd.Env = append(filterEnv(os.Environ()), Env+"="+c.Name, BinEnv+"="+brigBin, UIDEnv+"="+strconv.Itoa(uid), "TMPDIR=/tmp")
			if c.ABI > 0 {
				cmd.Env = append(cmd.Env, jail.TestABIEnv+"="+strconv.Itoa(c.ABI))
			}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err = cmd.Run()
			if err != nil {
				t.Errorf("the scenario tests failed %s (%v):\n%s", describe(c, uid), err, out.String())
				return
			}
			if !strings.Contains(out.String(), "--- PASS: TestComposition") {
				t.Errorf("the re-executed run %s did not check its composition (TestComposition must match the pattern):\n%s", describe(c, uid), out.String())
				return
			}
			t.Logf("the scenario tests passed %s: %d tests and subtests passed, %d skipped",
				describe(c, uid), strings.Count(out.String(), "--- PASS: "), strings.Count(out.String(), "--- SKIP: "))
		})
	}
}

func describe(c Composition, uid int) string {
	var parts []string
	if c.NoNS {
		parts = append(parts, "without user namespaces")
	}
	if c.ABI > 0 {
		parts = append(parts, fmt.Sprintf("with Landlock capped at ABI %d", c.ABI))
	}
	if c.Unpriv {
		parts = append(parts, fmt.Sprintf("as uid %d", uid))
	}
	return strings.Join(parts, ", ")
}

// filterEnv drops what would point the re-executed run at the first run's
// private directories (the unprivileged uid cannot enter them).
func filterEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case Env, BinEnv, UIDEnv, "TMPDIR", "GOCACHE", "GOTMPDIR", "HOME", jail.TestABIEnv:
			continue
		}
		out = append(out, kv)
	}
	return append(out, "HOME=/nonexistent")
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Verify fails the test unless this process runs in the composition it
// was started for: as Run's uid when unprivileged, and where brig (the
// binary under test) finds no user namespaces when without them; in the
// test's own run, that brig does find them (or says why not). Every
// re-executed run includes it, so a composition that silently was not
// made proves nothing.
func Verify(t *testing.T, brig string) {
	t.Helper()
	name := Current()
	var c Composition
	for _, k := range All {
		if k.Name == name {
			c = k
		}
	}
	if name != "" && c.Name == "" {
		t.Fatalf("unknown composition %q", name)
	}
	if want := os.Getenv(UIDEnv); c.Unpriv && strconv.Itoa(os.Getuid()) != want {
		t.Fatalf("composition %s runs as uid %d, want %s", name, os.Getuid(), want)
	}
	cmd := exec.Command(brig, "doctor", "--json")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	if v, ok := os.LookupEnv(jail.TestABIEnv); ok {
		cmd.Env = append(cmd.Env, jail.TestABIEnv+"="+v)
	}
	out, _ := cmd.Output() // doctor exits 1 when a baseline guarantee is missing
	var got struct {
		UserNS      *bool `json:"user_ns"`
		LandlockABI int   `json:"landlock_abi"`
	}
	if err := json.Unmarshal(out, &got); err != nil || got.UserNS == nil {
		t.Fatalf("brig doctor --json: %v\n%s", err, out)
	}
	switch {
	case c.NoNS && *got.UserNS:
		t.Fatalf("composition %s: brig can still create user namespaces", name)
	case !c.NoNS && !*got.UserNS && name != "":
		t.Fatalf("composition %s: brig cannot create user namespaces here, so this run is the no-userns one", name)
	}
	if c.ABI > 0 && got.LandlockABI != c.ABI {
		t.Fatalf("composition %s: brig uses Landlock ABI %d, want it capped at %d", name, got.LandlockABI, c.ABI)
	}
	t.Logf("composition %q: uid %d, user namespaces for brig: %v, Landlock ABI %d", name, os.Getuid(), *got.UserNS, got.LandlockABI)
}

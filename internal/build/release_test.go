package build

import (
	"bytes"
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestRelease checks every static release binary in $BRIG_RELEASE_DIR
// (make test builds the one for this machine into bin/check; make release
// builds both architectures into bin/release): an ELF for its architecture
// with no program interpreter and no shared library (what ldd calls "not a
// dynamic executable"), whose `brig version` says so; the native one also
// runs in a minimal root that holds nothing but the binary, with the jail
// enforcing there; a foreign one runs under qemu when it is installed.
func TestRelease(t *testing.T) {
	dir := os.Getenv("BRIG_RELEASE_DIR")
	if dir == "" {
		t.Skip("BRIG_RELEASE_DIR is not set: make test and make release set it to the static binaries they built")
	}
	bins, _ := filepath.Glob(filepath.Join(dir, "brig-linux-*"))
	if len(bins) == 0 {
		t.Skipf("no static binary in %s (make test said why it built none)", dir)
	}
	for _, bin := range bins {
		arch := strings.TrimPrefix(filepath.Base(bin), "brig-linux-")
		t.Run(arch, func(t *testing.T) {
			t.Parallel()
			checkStaticELF(t, bin, arch)
			switch {
			case arch == runtime.GOARCH:
				runInMinimalRoot(t, bin)
			default:
				runUnderQemu(t, bin, arch)
			}
		})
	}
}

var elfMachine = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

func checkStaticELF(t *testing.T, bin, arch string) {
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("%s is not an ELF file: %v", bin, err)
	}
	defer f.Close()
	if want, ok := elfMachine[arch]; !ok || f.Machine != want {
		t.Errorf("%s: machine %v, want %v for %s", bin, f.Machine, want, arch)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has a program interpreter (a dynamic loader): it is not static", bin)
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("%s needs shared libraries %v (%v)", bin, libs, err)
	}
	// glibc's ldd runs the loader; musl's ldd says the same in other words.
	if ldd, err := exec.LookPath("ldd"); err == nil {
		out, _ := exec.Command(ldd, bin).CombinedOutput()
		if !strings.Contains(string(out), "not a dynamic executable") && !strings.Contains(string(out), "statically linked") {
			t.Errorf("ldd %s:\n%s", bin, out)
		} else {
			t.Logf("ldd %s: %s", filepath.Base(bin), strings.TrimSpace(string(out)))
		}
	}
}

// wantStaticVersion checks a release's `brig version`.
func wantStaticVersion(t *testing.T, out, arch string) {
	t.Helper()
	for _, want := range []string{
		"go:      go", "linux/" + arch + "\n",
		"linked statically (the binary needs no shared library)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("brig version lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "built:   unknown") {
		t.Errorf("a release must carry its build date:\n%s", out)
	}
	// The commit it was built from, when it was built from a git checkout
	// (make passes it; a source tarball has none).
	if c := os.Getenv("BRIG_RELEASE_COMMIT"); c != "" && !strings.Contains(out, "commit:  "+c) {
		t.Errorf("the release does not carry its commit %s:\n%s", c, out)
	}
}

func runUnderQemu(t *testing.T, bin, arch string) {
	qarch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[arch]
	var qemu string
	for _, name := range []string{"qemu-" + qarch + "-static", "qemu-" + qarch} {
		if p, err := exec.LookPath(name); err == nil {
			qemu = p
			break
		}
	}
	if qemu == "" {
		t.Logf("no qemu-%s: the %s binary was checked as a file only (internal/build/deps.sh %s installs qemu-user-static)", qarch, arch, arch)
		return
	}
	out, err := command(t, qemu, bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s version: %v\n%s", filepath.Base(qemu), bin, err, out)
	}
	wantStaticVersion(t, string(out), arch)
	t.Logf("under %s:\n%s", filepath.Base(qemu), out)
}

// command is exec.Command bounded by the test's own deadline.
func command(t *testing.T, name string, args ...string) *exec.Cmd {
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-5*time.Second))
		t.Cleanup(cancel)
	}
	return exec.CommandContext(ctx, name, args...)
}

// runInMinimalRoot builds a root directory holding only the release binary,
// a pure-Go file reader (no C library anywhere), empty /etc and /tmp, the
// device nodes the jail grants, /proc, a workspace and canaries outside it;
// then, chrooted into it (in a private mount and PID namespace, as root or
// in a user namespace), runs brig version, and brig sandbox reading a file
// in the workspace (must work) and the canaries (must be refused).
func runInMinimalRoot(t *testing.T, bin string) {
	for _, tool := range []string{"unshare", "chroot", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (util-linux, coreutils): the minimal-root run needs it", tool)
		}
	}
	root := t.TempDir()
	canary := "RELEASECANARY" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	for _, d := range []string{"usr/local/bin", "etc", "tmp", "proc", "dev", "ws", "home/u/.ssh", "outside"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(filepath.Join(root, "tmp"), 0o1777)
	for _, d := range []string{"null", "zero", "full", "random", "urandom"} {
		if err := os.WriteFile(filepath.Join(root, "dev", d), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"ws/granted.txt":     "GRANTED-" + canary + "\n",
		"home/u/.ssh/id_rsa": "SECRET-" + canary + "\n",
		"outside/secret.txt": "SECRET-" + canary + "\n",
	}
	for p, c := range files {
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "usr/local/bin/brig"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	build := command(t, "go", "build", "-o", filepath.Join(root, "usr/local/bin/readfile"), "./testdata/readfile")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the pure-Go file reader: %v\n%s", err, out)
	}
	var listing []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			listing = append(listing, rel)
		}
		return nil
	})
	t.Logf("the minimal root holds: %s", strings.Join(listing, " "))

	// in runs argv chrooted in root.
	in := func(argv ...string) (string, int) {
		t.Helper()
		script := `set -e
r=$1; shift
mount -t proc proc "$r/proc"
for d in null zero full random urandom; do mount --bind "/dev/$d" "$r/dev/$d"; done
exec chroot "$r" "$@"`
		args := []string{"--mount", "--pid", "--fork", "--propagation", "private"}
		if os.Getuid() != 0 {
			args = append(args, "--user", "--map-root-user")
		}
		args = append(args, "/bin/sh", "-c", script, "sh", root)
		cmd := command(t, "unshare", append(args, argv...)...)
		// What brig sees: this PATH (used by unshare and chroot before the
		// chroot; nothing in the root is on it) and a HOME in the root.
		cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/home/u"}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("unshare: %v", err)
		}
		return out.String(), code
	}

	// The namespaces themselves must work, or nothing below means anything.
	if out, code := in("/usr/local/bin/readfile", "/ws/granted.txt"); code != 0 || !strings.Contains(out, "GRANTED-"+canary) {
		if os.Getuid() != 0 && strings.Contains(out, "unshare") {
			t.Skipf("no user namespace for an unprivileged minimal root here:\n%s", out)
		}
		t.Fatalf("CONTROL FAILED: the file reader does not run in the minimal root (exit %d):\n%s", code, out)
	}

	out, code := in("/usr/local/bin/brig", "version")
	if code != 0 {
		t.Fatalf("brig version in the minimal root: exit %d\n%s", code, out)
	}
	wantStaticVersion(t, out, runtime.GOARCH)
	t.Logf("brig version in the minimal root:\n%s", out)

	sandbox := []string{"/usr/local/bin/brig", "sandbox", "--workspace", "/ws", "--"}
	out, code = in(append(sandbox, "/usr/local/bin/readfile", "/ws/granted.txt")...)
	if code != 0 || !strings.Contains(out, "GRANTED-"+canary) {
		t.Fatalf("CONTROL FAILED: brig sandbox in the minimal root cannot read its workspace (exit %d):\n%s", code, out)
	}
	out, code = in(append(sandbox, "/usr/local/bin/readfile", "/home/u/.ssh/id_rsa", "/outside/secret.txt")...)
	if strings.Contains(out, "SECRET-"+canary) {
		t.Errorf("ESCAPE: the jail in the minimal root read a file outside its grant:\n%s", out)
	}
	if code == 0 || strings.Count(out, "permission denied") != 2 {
		t.Errorf("reading outside the workspace should fail twice with permission denied (exit %d):\n%s", code, out)
	}
	out, code = in(append(sandbox, "/usr/local/bin/brig", "version")...)
	if code != 0 {
		t.Fatalf("brig version inside the jail in the minimal root: exit %d\n%s", code, out)
	}
	wantStaticVersion(t, out, runtime.GOARCH)
}

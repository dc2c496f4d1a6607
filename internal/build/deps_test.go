package build

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// depsEnv runs deps.sh with a PATH made only of the tools it is given:
// stub package managers, a stub id (who the script thinks it runs as), an
// optional stub sudo, and links to the real sh, pkg-config and gcc.
type depsEnv struct {
	t      *testing.T
	bin    string // the PATH
	pcdir  string // PKG_CONFIG_LIBDIR: empty until a stub install fills it
	log    string // what the stub package managers were asked
	realPC string // the real libseccomp.pc, which a stub install copies
	env    []string
}

func newDepsEnv(t *testing.T, uid string) *depsEnv {
	t.Helper()
	pcfile := strings.TrimSpace(run(t, "pkg-config", "--variable=pcfiledir", "libseccomp")) + "/libseccomp.pc"
	if _, err := os.Stat(pcfile); err != nil {
		t.Fatalf("this machine's libseccomp.pc (the build needs it): %v", err)
	}
	dir := t.TempDir()
	e := &depsEnv{t: t, bin: filepath.Join(dir, "bin"), pcdir: filepath.Join(dir, "pkgconfig"),
		log: filepath.Join(dir, "pm.log"), realPC: pcfile}
	for _, d := range []string{e.bin, e.pcdir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tool := range []string{"sh", "pkg-config", "gcc", "mktemp", "rm", "tail", "cat", "env", "grep", "cp"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if err := os.Symlink(p, filepath.Join(e.bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	e.stub("id", `echo `+uid)
	e.env = []string{
		"PATH=" + e.bin, "PKG_CONFIG_LIBDIR=" + e.pcdir, "PKG_CONFIG_PATH=",
		"CC=gcc", "TMPDIR=" + dir, "LOG=" + e.log, "REAL_PC=" + e.realPC, "PCDIR=" + e.pcdir,
	}
	return e
}

func (e *depsEnv) stub(name, body string) {
	e.t.Helper()
	// Written with no fork in flight: a child another parallel subtest
	// forks while this file is open for writing holds it open until its
	// exec, and the stub's own exec then fails with ETXTBSY — for "id",
	// deps.sh took that for root (golang/go#22315).
	syscall.ForkLock.Lock()
	err := os.WriteFile(filepath.Join(e.bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755)
	syscall.ForkLock.Unlock()
	if err != nil {
		e.t.Fatal(err)
	}
}

// packageManager installs a stub NAME that logs its arguments and, when
// asked to install, "installs" libseccomp by copying the real .pc file into
// the empty pkg-config directory (so the script's check after the install
// passes, as it would after a real one).
func (e *depsEnv) packageManager(name string) {
	e.stub(name, `echo "`+name+` $*" >> "$LOG"
case " $* " in *" install "*|*" -S "*|*" add "*) cp "$REAL_PC" "$PCDIR/" ;; esac
exit 0`)
}

func (e *depsEnv) deps(extraEnv ...string) (string, int) {
	e.t.Helper()
	return e.depsGroup("build", extraEnv...)
}

// depsGroup runs deps.sh for one group.
func (e *depsEnv) depsGroup(group string, extraEnv ...string) (string, int) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "deps.sh", group)
	cmd.Env = append(append([]string{}, e.env...), extraEnv...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return out.String(), code
}

func (e *depsEnv) pmLog() string {
	b, err := os.ReadFile(e.log)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return string(out)
}

const missingSeccomp = "deps: missing libseccomp headers and library (the seccomp filter is compiled with it); "

// With pkg-config pointed at an empty directory, libseccomp is missing; in
// every situation the script either installs it (one line) or stops with
// one line naming the exact command.
func TestDepsMissingLibseccomp(t *testing.T) {
	tests := []struct {
		name  string
		uid   string
		pm    string // stub package manager ("" for none)
		sudo  string // stub sudo's answer to sudo -n true ("" for no sudo)
		env   []string
		want  string // the whole output
		code  int
		pmLog string // what the package manager was asked ("" for nothing)
	}{
		{name: "check mode names the command", uid: "1000", pm: "apt-get", sudo: "0", env: []string{"BRIG_DEPS=check"},
			want: missingSeccomp + "run: sudo apt-get install -y libseccomp-dev (BRIG_DEPS=check: nothing is installed)\n", code: 1},
		{name: "check mode as root", uid: "0", pm: "apt-get", env: []string{"BRIG_DEPS=check"},
			want: missingSeccomp + "run: apt-get install -y libseccomp-dev (BRIG_DEPS=check: nothing is installed)\n", code: 1},
		{name: "dnf", uid: "1000", pm: "dnf", env: []string{"BRIG_DEPS=check"},
			want: missingSeccomp + "run: sudo dnf install -y libseccomp-devel (BRIG_DEPS=check: nothing is installed)\n", code: 1},
		{name: "pacman", uid: "1000", pm: "pacman", env: []string{"BRIG_DEPS=check"},
			want: missingSeccomp + "run: sudo pacman -S --needed --noconfirm libseccomp (BRIG_DEPS=check: nothing is installed)\n", code: 1},
		{name: "apk", uid: "1000", pm: "apk", env: []string{"BRIG_DEPS=check"},
			want: missingSeccomp + "run: sudo apk add libseccomp-dev (BRIG_DEPS=check: nothing is installed)\n", code: 1},
		{name: "root installs", uid: "0", pm: "apt-get",
			want:  "deps: installing libseccomp-dev with apt-get: libseccomp headers and library (the seccomp filter is compiled with it)\n",
			pmLog: "apt-get install -y libseccomp-dev -q -o DPkg::Lock::Timeout=300\n"},
		{name: "root installs with dnf", uid: "0", pm: "dnf",
			want:  "deps: installing libseccomp-devel with dnf: libseccomp headers and library (the seccomp filter is compiled with it)\n",
			pmLog: "dnf install -y libseccomp-devel\n"},
		{name: "passwordless sudo installs", uid: "1000", pm: "apt-get", sudo: "0",
			want:  "deps: installing libseccomp-dev with apt-get: libseccomp headers and library (the seccomp filter is compiled with it)\n",
			pmLog: "sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y libseccomp-dev -q -o DPkg::Lock::Timeout=300\n"},
		{name: "sudo needs a password and there is no terminal", uid: "1000", pm: "apt-get", sudo: "1",
			want: missingSeccomp + "run: sudo apt-get install -y libseccomp-dev\n", code: 1},
		{name: "no sudo", uid: "1000", pm: "apt-get",
			want: missingSeccomp + "run as root: apt-get install -y libseccomp-dev\n", code: 1},
		{name: "no package manager", uid: "0",
			want: missingSeccomp + "no apt-get, dnf, pacman or apk here: install it with your system's package manager\n", code: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newDepsEnv(t, tc.uid)
			if tc.pm != "" {
				e.packageManager(tc.pm)
			}
			if tc.sudo != "" {
				// sudo -n true answers tc.sudo; anything else is logged and run.
				e.stub("sudo", `if [ "$1" = -n ] && [ "$2" = true ]; then exit `+tc.sudo+`; fi
echo "sudo $*" >> "$LOG"
[ "$1" = -n ] && shift
LOG=/dev/null exec "$@"`)
			}
			out, code := e.deps(tc.env...)
			if out != tc.want || code != tc.code {
				t.Errorf("deps.sh build: exit %d, output:\n%s\nwant exit %d, output:\n%s", code, out, tc.code, tc.want)
			}
			if got := e.pmLog(); got != tc.pmLog {
				t.Errorf("the package manager was asked:\n%q\nwant:\n%q", got, tc.pmLog)
			}
		})
	}
}

// A fresh container has no apt package lists: the first install fails, the
// script refreshes them once and installs again.
func TestDepsRefreshesAptListsOnce(t *testing.T) {
	t.Parallel()
	e := newDepsEnv(t, "0")
	e.stub("apt-get", `echo "apt-get $*" >> "$LOG"
case $1 in
update) : > "$PCDIR/../lists" ;;
install) [ -e "$PCDIR/../lists" ] || { echo "E: Unable to locate package libseccomp-dev"; exit 100; }
         cp "$REAL_PC" "$PCDIR/" ;;
esac`)
	out, code := e.deps()
	if code != 0 || strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "deps: installing libseccomp-dev with apt-get") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
	want := "apt-get install -y libseccomp-dev -q -o DPkg::Lock::Timeout=300\napt-get update -q -o DPkg::Lock::Timeout=300\napt-get install -y libseccomp-dev -q -o DPkg::Lock::Timeout=300\n"
	if got := e.pmLog(); got != want {
		t.Errorf("apt-get was asked:\n%s\nwant:\n%s", got, want)
	}
}

// A package manager that fails shows its output and stops with the command.
func TestDepsInstallFails(t *testing.T) {
	t.Parallel()
	e := newDepsEnv(t, "0")
	e.stub("dnf", `echo "Error: no package libseccomp-devel available"; exit 1`)
	out, code := e.deps()
	want := "deps: installing libseccomp-devel with dnf: libseccomp headers and library (the seccomp filter is compiled with it)\n" +
		"Error: no package libseccomp-devel available\n" +
		missingSeccomp + "`dnf install -y libseccomp-devel` failed (output above); run it yourself and fix what it says\n"
	if code != 1 || out != want {
		t.Errorf("exit %d, output:\n%s\nwant:\n%s", code, out, want)
	}
}

// An installed package that still leaves the check failing says so.
func TestDepsStillMissingAfterInstall(t *testing.T) {
	t.Parallel()
	e := newDepsEnv(t, "0")
	e.stub("apk", `exit 0`)
	out, code := e.deps()
	if code != 1 || !strings.Contains(out, missingSeccomp+"still not found after installing libseccomp-dev; pkg-config must find libseccomp.pc") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
}

// A missing C compiler is installed before libseccomp, in the same call.
func TestDepsMissingCompiler(t *testing.T) {
	t.Parallel()
	e := newDepsEnv(t, "1000")
	e.packageManager("apt-get")
	out, code := e.deps("CC=/nonexistent/cc -O2", "BRIG_DEPS=check")
	want := "deps: missing a C compiler for cgo (/nonexistent/cc), libseccomp headers and library (the seccomp filter is compiled with it); run: sudo apt-get install -y gcc libseccomp-dev (BRIG_DEPS=check: nothing is installed)\n"
	if code != 1 || out != want {
		t.Errorf("exit %d, output:\n%s\nwant:\n%s", code, out, want)
	}
}

// On this machine (the build works) nothing is missing and nothing is said.
func TestDepsNothingMissing(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("/bin/sh", "deps.sh", "build")
	cmd.Env = append(os.Environ(), "BRIG_DEPS=check")
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Errorf("deps.sh build on the build machine: %v\n%s", err, out)
	}
}

// make build on a machine without libseccomp stops at the dependency check
// with the script's line, before the compiler's cgo error.
func TestMakeBuildStopsWithTheCommand(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	empty := t.TempDir()
	cmd := exec.Command("make", "-C", "../..", "--no-print-directory", "build", "BIN="+filepath.Join(empty, "brig"))
	cmd.Env = append(os.Environ(), "PKG_CONFIG_LIBDIR="+empty, "PKG_CONFIG_PATH=", "BRIG_DEPS=check")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("make build succeeded without libseccomp:\n%s", out)
	}
	if !strings.Contains(string(out), missingSeccomp+"run: ") || strings.Contains(string(out), "go build") {
		t.Errorf("make build should stop at the dependency check with the command to run:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(empty, "brig")); err == nil {
		t.Errorf("a binary was built")
	}
}

// optionalGroups are deps.sh's groups whose one requirement is optional:
// the group, the Debian package, the program it puts on PATH, and the
// script's description of it.
var optionalGroups = []struct{ group, pkg, prog, what string }{
	{"musl", "musl-tools", "musl-gcc", "musl-gcc (optional: init and the worker, which start for every call, start faster linked with musl)"},
	{"bench", "bubblewrap", "bwrap", "bubblewrap (optional: make bench times bwrap --unshare-all beside brig sandbox)"},
}

// An optional requirement is installed where the script can, and
// otherwise one line says how, and the make target goes on (exit 0): the
// build with the system's C library, the bench without bwrap's column.
func TestDepsOptionalGroups(t *testing.T) {
	for _, g := range optionalGroups {
		for _, tc := range []struct {
			name, uid string
			env       []string
			have      bool // the program is on PATH already
			want      string
			pmLog     string
		}{
			{name: "root installs", uid: "0",
				want:  "deps: installing " + g.pkg + " with apt-get: " + g.what + "\n",
				pmLog: "apt-get install -y " + g.pkg + " -q -o DPkg::Lock::Timeout=300\n"},
			{name: "no sudo: says how and goes on", uid: "1000",
				want: "deps: skipping " + g.what + ": to include it, run: sudo apt-get install -y " + g.pkg + "\n"},
			{name: "check mode", uid: "0", env: []string{"BRIG_DEPS=check"},
				want: "deps: skipping " + g.what + ": run: apt-get install -y " + g.pkg + " (BRIG_DEPS=check: nothing is installed)\n"},
			{name: "already there", uid: "0", have: true},
		} {
			t.Run(g.group+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				e := newDepsEnv(t, tc.uid)
				// The stub apt-get "installs" the package by putting its
				// program on PATH, as the real package does.
				e.stub("apt-get", `echo "apt-get $*" >> "$LOG"
case " $* " in *" `+g.pkg+` "*) cp "${0%/*}/id" "${0%/*}/`+g.prog+`" ;; esac`)
				if tc.have {
					e.stub(g.prog, "exit 0")
				}
				out, code := e.depsGroup(g.group, tc.env...)
				if out != tc.want || code != 0 {
					t.Errorf("deps.sh %s: exit %d, output:\n%s\nwant exit 0, output:\n%s", g.group, code, out, tc.want)
				}
				if got := e.pmLog(); got != tc.pmLog {
					t.Errorf("the package manager was asked:\n%q\nwant:\n%q", got, tc.pmLog)
				}
			})
		}
	}
}

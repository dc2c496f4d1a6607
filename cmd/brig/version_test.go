package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"brig/internal/jailexe"

	"github.com/spf13/pflag"
)

func runRoot(t *testing.T, args ...string) string {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		t.Fatalf("brig %v: %v\n%s", args, err, out.String())
	}
	return out.String()
}

// brig version and brig --version print the same report: version, commit,
// build date, Go version and how libseccomp is linked (this test binary is
// a cgo build, so dynamically).
func TestVersion(t *testing.T) {
	text := runRoot(t, "version")
	if flag := runRoot(t, "--version"); flag != text {
		t.Errorf("--version:\n%s\nversion:\n%s", flag, text)
	}
	for _, re := range []string{
		`(?m)^brig \S+\n`,
		`(?m)^commit: +\S`,
		`(?m)^built: +\S`,
		`(?m)^go: +` + regexp.QuoteMeta(runtime.Version()+" linux/"+runtime.GOARCH) + `$`,
		`(?m)^seccomp: libseccomp \d+\.\d+\.\d+, linked dynamically \(libseccomp\.so\.\d+ must be installed\)$`,
		`(?m)^jail: +no carried programs \(not built with internal/build/build\.sh\): calls re-execute brig itself$`,
	} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("brig version does not match %s:\n%s", re, text)
		}
	}
	var bi buildInfo
	if err := json.Unmarshal([]byte(runRoot(t, "version", "--json")), &bi); err != nil {
		t.Fatal(err)
	}
	if bi.Linkage != "dynamic" || bi.Go != runtime.Version() || bi.Libseccomp == "" {
		t.Errorf("version --json: %+v", bi)
	}
}

// The release stamps (make release's -ldflags -X) are what version reports.
func TestVersionStamps(t *testing.T) {
	defer func(v, c, d, j string) { version, commit, buildDate, jailexe.CarriedC = v, c, d, j }(version, commit, buildDate, jailexe.CarriedC)
	version, commit, buildDate, jailexe.CarriedC = "v1.2.3", "0123456789abcdef0123456789abcdef01234567", "2026-11-25T12:00:00Z", "musl"
	text := runRoot(t, "version")
	for _, want := range []string{"brig v1.2.3\n", "commit:  0123456789abcdef0123456789abcdef01234567", "built:   2026-11-25T12:00:00Z\n",
		"jail:    init and the workers carried inside brig, linked with musl\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	jailexe.CarriedC = "system"
	if text := runRoot(t, "version"); !strings.Contains(text, "linked with the system's C library (with musl-gcc installed, make links them with musl") {
		t.Errorf("a build without musl:\n%s", text)
	}
}

func TestLinkage(t *testing.T) {
	if l, needs := linkage("/proc/self/exe"); l != "dynamic" || len(needs) == 0 {
		t.Errorf("this cgo test binary: %s %v", l, needs)
	}
	notELF := filepath.Join(t.TempDir(), "x")
	os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755)
	if l, _ := linkage(notELF); l != "unknown" {
		t.Errorf("a script: %s", l)
	}
	// A static binary is judged in internal/build's release test, on the
	// real release build.
}

// The man page lists every visible command and flag, and is valid roff
// for groff's strictest warnings.
func TestManPage(t *testing.T) {
	page := runRoot(t, "man")
	if !strings.HasPrefix(page, `.TH BRIG 1 `) {
		t.Errorf("the page does not start with .TH:\n%.200s", page)
	}
	root := newRootCmd()
	for _, c := range visibleCommands(root) {
		if !strings.Contains(page, ".SS \""+roffText(c.CommandPath())) {
			t.Errorf("command %q is not in the man page", c.CommandPath())
		}
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden && f.Name != "help" && !isCompletion(c.Parent()) && !strings.Contains(page, `\-\-`+roffText(f.Name)) {
				t.Errorf("flag --%s of %s is not in the man page", f.Name, c.CommandPath())
			}
		})
	}
	if strings.Contains(page, "\n.SS \"brig man") || strings.Contains(page, "powershell | Out-String") {
		t.Errorf("hidden commands or completion how-tos are in the page")
	}
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff is not installed: the roff is not checked")
	}
	file := filepath.Join(t.TempDir(), "brig.1")
	os.WriteFile(file, []byte(page), 0o644)
	if msg, err := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z", file).CombinedOutput(); err != nil || len(msg) != 0 {
		t.Errorf("groff -ww: %v\n%s", err, msg)
	}
}

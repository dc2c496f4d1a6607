package build

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// make install honours PREFIX and DESTDIR and installs the binary, the
// three completions and the man page; make uninstall removes exactly those
// and leaves everything else under the prefix alone.
func TestMakeInstallAndUninstall(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	dest := t.TempDir()
	bin := filepath.Join(t.TempDir(), "brig")
	const prefix = "/opt/brig-test"
	root := filepath.Join(dest, prefix)
	// Somebody else's files in the same directories must survive uninstall.
	other := filepath.Join(root, "share/man/man1/other.1")
	if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte(".TH OTHER 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	mk := func(target string) string {
		t.Helper()
		cmd := exec.Command("make", "-C", "../..", "--no-print-directory", target,
			"PREFIX="+prefix, "DESTDIR="+dest, "BIN="+bin)
		cmd.Env = append(os.Environ(), "BRIG_DEPS=check") // a test never installs packages
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make %s: %v\n%s", target, err, out)
		}
		return string(out)
	}
	out := mk("install")

	want := map[string]struct {
		mode    fs.FileMode
		content string // a fact about what it is
	}{
		"bin/brig":                                  {0o755, "\x7fELF"},
		"share/bash-completion/completions/brig":    {0o644, "__start_brig"},
		"share/zsh/site-functions/_brig":            {0o644, "#compdef brig"},
		"share/fish/vendor_completions.d/brig.fish": {0o644, "complete -c brig"},
		"share/man/man1/brig.1":                     {0o644, ".TH BRIG 1"},
	}
	for rel, w := range want {
		p := filepath.Join(root, rel)
		fi, err := os.Stat(p)
		if err != nil {
			t.Errorf("%s was not installed: %v\n%s", rel, err, out)
			continue
		}
		if fi.Mode().Perm() != w.mode {
			t.Errorf("%s: mode %v, want %v", rel, fi.Mode().Perm(), w.mode)
		}
		b, _ := os.ReadFile(p)
		if !bytes.Contains(b, []byte(w.content)) {
			t.Errorf("%s does not contain %q", rel, w.content)
		}
		if !strings.Contains(out, "install: "+p) {
			t.Errorf("make install did not say it installed %s:\n%s", p, out)
		}
	}
	built, _ := os.ReadFile(bin)
	installed, _ := os.ReadFile(filepath.Join(root, "bin/brig"))
	if len(built) == 0 || !bytes.Equal(built, installed) {
		t.Errorf("the installed binary is not the one make built (%d and %d bytes)", len(built), len(installed))
	}
	// Nothing else was installed.
	var files []string
	filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			files = append(files, rel)
		}
		return nil
	})
	slices.Sort(files)
	wantFiles := []string{"bin/brig", "share/bash-completion/completions/brig", "share/fish/vendor_completions.d/brig.fish",
		"share/man/man1/brig.1", "share/man/man1/other.1", "share/zsh/site-functions/_brig"}
	if !slices.Equal(files, wantFiles) {
		t.Errorf("files under DESTDIR/PREFIX after install:\n%v\nwant:\n%v", files, wantFiles)
	}

	mk("uninstall")
	files = files[:0]
	filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if !slices.Equal(files, []string{other}) {
		t.Errorf("after uninstall the files are %v, want only %s", files, other)
	}
	// Uninstalling again is not an error.
	mk("uninstall")
}

// make install on an AppArmor machine installs brig's profile for the
// installed binary when the parser accepts it, and says why not when it
// does not; make uninstall removes it. The parser is a stub that records
// how it was called (so the test also shows that nothing is loaded into
// the kernel for a DESTDIR install), standing for AppArmor 4 (accepts) and
// AppArmor 3 (rejects the userns rule).
func TestMakeInstallAppArmorProfile(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	for _, tc := range []struct {
		name    string
		accepts bool
	}{{"apparmor 4", true}, {"apparmor 3", false}} {
		t.Run(tc.name, func(t *testing.T) {
			dest := t.TempDir()
			bin := filepath.Join(t.TempDir(), "brig")
			const prefix = "/opt/brig-aa"
			aadir := filepath.Join(dest, "/etc/apparmor.d")
			if err := os.MkdirAll(aadir, 0o755); err != nil {
				t.Fatal(err)
			}
			calls := filepath.Join(t.TempDir(), "calls")
			parser := filepath.Join(t.TempDir(), "apparmor_parser")
			exit := "1"
			if tc.accepts {
				exit = "0"
			}
			stub := "#!/bin/sh\necho \"$*\" >> " + calls + "\ncase $1 in --version) echo 'AppArmor parser version X'; exit 0;; esac\n" +
				"[ " + exit + " = 1 ] && echo 'AppArmor parser error: syntax error, unexpected TOK_END_OF_RULE' >&2\nexit " + exit + "\n"
			if err := os.WriteFile(parser, []byte(stub), 0o755); err != nil {
				t.Fatal(err)
			}
			mk := func(target string) string {
				t.Helper()
				cmd := exec.Command("make", "-C", "../..", "--no-print-directory", target,
					"PREFIX="+prefix, "DESTDIR="+dest, "BIN="+bin, "APPARMOR_PARSER="+parser)
				cmd.Env = append(os.Environ(), "BRIG_DEPS=check")
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("make %s: %v\n%s", target, err, out)
				}
				return string(out)
			}
			out := mk("install")
			profile := filepath.Join(aadir, "brig")
			got, err := os.ReadFile(profile)
			logged, _ := os.ReadFile(calls)
			if !tc.accepts {
				if err == nil {
					t.Fatalf("a profile the parser rejected was installed:\n%s", got)
				}
				if !strings.Contains(out, "does not accept the profile") || !strings.Contains(out, "needs AppArmor 4") {
					t.Errorf("make install did not say why no profile was installed:\n%s", out)
				}
				return
			}
			if err != nil {
				t.Fatalf("the profile was not installed: %v\n%s", err, out)
			}
			if !strings.Contains(string(got), `profile brig "`+prefix+`/bin/brig" flags=(unconfined) {`) || !strings.Contains(string(got), "  userns,") {
				t.Errorf("the profile does not let %s/bin/brig create user namespaces:\n%s", prefix, got)
			}
			if !strings.Contains(out, "install: "+profile) {
				t.Errorf("make install did not say it installed %s:\n%s", profile, out)
			}
			if !strings.Contains(string(logged), "-Q -K ") || strings.Contains(string(logged), "-r ") {
				t.Errorf("the parser was called %q: want a check (-Q) and, under DESTDIR, no load (-r)", logged)
			}
			mk("uninstall")
			if _, err := os.Stat(profile); !os.IsNotExist(err) {
				t.Errorf("uninstall left the profile: %v", err)
			}
		})
	}
}

// The shipped profile is valid AppArmor: with a parser that knows the
// userns rule (AppArmor 4) as it is; with an older one (Debian 12 has
// AppArmor 3), everything but that rule, under the abi it knows.
func TestAppArmorProfileParses(t *testing.T) {
	parser, err := exec.LookPath("apparmor_parser")
	if err != nil {
		t.Skip("apparmor_parser is not installed (apt-get install apparmor)")
	}
	src, err := os.ReadFile("apparmor/brig")
	if err != nil {
		t.Fatal(err)
	}
	profile := strings.ReplaceAll(string(src), "@BIN@", "/usr/local/bin/brig")
	check := func(text string) error {
		p := filepath.Join(t.TempDir(), "brig")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(parser, "-Q", "-K", p).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	}
	if err := check(profile); err == nil {
		return // AppArmor 4: the real profile parses
	}
	older := strings.Replace(strings.Replace(profile, "abi <abi/4.0>,", "abi <abi/3.0>,", 1), "  userns,\n", "", 1)
	if older == profile {
		t.Fatal("the profile no longer has the lines this test adapts")
	}
	if err := check(older); err != nil {
		t.Fatalf("the profile (less the userns rule) does not parse with this AppArmor: %v", err)
	}
	t.Logf("this apparmor_parser predates user namespace rules; the rest of the profile parses")
}

package build

import (
	"bytes"
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

package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brig/jail"
)

// tree builds a workspace, a home with secrets and an outside directory,
// with symlinks between them, under a canonical temp root.
func tree(t testing.TB) (root, ws, home string) {
	t.Helper()
	// Outside /tmp, which a bash call sees as its own private directory.
	root, err := os.MkdirTemp("/var/tmp", "brig-policy-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if root, err = filepath.EvalSymlinks(root); err != nil {
		t.Fatal(err)
	}
	ws, home = filepath.Join(root, "ws"), filepath.Join(root, "home")
	for _, d := range []string{ws + "/src", ws + "/.git/hooks", home + "/.ssh", home + "/notes", root + "/out/deep"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{ws + "/src/a.go", home + "/.ssh/id_ed25519", home + "/notes/n.md", root + "/out/deep/x"} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		ws + "/tokey":     home + "/.ssh/id_ed25519", // absolute, out of the workspace
		ws + "/src/up":    "../..",                   // relative, climbs to root
		ws + "/inner":     "src",                     // relative, stays inside
		ws + "/loop":      "loop",                    // ELOOP
		ws + "/dangling":  root + "/out/missing/file",
		ws + "/src/hooks": "../.git/hooks",
	}
	for l, target := range links {
		if err := os.Symlink(target, l); err != nil {
			t.Fatal(err)
		}
	}
	return root, ws, home
}

func TestResolvePath(t *testing.T) {
	root, ws, home := tree(t)
	cases := []struct {
		given, dir string
		want       string
		exists     bool
		err        string
	}{
		{"src/a.go", ws, ws + "/src/a.go", true, ""},
		{"./src/../src/a.go", ws, ws + "/src/a.go", true, ""},
		{"~/notes/n.md", ws, home + "/notes/n.md", true, ""},
		{"~", ws, home, true, ""},
		{"tokey", ws, home + "/.ssh/id_ed25519", true, ""},
		{"inner/a.go", ws, ws + "/src/a.go", true, ""},
		// The kernel resolves the link before "..": src/up is root, so
		// src/up/.. is root's parent, not ws/src.
		{"src/up/..", ws, filepath.Dir(root), true, ""},
		{"src/up/out/deep/x", ws, root + "/out/deep/x", true, ""},
		{"../out/deep/x", ws, root + "/out/deep/x", true, ""},
		{"new/dir/file.txt", ws, ws + "/new/dir/file.txt", false, ""},
		{"dangling", ws, root + "/out/missing/file", false, ""},
		{"src/a.go/child", ws, ws + "/src/a.go/child", false, ""},
		{"src/hooks/pre-commit", ws, ws + "/.git/hooks/pre-commit", false, ""},
		{"a.go", ws + "/src", ws + "/src/a.go", true, ""},
		{"/etc/../etc/hostname", ws, "/etc/hostname", true, ""},
		{"loop", ws, "", false, "too many levels"},
		{"", ws, "", false, "empty path"},
		{"rel", "relative-dir", "", false, "not absolute"},
	}
	for _, c := range cases {
		got, exists, err := ResolvePath(c.given, c.dir, home)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ResolvePath(%q): err %v, want one containing %q", c.given, err, c.err)
			}
			continue
		}
		if c.given == "/etc/../etc/hostname" {
			if _, err := os.Stat("/etc/hostname"); err != nil {
				continue
			}
		}
		if err != nil || got != c.want || exists != c.exists {
			t.Errorf("ResolvePath(%q, %q) = %q, %v, %v; want %q, %v", c.given, c.dir, got, exists, err, c.want, c.exists)
		}
	}
}

func TestClassify(t *testing.T) {
	root, ws, home := tree(t)
	pl := Places{Workspace: ws, Home: home, Protected: []string{ws + "/.git/hooks", ws + "/.brig"}, BrigDirs: []string{home + "/.config/brig"}}
	cases := map[string]PathClass{
		ws:                              ClassWorkspace,
		ws + "/src/a.go":                ClassWorkspace,
		ws + "/.git/hooks/pre-commit":   ClassProtected,
		ws + "/.git/config":             ClassProtected, // by shape, even when not listed
		ws + "/vendor/x/.git/hooks/a":   ClassProtected, // a repository that appears later
		ws + "/.vscode/tasks.json":      ClassProtected,
		ws + "/.git/objects/ab":         ClassWorkspace,
		ws + "/.gitignore":              ClassWorkspace,
		home + "/.ssh/id_ed25519":       ClassSecret,
		home + "/.config/brig/cred":     ClassSecret,
		home + "/.netrc":                ClassSecret,
		"/etc/shadow":                   ClassSecret,
		"/etc/ssl/private/key.pem":      ClassSecret,
		"/etc/passwd":                   ClassSystem,
		"/usr/include/stdio.h":          ClassSystem,
		home + "/notes/n.md":            ClassOutside,
		root + "/out/deep/x":            ClassOutside,
		"/usrlocal":                     ClassOutside, // a prefix is not a parent
		"/tmp/x":                        ClassOutside,
		home + "/.sshfoo":               ClassOutside,
		home + "/.config/brig-notes/x":  ClassOutside,
		home + "/.config/gcloud/creds":  ClassSecret,
		ws + "-sibling/file":            ClassOutside,
		"/etc/../root/.ssh/id_rsa.pub":  ClassOutside, // cleaned before it is placed
		"/proc/self/environ":            ClassOutside,
		home + "/.local/share/keyrings": ClassSecret,
	}
	for p, want := range cases {
		if got := pl.Classify(p); got != want {
			t.Errorf("Classify(%s) = %s, want %s", p, got, want)
		}
	}
}

func FuzzResolvePath(f *testing.F) {
	for _, s := range []string{"a/b", "../x", "~/y", "/etc/../x", "a//b/./c", "~", "..", "/", "a/../../.."} {
		f.Add(s)
	}
	base, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, given string) {
		got, _, err := ResolvePath(given, base, "/home/fuzz")
		if err != nil {
			return
		}
		// Always absolute and clean: what the classifier and the jail
		// compare against must never contain "..", "." or "//".
		if !filepath.IsAbs(got) || filepath.Clean(got) != got {
			t.Fatalf("ResolvePath(%q) = %q: not absolute and clean", given, got)
		}
	})
}

// TestProtectedFromTheStartUpSearch: a policy's protected paths come from
// a search run in the background; a decision waits for it (a bare
// repository's config, found only by that search, is protected at the
// first decision), a search that failed protects the
// whole workspace, and a workspace that cannot be listed is refused by
// New at once.
func TestProtectedFromTheStartUpSearch(t *testing.T) {
	root, ws, home := tree(t)
	// A bare repository: nothing in its paths names .git, so only the
	// search's list protects it.
	nested := filepath.Join(ws, "vendor", "lib.git")
	for _, d := range []string{"hooks", "objects", "refs"} {
		if err := os.MkdirAll(filepath.Join(nested, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(nested, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := Machine{Home: home, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + home}, Namespaces: true,
		CacheRoot: filepath.Join(root, "cache"), BrigDirs: []string{filepath.Join(home, ".config", "brig")}, Limits: jail.DefaultLimits()}
	p, err := New(ws, Loaded{}, ModeAuto, m)
	if err != nil {
		t.Fatal(err)
	}
	if p.Places.search == nil {
		t.Fatal("no start-up search")
	}
	if c := p.Places.Classify(filepath.Join(nested, "config")); c != ClassProtected {
		t.Errorf("the bare repository's config: %s, want protected", c)
	}
	if c := p.Places.Classify(filepath.Join(ws, "src", "a.go")); c != ClassWorkspace {
		t.Errorf("a source file: %s, want workspace (the control)", c)
	}
	failed := Places{Workspace: ws, Home: home, search: &protectedSearch{done: make(chan struct{}), err: errors.New("gone")}}
	close(failed.search.done)
	if c := failed.Classify(filepath.Join(ws, "src", "a.go")); c != ClassProtected {
		t.Errorf("after a failed search, a source file: %s, want protected", c)
	}
	file := filepath.Join(ws, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(file, Loaded{}, ModeAuto, m); err == nil || !strings.Contains(err.Error(), "find the protected paths") {
		t.Errorf("a workspace that cannot be listed: %v, want the search's error", err)
	}
}

// TestProtectedRuleWarnings: an allow rule that would grant writing a
// protected path (from the start-up search's list: the workspace's git
// hooks) or brig's own files is reported; rules that do not, and no write rule at
// all, report nothing.
func TestProtectedRuleWarnings(t *testing.T) {
	for _, c := range []struct {
		rules string
		want  string
	}{
		{"", ""},
		{"[permissions]\nallow = [\"Write(./gen/**)\"]\n", ""},
		{"[permissions]\nallow = [\"Write(./.git/hooks/**)\"]\n", ".git/hooks"},
		{"[permissions]\nallow = [\"Write(~/.config/brig/**)\"]\n", ".config/brig"},
	} {
		p, _, _, _ := testPolicy(t, ModeAsk, c.rules)
		got := p.ProtectedRuleWarnings()
		switch {
		case c.want == "" && len(got) != 0:
			t.Errorf("rules %q: warnings %q, want none", c.rules, got)
		case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want)):
			t.Errorf("rules %q: warnings %q, want one naming %s", c.rules, got, c.want)
		}
	}
}

package sensitive

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestEntriesAreWellFormed(t *testing.T) {
	lists := map[string][]Entry{"Home": Home(), "System": System(), "Workspace": Workspace()}
	for name, es := range lists {
		seen := map[string]bool{}
		for _, e := range es {
			key := e.Path + "|" + e.Kind.String()
			if seen[key] {
				t.Errorf("%s: %q (%s) listed twice", name, e.Path, e.Kind)
			}
			seen[key] = true
			if e.Path == "" || strings.HasPrefix(e.Path, "/") || filepath.Clean(e.Path) != e.Path || strings.HasPrefix(e.Path, "..") {
				t.Errorf("%s: %q is not a clean relative path", name, e.Path)
			}
			if strings.TrimSpace(e.Reason) == "" {
				t.Errorf("%s: %q has no reason", name, e.Path)
			}
			if e.Kind != Secret && e.Kind != LaterExec {
				t.Errorf("%s: %q has no kind", name, e.Path)
			}
		}
	}
}

func TestMatch(t *testing.T) {
	const home = "/home/u"
	cases := []struct {
		path string
		kind Kind
		want string // entry path, "" for no match
	}{
		{"/home/u/.ssh/id_rsa", Secret, ".ssh"},
		{"/home/u/.ssh", Secret, ".ssh"},
		{"/home/u/.sshx", Secret, ""},
		{"/home/u/.config/git/credentials", Secret, ".config/git/credentials"},
		{"/home/u/.config/git/config", Secret, ""},
		{"/home/u/.config/git/config", LaterExec, ".config/git"},
		{"/home/u/.bashrc", LaterExec, ".bashrc"},
		{"/home/u/.bashrc", Secret, ""},
		{"/home/u/src/project/.bashrc", LaterExec, ""},
		{"/etc/cron.d/x", LaterExec, "etc/cron.d"},
		{"/etc/shadow", Secret, "etc/shadow"},
		{"/etc/passwd", Secret, ""},
		{"/home/u/../u/.profile", LaterExec, ".profile"},
	}
	for _, c := range cases {
		e, ok := Match(c.path, home, c.kind)
		if got := map[bool]string{true: e.Path}[ok]; got != c.want {
			t.Errorf("Match(%q, %s) = %q, want %q", c.path, c.kind, got, c.want)
		}
	}
	if _, ok := Match("/root/.bashrc", "", LaterExec); ok {
		t.Error("with no home, a home entry matched")
	}
}

func TestAbs(t *testing.T) {
	got := Abs("/home/u", Secret)
	var ssh, shadow bool
	for _, p := range got {
		ssh = ssh || p == "/home/u/.ssh"
		shadow = shadow || p == "/etc/shadow"
		if p == "/home/u/.bashrc" {
			t.Error("a LaterExec entry in the Secret list")
		}
	}
	if !ssh || !shadow {
		t.Errorf("Abs(Secret) lacks ~/.ssh or /etc/shadow: %v", got)
	}
}

func TestPatternEntries(t *testing.T) {
	const home = "/home/u"
	if e, ok := Match("/home/u/.nvm/versions/node/v20.1.0/etc/npmrc", home, Secret); !ok || e.Path != ".nvm/versions/node/*/etc" {
		t.Errorf("nvm's global npmrc: %v %v", e, ok)
	}
	if _, ok := Match("/home/u/.nvm/versions/node/v20.1.0/bin/node", home, Secret); ok {
		t.Error("control: node's binary matched a secret")
	}
	if _, ok := Match("/home/u/.nvm/versions/node/v20/x/etc", home, Secret); ok {
		t.Error("a pattern segment crossed a slash")
	}
}

func TestUnder(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{".nvm/versions/node/v20/etc", ".nvm/versions/node/v22/etc", ".nvm/versions/node/v22/bin"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	paths := func(fs []Found) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Path)
		}
		return out
	}
	got := paths(Under(home, home, Secret))
	for _, want := range []string{home + "/.ssh", home + "/.config/git/credentials", home + "/.nvm/versions/node/v20/etc", home + "/.nvm/versions/node/v22/etc", home + "/.config/brig"} {
		if !slices.Contains(got, want) {
			t.Errorf("Under(home) lacks %s", want)
		}
	}
	// A root deeper than a pattern's fixed part.
	got = paths(Under(home+"/.nvm/versions/node/v22", home, Secret))
	if !slices.Equal(got, []string{home + "/.nvm/versions/node/v22/etc"}) {
		t.Errorf("Under(v22) = %v", got)
	}
	// Controls: a narrow toolchain directory holds nothing; the root itself is not "under".
	if got := Under(home+"/.nvm/versions/node/v22/bin", home, Secret); len(got) != 0 {
		t.Errorf("Under(bin) = %v", got)
	}
	if got := paths(Under(home+"/.ssh", home, Secret)); slices.Contains(got, home+"/.ssh") {
		t.Errorf("a root is listed under itself: %v", got)
	}
	if got := paths(Under("/etc", home, Secret)); !slices.Contains(got, "/etc/shadow") || slices.Contains(got, home+"/.ssh") {
		t.Errorf("Under(/etc) = %v", got)
	}
	if e, ok := Contains(home+"/.config", home, Secret); !ok || e.Path == "" {
		t.Error("~/.config holds secrets")
	}
	if _, ok := Contains(home+"/.local/bin", home, Secret); ok {
		t.Error("control: ~/.local/bin holds no secret")
	}
}

func TestMatchWorkspace(t *testing.T) {
	for rel, want := range map[string]bool{
		".envrc": true, ".husky/pre-commit": true, ".config/lefthook.yml": true, "lefthook.yml": true,
		".pre-commit-config.yaml": true, "src/.envrc": false, "README.md": false, ".config/other": false,
	} {
		if _, ok := MatchWorkspace(rel); ok != want {
			t.Errorf("MatchWorkspace(%q) = %v, want %v", rel, ok, want)
		}
	}
}

func TestLooksLikeCredential(t *testing.T) {
	for name, want := range map[string]bool{
		"credentials": true, "id_ed25519": true, "server.key": true, ".netrc": true,
		".env.local": true, "deploy.pem": true, "README.md": false, "config": false, "go.mod": false, "key": false,
		"secrets.py": false, "passwd": false, "npmrc": false,
	} {
		if got := LooksLikeCredential(name); got != want {
			t.Errorf("LooksLikeCredential(%q) = %v, want %v", name, got, want)
		}
	}
}

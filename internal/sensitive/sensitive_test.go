package sensitive

import (
	"path/filepath"
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

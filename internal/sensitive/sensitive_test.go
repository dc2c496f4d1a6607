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
		// Mercurial's other repository configs, jj's per-workspace one,
		// and other agents' hooks; a Cline rule or a workflow is not one.
		".hg/hgrc-not-shared": true, ".hg/sharedpath": true, ".hg/store/data": false,
		".jj/workspace-config.toml": true, ".jj/working_copy/tree_state": false,
		".clinerules/hooks/PreToolUse": true, ".clinerules/style.md": false,
		".github/hooks/hooks.json": true, ".github/workflows/ci.yml": false,
		".factory/settings.json": true, ".junie/mcp/mcp.json": true, ".junie/guidelines.md": false, ".fleet/run.json": true,
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

// scanUnder and scanContains are Index.Under and Index.Contains as plain
// scans of every entry in list order: the indexed lookups must give the
// same answers, in the same order.
func scanUnder(ix *Index, root string, k Kind) []Found {
	root = filepath.Clean(root)
	prefix := strings.TrimSuffix(root, "/") + "/"
	var out []Found
	for _, e := range ix.entries {
		if e.Kind != k {
			continue
		}
		if !e.meta {
			if strings.HasPrefix(e.Path, prefix) {
				out = append(out, Found{Path: e.Path, Entry: e.Entry})
			}
			continue
		}
		if !strings.HasPrefix(e.fixed, prefix) && e.fixed != root && !strings.HasPrefix(prefix, e.prefix) {
			continue
		}
		matches, _ := filepath.Glob(e.Path)
		for _, m := range matches {
			if m != root && strings.HasPrefix(m, prefix) {
				out = append(out, Found{Path: m, Entry: e.Entry})
			}
		}
	}
	return out
}

func scanContains(ix *Index, dir string, k Kind) (Entry, bool) {
	dir = filepath.Clean(dir)
	for _, e := range ix.entries {
		if e.Kind == k && within(dir, e.Path) {
			return ix.relative(e.Entry), true
		}
	}
	if f := scanUnder(ix, dir, k); len(f) > 0 {
		return ix.relative(f[0].Entry), true
	}
	return Entry{}, false
}

func TestIndexedLookupsAnswerAsAScan(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{".nvm/versions/node/v20/etc", ".nvm/versions/node/v22/bin", ".ssh", ".config/gh"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ix := NewIndex(home)
	// Every entry's path, each of its parents, a sibling and a child; the
	// roots of a bash grant.
	roots := map[string]bool{"/": true, "/usr": true, "/usr/bin": true, "/etc": true, "/var": true, "/tmp": true, home: true, filepath.Dir(home): true,
		home + "/.nvm/versions/node/v20/etc": true, home + "/.nvm/versions/node/v20/etc/npmrc": true, home + "/.nvm/versions/node/v22": true}
	for _, e := range ix.entries {
		for p := e.Path; p != "/" && p != "."; p = filepath.Dir(p) {
			roots[p], roots[p+"x"], roots[p+"/x"] = true, true, true
		}
	}
	if len(roots) < 300 {
		t.Fatalf("only %d paths to ask about: the lists are shorter than this test assumes", len(roots))
	}
	var asked, under, contained int
	for r := range roots {
		for _, k := range []Kind{Secret, LaterExec, Kind(0), kinds} {
			asked++
			got, want := ix.Under(r, k), scanUnder(ix, r, k)
			if !slices.Equal(got, want) {
				t.Errorf("Under(%q, %s) = %v, a scan gives %v", r, k, got, want)
			}
			under += len(got)
			ge, gok := ix.Contains(r, k)
			we, wok := scanContains(ix, r, k)
			if ge != we || gok != wok {
				t.Errorf("Contains(%q, %s) = %v %v, a scan gives %v %v", r, k, ge, gok, we, wok)
			}
			if gok {
				contained++
			}
		}
	}
	// The comparisons saw entries found, not only empty answers.
	if under < 500 || contained < 200 {
		t.Errorf("%d questions found %d entries under their roots and %d containing ones: too few to compare", asked, under, contained)
	}
}

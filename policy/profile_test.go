package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"brig/jail"
)

func testProfile(t *testing.T) Profile {
	t.Helper()
	root := t.TempDir()
	p := Profile{
		Workspace: filepath.Join(root, "ws"), Home: filepath.Join(root, "home"),
		ParentEnv: []string{"PATH=/usr/bin:/bin:" + filepath.Join(root, "home", ".ssh"), "GITHUB_TOKEN=x", "LANG=C"},
		Limits:    jail.DefaultLimits(), Namespaces: true, CacheRoot: filepath.Join(root, "cache"),
	}
	p.Dir = p.Workspace
	for _, d := range []string{filepath.Join(p.Workspace, ".git", "hooks"), p.Home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func rule(s jail.Spec, path string) (jail.PathRule, bool) {
	i := slices.IndexFunc(s.Paths, func(r jail.PathRule) bool { return r.Path == path })
	if i < 0 {
		return jail.PathRule{}, false
	}
	return s.Paths[i], true
}

func TestProfileSpec(t *testing.T) {
	p := testProfile(t)
	s, err := p.Spec()
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := rule(s, p.Workspace); !ok || r.Access != jail.Write {
		t.Errorf("workspace rule %+v", r)
	}
	if r, ok := rule(s, "/etc"); !ok || r.Access != jail.Read {
		t.Errorf("/etc rule %+v", r)
	}
	if !slices.Contains(s.Hidden, "/etc/shadow") || !slices.Contains(s.Hidden, "/etc/ssh") {
		t.Errorf("hidden: %v", s.Hidden)
	}
	if !slices.Contains(s.Protected, filepath.Join(p.Workspace, ".git", "hooks")) || !slices.Contains(s.Protected, filepath.Join(p.Workspace, ".envrc")) {
		t.Errorf("protected: %v", s.Protected)
	}
	if _, ok := rule(s, filepath.Join(p.Home, ".ssh")); ok {
		t.Error("a PATH entry inside ~/.ssh was granted")
	}
	if _, ok := rule(s, p.Home); ok {
		t.Error("the home directory was granted")
	}
	env := strings.Join(s.Env, "\n")
	for _, want := range []string{"TMPDIR=/tmp", "GOPROXY=off", "LANG=C", "GOCACHE=" + p.CacheRoot} {
		if !strings.Contains(env, want) {
			t.Errorf("env lacks %q:\n%s", want, env)
		}
	}
	if strings.Contains(env, "GITHUB_TOKEN") {
		t.Error("a credential crossed")
	}
	if !s.PrivateTmp {
		t.Error("no private /tmp with namespaces")
	}

	// Read-only workspace, network, no namespaces.
	p.ReadOnly, p.Network, p.Namespaces = true, true, false
	if _, err := p.Spec(); err == nil {
		t.Error("no namespaces and no per-call TMPDIR was accepted")
	}
	p.CallTmp = t.TempDir()
	s, err = p.Spec()
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := rule(s, p.Workspace); r.Access != jail.Exec {
		t.Errorf("read-only workspace rule %+v", r)
	}
	if _, ok := rule(s, "/tmp"); ok || s.PrivateTmp {
		t.Error("the host /tmp was granted without a mount namespace")
	}
	if r, ok := rule(s, p.CallTmp); !ok || r.Access != jail.Write {
		t.Errorf("per-call TMPDIR rule %+v", r)
	}
	if strings.Contains(strings.Join(s.Env, "\n"), "GOPROXY=off") {
		t.Error("GOPROXY=off with network granted")
	}
}

func TestProfileRefusesHomeAsWorkspace(t *testing.T) {
	p := testProfile(t)
	p.Workspace = filepath.Dir(p.Home)
	if _, err := p.Spec(); err == nil || !strings.Contains(err.Error(), "home directory") {
		t.Fatalf("got %v", err)
	}
}

// TestProfileOneRulePerPath: a directory named twice (PATH repeats, a
// system root on PATH, a --read of the workspace) gets one rule with the
// stronger access, required when any source requires it.
func TestProfileOneRulePerPath(t *testing.T) {
	p := testProfile(t)
	p.ParentEnv = []string{"PATH=/usr/bin:/bin:/usr/bin:/opt"}
	p.Read = []string{p.Workspace, "/opt"}
	s, err := p.Spec()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range s.Paths {
		seen[r.Path]++
	}
	for path, n := range seen {
		if n > 1 {
			t.Errorf("%s has %d rules", path, n)
		}
	}
	if r, _ := rule(s, p.Workspace); r.Access != jail.Write {
		t.Errorf("workspace (write, and read by --read): %+v", r)
	}
	if r, _ := rule(s, "/opt"); r.Access != jail.Exec || r.Optional {
		t.Errorf("/opt (an optional system root and a required --read): %+v", r)
	}
	if r, ok := rule(s, "/usr/bin"); !ok || r.Access != jail.Exec {
		t.Errorf("control: /usr/bin from PATH: %+v %v", r, ok)
	}
}

package supervisor

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"brig/jail"
)

// The test binary doubles as the jail child for the benchmarks.
func TestMain(m *testing.M) {
	if jail.IsChild() {
		jail.ChildMain(nil)
	}
	os.Exit(m.Run())
}

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

func TestCappedStream(t *testing.T) {
	var w bytes.Buffer
	c := newCappedStream("stdout", &w, 10)
	c.drain(strings.NewReader(strings.Repeat("a", 25)))
	if _, trunc := c.result(); !trunc {
		t.Fatal("not truncated")
	}
	if got := w.String(); !strings.HasPrefix(got, strings.Repeat("a", 10)+"\n[brig: stdout truncated after 10 bytes") || strings.Count(got, "a") != 10+strings.Count("[brig: stdout truncated after 10 bytes; the rest was discarded]", "a") {
		t.Fatalf("stream %q", got)
	}
	// Capture mode, under the cap: whole, not flagged.
	c = newCappedStream("stderr", nil, 10)
	c.drain(strings.NewReader("short"))
	if b, trunc := c.result(); trunc || string(b) != "short" {
		t.Fatalf("capture %q %v", b, trunc)
	}
}

func benchRun(b *testing.B, o Options) {
	ctx := context.Background()
	sup, err := New(ctx, o)
	if err != nil {
		b.Fatal(err)
	}
	defer sup.Close()
	ws := b.TempDir()
	p := Profile{Workspace: ws, Dir: ws, Home: os.Getenv("HOME"), ParentEnv: os.Environ(), Limits: jail.DefaultLimits(), Namespaces: sup.Namespaces()}
	if !p.Namespaces {
		p.CallTmp = b.TempDir()
	}
	spec, err := p.Spec()
	if err != nil {
		b.Fatal(err)
	}
	inv := jail.Invocation{Argv: []string{"true"}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := sup.Run(ctx, spec, inv, IO{})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%v %+v", err, res)
		}
	}
}

// BenchmarkRunCold is one jailed call of true, starting the jail child.
func BenchmarkRunCold(b *testing.B) { benchRun(b, Options{}) }

// BenchmarkRunPrewarmed is the agent's case: a child is waiting.
func BenchmarkRunPrewarmed(b *testing.B) { benchRun(b, Options{Prewarm: true}) }

func TestPlanFailsClosed(t *testing.T) {
	spec := jail.Spec{Dir: "/"}
	for _, tc := range []struct {
		name   string
		abi    int
		userNS bool
		spec   jail.Spec
		refuse bool
	}{
		{"no Landlock", 0, true, spec, true},
		{"no namespaces and no scoping", 5, false, spec, true},
		{"private /tmp without namespaces", 7, false, jail.Spec{Dir: "/", PrivateTmp: true}, true},
		{"Landlock 6 without namespaces", 6, false, spec, false},
		{"namespaces with old Landlock", 1, true, spec, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Supervisor{landlockABI: tc.abi, userNS: tc.userNS, filters: map[jail.FilterOptions][]byte{}}
			tc.spec.Layers.NoSeccomp = true // the filter is not what is tested here
			_, err := s.plan(tc.spec)
			if refused := errors.Is(err, jail.ErrUnenforceable); refused != tc.refuse {
				t.Fatalf("refused=%v (%v), want %v", refused, err, tc.refuse)
			}
		})
	}
}

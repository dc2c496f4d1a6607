package policy

import (
	"slices"
	"testing"

	"brig/jail"
)

// TestUnion: grants that differ only in their paths join (each path once,
// in order); anything else about them differing, or any of them writing,
// having network or a toolchain cache, keeps them apart.
func TestUnion(t *testing.T) {
	read := func(paths ...string) jail.Spec {
		s := jail.Spec{Workspace: "/ws", Dir: "/ws", Env: []string{"LC_ALL=C.UTF-8"}, Limits: jail.DefaultLimits()}
		for _, p := range paths {
			s.Paths = append(s.Paths, jail.PathRule{Path: p, Access: jail.Read, Optional: true})
			s.Hidden = append(s.Hidden, p+"/.secret")
		}
		return s
	}
	u, ok := Union([]jail.Spec{read("/ws/a"), read("/ws/b", "/ws/a"), read("/ws/c")})
	var got []string
	for _, r := range u.Paths {
		got = append(got, r.Path)
	}
	if !ok || !slices.Equal(got, []string{"/ws/a", "/ws/b", "/ws/c"}) || len(u.Hidden) != 3 || u.Dir != "/ws" {
		t.Fatalf("Union of three reads: %v %+v", ok, u)
	}
	// The grants' search memory is not part of a grant: two specs whose
	// memories differ are joined, and the first's is kept.
	a, b := read("/ws/a"), read("/ws/b")
	a.Repos, b.Repos = jail.NewRepoCache(), jail.NewRepoCache()
	if _, err := a.Repos.Repositories(t.TempDir()); err != nil { // one has searched, the other not
		t.Fatal(err)
	}
	if u, ok := Union([]jail.Spec{a, b}); !ok || u.Repos != a.Repos {
		t.Fatalf("reads with different search memories: joined %v, memory kept %v", ok, u.Repos == a.Repos)
	}
	for name, other := range map[string]func(*jail.Spec){
		"another environment": func(s *jail.Spec) { s.Env = append(s.Env, "X=1") },
		"other limits":        func(s *jail.Spec) { s.Limits.Timeout++ },
		"another directory":   func(s *jail.Spec) { s.Dir = "/ws/sub" },
		"network":             func(s *jail.Spec) { s.Network = true },
		"a toolchain cache":   func(s *jail.Spec) { s.Cache = &jail.Cache{Root: "/c", Name: "n"} },
		"a write":             func(s *jail.Spec) { s.Paths = append(s.Paths, jail.PathRule{Path: "/ws", Access: jail.Write}) },
	} {
		s := read("/ws/b")
		other(&s)
		if _, ok := Union([]jail.Spec{read("/ws/a"), s}); ok {
			t.Errorf("grants with %s were joined", name)
		}
	}
	if _, ok := Union(nil); ok {
		t.Error("no grants made a union")
	}
}

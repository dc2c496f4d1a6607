package policy

import (
	"strings"
	"testing"
)

func ruleSet(t *testing.T, allow, ask, deny []string) RuleSet {
	t.Helper()
	var s RuleSet
	for i, list := range [][]string{allow, ask, deny} {
		for n, text := range list {
			r := mustRule(t, text)
			r.Source = Source{File: "config.toml", Line: 10*i + n + 1}
			switch i {
			case 0:
				s.Allow = append(s.Allow, r)
			case 1:
				s.Ask = append(s.Ask, r)
			default:
				s.Deny = append(s.Deny, r)
			}
		}
	}
	return s
}

func TestDecideCommandDenyWins(t *testing.T) {
	s := ruleSet(t,
		[]string{"Bash(git:*)", "Bash(go test:*)", "Bash(npm install:*)"},
		[]string{"Bash(npm install:*)"},
		[]string{"Bash(git push:*)"},
	)
	for _, tc := range []struct {
		cmd  string
		want Tier
		rule string
	}{
		{"git status", Allow, "Bash(git:*)"},
		{"git push origin main", Deny, "Bash(git push:*)"},   // deny beats a broader allow
		{"npm install left-pad", Ask, "Bash(npm install:*)"}, // ask beats allow
		{"go test ./...", Allow, "Bash(go test:*)"},
		{"rm -rf /", Ask, ""}, // no rule: the default
	} {
		d := s.DecideCommand(strings.Fields(tc.cmd), Ask)
		if d.Tier != tc.want {
			t.Errorf("%q: %v, want %s", tc.cmd, d, tc.want)
			continue
		}
		if tc.rule == "" && d.Rule != nil || tc.rule != "" && (d.Rule == nil || d.Rule.String() != tc.rule) {
			t.Errorf("%q decided by %v, want %q", tc.cmd, d, tc.rule)
		}
	}
	// The decision says where its rule was written.
	d := s.DecideCommand([]string{"git", "push"}, Ask)
	if !strings.Contains(d.String(), "config.toml:21") {
		t.Errorf("decision %q does not name the rule's file and line", d)
	}
}

func TestDecidePath(t *testing.T) {
	s := ruleSet(t,
		[]string{"Read(~/notes/**)", "Write(./docs/**)"},
		nil,
		[]string{"Read(./secrets/**)"},
	)
	for _, tc := range []struct {
		path  string
		write bool
		want  Tier
	}{
		{"/home/u/notes/a.md", false, Allow},
		{"/home/u/notes/a.md", true, Ask}, // read grant is not a write grant
		{"/home/u/proj/docs/x.md", true, Allow},
		{"/home/u/proj/docs/x.md", false, Allow}, // write covers read
		{"/home/u/proj/secrets/key", false, Deny},
		{"/home/u/proj/secrets/key", true, Ask}, // the deny rule is for reading only
		{"/home/u/.ssh/id_rsa", false, Ask},
	} {
		if d := s.DecidePath(tc.path, tc.write, ctx, Ask); d.Tier != tc.want {
			t.Errorf("%s (write %v): %v, want %s", tc.path, tc.write, d, tc.want)
		}
	}
}

func TestDecideHostAndToolAndMerge(t *testing.T) {
	global := ruleSet(t, []string{"WebFetch(domain:*.go.dev)", "Mcp(github__*)"}, nil, nil)
	workspace := ruleSet(t, nil, nil, []string{"Mcp(github__delete_repo)"})
	s := global.Merge(workspace)
	if d := s.DecideHost("pkg.go.dev", Ask); d.Tier != Allow {
		t.Errorf("pkg.go.dev: %v", d)
	}
	if d := s.DecideHost("evil.example", Ask); d.Tier != Ask {
		t.Errorf("evil.example: %v", d)
	}
	if d := s.DecideTool("github__list_issues", Ask); d.Tier != Allow {
		t.Errorf("github__list_issues: %v", d)
	}
	// A deny from another file still wins over an allow.
	if d := s.DecideTool("github__delete_repo", Ask); d.Tier != Deny {
		t.Errorf("github__delete_repo: %v", d)
	}
	if len(global.Allow) != 2 || len(global.Deny) != 0 {
		t.Error("Merge changed its receiver")
	}
}

func TestCombineTiers(t *testing.T) {
	for _, tc := range []struct {
		parts []Tier
		want  Tier
	}{
		{[]Tier{Allow, Allow}, Allow},
		{[]Tier{Allow, Ask}, Ask},
		{[]Tier{Allow, Deny, Ask}, Deny},
		{[]Tier{Deny}, Deny},
		{nil, Ask},
	} {
		if got := CombineTiers(tc.parts...); got != tc.want {
			t.Errorf("CombineTiers(%v) = %s, want %s", tc.parts, got, tc.want)
		}
	}
}

// FuzzCombineTiers: a compound is never Allowed unless every part is, and
// any Deny wins.
func FuzzCombineTiers(f *testing.F) {
	f.Add([]byte{0, 1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		tiers := []Tier{Allow, Ask, Deny}
		var parts []Tier
		for _, x := range b {
			parts = append(parts, tiers[int(x)%3])
		}
		got := CombineTiers(parts...)
		hasDeny, allAllow := false, len(parts) > 0
		for _, p := range parts {
			hasDeny = hasDeny || p == Deny
			allAllow = allAllow && p == Allow
		}
		switch {
		case hasDeny && got != Deny:
			t.Fatalf("%v has a Deny but combined to %s", parts, got)
		case got == Allow && !allAllow:
			t.Fatalf("%v combined to Allow without every part allowed", parts)
		}
	})
}

package policy

import (
	"os"
	"strings"
	"testing"
)

// TestBuiltinExamples holds every built-in entry to its own examples: a
// Match line contains a command the entry matches, a NoMatch line none.
func TestBuiltinExamples(t *testing.T) {
	rules := BuiltinRules()
	if len(rules) < 20 {
		t.Fatalf("only %d built-in entries", len(rules))
	}
	for _, r := range rules {
		if r.Pattern == "" || r.Reason == "" || len(r.Match) == 0 || len(r.NoMatch) == 0 {
			t.Errorf("entry %q lacks a pattern, reason or examples", r.Pattern)
		}
		for _, line := range r.Match {
			a, err := ParseShell(line)
			if err != nil {
				t.Errorf("%s: example %q does not parse: %v", r.Pattern, line, err)
				continue
			}
			found := false
			for _, c := range a.Commands {
				found = found || r.Matches(c)
			}
			if !found {
				t.Errorf("%s: does not match its example %q", r.Pattern, line)
			}
			// A Deny example is denied by the whole decision too.
			if r.Tier == Deny {
				if d := DecideBash(RuleSet{}, line); d.Tier != Deny {
					t.Errorf("%s: example %q decided %s: %s", r.Pattern, line, d.Tier, d.Reason)
				}
			}
		}
		for _, line := range r.NoMatch {
			a, err := ParseShell(line)
			if err != nil {
				t.Errorf("%s: example %q does not parse: %v", r.Pattern, line, err)
				continue
			}
			for _, c := range a.Commands {
				if r.Matches(c) {
					t.Errorf("%s: matches %q in its no-match example %q", r.Pattern, c, line)
				}
			}
		}
	}
}

// TestBuiltinAllowExamplesAllowed: an Allow entry's simple examples are
// allowed by the whole decision, so the lists mean what they say.
func TestBuiltinAllowExamplesAllowed(t *testing.T) {
	for _, r := range BuiltinRules() {
		if r.Tier != Allow {
			continue
		}
		for _, line := range r.Match {
			if d := DecideBash(RuleSet{}, line); d.Tier != Allow {
				t.Errorf("%s: example %q decided %s: %s", r.Pattern, line, d.Tier, d.Reason)
			}
		}
	}
}

// TestBuiltinRulesOrder: denials come first, and each call returns a new
// slice (no shared mutable state).
func TestBuiltinRulesOrder(t *testing.T) {
	rules := BuiltinRules()
	seenOther := false
	for _, r := range rules {
		if r.Tier != Deny {
			seenOther = true
		} else if seenOther {
			t.Errorf("Deny entry %q after a non-Deny one", r.Pattern)
		}
	}
	rules[0].Reason = "changed"
	if BuiltinRules()[0].Reason == "changed" {
		t.Error("BuiltinRules shares its table")
	}
}

// TestBuiltinMarkdown: the README table is generated from the entries.
func TestBuiltinMarkdown(t *testing.T) {
	md := BuiltinMarkdown()
	for _, r := range BuiltinRules() {
		if !strings.Contains(md, mdEscape(r.Pattern)) {
			t.Errorf("markdown lacks %q", r.Pattern)
		}
	}
	if !strings.HasPrefix(md, "| tier |") {
		t.Errorf("markdown does not start with the table header:\n%s", md)
	}
}

func TestRootLike(t *testing.T) {
	for _, tc := range []struct {
		target string
		dir    string
		dyn    bool
		want   bool
	}{
		{"/", "", false, true},
		{"//", "", false, true},
		{"/*", "", false, true},
		{"/etc/", "", false, true},
		{"/etc/nginx", "", false, false},
		{"~", "", false, true},
		{"~/", "", false, true},
		{"~/*", "", false, true},
		{"~/..", "", false, true},
		{"~/src/x", "", false, false},
		{"..", "", false, true},
		{"../..", "", false, true},
		{"../x", "", false, false},
		{".", "", false, true},
		{".", "build", false, false},
		{"*", "build", false, false},
		{"..", "build", false, false}, // build/.. is the call's directory, but named through build: not counted
		{"usr", "/", false, true},
		{"$HOME", "", true, true},
		{"$DIR/", "", true, true},
		{"$DIR/*", "", true, true},
		{"$DIR", "", true, false},
		{"$DIR/build", "", true, false},
	} {
		c := Command{Dir: tc.dir}
		if got := rootLike(tc.target, tc.dyn, c, true); got != tc.want {
			t.Errorf("rootLike(%q in %q, dynamic %v) = %v, want %v", tc.target, tc.dir, tc.dyn, got, tc.want)
		}
	}
}

// TestREADMEListsTheBuiltins keeps the README's table of built-in command
// lists identical to the code.
func TestREADMEListsTheBuiltins(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), BuiltinMarkdown()) {
		t.Fatal("README.md's built-in command table differs from policy.BuiltinMarkdown(); paste the new table into the README")
	}
}

package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = `# global rules
[model]
name = "whatever" # another part of brig reads this

[permissions]
allow = [
  "Bash(go test:*)",
  "Read(~/notes/**)",
]
deny  = ["Bash(git push:*)", 'Read(./secrets/**)']
ask   = ["Bash(npm install:*)"]
alow  = ["Bash(*)"]
`

func TestParseRules(t *testing.T) {
	rs, warnings, err := ParseRules("/home/u/.config/brig/config.toml", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.Allow) != 2 || len(rs.Deny) != 2 || len(rs.Ask) != 1 {
		t.Fatalf("rules: %+v", rs)
	}
	for _, c := range []struct {
		r    Rule
		line int
	}{{rs.Allow[0], 7}, {rs.Allow[1], 8}, {rs.Deny[0], 10}, {rs.Deny[1], 10}, {rs.Ask[0], 11}} {
		if c.r.Source.Line != c.line || c.r.Source.File != "/home/u/.config/brig/config.toml" {
			t.Errorf("%s: source %v, want line %d", c.r, c.r.Source, c.line)
		}
	}
	// The misspelt key warns (and is not taken as an allow list).
	if len(warnings) != 1 || !strings.Contains(warnings[0].String(), "alow") || warnings[0].Source.Line != 12 {
		t.Fatalf("warnings: %v", warnings)
	}
	if d := rs.DecideCommand([]string{"git", "push"}, Ask); d.Tier != Deny || !strings.Contains(d.String(), "config.toml:10") {
		t.Fatalf("decision: %v", d)
	}
}

func TestParseRulesErrors(t *testing.T) {
	// Malformed TOML: file and line.
	_, _, err := ParseRules("c.toml", []byte("[permissions]\nallow = [\"Bash(ls)\"\ndeny = 3\n"))
	if err == nil || !strings.Contains(err.Error(), "c.toml:") {
		t.Fatalf("malformed TOML: %v", err)
	}
	// One malformed rule: an error naming file, line and rule, and nothing
	// of the file is returned.
	rs, _, err := ParseRules("c.toml", []byte("[permissions]\nallow = [\"Bash(ls)\"]\ndeny = [\"Exec(rm)\"]\n"))
	var re *RuleError
	if !errors.As(err, &re) || re.Source.Line != 3 || re.Rule != "Exec(rm)" {
		t.Fatalf("malformed rule: %v", err)
	}
	if len(rs.Allow) != 0 {
		t.Fatal("a half-read policy was returned")
	}
	// A list of the wrong type.
	if _, _, err := ParseRules("c.toml", []byte("[permissions]\nallow = \"Bash(ls)\"\n")); err == nil {
		t.Fatal("a string instead of a list was accepted")
	}
}

func TestLoadRules(t *testing.T) {
	dir := t.TempDir()
	// Missing: empty, no error.
	rs, _, err := LoadRules(filepath.Join(dir, "none.toml"))
	if err != nil || len(rs.Allow)+len(rs.Ask)+len(rs.Deny) != 0 {
		t.Fatalf("missing file: %+v %v", rs, err)
	}
	// Unreadable (a directory where the file should be): an error, not an
	// empty policy.
	bad := filepath.Join(dir, "config.toml")
	if err := os.Mkdir(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadRules(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("unreadable file: %v", err)
	}
	// Control: a real file loads.
	good := filepath.Join(dir, "good.toml")
	if err := os.WriteFile(good, []byte(sample), 0o600); err != nil {
		t.Fatal(err)
	}
	if rs, _, err := LoadRules(good); err != nil || len(rs.Allow) != 2 {
		t.Fatalf("good file: %+v %v", rs, err)
	}
}

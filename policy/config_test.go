package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = `# global rules
[agent]
model = "whatever" # another part of brig reads this

[permissions]
allow = [
  "Bash(go test:*)",
  "Read(~/notes/**)",
]
deny  = ["Bash(git push:*)", 'Read(./secrets/**)']
ask   = ["Bash(npm install:*)"]

[sandbox]
netwrok = true
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
	// The misspelt sandbox key warns (a misspelt rule list stops the load:
	// TestConfigMistakesAreSaid).
	if len(warnings) != 1 || !strings.Contains(warnings[0].String(), "netwrok") || warnings[0].Source.Line != 14 {
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

// TestParseConfigRefusesControlCharacters: a repository config whose rule
// holds "\u001b[1A\u001b[2K" (erase the line above) is refused at load with
// the file and the line the rule is written on; so is any other value of
// the file (a sandbox path, an MCP server's command), however it is spelled.
func TestParseConfigRefusesControlCharacters(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		line       int
	}{
		{"rule", "[permissions]\nallow = [\n  \"Bash(go test:*)\",\n  \"Bash(*)\\u001b[1A\\u001b[2K\",\n]\n", 4},
		{"sandbox path", "[sandbox]\nnetwork = false\nread = [\"~/.ssh\\u001b[2K\\rsrc\"]\n", 3},
		{"mcp command", "[permissions]\nallow = []\n\n[mcp.servers.lint]\ncommand = \"harmless-linter --stdio\\u001b[2K\\r\"\n", 5},
		{"raw bidi override", "[permissions]\ndeny = [\"Read(./a\u202e)\"]\n", 2},
		{"agent model", "[agent]\nmodel = \"x\\u0007\"\n", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ParseConfig("/ws/.brig/config.toml", []byte(tc.data))
			if err == nil {
				t.Fatal("accepted")
			}
			want := fmt.Sprintf("/ws/.brig/config.toml:%d:", tc.line)
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q does not start with %q", err, want)
			}
			if strings.ContainsAny(err.Error(), "\x1b\r\a\u202e") {
				t.Errorf("the error holds the character raw: %q", err)
			}
		})
	}
}

// A config nested past the TOML parser's stack is refused with the line,
// not parsed (red team, round 5: a 1.2 MB .brig/config.toml of `a = [[[…`
// crashed every brig command in the repository with a fatal stack
// overflow).
func TestParseConfigRefusesDeepNesting(t *testing.T) {
	data := []byte("[permissions]\nallow = []\na = " + strings.Repeat("[", 1200000) + "\n")
	_, _, err := ParseConfig(".brig/config.toml", data)
	if err == nil || !strings.Contains(err.Error(), ".brig/config.toml:3: arrays and inline tables nested more than 64 deep") {
		t.Fatalf("err %v", err)
	}
}

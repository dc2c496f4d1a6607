package policy

import (
	"errors"
	"strings"
	"testing"
)

var ctx = Context{Home: "/home/u", Workspace: "/home/u/proj"}

func mustRule(t *testing.T, text string) Rule {
	t.Helper()
	r, err := ParseRule(text, Source{File: "config.toml", Line: 3})
	if err != nil {
		t.Fatalf("ParseRule(%q): %v", text, err)
	}
	return r
}

func TestParseRuleErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"Exec(ls)", "unknown scope"},
		{"Bash(ls", "closing parenthesis"},
		{"Bash()", "empty pattern"},
		{"Bash(go *)", "only allowed alone"},
		{"Bash(:*)", "no command"},
		{"Read(~bob/x)", "only ~/"},
		{"Read([)", "bad glob"},
		{"WebFetch(go.dev)", "domain:"},
		{"WebFetch(domain:https://go.dev/)", "is a URL: give its host alone (domain:go.dev)"},
		{"WebFetch(domain:a.*.com)", "host name"},
		{"Mcp(github)", "SERVER__TOOL"},
		{"read(x)", "unknown scope"},
		// Rules that could match no simple command (new user, 2026-12-03).
		{"Bash(cd src && make)", `"&&" joins commands`},
		{"Bash(make | tee log)", `"|" joins commands`},
		{"Bash(cd src; make)", `"src;" joins commands`},
		{"Bash(FOO=1 make)", `"FOO=1" is an assignment`},
		{"Bash(make 2>&1)", `"2>&1" is a redirection`},
		{"Bash(go test > out.txt:*)", `">" is a redirection`},
		{"Bash(grep 'TODO':*)", `"'TODO'" has quotes`},
		{"Bash(echo $(date))", "command substitution"},
	} {
		_, err := ParseRule(tc.text, Source{File: "/home/u/.config/brig/config.toml", Line: 7})
		var re *RuleError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseRule(%q) = %v, want an error containing %q", tc.text, err, tc.want)
			continue
		}
		// The error names the file, the line and the rule.
		if !strings.Contains(err.Error(), "config.toml:7") || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("error %q does not name the file, line and rule", err)
		}
	}
}

func TestMatchCommand(t *testing.T) {
	for _, tc := range []struct {
		rule  string
		words string
		want  bool
	}{
		{"Bash(git status)", "git status", true},
		{"Bash(git status)", "git status --short", false}, // exact means exact
		{"Bash(git status)", "git", false},
		{"Bash(go test:*)", "go test", true},
		{"Bash(go test:*)", "go test ./... -run X", true},
		{"Bash(go test:*)", "go testify", false}, // words, not characters
		{"Bash(go test:*)", "go vet", false},
		{"Bash(cargo:*)", "cargo build --release", true},
		{"Bash(npm run test:*)", "npm run test:unit", false}, // the word is "test:unit"
		{"Bash(*)", "rm -rf /", true},
		{"Bash", "anything at all", true},
		{"Read(**)", "ls", false}, // wrong scope
	} {
		r := mustRule(t, tc.rule)
		if got := r.MatchCommand(strings.Fields(tc.words)); got != tc.want {
			t.Errorf("%s on %q = %v, want %v", tc.rule, tc.words, got, tc.want)
		}
	}
}

func TestMatchPath(t *testing.T) {
	for _, tc := range []struct {
		rule, path string
		want       bool
	}{
		{"Read(~/notes/**)", "/home/u/notes", true}, // dir/** covers dir
		{"Read(~/notes/**)", "/home/u/notes/a/b/c.md", true},
		{"Read(~/notes/**)", "/home/u/notesx", false},
		{"Read(~/notes/*)", "/home/u/notes/a.md", true},
		{"Read(~/notes/*)", "/home/u/notes/a/b.md", false}, // * never crosses /
		{"Read(~/notes/*)", "/home/u/notes", false},
		{"Write(docs/*)", "/home/u/proj/docs/a.md", true}, // workspace-relative
		{"Write(./docs/*)", "/home/u/proj/docs/a.md", true},
		{"Write(./docs/*)", "/home/u/docs/a.md", false},
		{"Read(./secrets/**)", "/home/u/proj/secrets/k", true},
		{"Read(/etc/*.conf)", "/etc/resolv.conf", true},
		{"Read(/etc/*.conf)", "/etc/ssl/openssl.conf", false},
		{"Read(/etc/**/*.conf)", "/etc/ssl/openssl.conf", true},
		{"Read(/etc/**/*.conf)", "/etc/x.conf", true}, // ** may be zero segments
		{"Read(src/?.go)", "/home/u/proj/src/a.go", true},
		{"Read(src/?.go)", "/home/u/proj/src/ab.go", false},
		{"Read(../other/**)", "/home/u/other/x", true}, // .. resolved like the kernel
		{"Read(~)", "/home/u", true},
		{"Read(~)", "/home/u/x", false},
		{"Read", "/anything", true},
		{"Read(**)", "relative/path", false}, // only absolute paths match
		{"Bash(ls)", "/home/u/proj", false},
	} {
		r := mustRule(t, tc.rule)
		if got := r.MatchPath(tc.path, ctx); got != tc.want {
			t.Errorf("%s on %q = %v, want %v", tc.rule, tc.path, got, tc.want)
		}
	}
}

func TestMatchHostAndTool(t *testing.T) {
	for _, tc := range []struct {
		rule, name string
		want       bool
	}{
		{"WebFetch(domain:go.dev)", "go.dev", true},
		{"WebFetch(domain:go.dev)", "GO.dev.", true},
		{"WebFetch(domain:go.dev)", "pkg.go.dev", false},
		{"WebFetch(domain:go.dev)", "evilgo.dev", false},
		{"WebFetch(domain:*.go.dev)", "pkg.go.dev", true},
		{"WebFetch(domain:*.go.dev)", "go.dev", false},
		{"WebFetch(domain:*.go.dev)", "evil-go.dev", false},
	} {
		if got := mustRule(t, tc.rule).MatchHost(tc.name); got != tc.want {
			t.Errorf("%s on %q = %v, want %v", tc.rule, tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		rule, name string
		want       bool
	}{
		{"Mcp(github__create_issue)", "github__create_issue", true},
		{"Mcp(github__create_issue)", "github__delete_repo", false},
		{"Mcp(github__*)", "github__delete_repo", true},
		{"Mcp(github__*)", "gitlab__x", false},
	} {
		if got := mustRule(t, tc.rule).MatchTool(tc.name); got != tc.want {
			t.Errorf("%s on %q = %v, want %v", tc.rule, tc.name, got, tc.want)
		}
	}
}

// FuzzParseRule: parsing never panics, and a rule that parses writes back to
// text that parses to the same rule.
func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"Bash(go test:*)", "Read(~/notes/**)", "Write(./docs/*)", "WebFetch(domain:*.go.dev)", "Mcp(gh__*)", "Bash", "Read([)", "Bash(((", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		r, err := ParseRule(text, Source{})
		if err != nil {
			return
		}
		again, err := ParseRule(r.String(), Source{})
		if err != nil {
			t.Fatalf("%q parsed, but its own text %q does not: %v", text, r.String(), err)
		}
		if again.String() != r.String() {
			t.Fatalf("round trip changed %q into %q", r.String(), again.String())
		}
		// Matching never panics either.
		_ = r.MatchCommand(strings.Fields(text))
		_ = r.MatchPath("/home/u/proj/"+text, ctx)
		_ = r.MatchHost(text)
		_ = r.MatchTool(text)
	})
}

// TestParseRuleRefusesHiddenCharacters: a rule that would not read on the
// screen the way it matches is refused, and the error shows it inert.
func TestParseRuleRefusesHiddenCharacters(t *testing.T) {
	for text, want := range map[string]string{
		"Bash(*)\x1b[1A\x1b[2K":       "U+001B ESC",
		"Read(~/.ssh/id_rsa\r)":       "CARRIAGE RETURN",
		"Bash(git\u200b push:*)":      "ZERO WIDTH SPACE",
		"Write(./docs/\u202etxt.exe)": "RIGHT-TO-LEFT OVERRIDE",
		"Bash(make\u009b2J)":          "U+009B CSI",
	} {
		_, err := ParseRule(text, Source{File: "/ws/.brig/config.toml", Line: 3})
		var re *RuleError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "config.toml:3") {
			t.Errorf("ParseRule(%q) = %v, want a RuleError at config.toml:3 saying %q", text, err, want)
			continue
		}
		if strings.ContainsAny(err.Error(), "\x1b\r\u200b\u202e\u009b") {
			t.Errorf("the error quotes the character raw: %q", err)
		}
	}
}

// A pattern of many ** is decided in polynomial time (red team, round 5:
// an untrusted repository's deny rule Read(/**/**/…40×…/zz) took 17 s for
// one path, and a session's supervisor for over ten minutes), with the
// same answers as before.
func TestGlobMatchManyDoubleStars(t *testing.T) {
	stars := strings.Repeat("/**", 40)
	deep := "/" + strings.Repeat("d/", 60) + "x"
	for _, tc := range []struct {
		pat, path string
		want      bool
	}{
		{stars + "/zz", "/src/main/java/com/example/App.java", false},
		{stars + "/zz", deep, false},
		{stars + "/x", deep, true},
		{strings.Repeat("/**/d", 20) + "/**/zz", deep, false},
		{strings.Repeat("/**/d", 20) + "/**/x", deep, true},
		{"/a/**", "/a", true},
		{"/a/**/b", "/a/b", true},
		{"/a/**/b", "/a/x/y/b", true},
		{"/a/**/b", "/a/x/y/c", false},
		{"/a/*/b", "/a/x/y/b", false},
	} {
		if got := globMatch(split(tc.pat), split(tc.path)); got != tc.want {
			t.Errorf("%s against %s: %v, want %v", tc.pat, tc.path, got, tc.want)
		}
	}
}

// TestBashRulesThatMatch: the check for rules no command can match leaves
// the usual ones alone (controls for TestParseRuleErrors's cases).
func TestBashRulesThatMatch(t *testing.T) {
	for _, ok := range []string{
		"Bash(make)", "Bash(go test:*)", "Bash(git log --format=%H)", "Bash(find . -name x -exec rm {} ;)",
		"Bash(npm run build:*)", "Bash(env FOO=1 make)", "Bash(sort -k2,2)", "Bash(python3 -m pytest:*)",
	} {
		if _, err := ParseRule(ok, Source{}); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

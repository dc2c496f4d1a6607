package policy

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"brig/internal/checkpoint"
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

// TestDangerousOptionsAsk: options that run a program of the caller's
// choosing, write a file the analysis does not see, or change config are
// never allowed without asking — not by the built-in lists, and (where
// they are on the exec-option list) not by a prefix rule of the user's
// that covers the command either. The same commands without the option
// are the control.
func TestDangerousOptionsAsk(t *testing.T) {
	prefix := ruleSet(t, []string{"Bash(sort:*)", "Bash(git grep:*)", "Bash(make:*)", "Bash(go test:*)", "Bash(go vet:*)", "Bash(go build:*)",
		"Bash(cargo build:*)", "Bash(npm test:*)", "Bash(pytest:*)", "Bash(rg:*)", "Bash(sed:*)", "Bash(tar:*)", "Bash(find:*)", "Bash(alias:*)", "Bash(shopt:*)", "Bash(set:*)",
		"Bash(git archive:*)", "Bash(git ls-remote:*)"}, nil, nil)
	for _, tc := range []struct {
		line, control string
		risky         bool // asked even under the user's prefix rule
	}{
		{`git grep -O'sh -c "rm main.go"' pat`, "git grep pat", true},
		{`git grep --open-files-in-pager='sh -c x' pat`, "git grep pat", true},
		{`git grep --open-files='sh -c x' pat`, "git grep pat", true},
		{"git -c core.pager=./x log", "git log", true},
		// Red team, 2026-12-02: "always" on a plain git archive or git
		// ls-remote saved a prefix rule these options then rode on.
		{"git archive --remote=. --exec=./x HEAD", "git archive HEAD", true},
		{"git ls-remote --upload-pack=./x .", "git ls-remote .", true},
		{"git ls-remote --upload=./x .", "git ls-remote .", true},
		{"git diff --output=out.patch", "git diff", true},
		{"sort --compress-program=./x big.txt", "sort big.txt", true},
		{"sort --compress-prog=./x big.txt", "sort big.txt", true},
		{"sort -o out.txt in.txt", "sort in.txt", false},
		{"find . -fprint out.txt", "find . -print", false}, // a write the path analysis sees
		{"find . -delete", "find . -print", false},
		{"sed '1e id' x", "sed 1p x", true},
		{"sed 's/a/b/w out' x", "sed s/a/b/ x", true},
		{"sed -i s/a/b/ x", "sed s/a/b/ x", false},
		{"make --eval='$(shell rm main.go)' test", "make test", true},
		{"make -f evil.mk test", "make test", false},
		{"make SHELL=./x test", "make test", true},
		{"go test -exec ./x ./...", "go test ./...", true},
		{"go test -toolexec=./x ./...", "go test ./...", true},
		{"go vet -vettool=./x ./...", "go vet ./...", true},
		{"go build -toolexec ./x .", "go build .", true},
		{`cargo build --config 'build.rustc-wrapper="./x"'`, "cargo build", true},
		{"npm test --script-shell=./x", "npm test", true},
		{"pytest -p evil_plugin", "pytest -p no:cacheprovider", true},
		{"rg --pre ./x pat", "rg pat", true},
		{"tar -xf a.tar --to-command='sh -c x'", "", true},
		{"RUSTFLAGS='-C linker=./x' cargo build", "cargo build", true},
		{"PYTEST_ADDOPTS='-p evil' pytest", "pytest", true},
		{"printf -v PATH %s ./bin; ls", "printf %s ./bin; ls", true},
		{"hash -p ./x ls; ls", "hash -r; ls", true},
		{"set -o posix; alias cat='rm -rf src; cat'; cat README.md", "set -e; cat README.md", true},
		{"shopt -s expand_aliases; ls", "set -e; ls", true},
		{"for PATH in ./bin; do ls; done", "for x in ./bin; do ls; done", true},
	} {
		if d := DecideBash(RuleSet{}, tc.line); d.Tier == Allow {
			t.Errorf("%q allowed by the built-ins: %s", tc.line, d.Reason)
		}
		if d := DecideBash(prefix, tc.line); tc.risky && d.Tier != Ask {
			t.Errorf("%q under the user's prefix rules: %s (%s), want ask", tc.line, d.Tier, d.Reason)
		}
		if tc.control != "" {
			if d := DecideBash(RuleSet{}, tc.control); d.Tier != Allow {
				if d2 := DecideBash(prefix, tc.control); d2.Tier != Allow {
					t.Errorf("control %q: %s (%s)", tc.control, d.Tier, d.Reason)
				}
			}
		}
	}
}

// TestSedSafe: the sed reader accepts what only edits the stream and
// refuses e, w, W, r, R and the e and w flags of s, and what it cannot
// read.
func TestSedSafe(t *testing.T) {
	for script, want := range map[string]bool{
		"1,20p": true, "/re/,/^}/p": true, "s/a/b/g": true, "s|a/b|c|2": true, "s/a\\/b/c/": true, "$!N;P;D": true,
		"/x/{s/a/b/;p}": true, "y/abc/xyz/": true, ":a;N;$!ba;s/\\n/ /g": true, "1i\\\nhello": true, "0~3d": true, "/a/I,+2d": true,
		"1e id": false, "e": false, "s/x/id/e": false, "s/a/b/w out": false, "w out": false, "W out": false, "r /etc/passwd": false,
		"R f": false, "s/a/b/gw out": false, "/x/!e id": false, "1,2{e id\n}": false, "s/a/b": false, "k": false, "s\\a\\b\\": false,
	} {
		if got := sedSafe(script); got != want {
			t.Errorf("sedSafe(%q) = %v, want %v", script, got, want)
		}
	}
}

// The built-in reason for discarding uncommitted work names what brig's
// undo keeps, and auto mode (which runs it) repeats it: its size bound
// must be the undo store's.
func TestDiscardReasonNamesUndoBound(t *testing.T) {
	want := fmt.Sprintf("workspace's files of up to %d MiB", checkpoint.DefaultMaxFileSize>>20)
	for _, r := range BuiltinRules() {
		if strings.HasPrefix(r.Pattern, "git reset --hard") {
			if !strings.Contains(r.Reason, want) {
				t.Errorf("reason %q does not say %q", r.Reason, want)
			}
			return
		}
	}
	t.Fatal("no built-in rule for git reset --hard")
}

package policy

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// inTime runs f and fails if it takes longer than a generous bound: the
// analysis must not hang on any input.
func inTime(t *testing.T, line string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%q: analysis took more than 5s", line)
	}
}

var fuzzSeeds = []string{
	"git status", "g''it push", `"git" push`, `\git push`, "cd sub && go test ./...", "curl x | sh",
	"echo $(rm -rf ~)", "diff <(ls a) <(ls b)", "cat <<EOF\n$(id)\nEOF", "bash <<'EOF'\nrm x\nEOF",
	"bash -c 'bash -c \"rm x\"'", "find . -exec rm {} \\;", "xargs -I{} sh -c 'rm {}'", "env -S 'rm x'",
	"f() { rm x; }; f", "for f in *.go; do gofmt -l \"$f\"; done", "case $x in a) rm y;; esac",
	"sudo -u root -- rm -rf /", "git -C x -c a=b push", "timeout -k 1 5 nice -n 3 rm", "trap 'rm x' EXIT",
	"watch -x rm x", "flock l -c 'rm x'", "x=$(rm y) && ls", "[[ $(rm x) ]]", "(( a[$(rm x)] ))",
	"echo $'\\x72m'", "exec 3<> f; rm x >&3", "coproc rm x", "time rm x", "! rm x", "rm x &",
	"busybox sh -c 'rm x'", "uv run rm x", "cd - && rm x", "pushd a; popd; rm x", "eval rm x",
	"{ rm x; } > out", "echo {a,b} ~ *", "declare -a a=($(rm x))", "let x=$(rm y)", "a=(1 2) b[1]=2",
}

// FuzzParseShell: the analysis never panics, and what it reports is
// consistent: one Dynamic and one Glob flag per word, no empty path, and
// a risky line is never allowed.
func FuzzParseShell(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		var a Analysis
		var err error
		inTime(t, line, func() { a, err = ParseShell(line) })
		if err != nil {
			return
		}
		for _, c := range a.Commands {
			if len(c.Dynamic) != len(c.Words) || len(c.Glob) != len(c.Words) {
				t.Fatalf("%q: command %q has %d words, %d dynamic and %d glob flags", line, c, len(c.Words), len(c.Dynamic), len(c.Glob))
			}
			for _, p := range c.Paths {
				if p.Text == "" {
					t.Fatalf("%q: empty path in %q", line, c)
				}
			}
			if len(c.Via) > maxDepth+1 {
				t.Fatalf("%q: via trail %q is deeper than the bound", line, c.Via)
			}
			_, _ = SuggestRule(c)
		}
		d := DecideBash(RuleSet{}, line)
		if d.Tier == Allow && (len(a.Risky) > 0 || len(a.Commands) == 0) {
			t.Fatalf("%q: allowed despite line risks %q or no command", line, a.Risky)
		}
	})
}

// FuzzDecideBash: whatever the line, under rules that deny rm and allow
// everything else by name, (1) a compound is allowed only if every part
// is, (2) any denied part denies the line, (3) every simple command
// named rm is denied, and (4) a blanket Deny denies every line that has
// a command.
func FuzzDecideBash(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	rs := RuleSet{}
	for _, text := range []string{"Bash(*)", "Bash(ls:*)", "Bash(rm -f safe:*)"} {
		r, err := ParseRule(text, Source{File: "fuzz.toml"})
		if err != nil {
			f.Fatal(err)
		}
		rs.Allow = append(rs.Allow, r)
	}
	deny, _ := ParseRule("Bash(rm:*)", Source{File: "fuzz.toml"})
	rs.Deny = []Rule{deny}
	all, _ := ParseRule("Bash", Source{File: "fuzz.toml"})
	denyAll := RuleSet{Deny: []Rule{all}}

	f.Fuzz(func(t *testing.T, line string) {
		var d BashDecision
		inTime(t, line, func() { d = DecideBash(rs, line) })
		var tiers []Tier
		for _, cd := range d.Commands {
			tiers = append(tiers, cd.Tier)
			c := cd.Command
			if len(c.Words) > 0 && !c.Dynamic[0] && c.Words[0] == "rm" && cd.Tier != Deny {
				t.Fatalf("%q: %q decided %s under Deny Bash(rm:*)", line, c, cd.Tier)
			}
			if len(c.Risky) > 0 && cd.Tier == Allow {
				t.Fatalf("%q: risky %q allowed", line, c)
			}
		}
		if slices.Contains(tiers, Deny) && d.Tier != Deny {
			t.Fatalf("%q: a part is denied but the line is %s", line, d.Tier)
		}
		if d.Tier == Allow && (len(tiers) == 0 || CombineTiers(tiers...) != Allow) {
			t.Fatalf("%q: allowed with parts %v", line, tiers)
		}
		if len(d.Commands) > 0 {
			if da := DecideBash(denyAll, line); da.Tier != Deny {
				t.Fatalf("%q: %s under a blanket Deny", line, da.Tier)
			}
		}
	})
}

// FuzzSedSafe: the sed reader ends on any script without panicking, a
// script it accepts stays accepted with a harmless command appended, and
// appending an e command is always refused (unless the line before ends
// in a backslash, which makes the next line a/i/c text in GNU sed).
func FuzzSedSafe(f *testing.F) {
	for _, s := range []string{"1,20p", "s/a/b/g", "/x/{s/a/b/;p}", "y/ab/cd/", ":a;N;$!ba", "1i\\\nx", "s|a|b|w f", "1e id"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		var ok bool
		inTime(t, script, func() { ok = sedSafe(script) })
		if sedSafe(script+"\ne id") && !strings.HasSuffix(script, "\\") { // after a\ the next line is text
			t.Fatalf("%q followed by an e command was accepted", script)
		}
		if ok && !sedSafe(script+"\np") && !strings.HasSuffix(script, "\\") {
			t.Fatalf("%q was accepted but not with p after it", script)
		}
	})
}

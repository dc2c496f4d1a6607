package policy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// lastCommand is the last command found (for a wrapper, what it runs).
func lastCommand(t *testing.T, line string) Command {
	t.Helper()
	a, err := ParseShell(line)
	if err != nil || len(a.Commands) == 0 {
		t.Fatalf("%q: %v, %d commands", line, err, len(a.Commands))
	}
	return a.Commands[len(a.Commands)-1]
}

func TestParseShellWords(t *testing.T) {
	for _, tc := range []struct {
		line    string
		words   []string
		dynamic []bool
		glob    []bool
	}{
		{`g''it "push" 'a b'`, []string{"git", "push", "a b"}, []bool{false, false, false}, []bool{false, false, false}},
		{`\git pu\sh`, []string{"git", "push"}, []bool{false, false}, []bool{false, false}},
		{`echo $'a\x41\n' "x\$y"`, []string{"echo", "aA\n", "x$y"}, []bool{false, false, false}, nil},
		{`ls *.go "*.md" a[0-9]`, []string{"ls", "*.go", "*.md", "a[0-9]"}, []bool{false, false, false, false}, []bool{false, true, false, true}},
		{`cat "$HOME/x" ${A:-b}`, []string{"cat", "$HOME/x", "${A:-b}"}, []bool{false, true, true}, nil},
		{`echo {a,b} {} {1..3}`, []string{"echo", "{a,b}", "{}", "{1..3}"}, []bool{false, true, false, true}, nil},
		{"echo a\\\nb", []string{"echo", "ab"}, []bool{false, false}, nil},
	} {
		c := lastCommand(t, tc.line)
		if !slices.Equal(c.Words, tc.words) || !slices.Equal(c.Dynamic, tc.dynamic) || tc.glob != nil && !slices.Equal(c.Glob, tc.glob) {
			t.Errorf("%q: words %q dynamic %v glob %v, want %q %v %v", tc.line, c.Words, c.Dynamic, c.Glob, tc.words, tc.dynamic, tc.glob)
		}
	}
}

func TestParseShellRedirects(t *testing.T) {
	c := lastCommand(t, "cmd <in.txt >out.txt 2>>err.log &>all.log 2>&1 >&- 3<>rw <<<'s' >|clob")
	want := []Redirect{
		{Op: "<", Target: "in.txt"},
		{Op: ">", Target: "out.txt", Write: true},
		{Op: "2>>", Target: "err.log", Write: true},
		{Op: "&>", Target: "all.log", Write: true},
		{Op: "2>&"},
		{Op: ">&"},
		{Op: "3<>", Target: "rw", Write: true},
		{Op: "<<<"},
		{Op: ">|", Target: "clob", Write: true},
	}
	if !slices.Equal(c.Redirects, want) {
		t.Errorf("redirects\n%+v\nwant\n%+v", c.Redirects, want)
	}
	var writes []string
	for _, p := range c.Paths {
		if p.Write {
			writes = append(writes, p.Text)
		}
	}
	if !slices.Equal(writes, []string{"out.txt", "err.log", "all.log", "rw", "clob"}) {
		t.Errorf("written paths %q", writes)
	}
}

func TestParseShellCommands(t *testing.T) {
	for _, tc := range []struct {
		line string
		cmds []string // every command, in the order found
	}{
		{"a | b && c || d; e &", []string{"a", "b", "c", "d", "e"}},
		{"(a; { b; }) | c", []string{"a", "b", "c"}},
		{"if a; then b; elif c; then d; else e; fi", []string{"a", "b", "c", "d", "e"}},
		{"for x in 1 2; do a $x; done; while b; do c; done; until d; do e; done", []string{"a $x", "b", "c", "d", "e"}},
		{"case x in y) a;; *) b;; esac", []string{"a", "b"}},
		{"f() { a; }; function g { b; }", []string{"a", "b"}},
		{"echo $(a $(b)) `c`", []string{"b", "a $(b)", "c", "echo $(a $(b)) $(c)"}},
		{"export X=$(a) Y=1", []string{"a", "export X=$(a) Y=1"}},
		{"[[ -n $(a) ]] && (( $(b) > 1 ))", []string{"a", "b"}},
		{"time a; coproc b", []string{"a", "b"}},
		{"env -i A=1 nohup timeout 5 nice -n1 a", []string{"env -i A=1 nohup timeout 5 nice -n1 a", "nohup timeout 5 nice -n1 a", "timeout 5 nice -n1 a", "nice -n1 a", "a"}},
		{"sh -c 'a; b' && bash -ec \"c\"", []string{"sh -c a; b", "a", "b", "bash -ec c", "c"}},
		{"find . -exec a {} \\; -ok b {} +", []string{"find . -exec a {} ; -ok b {} +", "a {}", "b {}"}},
		{"xargs -I{} -P4 a {}", []string{"xargs -I{} -P4 a {}", "a {}"}},
		{"sudo -u bob -E A=1 a", []string{"sudo -u bob -E A=1 a", "a"}},
		{"git -C d -c x=y status", []string{"git -C d -c x=y status", "git status"}},
		{"eval 'a; b'", []string{"eval a; b", "a", "b"}},
		{"watch -n1 'a | b'", []string{"watch -n1 a | b", "a", "b"}},
		{"command -v a; command a", []string{"command -v a", "command a", "a"}},
	} {
		a, err := ParseShell(tc.line)
		if err != nil {
			t.Errorf("%q: %v", tc.line, err)
			continue
		}
		var got []string
		for _, c := range a.Commands {
			got = append(got, c.String())
		}
		if !slices.Equal(got, tc.cmds) {
			t.Errorf("%q:\n got %q\nwant %q", tc.line, got, tc.cmds)
		}
	}
}

func TestParseShellDepthBound(t *testing.T) {
	line := "ls"
	for range maxDepth + 3 {
		line = "bash -c " + quoteSingle(line)
	}
	a, err := ParseShell(line)
	if err != nil {
		t.Fatal(err)
	}
	risky := false
	for _, c := range a.Commands {
		risky = risky || slices.Contains(c.Risky, riskDepth)
		if c.Name() == "ls" {
			t.Error("analysed past the depth bound")
		}
	}
	if !risky {
		t.Error("the depth bound is not reported")
	}
	if d := DecideBash(RuleSet{}, line); d.Tier == Allow {
		t.Errorf("too deep a nesting was allowed: %s", d.Reason)
	}
}

func quoteSingle(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func TestSuggestRule(t *testing.T) {
	for _, tc := range []struct {
		line   string
		rule   string
		prefix bool
	}{
		{"go test ./...", "Bash(go test:*)", true},
		{"FOO=1 go test -run X ./...", "Bash(go test:*)", true},
		{"cargo build --release", "Bash(cargo build:*)", true},
		{"npm run lint:fix", "Bash(npm run lint:fix:*)", true},
		{"npm install left-pad", "Bash(npm install:*)", true},
		{"git log --oneline", "Bash(git log:*)", true},
		{"git push origin main", "Bash(git push origin main)", false},
		{"git config user.name x", "Bash(git config user.name x)", false},
		{"git", "Bash(git)", false},
		{"git --no-pager log", "Bash(git --no-pager log)", false},
		{"python3 -c 'print(1)'", "", false}, // the code has parentheses and spaces
		{"python3 manage.py test", "Bash(python3 manage.py test)", false},
		{"node -e x", "Bash(node -e x)", false},
		{"bash -c 'ls'", "Bash(bash -c ls)", false},
		// New user, 2026-12-03: a program read from stdin gets no rule
		// (Bash(python3 -) allowed every script on stdin).
		{"sh", "", false},
		{"python3 -", "", false},
		{"node -", "", false},
		{"bash -s", "", false},
		{"env FOO=1 make", "Bash(env FOO=1 make)", false},
		{"sudo apt-get update", "Bash(sudo apt-get update)", false},
		{"xargs rm", "Bash(xargs rm)", false},
		{"rm -rf build", "Bash(rm -rf build)", false},
		{"make test", "Bash(make test:*)", true},
		{"terraform plan", "Bash(terraform plan:*)", true},
		{"pytest -q tests/", "Bash(pytest:*)", true},
		{"ls *.go", "Bash(ls:*)", true},
		{"./scripts/check.sh --all", "Bash(./scripts/check.sh --all)", false},
		{"$CMD x", "", false},
		{"go $SUB", "", false},
		{"cat \"$F\"", "Bash(cat:*)", true},
	} {
		a, err := ParseShell(tc.line)
		if err != nil {
			t.Fatal(err)
		}
		c := a.Commands[0] // the command as written, not what it wraps
		rule, prefix := SuggestRule(c)
		if rule != tc.rule || prefix != tc.prefix {
			t.Errorf("%q: %q %v, want %q %v", tc.line, rule, prefix, tc.rule, tc.prefix)
			continue
		}
		if rule == "" {
			continue
		}
		// A suggested rule parses and matches the command it was made for.
		r, err := ParseRule(rule, Source{})
		if err != nil || !r.MatchCommand(c.Words) {
			t.Errorf("%q: suggested %q does not match it again (%v)", tc.line, rule, err)
		}
	}
}

func BenchmarkDecideBash(b *testing.B) {
	line := `cd sub && FOO=1 go test ./... 2>&1 | tee /tmp/x.log; git status --short | grep -v '^??' | wc -l; find . -name '*.go' -exec gofmt -l {} +`
	for b.Loop() {
		DecideBash(RuleSet{}, line)
	}
}

// TestPythonPaths: the interpreter's module (-m) is not a file it reads;
// a script and the module's own operands are.
func TestPythonPaths(t *testing.T) {
	for line, want := range map[string][]string{
		"python3 -m pytest -q":                       nil,
		"python3 -m pytest tests/test_a.py -x":       {"tests/test_a.py"},
		"python3 -W ignore::DeprecationWarning x.py": {"x.py"},
		"python3 tools/gen.py out/":                  {"tools/gen.py", "out/"},
	} {
		c := lastCommand(t, line)
		var got []string
		for _, p := range c.Paths {
			got = append(got, p.Text)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: paths %q, want %q", line, got, want)
		}
	}
}

// TestEnvAllowList: setting a variable asks unless its name is on
// harmlessEnv, exported or not when the name has an upper-case letter;
// a deny-list cannot name every variable that makes a tool run a
// program (the red team's GOCACHEPROG, CGO_CFLAGS=-wrapper and
// GNUMAKEFLAGS=--eval ran one under go build and make test). Each line
// asks in ask and edit mode, with a reason naming the variable.
func TestEnvAllowList(t *testing.T) {
	f := newModeFixture(t, "")
	ask, edit := f.policy(t, ModeAsk), f.policy(t, ModeEdit)
	for line, name := range map[string]string{
		`export GOCACHEPROG='sh -c "id > PWN"'; go build ./...`:          "GOCACHEPROG",
		`export CGO_CFLAGS='-wrapper /bin/sh,-c,id>PWN'; go build ./...`: "CGO_CFLAGS",
		`export GNUMAKEFLAGS=' --eval=$$(shell id>PWN)'; make test`:      "GNUMAKEFLAGS",
		`export CGO_CPPFLAGS=-x; go build ./...`:                         "CGO_CPPFLAGS",
		`export CGO_CXXFLAGS=-x; go build ./...`:                         "CGO_CXXFLAGS",
		`export CGO_LDFLAGS=-x; go build ./...`:                          "CGO_LDFLAGS",
		`export PKG_CONFIG=./x; go build ./...`:                          "PKG_CONFIG",
		`export AR=./x; go build ./...`:                                  "AR",
		`export GOAUTH='command ./x'; go build ./...`:                    "GOAUTH",
		`export GOPROXY=http://x; go build ./...`:                        "GOPROXY",
		`export GOWORK=/tmp/go.work; go build ./...`:                     "GOWORK",
		`export GOMODCACHE=/tmp/m; go build ./...`:                       "GOMODCACHE",
		`export RUSTUP_TOOLCHAIN=/tmp/t; cargo build`:                    "RUSTUP_TOOLCHAIN",
		`export MAKE=./x; make test`:                                     "MAKE",
		`export MFLAGS=--eval=x; make test`:                              "MFLAGS",
		`export UV_PYTHON=./x; uv run pytest`:                            "UV_PYTHON",
		`export PYTHONUSERBASE=/tmp/u; python3 -m pytest`:                "PYTHONUSERBASE",
		// Every way of setting one.
		`GOCACHEPROG=./x go build ./...`:                     "GOCACHEPROG",
		`GOCACHEPROG=./x; go build ./...`:                    "GOCACHEPROG", // inherited: then exported
		`env GOCACHEPROG=./x go build ./...`:                 "GOCACHEPROG",
		`env -S 'GOCACHEPROG=./x go build ./...'`:            "GOCACHEPROG",
		`declare -x CGO_CFLAGS=-x; go build ./...`:           "CGO_CFLAGS",
		`typeset -gx CGO_CFLAGS=-x; go build ./...`:          "CGO_CFLAGS",
		`f() { local -x CGO_CFLAGS=-x; go build ./...; }; f`: "CGO_CFLAGS",
		`readonly CGO_CFLAGS=-x; go build ./...`:             "CGO_CFLAGS",
		`CGO_CFLAGS+=' -x'; go build ./...`:                  "CGO_CFLAGS",
		`cgo_cflags=-x; export cgo_cflags; go build ./...`:   "cgo_cflags",
		`export "CGO_CFLAGS=-x"; go build ./...`:             "CGO_CFLAGS",
		`export 'PATH=./bin'; go build ./...`:                "PATH",
		`builtin export CGO_CFLAGS=-x; go build ./...`:       "CGO_CFLAGS",
		`command declare -x CGO_CFLAGS=-x; go build ./...`:   "CGO_CFLAGS",
		`bash -c 'export CGO_CFLAGS=-x; go build ./...'`:     "CGO_CFLAGS",
		`read -r CGO_CFLAGS < flags.txt; go build ./...`:     "CGO_CFLAGS",
		`printf -v CGO_CFLAGS %s -x; go build ./...`:         "CGO_CFLAGS",
		`for CGO_CFLAGS in -x; do go build ./...; done`:      "CGO_CFLAGS",
		`: "${CGO_CFLAGS:=-x}"; go build ./...`:              "CGO_CFLAGS",
		`make test CGO_CFLAGS=-x`:                            "CGO_CFLAGS", // make exports it to its recipes
		`make test 'X!=id'`:                                  "!=",
		`http_proxy=http://x; go mod download`:               "http_proxy",
		`npm_config_script_shell=./x; npm test`:              "npm_config_script_shell",
		// What makes later assignments exported, or more than assignments.
		`set -a; cgo_cflags=-x; go build ./...`:         "allexport",
		`set -o allexport; go build ./...`:              "allexport",
		`set -k; go build ./... CGO_CFLAGS=-x`:          "keyword",
		`bash -a -c 'x=1; go build ./...'`:              "allexport",
		`bash -o allexport -c 'go build ./...'`:         "allexport",
		`declare -n r=CGO_CFLAGS; r=-x; go build ./...`: "declare -n",
		`declare -i n; n=$1; go build ./...`:            "declare -i",
		`i=x; a[$i]=1; go build ./...`:                  "arithmetic",
		`export "$n=-x"; go build ./...`:                "only known at run time",
		`declare $opt cgo_cflags=-x; go build ./...`:    "only known at run time",
	} {
		if d := DecideBash(RuleSet{}, line); d.Tier == Allow || !strings.Contains(summary(d), name) {
			t.Errorf("%s: %s, want a question naming %s\n%s", line, d.Tier, name, summary(d))
		}
		for _, p := range []*Policy{ask, edit} {
			if v := p.Decide(bashCall(line)); v.Tier == Allow {
				t.Errorf("%s: allowed in %s mode (%s)", line, p.Mode(), v.Reason)
			}
		}
	}
	// Controls: names on the allow-list, a script's own lower-case
	// variables, and options that export nothing.
	for _, line := range []string{
		`export LANG=C; go test ./...`,
		`d=src; i=0; go test ./...`,
		`RUST_BACKTRACE=1 cargo test`,
		`NO_COLOR=1 make test`,
		`make test V=1`,
		`CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build ./...`,
		`env GOOS=windows go build ./...`,
		`export TZ=UTC LC_ALL=C.UTF-8 PYTHONUNBUFFERED=1; python3 -m pytest -q`,
		`CARGO_TERM_COLOR=always cargo build`,
		`for f in a b; do echo "$f"; done`,
		`read -r line < go.mod; echo hi`,
		`set -euo pipefail; go vet ./...`,
		`bash -euo pipefail -c 'go vet ./...'`,
		`export -p`,
	} {
		if d := DecideBash(RuleSet{}, line); d.Tier != Allow {
			t.Errorf("control %s: %s\n%s", line, d.Tier, summary(d))
		}
	}
	// A lower-case variable used as a path asks for that reason only.
	a, err := ParseShell(`d=src; ls "$d"`)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Risky) > 0 || slices.ContainsFunc(a.Commands[0].Risky, func(r string) bool { return strings.Contains(r, "sets") }) {
		t.Errorf(`d=src; ls "$d": %q %q`, a.Risky, a.Commands[0].Risky)
	}
}

// TestRiskyAssign: the deny-list's names are risky even as a plain,
// unexported assignment; the allow-list's never; anything else when
// exported or upper-case.
func TestRiskyAssign(t *testing.T) {
	for _, tc := range []struct {
		name     string
		exported bool
		risky    bool
	}{
		{"PATH", false, true}, {"IFS", false, true}, {"BASH_ENV", false, true}, {"PS4", false, true},
		{"GIT_DIR", false, true}, {"LD_AUDIT", false, true}, {"npm_config_x", false, true}, {"http_proxy", false, true},
		{"GOCACHEPROG", false, true}, {"CGO_CFLAGS", false, true}, {"Foo", false, true}, {"d", true, true},
		{"LANG", true, false}, {"LC_ALL", true, false}, {"CARGO_TERM_COLOR", true, false}, {"GOOS", true, false},
		{"d", false, false}, {"my_var", false, false},
	} {
		r := riskyAssign(tc.name, tc.exported)
		if (r != "") != tc.risky || r != "" && !strings.Contains(r, tc.name) {
			t.Errorf("riskyAssign(%s, %v) = %q, want risky %v", tc.name, tc.exported, r, tc.risky)
		}
	}
	// The allow-list holds nothing the deny-list names.
	for _, n := range strings.Fields("LANG LANGUAGE LC_ALL TZ TERM COLUMNS LINES NO_COLOR FORCE_COLOR CLICOLOR CLICOLOR_FORCE CI GOOS GOARCH CGO_ENABLED GOMAXPROCS GOGC GOTRACEBACK RUST_BACKTRACE RUST_LOG CARGO_TERM_COLOR PYTHONUNBUFFERED NODE_ENV") {
		if !harmlessEnv(n) {
			t.Errorf("%s is not on the allow-list", n)
		}
		if riskyEnv()[n] {
			t.Errorf("%s is on both lists", n)
		}
	}
}

// A rule an "always" answer saves for a harmless command never allows,
// unasked, a form of it that deletes: deletions ask in every mode unless
// a rule names them (red team: "session" on git update-ref refs/heads/x
// HEAD saved Bash(git update-ref:*), and git update-ref -d refs/heads/main
// then ran unasked in ask and auto mode).
func TestSuggestedRuleNeverCoversADeletion(t *testing.T) {
	for _, tc := range []struct{ harmless, deleting string }{
		{"git update-ref refs/heads/backup HEAD", "git update-ref -d refs/heads/main"},
		{"git symbolic-ref HEAD", "git symbolic-ref -d HEAD"},
		{"git reflog show", "git reflog expire --expire=now --all"},
		{"git gc", "git gc --prune=now"},
		{"git prune -n", "git prune"},
		{"git fetch origin", "git fetch --prune origin +refs/heads/*:refs/heads/*"},
		{"git pull origin main", "git pull --prune origin +refs/heads/*:refs/heads/*"},
		{"git send-pack --dry-run . main", "git send-pack . :refs/heads/main"},
		{"git stash list", "git stash drop"},
		{"git branch -a", "git branch -D main"},
		{"git tag -l", "git tag -d v1"},
		{"git clean -n", "git clean -fdx"},
		{"find . -name x", "find . -delete"},
	} {
		a, err := ParseShell(tc.harmless)
		if err != nil {
			t.Fatal(err)
		}
		rule, _ := SuggestRule(a.Commands[0])
		if rule == "" {
			continue
		}
		r, err := ParseRule(rule, Source{File: "rules.toml"})
		if err != nil {
			t.Fatalf("%q: suggested %q does not parse: %v", tc.harmless, rule, err)
		}
		d, err := ParseShell(tc.deleting)
		if err != nil {
			t.Fatal(err)
		}
		if r.MatchCommand(d.Commands[0].Words) {
			t.Errorf("the rule saved for %q, %s, also allows %q", tc.harmless, rule, tc.deleting)
		}
		// The decision with that rule, in every mode that could run it.
		p, _, _, _ := testPolicy(t, ModeAsk, "")
		p.AllowForSession(r)
		for _, mode := range []Mode{ModeAsk, ModeEdit, ModeAuto} {
			if err := p.SetMode(mode); err != nil {
				t.Fatal(err)
			}
			v := p.Decide(Call{Tool: "bash", Effect: EffectExec, Command: tc.deleting})
			if v.Tier != Ask || v.Deletes() == "" {
				t.Errorf("%s mode with %s: %q is %s (%s), want a deletion's question", mode, rule, tc.deleting, v.Tier, v.Reason)
			}
		}
	}
}

// A line of more commands than the analysis looks at is asked about, at
// once: a pipeline of thousands of distinctly named commands held the
// supervisor for minutes (red team, round 5); one just within the bound
// is analysed as usual, and so is one inside bash -c.
func TestLongPipelineIsAskedNotAnalysed(t *testing.T) {
	line := func(n int) string {
		var w []string
		for i := range n {
			w = append(w, fmt.Sprintf("c%d", i))
		}
		return strings.Join(w, "|")
	}
	for _, tc := range []struct {
		line string
		err  bool
	}{
		{line(maxCommands), false},
		{line(maxCommands + 1), true},
		{line(20000), true},
		{"echo hi | bash -c '" + line(maxCommands-2) + "'", false},
	} {
		_, err := ParseShell(tc.line)
		if (err != nil) != tc.err || tc.err && !strings.Contains(err.Error(), "more than 512 commands") {
			t.Errorf("%d bytes: err %v, want an error %v", len(tc.line), err, tc.err)
		}
	}
	if d := DecideBash(RuleSet{}, line(20000)); d.Tier != Ask || !strings.Contains(d.Reason, "script file") {
		t.Errorf("decision %s (%s)", d.Tier, d.Reason)
	}
	// Inside bash -c, the script's own commands count too: one beyond
	// the bound is not analysed, so the line is not allowed.
	if d := DecideBash(RuleSet{}, "bash -c '"+line(maxCommands)+"'"); d.Tier == Allow {
		t.Errorf("bash -c with %d commands: %s (%s)", maxCommands, d.Tier, d.Reason)
	}
}

// TestCommandQuoted: what the user reads about a command keeps the quotes
// the shell needs (the --yes line showed `sed -i s/a - b/a + b/ calc.py`:
// new user, 2026-12-03), and adds none where it needs none.
func TestCommandQuoted(t *testing.T) {
	for line, want := range map[string]string{
		`sed -i 's/a - b/a + b/' calc.py`:   `sed -i 's/a - b/a + b/' calc.py`,
		`git log --format=%h -n1`:           `git log --format=%h -n1`,
		`find . -name '*.go' -exec rm {} +`: `find . -name '*.go' -exec rm {} +`,
		`echo "it's" ''`:                    `echo "it's" ''`,
		`rm -rf "$HOME/x" ~/y "$D/a b"`:     `rm -rf $HOME/x ~/y "$D/a b"`,
		`echo 'a|b;c'`:                      `echo 'a|b;c'`,
	} {
		an, err := ParseShell(line)
		if err != nil || len(an.Commands) == 0 {
			t.Fatalf("%s: %v", line, err)
		}
		if got := an.Commands[0].Quoted(); got != want {
			t.Errorf("%s: %s, want %s", line, got, want)
		}
	}
	// The reason an approval line shows names the command so.
	if d := DecideBash(RuleSet{}, `sed -i 's/a - b/a + b/' calc.py`); !strings.HasPrefix(d.Reason, `sed -i 's/a - b/a + b/' calc.py: `) {
		t.Errorf("the reason: %s", d.Reason)
	}
}

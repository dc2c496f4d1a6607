package policy

// This file is the static analysis of a bash command line: every simple
// command it would run, found through lists, pipelines, compound commands,
// substitutions, `bash -c` strings and wrappers such as env, timeout, xargs
// and find -exec, with what each one reads and writes. It never runs
// anything; what it cannot know statically it reports as Risky, so the
// caller can refuse to auto-allow it.

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// maxDepth bounds how deeply scripts inside scripts (bash -c, eval, trap,
// watch, heredocs to a shell) and wrappers inside wrappers are followed.
// Deeper nesting is Risky rather than an error.
const maxDepth = 8

// maxCommands bounds the simple commands of one line, scripts inside it
// included, that the analysis looks at: a model's line of thousands of
// piped commands (c0|c1|…) held the supervisor for minutes at gigabytes,
// before any decision (red team, round 5). A longer line is not analysed,
// and so is asked about.
const maxCommands = 512

// Redirect is one redirection of a simple command.
type Redirect struct {
	// Op is the operator with its file descriptor, as written: ">", "2>",
	// ">>", "<", "<>", "&>", ">&", "<<", "<<<" …
	Op string `json:"op"`
	// Target is the file (quotes removed); empty for heredocs, here-strings
	// and descriptor duplications such as 2>&1.
	Target  string `json:"target,omitempty"`
	Write   bool   `json:"write,omitempty"`
	Dynamic bool   `json:"dynamic,omitempty"`
}

// PathArg is a word that may name a file: a path argument or a
// redirection target, relative to the command's Dir.
type PathArg struct {
	Text  string `json:"text"`
	Write bool   `json:"write,omitempty"`
	// Dynamic: the text holds an expansion, so the real path is unknown.
	Dynamic bool `json:"dynamic,omitempty"`
}

// Command is one simple command the line would run.
type Command struct {
	// Words is the argv after quote removal. A word with an expansion keeps
	// the expansion's source text ($HOME, $(…)) in place of its value.
	Words []string `json:"words"`
	// Dynamic marks the words whose value is only known at run time
	// (parameter, command, arithmetic or brace expansion); Glob the words
	// with an unquoted pattern (*, ?, [...]), which the shell expands to
	// file names.
	Dynamic []bool `json:"dynamic,omitempty"`
	Glob    []bool `json:"glob,omitempty"`
	// Assigns are the NAME=value prefixes (or env's assignments).
	Assigns []string `json:"assigns,omitempty"`
	// Dir is the directory set by a preceding static cd or pushd in the
	// same line ("" is the call's own directory). DirUnknown: a cd whose
	// target or success is unknown came first; Dir is then meaningless.
	Dir        string `json:"dir,omitempty"`
	DirUnknown bool   `json:"dir_unknown,omitempty"`
	// Redirects are the command's own redirections and those of the
	// compound commands around it.
	Redirects []Redirect `json:"redirects,omitempty"`
	// Paths are the arguments and redirection targets that may name files.
	Paths []PathArg `json:"paths,omitempty"`
	// Via is how the command was reached: "bash -c", "xargs", "$(…)" …
	// (outermost first); empty for a command written directly.
	Via []string `json:"via,omitempty"`
	// Feeds names the commands whose output flows into this one: earlier
	// parts of its pipeline and the substitutions in its words.
	Feeds []string `json:"feeds,omitempty"`
	// Wrapper: the command runs another command (or a script) that is
	// reported as a command of its own.
	Wrapper bool `json:"wrapper,omitempty"`
	// Risky says why the command must not run without asking, whatever
	// the rules say.
	Risky []string `json:"risky,omitempty"`
}

// Name is the command name (the first word), or "" for a redirection
// without a command.
func (c Command) Name() string {
	if len(c.Words) == 0 {
		return ""
	}
	return c.Words[0]
}

// String is the command as words separated by blanks.
func (c Command) String() string { return strings.Join(c.Words, " ") }

// Quoted is the command as the shell would need it written, for what the
// user reads about it: a word with a blank, a quote or another character
// the shell would take apart is quoted (`sed -i 's/a - b/a + b/' f`, not
// `sed -i s/a - b/a + b/ f`: new user, 2026-12-03). A word with an
// expansion or a glob keeps its source text (in double quotes when it
// holds a blank).
func (c Command) Quoted() string {
	words := make([]string, len(c.Words))
	for i, w := range c.Words {
		words[i] = w
		if i < len(c.Dynamic) && c.Dynamic[i] {
			if strings.ContainsAny(w, " \t\n") {
				words[i] = `"` + w + `"` // one word, as it was written
			}
			continue
		}
		if i < len(c.Glob) && c.Glob[i] {
			continue
		}
		if needsQuotes(w) {
			if q, err := syntax.Quote(w, syntax.LangBash); err == nil {
				words[i] = q
			}
		}
	}
	return strings.Join(words, " ")
}

// needsQuotes reports whether the shell would take w apart or read
// something in it unquoted (syntax.Quote also quotes --format=x and
// find's {}, which it need not; a ~ is kept, as the parser keeps it).
func needsQuotes(w string) bool {
	if w == "" || w[0] == '#' {
		return true
	}
	for _, r := range w {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r > unicode.MaxASCII && unicode.IsGraphic(r) && !unicode.IsSpace(r):
		case strings.ContainsRune("_-./:,=+@%^~#{}", r):
		default:
			return true
		}
	}
	return false
}

// Analysis is what ParseShell found in a command line.
type Analysis struct {
	Commands []Command `json:"commands"`
	// Risky are reasons that concern the whole line rather than one
	// command (an assignment to PATH, say).
	Risky []string `json:"risky,omitempty"`
}

// ParseShell parses a bash command line and returns every simple command
// it would run. A syntax error is an error: the caller should ask.
func ParseShell(line string) (Analysis, error) {
	a := &analyzer{dirFuncs: map[string]bool{}}
	if err := a.script(line, walkCtx{}, dirState{}, 0); err != nil {
		return Analysis{}, err
	}
	return Analysis{Commands: a.cmds, Risky: a.risky}, nil
}

type analyzer struct {
	cmds  []Command
	risky []string
	// calls counts the simple commands of every script parsed (maxCommands).
	calls int
	// dirFuncs are functions whose body changes directory; calling one
	// makes the directory unknown.
	dirFuncs map[string]bool
}

// walkCtx is what enclosing constructs pass down to the commands inside.
type walkCtx struct {
	via     []string
	inherit []Redirect // redirections of enclosing compound commands
	depth   int
}

func (c walkCtx) with(via string) walkCtx {
	c.via = append(slices.Clip(c.via), via)
	return c
}

// dirState is the working directory at a point of the script.
type dirState struct {
	dir     string
	unknown bool
}

func merge(a, b dirState) dirState {
	if a == b {
		return a
	}
	return dirState{unknown: true}
}

func parser() *syntax.Parser {
	return syntax.NewParser(syntax.Variant(syntax.LangBash))
}

func (a *analyzer) addRisky(reason string) {
	if !slices.Contains(a.risky, reason) {
		a.risky = append(a.risky, reason)
	}
}

// script parses src and analyses it as a whole script.
func (a *analyzer) script(src string, c walkCtx, d dirState, depth int) error {
	f, err := parser().Parse(strings.NewReader(src), "")
	if err != nil {
		return fmt.Errorf("parse the command line: %w", err)
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if _, ok := n.(*syntax.CallExpr); ok {
			a.calls++
		}
		return a.calls <= maxCommands
	})
	if a.calls > maxCommands {
		return fmt.Errorf("the line holds more than %d commands, more than brig analyses; put them in a script file and run that", maxCommands)
	}
	c.depth = depth
	if arithmeticOnVariables(f) {
		a.addRisky(riskArith)
	}
	for _, r := range hiddenEvaluations(f) {
		a.addRisky(r)
	}
	for _, r := range expansionAssigns(f) {
		a.addRisky(r)
	}
	a.stmts(f.Stmts, c, d)
	return nil
}

// expansionAssigns are the risks of the variables that ${NAME=value} and
// ${NAME:=value} set (a plain assignment, when NAME is unset or empty).
func expansionAssigns(f *syntax.File) []string {
	var out []string
	syntax.Walk(f, func(n syntax.Node) bool {
		if x, ok := n.(*syntax.ParamExp); ok && x.Exp != nil && x.Param != nil &&
			(x.Exp.Op == syntax.AssignUnset || x.Exp.Op == syntax.AssignUnsetOrNull) {
			if r := riskyAssign(x.Param.Value, false); r != "" {
				out = appendNew(out, r)
			}
		}
		return true
	})
	return out
}

// arithmeticOnVariables reports whether the script evaluates a variable
// in an arithmetic context ($((x)), (( )), let, for ((;;)), [[ a -eq b ]],
// ${a[i]}, a[i]=v, a=([i]=v), ${s:off}). Bash evaluates such a variable's
// value as an expression, and an expression can run commands
// (x='a[$(cmd)]'), so the command it hides is invisible here. Numbers
// alone are fine. (An associative array's subscript is not arithmetic,
// but which kind a[i] is is only known at run time.)
func arithmeticOnVariables(f *syntax.File) bool {
	found := false
	inArith := func(n syntax.Node) {
		if n == nil {
			return
		}
		syntax.Walk(n, func(n syntax.Node) bool {
			switch x := n.(type) {
			case *syntax.Word:
				if lit := x.Lit(); lit == "" || !isNumber(strings.TrimPrefix(lit, "-")) && !strings.HasPrefix(lit, "0x") {
					found = true
				}
				return false
			case *syntax.ParamExp:
				found = true
				return false
			}
			return true
		})
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.ArithmExp:
			inArith(x.X)
		case *syntax.ArithmCmd:
			inArith(x.X)
		case *syntax.LetClause:
			for _, e := range x.Exprs {
				inArith(e)
			}
		case *syntax.CStyleLoop:
			inArith(x.Init)
			inArith(x.Cond)
			inArith(x.Post)
		case *syntax.BinaryTest:
			switch x.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				inArith(x.X)
				inArith(x.Y)
			}
		case *syntax.Assign:
			if x.Index != nil {
				inArith(x.Index) // a[$i]=v: an indexed array's subscript is arithmetic
			}
		case *syntax.ArrayElem:
			if x.Index != nil {
				inArith(x.Index)
			}
		case *syntax.ParamExp:
			if x.Index != nil && !listsKeys(x.Index) { // ${a[@]}: every element, no arithmetic
				inArith(x.Index)
			}
			if x.Slice != nil {
				inArith(x.Slice.Offset)
				inArith(x.Slice.Length)
			}
		}
		return !found
	})
	return found
}

func (a *analyzer) stmts(list []*syntax.Stmt, c walkCtx, d dirState) dirState {
	for _, s := range list {
		_, d = a.stmt(s, c, d)
	}
	return d
}

// stmt analyses one statement from directory d and returns the directory
// when it succeeded and whatever happened.
func (a *analyzer) stmt(s *syntax.Stmt, c walkCtx, d dirState) (succ, any dirState) {
	if s == nil || s.Cmd == nil && len(s.Redirs) == 0 {
		return d, d
	}
	start := len(a.cmds)
	redirs, feeds, risky := a.redirects(s.Redirs, c, d)
	if call, ok := s.Cmd.(*syntax.CallExpr); ok || s.Cmd == nil {
		succ, any = a.call(call, redirs, feeds, risky, s.Redirs, c, d)
	} else {
		c.inherit = append(slices.Clip(c.inherit), redirs...)
		succ, any = a.compound(s.Cmd, c, d)
		for i := start; i < len(a.cmds); i++ {
			a.cmds[i].Feeds = appendNew(a.cmds[i].Feeds, feeds...)
			a.cmds[i].Risky = appendNew(a.cmds[i].Risky, risky...)
		}
		if start == len(a.cmds) {
			for _, r := range risky {
				a.addRisky(r)
			}
		}
	}
	if s.Background || s.Coprocess || s.Disown {
		return d, d // runs in a subshell of its own
	}
	if s.Negated {
		return any, any
	}
	return succ, any
}

func (a *analyzer) compound(cmd syntax.Command, c walkCtx, d dirState) (succ, any dirState) {
	switch x := cmd.(type) {
	case *syntax.BinaryCmd:
		switch x.Op {
		case syntax.AndStmt:
			xs, xa := a.stmt(x.X, c, d)
			ys, ya := a.stmt(x.Y, c, xs)
			return ys, merge(xa, ya)
		case syntax.OrStmt:
			xs, xa := a.stmt(x.X, c, d)
			ys, ya := a.stmt(x.Y, c, xa)
			return merge(xs, ys), merge(xa, ya)
		default: // | and |&: each side runs in a subshell
			start := len(a.cmds)
			a.stmt(x.X, c, d)
			mid := len(a.cmds)
			a.stmt(x.Y, c, d)
			names := commandNames(a.cmds[start:mid])
			for i := mid; i < len(a.cmds); i++ {
				a.cmds[i].Feeds = appendNew(a.cmds[i].Feeds, names...)
			}
			return d, d
		}
	case *syntax.Subshell:
		a.stmts(x.Stmts, c, d)
		return d, d
	case *syntax.Block:
		r := a.stmts(x.Stmts, c, d)
		return r, r
	case *syntax.IfClause:
		r := a.ifClause(x, c, d)
		return r, r
	case *syntax.WhileClause:
		return a.loop(c, d, func(d dirState) dirState {
			return a.stmts(x.Do, c, a.stmts(x.Cond, c, d))
		})
	case *syntax.ForClause:
		switch l := x.Loop.(type) {
		case *syntax.WordIter:
			for _, w := range l.Items {
				a.lineSubst(w, c, d)
			}
			if l.Name != nil {
				if r := riskyAssign(l.Name.Value, false); r != "" {
					a.addRisky(r)
				}
			}
		case *syntax.CStyleLoop:
			a.lineSubst(l, c, d)
		}
		return a.loop(c, d, func(d dirState) dirState { return a.stmts(x.Do, c, d) })
	case *syntax.CaseClause:
		a.lineSubst(x.Word, c, d)
		r := d
		for _, item := range x.Items {
			for _, p := range item.Patterns {
				a.lineSubst(p, c, d)
			}
			r = merge(r, a.stmts(item.Stmts, c, d))
		}
		return r, r
	case *syntax.FuncDecl:
		if x.Body != nil {
			if _, end := a.stmt(x.Body, c, d); end != d && x.Name != nil {
				a.dirFuncs[x.Name.Value] = true
			}
		}
		return d, d
	case *syntax.DeclClause:
		return a.decl(x, c, d)
	case *syntax.TimeClause:
		if x.Stmt != nil {
			return a.stmt(x.Stmt, c, d)
		}
		return d, d
	case *syntax.CoprocClause:
		a.stmt(x.Stmt, c, d)
		return d, d
	case *syntax.TestDecl:
		a.stmt(x.Body, c, d)
		return d, d
	default: // [[ ]], (( )), let: only their substitutions run commands
		a.lineSubst(cmd, c, d)
		return d, d
	}
}

// lineSubst analyses the substitutions in a part of the script that is
// not a simple command (a for list, a case word, [[ ]]); their risks
// belong to the line.
func (a *analyzer) lineSubst(n syntax.Node, c walkCtx, d dirState) {
	_, risky := a.subst(n, c, d)
	for _, r := range risky {
		a.addRisky(r)
	}
}

func (a *analyzer) ifClause(x *syntax.IfClause, c walkCtx, d dirState) dirState {
	cond := a.stmts(x.Cond, c, d)
	then := a.stmts(x.Then, c, cond)
	if x.Else == nil {
		return merge(then, cond)
	}
	if len(x.Else.Cond) == 0 { // else
		return merge(then, a.stmts(x.Else.Then, c, cond))
	}
	return merge(then, a.ifClause(x.Else, c, cond))
}

// loop analyses a loop body once; if the body can change the directory,
// the directory of every command in it (from the second iteration on)
// and after it is unknown.
func (a *analyzer) loop(c walkCtx, d dirState, body func(dirState) dirState) (succ, any dirState) {
	start := len(a.cmds)
	if end := body(d); end == d {
		return d, d
	}
	for i := start; i < len(a.cmds); i++ {
		markDirUnknown(&a.cmds[i])
	}
	u := dirState{unknown: true}
	return u, u
}

func markDirUnknown(cmd *Command) {
	if !cmd.DirUnknown {
		cmd.DirUnknown = true
		cmd.Risky = appendNew(cmd.Risky, riskDir)
	}
}

// The Risky reasons.
const (
	riskCmdSubst  = "command substitution runs a command whose output becomes part of this one"
	riskProcSubst = "process substitution runs a hidden command"
	riskDynName   = "the command name is only known at run time"
	riskEval      = "eval runs a string as commands"
	riskSource    = "source runs a file's commands, which are not analysed"
	riskDir       = "the working directory is unknown (a cd whose target or success is unknown came first)"
	riskStdin     = "the shell reads its script from stdin, which is not analysed"
	riskDynScript = "the script string is only known at run time"
	// With alias expansion on (set -o posix, shopt -s expand_aliases) a
	// later command of the line runs an alias's text, which the analysis
	// never sees: cat README.md after alias cat='rm -rf src; cat'.
	riskAlias          = "alias makes a command name run other commands"
	riskAliasExpansion = "it turns on alias expansion, so a command name can run an alias's commands"
	riskXargs          = "xargs adds arguments read from stdin"
	riskDepth          = "scripts or wrappers nested too deeply to analyse"
	riskDynPath        = "a path argument is only known at run time"
	riskGitConfig      = "git -c, --config-env and --exec-path change what git runs"
	riskScript         = "runs a script file, whose commands are not analysed"
	riskFuncDir        = "calls a function that changes directory"
	riskArith          = "arithmetic on a variable: bash evaluates its value as an expression, which can run commands"
	riskDynVar         = "sets a variable whose name is only known at run time"
	riskNameref        = "declare -n makes a name refer to another variable, so assigning to it sets that one"
	riskIntVar         = "declare -i evaluates every value the variable is given as arithmetic, which can run commands"
	// Bash expands the subscript of a variable name given as a word
	// (printf -v 'a[$(cmd)]', read, declare, unset, wait -p, test -v) or
	// reached through another variable (${!x}, declare -n): the text is
	// quoted here, but a command in it runs.
	riskSubscript  = "names a variable with a subscript, which bash expands as it runs (a command in the subscript runs too)"
	riskDynVarName = "names a variable only known at run time, whose subscript bash would expand (a command in it runs too)"
	riskIndirect   = "${!x} expands the variable x names, subscript and all, which can run commands"
	riskPrompt     = "${x@P} expands a value as a prompt, which runs the command substitutions in it"
	riskArrayValue = "declare reads a value in parentheses, or one only known at run time, as an array assignment and expands it again, which can run commands"
)

// subscripted reports whether name (a word naming a variable) has a
// subscript other than a plain number, which bash would expand.
func subscripted(name string) bool {
	_, sub, ok := strings.Cut(name, "[")
	return ok && !isNumber(strings.TrimSuffix(sub, "]"))
}

// hiddenEvaluations are the risks of expansions that evaluate a
// variable's value as shell code: ${!x} (x's value is a name, and a
// subscript in it is expanded; ${!prefix*} and ${!a[@]} only list
// names) and ${x@P}, and [[ -v NAME ]] / [[ -R NAME ]] whose NAME is
// not a plain literal name.
func hiddenEvaluations(f *syntax.File) []string {
	var out []string
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.ParamExp:
			if x.Excl && x.Names == 0 && !listsKeys(x.Index) {
				out = appendNew(out, riskIndirect)
			}
			if x.Exp != nil && x.Exp.Op == syntax.OtherParamOps && x.Exp.Word != nil && strings.Contains(x.Exp.Word.Lit(), "P") {
				out = appendNew(out, riskPrompt)
			}
		case *syntax.UnaryTest:
			if x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar {
				if w, ok := x.X.(*syntax.Word); !ok || !plainName(w) {
					out = appendNew(out, riskSubscript)
				}
			}
		}
		return true
	})
	return out
}

// listsKeys reports whether idx is [@] or [*]: ${a[@]} is every element,
// ${!a[@]} every key.
func listsKeys(idx syntax.ArithmExpr) bool {
	w, ok := idx.(*syntax.Word)
	return ok && (w.Lit() == "@" || w.Lit() == "*")
}

// plainName reports whether w is a literal variable name, or one with a
// numeric subscript.
func plainName(w *syntax.Word) bool {
	lit := w.Lit()
	name, _, _ := strings.Cut(lit, "[")
	return lit != "" && syntax.ValidName(name) && !subscripted(lit)
}

// Setting a variable is asked about unless its name is on harmlessEnv:
// an allow-list, because a deny-list of the variables that make a tool run
// or load something cannot be complete (GOCACHEPROG, CGO_CFLAGS=-wrapper,
// GNUMAKEFLAGS=--eval, PKG_CONFIG, GOPROXY, RUSTUP_TOOLCHAIN … each runs a
// program of the caller's choosing, and every tool adds its own). Which
// assignments count (riskyAssign):
//
//   - an exported one (export, declare/typeset/local -x, a NAME=value
//     prefix, env NAME=value, a make command-line variable): any name off
//     the allow-list;
//   - a plain NAME=value (or a for, read, printf -v, mapfile, getopts or
//     ${NAME:=…} that sets NAME) to a name with an upper-case letter: bash
//     passes a new value of an inherited variable on to the commands it
//     runs, and the environment's variables are upper-case;
//   - any assignment to a name on riskyEnv or riskyPrefixes, upper- or
//     lower-case: a script's own lower-case variable (d=src, i=0) is
//     allowed, but http_proxy or npm_config_* is not.
//
// The commands that turn every later assignment into an exported one
// (set -a, set -k, bash -a) ask of their own (exportAllRisk).

// riskyEnv are variables that change which program runs or what it
// loads, so setting them defeats any rule about the command name. They
// are risky even as a plain, unexported assignment (IFS and PS4 change
// the shell itself; the lower-case proxies are what most tools read).
var riskyEnv = wordSet(`PATH LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT BASH_ENV ENV SHELLOPTS BASHOPTS PS4 PROMPT_COMMAND IFS
	CDPATH GLOBIGNORE GIT_SSH GIT_SSH_COMMAND GIT_EXTERNAL_DIFF GIT_PAGER GIT_EDITOR GIT_ASKPASS
	GIT_EXEC_PATH GIT_DIR GIT_WORK_TREE GIT_PROXY_COMMAND GIT_CONFIG GIT_CONFIG_GLOBAL GIT_CONFIG_SYSTEM
	GIT_CONFIG_COUNT GIT_TEMPLATE_DIR PAGER EDITOR VISUAL LESSOPEN NODE_OPTIONS PYTHONSTARTUP PYTHONPATH
	PERL5OPT PERL5LIB RUBYOPT GOFLAGS CC CXX RUSTC_WRAPPER RUSTC CARGO_BUILD_RUSTC_WRAPPER
	npm_config_script_shell MAKEFLAGS MAKESHELL MAKEFILES RIPGREP_CONFIG_PATH PYTEST_ADDOPTS
	PYTEST_PLUGINS RUSTFLAGS RUSTDOCFLAGS RUSTC_WORKSPACE_WRAPPER JAVA_TOOL_OPTIONS _JAVA_OPTIONS
	JDK_JAVA_OPTIONS GOENV GOROOT HOME XDG_CONFIG_HOME PYTHONWARNINGS PYTHONHOME PYTHONBREAKPOINT
	RUBYLIB PERL5DB PERLLIB NODE_PATH ZDOTDIR GCONV_PATH MYPY_CONFIG_FILE_DIR GOCACHEPROG GNUMAKEFLAGS MFLAGS
	http_proxy https_proxy ftp_proxy all_proxy no_proxy`)

// riskyPrefixes are variable prefixes whose names configure what a tool
// runs (cargo's and npm's config, git's, the dynamic loader's, exported
// bash functions).
var riskyPrefixes = []string{"GIT_", "LD_", "CARGO_", "npm_config_", "NPM_CONFIG_", "BASH_FUNC_", "YARN_", "PNPM_"}

// harmlessEnv reports whether name is on the allow-list of variables that
// may be set, exported included, without asking: each only picks a
// language, time zone, terminal size or colour, verbosity, target platform
// or runtime tuning, and none names a program, a path, a plugin, flags, a
// proxy or a config file, nor selects a toolchain. Left out on purpose,
// among others: GOFLAGS, GOTOOLCHAIN, GOPROXY, GOCACHE, GOCACHEPROG,
// GOPATH, GOWORK, GOAUTH, CGO_*FLAGS, CC, AR, PKG_CONFIG, RUSTFLAGS,
// RUSTUP_TOOLCHAIN, MAKE, MAKEFLAGS, UV_PYTHON, PYTHONPATH, PYTHONUSERBASE,
// PYTEST_ADDOPTS, TMPDIR, TERMINFO, LOCPATH and DEBUG (often flags that a
// makefile passes to the compiler). A switch rather than a table: it costs
// nothing at start (see wordSet).
func harmlessEnv(name string) bool {
	switch name {
	case "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_NUMERIC", "LC_TIME",
		"LC_MONETARY", "LC_PAPER", "LC_NAME", "LC_ADDRESS", "LC_TELEPHONE", "LC_MEASUREMENT", "LC_IDENTIFICATION",
		"TZ", "TERM", "COLORTERM", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE",
		"CI", "VERBOSE", "V",
		// Go: the target platform, cgo on or off, experiments, module mode, runtime tuning.
		"GOOS", "GOARCH", "GOARM", "GOARM64", "GOAMD64", "GO386", "GOWASM", "GOMIPS", "GOMIPS64", "GOPPC64",
		"GORISCV64", "CGO_ENABLED", "GOEXPERIMENT", "GO111MODULE", "GOMAXPROCS", "GOGC", "GOMEMLIMIT", "GOTRACEBACK",
		// Rust and cargo: backtraces, logging, test threads, output, incremental builds.
		"RUST_BACKTRACE", "RUST_LIB_BACKTRACE", "RUST_LOG", "RUST_LOG_STYLE", "RUST_TEST_THREADS",
		"CARGO_TERM_COLOR", "CARGO_TERM_VERBOSE", "CARGO_TERM_QUIET", "CARGO_INCREMENTAL",
		// Python: output buffering and encoding, bytecode files, hashing,
		// fault handler, dev mode; and switches that only load less.
		"PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING", "PYTHONHASHSEED", "PYTHONUTF8",
		"PYTHONFAULTHANDLER", "PYTHONDEVMODE", "PYTHONNOUSERSITE", "PYTHONSAFEPATH", "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
		"NODE_ENV", "NODE_NO_WARNINGS":
		return true
	}
	return false
}

// varRisk is why a builtin that sets a variable by name (export,
// declare, printf -v, read, mapfile, getopts …), one that exports every
// later assignment (set -a) or a command's lookup (hash -p, enable -f)
// must be asked about: it changes what later commands of the line run.
// It is the first of varRisks.
func varRisk(c Command) string {
	if r := varRisks(c); len(r) > 0 {
		return r[0]
	}
	return ""
}

// varRisks are all of varRisk's reasons for c.
func varRisks(c Command) []string {
	if len(c.Words) == 0 || c.Dynamic[0] {
		return nil
	}
	var out []string
	switch c.Words[0] {
	case "alias":
		if slices.ContainsFunc(c.Words[1:], func(w string) bool { return strings.Contains(w, "=") }) || slices.Contains(c.Dynamic[1:], true) {
			out = append(out, riskAlias)
		}
	case "hash":
		if hasShort(c, "p") {
			out = append(out, "hash -p makes a command name run another program")
		}
	case "enable":
		if hasShort(c, "f") {
			out = append(out, "enable -f loads a builtin from a file")
		}
	case "printf", "read", "mapfile", "readarray", "getopts", "wait":
		for _, n := range setVarNames(c) {
			switch {
			case n.dynamic:
				out = appendNew(out, riskDynVar)
			case subscripted(n.text):
				out = appendNew(out, riskSubscript)
			default:
				if r := riskyAssign(n.text, false); r != "" {
					out = appendNew(out, r)
				}
			}
		}
	case "unset":
		// unset 'a[$(cmd)]' expands the subscript (when a is an array).
		for i := 1; i < len(c.Words); i++ {
			switch {
			case c.Dynamic[i]:
				out = appendNew(out, riskDynVarName)
			case subscripted(c.Words[i]):
				out = appendNew(out, riskSubscript)
			}
		}
	case "test", "[":
		// test -v NAME and -R NAME expand a subscript in NAME.
		for i := 2; i < len(c.Words); i++ {
			if c.Dynamic[i-1] || (c.Words[i-1] != "-v" && c.Words[i-1] != "-R") {
				continue
			}
			switch {
			case c.Dynamic[i]:
				out = appendNew(out, riskDynVarName)
			case subscripted(c.Words[i]):
				out = appendNew(out, riskSubscript)
			}
		}
	case "export", "declare", "typeset", "local", "readonly":
		out = declRisks(c)
	case "set", "shopt":
		if r := exportAllRisk(c); r != "" {
			out = append(out, r)
		}
		for i, w := range c.Words[1:] {
			if w == "posix" || w == "expand_aliases" || c.Dynamic[i+1] {
				out = append(out, riskAliasExpansion)
				break
			}
		}
	}
	switch name := baseName(c.Words[0]); {
	case isShell(name):
		if r := exportAllRisk(c); r != "" {
			out = append(out, r)
		}
	case name == "make" || name == "gmake":
		out = append(out, makeVarRisks(c)...)
	}
	return out
}

// declRisks are the risks of export, declare, typeset, local and readonly,
// whether written as such or run through builtin or command: every
// variable they set (exported for export and -x, and for a bare name
// too: export NAME exports its value), a name known only at run time,
// and the attributes that make a later assignment do more than assign.
// An option anywhere before "--" counts, though bash reads them only
// before the first name.
func declRisks(c Command) []string {
	var out []string
	builtin := c.Words[0]
	exported, funcs := builtin == "export", false
	var args []int
	opts := true
	for i := 1; i < len(c.Words); i++ {
		w := c.Words[i]
		switch {
		case c.Dynamic[i]:
			args = append(args, i)
		case opts && w == "--":
			opts = false
		case opts && len(w) > 1 && (w[0] == '-' || w[0] == '+'):
			if strings.ContainsRune(w, 'f') {
				funcs = true // names functions, not variables
			}
			if w[0] == '+' || builtin == "export" || builtin == "readonly" {
				continue // export -n un-exports; readonly has no -x, -n, -i
			}
			if strings.ContainsRune(w, 'x') {
				exported = true
			}
			if strings.ContainsRune(w, 'n') {
				out = appendNew(out, riskNameref)
			}
			if strings.ContainsRune(w, 'i') {
				out = appendNew(out, riskIntVar)
			}
		default:
			args = append(args, i)
		}
	}
	for _, i := range args {
		name, _, set := strings.Cut(c.Words[i], "=")
		name = strings.TrimSuffix(name, "+")
		if _, value, _ := strings.Cut(c.Words[i], "="); set && (c.Dynamic[i] || strings.HasPrefix(value, "(") && value != "()") && builtin != "export" {
			// declare -a x='([$(cmd)]=1)', declare -a x="$y": a value in
			// parentheses, or one only known at run time, given to an
			// array is parsed as an array assignment and expanded again.
			out = appendNew(out, riskArrayValue)
		}
		base, _, _ := strings.Cut(name, "[")
		switch {
		case subscripted(name):
			out = appendNew(out, riskSubscript) // declare 'a[$(cmd)]=1'
		case !syntax.ValidName(base):
			if c.Dynamic[i] {
				// export "$n=…", declare $OPTS X=1: the name, or an
				// option such as -x or -n, is only known at run time.
				out = appendNew(out, riskDynVar)
			} // else bash refuses it: not a valid identifier
		case funcs || !set && !exported:
			// A function's name, or a variable declared but not given a value.
		default:
			if r := riskyAssign(base, exported); r != "" {
				out = appendNew(out, r)
			}
			if _, value, _ := strings.Cut(c.Words[i], "="); set {
				if r := riskyValue(base, value, c.Dynamic[i]); r != "" {
					out = appendNew(out, r)
				}
			}
		}
	}
	return out
}

// exportAllRisk is why set -a or -k (-o allexport, -o keyword), shopt -o
// of those, or a shell started with them must be asked about: after it
// every assignment, even to a script's own lower-case variable, or every
// NAME=value word of a command, reaches the environment of the commands
// the line runs, which riskyAssign does not assume.
func exportAllRisk(c Command) string {
	const risk = "allexport (set -a) or keyword (set -k) passes every assignment on to the commands the line runs"
	name := c.Words[0]
	if name == "shopt" {
		for i, w := range c.Words[1:] {
			if c.Dynamic[i+1] || w == "allexport" || w == "keyword" {
				return risk
			}
		}
		return ""
	}
	for i := 1; i < len(c.Words); i++ {
		w := c.Words[i]
		if c.Dynamic[i] {
			if name == "set" {
				return "set with an argument only known at run time could turn on allexport"
			}
			return "" // shellOptsOK refuses a dynamic option; an operand ends them
		}
		switch {
		case w == "--" || w == "-":
			return ""
		case strings.HasPrefix(w, "--"):
			if isShell(name) && slices.Contains(shellOpts.long, strings.TrimPrefix(w, "--")) {
				i++ // --rcfile FILE
			}
		case len(w) > 1 && (w[0] == '-' || w[0] == '+'):
			if w[0] == '-' && strings.ContainsAny(w, "ak") {
				return risk
			}
			if strings.ContainsAny(w, "oO") && i+1 < len(c.Words) {
				i++ // the option's name follows
				if w[0] == '-' && (c.Dynamic[i] || c.Words[i] == "allexport" || c.Words[i] == "keyword") {
					return risk
				}
			}
		default:
			return "" // set's positional parameters, a shell's script
		}
	}
	return ""
}

// makeVarRisks: make passes a variable set on its command line on to the
// environment of every recipe, so NAME=value there is an exported
// assignment; NAME!=value runs a shell command at once.
func makeVarRisks(c Command) []string {
	var out []string
	for i := 1; i < len(c.Words); i++ {
		w := c.Words[i]
		if c.Dynamic[i] {
			if !strings.HasPrefix(w, "-") {
				out = appendNew(out, "a make argument only known at run time could set a variable")
			}
			continue
		}
		name, _, ok := strings.Cut(w, "=")
		if !ok || strings.HasPrefix(w, "-") {
			continue
		}
		if strings.HasSuffix(name, "!") {
			out = appendNew(out, "make NAME!=… runs a shell command")
			continue
		}
		name = strings.TrimRight(name, ":+?")
		if r := riskyAssign(name, true); r != "" {
			out = appendNew(out, r)
		}
		if _, value, _ := strings.Cut(w, "="); true {
			if r := riskyValue(name, value, c.Dynamic[i]); r != "" {
				out = appendNew(out, r)
			}
		}
	}
	return out
}

// varName is a word, or the rest of an option word (printf -vNAME), that
// names a variable a builtin sets.
type varName struct {
	text    string
	dynamic bool
}

// setVarNames are the variables a printf -v, read, mapfile, getopts or
// wait -p sets. Options are read as bash reads them: a cluster of
// letters, a value attached to its letter (printf -vNAME, read -p'>')
// or in the next word.
func setVarNames(c Command) []varName {
	var out []varName
	// options reads the options from index 1 (values: the letters that
	// take a value; name: the one whose value names a variable) and
	// returns the index of the first operand.
	options := func(values string, name byte) int {
		i := 1
		for ; i < len(c.Words); i++ {
			w := c.Words[i]
			if w == "--" {
				return i + 1
			}
			if c.Dynamic[i] || len(w) < 2 || w[0] != '-' {
				return i
			}
			for j := 1; j < len(w); j++ {
				l := w[j]
				if strings.IndexByte(values, l) < 0 {
					continue
				}
				var v varName
				switch {
				case j+1 < len(w):
					v = varName{text: w[j+1:]}
				case i+1 < len(c.Words):
					i++
					v = varName{c.Words[i], c.Dynamic[i]}
				}
				if l == name {
					out = append(out, v)
				}
				break
			}
		}
		return i
	}
	switch c.Words[0] {
	case "printf":
		options("v", 'v')
	case "wait":
		options("p", 'p')
	case "getopts":
		if len(c.Words) > 2 {
			out = append(out, varName{c.Words[2], c.Dynamic[2]})
		}
	case "read", "mapfile", "readarray":
		for i := options("adinNptuOsCc", 'a'); i < len(c.Words); i++ {
			out = append(out, varName{c.Words[i], c.Dynamic[i]})
		}
	}
	return out
}

// riskyAssign is why setting the variable name must be asked about, or
// "" (the rules are above harmlessEnv). exported: the assignment reaches
// the environment of the commands the line runs.
// riskyValue is why an assignment of value to an allow-listed name must
// be asked about: a value with shell syntax in it (GOOS="linux; echo x >
// f") runs as a command wherever a Makefile or script puts the variable
// into a command line (go build -o bin/app-$(GOOS)), and a value only
// known at run time could hold anything. Other names are riskyAssign's.
func riskyValue(name, value string, dynamic bool) string {
	if r := commandVarRisk(name, value, dynamic); r != "" {
		return r
	}
	if !harmlessEnv(name) {
		return ""
	}
	if dynamic {
		return "sets " + name + " to a value only known at run time, which a Makefile or script may put into a command line"
	}
	if strings.ContainsFunc(value, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-+,:/@=%", r))
	}) {
		return "sets " + name + " to a value with shell syntax or spaces, which a Makefile or script may run as part of a command line"
	}
	return ""
}

// commandVars are the variables whose value is a command line a program
// runs (a pager, an editor, a diff or ssh command, a shell's startup
// hook), or, for git's config in the environment, an alias that can be
// one: GIT_PAGER='rm -rf src' git log runs it (red team, 2026-12-03).
var commandVars = wordSet(`PAGER GIT_PAGER MANPAGER EDITOR VISUAL GIT_EDITOR GIT_SEQUENCE_EDITOR GIT_EXTERNAL_DIFF
	GIT_SSH GIT_SSH_COMMAND GIT_ASKPASS SSH_ASKPASS GIT_PROXY_COMMAND PROMPT_COMMAND BASH_ENV ENV LESSOPEN LESSCLOSE
	GIT_CONFIG_PARAMETERS GIT_CONFIG_COUNT`)

// harmlessCommands are the values of a commandVars variable that run
// nothing of the caller's choosing (GIT_PAGER=cat, GIT_EDITOR=true).
var harmlessCommands = wordSet(`cat true false : less more head tail`)

// riskCommandVar starts commandVarRisk's reason; hidesCommand counts it.
const riskCommandVar = "sets a command line in "

// commandVarRisk is why setting name to value runs a command line of the
// caller's choosing, or "".
func commandVarRisk(name, value string, dynamic bool) string {
	if !commandVars()[name] && !strings.HasPrefix(name, "GIT_CONFIG_KEY_") && !strings.HasPrefix(name, "GIT_CONFIG_VALUE_") {
		return ""
	}
	if !dynamic && harmlessCommands()[strings.TrimSpace(value)] && !strings.HasPrefix(name, "GIT_CONFIG") {
		return ""
	}
	return riskCommandVar + name + ", which a program runs"
}

func riskyAssign(name string, exported bool) string {
	switch {
	case harmlessEnv(name):
		return ""
	case riskyEnv()[name] || slices.ContainsFunc(riskyPrefixes, func(p string) bool { return strings.HasPrefix(name, p) }):
		return "sets " + name + ", which changes what runs"
	case exported:
		return "exports " + name + ", which is not on the list of variables known not to change what runs"
	case strings.ContainsFunc(name, func(r rune) bool { return r >= 'A' && r <= 'Z' }):
		return "sets " + name + ", which is not on the list of variables known not to change what runs (if it is inherited, it is exported)"
	}
	return ""
}

// decl analyses export/declare/local/readonly/typeset as a command.
func (a *analyzer) decl(x *syntax.DeclClause, c walkCtx, d dirState) (succ, any dirState) {
	cmd := Command{Words: []string{x.Variant.Value}, Dynamic: []bool{false}, Glob: []bool{false}, Via: c.via}
	for _, as := range x.Args {
		v, risky := a.assign(as, c, d, &cmd)
		cmd.Risky = appendNew(cmd.Risky, risky...)
		cmd.Words = append(cmd.Words, v.text)
		cmd.Dynamic = append(cmd.Dynamic, v.dynamic)
		cmd.Glob = append(cmd.Glob, v.glob)
	}
	cmd.Redirects = append(cmd.Redirects, c.inherit...)
	a.finish(&cmd, d)
	a.cmds = append(a.cmds, cmd)
	return d, d
}

// assign evaluates NAME=value (or a naked declare argument). The risk of
// setting NAME is the caller's to judge: call's for an assignment before
// a command or alone, varRisks' (from the words) for a declaration.
func (a *analyzer) assign(as *syntax.Assign, c walkCtx, d dirState, host *Command) (word, []string) {
	var risky []string
	name := ""
	if as.Name != nil {
		name = as.Name.Value
	}
	var v word
	if as.Value != nil {
		v = a.word(as.Value, c, d, host)
	}
	if as.Array != nil {
		// x=(…): the elements are analysed below, and bash parses the
		// parentheses once, as syntax; "()" stands for them.
		v.text, v.dynamic = "()", false
	}
	if as.Index != nil {
		if w, ok := as.Index.(*syntax.Word); ok && isNumber(w.Lit()) {
			name += "[" + w.Lit() + "]" // a[0]=v
		} else {
			v.dynamic = true // a[$i]=v: arithmeticOnVariables asks about it
		}
	}
	if as.Array != nil || as.Index != nil {
		if feeds, r := a.subst(as, c, d); host != nil {
			host.Feeds = appendNew(host.Feeds, feeds...)
			risky = append(risky, r...)
		}
	}
	switch {
	case as.Naked && name != "":
		v.text = name
	case as.Naked:
	case as.Append:
		v.text = name + "+=" + v.text
	default:
		v.text = name + "=" + v.text
	}
	return v, risky
}

// redirects evaluates a statement's redirections; feeds are the commands
// of substitutions inside them.
func (a *analyzer) redirects(rs []*syntax.Redirect, c walkCtx, d dirState) ([]Redirect, []string, []string) {
	var out []Redirect
	var feeds, risky []string
	for _, r := range rs {
		op := r.Op.String()
		var host Command
		if r.N != nil {
			op = r.N.Value + op
			// {NAME}>file gives NAME the new descriptor's number: a
			// subscript in NAME is expanded ({a[x]}>f), and NAME is set.
			if name, ok := strings.CutPrefix(r.N.Value, "{"); ok {
				name = strings.TrimSuffix(name, "}")
				if subscripted(name) {
					host.Risky = appendNew(host.Risky, riskSubscript)
				} else if rk := riskyAssign(name, false); rk != "" {
					host.Risky = appendNew(host.Risky, rk)
				}
			}
		}
		red := Redirect{Op: op}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if r.Hdoc != nil {
				// An unquoted heredoc runs its $(…).
				f, risky := a.subst(r.Hdoc, c, d)
				host.Feeds, host.Risky = appendNew(host.Feeds, f...), appendNew(host.Risky, risky...)
			}
		case syntax.WordHdoc:
			a.word(r.Word, c, d, &host)
		default:
			w := a.word(r.Word, c, d, &host)
			red.Target, red.Dynamic = w.text, w.dynamic || w.glob
			switch r.Op {
			case syntax.DplIn, syntax.DplOut:
				if isFD(w.text) {
					red.Target = "" // 2>&1, >&-
				} else {
					red.Write = r.Op == syntax.DplOut
				}
			case syntax.RdrIn:
			default:
				red.Write = true
			}
		}
		feeds = appendNew(feeds, host.Feeds...)
		risky = appendNew(risky, host.Risky...)
		out = append(out, red)
	}
	return out, feeds, risky
}

func isFD(s string) bool {
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return true
	}
	_, err := strconv.Atoi(s)
	return err == nil
}

// call analyses a simple command (ce may be nil for a statement that is
// only redirections).
func (a *analyzer) call(ce *syntax.CallExpr, redirs []Redirect, feeds, risky []string, raw []*syntax.Redirect, c walkCtx, d dirState) (succ, any dirState) {
	cmd := Command{Via: c.via, Feeds: feeds, Risky: risky}
	var assigns []string
	if ce != nil {
		for _, as := range ce.Assigns {
			v, risky := a.assign(as, c, d, &cmd)
			assigns = append(assigns, v.text)
			// NAME=value before a command is in its environment; alone,
			// it is a plain assignment.
			if as.Name != nil {
				if r := riskyAssign(as.Name.Value, len(ce.Args) > 0); r != "" {
					risky = append(risky, r)
				}
				if _, value, _ := strings.Cut(v.text, "="); true {
					if r := riskyValue(as.Name.Value, value, v.dynamic); r != "" {
						risky = append(risky, r)
					}
				}
			}
			if len(ce.Args) == 0 {
				for _, r := range risky {
					a.addRisky(r)
				}
			} else {
				cmd.Risky = appendNew(cmd.Risky, risky...)
			}
		}
		for _, w := range ce.Args {
			v := a.word(w, c, d, &cmd)
			cmd.Words = append(cmd.Words, v.text)
			cmd.Dynamic = append(cmd.Dynamic, v.dynamic)
			cmd.Glob = append(cmd.Glob, v.glob)
		}
	}
	if len(cmd.Words) == 0 {
		if len(redirs) == 0 {
			// Only assignments: their substitutions were analysed; they
			// are not a command of their own.
			if len(cmd.Risky) > 0 {
				for _, r := range cmd.Risky {
					a.addRisky(r)
				}
			}
			return d, d
		}
	}
	cmd.Assigns = assigns
	cmd.Redirects = append(append(cmd.Redirects, c.inherit...), redirs...)
	a.heredocScript(&cmd, raw, c, d)
	a.emit(cmd, c, d)
	return a.dirEffect(cmd, d)
}

// heredocScript: a shell whose stdin is a heredoc or here-string runs that
// text as a script. A static one is analysed (so a denied command in it
// is still denied); it stays Risky either way.
func (a *analyzer) heredocScript(cmd *Command, raw []*syntax.Redirect, c walkCtx, d dirState) {
	if !isShell(cmd.Name()) || !readsStdinScript(*cmd) {
		return
	}
	for _, r := range raw {
		var body *syntax.Word
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			body = r.Hdoc
		case syntax.WordHdoc:
			body = r.Word
		default:
			continue
		}
		if body == nil {
			continue
		}
		v := a.word(body, c, d, nil)
		if v.dynamic || c.depth+1 > maxDepth {
			continue
		}
		if err := a.script(v.text, c.with(cmd.Name()+" <<"), d, c.depth+1); err != nil {
			cmd.Risky = appendNew(cmd.Risky, "cannot parse the script on stdin: "+err.Error())
		}
	}
}

// dirEffect is the directory after cmd ran (succ) and whatever happened.
func (a *analyzer) dirEffect(cmd Command, d dirState) (succ, any dirState) {
	// `builtin cd DIR` and `command cd DIR` are cd (red team, 2026-12-03:
	// `builtin cd ../other && cat secret.txt` was judged in the
	// workspace).
	for len(cmd.Words) > 1 && (cmd.Words[0] == "builtin" || cmd.Words[0] == "command") && !cmd.Dynamic[0] && !cmd.Dynamic[1] && !strings.HasPrefix(cmd.Words[1], "-") {
		cmd.Words, cmd.Dynamic, cmd.Glob = cmd.Words[1:], cmd.Dynamic[1:], cmd.Glob[1:]
	}
	name := cmd.Name()
	if a.dirFuncs[name] {
		u := dirState{unknown: true}
		return u, u
	}
	switch name {
	case "cd", "pushd":
	case "popd":
		u := dirState{unknown: true}
		return u, u
	default:
		return d, d
	}
	args := cmd.Words[1:]
	dyn := cmd.Dynamic[1:]
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-" {
		if args[0] == "--" {
			args, dyn = args[1:], dyn[1:]
			break
		}
		args, dyn = args[1:], dyn[1:]
	}
	var next dirState
	switch {
	case len(args) == 0:
		next = dirState{dir: "~"}
	case dyn[0] || cmd.Glob[len(cmd.Words)-len(args)] || args[0] == "-" || d.unknown:
		next = dirState{unknown: true}
	default:
		next = dirState{dir: joinDir(d.dir, args[0])}
	}
	return next, merge(d, next)
}

// joinDir is dir/p without cleaning (.. after a symlink is not lexical).
func joinDir(dir, p string) string {
	if dir == "" || strings.HasPrefix(p, "/") || p == "~" || strings.HasPrefix(p, "~/") {
		return p
	}
	return strings.TrimSuffix(dir, "/") + "/" + p
}

// emit finishes a command, appends it, and follows what it wraps.
func (a *analyzer) emit(cmd Command, c walkCtx, d dirState) {
	inners := unwrap(cmd)
	cmd.Wrapper = len(inners) > 0
	a.finish(&cmd, d)
	idx := len(a.cmds)
	a.cmds = append(a.cmds, cmd)
	if len(inners) == 0 {
		return
	}
	if c.depth+1 > maxDepth {
		a.cmds[idx].Risky = appendNew(a.cmds[idx].Risky, riskDepth)
		return
	}
	for _, in := range inners {
		a.cmds[idx].Risky = appendNew(a.cmds[idx].Risky, in.wrapperRisky...)
		ic := c.with(in.via)
		ic.depth = c.depth + 1
		ic.inherit = nil
		id := d
		if in.dir != "" {
			if in.dirDynamic || d.unknown {
				id = dirState{unknown: true}
			} else {
				id = dirState{dir: joinDir(d.dir, in.dir)}
			}
		}
		if in.script != nil {
			if err := a.script(*in.script, ic, id, ic.depth); err != nil {
				a.cmds[idx].Risky = appendNew(a.cmds[idx].Risky, fmt.Sprintf("cannot parse the script of %s: %v", in.via, err))
			}
			continue
		}
		if len(in.words) == 0 {
			continue
		}
		inner := Command{
			Words: in.words, Dynamic: in.dynamic, Glob: in.glob,
			Assigns: in.assigns, Via: ic.via, Feeds: cmd.Feeds,
			Risky: slices.Clone(in.risky),
		}
		for _, as := range in.assigns {
			name, value, _ := strings.Cut(as, "=")
			if r := riskyAssign(name, true); r != "" { // env NAME=value exports it
				inner.Risky = appendNew(inner.Risky, r)
			}
			if r := riskyValue(name, value, false); r != "" { // a $ in it is syntax too
				inner.Risky = appendNew(inner.Risky, r)
			}
		}
		a.emit(inner, ic, id)
	}
}

// finish fills in what follows from the words: the directory, risks and
// path arguments.
func (a *analyzer) finish(cmd *Command, d dirState) {
	cmd.Dir, cmd.DirUnknown = d.dir, d.unknown
	if d.unknown {
		cmd.Dir = ""
		cmd.Risky = appendNew(cmd.Risky, riskDir)
	}
	if len(cmd.Words) > 0 {
		if cmd.Dynamic[0] || cmd.Glob[0] {
			cmd.Risky = appendNew(cmd.Risky, riskDynName)
		}
		if a.dirFuncs[cmd.Words[0]] {
			cmd.Risky = appendNew(cmd.Risky, riskFuncDir)
		}
		switch cmd.Words[0] {
		case "eval":
			cmd.Risky = appendNew(cmd.Risky, riskEval)
		case "source", ".":
			cmd.Risky = appendNew(cmd.Risky, riskSource)
		}
		if isShell(cmd.Words[0]) && readsStdinScript(*cmd) {
			cmd.Risky = appendNew(cmd.Risky, riskStdin)
		}
		if isShell(cmd.Words[0]) && shellScriptFile(*cmd) >= 0 {
			cmd.Risky = appendNew(cmd.Risky, riskScript)
		}
		for _, r := range append([]string{execOptionRisk(*cmd), sedRisk(*cmd)}, varRisks(*cmd)...) {
			if r != "" {
				cmd.Risky = appendNew(cmd.Risky, r)
			}
		}
	}
	cmd.Paths = argPaths(*cmd)
	for _, p := range cmd.Paths {
		if p.Dynamic {
			cmd.Risky = appendNew(cmd.Risky, riskDynPath)
			break
		}
	}
}

// word is the static view of a shell word.
type word struct {
	text    string
	dynamic bool
	glob    bool
}

// word evaluates w. Substitutions inside it are analysed as commands of
// their own; host (if not nil) gets their risks and names as feeds.
func (a *analyzer) word(w *syntax.Word, c walkCtx, d dirState, host *Command) word {
	var v word
	if w == nil {
		return v
	}
	var b strings.Builder
	a.parts(w.Parts, false, &b, &v)
	v.text = b.String()
	feeds, risky := a.subst(w, c, d)
	if host != nil {
		host.Feeds = appendNew(host.Feeds, feeds...)
		host.Risky = appendNew(host.Risky, risky...)
	}
	return v
}

func (a *analyzer) parts(parts []syntax.WordPart, quoted bool, b *strings.Builder, v *word) {
	for _, p := range parts {
		switch x := p.(type) {
		case *syntax.Lit:
			if quoted {
				b.WriteString(unescapeDouble(x.Value))
				continue
			}
			text, glob, brace := unescapeBare(x.Value)
			b.WriteString(text)
			v.glob = v.glob || glob
			v.dynamic = v.dynamic || brace
		case *syntax.SglQuoted:
			if x.Dollar {
				s, ok := decodeANSIC(x.Value)
				if !ok {
					v.dynamic = true
				}
				b.WriteString(s)
				continue
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			a.parts(x.Parts, true, b, v)
		case *syntax.ExtGlob:
			v.glob = true
			b.WriteString(x.Op.String() + x.Pattern.Value + ")")
		default: // ParamExp, CmdSubst, ArithmExp, ProcSubst, BraceExp
			v.dynamic = true
			b.WriteString(source(p))
		}
	}
}

// subst analyses the command and process substitutions anywhere under n.
// It returns the names of the commands they run and the risks they bring
// to the command that holds them.
func (a *analyzer) subst(n syntax.Node, c walkCtx, d dirState) (feeds, risky []string) {
	if n == nil {
		return nil, nil
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		var stmts []*syntax.Stmt
		var via, reason string
		switch x := n.(type) {
		case *syntax.CmdSubst:
			stmts, via, reason = x.Stmts, "$(…)", riskCmdSubst
			if x.Backquotes {
				via = "`…`"
			}
		case *syntax.ProcSubst:
			stmts, via, reason = x.Stmts, x.Op.String()+"…)", riskProcSubst
		default:
			return true
		}
		risky = appendNew(risky, reason)
		if c.depth+1 > maxDepth {
			risky = appendNew(risky, riskDepth)
			return false
		}
		ic := c.with(via)
		ic.depth = c.depth + 1
		ic.inherit = nil
		start := len(a.cmds)
		a.stmts(stmts, ic, d)
		feeds = appendNew(feeds, commandNames(a.cmds[start:])...)
		return false
	})
	return feeds, risky
}

// source prints a node as shell source.
func source(n syntax.Node) string {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, n); err != nil {
		return "?"
	}
	return b.String()
}

// unescapeBare removes backslashes from unquoted text and reports
// unquoted glob characters and brace expansions.
func unescapeBare(s string) (text string, glob, brace bool) {
	var b strings.Builder
	open := -1
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch == '\\' {
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					b.WriteByte(s[i])
				}
			}
			continue
		}
		switch ch {
		case '*', '?':
			glob = true
		case '[':
			if strings.IndexByte(s[i+1:], ']') >= 0 {
				glob = true
			}
		case '{':
			open = i
		case '}':
			if open >= 0 {
				inner := s[open+1 : i]
				if strings.Contains(inner, ",") || strings.Contains(inner, "..") {
					brace = true
				}
			}
		}
		b.WriteByte(ch)
	}
	return b.String(), glob, brace
}

// unescapeDouble removes the backslashes that are special inside double
// quotes.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// decodeANSIC decodes the body of $'…'. ok is false for escapes it does
// not know, whose value is then treated as unknown.
func decodeANSIC(s string) (string, bool) {
	var b strings.Builder
	ok := true
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch ch := s[i]; ch {
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte(11)
		case '\\', '\'', '"', '?':
			b.WriteByte(ch)
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[ch]
			j := i + 1
			for j < len(s) && j-i-1 < max && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				ok = false
				b.WriteByte('\\')
				b.WriteByte(ch)
				continue
			}
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if ch == 'x' {
				b.WriteByte(byte(n))
			} else if utf8.ValidRune(rune(n)) {
				b.WriteRune(rune(n))
			} else {
				ok = false
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(n))
			i = j - 1
		default: // \cX and anything unusual
			ok = false
			b.WriteByte('\\')
			b.WriteByte(ch)
		}
	}
	return b.String(), ok
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func commandNames(cmds []Command) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range cmds {
		if n := c.Name(); n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// appendNew appends the items not already in list.
func appendNew(list []string, items ...string) []string {
	if len(items) <= 4 || len(list)+len(items) <= 16 {
		for _, it := range items {
			if !slices.Contains(list, it) {
				list = append(list, it)
			}
		}
		return list
	}
	seen := make(map[string]bool, len(list)+len(items))
	for _, it := range list {
		seen[it] = true
	}
	for _, it := range items {
		if !seen[it] {
			seen[it] = true
			list = append(list, it)
		}
	}
	return list
}

// baseName is a command name without its directory (/usr/bin/git → git).
func baseName(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 && i < len(name)-1 {
		return name[i+1:]
	}
	return name
}

// pathClean is path.Clean that leaves "" alone.
func pathClean(p string) string {
	if p == "" {
		return ""
	}
	return path.Clean(p)
}

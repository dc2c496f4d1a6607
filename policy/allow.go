package policy

// This file holds the match functions of the larger built-in Allow
// entries. Each accepts a command only when every option is on its
// program's list (options.go) and every NAME=value prefix is harmless.

import (
	"slices"
	"strings"
)

// sub is c from word i on, as a command of its own (npx jest …).
func subCommand(c Command, i int) Command {
	return Command{Words: c.Words[i:], Dynamic: c.Dynamic[i:], Glob: c.Glob[i:], Assigns: c.Assigns, Paths: c.Paths, Redirects: c.Redirects}
}

// splitDashes returns the index of the first "--" after from, or len.
func splitDashes(c Command, from int) int {
	for i := from; i < len(c.Words); i++ {
		if c.Words[i] == "--" {
			return i
		}
	}
	return len(c.Words)
}

// before is c cut at word n.
func before(c Command, n int) Command {
	return Command{Words: c.Words[:n], Dynamic: c.Dynamic[:n], Glob: c.Glob[:n], Assigns: c.Assigns, Paths: c.Paths}
}

// findArgs are find's expression words that take one argument.
var findArgs = wordSet(`-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -type -xtype -size
	-mtime -mmin -atime -amin -ctime -cmin -newer -anewer -cnewer -perm -user -group -uid -gid -links -inum -samefile
	-fstype -used -maxdepth -mindepth -regextype -printf -context -files0-from`)

// findFlags are find's expression words that take none.
var findFlags = wordSet(`-empty -executable -readable -writable -nouser -nogroup -true -false -print -print0 -ls -prune
	-quit -depth -d -mount -xdev -follow -noleaf -daystart -ignore_readdir_race -noignore_readdir_race -warn -nowarn
	-not -a -and -o -or , ( ) !`)

// findAllowed: find whose every expression word is a known test, action
// or operator; -exec and -execdir run a command that is decided on its
// own.
func findAllowed(c Command) bool {
	if progName(c) != "find" || writes(c) || !safeAssigns(c) {
		return false
	}
	i := 1
	for i < len(c.Words) && names("-H -L -P")[c.Words[i]] {
		i++
	}
	for i < len(c.Words) && !strings.HasPrefix(c.Words[i], "-") && !names("( ! ) ,")[c.Words[i]] {
		if mayBeOption(c, i) {
			return false
		}
		i++ // a starting point (a path the analysis decides)
	}
	for ; i < len(c.Words); i++ {
		w := c.Words[i]
		switch {
		case c.Dynamic[i] || c.Glob[i] && !findArgs()[c.Words[i-1]]:
			return false
		case findFlags()[w]:
		case findArgs()[w] || strings.HasPrefix(w, "-newer") && len(w) == 8:
			i++
		case w == "-exec" || w == "-execdir":
			j := i + 1
			for j < len(c.Words) && c.Words[j] != ";" && !(c.Words[j] == "+" && c.Words[j-1] == "{}") {
				j++
			}
			i = j
		default:
			return false
		}
	}
	return true
}

// wrapperAllowed: a wrapper (whose command is analysed on its own) with
// only the options listed for it.
func wrapperAllowed(c Command) bool {
	n := progName(c)
	if !c.Wrapper || n == "" || names("sudo su doas pkexec runuser eval find flock")[n] || !safeAssigns(c) {
		return false
	}
	switch {
	case shells()[n]:
		return shellOptsOK(c)
	case n == "git":
		i := gitSub(c)
		return i > 0 && gitGlobal.accepts(before(c, i), 1)
	case n == "go":
		return len(c.Words) > 2 && (c.Words[1] == "-C" || strings.HasPrefix(c.Words[1], "-C="))
	case names("uv poetry pipenv pdm hatch rye")[n]:
		if len(c.Words) < 3 || c.Words[1] != "run" {
			return false
		}
		o := uvRunOpts
		o.posix = true
		return o.accepts(c, 2)
	case n == "bundle":
		return len(c.Words) > 2 && c.Words[1] == "exec" && !strings.HasPrefix(c.Words[2], "-")
	}
	s, ok := wrapperSpecs()[n]
	return ok && s.accepts(c, 1)
}

// gitReadOnly: git running one of the read-only subcommands with only the
// options listed for it, and no write among its paths.
func gitReadOnly(c Command) bool {
	if progName(c) != "git" || writes(c) || !safeAssigns(c) {
		return false
	}
	i := gitSub(c)
	if i < 0 || !gitGlobal.accepts(before(c, i), 1) {
		return false
	}
	sub := c.Words[i]
	s, ok := gitSubSpecs()[sub]
	if !ok {
		return false
	}
	ops, bad := s.scan(c, i+1)
	if bad != "" {
		return false
	}
	rest := Command{Words: append([]string{"git"}, c.Words[i+1:]...), Dynamic: c.Dynamic[i:], Glob: c.Glob[i:]}
	first := ""
	if len(ops) > 0 {
		first = c.Words[ops[0]]
	}
	switch sub {
	case "branch", "tag":
		listing := hasWord(rest, "--list", "-l", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at")
		return listing || len(ops) == 0
	case "remote":
		return len(ops) == 0 || first == "get-url"
	case "stash":
		return first == "list" || first == "show"
	case "worktree":
		return first == "list"
	case "reflog":
		return len(ops) == 0 || first == "show"
	case "config":
		return !gitConfigWrites(c)
	}
	return true
}

// goAllowed: go's build, test and inspection subcommands, gofmt and the
// linters, with only the options listed for them.
func goAllowed(c Command) bool {
	n := progName(c)
	if !safeAssigns(c) {
		return false
	}
	switch n {
	case "go":
		if len(c.Words) < 2 || c.Dynamic[1] {
			return false
		}
		sub, from := c.Words[1], 2
		s, ok := goSubSpecs()[sub]
		if !ok {
			return false
		}
		if sub == "mod" {
			if len(c.Words) < 3 || !names("graph why verify")[c.Words[2]] {
				return false
			}
			from = 3
		}
		if !s.accepts(c, from) {
			return false
		}
		if v, ok := goValue(c, "ldflags"); ok && !goLdflagsOK(v) {
			return false
		}
		return true
	case "gofmt":
		s := optSpec{goStyle: true, long: []string{"l", "d", "e", "s", "r="}}
		return s.accepts(c, 1) && (hasWord(c, "-l") || hasWord(c, "-d"))
	case "goimports":
		s := optSpec{goStyle: true, long: []string{"l", "d", "e", "local=", "format-only", "v"}}
		return s.accepts(c, 1) && (hasWord(c, "-l") || hasWord(c, "-d"))
	case "staticcheck":
		s := optSpec{goStyle: true, long: []string{"checks=", "tags=", "f=", "fail=", "go=", "tests", "show-ignored", "explain=", "version", "matrix"}}
		return s.accepts(c, 1)
	case "golangci-lint":
		s := spec("vE:D:j:", `timeout= enable= disable= fast fast-only new new-from-rev= new-from-patch= tests build-tags= verbose
			concurrency= max-issues-per-linter= max-same-issues= issues-exit-code= out-format= print-issued-lines
			print-linter-name sort-results allow-parallel-runners allow-serial-runners color= whole-files uniq-by-line
			disable-all enable-all enable-only= no-config path-prefix= show-stats`)
		ops, bad := s.scan(c, 1)
		return bad == "" && len(ops) > 0 && c.Words[ops[0]] == "run"
	}
	return false
}

// cargoAllowed: cargo's build, test and inspection subcommands with only
// the options listed for them; after --, what goes to the test harness
// (the project's own code), lint levels for clippy, --check for fmt.
func cargoAllowed(c Command) bool {
	n := progName(c)
	if !safeAssigns(c) {
		return false
	}
	if n == "rustc" || n == "rustup" {
		return len(c.Words) == 2 && hasWord(c, "--version", "-V") || n == "rustup" && len(c.Words) == 2 && c.Words[1] == "show"
	}
	if n != "cargo" || len(c.Words) < 2 {
		return false
	}
	i := 1
	if strings.HasPrefix(c.Words[i], "+") && !c.Dynamic[i] {
		i++ // a rustup toolchain: cargo +nightly build
	}
	if i >= len(c.Words) {
		return false
	}
	if w := c.Words[i]; w == "--version" || w == "-V" {
		return len(c.Words) == i+1
	}
	sub := c.Words[i]
	s, ok := cargoSubSpecs()[sub]
	if !ok || c.Dynamic[i] {
		return false
	}
	dd := splitDashes(c, i+1)
	if !s.accepts(before(c, dd), i+1) {
		return false
	}
	after := Command{Words: append([]string{"x"}, c.Words[min(dd+1, len(c.Words)):]...), Dynamic: append([]bool{false}, c.Dynamic[min(dd+1, len(c.Words)):]...), Glob: append([]bool{false}, c.Glob[min(dd+1, len(c.Words)):]...)}
	switch sub {
	case "test", "t", "bench":
		return true // the test harness's arguments
	case "clippy":
		return clippyLints.accepts(after, 1)
	case "fmt":
		return rustfmtAfter.accepts(after, 1) && (hasWord(c, "--check"))
	}
	return dd == len(c.Words)
}

// nodeAllowed: the package managers' test, run, ls; npx of a known tool;
// the JavaScript tools themselves, each with only the options listed.
func nodeAllowed(c Command) bool {
	n := progName(c)
	if !safeAssigns(c) {
		return false
	}
	switch n {
	case "npm", "yarn", "pnpm", "bun":
		if len(c.Words) == 2 && hasWord(c, "--version", "-v") {
			return true
		}
		dd := splitDashes(c, 1)
		ops, bad := npmSpec.scan(before(c, dd), 1)
		if bad != "" || len(ops) == 0 {
			return false
		}
		first := c.Words[ops[0]]
		switch {
		case first == "test" || first == "t":
			return true
		case first == "run" || first == "run-script":
			return len(ops) > 1 && npmScript(c.Words[ops[1]])
		case first == "ls" || first == "list":
			return n != "bun"
		case n != "npm":
			return npmScript(first)
		}
		return false
	case "npx":
		i := 1
		for i < len(c.Words) && names("--no-install --no --offline -q --quiet")[c.Words[i]] {
			i++
		}
		if !hasWord(before(c, i), "--no-install", "--no") || i >= len(c.Words) || !names("jest vitest tsc eslint prettier mocha")[c.Words[i]] {
			return false
		}
		return jsToolAllowed(subCommand(c, i))
	case "node", "deno":
		return len(c.Words) == 2 && hasWord(c, "--version", "-v")
	}
	return jsToolAllowed(c)
}

// jsToolAllowed: tsc --noEmit, eslint, prettier --check, jest, vitest,
// mocha with only the options listed for them.
func jsToolAllowed(c Command) bool {
	n := baseName(c.Words[0])
	s, ok := nodeToolSpecs()[n]
	if !ok || writes(c) || !s.accepts(c, 1) {
		return false
	}
	switch n {
	case "tsc":
		return hasWord(c, "--noEmit")
	case "eslint":
		v, given := optValue(c, "--format")
		return !given || eslintFormats()[v]
	case "prettier":
		return hasWord(c, "--check", "-c", "--list-different", "-l")
	}
	return true
}

// optValue returns the value of a long option (--name=v or --name v).
func optValue(c Command, name string) (string, bool) {
	for i := 1; i < len(c.Words); i++ {
		w := c.Words[i]
		if v, ok := strings.CutPrefix(w, name+"="); ok {
			return v, true
		}
		if w == name && i+1 < len(c.Words) {
			return c.Words[i+1], true
		}
	}
	return "", false
}

// pythonAllowed: the test runners and linters, the interpreter running
// one of them with -m, and pip's inspection commands, each with only the
// options listed for it.
func pythonAllowed(c Command) bool {
	n := progName(c)
	if !safeAssigns(c) {
		return false
	}
	if pythonName().MatchString(n) {
		if len(c.Words) == 2 && hasWord(c, "--version", "-V") {
			return true
		}
		i := 1
		for i < len(c.Words) && c.Words[i] != "-m" {
			w := c.Words[i]
			if c.Dynamic[i] || !strings.HasPrefix(w, "-") || !pythonOpts.accepts(Command{Words: []string{"python", w}, Dynamic: []bool{false, false}, Glob: []bool{false, false}}, 1) {
				return false
			}
			i++
		}
		if i+1 >= len(c.Words) || c.Dynamic[i+1] {
			return false
		}
		mod := c.Words[i+1]
		switch mod {
		case "pytest", "unittest", "mypy", "pyflakes", "flake8", "pylint":
			return pyToolAllowed(mod, subCommand(c, i+1))
		case "pip":
			return pyToolAllowed("pip", subCommand(c, i+1))
		}
		return false
	}
	switch n {
	case "pytest", "py.test":
		return pyToolAllowed("pytest", c)
	case "mypy", "flake8", "pylint", "pyflakes":
		return pyToolAllowed(n, c)
	case "pip", "pip3":
		return pyToolAllowed("pip", c)
	case "ruff":
		ops, bad := pythonToolSpecs()["ruff"].scan(c, 1)
		if bad != "" || len(ops) == 0 {
			return false
		}
		switch c.Words[ops[0]] {
		case "check":
			return true
		case "format":
			return hasWord(c, "--check", "--diff")
		}
		return false
	case "black", "isort":
		return pythonToolSpecs()[n].accepts(c, 1) && hasWord(c, "--check", "--diff", "--check-only", "-c")
	}
	return false
}

// pyToolAllowed checks one Python tool's options (c.Words[0] is the tool).
func pyToolAllowed(tool string, c Command) bool {
	s := pythonToolSpecs()[tool]
	ops, bad := s.scan(c, 1)
	if bad != "" {
		return false
	}
	switch tool {
	case "pytest":
		// -p loads a plugin; -p no:NAME only disables one.
		for i := 1; i < len(c.Words); i++ {
			w := c.Words[i]
			switch {
			case w == "-p" && i+1 < len(c.Words):
				if !strings.HasPrefix(c.Words[i+1], "no:") {
					return false
				}
				i++
			case strings.HasPrefix(w, "-p") && !strings.HasPrefix(w, "--"):
				if !strings.HasPrefix(w[2:], "no:") {
					return false
				}
			case strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.Contains(w[1:], "p"):
				return false // p inside a group of flags
			}
		}
	case "pip":
		return len(ops) > 0 && names("list show freeze check")[c.Words[ops[0]]] || len(ops) == 0 && hasWord(c, "--version", "-V")
	}
	return true
}

// makeAllowed: make of its default or a check/build/test target, with
// only the options listed and plain variable values.
func makeAllowed(c Command) bool {
	if progName(c) != "make" || !safeAssigns(c) {
		return false
	}
	ops, bad := makeOpts.scan(c, 1)
	if bad != "" {
		return false
	}
	for _, i := range ops {
		w := c.Words[i]
		prev := c.Words[i-1]
		switch {
		case isNumber(w) && slices.Contains([]string{"-j", "--jobs", "-l", "--load-average", "--max-load"}, prev):
		case isAssignWord(w):
			if !makeAssignOK(w) {
				return false
			}
		case !makeTargets()[w]:
			return false
		}
	}
	return true
}

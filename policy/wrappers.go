package policy

// This file knows the commands that run other commands: env, timeout,
// xargs, find -exec, sudo, bash -c and the like. Each is taken apart into
// the command (or script) it runs, which the analysis then reports as a
// command of its own.

import (
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// inner is a command or script a wrapper runs.
type inner struct {
	via                 string
	words               []string
	dynamic, glob       []bool
	assigns             []string
	script              *string // a shell script instead of words
	dir                 string  // a directory the wrapper changes to (-C DIR)
	dirDynamic          bool
	risky, wrapperRisky []string
}

// opts describes a wrapper's options: the short ones that take a value
// (separate or attached), the long ones that take a value (--x=v or
// --x v), and the ones that mean "no command follows".
type opts struct {
	short string
	long  []string
	query []string // e.g. command -v, sudo -l
}

// scan skips the options of c from index i and returns the index of the
// first operand and the options seen (name → value, "" for a flag;
// combined short flags are split).
func (o opts) scan(c Command, i int) (int, map[string]string, bool) {
	seen := map[string]string{}
	for i < len(c.Words) {
		w := c.Words[i]
		if c.Dynamic[i] && strings.HasPrefix(w, "-") {
			return i, seen, false
		}
		switch {
		case w == "--":
			return i + 1, seen, true
		case strings.HasPrefix(w, "--"):
			name, val, hasVal := strings.Cut(w[2:], "=")
			if !hasVal && slices.Contains(o.long, name) && i+1 < len(c.Words) {
				i++
				val = c.Words[i]
			}
			seen["--"+name] = val
		case strings.HasPrefix(w, "-") && len(w) > 1:
			for j := 1; j < len(w); j++ {
				f := string(w[j])
				if strings.Contains(o.short, f) {
					val := w[j+1:]
					if val == "" && i+1 < len(c.Words) {
						i++
						val = c.Words[i]
					}
					seen["-"+f] = val
					break
				}
				seen["-"+f] = ""
			}
		default:
			return i, seen, true
		}
		i++
	}
	return i, seen, true
}

func (o opts) isQuery(seen map[string]string) bool {
	for _, q := range o.query {
		if _, ok := seen[q]; ok {
			return true
		}
	}
	return false
}

var wrapperOpts = sync.OnceValue(func() map[string]opts {
	return map[string]opts{
		"nohup":   {},
		"builtin": {},
		"setsid":  {},
		"timeout": {short: "sk", long: []string{"signal", "kill-after"}},
		"nice":    {short: "n", long: []string{"adjustment"}},
		"ionice":  {short: "cnp", long: []string{"class", "classdata", "pid", "pgid", "uid"}, query: []string{"-p", "-P", "-u", "--pid", "--pgid", "--uid"}},
		"stdbuf":  {short: "ioe", long: []string{"input", "output", "error"}},
		"time":    {short: "fo", long: []string{"format", "output"}},
		"command": {query: []string{"-v", "-V"}},
		"exec":    {short: "a"},
		"xargs": {short: "adEeIiLlnPs", long: []string{"arg-file", "delimiter", "eof", "replace",
			"max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"}, query: []string{"--help", "--version"}},
		"sudo": {short: "ugCDhprtTU", long: []string{"user", "group", "close-from", "chdir", "host",
			"prompt", "role", "type", "command-timeout", "other-user"}, query: []string{"-l", "-v", "-k", "-K", "-e", "--list", "--validate", "--edit"}},
		"doas":    {short: "uC"},
		"pkexec":  {long: []string{"user"}},
		"runuser": {short: "ugGs", long: []string{"user", "group", "supp-group", "shell"}},
		"watch":   {short: "nd", long: []string{"interval"}},
		"flock":   {short: "wEc", long: []string{"timeout", "conflict-exit-code", "command"}},
		"env":     {short: "uCS", long: []string{"unset", "chdir", "split-string"}},
		"su":      {short: "cgGsw", long: []string{"command", "group", "supp-group", "shell", "whitelist-environment"}},
	}
})

// shells are the programs that run a script given with -c.
var shells = wordSet("sh bash dash zsh ksh mksh ash yash posh")

func isShell(name string) bool { return shells()[baseName(name)] }

var shellOpts = opts{short: "oO", long: []string{"rcfile", "init-file"}}

// shellScan returns the index of the first operand of a shell command and
// whether -c or -s was given.
func shellScan(c Command) (first int, hasC, hasS bool) {
	i := 1
	for i < len(c.Words) {
		w := c.Words[i]
		if c.Dynamic[i] {
			return i, hasC, hasS
		}
		if w == "--" || w == "-" {
			return i + 1, hasC, hasS
		}
		if strings.HasPrefix(w, "--") {
			name, _, hasVal := strings.Cut(w[2:], "=")
			if !hasVal && slices.Contains(shellOpts.long, name) {
				i++
			}
			i++
			continue
		}
		if (strings.HasPrefix(w, "-") || strings.HasPrefix(w, "+")) && len(w) > 1 {
			for j := 1; j < len(w); j++ {
				switch w[j] {
				case 'c':
					hasC = true
				case 's':
					hasS = true
				case 'o', 'O':
					if j == len(w)-1 {
						i++ // the option name follows
					}
					j = len(w)
				}
			}
			i++
			continue
		}
		return i, hasC, hasS
	}
	return i, hasC, hasS
}

// readsStdinScript: a shell with neither -c nor a script file, or with -s,
// runs whatever arrives on stdin.
func readsStdinScript(c Command) bool {
	first, hasC, hasS := shellScan(c)
	return !hasC && (hasS || first >= len(c.Words))
}

// shellScriptFile is the index of the script file a shell runs, or -1.
func shellScriptFile(c Command) int {
	first, hasC, hasS := shellScan(c)
	if hasC || hasS || first >= len(c.Words) {
		return -1
	}
	return first
}

func sub(c Command, i int) inner {
	if i >= len(c.Words) {
		return inner{}
	}
	return inner{words: slices.Clone(c.Words[i:]), dynamic: slices.Clone(c.Dynamic[i:]), glob: slices.Clone(c.Glob[i:])}
}

func scriptInner(via string, c Command, i int) inner {
	if i >= len(c.Words) {
		return inner{via: via}
	}
	if c.Dynamic[i] {
		return inner{via: via, wrapperRisky: []string{riskDynScript}}
	}
	s := c.Words[i]
	return inner{via: via, script: &s}
}

func isAssignWord(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	return ok && syntax.ValidName(name)
}

// unwrap returns the commands and scripts c runs on its behalf.
func unwrap(c Command) []inner {
	if len(c.Words) == 0 || c.Dynamic[0] {
		return nil
	}
	name := baseName(c.Words[0])
	switch name {
	case "find":
		return unwrapFind(c)
	case "git", "go":
		return unwrapGlobal(c, name)
	case "eval":
		for _, d := range c.Dynamic[1:] {
			if d {
				return []inner{{via: "eval", wrapperRisky: []string{riskDynScript}}}
			}
		}
		if len(c.Words) < 2 {
			return nil
		}
		s := strings.Join(c.Words[1:], " ")
		return []inner{{via: "eval", script: &s}}
	case "trap":
		i := 1
		for i < len(c.Words) && strings.HasPrefix(c.Words[i], "-") && c.Words[i] != "-" {
			i++
		}
		if i+1 >= len(c.Words) || c.Words[i] == "-" || c.Words[i] == "" {
			return nil // trap -p, or resetting a signal
		}
		return []inner{scriptInner("trap", c, i)}
	case "busybox":
		if len(c.Words) > 1 {
			in := sub(c, 1)
			in.via = "busybox"
			return []inner{in}
		}
		return nil
	case "uv", "poetry", "pipenv", "pdm", "hatch", "rye", "bundle":
		verb := "run"
		if name == "bundle" {
			verb = "exec"
		}
		if len(c.Words) < 3 || c.Words[1] != verb {
			return nil
		}
		i := 2
		for i < len(c.Words) && strings.HasPrefix(c.Words[i], "-") {
			if c.Words[i] == "--" {
				i++
				break
			}
			if !strings.Contains(c.Words[i], "=") && slices.Contains([]string{"--with", "--python", "-p", "--package",
				"--extra", "--group", "--env-file", "--directory", "--project", "--index", "--from", "--only-group", "--no-group", "-e", "--env"}, c.Words[i]) {
				i++
			}
			i++
		}
		in := sub(c, i)
		in.via = name + " " + verb
		return []inner{in}
	}
	if shells()[name] {
		first, hasC, _ := shellScan(c)
		if !hasC {
			return nil
		}
		return []inner{scriptInner(name+" -c", c, first)}
	}
	o, ok := wrapperOpts()[name]
	if !ok {
		return nil
	}
	i, seen, static := o.scan(c, 1)
	if !static {
		return []inner{{via: name, wrapperRisky: []string{"the wrapper's options are only known at run time"}}}
	}
	if o.isQuery(seen) {
		return nil
	}
	var in inner
	switch name {
	case "env":
		var assigns []string
		for i < len(c.Words) && !c.Dynamic[i] && isAssignWord(c.Words[i]) {
			assigns = append(assigns, c.Words[i])
			i++
		}
		if s, ok := seen["-S"]; ok || seen["--split-string"] != "" {
			if !ok {
				s = seen["--split-string"]
			}
			rest := strings.Join(c.Words[i:], " ")
			script := strings.TrimSpace(strings.Join(append(assigns, s, rest), " "))
			return []inner{{via: "env -S", script: &script}}
		}
		in = sub(c, i)
		in.assigns = assigns
		if d, ok := seen["-C"]; ok {
			in.dir = d
		} else if d, ok := seen["--chdir"]; ok {
			in.dir = d
		}
	case "timeout":
		in = sub(c, i+1) // skip the duration
	case "nice":
		// nice -10 cmd: a numeric option was scanned as flags; fine.
		in = sub(c, i)
	case "xargs":
		in = sub(c, i)
		if len(in.words) == 0 {
			in = inner{words: []string{"echo"}, dynamic: []bool{false}, glob: []bool{false}}
		}
		in.risky = []string{riskXargs}
	case "sudo", "doas", "pkexec":
		var assigns []string
		for i < len(c.Words) && !c.Dynamic[i] && isAssignWord(c.Words[i]) {
			assigns = append(assigns, c.Words[i])
			i++
		}
		in = sub(c, i)
		in.assigns = assigns
		if d, ok := seen["-D"]; ok {
			in.dir = d
		}
	case "su", "runuser":
		if s, ok := seen["-c"]; ok {
			return []inner{{via: name + " -c", script: &s}}
		}
		if s, ok := seen["--command"]; ok {
			return []inner{{via: name + " -c", script: &s}}
		}
		if name == "runuser" {
			in = sub(c, i)
		} else {
			return nil // an interactive shell
		}
	case "watch":
		if _, ok := seen["-x"]; ok {
			in = sub(c, i)
		} else if _, ok := seen["--exec"]; ok {
			in = sub(c, i)
		} else {
			for _, d := range c.Dynamic[min(i, len(c.Dynamic)):] {
				if d {
					return []inner{{via: "watch", wrapperRisky: []string{riskDynScript}}}
				}
			}
			if i >= len(c.Words) {
				return nil
			}
			s := strings.Join(c.Words[i:], " ")
			return []inner{{via: "watch", script: &s}}
		}
	case "flock":
		if s, ok := seen["-c"]; ok {
			return []inner{{via: "flock -c", script: &s}}
		}
		if i+1 < len(c.Words) && (c.Words[i+1] == "-c" || c.Words[i+1] == "--command") {
			return []inner{scriptInner("flock -c", c, i+2)}
		}
		in = sub(c, i+1) // skip the lock file
	default:
		in = sub(c, i)
	}
	if len(in.words) == 0 {
		return nil
	}
	in.via = name
	return []inner{in}
}

// unwrapFind returns the commands of find's -exec, -execdir, -ok and
// -okdir actions.
func unwrapFind(c Command) []inner {
	var out []inner
	for i := 1; i < len(c.Words); i++ {
		switch c.Words[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(c.Words) && c.Words[j] != ";" && !(c.Words[j] == "+" && j > i+1 && c.Words[j-1] == "{}") {
				j++
			}
			in := inner{via: "find " + c.Words[i],
				words: slices.Clone(c.Words[i+1 : j]), dynamic: slices.Clone(c.Dynamic[i+1 : j]), glob: slices.Clone(c.Glob[i+1 : j])}
			if len(in.words) > 0 {
				out = append(out, in)
			}
			i = j
		}
	}
	return out
}

// unwrapGlobal takes git's (or go's) global options off, so that
// `git -C dir --no-pager push` is also the command `git push` run in dir.
func unwrapGlobal(c Command, name string) []inner {
	i := 1
	var in inner
	touched := false
	for i < len(c.Words) && strings.HasPrefix(c.Words[i], "-") {
		w := c.Words[i]
		opt, val, hasVal := strings.Cut(w, "=")
		touched = true
		switch {
		case opt == "-C" && !hasVal:
			if i+1 >= len(c.Words) {
				return nil
			}
			in.dir = joinDir(in.dir, c.Words[i+1])
			in.dirDynamic = in.dirDynamic || c.Dynamic[i+1]
			i += 2
			continue
		case name != "git":
			if opt == "-C" {
				in.dir = joinDir(in.dir, val)
				in.dirDynamic = in.dirDynamic || c.Dynamic[i]
			}
			i++
			continue
		case opt == "-c" || opt == "--config-env" || opt == "--exec-path":
			in.risky = appendNew(in.risky, riskGitConfig)
			in.wrapperRisky = appendNew(in.wrapperRisky, riskGitConfig)
			if !hasVal && opt != "--exec-path" {
				i++
			}
		case (opt == "--git-dir" || opt == "--work-tree" || opt == "--namespace" || opt == "--super-prefix") && !hasVal:
			i++
		}
		i++
	}
	if !touched || i >= len(c.Words) {
		return nil
	}
	words := append([]string{c.Words[0]}, c.Words[i:]...)
	in.words = words
	in.dynamic = append([]bool{false}, c.Dynamic[i:]...)
	in.glob = append([]bool{false}, c.Glob[i:]...)
	in.via = name + " " + strings.Join(c.Words[1:i], " ")
	if len(in.via) > 40 {
		in.via = name + " (global options)"
	}
	return []inner{in}
}

package sensitive

import (
	"strings"
)

// This file finds the files that a later-executed file loads: direnv's
// .envrc sources other files as shell (source_env, dotenv, use nix …) and
// mise's config sources scripts and dotenv files ([env] _.source, _.file).
// direnv's approval covers the .envrc's own content and mise's trust its
// config file, not what they load: a call that rewrites a loaded file
// (.envrc.local, .env) runs code in the user's shell at the next cd, as a
// rewritten .envrc would (red team, 2026-12-03). So what they load is as
// protected as they are. The caller reads the files; this is parsing only.

// Loaded is a file a later-executed file loads, as written there: Path is
// relative to the loading file's directory unless absolute. Dir: Path may
// name a directory, and then its .envrc is what is loaded (source_env).
type Loaded struct {
	Path string
	Dir  bool
	// Script: Path is itself shell that direnv runs (source_env, source,
	// .), whose own loads count too.
	Script bool
}

// EnvrcLoads lists the files an .envrc (its content, data) loads through
// direnv's standard library and the shell: source_env,
// source_env_if_exists, dotenv, dotenv_if_exists (.env when no file is
// named), source and ., use nix (shell.nix and default.nix) and use flake
// (flake.nix and flake.lock). A word brig cannot read without running the
// shell (one with $, a backquote, a glob or ~) names nothing; nor do
// source_up and PATH_add (README: Limits).
//
//	source_env_if_exists .envrc.local   → .envrc.local
//	dotenv                              → .env
//	[ -f x ] && source ./env/dev.sh     → env/dev.sh
//	use flake                           → flake.nix, flake.lock
//	echo source_env x                   → nothing (an argument of echo)
func EnvrcLoads(data []byte) []Loaded {
	var out []Loaded
	for _, cmd := range shellCommands(string(data)) {
		if len(cmd) == 0 {
			continue
		}
		args := cmd[1:]
		first := func(def string) string {
			for _, a := range args {
				if !strings.HasPrefix(a, "-") {
					return a
				}
			}
			return def
		}
		switch cmd[0] {
		case "source_env":
			out = appendLoad(out, Loaded{Path: first(""), Dir: true, Script: true})
		case "source_env_if_exists", "source", ".":
			out = appendLoad(out, Loaded{Path: first(""), Script: true})
		case "dotenv", "dotenv_if_exists":
			out = appendLoad(out, Loaded{Path: first(".env")})
		case "use", "use_nix", "use_flake":
			what := cmd[0]
			if what == "use" {
				if len(args) == 0 {
					continue
				}
				what, args = "use_"+args[0], args[1:]
			}
			switch what {
			case "use_nix":
				files := []string{"shell.nix", "default.nix"}
				for _, a := range args {
					if !strings.HasPrefix(a, "-") && strings.HasSuffix(a, ".nix") {
						files = []string{a}
					}
				}
				for _, f := range files {
					out = appendLoad(out, Loaded{Path: f})
				}
			case "use_flake":
				dir := "."
				if ref := first(""); ref != "" && !strings.Contains(ref, ":") {
					dir, _, _ = strings.Cut(ref, "#")
				}
				for _, f := range []string{"flake.nix", "flake.lock"} {
					out = appendLoad(out, Loaded{Path: strings.TrimPrefix(dir+"/"+f, "./")})
				}
			}
		}
	}
	return out
}

// MiseLoads lists the files a mise config (its content, data) sources or
// reads as dotenv: [env] _.source and _.file, as a string or a list, in
// any of TOML's spellings of them (`_.source = "x"`, `_ = { file = "x" }`,
// a [env._] table). A value with a template ({{ }}) or $ names nothing.
//
//	[env]
//	_.source = "./scripts/env.sh"       → scripts/env.sh
//	_.file = [".env", ".env.local"]     → .env, .env.local
func MiseLoads(data []byte) []Loaded {
	var out []Loaded
	table := ""
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			table = strings.Trim(strings.TrimSpace(strings.Split(line, "#")[0]), "[] ")
			continue
		}
		if table != "env" && table != "env._" && !strings.HasPrefix(table, "env._.") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		key = strings.Trim(strings.TrimSpace(key), `"'`)
		switch {
		case key == "_.source" || key == "_.file",
			(key == "source" || key == "file") && table != "env":
		case key == "_" && strings.Contains(value, "{"):
			// _ = { source = "x", file = [...] }: the values after
			// either key.
			for _, k := range []string{"source", "file"} {
				if i := strings.Index(value, k); i >= 0 {
					rest := strings.TrimSpace(value[i+len(k):])
					if v, ok := strings.CutPrefix(rest, "="); ok {
						out = appendQuoted(out, cutValue(v), k == "source")
					}
				}
			}
			continue
		default:
			continue
		}
		out = appendQuoted(out, value, strings.HasSuffix(key, "source") || strings.HasPrefix(table, "env._.source"))
	}
	return out
}

// cutValue is the first TOML value at the start of s: a string, or a
// list up to its closing bracket.
func cutValue(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "[") {
		if i := strings.IndexByte(s, ']'); i >= 0 {
			return s[:i+1]
		}
		return s
	}
	if len(s) > 0 && (s[0] == '"' || s[0] == '\'') {
		if i := strings.IndexByte(s[1:], s[0]); i >= 0 {
			return s[:i+2]
		}
	}
	return s
}

// appendQuoted adds every quoted string in value (one, or a list's) as a
// loaded file (script: one the shell sources); a comment after the value
// is left out.
func appendQuoted(out []Loaded, value string, script bool) []Loaded {
	for value != "" {
		i := strings.IndexAny(value, `"'#`)
		if i < 0 || value[i] == '#' {
			break
		}
		q := value[i]
		end := strings.IndexByte(value[i+1:], q)
		if end < 0 {
			break
		}
		s := value[i+1 : i+1+end]
		value = value[i+end+2:]
		if strings.Contains(s, "{{") || strings.Contains(s, "$") {
			continue
		}
		out = appendLoad(out, Loaded{Path: s, Script: script})
	}
	return out
}

// appendLoad adds l unless its path is empty or cannot be read without
// running the shell; a leading ./ is dropped.
func appendLoad(out []Loaded, l Loaded) []Loaded {
	p := l.Path
	if p == "" || strings.ContainsAny(p, "$`*?[~\\{") {
		return out
	}
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	if p == "" {
		p = "."
	}
	l.Path = p
	return append(out, l)
}

// shellCommands splits shell text into simple commands' words, as far as
// that can be done without running it: comments dropped, lines continued
// by a backslash joined, commands separated by newlines, ; & | && || and
// the grouping words (if, then, do, {, ( …) before a command, quotes
// removed from words. What it cannot read (a here-document's body, a
// function's quoting it gets wrong) yields words no loader matches, or a
// command it names: a protection too many, never a hidden one.
func shellCommands(text string) [][]string {
	var cmds [][]string
	var cur []string
	var word strings.Builder
	inWord := false
	endWord := func() {
		if inWord {
			cur = append(cur, word.String())
			word.Reset()
			inWord = false
		}
	}
	endCmd := func() {
		endWord()
		for len(cur) > 0 && isGrouping(cur[0]) {
			cur = cur[1:]
		}
		if len(cur) > 0 {
			cmds = append(cmds, cur)
		}
		cur = nil
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\\' && i+1 < len(text):
			i++
			if text[i] != '\n' {
				word.WriteByte(text[i])
				inWord = true
			}
		case c == '\'' || c == '"':
			end := strings.IndexByte(text[i+1:], c)
			if end < 0 {
				end = len(text) - i - 1
			}
			word.WriteString(text[i+1 : i+1+end])
			inWord = true
			i += end + 1
		case c == '#' && !inWord:
			for i < len(text) && text[i] != '\n' {
				i++
			}
			endCmd()
		case c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')':
			endCmd()
		case c == ' ' || c == '\t':
			endWord()
			// A grouping word before the command (then, do, {, !) is
			// dropped when the command ends; one after a word is not one.
			if len(cur) > 0 && isGrouping(cur[len(cur)-1]) && len(cur) == 1 {
				cur = cur[:0]
			}
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	endCmd()
	return cmds
}

// isGrouping reports whether w is a shell word that may stand before a
// command without being one.
func isGrouping(w string) bool {
	switch w {
	case "if", "then", "else", "elif", "do", "while", "until", "{", "}", "!", "time", "command", "builtin", "exec":
		return true
	}
	return false
}

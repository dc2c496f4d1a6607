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

// Loaded is a file a later-executed file loads, as written there.
type Loaded struct {
	// Path is relative to the directory the loading file runs in (the
	// tree's root, or the loading file's own after a source_env: Chdir),
	// unless absolute or FromFile.
	Path string
	// FromFile: Path is relative to the loading file's own directory
	// (written from "$(dirname "${BASH_SOURCE[0]}")" and its kin).
	FromFile bool
	// Dir: Path may name a directory, and then its .envrc is what is
	// loaded (source_env).
	Dir bool
	// Script: Path is itself shell that runs, whose own loads count too.
	Script bool
	// Chdir: direnv runs Path in its own directory (source_env and
	// source_env_if_exists), so its relative names start there.
	Chdir bool
	// Tree: Path is a directory whose every file may be loaded (a nix
	// directory a flake imports from); it is protected whole.
	Tree bool
}

// EnvrcLoads lists the files an .envrc (its content, data) loads through
// direnv's standard library and the shell: source_env,
// source_env_if_exists, dotenv, dotenv_if_exists (.env when no file is
// named), source and ., use nix (shell.nix, default.nix and a nix/
// directory they import from), use flake (the same with flake.nix and
// flake.lock), use devenv (devenv's files), devbox's generated .envrc
// (devbox.json), and the directories PATH_add, path_add PATH and layout
// node put on PATH, where a planted program runs when the user types its
// name. A word brig cannot read without running the shell names nothing
// (one with a variable, a backquote, a glob or ~), except the script's
// own directory ("$(dirname "${BASH_SOURCE[0]}")", "${BASH_SOURCE%/*}")
// and the working directory ($PWD, $(pwd)); source_up names nothing in
// the tree (README: Limits).
//
//	source_env_if_exists .envrc.local   → .envrc.local
//	dotenv                              → .env
//	[ -f x ] && source ./env/dev.sh     → env/dev.sh
//	. "$(dirname "${BASH_SOURCE[0]}")/common.sh" → common.sh beside the script
//	use flake                           → flake.nix, flake.lock, nix/
//	PATH_add bin                        → bin
//	echo source_env x                   → nothing (an argument of echo)
func EnvrcLoads(data []byte) []Loaded {
	var out []Loaded
	text := string(data)
	if strings.Contains(text, "devbox generate direnv") {
		// eval "$(devbox generate direnv --print-envrc)": devbox.json's
		// init_hook runs at every cd.
		out = appendLoad(out, Loaded{Path: "devbox.json"})
		out = appendLoad(out, Loaded{Path: "devbox.lock"})
	}
	for _, cmd := range shellCommands(text) {
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
			out = appendLoad(out, Loaded{Path: first(""), Dir: true, Script: true, Chdir: true})
		case "source_env_if_exists":
			out = appendLoad(out, Loaded{Path: first(""), Script: true, Chdir: true})
		case "source", ".":
			out = appendLoad(out, Loaded{Path: first(""), Script: true})
		case "dotenv", "dotenv_if_exists":
			out = appendLoad(out, Loaded{Path: first(".env")})
		case "PATH_add":
			for _, a := range args {
				out = appendLoad(out, Loaded{Path: a, Tree: true})
			}
		case "path_add":
			if len(args) > 1 && args[0] == "PATH" {
				for _, a := range args[1:] {
					out = appendLoad(out, Loaded{Path: a, Tree: true})
				}
			}
		case "layout":
			if len(args) > 0 && args[0] == "node" {
				out = appendLoad(out, Loaded{Path: "node_modules/.bin", Tree: true})
			}
		case "use", "use_nix", "use_flake", "use_devenv":
			what := cmd[0]
			if what == "use" {
				if len(args) == 0 {
					continue
				}
				what, args = "use_"+args[0], args[1:]
			}
			var files []string
			dir := "."
			switch what {
			case "use_nix":
				files = []string{"shell.nix", "default.nix"}
				for _, a := range args {
					if !strings.HasPrefix(a, "-") && strings.HasSuffix(a, ".nix") {
						files = []string{a}
					}
				}
			case "use_flake":
				if ref := first(""); ref != "" && !strings.Contains(ref, ":") {
					dir, _, _ = strings.Cut(ref, "#")
				}
				files = []string{"flake.nix", "flake.lock"}
			case "use_devenv":
				files = []string{"devenv.nix", "devenv.yaml", "devenv.lock", "devenv.local.nix", "devenv.local.yaml", ".devenv.flake.nix"}
			default:
				continue
			}
			for _, f := range files {
				out = appendLoad(out, Loaded{Path: strings.TrimPrefix(dir+"/"+f, "./")})
			}
			// What these import is nix as well, most often from a nix/
			// directory beside them (a shellHook there runs at every cd).
			out = appendLoad(out, Loaded{Path: strings.TrimPrefix(dir+"/nix", "./"), Tree: true})
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
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if strings.HasPrefix(line, "[") {
			table = strings.ReplaceAll(strings.Trim(strings.TrimSpace(strings.Split(line, "#")[0]), "[] "), `"`, "")
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		// One key however TOML spells it: "_".source, env._.source at
		// the top level.
		key = strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(key), `"`, ""), "'", "")
		if table != "" {
			key = table + "." + key
		}
		if v := strings.TrimSpace(value); strings.HasPrefix(v, "[") && !strings.Contains(v, "]") {
			// A list over several lines, up to its closing bracket, its
			// lines' comments left out.
			value = uncommented(value)
			for i+1 < len(lines) && !strings.Contains(value, "]") {
				i++
				value += " " + uncommented(lines[i])
			}
		}
		switch key {
		case "env._.source", "env._.file":
			out = appendQuoted(out, value, key == "env._.source")
		case "env._":
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
		}
	}
	return out
}

// uncommented is a TOML line without its comment: from the first # that
// is outside a string.
func uncommented(line string) string {
	var quote byte
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case quote == 0 && c == '#':
			return line[:i]
		}
	}
	return line
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

// ownDir are the ways a sourced script names its own directory, as the
// shell scanner leaves them (quotes removed).
var ownDir = []string{
	"$(dirname ${BASH_SOURCE[0]})", "$(dirname $BASH_SOURCE)", "$(dirname ${BASH_SOURCE})",
	"${BASH_SOURCE[0]%/*}", "${BASH_SOURCE%/*}",
	"$(cd $(dirname ${BASH_SOURCE[0]}) && pwd)", "$(cd $(dirname $BASH_SOURCE) && pwd)",
}

// workDir are the ways to name the working directory.
var workDir = []string{"$PWD", "${PWD}", "$(pwd)"}

// appendLoad adds l unless its path is empty or cannot be read without
// running the shell; a leading ./ is dropped, and a path that starts
// from the script's own directory or the working directory is made
// relative to it.
func appendLoad(out []Loaded, l Loaded) []Loaded {
	p := l.Path
	for _, d := range ownDir {
		if rest, ok := strings.CutPrefix(p, d); ok && (rest == "" || rest[0] == '/') {
			p, l.FromFile = "."+rest, true
			break
		}
	}
	for _, d := range workDir {
		if rest, ok := strings.CutPrefix(p, d); ok && (rest == "" || rest[0] == '/') {
			p = "." + rest
			break
		}
	}
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
		case c == '$' && i+1 < len(text) && text[i+1] == '(':
			// A command substitution is one word, spaces and all, with
			// its quotes dropped ("$(dirname "$0")" reads as one).
			depth, j := 0, i+1
			for ; j < len(text); j++ {
				if text[j] == '(' {
					depth++
				} else if text[j] == ')' {
					if depth--; depth == 0 {
						break
					}
				}
			}
			word.WriteString(strings.NewReplacer(`"`, "", "'", "").Replace(text[i:min(j+1, len(text))]))
			inWord = true
			i = j
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

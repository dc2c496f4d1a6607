package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestArgumentMistakesAreSaid: a command given too few or too many
// arguments says what it takes, in the user's terms; a prompt typed
// without -p is shown how to pass it.
func TestArgumentMistakesAreSaid(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sessions", "show"}, "sessions show needs a session id (brig sessions list shows them), e.g. brig sessions show 2026-11-22-ab12cd"},
		{[]string{"sessions", "rm", "a", "b"}, `sessions rm takes one session id, not 2: "a" "b"`},
		{[]string{"changes", "a", "\x1b[2Jb"}, `changes takes at most one SESSION, not 2: "a" "\x1b[2Jb"`},
		{[]string{"audit", "a", "b"}, `audit takes at most one PATH`},
		{[]string{"fix", "the", "bug"}, `unexpected arguments "fix" "the" "bug" (a prompt goes after -p, quoted: brig -p "fix the bug"; or start brig and type it)`},
		{[]string{"-p"}, `-p needs the prompt after it: brig -p "fix the bug" (or -p - to read it from standard input)`},
		{[]string{"--model"}, `flag needs an argument: --model (brig --help lists the flags and what each takes)`},
		{[]string{"config"}, `unknown command "config" (brig --help lists the commands; a prompt goes after -p: brig -p "config")`},
		{[]string{"--resume", "a", "b"}, `--resume takes one session id, not 2: "a" "b"`},
		// A mistyped command is not taken for a prompt.
		{[]string{"sesions"}, `unknown command "sesions": did you mean sessions? (brig --help lists the commands; a prompt goes after -p)`},
		{[]string{"sesions", "list"}, `unknown command "sesions": did you mean sessions?`},
		{[]string{"audti"}, `did you mean audit?`},
		// -p takes the next word: one of brig's flags is not a prompt.
		{[]string{"--mode", "auto", "-p", "--yes"}, `-p took "--yes" as the prompt: -p takes the next word, so put the prompt right after it (brig -p "fix the bug" --yes …)`},
		{[]string{"-p", "--mode", "edit", "fix"}, `-p took "--mode" as the prompt`},
		{[]string{"-p", "-c"}, `-p took "-c" as the prompt`},
		// A command group refuses a word that names none of its commands
		// (it printed its help and exited 0: new user, 2026-12-02).
		{[]string{"cache", "clear"}, `unknown command "clear" for "brig cache": did you mean brig cache clean?`},
		{[]string{"sessions", "delete", "2026-11-22-ab12cd"}, `did you mean brig sessions rm?`},
		{[]string{"sessions", "ls"}, `did you mean brig sessions list`},
		{[]string{"policy", "chek", "--", "ls"}, `did you mean brig policy check?`},
		{[]string{"mcp", "bogus"}, `unknown command "bogus" for "brig mcp" (its commands: list, trust)`},
		// A mistyped flag names the flags a typo or two away (it said
		// only "unknown flag": new user, 2026-12-02).
		{[]string{"--modle", "x"}, `unknown flag: --modle: did you mean --mode or --model? (brig --help lists the flags)`},
		{[]string{"undo", "--dryrun"}, `did you mean --dry-run? (brig undo --help lists the flags)`},
		{[]string{"--zzzzz"}, `unknown flag: --zzzzz (brig --help lists the flags)`},
		{[]string{"sessions", "--x"}, `unknown flag: --x (brig sessions --help lists the flags)`},
		{[]string{"sessions", "list", "--frobnicate"}, `unknown flag: --frobnicate (brig sessions list --help lists the flags)`},
		{[]string{"-Z"}, `unknown shorthand flag: 'Z' in -Z (brig --help lists the flags)`},
		// A value after a space, for a flag whose value may be left out.
		{[]string{"sandbox", "--explain", "json", "--", "true"}, `--explain json: write --explain=json (with =)`},
		// 0 is also the flag's "not given": it ran the default (new user).
		{[]string{"-p", "x", "--max-tool-calls", "0"}, `--max-tool-calls 0: want a positive number`},
		// A glob expanded to 166 files: the first few and the count.
		{append([]string{"sessions", "show"}, manyArgs(166)...), `sessions show takes one session id, not 166: "f0" "f1" "f2" "f3" … and 162 more`},
	} {
		cmd := newRootCmd()
		cmd.SetArgs(tc.args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "\x1b") {
			t.Errorf("%q: the message holds a raw escape: %q", tc.args, err)
		}
		if err != nil && len(err.Error()) > 300 {
			t.Errorf("%d arguments: a %d-byte message: %s", len(tc.args), len(err.Error()), err)
		}
	}
}

// manyArgs is n file names, as a shell glob gives them.
func manyArgs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("f%d", i)
	}
	return out
}

// TestPromptIsFlagControls: a prompt that merely starts with a dash, or
// names no flag of brig's, is a prompt.
func TestPromptIsFlagControls(t *testing.T) {
	for _, p := range []string{"-v is broken", "--frobnicate", "-", "fix --mode"} {
		cmd := newRootCmd()
		if err := cmd.ParseFlags([]string{"-p", p}); err != nil {
			t.Fatal(err)
		}
		if err := promptIsFlag(cmd, p); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
}

// TestFlagErrorGivesJSONResult checks that a -p run asked for JSON output
// writes its one result object for a flag error too, wherever --output
// stands; and that without JSON output nothing goes to stdout.
func TestFlagErrorGivesJSONResult(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // "" : stdout stays empty
	}{
		{[]string{"--bogus", "-p", "hi", "--output", "json"}, `"stop": "failed"`},
		{[]string{"-p", "hi", "--output=stream-json", "--max-tool-calls=x"}, `{"type":"result",`},
		{[]string{"-p", "hi", "--bogus"}, ""},
		{[]string{"sandbox", "--bogus", "--output", "json", "--", "true"}, ""},
	} {
		var out bytes.Buffer
		if code := runTo(context.Background(), tc.args, &out); code != 2 {
			t.Errorf("%q: exit %d, want 2", tc.args, code)
		}
		got := out.String()
		if tc.want == "" {
			if got != "" {
				t.Errorf("%q wrote to stdout: %s", tc.args, got)
			}
			continue
		}
		if !strings.Contains(got, tc.want) || !strings.Contains(got, "unknown flag: --bogus") && !strings.Contains(got, "--max-tool-calls") {
			t.Errorf("%q: stdout %s, want %s and the flag's error", tc.args, got, tc.want)
		}
	}
}

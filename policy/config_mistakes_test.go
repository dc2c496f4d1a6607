package policy

import (
	"strings"
	"testing"
)

// TestConfigMistakesAreSaid: every mistake in a config file is reported
// with the file, the line and the fix, in the user's terms; a mistake that
// could leave a rule out of force stops the load.
func TestConfigMistakesAreSaid(t *testing.T) {
	tests := []struct {
		name, in string
		err      string // the exact error, "" for none
		warning  string
	}{
		{name: "misspelled table", in: "[permisions]\ndeny = [\"Bash(git push:*)\"]\n",
			err: `f.toml:1: unknown table [permisions] (did you mean "permissions"?); brig reads [permissions], [sandbox], [agent], [limits] and [mcp] — fix the name (brig does not start with part of a config ignored)`},
		{name: "misspelled sandbox table", in: "[sandbx]\nnetwork = true\n",
			err: `f.toml:1: unknown table [sandbx] (did you mean "sandbox"?); brig reads [permissions], [sandbox], [agent], [limits] and [mcp] — fix the name (brig does not start with part of a config ignored)`},
		{name: "unrelated table", in: "[colours]\nx = 1\n",
			err: `f.toml:1: unknown table [colours]; brig reads [permissions], [sandbox], [agent], [limits] and [mcp] — fix the name (brig does not start with part of a config ignored)`},
		{name: "misspelled deny", in: "[permissions]\ndeni = [\"Bash(git push:*)\"]\n",
			err: `f.toml:2: unknown key "permissions.deni" (did you mean "deny"?) (the [permissions] table takes allow, ask, deny); fix it (brig does not start with a rule list ignored)`},
		{name: "a string for a list", in: "[permissions]\nallow = \"Bash(x)\"\n",
			err: `f.toml:2: permissions.allow must be a list, e.g. allow = ["Bash(go test:*)", "Read(~/notes/**)"], not a string`},
		{name: "a number in a list", in: "[sandbox]\nread = [1]\n",
			err: `f.toml:2: every entry of sandbox.read must be a string (one entry is a number); e.g. read = ["~/notes"]`},
		{name: "a string for a boolean", in: "[sandbox]\nnetwork = \"yes\"\n",
			err: `f.toml:2: sandbox.network must be true or false, e.g. network = true, not a string`},
		{name: "a string for a number", in: "[agent]\nmax_tool_calls = \"5\"\n",
			err: `f.toml:2: agent.max_tool_calls must be a whole number, e.g. max_tool_calls = 64, not a string`},
		{name: "a mode brig does not know", in: "[agent]\nmode = \"yolo\"\n",
			err: `f.toml:2: [agent] mode: unknown mode "yolo" (want plan, ask, edit or auto)`},
		{name: "a mode that is not a string", in: "[agent]\nmode = 1\n",
			err: `f.toml:2: agent.mode must be a string, e.g. mode = "edit", not a number`},
		// The key a value's own parser refused is named (new user,
		// 2026-12-02: only the line was).
		{name: "a size that is not one", in: "[limits]\nmemory = \"lots\"\n",
			err: `f.toml:2: limits.memory: size "lots": want a number of bytes, or one with K, M, G or T ("512M")`},
		{name: "an unknown rule scope", in: "[permissions]\nallow = [\"Exec(ls)\"]\n",
			err: `f.toml:2: rule "Exec(ls)": unknown scope "Exec" (want one of Read, Write, Bash, Net, WebFetch, Mcp)`},
		{name: "a list in a list", in: "[permissions]\ndeny = [[\"Bash(rm:*)\"]]\n",
			err: `f.toml:2: every entry of permissions.deny must be a string (one entry is a list); e.g. deny = ["Bash(git push:*)"]`},
		{name: "a table for a list", in: "[permissions.deny]\nx = \"Bash(rm:*)\"\n",
			err: `f.toml:1: permissions.deny must be a list, e.g. deny = ["Bash(git push:*)"], not a table`},
		{name: "a string for a table", in: "permissions = \"x\"\n",
			err: `f.toml:1: permissions must be a table ([permissions]), not a string`},
		{name: "a number for a table", in: "sandbox = 3\n",
			err: `f.toml:1: sandbox must be a table ([sandbox]), not a number`},
		{name: "misspelled sandbox key warns", in: "[sandbox]\nnetwrk = true\n",
			warning: `f.toml:2: unknown key "sandbox.netwrk" (did you mean "network"?) (the [sandbox] table takes net_presets, network, unix_sockets, read, write, env); ignored`},
		// New user, 2026-12-03: two letters swapped were offered the
		// key one letter shorter alone.
		{name: "swapped letters", in: "[agent]\nmodle = \"gpt-5\"\n",
			warning: `f.toml:2: unknown key "agent.modle" (did you mean "model" or "mode"?) (the [agent] table takes model, web_search, max_tool_calls, subagents, mode); ignored`},
		{name: "mcp is read elsewhere", in: "[mcp.servers.x]\ncommand = \"x\"\n"},
		// New user, 2026-12-02: a rule list above every table was called
		// an unknown table; a misspelled scope had no suggestion; a
		// credential in [sandbox] env was dropped without a word.
		{name: "a table's key at the top", in: "allow = [\"Bash(ls)\"]\n",
			err: `f.toml:1: "allow" is not in a table; it belongs to [permissions]: put a [permissions] line above it — fix it (brig does not start with part of a config ignored)`},
		{name: "an unknown key at the top", in: "colour = \"red\"\n",
			err: `f.toml:1: "colour" is not in a table; brig reads keys only inside [permissions], [sandbox], [agent], [limits] and [mcp] — fix it (brig does not start with part of a config ignored)`},
		{name: "a misspelled scope", in: "[permissions]\nallow = [\"Raed(/x)\"]\n",
			err: `f.toml:2: rule "Raed(/x)": unknown scope "Raed" (did you mean "Read"?) (want one of Read, Write, Bash, Net, WebFetch, Mcp)`},
		{name: "a credential in env", in: "[sandbox]\nenv = [\"MY_VAR\", \"GITHUB_TOKEN\"]\n",
			warning: `f.toml:2: [sandbox] env lists GITHUB_TOKEN, whose name looks like a credential: brig never passes one into a call, whatever the config says; ignored (run the command that needs it yourself, outside brig)`},
	}
	for _, tt := range tests {
		_, w, err := ParseConfig("f.toml", []byte(tt.in))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.err {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.err)
		}
		var ws []string
		for _, x := range w {
			ws = append(ws, x.String())
		}
		if strings.Join(ws, "\n") != tt.warning {
			t.Errorf("%s: warnings %q, want %q", tt.name, ws, tt.warning)
		}
	}
}

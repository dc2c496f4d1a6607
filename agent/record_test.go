package agent

import (
	"testing"
	"unicode/utf8"

	"brig/agent/provider"
	"brig/internal/session"
)

// A tool result's one-line preview (brig sessions show, the resume view)
// shows output: the label of a two-stream result goes before its stream's
// first line, the rest is counted, and a cut never splits a character.
func TestToolResultPreview(t *testing.T) {
	result := func(text string) provider.Message {
		return provider.Message{Role: provider.User, Content: []provider.Block{{
			Type:       provider.BlockToolResult,
			ToolResult: &provider.ToolResult{ToolUseID: "t1", Content: []provider.Block{{Type: provider.BlockText, Text: text}}},
		}}}
	}
	for _, tc := range []struct{ text, want string }{
		{"[stdout]\nbuilding\n[stderr]\nwarning: w\n[exit code 2]", "[stdout] building … (+3 lines)"},
		{"[stderr]\ncurl: (7) failed\n[stdout]\n000\n[exit code 7]", "[stderr] curl: (7) failed … (+3 lines)"},
		{"ok  demo\n[exit code 0]", "ok  demo … (+1 line)"},    // one stream: no label
		{"[stdout] is a word here", "[stdout] is a word here"}, // not a label line
		// A command with no output shows how it ended (a new user saw
		// "(no output) … (+2 lines)" for a timeout).
		{"(no output)\n[timed out after 5s: the command and everything it started were killed.]\n", "[timed out after 5s: the command and everything it started were killed.]"},
		{"(no output)\n[exit code 0]", "[exit code 0]"},
	} {
		d := displayOf(result(tc.text))
		if len(d) != 1 || d[0].Kind != session.DisplayToolResult || d[0].Text != tc.want {
			t.Errorf("preview of %q = %+v, want %q", tc.text, d, tc.want)
		}
	}
	long := "é"
	for len(long) < 401 {
		long += "é"
	}
	long = "x" + long // every é now starts at an odd offset: byte 400 is inside one
	d := displayOf(result(long))
	if got := d[0].Text; !utf8.ValidString(got) || len(got) > 400+len("…") {
		t.Errorf("a long line's preview is %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
}

// TestDisplayOfBrigsNote (new user, 2026-12-02): the note brig adds to a
// user message for the model (an undo) is shown on a resume as brig's,
// not as something the user typed; the user's text beside it stays
// theirs.
func TestDisplayOfBrigsNote(t *testing.T) {
	d := displayOf(provider.Message{Role: provider.User, Content: []provider.Block{
		provider.Text("[brig] The user undid one of your earlier tool calls: c1 (bash)."),
		provider.Text("now fix it properly"),
	}})
	if len(d) != 2 || d[0].Kind != session.DisplayNotice || d[0].Text != "told the model: The user undid one of your earlier tool calls: c1 (bash)." ||
		d[1].Kind != session.DisplayUser || d[1].Text != "now fix it properly" {
		t.Errorf("display %+v", d)
	}
}

// TestOneLineLeavesOutMeta: a preview's "(+N lines)" counts what the user
// does not see of the result, not the lines brig adds for the model (a
// file's hash, a subagent's figures).
func TestOneLineLeavesOutMeta(t *testing.T) {
	for in, want := range map[string]string{
		"1\ta\n2\tb\n3\tc\n[hash 1234abcd]":                                              "1\ta … (+2 lines)",
		"Created notes.md (14 bytes, 2 lines)\n[hash 1234abcd]":                          "Created notes.md (14 bytes, 2 lines)",
		"The summary.\nSecond line.\n\n[subagent: 3 requests, 2 tool calls, 900 tokens]": "The summary. … (+1 line)",
		"a\n[not brig's]":   "a … (+1 line)",
		"a\nb\n[hash x]\nc": "a … (+3 lines)",
	} {
		if got := OneLine(in, 200); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

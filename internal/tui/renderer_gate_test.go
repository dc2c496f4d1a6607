package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"

	"brig/agent"
	"brig/internal/render"
	"brig/internal/termsafe/termsafetest"
	"brig/policy"
	"brig/tools"
)

// hostileRenderer answers as a renderer process gone wrong would: escapes
// that write the clipboard, set the title, hide a link target and move the
// cursor, around otherwise plain text.
type hostileRenderer struct{}

const hostileEscapes = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b]0;pwned\x07\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\\x1b[2J\x1b[H\x1b[6n"

func (hostileRenderer) Markdown(_ string, _ int, src string) (string, error) {
	return hostileEscapes + src + hostileEscapes, nil
}

func (hostileRenderer) Code(_, code string) []render.Token {
	return []render.Token{{Text: hostileEscapes + code, Colour: "#ff0000"}}
}

// TestRendererOutputIsGated: the renderer is another process reading the
// model's text; whatever it answers reaches the terminal only through the
// TUI's last gate, so nothing but SGR styling gets through. Control: the
// renderer's answer was drawn.
func TestRendererOutputIsGated(t *testing.T) {
	h := newHarness(t, 100, colorprofile.TrueColor, allHold())
	h.m.md = newMarkdown(colorprofile.TrueColor, hostileRenderer{})
	h.m.hl = newHighlighter(hostileRenderer{})
	h.start(h.conn(policy.ModeAsk, nil))
	h.printed = nil
	h.send(eventsMsg{
		{Kind: agent.EventText, Text: "The **answer**.\n\n"},
		{Kind: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: "e", Name: "edit_file", Args: []byte(`{"path":"x.go"}`), Outcome: &agent.Outcome{
			Result: tools.Result{Text: "edited", Meta: tools.Meta{Path: "x.go", Diff: "--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-func a() {}\n+func b() {}\n", Added: 1, Removed: 1}}}}},
	})
	h.m.frameText()
	all := strings.Join(h.printed, "\n")
	if !strings.Contains(all, "]52;c;") || !strings.Contains(all, "func b()") {
		t.Fatalf("the hostile renderer's answer was not drawn, so the case proves nothing:\n%q", all)
	}
	for i, p := range h.printed {
		if err := termsafetest.Inert([]byte(p), true); err != nil {
			t.Errorf("printed block %d: %v", i, err)
		}
	}
	if err := termsafetest.Inert([]byte(h.m.View().Content), true); err != nil {
		t.Errorf("live area: %v", err)
	}
}

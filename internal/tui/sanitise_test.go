package tui

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"brig/agent"
	"brig/internal/session"
	"brig/internal/termsafe/termsafetest"
	"brig/policy"
	"brig/tools"
)

// feedCorpus sends every hostile string through every path of the
// transcript: the streamed answer, reasoning, a server tool, a tool's live
// output and its result (as a command, an edit with a diff, a read, an
// error), a notice, a queued message, a paste, and a turn that fails with
// an error quoting it; then a resumed session's replay.
func feedCorpus(h *harness, corpus []termsafetest.Case) {
	for i, c := range corpus {
		id := string(rune('a' + i))
		args, _ := json.Marshal(map[string]string{"command": c.Text, "path": c.Text})
		h.send(eventsMsg{
			{Kind: agent.EventThinking, Text: c.Name + " thinking: " + c.Text},
			{Kind: agent.EventText, Text: c.Name + ": " + c.Text + "\n\n"},
			{Kind: agent.EventServerTool, Text: c.Text},
			{Kind: agent.EventToolStart, Tool: &agent.ToolEvent{ID: id, Name: "bash", Args: args}},
			{Kind: agent.EventToolOutput, Tool: &agent.ToolEvent{ID: id}, Text: c.Text + "\n"},
		})
		h.m.frameText() // the live view, with the running call
		h.m.View()
		h.send(eventsMsg{
			{Kind: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: id, Name: "bash", Args: args, Outcome: &agent.Outcome{
				Result: tools.Result{Text: c.Text + "\n", Meta: tools.Meta{ExitCode: intp(1)}}}}},
			{Kind: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: id + "e", Name: "edit_file", Args: args, Outcome: &agent.Outcome{
				Result: tools.Result{Text: "edited", Meta: tools.Meta{Path: c.Text, Diff: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-" + c.Text + "\n+" + c.Text + "\n", Added: 1, Removed: 1}}}}},
			{Kind: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: id + "r", Name: "read_file", Args: args, Outcome: &agent.Outcome{
				Result: tools.Result{IsError: true, Text: c.Text}}}},
			{Kind: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: id + "m", Name: "srv__tool", Args: args, Outcome: &agent.Outcome{
				Result: tools.Result{Text: c.Text}}}},
			{Kind: agent.EventNotice, Text: c.Text},
		})
		h.send(tea.PasteMsg{Content: c.Text})
		h.m.frameText()
		h.m.View()
	}
	h.send(turnDoneMsg{res: agent.TurnResult{Stop: agent.StopDone}, err: errors.New("provider said: " + corpus[0].Text)})
	st := &session.State{Summary: session.Summary{ID: "2026-01-01-abcdef", Title: corpus[3].Text}}
	for _, c := range corpus {
		for _, k := range []session.DisplayKind{session.DisplayUser, session.DisplayAssistant, session.DisplayThinking, session.DisplayToolCall, session.DisplayToolResult, session.DisplayNotice, session.DisplayError} {
			st.Display = append(st.Display, session.Entry{Display: session.Display{Kind: k, Tool: "bash", Text: c.Name + ": " + c.Text}})
		}
	}
	h.m.print(h.m.replay(st))
}

// TestTranscriptCorpusIsInert: in full colour, every byte the TUI prints
// or draws for the corpus carries no escape but brig's own SGR styling,
// and a golden (escapes stripped) shows how each string reads.
func TestTranscriptCorpusIsInert(t *testing.T) {
	h := newHarness(t, 100, colorprofile.TrueColor, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	h.printed = nil
	feedCorpus(h, termsafetest.Corpus)
	for i, p := range h.printed {
		if err := termsafetest.Inert([]byte(p), true); err != nil {
			t.Errorf("printed block %d: %v", i, err)
		}
	}
	if err := termsafetest.Inert([]byte(h.m.View().Content), true); err != nil {
		t.Errorf("live area: %v", err)
	}

	g := newHarness(t, 100, colorprofile.NoTTY, allHold())
	g.start(g.conn(policy.ModeAsk, nil))
	g.printed = nil
	// The golden keeps the long line short enough to read (it still
	// wraps); the check above had the full one.
	short := slices.Clone(termsafetest.Corpus)
	for i, c := range short {
		if c.Name == "very_long_line" {
			short[i].Text = strings.Repeat("A", 150) + "\x1b[31mred\x1b[0m" + strings.Repeat("B", 150)
		}
	}
	feedCorpus(g, short)
	for _, p := range g.printed {
		if err := termsafetest.Inert([]byte(p), false); err != nil {
			t.Errorf("NO_COLOR printed block: %v", err)
		}
	}
	golden(t, "transcript_hostile", ansi.Strip(strings.Join(g.printed, "\n")))
}

// TestModelLinksShowTheirTarget: a Markdown link from the model is not
// turned into a terminal hyperlink whose target is hidden behind its text
// (glamour's OSC 8); the URL is shown.
func TestModelLinksShowTheirTarget(t *testing.T) {
	h := newHarness(t, 100, colorprofile.TrueColor, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	h.printed = nil
	h.send(eventsMsg{{Kind: agent.EventText, Text: "See [the official docs](https://evil.example/phish) now.\n\n"}})
	out := strings.Join(h.printed, "\n")
	if strings.Contains(out, "\x1b]8;") {
		t.Errorf("a hyperlink escape reached the terminal: %q", out)
	}
	if !strings.Contains(ansi.Strip(out), "https://evil.example/phish") {
		t.Errorf("the link's target is not shown:\n%s", ansi.Strip(out))
	}
}

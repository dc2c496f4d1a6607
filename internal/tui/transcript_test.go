package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"brig/agent"
	"brig/agent/provider"
	"brig/policy"
	"brig/tools"
)

// prose is a sentence of ordinary words, long enough to wrap at any width.
const prose = "the quick brown fox jumps over the lazy dog while seventeen careful reviewers read every changed line of the parser twice before lunch"

// offline is a provider.Client whose every request fails.
type offline struct{}

func (offline) Provider() provider.Name { return provider.Anthropic }

func (offline) Stream(context.Context, provider.Request, func(provider.Event) error) (provider.Response, error) {
	return provider.Response{}, errors.New("offline")
}

// feedTranscript sends one of everything the transcript prints: the user's
// message, a streamed answer, a server search, a queued message delivered,
// a command with long output lines, a denied call, an approval answer, a
// notice, and a failed turn.
func feedTranscript(h *harness) {
	h.typeText("please " + prose)
	h.keys("enter") // the client fails at once; the turn's end is sent below
	h.send(eventsMsg{
		{Kind: agent.EventText, Text: "Sure: " + prose + ".\n\n"},
		{Kind: agent.EventServerTool, Text: "searched the web for " + prose},
	})
	h.send(deliveredMsg{"also " + prose})
	cmd := json.RawMessage(`{"command":"go test ./... && echo ` + prose + `"}`)
	h.send(eventsMsg{
		{Kind: agent.EventToolStart, Tool: &agent.ToolEvent{ID: "b", Name: "bash", Args: cmd}},
		{Kind: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: "b", Name: "bash", Args: cmd, Outcome: &agent.Outcome{
			Result: tools.Result{Text: "ok  \tbrig/policy\t0.2s\n--- FAIL: TestParser: " + prose + "\nFAIL\n", Meta: tools.Meta{ExitCode: intp(1)}}, Duration: 2 * time.Second}}},
		{Kind: agent.EventToolStart, Tool: &agent.ToolEvent{ID: "r", Name: "read_file", Args: json.RawMessage(`{"path":"/home/dev/.ssh/id_ed25519"}`)}},
		{Kind: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: "r", Name: "read_file", Args: json.RawMessage(`{"path":"/home/dev/.ssh/id_ed25519"}`), Outcome: &agent.Outcome{
			Verdict: &policy.Verdict{Tier: policy.Deny}, Result: tools.Result{IsError: true, Text: "denied by brig's policy: " + prose}}}},
		{Kind: agent.EventNotice, Text: "retrying: " + prose},
	})
	p := &pending{req: bashRequest("/ws"), reply: make(chan agent.Approval, 1)}
	h.send(approvalMsg{p})
	h.keys("5")
	h.typeText(prose)
	h.keys("enter")
	h.send(turnDoneMsg{err: errors.New("the provider said: " + prose)})
}

// TestTranscriptWrapsAtWords: at 40, 80 and 200 columns no printed row is
// wider than the terminal, and every word of what was said is whole on one
// row: rows break between words, never inside one.
func TestTranscriptWrapsAtWords(t *testing.T) {
	for _, width := range []int{40, 80, 200} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			h := newHarness(t, width, colorprofile.NoTTY, oneMissing())
			h.start(h.conn(policy.ModeAsk, offline{}))
			feedTranscript(h)
			out := ansi.Strip(h.printedText())
			rows := strings.Split(out, "\n")
			for _, r := range rows {
				if w := ansi.StringWidth(r); w > width {
					t.Errorf("a row of %d columns: %q", w, r)
				}
			}
			words := map[string]bool{}
			for _, r := range rows {
				for _, w := range strings.Fields(r) {
					words[strings.Trim(w, ".,:;()")] = true
				}
			}
			for _, w := range strings.Fields(prose) {
				if !words[w] {
					t.Errorf("%q is not whole on any row", w)
				}
			}
			// Every sentence is there once its rows are joined (the gutter
			// of command output left out).
			joined := strings.Join(strings.Fields(strings.ReplaceAll(out, "│", "")), " ")
			for _, want := range []string{"› please " + prose, "Sure: " + prose, "searched the web for " + prose, "(queued, sent at a tool boundary) also " + prose,
				"FAIL: TestParser: " + prose, "denied by brig's policy: " + prose, "brig: retrying: " + prose, "denied: " + prose, "the provider said: " + prose} {
				if !strings.Contains(joined, want) {
					t.Errorf("%q is not in the transcript", want)
				}
			}
			if t.Failed() {
				t.Logf("the transcript at %d columns:\n%s", width, out)
			}
		})
	}
}

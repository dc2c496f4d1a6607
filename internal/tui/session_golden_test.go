package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"brig/agent"
	"brig/agent/provider"
	"brig/policy"
	"brig/tools"
)

// waiting is a provider.Client whose request waits until the turn is
// interrupted.
type waiting struct{}

func (waiting) Provider() provider.Name { return provider.Anthropic }

func (waiting) Stream(ctx context.Context, _ provider.Request, _ func(provider.Event) error) (provider.Response, error) {
	<-ctx.Done()
	return provider.Response{}, ctx.Err()
}

// turnEnd waits for the end of the turn the agent's goroutine sends (the
// test's deadline bounds it), passing over the events it sends first.
func (h *harness) turnEnd() turnDoneMsg {
	h.t.Helper()
	for msg := range h.m.bridge.ch {
		if done, ok := msg.(turnDoneMsg); ok {
			return done
		}
	}
	panic("the bridge closed")
}

// live is the live area as the terminal shows it.
func (h *harness) live() string {
	var rows []string
	for l := range strings.SplitSeq(ansi.Strip(h.m.frameText()), "\n") {
		rows = append(rows, strings.TrimRight(l, " "))
	}
	return strings.Join(rows, "\n")
}

// TestSessionGolden is a short session at 40, 80 and 200 columns: the
// banner, a message, an answer streaming in while a command runs (its
// output live), a message queued meanwhile, a resize, the command's capped
// result, Ctrl+O, and an interrupt with Ctrl+C. Nothing the terminal shows
// is wider than it, and every stage is kept as a golden frame.
func TestSessionGolden(t *testing.T) {
	for _, tc := range []struct{ width, resized int }{{40, 80}, {80, 40}, {200, 80}} {
		t.Run(fmt.Sprint(tc.width), func(t *testing.T) {
			h := newHarness(t, tc.width, colorprofile.NoTTY, optionalMissing())
			h.start(h.conn(policy.ModeAuto, waiting{}))
			var out strings.Builder
			stage := func(name string) {
				fmt.Fprintf(&out, "═══ %s: live area ═══\n%s\n", name, h.live())
				for l := range strings.SplitSeq(h.live(), "\n") {
					if w := ansi.StringWidth(l); w > h.m.width {
						t.Errorf("%s: a live row of %d columns at %d: %q", name, w, h.m.width, l)
					}
				}
			}

			h.typeText("make the parser tests pass, then tell me what was wrong")
			h.keys("enter")
			cmd := json.RawMessage(`{"command":"go test ./parser/... -run TestParse -count=1"}`)
			h.send(eventsMsg{
				{Kind: agent.EventText, Text: "I will run the parser tests first.\n\nThen I will read the failing case and "},
				{Kind: agent.EventToolStart, Tool: &agent.ToolEvent{ID: "b1", Name: "bash", Args: cmd}},
				{Kind: agent.EventToolOutput, Tool: &agent.ToolEvent{ID: "b1"}, Text: "=== RUN   TestParse\n    parse_test.go:41: parsing \"a = [1, 2\" returned no error, want: expected a comma or a closing bracket before the end of the input\n"},
			})
			stage("a command runs")

			h.typeText("also check the docs")
			h.keys("enter")
			stage("a message queued")

			h.send(tea.WindowSizeMsg{Width: tc.resized, Height: 30})
			stage(fmt.Sprintf("resized to %d columns", tc.resized))
			h.send(tea.WindowSizeMsg{Width: tc.width, Height: 30})

			var output strings.Builder
			for i := 1; i <= 14; i++ {
				fmt.Fprintf(&output, "    parse_test.go:%d: case %d passed\n", 40+i, i)
			}
			output.WriteString("--- FAIL: TestParse (0.01s)\n    parse_test.go:41: parsing \"a = [1, 2\" returned no error, want: expected a comma or a closing bracket before the end of the input\nFAIL\n")
			h.send(eventsMsg{{Kind: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: "b1", Name: "bash", Args: cmd, Outcome: &agent.Outcome{
				Result: tools.Result{Text: output.String(), Meta: tools.Meta{ExitCode: intp(1)}}, Duration: 2300 * time.Millisecond}}}})
			h.send(tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl})
			stage("the command ended")

			h.send(keyMsg("ctrl+c"))
			stage("Ctrl+C pressed once")
			h.send(h.turnEnd())
			stage("the turn ended")

			out.WriteString("═══ the transcript ═══\n")
			printed := stableWorkspace(ansi.Strip(h.printedText()))
			for l := range strings.SplitSeq(printed, "\n") {
				if w := ansi.StringWidth(l); w > tc.width {
					t.Errorf("a printed row of %d columns: %q", w, l)
				}
				out.WriteString(strings.TrimRight(l, " ") + "\n")
			}
			golden(t, fmt.Sprintf("session_%d", tc.width), out.String())

			if h.m.quitting || h.m.busy || !strings.Contains(printed, "⏹ interrupted after 0s") {
				t.Errorf("one Ctrl+C did not interrupt the turn, or exited")
			}
			// The queued message was not sent as a turn of its own: it is
			// back in the input.
			if got := h.m.input.Value(); got != "also check the docs" {
				t.Errorf("the input holds %q after the interrupt", got)
			}
		})
	}
}

// stableWorkspace replaces the banner's workspace row (a temporary
// directory, wrapped differently at each width) with "<ws>".
func stableWorkspace(s string) string {
	rows := strings.Split(s, "\n")
	var out []string
	for i := 0; i < len(rows); i++ {
		if !strings.HasPrefix(rows[i], "  workspace  ") {
			out = append(out, rows[i])
			continue
		}
		out = append(out, "  workspace  <ws>")
		for i+1 < len(rows) && strings.HasPrefix(rows[i+1], bannerIndent) {
			i++
		}
	}
	return strings.Join(out, "\n")
}

// flaky fails its first request as a server error and answers the next;
// it keeps the messages each request carried.
type flaky struct {
	mu   sync.Mutex
	sent [][]provider.Message
}

func (*flaky) Provider() provider.Name { return provider.Anthropic }

func (f *flaky) Stream(_ context.Context, req provider.Request, emit func(provider.Event) error) (provider.Response, error) {
	f.mu.Lock()
	f.sent = append(f.sent, req.Messages)
	n := len(f.sent)
	f.mu.Unlock()
	if n == 1 {
		return provider.Response{}, &provider.Error{Kind: provider.ErrServer, Provider: provider.Anthropic, Status: 500, Attempts: 4}
	}
	msg := provider.Message{Role: provider.Assistant, Content: []provider.Block{provider.Text("answered")}}
	return provider.Response{Message: msg, StopReason: provider.StopEndTurn}, nil
}

// TestFailedTurnRetriesOnEnter: after a request fails, the message is in
// the history unanswered, the advice says Enter sends it again, and Enter
// on an empty input does, without a second copy of the message; an input
// with text is a new message as before.
func TestFailedTurnRetriesOnEnter(t *testing.T) {
	h := newHarness(t, 300, colorprofile.NoTTY, allHold()) // the advice on one row
	f := &flaky{}
	h.start(h.conn(policy.ModeAsk, f))
	h.typeText("fix the parser")
	h.keys("enter")
	h.send(h.turnEnd())
	out := ansi.Strip(h.printedText())
	if !strings.Contains(out, "the turn failed: anthropic server error (500); gave up after 4 attempts") || !strings.Contains(out, "your message is kept: press Enter to send it again") {
		t.Fatalf("the failure or its advice is not shown:\n%s", out)
	}
	if !h.m.retry || h.m.busy {
		t.Fatal("a failed turn left no retry armed, or stayed busy")
	}
	h.keys("enter")
	if !h.m.busy {
		t.Fatal("Enter on an empty input after a failed turn did not try again")
	}
	h.send(h.turnEnd())
	if len(f.sent) != 2 {
		t.Fatalf("%d requests, want 2", len(f.sent))
	}
	again := f.sent[1]
	if len(again) != 1 || again[0].Role != provider.User || again[0].PlainText() != "fix the parser" {
		t.Errorf("the retry sent %+v, want the one unanswered message", again)
	}
	if out := ansi.Strip(h.printedText()); !strings.Contains(out, "↻ trying again") || strings.Count(out, "› fix the parser") != 1 {
		t.Errorf("the retry is not shown, or the message is shown twice:\n%s", out)
	}
	// Answered now: Enter on an empty input does nothing.
	if h.m.retry {
		t.Error("the retry stayed armed after the turn was answered")
	}
	h.keys("enter")
	if h.m.busy || len(f.sent) != 2 {
		t.Error("Enter on an empty input started a turn with nothing to retry")
	}
	// The exit line counts the failed turn as failed ("2 turns" read as
	// two answers: new user, 2026-12-03).
	if got := h.m.summary().String(); !strings.HasPrefix(got, "brig: 2 turns (1 failed) · ") {
		t.Errorf("the exit line: %s", got)
	}
}

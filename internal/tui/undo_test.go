package tui

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"

	"brig/agent"
	"brig/internal/checkpoint"
	"brig/policy"
	"brig/tools"
)

// TestChangeSetLine: a finished call's result line says what it changed.
func TestChangeSetLine(t *testing.T) {
	h := newHarness(t, 100, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAuto, nil))
	h.printed = nil
	cs := &checkpoint.ChangeSet{Modified: 2, Deleted: 1}
	h.send(eventsMsg{
		{Kind: agent.EventToolStart, Tool: &agent.ToolEvent{ID: "b1", Name: "bash", Args: json.RawMessage(`{"command":"rm a && sed -i s/x/y/ b c"}`)}},
		{Kind: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: "b1", Name: "bash", Args: json.RawMessage(`{"command":"rm a && sed -i s/x/y/ b c"}`), Outcome: &agent.Outcome{
			Result: tools.Result{Text: "[exit code 0]", Meta: tools.Meta{ExitCode: intp(0)}}, Changes: cs}}},
	})
	if out := h.printedText(); !strings.Contains(out, "✎ 3 files changed, 1 deleted") {
		t.Fatalf("the result line lacks the change set:\n%s", out)
	}
}

// TestUndoCommand: /undo runs the run's undo with its arguments off the UI
// goroutine and prints what it says; it waits for the agent to be idle.
func TestUndoCommand(t *testing.T) {
	h := newHarness(t, 100, colorprofile.NoTTY, allHold())
	c := h.conn(policy.ModeAsk, nil)
	var got string
	c.Undo = func(_ context.Context, args string) (string, error) {
		got = args
		return "brig: undid call 2 (bash toolu_1)\n  restored  \x1b[31mevil.txt\n", errors.New("the undo is not in the audit log")
	}
	h.start(c)
	h.printed = nil
	cmd := h.m.command("/undo --force 2")
	if cmd == nil {
		t.Fatal("/undo returned no command")
	}
	h.send(cmd())
	if got != "--force 2" {
		t.Fatalf("undo got %q", got)
	}
	out := h.printedText()
	if !strings.Contains(out, "undid call 2") || !strings.Contains(out, "the undo is not in the audit log") || strings.Contains(out, "\x1b[31m") {
		t.Fatalf("/undo printed:\n%q", out)
	}
	h.m.busy = true
	h.printed = nil
	if h.m.command("/undo") != nil || !strings.Contains(h.printedText(), "the agent is working") {
		t.Fatalf("/undo while the agent works: %s", h.printedText())
	}
}

// TestChangesCommand (new user, 2026-12-02): /undo N took a number only
// brig changes, outside the UI, showed. /changes prints the run's list,
// its foreign text made inert; a failure is named as /changes's.
func TestChangesCommand(t *testing.T) {
	h := newHarness(t, 100, colorprofile.NoTTY, allHold())
	c := h.conn(policy.ModeAsk, nil)
	fail := false
	c.Changes = func(context.Context) (string, error) {
		if fail {
			return "", errors.New("the journal is unreadable")
		}
		return "  1  2026-12-02 21:00:00  bash         1 file changed  toolu_1\n       modified \x1b[31mmain.go\n/undo N puts back call N\n", nil
	}
	h.start(c)
	h.printed = nil
	cmd := h.m.command("/changes")
	if cmd == nil {
		t.Fatal("/changes returned no command")
	}
	h.send(cmd())
	if out := h.printedText(); !strings.Contains(out, "1 file changed") || !strings.Contains(out, "/undo N puts back call N") || strings.Contains(out, "\x1b[31m") {
		t.Fatalf("/changes printed:\n%q", out)
	}
	fail, h.printed = true, nil
	h.send(h.m.command("/changes")())
	if out := h.printedText(); !strings.Contains(out, "/changes: the journal is unreadable") {
		t.Fatalf("a failed /changes printed:\n%q", out)
	}
}

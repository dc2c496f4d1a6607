package tui

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"

	"brig/agent"
	"brig/jail"
	"brig/policy"
	"brig/tools"
)

// TestNetworkLine: a finished call's result line sums up its connections
// through brig's proxy: how many to which hosts, the bytes each way, the
// hosts refused.
func TestNetworkLine(t *testing.T) {
	h := newHarness(t, 120, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAuto, nil))
	h.printed = nil
	args := json.RawMessage(`{"command":"npm install"}`)
	h.send(eventsMsg{
		{Kind: agent.EventToolStart, Tool: &agent.ToolEvent{ID: "b1", Name: "bash", Args: args}},
		{Kind: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: "b1", Name: "bash", Args: args, Outcome: &agent.Outcome{
			Result: tools.Result{Text: "[exit code 0]", Meta: tools.Meta{ExitCode: intp(0)}},
			Net: []jail.Connection{
				{Host: "registry.npmjs.org", Port: 443, Up: 1024, Down: 5 << 20},
				{Host: "evil.example", Port: 443, Refused: "no rule allows evil.example"},
			}}}},
	})
	if out := h.printedText(); !strings.Contains(out, "⇅ net 1 connection to registry.npmjs.org, ↑1.0 KiB ↓5.0 MiB · refused evil.example") {
		t.Fatalf("the result line lacks the connections:\n%s", out)
	}
}

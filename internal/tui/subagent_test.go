package tui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"brig/agent"
	"brig/agent/provider"
	"brig/internal/session"
	"brig/policy"
	"brig/tools"
)

// TestSubagentsNestedUnderTheirCalls: while two task calls run, each
// subagent's calls show under its own call with its tokens; a subagent's
// text does not stream as the answer; its tokens and cost count in the
// session's; when the call ends, its summary is printed and the nested
// view goes.
func TestSubagentsNestedUnderTheirCalls(t *testing.T) {
	h := newHarness(t, 100, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	h.printed = nil
	taskArgs := func(desc string) json.RawMessage {
		b, _ := json.Marshal(map[string]string{"description": desc, "prompt": "p", "kind": "review"})
		return b
	}
	h.send(eventsMsg{
		{Kind: agent.EventToolStart, Tool: &agent.ToolEvent{ID: "t1", Name: "task", Args: taskArgs("find the parser")}},
		{Kind: agent.EventToolStart, Tool: &agent.ToolEvent{ID: "t2", Name: "task", Args: taskArgs("check the tests")}},
		{Kind: agent.EventToolStart, Parent: "t1", Tool: &agent.ToolEvent{ID: "s1", Name: "read_file", Args: json.RawMessage(`{"path":"parse.go"}`)}},
		{Kind: agent.EventToolEnd, Parent: "t1", Tool: &agent.ToolEvent{ID: "s1", Name: "read_file", Args: json.RawMessage(`{"path":"parse.go"}`), Outcome: &agent.Outcome{Result: tools.Result{Text: "1\tpackage p"}}}},
		{Kind: agent.EventUsage, Parent: "t1", Usage: &provider.Usage{Input: 1200, Output: 300}, Cost: 0.25},
		{Kind: agent.EventText, Parent: "t1", Text: "SUBAGENT-PRIVATE-TEXT"},
		{Kind: agent.EventToolStart, Parent: "t2", Tool: &agent.ToolEvent{ID: "s2", Name: "bash", Args: json.RawMessage(`{"command":"go test ./..."}`)}},
	})
	f := h.frame()
	live := f[strings.Index(f, "─── live area ───"):]
	for _, want := range []string{
		"task review: find the parser",
		"  │ ✓ read_file parse.go",
		"  └ 1 tool call · 1.5k tokens · $0.2500",
		"task review: check the tests",
		"bash $ go test ./...",
		"  └ 0 tool calls · 0 tokens",
	} {
		if !strings.Contains(live, want) {
			t.Errorf("the live area lacks %q:\n%s", want, live)
		}
	}
	if strings.Index(live, "read_file parse.go") > strings.Index(live, "check the tests") {
		t.Errorf("the first subagent's call is not under its own task:\n%s", live)
	}
	if strings.Contains(f, "SUBAGENT-PRIVATE-TEXT") {
		t.Errorf("a subagent's text streamed as the answer:\n%s", f)
	}
	if h.m.sessCost != 0.25 || h.m.usage.Input != 1200 || h.m.lastInput != 0 {
		t.Errorf("cost %v, usage %+v, context %d", h.m.sessCost, h.m.usage, h.m.lastInput)
	}
	h.send(eventsMsg{{Kind: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: "t1", Name: "task", Args: taskArgs("find the parser"),
		Outcome: &agent.Outcome{Result: tools.Result{Text: "The parser is in parse.go:12.\n\n[subagent: 2 requests, 1 tool calls, 1500 tokens]"}, Duration: 3 * time.Second}}}})
	f = h.frame()
	if !strings.Contains(h.printedText(), "task review: find the parser") || !strings.Contains(f, "⎿ The parser is in parse.go:12.") {
		t.Errorf("the finished call:\n%s", f)
	}
	if live := f[strings.Index(f, "─── live area ───"):]; strings.Contains(live, "read_file parse.go") || !strings.Contains(live, "check the tests") {
		t.Errorf("after the first ended:\n%s", live)
	}
}

// TestReplayNestsSubagents: a resumed session shows each subagent's saved
// transcript under its task call.
func TestReplayNestsSubagents(t *testing.T) {
	h := newHarness(t, 100, colorprofile.NoTTY, allHold())
	st := &session.State{Display: []session.Entry{
		{Display: session.Display{Kind: session.DisplayUser, Text: "look around"}},
		{Display: session.Display{Kind: session.DisplayToolCall, Tool: "task", ToolUseID: "t1", Text: `{"prompt":"find it"}`}},
		{Display: session.Display{Kind: session.DisplayUser, Text: "find it", Parent: "t1"}},
		{Display: session.Display{Kind: session.DisplayToolCall, Tool: "glob", ToolUseID: "g1", Text: `{"pattern":"*.go"}`, Parent: "t1"}},
		{Display: session.Display{Kind: session.DisplayToolResult, ToolUseID: "g1", Text: "main.go", Parent: "t1"}},
		{Display: session.Display{Kind: session.DisplayAssistant, Text: "It is in main.go.", Parent: "t1"}},
		{Display: session.Display{Kind: session.DisplayToolResult, ToolUseID: "t1", Text: "It is in main.go."}},
	}}
	out := ansi.Strip(h.m.replay(st))
	lines := strings.Split(out, "\n")
	var got []string
	for _, l := range lines {
		got = append(got, strings.TrimRight(l, " "))
	}
	want := []string{"● task {\"prompt\":\"find it\"}", "  │ › find it", "  │ ● glob {\"pattern\":\"*.go\"}", "  │   ⎿ main.go", "  │ It is in main.go.", "  ⎿ It is in main.go."}
	joined := strings.Join(got, "\n")
	if !strings.Contains(joined, strings.Join(want, "\n")) {
		t.Fatalf("replay:\n%s\nwant the lines:\n%s", joined, strings.Join(want, "\n"))
	}
}

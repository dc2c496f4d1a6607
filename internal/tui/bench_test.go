package tui

import (
	"brig/internal/render/engine"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"brig/agent"
	"brig/internal/session"
	"brig/policy"
	"brig/tools"
)

// benchModel is a model with a session of about lines lines of history
// behind it: streamed answers, tool calls with diffs and command output,
// printed as they finished (the way a long session builds up).
func benchModel(b *testing.B, lines int) *Model {
	b.Helper()
	h := &harness{t: &testing.T{}}
	h.m = New(b.Context(), Config{Workspace: "/ws", Profile: colorprofile.TrueColor, Renderer: engine.New()})
	printed := 0
	h.m.out = func(s string) { printed += strings.Count(s, "\n") + 1 }
	h.m.Update(sizeMsg(100, 40))
	h.m.Update(sandboxMsg(allHold()))
	diff := "@@ -1,3 +1,3 @@\n package main\n-func a() {}\n+func b() {}\n ctx\n"
	for i := 0; printed < lines; i++ {
		id := fmt.Sprintf("t%d", i)
		h.m.events(eventsMsg{
			{Kind: agent.EventText, Text: fmt.Sprintf("Step %d: I will **edit** `main.go` and run the tests.\n\n- one\n- two\n\n", i)},
			{Kind: agent.EventToolStart, Tool: &agent.ToolEvent{ID: id, Name: "edit_file", Args: json.RawMessage(`{"path":"main.go"}`)}},
			{Kind: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: id, Name: "edit_file", Args: json.RawMessage(`{"path":"main.go"}`), Outcome: &agent.Outcome{Result: tools.Result{Meta: tools.Meta{Path: "main.go", Diff: diff, Added: 1, Removed: 1}}}}},
			{Kind: agent.EventToolStart, Tool: &agent.ToolEvent{ID: id + "b", Name: "bash", Args: json.RawMessage(`{"command":"go test ./..."}`)}},
			{Kind: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: id + "b", Name: "bash", Args: json.RawMessage(`{"command":"go test ./..."}`), Outcome: &agent.Outcome{Result: tools.Result{Text: seq(20), Meta: tools.Meta{ExitCode: intp(0)}}}}},
		})
	}
	// A turn in progress: a streaming answer and a running command.
	h.m.busy = true
	h.m.events(eventsMsg{
		{Kind: agent.EventText, Text: "Now the last part, still streaming: a paragraph of **Markdown** with `code`"},
		{Kind: agent.EventToolStart, Tool: &agent.ToolEvent{ID: "run", Name: "bash", Args: json.RawMessage(`{"command":"make"}`)}},
		{Kind: agent.EventToolOutput, Tool: &agent.ToolEvent{ID: "run"}, Text: seq(50)},
	})
	return h.m
}

// BenchmarkFrame is the cost of one frame (View) with 0 and 5,000 lines of
// history: history lives in the terminal's scrollback, so it costs nothing
// per frame.
func BenchmarkFrame(b *testing.B) {
	for _, lines := range []int{0, 5000} {
		b.Run(fmt.Sprintf("history=%d", lines), func(b *testing.B) {
			m := benchModel(b, lines)
			b.ReportAllocs()
			for b.Loop() {
				m.frame++
				_ = m.View()
			}
		})
	}
}

// BenchmarkStreamDelta is one text delta arriving and the frame after it:
// the live paragraph is re-rendered (glamour) on each change.
func BenchmarkStreamDelta(b *testing.B) {
	m := benchModel(b, 0)
	b.ReportAllocs()
	for b.Loop() {
		m.events(eventsMsg{{Kind: agent.EventText, Text: "more words "}})
		_ = m.View()
		if m.live.Len() > 2000 {
			m.live.Reset()
		}
	}
}

// BenchmarkCommandOutput is a running command's output arriving, 11.5 KiB
// at a time (what a pipe read gives for `seq 1000000`), each followed by
// a frame: the worst case, a frame per output event.
func BenchmarkCommandOutput(b *testing.B) {
	m := benchModel(b, 0)
	chunk := seq(1600)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		m.events(eventsMsg{{Kind: agent.EventToolOutput, Tool: &agent.ToolEvent{ID: "run"}, Text: chunk}})
		_ = m.View()
	}
}

// BenchmarkReplay5000 renders a resumed session's display history of
// about 5,000 lines (done once, on /resume).
func BenchmarkReplay5000(b *testing.B) {
	m := benchModel(b, 0)
	st := &session.State{Mode: policy.ModeAsk}
	for i := 0; i < 1000; i++ {
		st.Display = append(st.Display,
			session.Entry{Display: session.Display{Kind: session.DisplayUser, Text: "do the next step"}},
			session.Entry{Display: session.Display{Kind: session.DisplayAssistant, Text: "I will **edit** `main.go`."}},
			session.Entry{Display: session.Display{Kind: session.DisplayToolCall, Tool: "edit_file", Text: `{"path":"main.go"}`}},
			session.Entry{Display: session.Display{Kind: session.DisplayToolResult, Text: "edited main.go"}},
			session.Entry{Display: session.Display{Kind: session.DisplayNotice, Text: "retrying"}},
		)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = m.replay(st)
	}
}

// BenchmarkBridge is the agent-to-UI channel: one event emitted and taken.
func BenchmarkBridge(b *testing.B) {
	br := newBridge()
	done := make(chan struct{})
	go func() {
		defer close(done)
		n := 0
		for n < b.N {
			switch msg := br.wait()().(type) {
			case eventsMsg:
				n += len(msg)
			case batchThen:
				n += len(msg.evs) + 1
			}
		}
	}()
	ev := agent.Event{Kind: agent.EventText, Text: "x"}
	for b.Loop() {
		br.emit(ev)
	}
	<-done
}

func sizeMsg(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

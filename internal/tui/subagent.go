package tui

import (
	"fmt"
	"strings"
	"time"

	"brig/agent"
	"brig/agent/provider"
	"brig/internal/session"
)

// subView is a subagent's progress, shown nested under the task call that
// started it while it runs.
type subView struct {
	running []*toolView // its calls in progress, in order
	done    []string    // its last finished calls, one line each
	calls   int
	usage   provider.Usage
	cost    float64
	note    string // its last notice
}

// subShownDone is how many finished calls of a subagent stay on screen.
const subShownDone = 3

// subEvent applies an event of a subagent (ev.Parent is its task call):
// its calls and cost go under that call, and its tokens and cost into the
// session's totals; its text is its summary, which arrives as the task's
// result.
func (m *Model) subEvent(ev agent.Event) {
	if ev.Kind == agent.EventUsage {
		m.usage = m.usage.Add(*ev.Usage)
		m.spent += ev.Cost
		m.sessCost += ev.Cost
	}
	tv := m.tools[ev.Parent]
	if tv == nil {
		return
	}
	if tv.sub == nil {
		tv.sub = &subView{}
	}
	s := tv.sub
	switch ev.Kind {
	case agent.EventUsage:
		s.usage = s.usage.Add(*ev.Usage)
		s.cost += ev.Cost
	case agent.EventNotice:
		s.note = ev.Text
	case agent.EventToolStart:
		s.note = "" // it has a slot: the wait is over
		s.running = append(s.running, &toolView{ev: *ev.Tool, start: time.Now()})
	case agent.EventToolEnd:
		for i, r := range s.running {
			if r.ev.ID == ev.Tool.ID {
				s.running = append(s.running[:i], s.running[i+1:]...)
				break
			}
		}
		s.calls++
		mark := "✓"
		if o := ev.Tool.Outcome; o != nil && o.Result.IsError {
			mark = "✗"
		}
		s.done = append(s.done, mark+" "+ev.Tool.Name+" "+toolTarget(ev.Tool.Name, ev.Tool.Args))
		if len(s.done) > subShownDone {
			s.done = s.done[len(s.done)-subShownDone:]
		}
	}
}

// subagentView is the lines under a running task call.
func (m *Model) subagentView(s *subView) string {
	var lines []string
	for _, d := range s.done {
		lines = append(lines, stDim.Render(fit("  │ "+d, m.width)))
	}
	spin := spinnerFrames[m.frame%len(spinnerFrames)]
	for _, r := range s.running {
		lines = append(lines, fit(stDim.Render("  │ ")+stAccent.Render(spin+" "+r.ev.Name)+" "+toolTarget(r.ev.Name, r.ev.Args), m.width))
	}
	if s.note != "" {
		lines = append(lines, stWarn.Render(fit("  │ "+inert(s.note), m.width)))
	}
	facts := fmt.Sprintf("  └ %d tool call%s · %s tokens", s.calls, plural(s.calls), tokens(s.usage.Total()))
	if s.cost > 0 {
		facts += fmt.Sprintf(" · $%.4f", s.cost)
	}
	lines = append(lines, stDim.Render(fit(facts, m.width)))
	return strings.Join(lines, "\n")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// replaySubagent renders a subagent's saved transcript under its task
// call: its prompt, its calls with their results, its answer, shortened.
func (m *Model) replaySubagent(entries []session.Entry) string {
	var b strings.Builder
	for _, e := range entries {
		var line string
		switch e.Kind {
		case session.DisplayUser:
			line = "› " + firstLine(inert(e.Text))
		case session.DisplayAssistant:
			line = firstLine(inert(e.Text))
		case session.DisplayToolCall:
			line = "● " + e.Tool + " " + inert(e.Text)
		case session.DisplayToolResult:
			line = "  ⎿ " + firstLine(inert(e.Text))
		case session.DisplayNotice:
			line = "brig: " + inert(e.Text)
		default:
			continue
		}
		b.WriteString(stDim.Render(fit("  │ "+line, m.width)) + "\n")
	}
	return b.String()
}

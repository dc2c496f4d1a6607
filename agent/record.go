package agent

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"unicode/utf8"

	"brig/agent/provider"
	"brig/internal/session"
	"brig/tools"
)

// Recorder saves a conversation to its session file as it happens: each
// message with what the user saw of it (before the next request leaves, as
// Config.Persist), and each response's usage and brig's notices (from the
// event stream). A front end chains Recorder.Event into its own Emit.
//
// Usage and notices wait for the next message and go to disk in the same
// write (one fsync per message, not three); Flush writes what is still
// waiting when a turn ends.
type Recorder struct {
	Session *session.Session
	Model   string
	Logger  *slog.Logger

	mu      sync.Mutex
	pending []session.Record
	saved   map[provider.Role]int // messages saved, by role
}

// Saved is how many messages of role were saved.
func (r *Recorder) Saved(role provider.Role) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.saved[role]
}

// Persist saves one message and its display records, with the usage and
// notices that came before it. It is Config.Persist: it returns once they
// are written, and synced waits for them to be on disk.
func (r *Recorder) Persist(ctx context.Context, m provider.Message) (synced func() error, err error) {
	r.mu.Lock()
	recs := append(r.pending, session.MessageRecord(m))
	r.pending = nil
	r.mu.Unlock()
	for _, d := range displayOf(m) {
		recs = append(recs, session.DisplayRecord(d))
	}
	synced, err = r.Session.AppendLater(ctx, recs...)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.saved == nil {
		r.saved = map[provider.Role]int{}
	}
	r.saved[m.Role]++
	r.mu.Unlock()
	return synced, nil
}

// Event keeps usage and notices for the next write, and a subagent's
// messages as what the user saw of them (marked with the task call that
// started it; they never join the provider-facing history).
func (r *Recorder) Event(ev Event) {
	var recs []session.Record
	switch ev.Kind {
	case EventUsage:
		rec := session.UsageRecord(r.Model, *ev.Usage, ev.Cost)
		rec.Usage.Parent = ev.Parent
		recs = append(recs, rec)
	case EventNotice:
		recs = append(recs, session.DisplayRecord(session.Display{Kind: session.DisplayNotice, Text: ev.Text, Parent: ev.Parent}))
	case EventMessage:
		if ev.Parent == "" || ev.Message == nil {
			return // the main conversation's messages are saved by Persist
		}
		for _, d := range displayOf(*ev.Message) {
			d.Parent = ev.Parent
			recs = append(recs, session.DisplayRecord(d))
		}
	case EventToolEnd:
		o := ev.Tool.Outcome
		if o == nil || (o.Changes == nil && o.Audit == nil && len(o.Net) == 0) {
			return
		}
		c := session.CallRecord{ID: ev.Tool.ID, Tool: ev.Tool.Name, Net: o.Net}
		if o.Changes != nil {
			c.Changes = o.Changes.Summary()
		}
		if o.Audit != nil {
			c.Audit = &session.AuditRef{Seq: o.Audit.Seq, Hash: o.Audit.Hash}
		}
		recs = append(recs, session.CallRecordOf(c))
	}
	if len(recs) == 0 {
		return
	}
	r.mu.Lock()
	r.pending = append(r.pending, recs...)
	r.mu.Unlock()
}

// Stage keeps records for the next write, as Event keeps usage and
// notices: a session's start (its system prompt, or what changed on
// resume) goes to disk with the first message instead of in a sync of its
// own before the first request.
func (r *Recorder) Stage(recs ...session.Record) {
	r.mu.Lock()
	r.pending = append(r.pending, recs...)
	r.mu.Unlock()
}

// Flush writes the usage and notices still waiting (a turn that ended
// without a message after them, e.g. a failed request). A failure is
// logged, not fatal: the messages a resume needs are saved by Persist.
func (r *Recorder) Flush(ctx context.Context) {
	r.mu.Lock()
	recs := r.pending
	r.pending = nil
	r.mu.Unlock()
	if len(recs) == 0 {
		return
	}
	if err := r.Session.Append(ctx, recs...); err != nil {
		l := r.Logger
		if l == nil {
			l = slog.Default()
		}
		l.Warn("could not save to the session", "session", r.Session.ID(), "err", err)
	}
}

// brigNote starts every text brig itself adds to a user message for the
// model (UndoNote, the note at a turn's bound).
const brigNote = "[brig] "

// displayOf is what the user saw of a message: their prompt, the model's
// text, one line per tool call and per result.
func displayOf(m provider.Message) []session.Display {
	var out []session.Display
	for _, b := range m.Content {
		switch {
		case b.Type == provider.BlockText && b.Text != "":
			kind, text := session.DisplayAssistant, b.Text
			if m.Role == provider.User {
				kind = session.DisplayUser
				if rest, ok := strings.CutPrefix(text, brigNote); ok {
					// brig's own words to the model (an undo, a bound
					// reached), not the user's: a resume showed them as
					// if the user had typed them.
					kind, text = session.DisplayNotice, "told the model: "+rest
				}
			}
			out = append(out, session.Display{Kind: kind, Text: text})
		case b.Type == provider.BlockThinking && b.Thinking != nil && b.Thinking.Text != "":
			out = append(out, session.Display{Kind: session.DisplayThinking, Text: b.Thinking.Text})
		case b.Type == provider.BlockToolUse && b.ToolUse != nil:
			out = append(out, session.Display{Kind: session.DisplayToolCall, Tool: b.ToolUse.Name, ToolUseID: b.ToolUse.ID, Text: OneLine(tools.Describe(b.ToolUse.Name, b.ToolUse.Input), 200)})
		case b.Type == provider.BlockToolResult && b.ToolResult != nil:
			var text strings.Builder
			for _, c := range b.ToolResult.Content {
				if c.Type == provider.BlockText {
					text.WriteString(c.Text)
				} else if c.Type == provider.BlockImage {
					text.WriteString("[image]")
				}
			}
			// A command with no output: its line is how it ended (a
			// timeout's note), not "(no output)".
			shown := strings.TrimPrefix(streamLabelInline(text.String()), tools.NoOutput+"\n")
			out = append(out, session.Display{Kind: session.DisplayToolResult, ToolUseID: b.ToolResult.ToolUseID, IsError: b.ToolResult.IsError, Text: OneLine(shown, 400)})
		}
	}
	return out
}

// streamLabelInline puts the label a result of both output streams starts
// with ("[stdout]" on a line of its own) before that stream's first line,
// so that a one-line preview shows output, not only the label.
func streamLabelInline(s string) string {
	for _, label := range []string{"[stdout]", "[stderr]"} {
		if rest, ok := strings.CutPrefix(s, label+"\n"); ok {
			return label + " " + rest
		}
	}
	return s
}

// OneLine shortens s to its first line, at most n bytes (cut between
// characters), saying how many lines follow: how a tool's call or result
// is shown in one line (a saved session's display, a front end's list).
func OneLine(s string, n int) string {
	line, rest, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if len(line) > n {
		for n > 0 && !utf8.RuneStart(line[n]) {
			n--
		}
		return line[:n] + "…"
	}
	rest = trimMeta(rest)
	if rest != "" {
		if n := strings.Count(rest, "\n") + 1; n == 1 {
			return line + " … (+1 line)"
		} else {
			return line + fmt.Sprintf(" … (+%d lines)", n)
		}
	}
	return line
}

// trimMeta is s without the lines brig adds at the end of a result for
// the model alone (a file's "[hash …]", a subagent's "[subagent: …]"),
// which are not more of what the preview leaves out: a five-line file
// read showed "(+5 lines)" (new user, 2026-12-03).
func trimMeta(s string) string {
	for s != "" {
		i := strings.LastIndexByte(s, '\n')
		last := s[i+1:]
		if !strings.HasSuffix(last, "]") || !strings.HasPrefix(last, "[hash ") && !strings.HasPrefix(last, "[subagent: ") {
			return s
		}
		if i < 0 {
			return ""
		}
		s = strings.TrimRight(s[:i], "\n")
	}
	return s
}

// Compacted saves a compaction. It is Config.Compacted.
func (r *Recorder) Compacted(ctx context.Context, c Compaction) error {
	r.mu.Lock()
	recs := r.pending
	r.pending = nil
	r.mu.Unlock()
	return r.Session.Append(ctx, append(recs, session.CompactionRecord(c.Replaced, c.Summary, c.Reason),
		session.DisplayRecord(session.Display{Kind: session.DisplayNotice, Text: fmt.Sprintf("compacted (%s): %s replaced", c.Reason, counted(c.Replaced, "earlier message"))}))...)
}

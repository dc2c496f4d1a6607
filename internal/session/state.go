package session

import (
	"cmp"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"brig/agent/provider"
	"brig/policy"
)

// Summary is what a listing shows of one session. It is built from the
// records alone, one record at a time, so the index can extend it from where
// it stopped reading.
type Summary struct {
	ID        string        `json:"id"`
	Workspace string        `json:"workspace"`
	Title     string        `json:"title"` // the first user message, on one line, trimmed
	Created   time.Time     `json:"created"`
	Updated   time.Time     `json:"updated"` // time of the last record
	Provider  provider.Name `json:"provider"`
	Model     string        `json:"model"`
	// Mode is the mode the session was last in (as a resume sees it).
	Mode     policy.Mode    `json:"mode,omitempty"`
	Messages int            `json:"messages"` // provider-facing messages ever recorded (compaction does not lower it)
	Context  int            `json:"context"`  // provider-facing messages the model sees now (after compactions)
	Usage    provider.Usage `json:"usage"`
	Cost     float64        `json:"cost"`
	// Audit is the last audit log record the session recorded: the chain
	// head the index keeps for brig log verify.
	Audit *AuditRef `json:"audit,omitempty"`
}

// titleMax caps a title, in runes.
const titleMax = 80

// apply replays one record (line n of the file) into the summary, checking
// it against the ones before: the rules every reader of a file shares.
func (s *Summary) apply(r Record, n int) error {
	if r.Kind == KindBatch {
		if n == 1 {
			return fmt.Errorf("line 1 is a %q record, not the session header", r.Kind)
		}
		if err := r.check(); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		for _, inner := range r.Batch {
			if err := s.apply(inner, n); err != nil {
				return err
			}
		}
		return nil
	}
	if n == 1 {
		if r.Kind != KindHeader || r.Header == nil {
			return fmt.Errorf("line 1 is a %q record, not the session header", r.Kind)
		}
	} else if r.Kind == KindHeader {
		return fmt.Errorf("line %d: a second header", n)
	}
	if err := r.check(); err != nil {
		return fmt.Errorf("line %d: %w", n, err)
	}
	if c := r.Compaction; r.Kind == KindCompaction && (c.Replaced < 0 || c.Replaced > s.Context) {
		return fmt.Errorf("line %d: a compaction replaces %d messages of %d", n, c.Replaced, s.Context)
	}
	if !r.Time.IsZero() && r.Time.After(s.Updated) {
		s.Updated = r.Time
	}
	switch r.Kind {
	case KindHeader:
		h := r.Header
		s.ID, s.Workspace, s.Created, s.Provider, s.Model = h.ID, h.Workspace, h.Created, h.Provider, h.Model
		s.Mode = cmp.Or(h.Mode, policy.ModeAsk)
		if s.Updated.IsZero() {
			s.Updated = h.Created
		}
	case KindMessage:
		s.Messages++
		s.Context++
		if s.Title == "" && r.Message.Role == provider.User {
			// The first text block is what the user typed; piped input
			// and attachments follow it as blocks of their own.
			for _, b := range r.Message.Content {
				if b.Type == provider.BlockText && strings.TrimSpace(b.Text) != "" {
					s.Title = Title(b.Text)
					break
				}
			}
		}
	case KindDisplay:
		if s.Title == "" && r.Display.Kind == DisplayUser {
			s.Title = Title(r.Display.Text)
		}
	case KindUsage:
		s.Usage = s.Usage.Add(r.Usage.Usage)
		s.Cost += r.Usage.Cost
	case KindModel:
		if r.Model.Provider != "" {
			s.Provider = r.Model.Provider
		}
		s.Model = r.Model.Model
	case KindMode:
		s.Mode = r.Mode
	case KindCompaction:
		s.Context += len(r.Compaction.Summary) - r.Compaction.Replaced
	case KindCall:
		if a := r.Call.Audit; a != nil {
			s.Audit = a
		}
	case KindUndo:
		if a := r.Undo.Audit; a != nil {
			s.Audit = a
		}
	}
	return nil
}

// Title makes a one-line title of a prompt: whitespace collapsed, capped at
// 80 characters with an ellipsis.
func Title(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= titleMax {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:titleMax-1])) + "…"
}

// Entry is one display record with its time.
type Entry struct {
	Time time.Time `json:"time"`
	Display
}

// State is a session rebuilt from its file: what the agent needs to resume
// and what `brig sessions show` prints.
type State struct {
	Summary
	Header Header `json:"header"`
	// Messages is the provider-facing conversation after every compaction:
	// what the next request sends.
	Messages []provider.Message `json:"messages"`
	// Display is the history as the user saw it, never compacted.
	Display []Entry `json:"display"`
	// Mode is the safety mode in force (policy.ModeAsk when the file never
	// recorded one).
	Mode   policy.Mode `json:"mode"`
	System string      `json:"system"` // the system prompt in force
	// Last is the last model call's usage (its input is the context size the
	// model last saw).
	Last        provider.Usage `json:"last"`
	Turns       int            `json:"turns"` // model calls recorded
	Compactions int            `json:"compactions"`
	// Size is the length in bytes of the complete records read.
	Size int64 `json:"size"`
	// Warnings say what was skipped while loading (a torn last record, a
	// record kind from a newer brig).
	Warnings []string `json:"warnings,omitempty"`
	// Notes are undo notes the model has not been told yet (recorded
	// after the last user message): a resumed agent sends them first.
	Notes []string `json:"notes,omitempty"`
}

// newState starts a replay.
func newState() *State { return &State{Mode: policy.ModeAsk} }

// apply replays one record. n is its line number, for errors.
func (st *State) apply(r Record, n int) error {
	if r.Kind == KindBatch {
		if n == 1 {
			return fmt.Errorf("line 1 is a %q record, not the session header", r.Kind)
		}
		if err := r.check(); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		for _, inner := range r.Batch {
			if err := st.apply(inner, n); err != nil {
				return err
			}
		}
		return nil
	}
	if err := st.Summary.apply(r, n); err != nil {
		return err
	}
	switch r.Kind {
	case KindHeader:
		h := *r.Header
		if h.Version == 0 {
			h.Version = 1
		}
		if h.Version > Version {
			st.Warnings = append(st.Warnings, fmt.Sprintf("written by a newer brig (format %d, this one reads %d): fields it does not know are ignored", h.Version, Version))
		}
		st.Header = h
		if h.Mode != "" {
			st.Mode = h.Mode
		}
		st.System = h.System
	case KindMessage:
		st.Messages = append(st.Messages, *r.Message)
		if r.Message.Role == provider.User && r.Message.PlainText() != "" {
			st.Notes = nil // a user turn went out, with any notes queued before it
		}
	case KindUndo:
		st.Notes = append(st.Notes, r.Undo.Note)
	case KindCall:
	case KindDisplay:
		st.Display = append(st.Display, Entry{Time: r.Time, Display: *r.Display})
	case KindUsage:
		if r.Usage.Parent == "" {
			st.Last = r.Usage.Usage
		}
		st.Turns++
	case KindMode:
		st.Mode = r.Mode
	case KindSystem:
		st.System = *r.System
	case KindCompaction:
		c := r.Compaction
		rest := st.Messages[c.Replaced:]
		msgs := make([]provider.Message, 0, len(c.Summary)+len(rest))
		st.Messages = append(append(msgs, c.Summary...), rest...)
		st.Compactions++
	case KindModel:
	default:
		st.Warnings = append(st.Warnings, fmt.Sprintf("line %d: a %q record (from a newer brig?) was skipped", n, r.Kind))
	}
	return nil
}

// check verifies that the field Kind names is there. Unknown kinds pass:
// the replay skips them with a warning.
func (r Record) check() error {
	missing := false
	switch r.Kind {
	case KindHeader:
		missing = r.Header == nil
	case KindMessage:
		missing = r.Message == nil
	case KindDisplay:
		missing = r.Display == nil
	case KindUsage:
		missing = r.Usage == nil
	case KindMode:
		if _, err := policy.ParseMode(string(r.Mode)); err != nil {
			return fmt.Errorf("mode record: %w", err)
		}
	case KindModel:
		missing = r.Model == nil || r.Model.Model == ""
	case KindSystem:
		missing = r.System == nil
	case KindCompaction:
		missing = r.Compaction == nil
	case KindCall:
		missing = r.Call == nil
	case KindUndo:
		missing = r.Undo == nil
	case KindBatch:
		if len(r.Batch) == 0 {
			return fmt.Errorf("an empty batch")
		}
		for _, inner := range r.Batch {
			if inner.Kind == KindBatch || inner.Kind == KindHeader {
				return fmt.Errorf("a batch holding a %q record", inner.Kind)
			}
			if err := inner.check(); err != nil {
				return err
			}
		}
	case "":
		return fmt.Errorf("a record without a kind")
	}
	if missing {
		return fmt.Errorf("a %q record without its %s field", r.Kind, r.Kind)
	}
	return nil
}

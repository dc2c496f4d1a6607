package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"brig/agent/provider"
	"brig/internal/auditlog"
	"brig/internal/checkpoint"
	"brig/internal/session"
)

// Note queues text for the model: it goes at the start of the next user
// turn (an undo's note, so the model knows its earlier calls' effects are
// gone).
func (a *Agent) Note(text string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.notes = append(a.notes, text)
}

// takeNotes empties the queued notes as text blocks.
func (a *Agent) takeNotes() []provider.Block {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []provider.Block
	for _, n := range a.notes {
		out = append(out, provider.Text(n))
	}
	a.notes = nil
	return out
}

// Undoer undoes calls of one session and records it: in the checkpoint
// store's journal (which restores), the audit log and the session (so a
// resumed agent tells the model).
type Undoer struct {
	Store     *checkpoint.Store
	Audit     *auditlog.Log    // nil: not audited
	Session   *session.Session // nil: not recorded in the session
	SessionID string
	Workspace string
	// By is how the undo was asked for: "/undo" or "brig undo".
	By string
}

// Undo runs the undo. When it changed files it returns the note for the
// model; a refused undo (checkpoint.ErrConflict) returns the report with
// the conflicts and changes nothing.
func (u *Undoer) Undo(ctx context.Context, o checkpoint.UndoOptions) (*checkpoint.UndoReport, string, error) {
	o.Session = u.SessionID
	rep, err := u.Store.Undo(ctx, o)
	if rep == nil || !rep.Applied {
		return rep, "", err
	}
	note := UndoNote(rep, u.Workspace)
	var ref *session.AuditRef
	if u.Audit != nil {
		ur := &auditlog.Undo{Forced: rep.Forced, Restored: rep.Restored, Removed: rep.Removed, By: u.By}
		for _, c := range rep.Calls {
			ur.Calls = append(ur.Calls, c.ID)
		}
		if rep.Forced {
			for _, c := range rep.Conflicts {
				ur.Overwritten = append(ur.Overwritten, c.Path)
			}
		}
		r, aerr := u.Audit.Append(context.WithoutCancel(ctx), auditlog.Record{Kind: auditlog.KindUndo, Session: u.SessionID, Workspace: u.Workspace, Undo: ur})
		if aerr != nil {
			err = joinErr(err, fmt.Errorf("the undo is not in the audit log: %w", aerr))
		} else {
			ref = &session.AuditRef{Seq: r.Seq, Hash: r.Hash}
		}
	}
	if u.Session != nil {
		rec := session.UndoRecord{Note: note, Audit: ref}
		for _, c := range rep.Calls {
			rec.Calls = append(rec.Calls, c.ID)
		}
		serr := u.Session.Append(context.WithoutCancel(ctx), session.UndoRecordOf(rec),
			session.DisplayRecord(session.Display{Kind: session.DisplayNotice, Text: UndoSummary(rep)}))
		if serr != nil {
			err = joinErr(err, fmt.Errorf("the undo is not in the session: %w", serr))
		}
	}
	return rep, note, err
}

func joinErr(a, b error) error {
	if a == nil {
		return b
	}
	return fmt.Errorf("%w; %w", a, b)
}

// UndoSummary is one line for the user: what was undone and what changed.
func UndoSummary(rep *checkpoint.UndoReport) string {
	var ids []string
	for _, c := range rep.Calls {
		ids = append(ids, fmt.Sprintf("%d (%s)", c.N, c.Tool))
	}
	what := fmt.Sprintf("%d restored, %d removed", rep.Restored, rep.Removed)
	if rep.Restored+rep.Removed == 0 {
		what = "the files were already as before"
	}
	return fmt.Sprintf("undid call %s: %s", strings.Join(ids, ", "), what)
}

// UndoNote is what the model is told about an undo at its next turn.
func UndoNote(rep *checkpoint.UndoReport, workspace string) string {
	var b strings.Builder
	b.WriteString("[brig] The user undid ")
	if len(rep.Calls) == 1 {
		b.WriteString("one of your earlier tool calls: ")
	} else {
		fmt.Fprintf(&b, "%d of your earlier tool calls: ", len(rep.Calls))
	}
	for i, c := range rep.Calls {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (%s)", c.ID, c.Tool)
	}
	b.WriteString(". The files they changed are back as they were before those calls")
	var restored, removed []string
	for _, ch := range rep.Changes {
		p := rel(ch.Path, workspace)
		if ch.Kind == checkpoint.Deleted {
			removed = append(removed, p)
		} else {
			restored = append(restored, p)
		}
	}
	if len(restored) > 0 {
		b.WriteString("; restored: " + listSome(restored, 10))
	}
	if len(removed) > 0 {
		b.WriteString("; removed: " + listSome(removed, 10))
	}
	if rep.More > 0 {
		fmt.Fprintf(&b, "; and %d more", rep.More)
	}
	b.WriteString(". Those calls stay in this conversation, but their effects on the files are gone: do not rely on them, and look at the files again before you continue.")
	for _, l := range rep.Left {
		if l.Path != "" {
			fmt.Fprintf(&b, " Not restored: %s (%s).", rel(l.Path, workspace), l.Why)
		}
	}
	return b.String()
}

func rel(p, ws string) string {
	if r, err := filepath.Rel(ws, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

func listSome(s []string, n int) string {
	if len(s) <= n {
		return strings.Join(s, ", ")
	}
	return strings.Join(s[:n], ", ") + fmt.Sprintf(" (+%d more)", len(s)-n)
}

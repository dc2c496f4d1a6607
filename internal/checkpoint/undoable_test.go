package checkpoint

import (
	"context"
	"testing"
)

// TestUndoableSessions: the sessions with something left to undo are
// found, the latest first: not one whose calls changed nothing, not one
// whose changes were undone, never the one excepted.
func TestUndoableSessions(t *testing.T) {
	r := newRig(t)
	r.seed()
	ctx := context.Background()
	call := func(session, id, script string) {
		t.Helper()
		p, err := r.store.Before(ctx, session, id, "bash", []string{r.ws})
		if err != nil {
			t.Fatal(err)
		}
		r.sh(script)
		if _, err := p.After(ctx); err != nil {
			t.Fatal(err)
		}
	}
	call("fix-1", "c1", `echo one >> README.md`)
	call("fix-2", "c1", `echo two >> README.md`)
	call("fix-2", "c2", `true`)
	call("undone", "c1", `echo three >> README.md`)
	if _, err := r.store.Undo(ctx, UndoOptions{Session: "undone"}); err != nil {
		t.Fatal(err)
	}
	call("chat", "c1", `true`) // a later session that changed nothing

	got, err := r.store.Undoable("chat")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Session != "fix-2" || got[1].Session != "fix-1" {
		t.Fatalf("undoable sessions %+v, want fix-2 then fix-1", got)
	}
	if got, err := r.store.Undoable("fix-2"); err != nil || len(got) != 1 || got[0].Session != "fix-1" {
		t.Fatalf("except fix-2: %+v, %v", got, err)
	}
}

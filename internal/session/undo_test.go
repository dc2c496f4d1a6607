package session

import (
	"context"
	"reflect"
	"testing"

	"brig/agent/provider"
)

// TestCallsUndosAndTheAuditHead: call and undo records give the session's
// audit head (kept in the index, for brig log verify) and the undo notes
// the model has not been told yet (cleared by the next user turn).
func TestCallsUndosAndTheAuditHead(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	sess := create(t, s, "/ws")
	appendOK(t, sess,
		MessageRecord(provider.Message{Role: provider.User, Content: []provider.Block{provider.Text("go")}}),
		CallRecordOf(CallRecord{ID: "c1", Tool: "bash", Changes: "1 file changed", Audit: &AuditRef{Seq: 7, Hash: "aa"}}),
		UndoRecordOf(UndoRecord{Calls: []string{"c1"}, Note: "[brig] undid c1", Audit: &AuditRef{Seq: 8, Hash: "bb"}}),
	)
	st, err := s.Load(ctx, sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(st.Audit, &AuditRef{Seq: 8, Hash: "bb"}) || !reflect.DeepEqual(st.Notes, []string{"[brig] undid c1"}) || len(st.Warnings) != 0 {
		t.Fatalf("state: audit %+v notes %v warnings %v", st.Audit, st.Notes, st.Warnings)
	}
	list, _, err := s.List(ctx, Filter{})
	if err != nil || len(list) != 1 || !reflect.DeepEqual(list[0].Audit, &AuditRef{Seq: 8, Hash: "bb"}) {
		t.Fatalf("the index's head: %+v %v", list, err)
	}
	// Read again from the index (the file did not change).
	if list, _, _ = s.List(ctx, Filter{}); list[0].Audit == nil || list[0].Audit.Seq != 8 {
		t.Fatalf("the cached head: %+v", list[0].Audit)
	}
	// The next user turn carries the note: it is told.
	appendOK(t, sess, MessageRecord(provider.Message{Role: provider.User, Content: []provider.Block{provider.Text("[brig] undid c1"), provider.Text("next")}}))
	if st, _ = s.Load(ctx, sess.ID()); len(st.Notes) != 0 {
		t.Fatalf("notes after the next turn: %v", st.Notes)
	}
	if err := sess.Append(ctx, Record{Kind: KindUndo}); err == nil {
		t.Fatal("an undo record without its field was accepted")
	}
}

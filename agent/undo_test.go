package agent

import (
	"brig/tools"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"brig/agent/provider"
	"brig/internal/auditlog"
	"brig/internal/checkpoint"
	"brig/jail"
	"brig/policy"
	"brig/test/fakeprovider"
)

// withUndo gives an executor a checkpoint store and an audit log.
func withUndo(t *testing.T, e *execEnv) (*checkpoint.Store, *auditlog.Log) {
	t.Helper()
	state := filepath.Join(filepath.Dir(e.ws), "state")
	store, err := checkpoint.Open(filepath.Join(state, "checkpoints"), checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	log := auditlog.Open(filepath.Join(state, "audit"))
	e.ex.Checkpoints, e.ex.Audit, e.ex.Session = store, log, "s1"
	return store, log
}

func records(t *testing.T, l *auditlog.Log) []auditlog.Record {
	t.Helper()
	var out []auditlog.Record
	if err := l.Records(func(r auditlog.Record) error { out = append(out, r); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestExecutorCheckpointsAndAudits: a shell command in the real jail gets
// its change set and an audit record (grant, decision, changes); so does a
// denied call; the undo puts the files back and tells the model.
func TestExecutorCheckpointsAndAudits(t *testing.T) {
	e := newExecEnv(t, policy.ModeAuto)
	store, log := withUndo(t, e)
	ctx := context.Background()
	e.ap.answers = []Approval{{Answer: AnswerOnce}} // the deletion asks in every mode
	o := e.ex.Execute(ctx, "c1", "bash", args(t, map[string]any{"command": "rm a.txt && mkdir d && echo x > d/b.txt && echo tmp > /tmp/scratch"}), nil)
	if o.Err != nil || o.Result.IsError {
		t.Fatalf("bash: %+v", o)
	}
	if o.Changes == nil || o.Changes.Summary() != "2 files changed, 1 created, 1 deleted, 1 directory created" {
		t.Fatalf("change set: %+v", o.Changes)
	}
	if o.Audit == nil || o.Audit.Seq != 1 {
		t.Fatalf("audit ref: %+v", o.Audit)
	}
	// A call the policy denies is recorded too.
	d := e.ex.Execute(ctx, "c2", "read_file", args(t, map[string]any{"path": filepath.Join(e.home, ".ssh/id_rsa")}), nil)
	if d.Verdict == nil || d.Verdict.Tier != policy.Deny || d.Audit == nil || d.Changes != nil {
		t.Fatalf("denied read: %+v", d)
	}
	// A call refused before the policy (an unknown tool) is recorded too.
	e.ex.Execute(ctx, "c3", "no_such_tool", args(t, map[string]any{}), nil)
	recs := records(t, log)
	if len(recs) != 3 {
		t.Fatalf("%d records", len(recs))
	}
	c := recs[0].Call
	if c.Tool != "bash" || c.Decision.Tier != "ask" || c.Decision.Answer != "once" || c.Decision.Mode != "auto" || *c.ExitCode != 0 || c.Changes.Deleted != 1 ||
		!slices.Contains(c.Grant.Write, e.ws) || recs[0].Session != "s1" || recs[0].Workspace != e.ws {
		t.Fatalf("the bash record: %+v %+v", recs[0], c)
	}
	if recs[1].Call.Decision.Tier != "deny" || !strings.Contains(recs[1].Call.Decision.Reason, "credentials") {
		t.Fatalf("the denied record: %+v", recs[1].Call.Decision)
	}
	if recs[2].Call.Decision.Tier != "" || !strings.Contains(recs[2].Call.Decision.Refused, "no_such_tool") {
		t.Fatalf("the refused record: %+v", recs[2].Call.Decision)
	}
	rep, err := log.Verify(nil)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep, err)
	}

	u := &Undoer{Store: store, Audit: log, SessionID: "s1", Workspace: e.ws, By: "/undo"}
	ur, note, err := u.Undo(ctx, checkpoint.UndoOptions{})
	if err != nil || !ur.Applied {
		t.Fatalf("undo: %+v %v", ur, err)
	}
	if b, _ := os.ReadFile(e.ws + "/a.txt"); string(b) != "hello\n" {
		t.Fatalf("a.txt: %q", b)
	}
	if _, err := os.Stat(e.ws + "/d"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("d/ was not removed: %v", err)
	}
	if !strings.Contains(note, "[brig] The user undid one of your earlier tool calls: c1 (bash)") || !strings.Contains(note, "restored: a.txt") || !strings.Contains(note, "removed: d/b.txt, d") {
		t.Fatalf("note: %s", note)
	}
	if recs = records(t, log); recs[3].Kind != auditlog.KindUndo || recs[3].Undo.Restored != 1 || recs[3].Undo.Removed != 2 {
		t.Fatalf("the undo record: %+v", recs[3].Undo)
	}
}

// TestExecutorRefusesWithoutCheckpoint: when the snapshot before a call
// cannot be taken, the call does not run (undo could not have covered it).
func TestExecutorRefusesWithoutCheckpoint(t *testing.T) {
	e := newExecEnv(t, policy.ModeAuto)
	store, _ := withUndo(t, e)
	store.Close()
	o := e.ex.Execute(context.Background(), "c1", "bash", args(t, map[string]any{"command": "echo x > made.txt"}), nil)
	if !o.Result.IsError || !strings.Contains(o.Result.Text, "the call was not run") {
		t.Fatalf("result: %+v", o.Result)
	}
	if _, err := os.Stat(e.ws + "/made.txt"); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the call ran without its checkpoint")
	}
}

// TestWritableRoots: a call's write grants, less devices, its private
// temporary space and brig's toolchain cache.
func TestWritableRoots(t *testing.T) {
	s := &jail.Spec{Workspace: "/ws", PrivateTmp: true, Paths: []jail.PathRule{
		{Path: "/dev/null", Access: jail.Write}, {Path: "/usr", Access: jail.Exec}, {Path: "/ws", Access: jail.Write},
		{Path: "/tmp", Access: jail.Write}, {Path: "/dev/shm", Access: jail.Write}, {Path: "/home/u/.cache/brig/jail/ws-1", Access: jail.Write},
		{Path: "/srv/out", Access: jail.Write}, {Path: "/var/tmp/call-1", Access: jail.Write},
	}}
	got := writableRoots(s, nil, "/var/tmp/call-1", "/home/u/.cache/brig/jail")
	if want := []string{"/ws", "/srv/out"}; !slices.Equal(got, want) {
		t.Fatalf("roots %v, want %v", got, want)
	}
	// A file tool granted an outside directory: only the file it writes.
	got = writableRoots(s, []string{"/srv/out/report.txt", "/ws/a.txt"}, "/var/tmp/call-1", "/home/u/.cache/brig/jail")
	if want := []string{"/ws", "/srv/out/report.txt"}; !slices.Equal(got, want) {
		t.Fatalf("a file tool's roots %v, want %v", got, want)
	}
	// A workspace in /tmp is carried into the call's private /tmp as
	// itself: it is snapshotted (the fresh tmpfs around it is not).
	inTmp := &jail.Spec{Workspace: "/tmp/proj", PrivateTmp: true, Paths: []jail.PathRule{
		{Path: "/tmp", Access: jail.Write}, {Path: "/tmp/proj", Access: jail.Write}, {Path: "/dev/shm", Access: jail.Write},
	}}
	if got, want := writableRoots(inTmp, nil, "", ""), []string{"/tmp/proj"}; !slices.Equal(got, want) {
		t.Fatalf("a workspace in /tmp: roots %v, want %v", got, want)
	}
	s.PrivateTmp = false // without a mount namespace /tmp itself is never granted; a grant of it is the user's
	if got := writableRoots(s, nil, "", ""); !slices.Contains(got, "/tmp") {
		t.Fatalf("roots %v", got)
	}
}

// TestNoteGoesWithTheNextTurn: a note (an undo's) reaches the model at the
// start of the next user turn, once.
func TestNoteGoesWithTheNextTurn(t *testing.T) {
	srv := startFake(t, fakeprovider.Turn{Text: "ok"}, fakeprovider.Turn{Text: "ok again"})
	a := New(Config{Client: wires(srv)["anthropic"], Model: provider.Model{ID: "claude-sonnet-4-5"}}, nil)
	a.Note("[brig] The user undid one of your earlier tool calls")
	if _, err := a.Run(context.Background(), userText("next")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), userText("and then")); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if !strings.Contains(string(reqs[0].Body), "The user undid") || strings.Count(string(reqs[1].Body), "The user undid") != 1 {
		t.Fatalf("the note: %s\n%s", reqs[0].Body, reqs[1].Body)
	}
	h := a.History()
	if h[0].Content[0].Text != "[brig] The user undid one of your earlier tool calls" || h[0].Content[1].Text != "next" {
		t.Fatalf("history %+v", h[0])
	}
}

// TestRuleSavesAreAudited: an "always" answer saves a rule, and the audit
// log records it with the file it went to, after the call's own record of
// who answered.
func TestRuleSavesAreAudited(t *testing.T) {
	e := newExecEnv(t, policy.ModeAsk)
	_, log := withUndo(t, e)
	e.ap.answers = []Approval{{Answer: AnswerAlways}}
	o := e.ex.Execute(context.Background(), "c1", "bash", args(t, map[string]any{"command": "touch x.txt"}), nil)
	if o.Result.IsError || len(e.ap.asked) != 1 {
		t.Fatalf("%+v", o)
	}
	recs := records(t, log)
	if len(recs) != 2 || recs[0].Kind != auditlog.KindRule || recs[1].Kind != auditlog.KindCall {
		t.Fatalf("records %+v", recs)
	}
	if r := recs[0].Rule; r.File != e.ex.Policy.Files.User || r.Call != "c1" || len(r.Rules) == 0 {
		t.Fatalf("rule record %+v", r)
	}
	if d := recs[1].Call.Decision; d.Tier != "ask" || d.Answer != "always" || d.AnsweredBy != "user" {
		t.Fatalf("decision %+v", d)
	}
}

// TestAuditRecordWrittenLateBeforeTheNextCall: a call whose audit record
// cannot be written (here the log's file is a directory for a moment; a
// full disk in practice, which a call can cause to keep its record out)
// keeps it: the next call is refused while it stays unwritten, and once
// it can be written it is, saying it came late, before the next call's.
func TestAuditRecordWrittenLateBeforeTheNextCall(t *testing.T) {
	e := newExecEnv(t, policy.ModeAuto)
	dir := filepath.Join(t.TempDir(), "audit")
	e.ex.Audit = auditlog.Open(dir)
	defer e.ex.Audit.Close()
	if err := os.MkdirAll(filepath.Join(dir, auditlog.LogName), 0o755); err != nil {
		t.Fatal(err) // the log cannot be opened
	}
	o := e.ex.Execute(context.Background(), "c1", "bash", args(t, map[string]any{"command": "echo one"}), nil)
	if o.Result.IsError || o.Audit != nil {
		t.Fatalf("the first call: %+v", o)
	}
	o = e.ex.Execute(context.Background(), "c2", "bash", args(t, map[string]any{"command": "touch ran-anyway"}), nil)
	if !o.Result.IsError || !strings.Contains(o.Result.Text, "audit record of an earlier call could not be written") {
		t.Fatalf("a call ran while an earlier record was unwritten: %+v", o.Result)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "ran-anyway")); err == nil {
		t.Fatal("the refused call ran")
	}
	if err := os.Remove(filepath.Join(dir, auditlog.LogName)); err != nil {
		t.Fatal(err)
	}
	o = e.ex.Execute(context.Background(), "c3", "bash", args(t, map[string]any{"command": "echo three"}), nil)
	if o.Result.IsError || o.Audit == nil {
		t.Fatalf("the call after the log recovered: %+v", o)
	}
	var calls []*auditlog.Call
	if err := e.ex.Audit.Records(func(r auditlog.Record) error {
		if r.Call != nil {
			calls = append(calls, r.Call)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 3 || calls[0].ID != "c1" || calls[0].Late == "" || calls[1].ID != "c2" || calls[2].ID != "c3" || calls[2].Late != "" {
		t.Fatalf("records: %d", len(calls))
	}
}

// TestExecutorCheckpointsAnMCPServersWrites (red team, 2026-12-03): what
// a call of an MCP server allowed to write the workspace changes is in
// the call's change set and undo puts it back, as for a command; the
// control, a server tool without a grant of brig's (an HTTP server's),
// gets no snapshot.
func TestExecutorCheckpointsAnMCPServersWrites(t *testing.T) {
	e := newExecEnvConfig(t, policy.ModeAuto, "[permissions]\nallow = [\"Mcp(srv__clobber)\", \"Mcp(http__clobber)\"]\n")
	store, log := withUndo(t, e)
	ctx := context.Background()
	clobber := func(context.Context, json.RawMessage) tools.Result {
		if err := os.WriteFile(e.ws+"/a.txt", []byte("CLOBBERED\n"), 0o644); err != nil {
			return tools.Result{Text: err.Error(), IsError: true}
		}
		return tools.Result{Text: "wrote"}
	}
	grant := &jail.Spec{Workspace: e.ws, Paths: []jail.PathRule{{Path: e.ws, Access: jail.Write}, {Path: "/dev/null", Access: jail.Write}}}
	e.ex.Registry.Add(tools.NewExternal("srv__clobber", "", json.RawMessage(`{"type":"object"}`), false, nil, clobber).WithGrant(grant))
	e.ex.Registry.Add(tools.NewExternal("http__clobber", "", json.RawMessage(`{"type":"object"}`), false, nil, clobber))

	_, complete := e.ex.ExecuteLater(ctx, "m1", "srv__clobber", json.RawMessage(`{}`), nil)
	o := complete()
	if o.Err != nil || o.Result.IsError || o.Changes == nil || o.Changes.Summary() != "1 file changed" {
		t.Fatalf("the server's call: %+v (changes %v)", o.Result, o.Changes.Summary())
	}
	u := &Undoer{Store: store, Audit: log, SessionID: "s1", Workspace: e.ws, By: "/undo"}
	if ur, _, err := u.Undo(ctx, checkpoint.UndoOptions{}); err != nil || !ur.Applied {
		t.Fatalf("undo: %+v %v", ur, err)
	}
	if b, _ := os.ReadFile(e.ws + "/a.txt"); string(b) != "hello\n" {
		t.Fatalf("a.txt after undo: %q", b)
	}
	_, complete = e.ex.ExecuteLater(ctx, "m2", "http__clobber", json.RawMessage(`{}`), nil)
	if o := complete(); o.Err != nil || o.Changes != nil {
		t.Fatalf("control, no grant: %+v (changes %v)", o.Result, o.Changes)
	}
}

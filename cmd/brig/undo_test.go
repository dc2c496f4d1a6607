package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"brig/agent/provider"
	"brig/internal/checkpoint"
	"brig/internal/session"
	"brig/policy"
)

func TestUndoChangesLogFlagsReachTheOptions(t *testing.T) {
	var uo *undoOptions
	undo := newUndoCmd(func(_ context.Context, o *undoOptions) error { uo = o; return nil })
	undo.SetArgs([]string{"--to", "3", "--force", "--dry-run", "--session", "2026-11-22-ab12cd", "--json", "--workspace", "/x"})
	if err := undo.Execute(); err != nil || uo.To != "3" || !uo.Force || !uo.DryRun || uo.Session != "2026-11-22-ab12cd" || !uo.JSON || uo.Workspace != "/x" {
		t.Fatalf("undo options %+v, %v", uo, err)
	}
	var co *changesOptions
	changes := newChangesCmd(func(_ context.Context, o *changesOptions) error { co = o; return nil })
	changes.SetArgs([]string{"2026-11-22-ab12cd", "--all", "--json"})
	if err := changes.Execute(); err != nil || co.Session != "2026-11-22-ab12cd" || !co.All || !co.JSON {
		t.Fatalf("changes options %+v, %v", co, err)
	}
	var lo *logOptions
	log := newLogCmd(func(_ context.Context, o *logOptions) error { lo = o; return nil })
	log.SetArgs([]string{"--session", "s", "--tool", "bash", "--tier", "ask", "--kind", "call", "--since", "2h", "--json"})
	if err := log.Execute(); err != nil || lo.Session != "s" || lo.Tool != "bash" || lo.Tier != "ask" || lo.Kind != "call" || lo.Since != "2h" || !lo.JSON {
		t.Fatalf("log options %+v, %v", lo, err)
	}
	undo = newUndoCmd(nil)
	undo.SetArgs([]string{"extra"})
	undo.SetOut(&bytes.Buffer{})
	undo.SetErr(&bytes.Buffer{})
	if err := undo.Execute(); err == nil {
		t.Error("brig undo with an argument succeeded")
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 22, 15, 0, 0, 0, time.Local)
	for in, want := range map[string]time.Time{
		"2h":               now.Add(-2 * time.Hour),
		"2026-11-20":       time.Date(2026, 11, 20, 0, 0, 0, 0, time.Local),
		"2026-11-20T09:30": time.Date(2026, 11, 20, 9, 30, 0, 0, time.Local),
		"":                 {},
	} {
		got, err := parseSince(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := parseSince("yesterday", now); err == nil || !strings.Contains(err.Error(), "give a duration") {
		t.Errorf("a bad --since: %v", err)
	}
}

func TestShownMarksControlCharacters(t *testing.T) {
	if got := shown("a\x1b[31mb\nc"); got != "a␛[31mb␊c" {
		t.Errorf("shown = %q", got)
	}
	if got := shown("src/main.go"); got != "src/main.go" {
		t.Errorf("shown = %q", got)
	}
}

// TestPrintUndoNotesSharedCalls: an undo of a call that ran while another
// session had the workspace open says so, for that call only.
func TestPrintUndoNotesSharedCalls(t *testing.T) {
	rep := &checkpoint.UndoReport{Applied: true, Calls: []checkpoint.Call{
		{N: 2, ID: "toolu_a", Tool: "bash", Changes: &checkpoint.ChangeSet{Modified: 1}},
		{N: 3, ID: "toolu_b", Tool: "bash", Changes: &checkpoint.ChangeSet{Modified: 2, Shared: true}},
		{N: 4, ID: "toolu_c", Tool: "bash"}, // unfinished: no change set
	}}
	var b strings.Builder
	printUndo(&b, rep, "/ws", "2026-11-28-abcdef")
	out := b.String()
	if !strings.Contains(out, "call 3 ran while another brig session had this workspace open") {
		t.Errorf("no note for the shared call:\n%s", out)
	}
	if strings.Contains(out, "call 2 ran while") || strings.Contains(out, "call 4 ran while") {
		t.Errorf("a note for a call that did not share the workspace:\n%s", out)
	}
}

// TestPrintUndoDryRunListsFiles: a dry run says which files it would put
// back, in words that say it has not.
func TestPrintUndoDryRunListsFiles(t *testing.T) {
	rep := &checkpoint.UndoReport{Calls: []checkpoint.Call{{N: 2, ID: "toolu_a", Tool: "edit_file"}}, Changes: []checkpoint.Change{
		{Path: "/ws/a.go", Kind: checkpoint.Modified}, {Path: "/ws/new.txt", Kind: checkpoint.Deleted}, {Path: "/ws/gone.txt", Kind: checkpoint.Created},
	}}
	var b strings.Builder
	printUndo(&b, rep, "/ws", "2026-11-28-abcdef")
	want := "brig: would undo (dry run) call 2 (edit_file toolu_a) of session 2026-11-28-abcdef\n  restore   a.go\n  remove    new.txt\n  recreate  gone.txt\n"
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	rep.Applied = true
	b.Reset()
	printUndo(&b, rep, "/ws", "2026-11-28-abcdef")
	if got := b.String(); !strings.Contains(got, "  restored  a.go\n  removed   new.txt\n  recreated gone.txt\n") {
		t.Errorf("applied:\n%s", got)
	}
}

// TestUndoAfterALaterSessionNamesTheOneWithChanges: a fix session edits a
// file, then a later session of the workspace changes nothing. brig undo
// looks at the later one, the latest; it says so and names the fix
// session, with the commands that reach it, and --session undoes it.
func TestUndoAfterALaterSessionNamesTheOneWithChanges(t *testing.T) {
	pe, out, _, store, fix, _ := sessionsFixture(t)
	ctx := context.Background()
	ws, err := resolveWorkspace("", pe.Cwd)
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(ws, "main.go")
	if err := os.WriteFile(target, []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	later, err := store.Create(ctx, session.Header{Workspace: ws, Provider: provider.Anthropic, Model: "claude-sonnet-4-5", Mode: policy.ModeAsk})
	if err != nil {
		t.Fatal(err)
	}
	defer later.Close()
	if err := later.Append(ctx, session.MessageRecord(provider.Message{Role: provider.User, Content: []provider.Block{provider.Text("what's up")}})); err != nil {
		t.Fatal(err)
	}
	if l, err := store.Latest(ctx, ws); err != nil || l.ID != later.ID() {
		t.Fatalf("latest session %v, %v; want %s", l.ID, err, later.ID())
	}
	cp, _, err := openUndo(dirsFor(pe).State, ws)
	if err != nil {
		t.Fatal(err)
	}
	call := func(sess, id string, edit func()) {
		t.Helper()
		p, err := cp.Before(ctx, sess, id, "bash", []string{ws})
		if err != nil {
			t.Fatal(err)
		}
		edit()
		if _, err := p.After(ctx); err != nil {
			t.Fatal(err)
		}
	}
	call(fix.ID(), "toolu_fix", func() { os.WriteFile(target, []byte("package main // fixed\n"), 0o644) })
	call(later.ID(), "toolu_look", func() {})
	cp.Close()
	fix.Close()
	later.Close()

	err = runUndo(ctx, &undoOptions{procEnv: pe})
	if !errors.Is(err, checkpoint.ErrNothing) {
		t.Fatalf("brig undo: %v, want nothing to undo", err)
	}
	// Nothing to undo is no misuse of brig: it exits 1, not 2.
	if se := (statusError{}); !errors.As(err, &se) || se.code != 1 {
		t.Errorf("brig undo with nothing to undo: %#v, want exit status 1", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"(session " + later.ID() + ", the latest of this workspace)",
		"the latest session of this workspace with changes to undo is " + fix.ID(),
		"brig changes " + fix.ID(),
		"brig undo --session " + fix.ID(),
		"brig sessions list",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message does not say %q:\n%s", want, msg)
		}
	}
	// --to a call the session does not have names the session it looked
	// in ("no call 99 in this session" did not say which: new user,
	// 2026-12-03).
	for _, dry := range []bool{true, false} {
		err = runUndo(ctx, &undoOptions{procEnv: pe, To: "99", DryRun: dry})
		if want := "no call 99 in session " + later.ID() + " (it has 1 checkpointed call; brig changes " + later.ID() + " lists them)"; err == nil || err.Error() != want {
			t.Errorf("brig undo --to 99 (dry run %v): %v, want %q", dry, err, want)
		}
	}
	if err := runUndo(ctx, &undoOptions{procEnv: pe, Session: fix.ID()}); err != nil {
		t.Fatalf("brig undo --session: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(target); string(b) != "package main\n" {
		t.Fatalf("main.go after undo --session: %q", b)
	}
	// Nothing left anywhere: the message says so.
	err = runUndo(ctx, &undoOptions{procEnv: pe})
	if err == nil || !strings.Contains(err.Error(), "no other session of this workspace has changes to undo") {
		t.Fatalf("a second undo: %v", err)
	}
}

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"brig/internal/checkpoint"
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

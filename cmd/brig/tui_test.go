package main

import (
	"strings"
	"testing"

	"brig/internal/tui"
	"brig/policy"
)

// TestResumeArg: --resume takes an optional id; `--resume ID` with a space
// still names the session, and a stray argument is refused.
func TestResumeArg(t *testing.T) {
	for _, tc := range []struct {
		name    string
		resume  string
		args    []string
		want    string
		wantErr bool
	}{
		{"no flag", "", nil, "", false},
		{"picker", resumePick, nil, resumePick, false},
		{"id after a space", resumePick, []string{"2026-11-20-abcdef"}, "2026-11-20-abcdef", false},
		{"id with =", "2026-11-20-abcdef", nil, "2026-11-20-abcdef", false},
		{"stray argument", "", []string{"fix the bug"}, "", true},
		{"two ids", "2026-11-20-abcdef", []string{"x"}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &agentOptions{Resume: tc.resume}
			err := resumeArg(o, tc.args)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err == nil && o.Resume != tc.want {
				t.Errorf("resume = %q, want %q", o.Resume, tc.want)
			}
		})
	}
}

func TestRootResumeFlagParses(t *testing.T) {
	root := newRootCmd()
	if err := root.ParseFlags([]string{"--resume"}); err != nil {
		t.Fatal(err)
	}
	if v, _ := root.Flags().GetString("resume"); v != resumePick {
		t.Errorf("--resume alone = %q", v)
	}
}

// TestTUIModeChangeOfAnUnusedSession: a run that replaces one whose
// session is not kept (a /mode before anything was said) starts from the
// replaced run's mode, which setupAgent audits; a resumed session, a kept
// one, or the first run, does not.
func TestTUIModeChangeOfAnUnusedSession(t *testing.T) {
	var m tuiModes
	if got := m.from(tui.StartRequest{Mode: policy.ModeEdit}); got != "" {
		t.Errorf("first run: from %q", got)
	}
	kept := false
	m.started(policy.ModeAsk, func() bool { return kept })
	if got := m.from(tui.StartRequest{Mode: policy.ModeEdit}); got != policy.ModeAsk {
		t.Errorf("/mode edit before anything was said: from %q, want ask", got)
	}
	if got := m.from(tui.StartRequest{Mode: policy.ModeEdit, Resume: "2026-11-22-ab12cd"}); got != "" {
		t.Errorf("a resumed session: from %q (audited against its own mode)", got)
	}
	if got := m.from(tui.StartRequest{Continue: true}); got != "" {
		t.Errorf("--continue: from %q", got)
	}
	kept = true
	if got := m.from(tui.StartRequest{Mode: policy.ModeEdit}); got != "" {
		t.Errorf("/clear after a kept session: from %q", got)
	}
}

// TestResumedMode: a resumed session goes on in its own mode when that is
// no wider than the one the run started in, else in the run's; the note
// says which whenever they differ.
func TestResumedMode(t *testing.T) {
	for _, c := range []struct {
		saved, started, want policy.Mode
		note                 string
	}{
		{policy.ModeEdit, policy.ModeAsk, policy.ModeAsk, "the session ran in edit mode; it goes on in ask, the mode this run started in (--mode edit to go on as before)"},
		{policy.ModeAuto, policy.ModeEdit, policy.ModeEdit, "the session ran in auto mode; it goes on in edit"},
		{policy.ModePlan, policy.ModeAsk, policy.ModePlan, "the session goes on in plan mode, its own (this run started in ask; --mode to change)"},
		{policy.ModeAsk, policy.ModeAsk, policy.ModeAsk, ""},
		{"yolo", policy.ModeAsk, policy.ModeAsk, "the session ran in yolo mode; it goes on in ask"},
	} {
		got := resumedMode(c.saved, c.started)
		note := resumedModeNote(c.saved, c.started, got, "--mode")
		if got != c.want || !strings.HasPrefix(note, c.note) || (c.note == "") != (note == "") {
			t.Errorf("saved %s, started %s: %s, %q; want %s, %q", c.saved, c.started, got, note, c.want, c.note)
		}
	}
	// In the TUI the mode in use may be one /mode chose, not the start's.
	if note := resumedModeNote(policy.ModeAsk, policy.ModePlan, policy.ModePlan, "/mode"); note != "the session ran in ask mode; it goes on in plan, the mode in use (/mode ask to go on as before)" {
		t.Errorf("TUI: %q", note)
	}
}

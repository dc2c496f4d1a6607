package main

import (
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

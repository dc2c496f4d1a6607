package main

import "testing"

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

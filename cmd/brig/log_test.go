package main

import (
	"bytes"
	"strings"
	"testing"

	"brig/internal/auditlog"
)

// TestPrintRecordSaysWhyACallDidNotRun: brig log shows why a call the loop
// answered without running was refused, and what an unfinished one left.
func TestPrintRecordSaysWhyACallDidNotRun(t *testing.T) {
	for _, tc := range []struct {
		call      auditlog.Call
		how, want string
	}{
		{auditlog.Call{Tool: "write_file", IsError: true, Decision: auditlog.Decision{Refused: "not run: the call's arguments were cut off"}}, "refused", "why: not run: the call's arguments were cut off"},
		{auditlog.Call{Tool: "bash", IsError: true, Error: "brig stopped before this call finished"}, "unfinished", "error: brig stopped before this call finished"},
		{auditlog.Call{Tool: "bash", Decision: auditlog.Decision{Tier: "allow", Reason: "read-only command"}}, "allow", "why: read-only command"},
	} {
		var b bytes.Buffer
		c := tc.call
		printRecord(&b, auditlog.Record{Kind: auditlog.KindCall, Call: &c})
		if out := b.String(); !strings.Contains(out, " "+tc.how+" ") || !strings.Contains(out, tc.want) {
			t.Errorf("%s: printed\n%s\nwant %q and %q", c.Tool, out, tc.how, tc.want)
		}
	}
}

// TestLogFilters (new user, 2026-12-03): --session with the six hex
// digits other commands take matched nothing without a word, and so did
// a misspelled --tool. The short id matches its session (and only it);
// a tool the log has no call of is named with the nearest that it has.
func TestLogFilters(t *testing.T) {
	pe, out, _ := policyFixture(t)
	var errb bytes.Buffer
	pe.Stderr = &errb
	l := auditLog(dirsFor(pe).State)
	for _, s := range []string{"2026-12-01-4d0a3a", "2026-12-02-77aa00"} {
		if _, err := l.Append(t.Context(), auditlog.Record{Kind: auditlog.KindCall, Session: s, Call: &auditlog.Call{Tool: "bash", Decision: auditlog.Decision{Tier: "allow"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := runLog(t.Context(), &logOptions{procEnv: pe, Session: "4d0a3a"}); err != nil || !strings.Contains(out.String(), "2026-12-01-4d0a3a") || strings.Contains(out.String(), "77aa00") {
		t.Fatalf("--session 4d0a3a: %v\n%s", err, out)
	}
	out.Reset()
	if err := runLog(t.Context(), &logOptions{procEnv: pe, Tool: "bsh"}); err != nil || !strings.Contains(errb.String(), `no call of a tool "bsh" (did you mean bash?)`) {
		t.Fatalf("--tool bsh: %v\n%s", err, errb.String())
	}
	if err := runLog(t.Context(), &logOptions{procEnv: pe, Session: "zzzzzz"}); err == nil || !strings.Contains(err.Error(), "hex digits") {
		t.Fatalf("--session zzzzzz: %v", err)
	}
	// A session the log never saw is named as such; one it saw, whose
	// records another filter left out, is not (the control).
	errb.Reset()
	if err := runLog(t.Context(), &logOptions{procEnv: pe, Session: "123456"}); err != nil || !strings.Contains(errb.String(), `the log has no record of a session "123456"`) {
		t.Fatalf("--session 123456: %v\n%s", err, errb.String())
	}
	errb.Reset()
	if err := runLog(t.Context(), &logOptions{procEnv: pe, Session: "4d0a3a", Tier: "deny"}); err != nil || strings.Contains(errb.String(), "no record of a session") || !strings.Contains(errb.String(), "no audit records match") {
		t.Fatalf("control: --session 4d0a3a --tier deny: %v\n%s", err, errb.String())
	}
}

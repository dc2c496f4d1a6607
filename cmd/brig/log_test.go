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

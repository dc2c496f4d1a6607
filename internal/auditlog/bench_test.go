package auditlog

import (
	"context"
	"encoding/json"
	"testing"
)

// BenchmarkAppend: one call's record, on disk (synced) before it returns.
func BenchmarkAppend(b *testing.B) {
	l := Open(b.TempDir())
	code := 0
	rec := Record{Kind: KindCall, Session: "2026-11-25-abcdef", Workspace: "/home/u/src/project", Call: &Call{
		ID: "toolu_01ABCDEFGHIJ", Tool: "read_file", Args: json.RawMessage(`{"path":"main.go"}`),
		Decision: Decision{Tier: "allow", Reason: "inside the workspace", Mode: "ask"},
		Grant:    &Grant{Read: []string{"/home/u/src/project/main.go"}}, ExitCode: &code, DurationMS: 3.2,
	}}
	for b.Loop() {
		if _, err := l.Append(context.Background(), rec); err != nil {
			b.Fatal(err)
		}
	}
}

package agent

import (
	"context"
	"testing"

	"brig/agent/provider"
	"brig/policy"
	"brig/test/fakeprovider"
)

// BenchmarkToolIteration is one model request plus one read_file call
// through the policy and the real jail, in a session that grows: the
// harness cost per tool call that `make bench` reports end to end.
func BenchmarkToolIteration(b *testing.B) {
	e := newExecEnv(b, policy.ModeAuto)
	turns := make([]fakeprovider.Turn, 0, b.N+1)
	for range b.N {
		turns = append(turns, fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{call("read_file", `{"path":"a.txt"}`)}})
	}
	turns = append(turns, fakeprovider.Turn{Text: "done"})
	srv := startFake(b, turns...)
	a := New(Config{Client: wires(srv)["anthropic"], Model: provider.Model{ID: "claude-sonnet-4-5"}, Executor: e.ex, MaxIterations: b.N + 5}, nil)
	b.ResetTimer()
	if _, err := a.Run(context.Background(), userText("go")); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(srv.ServerTime().Microseconds())/float64(b.N), "provider-µs/op")
}

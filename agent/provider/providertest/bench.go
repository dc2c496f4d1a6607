package providertest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"brig/agent/provider"
	"brig/internal/credentials"
	"brig/test/fakeprovider"
)

// Bench measures one streamed turn (text and three tool calls) through the
// client against the fake provider, and reports the client's share: wall
// time minus the fake provider's own time per request ("client-ns/op").
func Bench(b *testing.B, wire fakeprovider.Wire, model string, newClient Factory) {
	turn := fakeprovider.Turn{Text: strings.Repeat("Some streamed answer text. ", 20), ToolCalls: []fakeprovider.ToolCall{
		{Name: "read_file", Input: json.RawMessage(`{"path":"a.go"}`)},
		{Name: "read_file", Input: json.RawMessage(`{"path":"b.go"}`)},
		{Name: "bash", Input: json.RawMessage(`{"command":"go test ./..."}`)},
	}}
	turns := make([]fakeprovider.Turn, b.N)
	for i := range turns {
		turns[i] = turn
	}
	srv, err := fakeprovider.Start(fakeprovider.Script{Turns: turns, NoValidate: true})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	c := newClient(srv.URL(), credentials.NewSecret("k"), "test", provider.Retry{MaxAttempts: 1})
	req := userReq(model, "go")
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if _, err := c.Stream(context.Background(), req, func(provider.Event) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	wall := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64((wall-srv.ServerTime()).Nanoseconds())/float64(b.N), "client-ns/op")
}

package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"brig/agent/provider"
	"brig/agent/provider/internal/wirecache"
)

// BenchmarkBuildRequest measures what a request costs brig before it is
// sent — the history put in the provider's form (provider.ForProvider) and
// encoded — at 10, 100 and 1000 messages: "fresh" encodes every message
// (a client's first request), "next" is a request after one that sent all
// but its last two messages (the client's encoding cache holds those). The
// cost per message (the ns/msg metric) must stay flat as the history grows:
// a request that cost more per message the longer the session would make
// every late turn slow.
func BenchmarkBuildRequest(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		msgs := history(n)
		build := func(b *testing.B, msgs []provider.Message, cache *wirecache.Cache) {
			req := provider.Request{Model: "claude-sonnet-4-5", System: "system prompt", MaxTokens: 8192,
				Messages: provider.ForProvider(msgs, provider.Anthropic)}
			if _, err := buildRequest(req, cache); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("fresh/messages=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				build(b, msgs, nil)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/msg")
		})
		b.Run(fmt.Sprintf("next/messages=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				var cache wirecache.Cache
				build(b, msgs[:n-2], &cache)
				b.StartTimer()
				build(b, msgs, &cache)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/msg")
		})
	}
}

// history is n messages of a coding session: bash calls and their ~1 KB
// results, with a user message now and then.
func history(n int) []provider.Message {
	out := strings.Repeat("ok  \tbrig/some/package\t0.123s\n", 32)
	msgs := []provider.Message{{Role: provider.User, Content: []provider.Block{{Type: provider.BlockText, Text: "make the tests pass"}}}}
	for i := 1; len(msgs) < n; i++ {
		id := fmt.Sprintf("toolu_%04d", i)
		in, _ := json.Marshal(map[string]string{"command": fmt.Sprintf("go test ./... # %d", i)})
		msgs = append(msgs,
			provider.Message{Role: provider.Assistant, Content: []provider.Block{
				{Type: provider.BlockText, Text: "Running the tests again."},
				{Type: provider.BlockToolUse, ToolUse: &provider.ToolUse{ID: id, Name: "bash", Input: in}},
			}},
			provider.Message{Role: provider.User, Content: []provider.Block{
				{Type: provider.BlockToolResult, ToolResult: &provider.ToolResult{ToolUseID: id, Content: []provider.Block{{Type: provider.BlockText, Text: out}}}},
			}})
	}
	return msgs[:n]
}

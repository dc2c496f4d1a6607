package anthropic

import (
	"testing"

	"brig/agent/provider"
	"brig/agent/provider/providertest"
	"brig/internal/credentials"
	"brig/test/fakeprovider"
)

func TestRequestGolden(t *testing.T) {
	tests := map[string]provider.Request{
		"request_conversation": providertest.Conversation("claude-sonnet-4-5"),
		"request_thinking_websearch": func() provider.Request {
			r := providertest.Conversation("claude-opus-4-5")
			r.Effort = provider.EffortMedium
			r.MaxTokens = 16000
			r.WebSearch = true
			r.Messages = r.Messages[:1]
			return r
		}(),
		"request_minimal": {Model: "claude-haiku-4-5", Messages: []provider.Message{{Role: provider.User, Content: []provider.Block{provider.Text("hi")}}}},
	}
	for name, req := range tests {
		t.Run(name, func(t *testing.T) {
			body, err := buildRequest(req, nil)
			if err != nil {
				t.Fatal(err)
			}
			providertest.Golden(t, name, providertest.Indent(t, body))
		})
	}
}

func TestStreamGolden(t *testing.T) { providertest.StreamGolden(t, parseStream) }

func TestAgainstFakeProvider(t *testing.T) {
	providertest.RunSuite(t, fakeprovider.WireAnthropic, "claude-sonnet-4-5", newTestClient)
}

func TestBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"":                                "https://api.anthropic.com/v1/messages",
		"http://127.0.0.1:9/":             "http://127.0.0.1:9/v1/messages",
		"https://proxy.example/v1":        "https://proxy.example/v1/messages",
		"https://proxy.example/anthropic": "https://proxy.example/anthropic/v1/messages",
	} {
		if got := New(Options{BaseURL: in}).ep.URL; got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}

func BenchmarkStream(b *testing.B) {
	providertest.Bench(b, fakeprovider.WireAnthropic, "claude-sonnet-4-5", newTestClient)
}

// newTestClient is the client the suite and the benchmark talk to the fake
// provider with.
func newTestClient(root string, key credentials.Secret, source string, retry provider.Retry) provider.Client {
	return New(Options{BaseURL: root, APIKey: key, KeySource: source, Retry: retry})
}

func TestCachedRequestsMatch(t *testing.T) {
	providertest.CachedBuildsMatch(t, "claude-sonnet-4-5", provider.Anthropic, buildRequest)
}

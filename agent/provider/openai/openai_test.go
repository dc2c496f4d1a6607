package openai

import (
	"testing"

	"brig/agent/provider"
	"brig/agent/provider/providertest"
	"brig/internal/credentials"
	"brig/test/fakeprovider"
)

func TestRequestGolden(t *testing.T) {
	tests := map[string]provider.Request{
		"request_conversation": providertest.Conversation("gpt-5"),
		"request_thinking_websearch": func() provider.Request {
			r := providertest.Conversation("gpt-5-mini")
			r.Effort = provider.EffortMedium
			r.MaxTokens = 16000
			r.WebSearch = true
			r.Messages = r.Messages[:1]
			return r
		}(),
		"request_minimal": {Model: "gpt-4.1", Messages: []provider.Message{{Role: provider.User, Content: []provider.Block{provider.Text("hi")}}}},
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
	providertest.RunSuite(t, fakeprovider.WireResponses, "gpt-5", newTestClient)
}

func TestBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"":                           "https://api.openai.com/v1",
		"http://127.0.0.1:11434/v1/": "http://127.0.0.1:11434/v1",
	} {
		if got := New(Options{BaseURL: in}).ep.Base; got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}

func BenchmarkStream(b *testing.B) {
	providertest.Bench(b, fakeprovider.WireResponses, "gpt-5", newTestClient)
}

// newTestClient is the client the suite and the benchmark talk to the fake
// provider with.
func newTestClient(root string, key credentials.Secret, source string, retry provider.Retry) provider.Client {
	return New(Options{BaseURL: root + "/v1", APIKey: key, KeySource: source, Retry: retry})
}

func TestCachedRequestsMatch(t *testing.T) {
	providertest.CachedBuildsMatch(t, "gpt-5", provider.OpenAI, buildRequest)
}

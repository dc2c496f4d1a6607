package provider

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		status   int
		typ, msg string
		want     ErrorKind
	}{
		{401, "authentication_error", "invalid x-api-key", ErrAuth},
		{403, "permission_error", "", ErrAuth},
		{401, "invalid_api_key", "Incorrect API key provided", ErrAuth},
		{404, "not_found_error", "model: claude-x", ErrModelNotFound},
		{404, "model_not_found", "The model `gpt-9` does not exist", ErrModelNotFound},
		{404, "", `model "llama9" not found, try pulling it first`, ErrModelNotFound},
		{404, "", "404 page not found", ErrNoEndpoint},
		{400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", ErrContextOverflow},
		{400, "context_length_exceeded", "", ErrContextOverflow},
		{400, "", "This model's maximum context length is 8192 tokens", ErrContextOverflow},
		{429, "insufficient_quota", "You exceeded your current quota", ErrQuota},
		{400, "invalid_request_error", "Your credit balance is too low", ErrQuota},
		{429, "rate_limit_error", "", ErrRateLimit},
		{529, "overloaded_error", "Overloaded", ErrOverloaded},
		{0, "overloaded_error", "Overloaded", ErrOverloaded},
		{503, "", "", ErrOverloaded},
		{500, "api_error", "", ErrServer},
		{502, "", "bad gateway", ErrServer},
		{400, "invalid_request_error", "tools.0.name: bad", ErrInvalidRequest},
	}
	for _, tt := range tests {
		if got := Classify(tt.status, tt.typ, tt.msg); got != tt.want {
			t.Errorf("Classify(%d, %q, %q) = %s, want %s", tt.status, tt.typ, tt.msg, got, tt.want)
		}
	}
}

func TestErrorTextIsActionable(t *testing.T) {
	base := Error{Provider: Anthropic, BaseURL: "https://api.anthropic.com", Model: "claude-x", KeySource: "environment variable ANTHROPIC_API_KEY"}
	tests := []struct {
		kind ErrorKind
		mod  func(*Error)
		want []string
	}{
		{ErrAuth, nil, []string{"rejected the API key", "environment variable ANTHROPIC_API_KEY", "credentials.toml"}},
		{ErrAuth, func(e *Error) { e.KeySource = ""; e.Provider = OpenAIChat; e.BaseURL = "http://127.0.0.1:8080/v1" }, []string{"needs an API key", "OPENAI_API_KEY", "http://127.0.0.1:8080/v1"}},
		{ErrModelNotFound, nil, []string{`"claude-x"`, "claude-sonnet-4-5"}},
		{ErrModelNotFound, func(e *Error) { e.Provider = OpenAIChat; e.BaseURL = "http://h/v1" }, []string{"curl http://h/v1/models"}},
		{ErrContextOverflow, nil, []string{"context window", "/compact"}},
		{ErrContextOverflow, func(e *Error) { e.Fix = "run brig -c --compact" }, []string{"context window", ": run brig -c --compact"}},
		{ErrRateLimit, func(e *Error) { e.Attempts = 4; e.RetryAfter = 90 * time.Second }, []string{"rate limited", "after 4 attempts", "1m30s"}},
		{ErrOverloaded, func(e *Error) { e.Status = 529 }, []string{"overloaded", "529"}},
		{ErrNetwork, func(e *Error) { e.Err = errors.New("connection refused") }, []string{"https://api.anthropic.com", "connection refused", "ANTHROPIC_BASE_URL"}},
		{ErrNoEndpoint, nil, []string{"--base-url", "ANTHROPIC_BASE_URL"}},
		{ErrNoEndpoint, func(e *Error) { e.Provider = OpenAI; e.BaseURL = "http://127.0.0.1:8080/" }, []string{"OPENAI_BASE_URL", "try http://127.0.0.1:8080/v1)"}},
	}
	// With /v1 already there, or for Anthropic (whose client adds it),
	// no such hint.
	for _, mod := range []func(*Error){func(e *Error) { e.Provider = OpenAIChat; e.BaseURL = "http://h/v1" }, func(e *Error) { e.BaseURL = "http://h" }} {
		e := base
		e.Kind = ErrNoEndpoint
		mod(&e)
		if strings.Contains(e.Error(), "try ") {
			t.Errorf("%s at %s: %q", e.Provider, e.BaseURL, e.Error())
		}
	}
	for _, tt := range tests {
		e := base
		e.Kind = tt.kind
		if tt.mod != nil {
			tt.mod(&e)
		}
		for _, w := range tt.want {
			if !strings.Contains(e.Error(), w) {
				t.Errorf("%s: %q lacks %q", tt.kind, e.Error(), w)
			}
		}
	}
}

func TestScrub(t *testing.T) {
	const key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"
	for _, in := range []string{
		"bad key " + key,
		"Incorrect API key provided: sk-ant-api03-abcdefg***********************89. You can find…",
		"key ends in …stuvwxyz0123456789",
	} {
		out := Scrub(in, key)
		if strings.Contains(out, "abcdefg") || strings.Contains(out, "wxyz0123456789") {
			t.Errorf("Scrub left key material: %q", out)
		}
	}
	if Scrub("nothing here", key) != "nothing here" || Scrub("x", "") != "x" {
		t.Error("Scrub changed text without the key")
	}
	// A very short key is removed where it stands alone, and the words
	// that merely contain its letters are left whole.
	if got := Scrub("invalid key k: check the key (k)", "k"); got != "invalid key [REDACTED]: check the key ([REDACTED])" {
		t.Errorf("short key: %q", got)
	}
	if got := Scrub("Incorrect API key provided: abc", "abc"); got != "Incorrect API key provided: [REDACTED]" {
		t.Errorf("short key at the end: %q", got)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(7 * time.Second).Format(http.TimeFormat)}}, 7 * time.Second},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{}, 0},
	}
	for _, tt := range tests {
		if got := RetryAfter(tt.h, now); got != tt.want {
			t.Errorf("%v: %v, want %v", tt.h, got, tt.want)
		}
	}
}

func TestNetworkErrorKeepsCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := NetworkError(ctx, OpenAI, "http://x", errors.New("boom")); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	if err := NetworkError(context.Background(), OpenAI, "http://x", errors.New("boom")); !IsKind(err, ErrNetwork) {
		t.Errorf("got %v", err)
	}
}

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"a\n  b\tc\n": "a b c",
		"":            "",
		"ééééé":       "éé…",
		"short":       "short",
	} {
		if got := OneLine(in, 5); got != want {
			t.Errorf("OneLine(%q, 5) = %q, want %q", in, got, want)
		}
	}
}

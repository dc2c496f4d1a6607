package connect

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"brig/agent/provider"
	"brig/internal/credentials"
	"brig/internal/xdg"
	"brig/test/fakeprovider"
)

func creds(t *testing.T, env []string) credentials.Set {
	t.Helper()
	set, err := credentials.Load(env, xdg.Resolve(nil, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestNew(t *testing.T) {
	both := []string{"ANTHROPIC_API_KEY=a", "OPENAI_API_KEY=o"}
	tests := []struct {
		name      string
		cfg       Config
		wire      provider.Name
		base      string
		keySource string
		wantErr   string
	}{
		{name: "anthropic model", cfg: Config{Model: "claude-sonnet-4-5", Env: both}, wire: provider.Anthropic, keySource: "environment variable ANTHROPIC_API_KEY"},
		{name: "openai model", cfg: Config{Model: "gpt-5", Env: both}, wire: provider.OpenAI, keySource: "environment variable OPENAI_API_KEY"},
		{name: "ANTHROPIC_BASE_URL", cfg: Config{Model: "claude-haiku-4-5", Env: append(both, "ANTHROPIC_BASE_URL=http://proxy")}, wire: provider.Anthropic, base: "http://proxy", keySource: "environment variable ANTHROPIC_API_KEY"},
		{name: "flag beats env", cfg: Config{Model: "gpt-5", BaseURL: "http://flag/v1", Env: append(both, "OPENAI_BASE_URL=http://env/v1")}, wire: provider.OpenAI, base: "http://flag/v1", keySource: "environment variable OPENAI_API_KEY"},
		{name: "local model needs no key", cfg: Config{Model: "qwen3:8b", BaseURL: "http://127.0.0.1:11434/v1"}, wire: provider.OpenAIChat, base: "http://127.0.0.1:11434/v1"},
		{name: "local model via OPENAI_BASE_URL", cfg: Config{Model: "qwen3:8b", Env: []string{"OPENAI_BASE_URL=http://127.0.0.1:8080/v1"}}, wire: provider.OpenAIChat, base: "http://127.0.0.1:8080/v1"},
		{name: "known model forced to chat", cfg: Config{Model: "gpt-5", Wire: provider.OpenAIChat, BaseURL: "http://127.0.0.1:11434/v1"}, wire: provider.OpenAIChat, base: "http://127.0.0.1:11434/v1"},
		// A model the registry does not list: the wire is chosen when it
		// is unambiguous, and asked for when it is not.
		{name: "alias on an Anthropic proxy", cfg: Config{Model: "team-sonnet", Env: append(both, "ANTHROPIC_BASE_URL=http://proxy")}, wire: provider.Anthropic, base: "http://proxy", keySource: "environment variable ANTHROPIC_API_KEY"},
		{name: "a new Claude id", cfg: Config{Model: "claude-sonnet-9", Env: both}, wire: provider.Anthropic, keySource: "environment variable ANTHROPIC_API_KEY"},
		{name: "a new OpenAI id", cfg: Config{Model: "gpt-7", Env: both}, wire: provider.OpenAI, keySource: "environment variable OPENAI_API_KEY"},
		{name: "an o-series id", cfg: Config{Model: "o9-mini", Env: both}, wire: provider.OpenAI, keySource: "environment variable OPENAI_API_KEY"},
		{name: "--provider decides", cfg: Config{Model: "my-alias", Wire: provider.Anthropic, BaseURL: "http://gw", Env: both}, wire: provider.Anthropic, base: "http://gw", keySource: "environment variable ANTHROPIC_API_KEY"},
		{name: "a Claude id on --base-url with only an Anthropic key: an Anthropic proxy", cfg: Config{Model: "claude-sonnet-9", BaseURL: "http://gw", Env: []string{"ANTHROPIC_API_KEY=a"}}, wire: provider.Anthropic, base: "http://gw", keySource: "environment variable ANTHROPIC_API_KEY"},
		{name: "--base-url with only an Anthropic key is ambiguous", cfg: Config{Model: "my-alias", BaseURL: "http://gw", Env: []string{"ANTHROPIC_API_KEY=a"}}, wantErr: "--provider anthropic"},
		{name: "both base URLs are ambiguous", cfg: Config{Model: "my-alias", Env: append(both, "ANTHROPIC_BASE_URL=http://a", "OPENAI_BASE_URL=http://o/v1")}, wantErr: "both ANTHROPIC_BASE_URL and OPENAI_BASE_URL"},
		{name: "nothing says where", cfg: Config{Model: "qwen3:8b", Env: both}, wantErr: "--provider anthropic"},
		{name: "no key", cfg: Config{Model: "claude-sonnet-4-5", Env: []string{"OPENAI_API_KEY=o"}}, wantErr: "ANTHROPIC_API_KEY"},
		{name: "no openai key for the real endpoint", cfg: Config{Model: "gpt-5", Wire: provider.OpenAIChat}, wantErr: "--base-url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Credentials = creds(t, tt.cfg.Env)
			c, err := New(tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Provider() != tt.wire || c.BaseURL != tt.base || c.KeySource != tt.keySource {
				t.Errorf("got %s %q %q, want %s %q %q", c.Provider(), c.BaseURL, c.KeySource, tt.wire, tt.base, tt.keySource)
			}
			if _, err := provider.Lookup(tt.cfg.Model, false); err != nil && (c.Model.Known || c.Model.Note() == "" || c.Model.ID != tt.cfg.Model) {
				t.Errorf("an unlisted model is not said to be unknown: %+v", c.Model)
			}
		})
	}
	var missing *credentials.MissingError
	_, err := New(Config{Model: "gpt-5", Credentials: creds(t, nil)})
	if !errors.As(err, &missing) {
		t.Errorf("missing key: %T %v", err, err)
	}
	// gpt-5 with only an Anthropic key: the Anthropic key is not offered
	// as a fix, nor a local server (gpt-5 is OpenAI's own API).
	_, err = New(Config{Model: "gpt-5", Env: []string{"ANTHROPIC_API_KEY=a"}, Credentials: creds(t, []string{"ANTHROPIC_API_KEY=a"})})
	if msg := fmt.Sprint(err); !strings.Contains(msg, "OPENAI_API_KEY") || strings.Contains(msg, "ANTHROPIC_API_KEY") || strings.Contains(msg, "--base-url") {
		t.Errorf("gpt-5 without an OpenAI key: %s", msg)
	}
}

func TestConnectedClientStreams(t *testing.T) {
	srv, err := fakeprovider.Start(fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "local answer"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c, err := New(Config{Model: "llama3.2", BaseURL: srv.URL() + "/v1", Credentials: creds(t, nil)})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Stream(context.Background(), provider.Request{Model: "llama3.2", Messages: []provider.Message{{Role: provider.User, Content: []provider.Block{provider.Text("hi")}}}}, func(provider.Event) error { return nil })
	if err != nil || resp.Message.PlainText() != "local answer" {
		t.Fatalf("%v %q", err, resp.Message.PlainText())
	}
	reqs := srv.Requests()
	if reqs[0].Wire != fakeprovider.WireChat || reqs[0].Header.Get("Authorization") != "" {
		t.Errorf("request %+v: want chat completions without a key", reqs[0])
	}
	if mt, _ := reqs[0].Decoded["max_tokens"].(float64); int(mt) != c.Model.MaxOutput {
		t.Errorf("max_tokens %v, want the conservative default %d", reqs[0].Decoded["max_tokens"], c.Model.MaxOutput)
	}
}

// TestWebPageFailsAtOnceOnEveryWire: a base URL that serves web pages
// (python3 -m http.server answers POST with an HTML 501) fails at the
// first request in all three wire formats, on one line.
func TestWebPageFailsAtOnceOnEveryWire(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "text/html;charset=utf-8")
		w.WriteHeader(http.StatusNotImplemented)
		fmt.Fprint(w, "<!DOCTYPE HTML>\n<html lang=\"en\">\n<head>\n<title>Error response</title>\n</head>\n<body>\n<h1>Error response</h1>\n</body>\n</html>\n")
	}))
	defer srv.Close()
	env := []string{"ANTHROPIC_API_KEY=a", "OPENAI_API_KEY=o"}
	for _, wire := range []provider.Name{provider.Anthropic, provider.OpenAI, provider.OpenAIChat} {
		requests.Store(0)
		c, err := New(Config{Model: "some-model", Wire: wire, BaseURL: srv.URL, Env: env, Credentials: creds(t, env),
			Retry: provider.Retry{Sleep: func(context.Context, time.Duration) error { return nil }}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Stream(context.Background(), provider.Request{Model: "some-model", Messages: []provider.Message{{Role: provider.User, Content: []provider.Block{provider.Text("hi")}}}}, func(provider.Event) error { return nil })
		if !provider.IsKind(err, provider.ErrNoEndpoint) || requests.Load() != 1 {
			t.Fatalf("%s: %d requests, err %v", wire, requests.Load(), err)
		}
		if msg := err.Error(); strings.ContainsAny(msg, "\n<") || !strings.Contains(msg, srv.URL) || !strings.Contains(msg, `web page titled "Error response"`) {
			t.Errorf("%s: %q", wire, msg)
		}
	}
}

// TestBaseURLThatNoRequestCouldReach: a base URL that is not http(s) or
// names no host is refused at once with the flag or variable that gave
// it; the controls (http and https with a host) pass.
func TestBaseURLThatNoRequestCouldReach(t *testing.T) {
	for _, c := range []struct {
		base, want string
	}{
		{"not a url", "has no scheme"},
		{"ftp://127.0.0.1/", "not an http"},
		{"http://", "names no host"},
		// New user, 2026-12-03: Go's "first path segment in URL cannot
		// contain colon" said nothing of the missing http://.
		{"127.0.0.1:8080", "has no scheme: write it with http:// or https:// in front (e.g. http://127.0.0.1:8080)"},
		{"localhost:8080/v1", "e.g. http://localhost:8080/v1"},
		{"http:/127.0.0.1:1", "malformed scheme"},
		{"https:host", "malformed scheme"},
	} {
		err := checkBase(c.base)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error containing %q", c.base, err, c.want)
		}
	}
	for _, ok := range []string{"", "http://127.0.0.1:11434/v1", "https://api.example.com"} {
		if err := checkBase(ok); err != nil {
			t.Errorf("control %q: %v", ok, err)
		}
	}
	_, err := New(Config{Model: "qwen3-coder", BaseURL: "ftp://127.0.0.1/", Wire: "openaichat"})
	if err == nil || !strings.Contains(err.Error(), "--base-url") {
		t.Errorf("New with ftp base: %v", err)
	}
}

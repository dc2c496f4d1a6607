// Package openaichat is brig's client for the Chat Completions API as served
// by OpenAI and by OpenAI-compatible servers (Ollama, llama.cpp's server,
// vLLM, OpenRouter …), streaming, written on net/http.
//
// It owns the Chat Completions wire format and the quirks of compatible
// servers: reasoning deltas under reasoning_content or reasoning, tool calls
// sent whole in one chunk or without ids, "stop" as the finish reason of a
// turn with tool calls, a missing [DONE]. It must not let a wire type escape,
// execute tools, or read the environment.
package openaichat

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"brig/agent/provider"
	"brig/agent/provider/internal/sse"
	"brig/internal/credentials"
)

// DefaultBaseURL is used when Options.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// Options configure a Client.
type Options struct {
	// BaseURL is the API root including /v1, e.g. http://127.0.0.1:11434/v1
	// for Ollama. Empty means DefaultBaseURL.
	BaseURL string
	APIKey  credentials.Secret // empty for a local server that needs none
	// KeySource says where the key came from, for error messages.
	KeySource  string
	HTTPClient *http.Client
	Retry      provider.Retry
}

// Client talks to one Chat Completions endpoint. It is safe for concurrent
// use.
type Client struct {
	base      string
	key       credentials.Secret
	keySource string
	hc        *http.Client
	retry     provider.Retry
	openAI    bool // api.openai.com: max_completion_tokens, reasoning_effort
}

var timeNow = time.Now

// New returns a client.
func New(o Options) *Client {
	base := strings.TrimSuffix(o.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	u, _ := url.Parse(base)
	return &Client{base: base, key: o.APIKey, keySource: o.KeySource, hc: hc, retry: o.Retry,
		openAI: u != nil && u.Hostname() == "api.openai.com"}
}

// Provider implements provider.Client.
func (c *Client) Provider() provider.Name { return provider.OpenAIChat }

// String names the endpoint, never the key.
func (c *Client) String() string { return "chat completions client for " + c.base }

// Stream implements provider.Client.
func (c *Client) Stream(ctx context.Context, req provider.Request, emit func(provider.Event) error) (provider.Response, error) {
	body, err := buildRequest(req, c.openAI)
	if err != nil {
		return provider.Response{}, fmt.Errorf("openaichat: building the request: %w", err)
	}
	headers := http.Header{}
	if !c.key.IsZero() {
		headers.Set("Authorization", "Bearer "+c.key.Reveal())
	}
	return c.retry.Run(ctx, emit, func(ctx context.Context, emit func(provider.Event) error) (provider.Response, error) {
		resp, err := sse.Post(ctx, c.hc, c.base+"/chat/completions", headers, body)
		if err != nil {
			return provider.Response{}, provider.NetworkError(ctx, provider.OpenAIChat, c.base, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return provider.Response{}, c.httpError(req.Model, resp)
		}
		out, err := parseStream(ctx, resp.Body, emit)
		var pe *provider.Error
		if errors.As(err, &pe) {
			c.fill(pe, req.Model)
		}
		return out, err
	})
}

func (c *Client) fill(e *provider.Error, model string) {
	e.Provider = provider.OpenAIChat
	e.BaseURL = c.base
	e.Model = model
	e.KeySource = c.keySource
	e.Message = provider.Scrub(e.Message, c.key.Reveal())
}

func (c *Client) httpError(model string, resp *http.Response) *provider.Error {
	body := sse.ReadErrorBody(resp)
	typ, msg := decodeError(body)
	kind := provider.Classify(resp.StatusCode, typ, msg)
	if typ == "" && msg == "" {
		msg = strings.TrimSpace(string(body))
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
	}
	e := &provider.Error{Kind: kind, Status: resp.StatusCode, Type: typ, Message: msg, RetryAfter: provider.RetryAfter(resp.Header, timeNow())}
	c.fill(e, model)
	return e
}

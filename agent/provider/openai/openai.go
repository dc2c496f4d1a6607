// Package openai is brig's client for the OpenAI Responses API (streaming,
// server-sent events), written on net/http.
//
// It owns the Responses wire format: input items, stream events, error
// bodies. Requests are stateless (store: false) and ask for encrypted
// reasoning content, so a conversation never depends on state kept at
// OpenAI. It must not let a wire type escape, execute tools, or read the
// environment (the caller passes the base URL and key).
package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
	// BaseURL is the API root including /v1 (OPENAI_BASE_URL's convention).
	// Empty means DefaultBaseURL.
	BaseURL string
	APIKey  credentials.Secret // may be empty for a server that needs none
	// KeySource says where the key came from, for error messages.
	KeySource  string
	HTTPClient *http.Client
	Retry      provider.Retry
}

// Client talks to one Responses endpoint. It is safe for concurrent use.
type Client struct {
	base      string
	key       credentials.Secret
	keySource string
	hc        *http.Client
	retry     provider.Retry
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
	return &Client{base: base, key: o.APIKey, keySource: o.KeySource, hc: hc, retry: o.Retry}
}

// Provider implements provider.Client.
func (c *Client) Provider() provider.Name { return provider.OpenAI }

// String names the endpoint, never the key.
func (c *Client) String() string { return "openai responses client for " + c.base }

// Stream implements provider.Client.
func (c *Client) Stream(ctx context.Context, req provider.Request, emit func(provider.Event) error) (provider.Response, error) {
	body, err := buildRequest(req)
	if err != nil {
		return provider.Response{}, fmt.Errorf("openai: building the request: %w", err)
	}
	headers := http.Header{}
	if !c.key.IsZero() {
		headers.Set("Authorization", "Bearer "+c.key.Reveal())
	}
	return c.retry.Run(ctx, emit, func(ctx context.Context, emit func(provider.Event) error) (provider.Response, error) {
		resp, err := sse.Post(ctx, c.hc, c.base+"/responses", headers, body)
		if err != nil {
			return provider.Response{}, provider.NetworkError(ctx, provider.OpenAI, c.base, err)
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
	e.Provider = provider.OpenAI
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
	e := &provider.Error{
		Kind:       kind,
		Status:     resp.StatusCode,
		Type:       typ,
		Message:    msg,
		RetryAfter: provider.RetryAfter(resp.Header, timeNow()),
	}
	c.fill(e, model)
	return e
}

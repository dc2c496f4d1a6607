// Package anthropic is brig's client for the Anthropic Messages API
// (streaming, server-sent events), written on net/http.
//
// It owns the Messages wire format: request JSON, SSE events, error bodies.
// It converts to and from agent/provider types and must not let any wire
// type escape, execute tools, or read the environment (the caller passes the
// base URL and key).
package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"brig/agent/provider"
	"brig/agent/provider/internal/sse"
	"brig/internal/credentials"
)

// DefaultBaseURL is used when Options.BaseURL is empty.
const DefaultBaseURL = "https://api.anthropic.com"

// APIVersion is the anthropic-version header brig speaks.
const APIVersion = "2023-06-01"

// Options configure a Client.
type Options struct {
	// BaseURL is the API root without /v1 (ANTHROPIC_BASE_URL's convention);
	// a trailing /v1 is accepted too. Empty means DefaultBaseURL.
	BaseURL string
	APIKey  credentials.Secret
	// KeySource says where the key came from, for error messages.
	KeySource  string
	HTTPClient *http.Client // nil means a client with no overall timeout (ctx bounds each call)
	Retry      provider.Retry
}

// Client talks to one Anthropic endpoint. It is safe for concurrent use.
type Client struct {
	base      string
	url       string
	key       credentials.Secret
	keySource string
	hc        *http.Client
	retry     provider.Retry
}

// New returns a client.
func New(o Options) *Client {
	base := strings.TrimSuffix(o.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	root := strings.TrimSuffix(base, "/v1")
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{base: base, url: root + "/v1/messages", key: o.APIKey, keySource: o.KeySource, hc: hc, retry: o.Retry}
}

// Provider implements provider.Client.
func (c *Client) Provider() provider.Name { return provider.Anthropic }

// String names the endpoint, never the key.
func (c *Client) String() string { return "anthropic client for " + c.base }

// Stream implements provider.Client.
func (c *Client) Stream(ctx context.Context, req provider.Request, emit func(provider.Event) error) (provider.Response, error) {
	body, err := buildRequest(req)
	if err != nil {
		return provider.Response{}, fmt.Errorf("anthropic: building the request: %w", err)
	}
	headers := http.Header{}
	headers.Set("anthropic-version", APIVersion)
	if !c.key.IsZero() {
		headers.Set("x-api-key", c.key.Reveal())
	}
	return c.retry.Run(ctx, emit, func(ctx context.Context, emit func(provider.Event) error) (provider.Response, error) {
		resp, err := sse.Post(ctx, c.hc, c.url, headers, body)
		if err != nil {
			return provider.Response{}, provider.NetworkError(ctx, provider.Anthropic, c.base, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return provider.Response{}, c.httpError(req.Model, resp)
		}
		out, err := parseStream(ctx, resp.Body, emit)
		if err != nil {
			var pe *provider.Error
			if errors.As(err, &pe) {
				c.fill(pe, req.Model)
			}
		}
		return out, err
	})
}

func (c *Client) fill(e *provider.Error, model string) {
	e.Provider = provider.Anthropic
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

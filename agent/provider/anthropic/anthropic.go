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
	"fmt"
	"net/http"
	"strings"

	"brig/agent/provider"
	"brig/agent/provider/internal/endpoint"
	"brig/agent/provider/internal/wirecache"
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
	HTTPClient *http.Client // nil means endpoint.NewHTTPClient: no overall timeout (ctx bounds each call), dead connections found by pings
	Retry      provider.Retry
}

// Client talks to one Anthropic endpoint. It is safe for concurrent use.
type Client struct {
	ep   endpoint.Endpoint
	msgs wirecache.Cache // the last request's messages, encoded
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
		hc = endpoint.NewHTTPClient()
	}
	headers := http.Header{}
	headers.Set("anthropic-version", APIVersion)
	if !o.APIKey.IsZero() {
		headers.Set("x-api-key", o.APIKey.Reveal())
	}
	return &Client{ep: endpoint.Endpoint{
		Provider: provider.Anthropic, Base: base, URL: root + "/v1/messages", Key: o.APIKey, KeySource: o.KeySource,
		HC: hc, Retry: o.Retry, Headers: headers, DecodeError: decodeError, Parse: parseStream,
	}}
}

// Connect implements provider.Connector.
func (c *Client) Connect(ctx context.Context) error { return c.ep.Connect(ctx) }

// Provider implements provider.Client.
func (c *Client) Provider() provider.Name { return provider.Anthropic }

// String names the endpoint, never the key.
func (c *Client) String() string { return "anthropic client for " + c.ep.Base }

// Stream implements provider.Client.
func (c *Client) Stream(ctx context.Context, req provider.Request, emit func(provider.Event) error) (provider.Response, error) {
	body, err := buildRequest(req, &c.msgs)
	if err != nil {
		return provider.Response{}, fmt.Errorf("anthropic: building the request: %w", err)
	}
	return c.ep.Stream(ctx, req.Model, body, emit)
}

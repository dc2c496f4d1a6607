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
	"fmt"
	"net/http"
	"strings"

	"brig/agent/provider"
	"brig/agent/provider/internal/endpoint"
	"brig/agent/provider/internal/wirecache"
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
	ep   endpoint.Endpoint
	msgs wirecache.Cache // the last request's messages, encoded
}

// New returns a client.
func New(o Options) *Client {
	base := strings.TrimSuffix(o.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = endpoint.NewHTTPClient()
	}
	return &Client{ep: endpoint.Endpoint{
		Provider: provider.OpenAI, Base: base, URL: base + "/responses", Key: o.APIKey, KeySource: o.KeySource,
		HC: hc, Retry: o.Retry, Headers: endpoint.Bearer(o.APIKey), DecodeError: decodeError, Parse: parseStream,
	}}
}

// Connect implements provider.Connector.
func (c *Client) Connect(ctx context.Context) error { return c.ep.Connect(ctx) }

// Provider implements provider.Client.
func (c *Client) Provider() provider.Name { return provider.OpenAI }

// String names the endpoint, never the key.
func (c *Client) String() string { return "openai responses client for " + c.ep.Base }

// Stream implements provider.Client.
func (c *Client) Stream(ctx context.Context, req provider.Request, emit func(provider.Event) error) (provider.Response, error) {
	body, err := buildRequest(req, &c.msgs)
	if err != nil {
		return provider.Response{}, fmt.Errorf("openai: building the request: %w", err)
	}
	return c.ep.Stream(ctx, req.Model, body, emit)
}

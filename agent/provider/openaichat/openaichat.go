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
	"fmt"
	"net/http"
	"net/url"
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
	ep     endpoint.Endpoint
	openAI bool            // the endpoint is api.openai.com itself
	msgs   wirecache.Cache // the last request's messages, encoded
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
	u, _ := url.Parse(base)
	return &Client{openAI: u != nil && u.Hostname() == "api.openai.com", ep: endpoint.Endpoint{
		Provider: provider.OpenAIChat, Base: base, URL: base + "/chat/completions", Key: o.APIKey, KeySource: o.KeySource,
		HC: hc, Retry: o.Retry, Headers: endpoint.Bearer(o.APIKey), DecodeError: decodeError, Parse: parseStream,
	}}
}

// Connect implements provider.Connector.
func (c *Client) Connect(ctx context.Context) error { return c.ep.Connect(ctx) }

// Provider implements provider.Client.
func (c *Client) Provider() provider.Name { return provider.OpenAIChat }

// String names the endpoint, never the key.
func (c *Client) String() string { return "chat completions client for " + c.ep.Base }

// Stream implements provider.Client.
func (c *Client) Stream(ctx context.Context, req provider.Request, emit func(provider.Event) error) (provider.Response, error) {
	body, err := buildRequest(req, c.openAI, &c.msgs)
	if err != nil {
		return provider.Response{}, fmt.Errorf("openaichat: building the request: %w", err)
	}
	return c.ep.Stream(ctx, req.Model, body, emit)
}

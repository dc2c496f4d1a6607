// Package connect picks and builds the provider client for a model: the wire
// format from the model registry (or an explicit choice), the base URL from
// the --base-url flag or the usual environment variable, and the key from
// internal/credentials.
//
// It is the one place that knows all three client packages. It reads no
// environment itself (the caller passes os.Environ()), so it is hermetic to
// test, and it must not build requests or execute tools.
package connect

import (
	"fmt"
	"net/http"
	"strings"

	"brig/agent/provider"
	"brig/agent/provider/anthropic"
	"brig/agent/provider/openai"
	"brig/agent/provider/openaichat"
	"brig/internal/credentials"
)

// Config says what to connect to.
type Config struct {
	Model string
	// BaseURL is --base-url; empty means ANTHROPIC_BASE_URL / OPENAI_BASE_URL
	// from Env, else the provider's own endpoint.
	BaseURL string
	// Wire forces a wire format ("" means the registry's for a known model,
	// Chat Completions for an unknown one on an explicit base URL).
	Wire provider.Name
	// Env is the environment as NAME=value pairs (os.Environ()).
	Env         []string
	Credentials credentials.Set
	Retry       provider.Retry
	HTTPClient  *http.Client
}

// Client is a connected client and what was chosen for it.
type Client struct {
	provider.Client
	Model   provider.Model
	BaseURL string // "" for the provider's default endpoint
	// KeySource says where the key came from, "" when none is sent.
	KeySource string
}

// New resolves cfg into a client. Errors are actionable: an unknown model
// lists the known ids, a missing key lists every way to configure one.
func New(cfg Config) (*Client, error) {
	wire := cfg.Wire
	model, err := provider.Lookup(cfg.Model, false)
	if err == nil && wire == "" {
		wire = model.Provider
	}
	if err != nil && wire == "" {
		wire = provider.OpenAIChat // an unknown model is served by a compatible server
	}
	base := cfg.BaseURL
	if base == "" {
		base = envBase(cfg.Env, wire)
	}
	if err != nil {
		if base == "" {
			return nil, err
		}
		model, _ = provider.Lookup(cfg.Model, true)
	}
	var keyProvider string
	switch wire {
	case provider.Anthropic:
		keyProvider = credentials.Anthropic
	case provider.OpenAI, provider.OpenAIChat:
		keyProvider = credentials.OpenAI
	default:
		return nil, fmt.Errorf("unknown wire format %q (anthropic, openai, openaichat)", wire)
	}
	cred, ok := cfg.Credentials.Lookup(keyProvider)
	// A Chat Completions server on an explicit base URL (Ollama, llama.cpp)
	// may need no key; every other endpoint does.
	if !ok && !(wire == provider.OpenAIChat && base != "") {
		_, err := cfg.Credentials.Get(keyProvider)
		return nil, err
	}
	out := &Client{Model: model, BaseURL: base, KeySource: cred.Source}
	switch wire {
	case provider.Anthropic:
		out.Client = anthropic.New(anthropic.Options{BaseURL: base, APIKey: cred.Key, KeySource: cred.Source, HTTPClient: cfg.HTTPClient, Retry: cfg.Retry})
	case provider.OpenAI:
		out.Client = openai.New(openai.Options{BaseURL: base, APIKey: cred.Key, KeySource: cred.Source, HTTPClient: cfg.HTTPClient, Retry: cfg.Retry})
	case provider.OpenAIChat:
		out.Client = openaichat.New(openaichat.Options{BaseURL: base, APIKey: cred.Key, KeySource: cred.Source, HTTPClient: cfg.HTTPClient, Retry: cfg.Retry})
	}
	return out, nil
}

// envBase is the base URL variable's value for a wire format.
func envBase(env []string, wire provider.Name) string {
	name := "OPENAI_BASE_URL"
	if wire == provider.Anthropic {
		name = "ANTHROPIC_BASE_URL"
	}
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

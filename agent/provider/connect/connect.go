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
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
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
	known := err == nil
	if !known && strings.TrimSpace(cfg.Model) == "" {
		return nil, err
	}
	if wire == "" {
		if known {
			wire = model.Provider
		} else if wire, err = guessWire(cfg); err != nil {
			return nil, err
		}
	}
	base := cfg.BaseURL
	what := "--base-url"
	if base == "" {
		base = envBase(cfg.Env, wire)
		what = "OPENAI_BASE_URL"
		if wire == provider.Anthropic {
			what = "ANTHROPIC_BASE_URL"
		}
	}
	if err := checkBase(base); err != nil {
		return nil, fmt.Errorf("%s %q: %w", what, base, err)
	}
	if !known {
		model = provider.Unlisted(cfg.Model, wire)
	}
	var keyProvider string
	switch wire {
	case provider.Anthropic:
		keyProvider = credentials.Anthropic
	case provider.OpenAI, provider.OpenAIChat:
		keyProvider = credentials.OpenAI
	default:
		return nil, fmt.Errorf("unknown wire format %q (anthropic, openai, openai-chat)", wire)
	}
	cred, ok := cfg.Credentials.Lookup(keyProvider)
	// A Chat Completions server on an explicit base URL (Ollama, llama.cpp)
	// may need no key; every other endpoint does.
	if !ok && !(wire == provider.OpenAIChat && base != "") {
		_, err := cfg.Credentials.Get(keyProvider)
		var missing *credentials.MissingError
		if errors.As(err, &missing) && wire == provider.OpenAIChat {
			missing.Keyless = true // a local server on --base-url needs none
		}
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

// guessWire picks the wire format for a model id the registry does not
// list (a new model, a proxy's alias, a local model) when none was given.
// It guesses only where the choice is unambiguous and otherwise says how
// to choose.
func guessWire(cfg Config) (provider.Name, error) {
	ask := func(why string) error {
		return fmt.Errorf("model %q is not in brig's registry (known: %s), and %s; say which API serves it with --provider anthropic (Anthropic Messages), openai (OpenAI Responses) or openai-chat (Chat Completions)",
			cfg.Model, strings.Join(append(provider.KnownIDs(provider.Anthropic), provider.KnownIDs(provider.OpenAI)...), ", "), why)
	}
	anthBase, oaBase := envBase(cfg.Env, provider.Anthropic), envBase(cfg.Env, provider.OpenAI)
	_, anthKey := cfg.Credentials.Lookup(credentials.Anthropic)
	_, oaKey := cfg.Credentials.Lookup(credentials.OpenAI)
	id := strings.ToLower(cfg.Model)
	switch {
	case cfg.BaseURL != "":
		// A server given on the command line: most often a local
		// OpenAI-compatible one (Ollama, llama.cpp, vLLM). With only an
		// Anthropic key it may as well be an Anthropic proxy: a claude
		// id says it is one.
		if anthKey && !oaKey && strings.HasPrefix(id, "claude") {
			return provider.Anthropic, nil
		}
		if anthKey && !oaKey {
			return "", ask("--base-url does not say which API it speaks (only an Anthropic key is set)")
		}
		return provider.OpenAIChat, nil
	case anthBase != "" && oaBase != "":
		return "", ask("both ANTHROPIC_BASE_URL and OPENAI_BASE_URL are set")
	case anthBase != "":
		return provider.Anthropic, nil
	case oaBase != "":
		return provider.OpenAIChat, nil
	case strings.HasPrefix(id, "claude"):
		return provider.Anthropic, nil
	case strings.HasPrefix(id, "gpt-") || len(id) > 1 && id[0] == 'o' && id[1] >= '0' && id[1] <= '9':
		return provider.OpenAI, nil
	}
	return "", ask("nothing says where it is served; for a local or other OpenAI-compatible server also give --base-url")
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

// Connect opens the connection to the provider ahead of the first request
// (provider.Connector), when the chosen client can; otherwise it does
// nothing.
func (c *Client) Connect(ctx context.Context) error {
	if k, ok := c.Client.(provider.Connector); ok {
		return k.Connect(ctx)
	}
	return nil
}

// checkBase refuses a base URL no request could reach ("" is the
// provider's default): one that is not http or https or names no host
// would otherwise be tried four times as a network error.
func checkBase(base string) error {
	if base == "" {
		return nil
	}
	u, err := url.Parse(base)
	switch {
	case !strings.Contains(base, "://") && strings.HasPrefix(strings.ToLower(base), "http"):
		// http:/host, http//host, https:host: the scheme is there, cut.
		return errors.New("has a malformed scheme: write it as http://HOST:PORT or https://HOST (e.g. http://127.0.0.1:11434/v1)")
	case !strings.Contains(base, "://"):
		// 127.0.0.1:8080 parses as a scheme or fails on its colon.
		return fmt.Errorf("has no scheme: write it with http:// or https:// in front (e.g. http://%s)", strings.TrimLeft(base, "/"))
	case err != nil:
		return fmt.Errorf("not a URL: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("not an http:// or https:// URL (e.g. http://127.0.0.1:11434/v1)")
	case u.Host == "":
		return errors.New("names no host (e.g. http://127.0.0.1:11434/v1)")
	}
	return nil
}

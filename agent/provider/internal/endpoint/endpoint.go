// Package endpoint is what the three provider clients share: posting a
// streaming request with retries, and turning HTTP and stream failures into
// *provider.Error with the endpoint, model and key source filled in and the
// key scrubbed from the provider's message.
//
// It must not know any provider's JSON: each client passes its own error
// decoder and stream parser.
package endpoint

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"brig/agent/provider"
	"brig/agent/provider/internal/sse"
	"brig/internal/credentials"
)

// Endpoint is one provider endpoint as a client sees it.
type Endpoint struct {
	Provider  provider.Name
	Base      string // the base URL, for error messages
	URL       string // where requests are posted
	Key       credentials.Secret
	KeySource string
	HC        *http.Client
	Retry     provider.Retry
	// Headers are sent with every request (authentication included).
	Headers http.Header
	// DecodeError reads the provider's error body: its type and message.
	DecodeError func(body []byte) (typ, msg string)
	// Parse reads the response stream.
	Parse func(ctx context.Context, r io.Reader, emit func(provider.Event) error) (provider.Response, error)

	finished func() // tests: called when a finished stream's body is closed
}

// Stream posts body and parses the streamed answer, retrying what the
// Retry policy allows (only before an event has reached emit).
func (e *Endpoint) Stream(ctx context.Context, model string, body []byte, emit func(provider.Event) error) (provider.Response, error) {
	return e.Retry.Run(ctx, emit, func(ctx context.Context, emit func(provider.Event) error) (provider.Response, error) {
		resp, err := sse.Post(ctx, e.HC, e.URL, e.Headers, body)
		if err != nil {
			return provider.Response{}, provider.NetworkError(ctx, e.Provider, e.Base, err)
		}
		parsed := false
		defer func() {
			if parsed {
				go finish(resp.Body, e.finished)
			} else {
				resp.Body.Close()
			}
		}()
		if resp.StatusCode/100 != 2 {
			return provider.Response{}, e.httpError(model, resp)
		}
		if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(strings.ToLower(ct), "text/html") {
			// A web page, not an API: retrying will not change that.
			pe := &provider.Error{Kind: provider.ErrNoEndpoint, Status: resp.StatusCode, Message: "the server answered with a web page (" + ct + "), not an event stream"}
			e.fill(pe, model)
			return provider.Response{}, pe
		}
		out, err := e.Parse(ctx, resp.Body, emit)
		parsed = err == nil
		var pe *provider.Error
		if errors.As(err, &pe) {
			e.fill(pe, model)
		}
		return out, err
	})
}

// finishWait bounds how long a finished stream's end is waited for.
const finishWait = 5 * time.Second

// finish reads what follows a stream's last event (the end of the chunked
// body) before closing it: an HTTP/1.1 connection whose body was not read
// to its end is closed rather than kept for the next request, and the
// next request would pay a new connection (a TLS handshake, through a
// proxy or to a local server). It runs in the background, bounded in
// bytes and time; the request's context still ends it.
func finish(body io.ReadCloser, done func()) {
	t := time.AfterFunc(finishWait, func() { body.Close() })
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
	t.Stop()
	body.Close()
	if done != nil {
		done()
	}
}

func (e *Endpoint) fill(pe *provider.Error, model string) {
	pe.Provider = e.Provider
	pe.BaseURL = e.Base
	pe.Model = model
	pe.KeySource = e.KeySource
	pe.Message = provider.Scrub(pe.Message, e.Key.Reveal())
}

// httpError turns a non-2xx answer into a typed error.
func (e *Endpoint) httpError(model string, resp *http.Response) *provider.Error {
	body := sse.ReadErrorBody(resp)
	typ, msg := e.DecodeError(body)
	if typ == "" && msg == "" {
		msg = strings.TrimSpace(string(body))
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
	}
	pe := &provider.Error{
		Kind:       provider.Classify(resp.StatusCode, typ, msg),
		Status:     resp.StatusCode,
		Type:       typ,
		Message:    msg,
		RetryAfter: provider.RetryAfter(resp.Header, time.Now()),
	}
	e.fill(pe, model)
	return pe
}

// Bearer is the Authorization header of OpenAI-style endpoints (none for a
// server that needs no key).
func Bearer(key credentials.Secret) http.Header {
	h := http.Header{}
	if !key.IsZero() {
		h.Set("Authorization", "Bearer "+key.Reveal())
	}
	return h
}

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
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
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

	finished func()           // tests: called when a finished stream's body is closed
	now      func() time.Time // tests: the clock (nil: time.Now)

	// used is when a request last ended well or a connection was last
	// opened ahead (unix nanoseconds); connecting is set while a
	// connection is opened ahead.
	used       atomic.Int64
	connecting atomic.Bool
}

// The health check of an HTTP/2 connection (NewHTTPClient): pinged once
// silent for pingAfter, closed when the ping is not answered within
// pingWait.
const (
	pingAfter = 20 * time.Second
	pingWait  = 15 * time.Second
)

// NewHTTPClient is the clients' HTTP client when none is given: a
// transport of its own, Go's default one otherwise (the proxy from the
// environment, HTTP/2, keep-alive), with its HTTP/2 connections' health
// checked: one silent for 20 s is pinged, and one whose ping is not
// answered within 15 s is closed. A request sent on a connection that
// died while the session sat idle (a laptop's sleep, a NAT's timeout)
// then fails within seconds and is retried on a new one, instead of
// waiting minutes for TCP to give up. A model that thinks for minutes
// before its first token is not cut short: the server answers the pings
// meanwhile.
func NewHTTPClient() *http.Client { return newHTTPClient(pingAfter, pingWait) }

func newHTTPClient(after, wait time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.HTTP2 = &http.HTTP2Config{SendPingTimeout: after, PingTimeout: wait}
	return &http.Client{Transport: t}
}

// Fresh is how long a connection that carried a request (or was opened
// ahead) is taken to be still open: Connect does nothing within it.
// Servers keep an idle connection for a minute or more (Go's own transport
// for 90 s); a shorter span means at most an opening for nothing.
const Fresh = 20 * time.Second

// connectWait bounds an opening ahead: a slow network must not leave one
// hanging for the session.
const connectWait = 15 * time.Second

func (e *Endpoint) clock() time.Time {
	if e.now != nil {
		return e.now()
	}
	return time.Now()
}

func (e *Endpoint) touch() { e.used.Store(e.clock().UnixNano()) }

// Connect opens a connection to the endpoint ahead of a request, so that
// the request does not wait for the name lookup, the TCP and the TLS
// handshakes (two to four round trips to a provider far away): it sends
// HEAD for the request's URL, without the key or any other header of the
// API, through the client's own transport (its proxy, its pool), does not
// follow a redirect, and leaves the connection idle in the pool. Nothing
// is sent while another opening is under way, or within Fresh of the last
// request or opening (one sent beside a request costs a HEAD: over
// HTTP/2 it shares the request's connection). The answer's status is not looked
// at (an API answers HEAD with 404 or 405); only a failure to reach the
// server is an error, which costs the request nothing: it opens its own.
func (e *Endpoint) Connect(ctx context.Context) error {
	if last := e.used.Load(); last != 0 && e.clock().Sub(time.Unix(0, last)) < Fresh {
		return nil
	}
	if !e.connecting.CompareAndSwap(false, true) {
		return nil
	}
	defer e.connecting.Store(false)
	ctx, cancel := context.WithTimeout(ctx, connectWait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, e.URL, nil)
	if err != nil {
		return fmt.Errorf("%s: open a connection ahead: %w", e.Provider, err)
	}
	rt := e.HC.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return fmt.Errorf("%s: open a connection to %s ahead: %w", e.Provider, e.Base, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	e.touch()
	return nil
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
		if parsed {
			e.touch()
		}
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

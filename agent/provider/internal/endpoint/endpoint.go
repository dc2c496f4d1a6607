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
	"html"
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
	// A redirect is not followed: the request carries the key and the
	// whole conversation, which go only to the address the user set (Go
	// keeps a custom key header such as x-api-key across hosts, and
	// Authorization across ports). The 3xx comes back as the answer, and
	// the provider reports its status and where it led.
	return &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
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
		if ct := resp.Header.Get("Content-Type"); webPage(ct, nil) {
			// A web page, not an API: retrying will not change that.
			head, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
			pe := &provider.Error{Kind: provider.ErrNoEndpoint, Status: resp.StatusCode, Message: e.pageMessage(head)}
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

// httpError turns a non-2xx answer into a typed error. A body that is not
// the provider's error JSON is shown on one line, cut short; a web page
// is not shown at all (its title at most) and fails at once: the base URL
// points at a web server, not at the API, and asking again will not change
// that. Only a proxy's or gateway's page (429, 502, 503, 504: the API
// behind it may answer in a moment) keeps the status's own kind and its
// retries.
func (e *Endpoint) httpError(model string, resp *http.Response) *provider.Error {
	body := sse.ReadErrorBody(resp)
	typ, msg := e.DecodeError(body)
	page := typ == "" && msg == "" && webPage(resp.Header.Get("Content-Type"), body)
	if typ == "" && msg == "" {
		msg = provider.OneLine(string(body), maxShownBody)
	}
	kind := provider.Classify(resp.StatusCode, typ, msg)
	if page {
		msg = e.pageMessage(body)
		switch resp.StatusCode {
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			msg = "a web page" + pageTitle(body) // a proxy's or gateway's, in front of the API
		default:
			kind = provider.ErrNoEndpoint
		}
	}
	pe := &provider.Error{
		Kind:       kind,
		Status:     resp.StatusCode,
		Type:       typ,
		Message:    msg,
		RetryAfter: provider.RetryAfter(resp.Header, time.Now()),
	}
	e.fill(pe, model)
	return pe
}

// maxShownBody bounds how much of an error body that is not the
// provider's JSON goes into the error (on one line).
const maxShownBody = 200

// pageMessage says that the server answered with a web page, with the
// page's title when it has one (the error around it says the API is not
// there).
func (e *Endpoint) pageMessage(body []byte) string {
	return "it answered with a web page" + pageTitle(body)
}

// webPage reports whether an answer is a web page: served as HTML, or,
// without a type that says otherwise, a body that starts as one.
func webPage(contentType string, body []byte) bool {
	ct := strings.ToLower(contentType)
	if strings.HasPrefix(ct, "text/html") || strings.HasPrefix(ct, "application/xhtml") {
		return true
	}
	if strings.Contains(ct, "json") || strings.HasPrefix(ct, "text/event-stream") {
		return false
	}
	start := strings.ToLower(strings.TrimSpace(string(body[:min(len(body), 512)])))
	return strings.HasPrefix(start, "<!doctype html") || strings.HasPrefix(start, "<html") ||
		strings.HasPrefix(start, "<head") || strings.HasPrefix(start, "<body") ||
		strings.HasPrefix(start, "<?xml") && strings.Contains(start, "<html")
}

// pageTitle is ` titled "…"` for an HTML page's title, on one line and
// short, or "" when it has none.
func pageTitle(body []byte) string {
	s := string(body)
	lower := strings.ToLower(s)
	i := strings.Index(lower, "<title")
	if i < 0 {
		return ""
	}
	open := strings.IndexByte(lower[i:], '>')
	if open < 0 {
		return ""
	}
	from := i + open + 1
	end := strings.Index(lower[from:], "</title")
	if end < 0 {
		return ""
	}
	t := provider.OneLine(html.UnescapeString(s[from:from+end]), 80)
	if t == "" {
		return ""
	}
	return fmt.Sprintf(" titled %q", t)
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

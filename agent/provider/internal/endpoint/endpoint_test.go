package endpoint

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"brig/agent/provider"
)

// parseToStop returns a parser that reads lines up to "event: stop" and
// returns there, as the providers' parsers return at their stream's last
// event, before the body's end; it says so on parsed.
func parseToStop(parsed chan<- struct{}) func(context.Context, io.Reader, func(provider.Event) error) (provider.Response, error) {
	return func(_ context.Context, r io.Reader, _ func(provider.Event) error) (provider.Response, error) {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if sc.Text() == "event: stop" {
				parsed <- struct{}{}
				return provider.Response{}, nil
			}
		}
		return provider.Response{}, fmt.Errorf("no stop event: %v", sc.Err())
	}
}

// TestFinishedStreamKeepsItsConnection: a stream whose parser returned at
// its last event is read to its end, so the next request goes over the
// same HTTP/1.1 connection instead of opening (and, over TLS, shaking
// hands on) a new one.
func TestFinishedStreamKeepsItsConnection(t *testing.T) {
	var mu sync.Mutex
	conns := 0
	parsed := make(chan struct{}, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: ping\ndata: {}\n\n")
		w.(http.Flusher).Flush()
		fmt.Fprint(w, "event: stop\ndata: {}\n\n")
		w.(http.Flusher).Flush()
		// The body ends after the parser has returned (as the chunked
		// body's last chunk, or a trailing comment, may come later).
		select {
		case <-parsed:
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, strings.Repeat(": keep-alive\n", 50))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	srv.Start()
	defer srv.Close()

	finished := make(chan struct{}, 4)
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	e := &Endpoint{Provider: provider.Anthropic, Base: srv.URL, URL: srv.URL + "/v1/messages", HC: hc,
		Parse: parseToStop(parsed), finished: func() { finished <- struct{}{} }}
	for i := range 3 {
		if _, err := e.Stream(context.Background(), "m", []byte(`{}`), func(provider.Event) error { return nil }); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		<-finished
	}
	mu.Lock()
	defer mu.Unlock()
	if conns != 1 {
		t.Errorf("three requests opened %d connections, want one kept for all", conns)
	}
}

// seen is what a test server saw: each request's method, remote address
// and credential headers, and the connections it accepted.
type seen struct {
	mu    sync.Mutex
	conns int
	reqs  []string // "METHOD remote key=… auth=…"
}

func (s *seen) add(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, fmt.Sprintf("%s %s key=%q auth=%q", r.Method, r.RemoteAddr, r.Header.Get("x-api-key"), r.Header.Get("Authorization")))
}

func (s *seen) state(_ net.Conn, st http.ConnState) {
	if st == http.StateNew {
		s.mu.Lock()
		s.conns++
		s.mu.Unlock()
	}
}

func (s *seen) snapshot() (int, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns, append([]string(nil), s.reqs...)
}

// TestConnectOpensTheRequestsConnection: Connect opens the connection the
// request then goes over (one connection for both, the request's remote
// address the same as the opening's), sends no credential, does nothing
// again while the connection is fresh and again once it is not.
func TestConnectOpensTheRequestsConnection(t *testing.T) {
	var s seen
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.add(r)
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed) // as an API answers HEAD
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: stop\ndata: {}\n\n")
	}))
	srv.Config.ConnState = s.state
	srv.Start()
	defer srv.Close()

	now := time.Unix(1_800_000_000, 0)
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	headers := http.Header{}
	headers.Set("x-api-key", "sk-secret")
	e := &Endpoint{Provider: provider.Anthropic, Base: srv.URL, URL: srv.URL + "/v1/messages", HC: hc, Headers: headers,
		Parse: parseToStop(make(chan struct{}, 8)), now: func() time.Time { return now }}

	if err := e.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	conns, reqs := s.snapshot()
	if conns != 1 || len(reqs) != 1 || !strings.HasPrefix(reqs[0], "HEAD ") {
		t.Fatalf("after Connect: %d connections, requests %q; want one HEAD", conns, reqs)
	}
	if !strings.HasSuffix(reqs[0], `key="" auth=""`) {
		t.Errorf("the opening carried a credential: %s", reqs[0])
	}
	remote := strings.Fields(reqs[0])[1]

	if _, err := e.Stream(context.Background(), "m", []byte(`{}`), func(provider.Event) error { return nil }); err != nil {
		t.Fatal(err)
	}
	conns, reqs = s.snapshot()
	if conns != 1 || len(reqs) != 2 || reqs[1] != fmt.Sprintf(`POST %s key="sk-secret" auth=""`, remote) {
		t.Fatalf("the request after Connect: %d connections, requests %q; want the POST on %s, the connection opened ahead", conns, reqs, remote)
	}

	// Fresh after the request: nothing is sent.
	now = now.Add(Fresh - time.Second)
	if err := e.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, reqs = s.snapshot(); len(reqs) != 2 {
		t.Fatalf("Connect within Fresh of a request sent %q", reqs[2:])
	}
	// Idle longer than that: the connection is checked again.
	now = now.Add(2 * time.Second)
	if err := e.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, reqs = s.snapshot(); len(reqs) != 3 || !strings.HasPrefix(reqs[2], "HEAD ") {
		t.Fatalf("Connect after Fresh: requests %q, want a third, a HEAD", reqs)
	}
}

// TestConnectFollowsNoRedirect: an endpoint that answers the opening with
// a redirect is not followed elsewhere; a server that cannot be reached
// is an error naming it.
func TestConnectFollowsNoRedirect(t *testing.T) {
	var elsewhere seen
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.add(r) }))
	defer other.Close()
	var s seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.add(r)
		http.Redirect(w, r, other.URL+"/docs", http.StatusFound)
	}))
	defer srv.Close()
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	e := &Endpoint{Provider: provider.OpenAI, Base: srv.URL, URL: srv.URL + "/v1/responses", HC: hc}
	if err := e.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, reqs := s.snapshot(); len(reqs) != 1 {
		t.Fatalf("the endpoint saw %q, want the one HEAD", reqs)
	}
	if _, reqs := elsewhere.snapshot(); len(reqs) != 0 {
		t.Fatalf("the redirect was followed: %q", reqs)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + l.Addr().String()
	l.Close()
	e = &Endpoint{Provider: provider.OpenAI, Base: gone, URL: gone + "/v1/responses", HC: hc}
	if err := e.Connect(context.Background()); err == nil || !strings.Contains(err.Error(), gone) {
		t.Fatalf("Connect to a closed port: %v, want an error naming %s", err, gone)
	}
}

// TestAPIRequestsFollowNoRedirect: a provider endpoint that redirects gets
// its 3xx back as the answer; the place it points to receives nothing
// (not the key, not the body). The control: the same client reaches that
// place when asked directly.
func TestAPIRequestsFollowNoRedirect(t *testing.T) {
	var got atomic.Int32
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got.Add(1) }))
	defer sink.Close()
	redir := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, sink.URL+"/v1/messages", http.StatusTemporaryRedirect)
	}))
	defer redir.Close()
	c := newHTTPClient(time.Second, time.Second)
	req, _ := http.NewRequest("POST", redir.URL+"/v1/messages", strings.NewReader(`{"secret":"conversation"}`))
	req.Header.Set("x-api-key", "sk-canary")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || got.Load() != 0 {
		t.Errorf("status %d, the redirect's target got %d requests; want 307 and none", resp.StatusCode, got.Load())
	}
	resp, err = c.Post(sink.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got.Load() != 1 {
		t.Errorf("control: the sink got %d requests asked directly", got.Load())
	}
}

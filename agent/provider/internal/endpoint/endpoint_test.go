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
	"testing"

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

package endpoint

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"brig/agent/provider"
)

// freezer is a TCP relay to a server whose connections can be made to
// go silent without closing — what a connection looks like after a
// laptop's sleep or a NAT's timeout: bytes written into it vanish, no
// answer and no reset ever comes. Connections made after a freeze relay
// as usual.
type freezer struct {
	l      net.Listener
	to     string
	mu     sync.Mutex
	frozen []*atomic.Bool // one per connection so far
}

func newFreezer(t *testing.T, to string) *freezer {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{l: l, to: to}
	t.Cleanup(func() { l.Close() })
	go f.serve()
	return f
}

func (f *freezer) serve() {
	for {
		c, err := f.l.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", f.to)
		if err != nil {
			c.Close()
			continue
		}
		frozen := new(atomic.Bool)
		f.mu.Lock()
		f.frozen = append(f.frozen, frozen)
		f.mu.Unlock()
		relay := func(dst, src net.Conn) {
			buf := make([]byte, 32<<10)
			for {
				n, err := src.Read(buf)
				if n > 0 && !frozen.Load() {
					if _, werr := dst.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					if err != io.EOF {
						dst.Close()
					}
					return
				}
			}
		}
		go relay(up, c)
		go relay(c, up)
	}
}

// freeze silences every connection made so far.
func (f *freezer) freeze() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, b := range f.frozen {
		b.Store(true)
	}
}

// TestDeadConnectionIsFoundAndLeft: a request sent on an HTTP/2
// connection that went silent fails once the health check's ping goes
// unanswered, and the retry goes out on a new connection and is
// answered. Without the health check it would wait until the context's
// end (the test's deadline): the request never leaves a dead connection.
func TestDeadConnectionIsFoundAndLeft(t *testing.T) {
	var protos sync.Map
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		protos.Store(r.Proto, true)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: stop\ndata: {}\n\n")
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	relay := newFreezer(t, srv.Listener.Addr().String())
	base := "https://" + relay.l.Addr().String()

	hc := newHTTPClient(150*time.Millisecond, 150*time.Millisecond)
	tr := hc.Transport.(*http.Transport)
	tr.TLSClientConfig = &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	defer hc.CloseIdleConnections()
	var retries atomic.Int32
	e := &Endpoint{Provider: provider.Anthropic, Base: base, URL: base + "/v1/messages", HC: hc,
		Parse: parseToStop(make(chan struct{}, 8)),
		Retry: provider.Retry{MaxAttempts: 2, Sleep: func(context.Context, time.Duration) error { retries.Add(1); return nil }}}
	emit := func(provider.Event) error { return nil }

	if _, err := e.Stream(context.Background(), "m", []byte(`{}`), emit); err != nil {
		t.Fatal(err)
	}
	if _, ok := protos.Load("HTTP/2.0"); !ok {
		t.Fatalf("the first request was not HTTP/2: %v", protoList(&protos))
	}
	relay.freeze()
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-5*time.Second))
		defer cancel()
	}
	if _, err := e.Stream(ctx, "m", []byte(`{}`), emit); err != nil {
		t.Fatalf("the request on the dead connection: %v (retries %d)", err, retries.Load())
	}
	if n := retries.Load(); n != 1 {
		t.Fatalf("answered after %d retries, want 1: the dead connection's failure, then a new one", n)
	}
	relay.mu.Lock()
	conns := len(relay.frozen)
	relay.mu.Unlock()
	if conns != 2 {
		t.Fatalf("%d connections, want 2 (the dead one and its replacement)", conns)
	}
}

func protoList(m *sync.Map) []string {
	var out []string
	m.Range(func(k, _ any) bool { out = append(out, k.(string)); return true })
	return out
}

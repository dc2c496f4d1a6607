package endpoint

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"brig/agent/provider"
)

// slowLink is a server connection whose first write after each read waits
// rtt: every exchange with the client (a TLS flight, a request) costs a
// round trip of a link that far away. TCP's own handshake is not delayed.
type slowLink struct {
	net.Conn
	rtt  time.Duration
	read atomic.Bool
}

func (c *slowLink) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.read.Store(true)
	}
	return n, err
}

func (c *slowLink) Write(p []byte) (int, error) {
	if c.read.Swap(false) {
		time.Sleep(c.rtt)
	}
	return c.Conn.Write(p)
}

type slowListener struct {
	net.Listener
	rtt time.Duration
}

func (l slowListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &slowLink{Conn: c, rtt: l.rtt}, nil
}

// BenchmarkFirstRequest is a session's first request over TLS to a server
// 20 ms away: from a client that has not connected yet ("cold": the TLS
// handshake, then the request) and from one whose connection was opened
// ahead with Connect, untimed, as brig does while the session starts and
// while the user types ("opened-ahead": the request alone).
func BenchmarkFirstRequest(b *testing.B) {
	const rtt = 20 * time.Millisecond
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: stop\ndata: {}\n\n")
	}))
	srv.Listener = slowListener{Listener: srv.Listener, rtt: rtt}
	srv.StartTLS()
	defer srv.Close()
	roots := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	for _, ahead := range []bool{false, true} {
		name := "cold"
		if ahead {
			name = "opened-ahead"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
				e := &Endpoint{Provider: provider.Anthropic, Base: srv.URL, URL: srv.URL + "/v1/messages", HC: hc,
					Parse: parseToStop(make(chan struct{}, 1))}
				if ahead {
					if err := e.Connect(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				if _, err := e.Stream(context.Background(), "m", []byte(`{}`), func(provider.Event) error { return nil }); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				hc.CloseIdleConnections()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/request")
		})
	}
}

package egress

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"strings"
	"sync"
	"time"

	"brig/jail"
)

// httpServer is the HTTP side of a session: CONNECT tunnels and plain
// http:// requests in proxy form.
type httpServer = http.Server

func (s *Session) httpServer() *http.Server {
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: s.p.o.HandshakeTimeout,
		IdleTimeout:       s.p.o.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          discardLogger,
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
		ConnState: func(c net.Conn, st http.ConnState) {
			if st == http.StateClosed {
				s.done(c)
			}
		},
	}
}

// ServeHTTP handles one request of a client connection.
func (s *Session) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Close waits for every handler (the HTTP server does not).
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.handlers.Add(1)
	s.mu.Unlock()
	defer s.handlers.Done()
	if !s.authorized(r.Header.Get("Proxy-Authorization")) {
		w.Header().Set("Proxy-Authenticate", `Basic realm="brig"`)
		http.Error(w, "brig's egress proxy: give the credentials of the proxy URL in this call's environment (HTTP_PROXY)", http.StatusProxyAuthRequired)
		return
	}
	if r.Method == http.MethodConnect {
		s.connect(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Host == "" {
		http.Error(w, "brig's egress proxy: send requests in proxy form (GET http://host/path) or CONNECT host:port", http.StatusBadRequest)
		return
	}
	if !strings.EqualFold(r.URL.Scheme, "http") {
		http.Error(w, "brig's egress proxy forwards http:// requests; for "+r.URL.Scheme+":// use CONNECT", http.StatusBadRequest)
		return
	}
	s.forward(w, r)
}

// authorized checks a Proxy-Authorization header against the session's
// token (any user name).
func (s *Session) authorized(h string) bool {
	if s.o.Token == "" {
		return true
	}
	enc, ok := strings.CutPrefix(h, "Basic ")
	if !ok {
		return false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
	if err != nil {
		return false
	}
	_, pass, _ := strings.Cut(string(raw), ":")
	return subtle.ConstantTimeCompare([]byte(pass), []byte(s.o.Token)) == 1
}

// splitTarget splits host:port; def is the port when none is given.
func splitTarget(hostport string, def int) (string, int, error) {
	host, ps, err := net.SplitHostPort(hostport)
	if err != nil {
		if def == 0 {
			return "", 0, fmt.Errorf("%q: want host:port", hostport)
		}
		return hostport, def, nil
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return "", 0, fmt.Errorf("%q: the port is not a number", hostport)
	}
	return host, port, nil
}

// refuse answers a request the proxy does not carry out, and records it.
func (s *Session) refuse(w http.ResponseWriter, rec jail.Connection, err error) {
	rec.Refused = err.Error()
	code := http.StatusForbidden
	msg := "brig refused the connection to %s: %s"
	var rf *refusal
	if !errors.As(err, &rf) {
		// Allowed, and the proxy's own connection failed: a server that
		// is down must not read as a policy refusal (new user).
		code, rec.Unreachable = http.StatusBadGateway, true
		msg = "brig's proxy could not connect to %s (the host is allowed; nothing answered there): %s"
	}
	s.record(rec)
	w.Header().Set("X-Brig-Refused", sanitiseHeader(rec.Refused))
	http.Error(w, fmt.Sprintf(msg, net.JoinHostPort(rec.Host, strconv.Itoa(rec.Port)), rec.Refused), code)
}

func sanitiseHeader(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// connect handles CONNECT host:port: decide, dial, answer 200 and tunnel.
func (s *Session) connect(w http.ResponseWriter, r *http.Request) {
	rec := jail.Connection{Via: "CONNECT", Start: time.Now()}
	host, port, err := splitTarget(r.Host, 0)
	rec.Host, rec.Port = shownHost(host), port
	if err != nil {
		s.refuse(w, rec, &refusal{err.Error()})
		return
	}
	v, err := s.decide(r.Context(), Request{Host: host, Port: port, Via: "CONNECT"})
	rec.Rule = v.Rule
	if err != nil {
		s.refuse(w, rec, err)
		return
	}
	up, ap, err := s.dial(r.Context(), rec.Host, port, v.Named)
	if err != nil {
		s.refuse(w, rec, err)
		return
	}
	rec.Addr = ap.String()
	sent, release, ok := s.trackUp(up)
	if !ok {
		return
	}
	defer release()
	client, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		_ = up.Close()
		s.refuse(w, rec, fmt.Errorf("take over the client connection: %w", err))
		return
	}
	defer s.done(client)
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		_ = up.Close()
		rec.Refused = "the client went away"
		s.record(rec)
		return
	}
	// What the client sent after its request (a TLS hello that did not
	// wait for the answer) was read into the server's buffer.
	if n := brw.Reader.Buffered(); n > 0 {
		b, _ := brw.Reader.Peek(n)
		if _, err := up.Write(b); err != nil {
			_ = up.Close()
			s.record(rec)
			return
		}
		rec.Up += int64(n)
	}
	s.tunnel(client, up, &rec, sent)
	s.record(rec)
}

// dialInfo rides on a forwarded request's context to the transport's dial.
type dialInfo struct {
	host  string
	port  int
	named bool
	rec   *jail.Connection
	conn  *countingConn // the upstream connection, once dialed
}

type dialKey struct{}

// forward handles a plain http:// request: decide, then a reverse proxy
// with a transport that dials through the checks and keeps no connection
// for a second request (each request is one recorded connection).
func (s *Session) forward(w http.ResponseWriter, r *http.Request) {
	rec := jail.Connection{Via: "HTTP", Start: time.Now()}
	host, port, err := splitTarget(r.URL.Host, 80)
	rec.Host, rec.Port = shownHost(host), port
	if err != nil {
		s.refuse(w, rec, &refusal{err.Error()})
		return
	}
	v, err := s.decide(r.Context(), Request{Host: host, Port: port, Via: "HTTP"})
	rec.Rule = v.Rule
	if err != nil {
		s.refuse(w, rec, err)
		return
	}
	info := &dialInfo{host: rec.Host, port: port, named: v.Named, rec: &rec}
	ctx := context.WithValue(r.Context(), dialKey{}, info)
	var failed error
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = "http"
			pr.Out.Host = "" // the URL's host, which is what was decided
			pr.Out.Header.Del("Proxy-Authorization")
			pr.Out.Header.Del("Proxy-Connection")
		},
		Transport: s.transport(),
		ErrorLog:  discardLogger,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			failed = err
		},
	}
	rp.ServeHTTP(&deadlineWriter{ResponseWriter: w, idle: s.p.o.IdleTimeout}, r.WithContext(ctx))
	if failed != nil {
		var rf *refusal
		if errors.As(failed, &rf) {
			s.refuse(w, rec, rf)
			return
		}
		if rec.Addr == "" {
			s.refuse(w, rec, failed)
			return
		}
		w.WriteHeader(http.StatusBadGateway)
	}
	info.finish(s)
}

// transport is a session's transport for plain http:// requests.
func (s *Session) transport() *http.Transport {
	return &http.Transport{
		Proxy:                  nil,
		DisableKeepAlives:      true,
		DisableCompression:     true,
		ResponseHeaderTimeout:  s.p.o.IdleTimeout,
		MaxResponseHeaderBytes: 1 << 20,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			info, _ := ctx.Value(dialKey{}).(*dialInfo)
			if info == nil {
				return nil, &refusal{"no decision for this connection"}
			}
			c, ap, err := s.dial(ctx, info.host, info.port, info.named)
			if err != nil {
				return nil, err
			}
			info.rec.Addr = ap.String()
			cc := &countingConn{Conn: c, idle: s.p.o.IdleTimeout, closed: make(chan struct{})}
			info.conn = cc
			if !s.track(cc) {
				return nil, &refusal{"the call ended"}
			}
			return cc, nil
		},
	}
}

// finish records a forwarded request's connection once the transport has
// closed it (it keeps none: DisableKeepAlives).
func (d *dialInfo) finish(s *Session) {
	if d.conn != nil {
		_ = d.conn.Close()
		s.untrack(d.conn)
		d.rec.Up, d.rec.Down = d.conn.counts()
	}
	s.record(*d.rec)
}

// countingConn counts the bytes of an upstream connection and gives every
// read and write the idle timeout as its deadline.
type countingConn struct {
	net.Conn
	idle     time.Duration
	mu       sync.Mutex
	up, down int64
	once     sync.Once
	closed   chan struct{}
}

func (c *countingConn) Read(b []byte) (int, error) {
	_ = c.Conn.SetReadDeadline(time.Now().Add(c.idle))
	n, err := c.Conn.Read(b)
	c.mu.Lock()
	c.down += int64(n)
	c.mu.Unlock()
	return n, err
}

func (c *countingConn) Write(b []byte) (int, error) {
	_ = c.Conn.SetWriteDeadline(time.Now().Add(c.idle))
	// Counted before the write: the host may answer, and the request be
	// recorded, before this goroutine runs again.
	c.mu.Lock()
	c.up += int64(len(b))
	c.mu.Unlock()
	n, err := c.Conn.Write(b)
	if n < len(b) {
		c.mu.Lock()
		c.up -= int64(len(b) - n)
		c.mu.Unlock()
	}
	return n, err
}

func (c *countingConn) Close() error {
	var err error
	c.once.Do(func() { err = c.Conn.Close(); close(c.closed) })
	return err
}

func (c *countingConn) counts() (up, down int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.up, c.down
}

// deadlineWriter gives each write to the client the idle timeout as its
// deadline: a client that stops reading a response is dropped, not waited
// for.
type deadlineWriter struct {
	http.ResponseWriter
	idle time.Duration
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	_ = http.NewResponseController(w.ResponseWriter).SetWriteDeadline(time.Now().Add(w.idle))
	return w.ResponseWriter.Write(b)
}

func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// chanListener hands connections the session accepted (and found to speak
// HTTP) to the HTTP server.
type chanListener struct {
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
	addr net.Addr
}

func (l *chanListener) push(c net.Conn) bool {
	select {
	case l.ch <- c:
		return true
	case <-l.done:
		return false
	}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }

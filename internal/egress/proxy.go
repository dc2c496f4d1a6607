// Package egress is brig's egress proxy: the only way out of a jailed call
// that is granted network. It serves one call at a time per Session, on a
// listener the supervisor gives it (a socket on the call's own loopback in
// its network namespace, or a per-call port on the host's loopback), and
// speaks the three protocols clients use: HTTP CONNECT tunnels, plain
// http:// requests in proxy form, and SOCKS5 (CONNECT only), all on the one
// port.
//
// For every connection it asks a Decider (the policy, and through it the
// user) whether the host may be reached, resolves the name itself (a call
// never resolves names: it has no resolver), refuses loopback, link-local,
// private, unique-local and reserved addresses unless the Decider says a
// rule names the host, checks the address it actually dials (the one it
// resolved; nothing is resolved twice), never dials its own listeners nor
// the endpoints it is told no call may reach, and records each connection:
// host, port, what decided it, bytes each way, duration.
//
// Limits keep a call from exhausting the supervisor: connections open at
// once, an idle timeout (no byte either way), a handshake timeout, and a
// write deadline that a client that stops reading runs into. A Session
// ends with its call: Close stops it, ends every connection and returns the
// records.
//
// The package decides nothing itself beyond those fixed refusals (the
// Decider owns policy), never adds credentials to anything it forwards, and
// does not look inside TLS: what a call sends to a host it may reach is its
// own business.
package egress

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"brig/jail"
)

// Request is one connection a call asks for.
type Request struct {
	// Host is what the client named: a lower-case name without a
	// trailing dot, or an IP literal (IPv6 without brackets).
	Host string
	Port int
	// Via is "CONNECT", "HTTP" or "SOCKS5".
	Via string
}

// Target is the request as host:port.
func (r Request) Target() string { return net.JoinHostPort(r.Host, strconv.Itoa(r.Port)) }

// Verdict is a Decider's answer.
type Verdict struct {
	Allow bool
	// Rule says what decided, for the record: a rule and where it is
	// written, a preset, the user's answer.
	Rule string
	// Named is set when a rule names exactly this host: only then may it
	// resolve to a loopback, link-local, private or reserved address.
	Named bool
	// Reason is why a connection is refused, for the client and the
	// record.
	Reason string
}

// Decider decides whether a call may reach a host. Decide may block (it
// may ask the user); ctx ends when the connection or the call does.
type Decider interface {
	Decide(ctx context.Context, r Request) Verdict
}

// DeciderFunc adapts a function to Decider.
type DeciderFunc func(ctx context.Context, r Request) Verdict

// Decide calls f.
func (f DeciderFunc) Decide(ctx context.Context, r Request) Verdict { return f(ctx, r) }

// Options configure a Proxy. Zero values take the defaults.
type Options struct {
	// MaxConns is how many connections one call may hold open at once
	// (held for a decision, tunnelling or forwarding); more are closed at
	// once and recorded as refused. Default 64.
	MaxConns int
	// MaxRecords is how many connections one call records in detail; the
	// rest are counted (see Session.Close). Default 1000.
	MaxRecords int
	// IdleTimeout closes a connection on which no byte moved either way
	// for this long, and one whose client stopped reading. Default 2m.
	IdleTimeout time.Duration
	// HandshakeTimeout bounds the time a client takes to say what it
	// wants (HTTP headers, the SOCKS5 greeting). Default 30s.
	HandshakeTimeout time.Duration
	// DialTimeout bounds connecting to a host. Default 30s.
	DialTimeout time.Duration
	// Never are host:port endpoints no call may reach, whatever a rule
	// says: the provider endpoint brig talks to with the user's key.
	Never []string
	// Lookup resolves a name to its addresses; default the system
	// resolver.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// Own reports whether an address is this machine's own (its
	// interfaces'); default ownAddr. Tests give a public-looking one.
	Own func(netip.Addr) bool
	// Logger gets diagnostics; default slog.Default().
	Logger *slog.Logger
}

// Proxy serves the network of jailed calls, one Session per call. It is
// safe for concurrent use.
type Proxy struct {
	o   Options
	log *slog.Logger

	mu  sync.Mutex
	own map[netip.AddrPort]int // host-side listeners of live sessions
}

// New returns a Proxy with o's settings.
func New(o Options) *Proxy {
	if o.MaxConns <= 0 {
		o.MaxConns = 64
	}
	if o.MaxRecords <= 0 {
		o.MaxRecords = 1000
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 2 * time.Minute
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = 30 * time.Second
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 30 * time.Second
	}
	if o.Own == nil {
		o.Own = ownAddr
	}
	if o.Lookup == nil {
		o.Lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	l := o.Logger
	if l == nil {
		l = slog.Default()
	}
	return &Proxy{o: o, log: l, own: map[netip.AddrPort]int{}}
}

// SessionOptions describe how one call reaches its Session.
type SessionOptions struct {
	// Decider decides each connection; nil refuses every one.
	Decider Decider
	// Token, when set, is the password a client must give (HTTP
	// Proxy-Authorization Basic, SOCKS5 user/password): a listener on the
	// host's loopback is reachable by every local user.
	Token string
	// OnHost says the listener is on the host's network: its address is
	// then one no call may be connected to (a loop through the proxy).
	OnHost bool
}

// Serve starts serving one call's connections on l until Close.
func (p *Proxy) Serve(l net.Listener, o SessionOptions) *Session {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Session{
		p: p, l: l, o: o, ctx: ctx, cancel: cancel,
		conns:   map[io.Closer]struct{}{},
		httpIn:  &chanListener{ch: make(chan net.Conn), done: make(chan struct{}), addr: l.Addr()},
		release: map[net.Conn]func(){},
	}
	if o.Decider == nil {
		s.o.Decider = DeciderFunc(func(context.Context, Request) Verdict {
			return Verdict{Reason: "no one decides this call's network"}
		})
	}
	if o.OnHost {
		s.own, _ = netip.ParseAddrPort(l.Addr().String())
		p.mu.Lock()
		p.own[s.own]++
		p.mu.Unlock()
	}
	s.srv = s.httpServer()
	s.wg.Add(2)
	go func() { defer s.wg.Done(); _ = s.srv.Serve(s.httpIn) }()
	go func() { defer s.wg.Done(); s.acceptLoop() }()
	return s
}

// DrainTimeout bounds how long Close waits for the tunnels to deliver what
// the call sent before it ended.
const DrainTimeout = 2 * time.Second

// Session is the proxy of one call.
type Session struct {
	p      *Proxy
	l      net.Listener
	o      SessionOptions
	ctx    context.Context
	cancel context.CancelFunc
	own    netip.AddrPort
	srv    *httpServer
	httpIn *chanListener
	wg     sync.WaitGroup // the accept loop and the connections it started
	// handlers are the HTTP server's requests in flight (added to only
	// while the session is open, under mu).
	handlers sync.WaitGroup
	// sending are the tunnels' client-to-host directions still copying:
	// Close lets them deliver what the call sent before it ended.
	sending sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	open    int                    // client connections open now
	conns   map[io.Closer]struct{} // every open connection, both sides
	release map[net.Conn]func()    // a client connection's slot, by the conn
	records []jail.Connection
	more    int // connections not recorded in detail (beyond MaxRecords)
}

// Addr is the listener's address.
func (s *Session) Addr() net.Addr { return s.l.Addr() }

// Close stops the session: no new connection, every open one ended, every
// decision still held given up. It returns what was recorded, and how many
// more connections there were beyond the records kept.
func (s *Session) Close() ([]jail.Connection, int) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, 0
	}
	s.closed = true
	open := make([]io.Closer, 0, len(s.conns))
	for c := range s.conns {
		open = append(open, c)
	}
	s.mu.Unlock()
	s.cancel()
	_ = s.l.Close()
	s.httpIn.Close()
	// The call's processes are gone, so each tunnel's client side ends
	// after the bytes they sent: let those reach the host (they were sent
	// to an allowed host during the call), for a moment at most.
	flushed := make(chan struct{})
	go func() { s.sending.Wait(); close(flushed) }()
	select {
	case <-flushed:
	case <-time.After(DrainTimeout):
	}
	_ = s.srv.Close()
	for _, c := range open {
		_ = c.Close()
	}
	s.wg.Wait()
	s.handlers.Wait()
	if s.o.OnHost {
		s.p.mu.Lock()
		if s.p.own[s.own]--; s.p.own[s.own] <= 0 {
			delete(s.p.own, s.own)
		}
		s.p.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.records, s.more
}

// track registers an open connection so Close can end it; it reports
// false (and closes c) when the session is closing.
func (s *Session) track(c io.Closer) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = c.Close()
		return false
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	return true
}

// trackUp tracks a dialed upstream connection like track, and counts it
// among those Close lets deliver what the client sent. sent ends that count
// (once the client's direction has ended; more calls do nothing); release,
// for a defer, ends it too and stops tracking up.
func (s *Session) trackUp(up io.Closer) (sent, release func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = up.Close()
		return nil, nil, false
	}
	s.conns[up] = struct{}{}
	s.sending.Add(1) // under mu: never after Close began waiting
	sent = sync.OnceFunc(s.sending.Done)
	return sent, func() { sent(); s.untrack(up) }, true
}

func (s *Session) untrack(c io.Closer) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// record keeps one connection's record.
func (s *Session) record(r jail.Connection) {
	if r.Duration == 0 && !r.Start.IsZero() {
		r.Duration = time.Since(r.Start)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.records) >= s.p.o.MaxRecords {
		s.more++
		return
	}
	s.records = append(s.records, r)
}

// acceptLoop takes the call's connections: each gets a slot (or is closed
// and recorded as refused when the call holds MaxConns already), then its
// first byte says whether it speaks SOCKS5 or HTTP.
func (s *Session) acceptLoop() {
	for {
		c, err := s.l.Accept()
		if err != nil {
			if s.ctx.Err() != nil {
				return
			}
			var ne net.Error
			if errorsAs(err, &ne) && ne.Timeout() {
				continue
			}
			s.p.log.Debug("egress: accept", "err", err)
			select {
			case <-s.ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		if !s.acquire(c) {
			s.record(jail.Connection{Refused: fmt.Sprintf("too many connections at once (the limit is %d per call)", s.p.o.MaxConns), Start: time.Now()})
			_ = c.Close()
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.sniff(c)
		}()
	}
}

// acquire takes a connection slot for c and tracks it.
func (s *Session) acquire(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.open >= s.p.o.MaxConns {
		return false
	}
	s.open++
	s.conns[c] = struct{}{}
	var once sync.Once
	s.release[c] = func() {
		once.Do(func() {
			s.mu.Lock()
			s.open--
			delete(s.conns, c)
			delete(s.release, c)
			s.mu.Unlock()
		})
	}
	return true
}

// done closes a client connection and gives its slot back.
func (s *Session) done(c net.Conn) {
	_ = c.Close()
	s.mu.Lock()
	rel := s.release[c]
	s.mu.Unlock()
	if rel != nil {
		rel()
	}
}

// sniff reads (without consuming) the first byte: 5 is SOCKS5, anything
// else goes to the HTTP server.
func (s *Session) sniff(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(s.p.o.HandshakeTimeout))
	b, err := peekByte(c)
	if err != nil {
		s.done(c)
		return
	}
	if b == 5 {
		s.socks(c)
		s.done(c)
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	if !s.httpIn.push(c) {
		s.done(c)
	}
}

// refusal is a connection the proxy will not make, and why.
type refusal struct{ why string }

func (r *refusal) Error() string { return r.why }

// decide normalises a request and asks the Decider, after the refusals
// that no rule can lift.
func (s *Session) decide(ctx context.Context, req Request) (Verdict, error) {
	host, err := normaliseHost(req.Host)
	if err != nil {
		return Verdict{}, &refusal{err.Error()}
	}
	req.Host = host
	if req.Port < 1 || req.Port > 65535 {
		return Verdict{}, &refusal{fmt.Sprintf("port %d is not a TCP port", req.Port)}
	}
	if s.never(req.Host, req.Port) {
		return Verdict{}, &refusal{"that is the endpoint of brig's model provider, which no call may reach"}
	}
	v := s.o.Decider.Decide(ctx, req)
	if !v.Allow {
		why := v.Reason
		if why == "" {
			why = "not allowed"
		}
		return v, &refusal{why}
	}
	return v, nil
}

// never reports whether host:port is one of Options.Never.
func (s *Session) never(host string, port int) bool {
	for _, n := range s.p.o.Never {
		h, p, err := net.SplitHostPort(n)
		if err != nil {
			continue
		}
		if strings.EqualFold(strings.TrimSuffix(h, "."), host) && p == strconv.Itoa(port) {
			return true
		}
	}
	return false
}

// neverAddr reports whether the proxy must not dial ap: one of its own
// host listeners, or an endpoint of Options.Never written as an address
// (or as localhost).
func (s *Session) neverAddr(ap netip.AddrPort) bool {
	s.p.mu.Lock()
	_, own := s.p.own[ap]
	s.p.mu.Unlock()
	if own {
		return true
	}
	for _, n := range s.p.o.Never {
		h, p, err := net.SplitHostPort(n)
		if err != nil || p != strconv.Itoa(int(ap.Port())) {
			continue
		}
		a, err := netip.ParseAddr(h)
		if err == nil && a.Unmap() == ap.Addr() {
			return true
		}
		// An endpoint on this machine (a local gateway on loopback) is
		// reached through any of the machine's own addresses too, when
		// it listens on all of them.
		if (strings.EqualFold(h, "localhost") || err == nil && a.IsLoopback()) && ownAddr(ap.Addr()) {
			return true
		}
	}
	return false
}

// ownAddr reports whether a is a loopback address or one of this
// machine's interface addresses.
func ownAddr(a netip.Addr) bool {
	if a.IsLoopback() || a.IsUnspecified() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return true // unknown: treat it as the machine's own, and refuse
	}
	for _, x := range addrs {
		if p, err := netip.ParsePrefix(x.String()); err == nil && p.Addr().Unmap() == a {
			return true
		}
	}
	return false
}

// dial connects to req's host: its addresses as the proxy resolves them
// (an IP literal as it is), each checked before it is dialed. Addresses
// that are not public are skipped unless named; nothing is resolved twice,
// so what was checked is what is dialed.
func (s *Session) dial(ctx context.Context, host string, port int, named bool) (net.Conn, netip.AddrPort, error) {
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		lctx, cancel := context.WithTimeout(ctx, s.p.o.DialTimeout)
		found, err := s.p.o.Lookup(lctx, host)
		cancel()
		if err != nil {
			return nil, netip.AddrPort{}, &refusal{fmt.Sprintf("the proxy could not resolve %s: %v", host, unwrapDNS(err))}
		}
		addrs = found
	}
	var why []string
	var lastErr error
	d := net.Dialer{Timeout: s.p.o.DialTimeout}
	for _, a := range addrs {
		a = a.Unmap()
		ap := netip.AddrPortFrom(a, uint16(port))
		if s.neverAddr(ap) {
			why = append(why, fmt.Sprintf("%s is brig's own (the proxy, or its model provider)", ap))
			continue
		}
		if kind := internal(a); kind != "" && !named {
			why = append(why, fmt.Sprintf("%s is a %s address", a, kind))
			continue
		}
		// A public address of this machine's own reaches every service
		// listening on all addresses (a Docker port, a notebook) as
		// loopback would, through any name that resolves to it (red
		// team, 2026-12-02: 1.2.3.4.nip.io).
		if !named && s.p.o.Own(a) {
			why = append(why, fmt.Sprintf("%s is this machine's own address", a))
			continue
		}
		c, err := d.DialContext(ctx, "tcp", ap.String())
		if err == nil {
			return c, ap, nil
		}
		lastErr = err
	}
	switch {
	case lastErr != nil:
		return nil, netip.AddrPort{}, fmt.Errorf("connect to %s: %w", net.JoinHostPort(host, strconv.Itoa(port)), lastErr)
	case len(why) > 0:
		return nil, netip.AddrPort{}, &refusal{fmt.Sprintf("%s: %s; only a rule naming the host exactly may reach such addresses", host, strings.Join(why, ", "))}
	}
	return nil, netip.AddrPort{}, &refusal{fmt.Sprintf("%s has no address", host)}
}

// normaliseHost lower-cases a host, drops brackets and a trailing dot, and
// refuses what is no host name or address.
func normaliseHost(h string) (string, error) {
	h = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if h == "" {
		return "", fmt.Errorf("no host given")
	}
	if a, err := netip.ParseAddr(h); err == nil {
		if a.Zone() != "" {
			return "", fmt.Errorf("%q: an address with a zone is refused", h)
		}
		return a.Unmap().String(), nil
	}
	if len(h) > 253 {
		return "", fmt.Errorf("the host name is longer than 253 characters")
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return "", fmt.Errorf("%q is not a host name", h)
		}
	}
	// An empty label (host.., .host, a..b) is refused: the name the
	// resolver takes would differ from the one rules and Never compare.
	if strings.HasPrefix(h, ".") || strings.HasSuffix(h, ".") || strings.Contains(h, "..") {
		return "", fmt.Errorf("%q is not a host name (an empty label)", h)
	}
	return h, nil
}

// shownHost is the host a connection is recorded under: normalised, or,
// when it is not a host name, quoted and cut short, so that what a call
// sent (newlines, say) shows as data in brig's notes and the audit log.
func shownHost(raw string) string {
	if h, err := normaliseHost(raw); err == nil {
		return h
	}
	if len(raw) > 80 {
		raw = raw[:80]
	}
	return strconv.QuoteToASCII(raw)
}

// discardLogger is where the HTTP server's own complaints go (a client's
// malformed request must not reach the terminal).
var discardLogger = log.New(io.Discard, "", 0)

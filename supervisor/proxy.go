package supervisor

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"

	"brig/internal/egress"
	"brig/jail"
)

// callProxy is one call's session of the egress proxy: started before the
// call, closed when it ends (with the call's processes all dead).
type callProxy struct {
	log *slog.Logger

	mu      sync.Mutex
	sess    *egress.Session
	closed  bool
	records []jail.Connection
}

// startProxy prepares the way out of a call with network: with a private
// network namespace, the proxy serves the listener init makes there
// (handed over through the Parent as soon as it exists); on the host's
// network, a fresh listener on the host's loopback whose port alone
// Landlock lets the call connect to, and a token the call's clients must
// give (every local user can reach that port). Either way the call's
// environment points its clients at the proxy.
func (s *Supervisor) startProxy(c *child, spec *jail.Spec, p *plan, d egress.Decider) (*callProxy, error) {
	px := &callProxy{log: s.log}
	if !spec.Network {
		return px, nil
	}
	if p.opts.PrivateNet {
		spec.Env = egress.ClientEnv(spec.Env, jail.NamespaceProxyPort, "")
		c.parent.OnProxy = func(f *os.File) {
			defer f.Close()
			l, err := net.FileListener(f)
			if err != nil {
				s.log.Error("egress: the listener init sent cannot be used; the call has no network", "err", err)
				return
			}
			px.serve(s.egress, l, egress.SessionOptions{Decider: d})
		}
		return px, nil
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the call's egress proxy on the host's loopback: %w", err)
	}
	var tok [24]byte
	if _, err := rand.Read(tok[:]); err != nil {
		l.Close()
		return nil, fmt.Errorf("egress proxy token: %w", err)
	}
	token := hex.EncodeToString(tok[:])
	port := l.Addr().(*net.TCPAddr).Port
	spec.Env = egress.ClientEnv(spec.Env, port, token)
	p.opts.ProxyPort = port
	px.serve(s.egress, l, egress.SessionOptions{Decider: d, Token: token, OnHost: true})
	return px, nil
}

func (px *callProxy) serve(e *egress.Proxy, l net.Listener, o egress.SessionOptions) {
	px.mu.Lock()
	defer px.mu.Unlock()
	if px.closed || px.sess != nil {
		l.Close()
		return
	}
	px.sess = e.Serve(l, o)
}

// close stops the session (ending every connection still open) and
// returns its records; later calls return the same records.
func (px *callProxy) close() []jail.Connection {
	px.mu.Lock()
	if px.closed {
		defer px.mu.Unlock()
		return px.records
	}
	px.closed = true
	sess := px.sess
	px.mu.Unlock()
	if sess == nil {
		return nil
	}
	recs, more := sess.Close()
	if more > 0 {
		px.log.Warn("egress: a call made more connections than are recorded in detail", "recorded", len(recs), "more", more)
	}
	px.mu.Lock()
	px.records = recs
	px.mu.Unlock()
	return recs
}

package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"brig/internal/egress"
	"brig/jail"
	"brig/policy"
)

// NetRequest is a connection a running call asked the egress proxy for,
// which no rule decides: the proxy holds it while the user is asked.
type NetRequest struct {
	Host string `json:"host"`
	Port int    `json:"port"`
	Via  string `json:"via"` // CONNECT, HTTP or SOCKS5
}

// netDecider decides the connections of one call through the egress
// proxy with the policy's host rules (the same decision web_fetch gets);
// a host no rule decides is asked of the user once per call (connections
// to it that come meanwhile wait for the same answer). An answer "once"
// holds for the rest of the call; "session" and "always" become rules.
// For web_fetch, whose host was decided before it ran, only that host is
// let through and nothing is asked.
type netDecider struct {
	e    *Executor
	id   string
	tool string
	args json.RawMessage
	// only, when set, is the one host the call may reach (web_fetch), as
	// the verdict before the call allowed it.
	only *egress.Verdict
	host string
	// grant is the jail the asking call runs in, shown with the question.
	grant *jail.Spec

	mu      sync.Mutex
	decided map[string]egress.Verdict // this call's answers, by answerKey
	pending map[string]chan struct{}  // questions in flight, by answerKey
	// asking is the time this call's questions took to be answered,
	// each from when it waited its turn (askNet asks one at a time).
	asking time.Duration
}

// waited is how long the call's questions about hosts took to be
// answered, in all.
func (d *netDecider) waited() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.asking
}

func (e *Executor) netDecider(id, tool string, args json.RawMessage) *netDecider {
	return &netDecider{e: e, id: id, tool: tool, args: args, decided: map[string]egress.Verdict{}, pending: map[string]chan struct{}{}}
}

// fixedHost limits the decider to host, allowed as v says (web_fetch).
func (d *netDecider) fixedHost(host string, v policy.Verdict) *netDecider {
	nd := d.e.Policy.DecideNet(host)
	ev := egress.Verdict{Allow: true, Rule: nd.Rule, Named: nd.Named && nd.Tier == policy.Allow}
	if nd.Tier != policy.Allow {
		ev.Rule, ev.Named = "allowed by the user for this fetch", answerNames(host)
	}
	d.only, d.host = &ev, policy.NormalHost(host)
	return d
}

// Decide implements egress.Decider.
func (d *netDecider) Decide(ctx context.Context, r egress.Request) egress.Verdict {
	host := policy.NormalHost(r.Host)
	if d.only != nil {
		if host == d.host {
			return *d.only
		}
		return egress.Verdict{Reason: fmt.Sprintf("%s may reach only %s, the host it was approved for", d.tool, d.host)}
	}
	nd := d.e.Policy.DecideNet(host)
	switch nd.Tier {
	case policy.Allow:
		return egress.Verdict{Allow: true, Named: nd.Named, Rule: nd.Rule}
	case policy.Deny:
		return egress.Verdict{Reason: nd.Reason, Rule: nd.Rule}
	}
	key := answerKey(host, r.Port)
	for {
		d.mu.Lock()
		if v, ok := d.decided[key]; ok {
			d.mu.Unlock()
			return v
		}
		if ch, ok := d.pending[key]; ok {
			d.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return egress.Verdict{Reason: "the call ended while the user was being asked about " + host}
			}
		}
		ch := make(chan struct{})
		d.pending[key] = ch
		d.mu.Unlock()
		v := d.ask(ctx, r, host)
		d.mu.Lock()
		if ctx.Err() == nil || v.Allow {
			d.decided[key] = v
		}
		delete(d.pending, key)
		close(ch)
		d.mu.Unlock()
		return v
	}
}

// ask puts one host to the user (the approver), with the call that asked.
func (d *netDecider) ask(ctx context.Context, r egress.Request, host string) egress.Verdict {
	v := d.e.Policy.Decide(policy.Call{Tool: d.tool, Effect: policy.EffectNetwork, Host: host})
	if v.Net != nil && v.Tier != policy.Ask {
		// Decided since (an answer to another call, a saved rule).
		return egress.Verdict{Allow: v.Tier == policy.Allow, Named: v.Net.Named, Rule: v.Net.Rule, Reason: v.Net.Reason}
	}
	asked := time.Now()
	ap, err := d.e.askNet(ctx, ApprovalRequest{ToolUseID: d.id, Tool: d.tool, Args: d.args, Verdict: v, Grant: d.grant,
		Net: &NetRequest{Host: host, Port: r.Port, Via: r.Via}})
	d.mu.Lock()
	d.asking += time.Since(asked)
	d.mu.Unlock()
	if err != nil {
		return egress.Verdict{Reason: fmt.Sprintf("no rule allows %s and the question to the user was cut short (%v)", host, err)}
	}
	by := ap.By
	if by == "" {
		by = "the user"
	}
	allowed := ap.Answer == AnswerOnce || ap.Answer == AnswerSession || ap.Answer == AnswerAlways
	switch {
	case allowed && answerNames(host):
		// No rule is offered for an address or localhost (a Net rule
		// holds for every port): whatever the answer, it is this port's,
		// for this call.
		return egress.Verdict{Allow: true, Named: true, Rule: fmt.Sprintf("allowed for this call, port %d only, by %s", r.Port, by)}
	case ap.Answer == AnswerOnce:
		return egress.Verdict{Allow: true, Rule: "allowed for this call by " + by}
	case allowed:
		always := ap.Answer == AnswerAlways
		if err := d.e.Policy.Remember(context.WithoutCancel(ctx), always, v.Always...); err != nil {
			d.e.logger().Warn("could not remember the approval of a host", "host", host, "err", err)
		} else {
			d.e.auditRules(context.WithoutCancel(ctx), d.id, v.Always, always)
		}
		how := "allowed for this session by " + by
		if always {
			how = "allowed by " + by + ", saved as " + policy.NetRule(host)
		}
		// Like an answer given once: the user saw a name, which may
		// resolve anywhere, so it reaches public addresses only (the
		// rule kept from this answer does the same: policy.NetDecision).
		return egress.Verdict{Allow: true, Rule: how}
	}
	if by == "no one" {
		return egress.Verdict{Reason: fmt.Sprintf("no rule allows %s and this run cannot ask anyone; the user can allow it with --allow-host %s or a rule %s in their brig config", host, host, policy.NetRule(host))}
	}
	why := "the user refused " + host
	if ap.Message != "" {
		why += ": " + ap.Message
	}
	return egress.Verdict{Reason: why}
}

// answerNames reports whether the user, answering about host, saw where it
// leads: an IP address, or localhost. Only then does an answer given once
// let the host reach a loopback or private address; a name could resolve
// anywhere (a rule naming it is needed for that).
func answerNames(host string) bool { return policy.NamesAddress(host) }

// answerKey is what an answer of this call holds for: a name's every port
// (it reaches public addresses only), an address's or localhost's one
// port, the one the question showed (policy.NamesAddress).
func answerKey(host string, port int) string {
	if answerNames(host) {
		return net.JoinHostPort(host, strconv.Itoa(port))
	}
	return host
}

// askNet asks the approver about a host, one question at a time for the
// whole executor: connections of a call arrive together, and a prompt
// shows one question.
func (e *Executor) askNet(ctx context.Context, req ApprovalRequest) (Approval, error) {
	e.mu.Lock()
	if e.netAsk == nil {
		e.netAsk = make(chan struct{}, 1)
	}
	sem := e.netAsk
	e.mu.Unlock()
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return Approval{}, ctx.Err()
	}
	defer func() { <-sem }()
	return e.ask(ctx, req)
}

package agent

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"brig/internal/auditlog"
	"brig/internal/egress"
	"brig/policy"
)

// netSite is a loopback HTTP server that counts the requests it serves.
func netSite(t *testing.T) (url string, hits *atomic.Int64) {
	t.Helper()
	hits = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "registry says hi")
	}))
	t.Cleanup(srv.Close)
	return srv.URL, hits
}

// curlTwice fetches url twice through the call's proxy (--noproxy ”:
// curl would otherwise go straight to a loopback address, which the
// call's own loopback does not have).
func curlTwice(url string) string {
	return fmt.Sprintf("curl -s --noproxy '' %s/a; echo; curl -s --noproxy '' %s/b; echo", url, url)
}

func bash(t *testing.T, e *execEnv, cmd string) Outcome {
	t.Helper()
	if e.ex.Policy.Mode() == policy.ModeAsk {
		// The command itself is allowed, so only the host is asked about.
		if err := e.ex.Policy.Remember(context.Background(), false, "Bash(curl:*)", "Bash(echo:*)"); err != nil {
			t.Fatal(err)
		}
	}
	o := e.ex.Execute(context.Background(), "c1", "bash", args(t, map[string]any{"command": cmd}), nil)
	if o.Err != nil {
		t.Fatalf("outcome %+v", o)
	}
	return o
}

// A host no rule decides is asked about once per call, with the host, the
// port and the call that asked; "once" lets every connection of that call
// through and no other call.
func TestNetworkHostAskedOncePerCall(t *testing.T) {
	url, hits := netSite(t)
	e := newExecEnv(t, policy.ModeAsk)
	e.ap.answers = []Approval{{Answer: AnswerOnce}}
	o := bash(t, e, curlTwice(url))
	if strings.Count(o.Result.Text, "registry says hi") != 2 || hits.Load() != 2 {
		t.Fatalf("two fetches through the proxy: %q (%d hits)", o.Result.Text, hits.Load())
	}
	if len(e.ap.asked) != 1 {
		t.Fatalf("asked %d times; want once: %+v", len(e.ap.asked), e.ap.asked)
	}
	q := e.ap.asked[0]
	if q.Net == nil || q.Net.Host != "127.0.0.1" || fmt.Sprint(q.Net.Port) != strings.TrimPrefix(url[strings.LastIndex(url, ":"):], ":") ||
		q.Tool != "bash" || !strings.Contains(string(q.Args), "curl") || q.ToolUseID != "c1" ||
		len(q.Verdict.Always) != 0 {
		// An address: the answer holds for its port and this call only,
		// so no rule (which would hold for every port) is offered.
		t.Fatalf("the question: %+v (net %+v)", q, q.Net)
	}
	// The question shows the jail the asking call runs in (without it the
	// terminal said the connection "runs in brig itself").
	if q.Grant == nil || !q.Grant.Network || q.Grant.Workspace == "" {
		t.Fatalf("the question carries no grant of the running call: %+v", q.Grant)
	}
	if len(o.Net) != 2 || o.Net[0].Rule != "allowed for this call, port "+fmt.Sprint(q.Net.Port)+" only, by the user" || o.Net[0].Down == 0 || o.Net[0].Via != "HTTP" {
		t.Fatalf("connections %+v", o.Net)
	}
	// The next call asks again: "once" was for that call.
	e.ap.answers = []Approval{{Answer: AnswerDeny}}
	o = bash(t, e, curlTwice(url))
	if len(e.ap.asked) != 2 || hits.Load() != 2 {
		t.Fatalf("asked %d, hits %d; want a second question and no fetch", len(e.ap.asked), hits.Load())
	}
	if !strings.Contains(o.Result.Text, "[brig: the network proxy refused 127.0.0.1:") || !strings.Contains(o.Result.Text, "the user refused 127.0.0.1") ||
		!strings.Contains(o.Result.Text, "No host is allowed without asking the user") {
		t.Fatalf("the note to the model: %s", o.Result.Text)
	}
}

// The time the user took to answer about a host counts as waited, not as
// the call's own.
func TestNetworkQuestionCountsAsWaited(t *testing.T) {
	url, hits := netSite(t)
	e := newExecEnv(t, policy.ModeAsk)
	const think = 300 * time.Millisecond
	e.ap.think = think
	e.ap.answers = []Approval{{Answer: AnswerOnce}}
	o := bash(t, e, curlTwice(url))
	if len(e.ap.asked) != 1 || hits.Load() != 2 {
		t.Fatalf("asked %d, hits %d; want one question and two fetches", len(e.ap.asked), hits.Load())
	}
	if o.Waited < think || o.Duration < o.Waited {
		t.Fatalf("waited %v of %v; the answer took %v", o.Waited, o.Duration, think)
	}
}

// "session" answers once for the rest of the session: no question for the
// next call. (A name's answer reaches public addresses only, which the
// tests may not use: the decider is asked directly.)
func TestNetworkSessionAnswer(t *testing.T) {
	e := newExecEnv(t, policy.ModeAsk)
	e.ap.answers = []Approval{{Answer: AnswerSession}}
	req := egress.Request{Host: "pkg.example.org", Port: 443, Via: "CONNECT"}
	v := e.ex.netDecider("c1", "bash", nil).Decide(context.Background(), req)
	if !v.Allow || v.Named || len(e.ap.asked) != 1 || !slices.Equal(e.ap.asked[0].Verdict.Always, []string{"Net(domain:pkg.example.org)"}) {
		t.Fatalf("first call: %+v, asked %+v", v, e.ap.asked)
	}
	v = e.ex.netDecider("c2", "bash", nil).Decide(context.Background(), egress.Request{Host: "pkg.example.org", Port: 8443, Via: "CONNECT"})
	if !v.Allow || len(e.ap.asked) != 1 || !strings.Contains(v.Rule, "Net(domain:pkg.example.org)") {
		t.Fatalf("next call: %+v, asked %d", v, len(e.ap.asked))
	}
}

// An answer about an address (or localhost) holds for the port the
// question showed, and for that call only (red team, round 5: "once" for
// localhost:3000, a dev server, let the same call read every other
// loopback service, such as localhost:9876/secret).
func TestNetworkAddressAnswerHoldsForItsPortOnly(t *testing.T) {
	devURL, devHits := netSite(t)
	secretURL, secretHits := netSite(t)
	e := newExecEnv(t, policy.ModeAsk)
	e.ap.answers = []Approval{{Answer: AnswerOnce}, {Answer: AnswerDeny}}
	o := bash(t, e, fmt.Sprintf("curl -s --noproxy '' %s/a; echo; curl -s --noproxy '' %s/secret; echo", devURL, secretURL))
	if devHits.Load() != 1 || secretHits.Load() != 0 {
		t.Fatalf("hits: the approved port %d, the other %d; want 1 and 0: %s", devHits.Load(), secretHits.Load(), o.Result.Text)
	}
	if len(e.ap.asked) != 2 || e.ap.asked[1].Net == nil || fmt.Sprint(e.ap.asked[1].Net.Port) != secretURL[strings.LastIndex(secretURL, ":")+1:] {
		t.Fatalf("want a second question, about the other port: %+v", e.ap.asked)
	}
	// An answer of "session" (which no prompt offers for an address)
	// saves no rule: it is the port's, for that call.
	e.ap.answers = []Approval{{Answer: AnswerSession}, {Answer: AnswerDeny}}
	bash(t, e, fmt.Sprintf("curl -s --noproxy '' %s/a; echo", devURL))
	bash(t, e, fmt.Sprintf("curl -s --noproxy '' %s/a; echo", devURL))
	if len(e.ap.asked) != 4 || devHits.Load() != 2 {
		t.Fatalf("a session answer about an address was kept: asked %d, hits %d", len(e.ap.asked), devHits.Load())
	}
	// Control: the same call with both answered reaches both.
	e.ap.answers = []Approval{{Answer: AnswerOnce}, {Answer: AnswerOnce}}
	bash(t, e, fmt.Sprintf("curl -s --noproxy '' %s/a; echo; curl -s --noproxy '' %s/secret; echo", devURL, secretURL))
	if devHits.Load() != 3 || secretHits.Load() != 1 {
		t.Fatalf("control: hits %d and %d; want 3 and 1", devHits.Load(), secretHits.Load())
	}
}

// A rule decides without asking; a deny rule beats an allow rule, and the
// model is told which host was refused and which are allowed.
func TestNetworkRulesDecideWithoutAsking(t *testing.T) {
	url, hits := netSite(t)
	e := newExecEnvConfig(t, policy.ModeAsk, `[permissions]
allow = ["Net(domain:127.0.0.1)", "Net(domain:pkg.example.org)"]
[sandbox]
net_presets = ["go"]
`)
	o := bash(t, e, curlTwice(url))
	if len(e.ap.asked) != 0 || hits.Load() != 2 || !strings.Contains(o.Net[0].Rule, "Net(domain:127.0.0.1) (") {
		t.Fatalf("asked %d, hits %d, connections %+v", len(e.ap.asked), hits.Load(), o.Net)
	}

	e = newExecEnvConfig(t, policy.ModeAsk, `[permissions]
allow = ["Net(domain:127.0.0.1)", "Net(domain:pkg.example.org)"]
deny = ["Net(domain:127.0.0.1)"]
[sandbox]
net_presets = ["go"]
`)
	o = bash(t, e, curlTwice(url))
	if len(e.ap.asked) != 0 || hits.Load() != 2 {
		t.Fatalf("a denied host: asked %d, hits %d", len(e.ap.asked), hits.Load())
	}
	for _, want := range []string{"refused 127.0.0.1:", "deny by Net(domain:127.0.0.1)", "Allowed without asking: 127.0.0.1, pkg.example.org, proxy.golang.org, sum.golang.org"} {
		if !strings.Contains(o.Result.Text, want) {
			t.Errorf("the note lacks %q:\n%s", want, o.Result.Text)
		}
	}
}

// A run that cannot ask (brig -p) refuses the host and tells the model how
// the user can allow it.
func TestNetworkRefusedWithoutAnyoneToAsk(t *testing.T) {
	url, hits := netSite(t)
	e := newExecEnv(t, policy.ModeAuto)
	e.ap.answers = []Approval{{Answer: AnswerDeny, By: "no one"}}
	o := e.ex.Execute(context.Background(), "c1", "bash", args(t, map[string]any{"command": curlTwice(url)}), nil)
	if hits.Load() != 0 || len(e.ap.asked) != 1 {
		t.Fatalf("hits %d, asked %d", hits.Load(), len(e.ap.asked))
	}
	// Auto mode runs the command without asking, not the host: a host is
	// beyond every profile.
	if q := e.ap.asked[0]; q.Net == nil || len(q.Verdict.Beyond) == 0 {
		t.Fatalf("the question %+v", q)
	}
	if !strings.Contains(o.Result.Text, "this run cannot ask anyone; the user can allow it with --allow-host 127.0.0.1 or a rule Net(domain:127.0.0.1)") {
		t.Fatalf("the note: %s", o.Result.Text)
	}
}

// Every connection reaches the audit log with the call's record, and the
// session's call record.
func TestNetworkConnectionsAudited(t *testing.T) {
	url, _ := netSite(t)
	e := newExecEnvConfig(t, policy.ModeAsk, "[permissions]\nallow = [\"Net(domain:127.0.0.1)\"]\n")
	e.ex.Audit = auditlog.Open(filepath.Join(t.TempDir(), "audit"))
	defer e.ex.Audit.Close()
	o := bash(t, e, curlTwice(url))
	if o.Audit == nil {
		t.Fatal("no audit record")
	}
	var got []auditlog.Connection
	if err := e.ex.Audit.Records(func(r auditlog.Record) error {
		if r.Kind == auditlog.KindCall && r.Call.ID == "c1" {
			got = r.Call.Connections
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Host != "127.0.0.1" || got[0].Down == 0 || got[0].Up == 0 || !strings.Contains(got[0].Rule, "Net(domain:127.0.0.1)") || got[0].Addr == "" {
		t.Fatalf("audit connections %+v", got)
	}
}

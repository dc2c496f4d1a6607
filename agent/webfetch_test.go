package agent

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"brig/jail"
	"brig/policy"
	"brig/tools"
)

// loopbackSite serves pages on 127.0.0.1 and redirects to other loopback
// host names (localhost, 127.0.0.2) on the same port.
func loopbackSite(t *testing.T) (base, port string) {
	t.Helper()
	mux := http.NewServeMux()
	var srvPort string
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<h1>Landing</h1><p>served to " + r.Host + "</p>"))
	})
	mux.HandleFunc("/same", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/page", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/to-allowed", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost:"+srvPort+"/page", http.StatusFound)
	})
	mux.HandleFunc("/to-denied", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.2:"+srvPort+"/page", http.StatusFound)
	})
	mux.HandleFunc("/to-file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		chunk := []byte(strings.Repeat("y", 1<<16))
		for i := 0; i < (tools.MaxFetchBodyBytes>>16)+8; i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	_, srvPort, _ = net.SplitHostPort(srv.Listener.Addr().String())
	return srv.URL, srvPort
}

// TestWebFetchThroughJail fetches from a loopback server in the jail the
// policy compiles (network, no filesystem rights), with redirects decided
// hop by hop.
func TestWebFetchThroughJail(t *testing.T) {
	base, _ := loopbackSite(t)
	e := newExecEnvConfig(t, policy.ModeAsk, `[permissions]
allow = ["WebFetch(domain:127.0.0.1)", "WebFetch(domain:localhost)"]
`)
	ctx := context.Background()
	for _, tc := range []struct {
		path    string
		isError bool
		want    []string
	}{
		{path: "/page", want: []string{"# Landing", "served to 127.0.0.1"}},
		{path: "/same", want: []string{"# Landing"}},
		{path: "/to-allowed", want: []string{"# Landing", "served to localhost"}},
		{path: "/to-denied", isError: true, want: []string{"redirected to http://127.0.0.2:", "on host 127.0.0.2", "not followed", "call web_fetch with that URL"}},
		{path: "/to-file", isError: true, want: []string{"redirected to file:///etc/passwd", "http and https URLs only"}},
		{path: "/loop", isError: true, want: []string{"stopped after 5 redirects"}},
		{path: "/huge", want: []string{"only the first 5 MiB were read", "output truncated"}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			o := e.ex.Execute(ctx, "w", "web_fetch", args(t, map[string]string{"url": base + tc.path}), nil)
			if o.Err != nil || o.Result.IsError != tc.isError {
				t.Fatalf("outcome %+v", o)
			}
			for _, w := range tc.want {
				if !strings.Contains(o.Result.Text, w) {
					t.Errorf("missing %q in:\n%s", w, o.Result.Text)
				}
			}
			if len(o.Result.Text) > tools.MaxFetchTextBytes {
				t.Errorf("text of %d bytes", len(o.Result.Text))
			}
		})
	}
	if len(e.ap.asked) != 0 {
		t.Fatalf("allowed hosts asked the user: %+v", e.ap.asked)
	}
	// The grant: network, and no right on the workspace or home.
	o := e.ex.Execute(ctx, "w", "web_fetch", args(t, map[string]string{"url": base + "/page"}), nil)
	if o.Grant == nil || !o.Grant.Network {
		t.Fatalf("grant %+v", o.Grant)
	}
	if slices.ContainsFunc(o.Grant.Paths, func(r jail.PathRule) bool {
		return r.Access != jail.Read || strings.HasPrefix(e.ws, r.Path) || strings.HasPrefix(r.Path, e.home)
	}) {
		t.Fatalf("web_fetch grant has filesystem rights: %+v", o.Grant.Paths)
	}
	// A refused scheme never reaches the policy.
	o = e.ex.Execute(ctx, "w", "web_fetch", args(t, map[string]string{"url": "file:///etc/passwd"}), nil)
	if !o.Result.IsError || o.Verdict != nil || !strings.Contains(o.Result.Text, "http and https URLs only") {
		t.Fatalf("file:// %+v", o)
	}
}

// TestWebFetchAsksOnceForAHost: without a rule the host is asked about;
// an approved call follows a redirect to the same host without asking again.
func TestWebFetchAsksOnceForAHost(t *testing.T) {
	base, _ := loopbackSite(t)
	e := newExecEnv(t, policy.ModeAsk)
	e.ap.answers = []Approval{{Answer: AnswerOnce}}
	o := e.ex.Execute(context.Background(), "w", "web_fetch", args(t, map[string]string{"url": base + "/same"}), nil)
	if o.Err != nil || o.Result.IsError || !strings.Contains(o.Result.Text, "# Landing") {
		t.Fatalf("outcome %+v", o)
	}
	if len(e.ap.asked) != 1 || e.ap.asked[0].Verdict.Call.Host != "127.0.0.1" || len(e.ap.asked[0].Verdict.Always) != 0 {
		t.Fatalf("asked %+v", e.ap.asked)
	}
}

// TestWebFetchRedirectToAnotherPortIsNotFollowed: a fetch of an address
// the user allowed once reaches that port only; a redirect to another
// port of the same address is not followed (red team, round 5: an answer
// about localhost:3000 must not open every loopback service). Control: a
// redirect to the same port is followed.
func TestWebFetchRedirectToAnotherPortIsNotFollowed(t *testing.T) {
	secret, secretHits := netSite(t)
	hop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, secret+"/secret", http.StatusFound)
		case "/here":
			http.Redirect(w, r, "/page", http.StatusFound)
		default:
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("dev page"))
		}
	}))
	t.Cleanup(hop.Close)
	e := newExecEnv(t, policy.ModeAsk)
	e.ap.answers = []Approval{{Answer: AnswerOnce}, {Answer: AnswerOnce}}
	o := e.ex.Execute(context.Background(), "w", "web_fetch", args(t, map[string]string{"url": hop.URL + "/away"}), nil)
	if secretHits.Load() != 0 || !strings.Contains(o.Result.Text, "The redirect was not followed") {
		t.Fatalf("the redirect to another port was followed (%d hits): %s", secretHits.Load(), o.Result.Text)
	}
	o = e.ex.Execute(context.Background(), "w2", "web_fetch", args(t, map[string]string{"url": hop.URL + "/here"}), nil)
	if o.Result.IsError || !strings.Contains(o.Result.Text, "dev page") {
		t.Fatalf("control: the redirect to the same port: %s", o.Result.Text)
	}
}

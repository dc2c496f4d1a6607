//go:build !brig_light_worker && !brig_carrier

package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"brig/internal/egress"
)

func fetchServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<html><head><title>T</title><style>body{color:red}</style><script>alert("x")</script></head>
<body><nav><a href="/home">Home</a></nav><h1>Hello</h1><p>Some <b>bold</b> text and <a href="/docs">docs</a>.</p>
<ul><li>one</li><li>two</li></ul><footer>footer junk</footer></body></html>`))
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
		w.Write([]byte("caf\xe9"))
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"a":1}`))
	})
	mux.HandleFunc("/bin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(bytes.Repeat([]byte{0, 1, 2}, 100))
	})
	mux.HandleFunc("/png", func(w http.ResponseWriter, r *http.Request) {
		img := image.NewRGBA(image.Rect(0, 0, 3000, 10))
		img.Set(1, 1, color.RGBA{R: 255, A: 255})
		w.Header().Set("Content-Type", "image/png")
		png.Encode(w, img)
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		line := bytes.Repeat([]byte("x"), 1023)
		for i := 0; i < (MaxFetchBodyBytes>>10)+512; i++ {
			if _, err := w.Write(append(line, '\n')); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/page?x=1", http.StatusFound)
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such page", http.StatusNotFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// viaProxy points web_fetch at an egress proxy session that lets it reach
// 127.0.0.1 alone (the jail's environment names the proxy; the jail
// itself is exercised by the agent's executor tests).
func viaProxy(t *testing.T) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := egress.New(egress.Options{}).Serve(l, egress.SessionOptions{Decider: egress.DeciderFunc(func(_ context.Context, r egress.Request) egress.Verdict {
		return egress.Verdict{Allow: r.Host == "127.0.0.1", Named: true, Reason: "not the test server"}
	})})
	t.Cleanup(func() { s.Close() })
	t.Setenv("HTTPS_PROXY", "http://"+l.Addr().String())
}

// TestFetchURL runs the in-jail implementation directly against a loopback
// server, through the egress proxy.
func TestFetchURL(t *testing.T) {
	srv := fetchServer(t)
	viaProxy(t)
	for _, tc := range []struct {
		path     string
		isError  bool
		want     []string
		wantNot  []string
		images   int
		redirect string
	}{
		{path: "/page", want: []string{"# Hello", "**bold**", "[docs](" + srv.URL + "/docs)", "- one", "Status: 200 OK"}, wantNot: []string{"alert", "color:red", "footer junk", "Home"}},
		{path: "/latin1", want: []string{"café"}},
		{path: "/json", want: []string{`{"a":1}`, "application/json"}},
		{path: "/bin", isError: true, want: []string{"application/octet-stream", "not text"}},
		{path: "/png", images: 1, want: []string{"2048×6 image/png", "scaled down from 3000×10"}},
		{path: "/huge", want: []string{"only the first 5 MiB were read", "output truncated"}},
		{path: "/redirect", want: []string{"redirected (302) to " + srv.URL + "/page?x=1"}, redirect: srv.URL + "/page?x=1"},
		{path: "/missing", isError: true, want: []string{"404", "no such page"}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			res := fetchURL(context.Background(), fetchArgs{URL: srv.URL + tc.path})
			if res.IsError != tc.isError || len(res.Images) != tc.images || res.Meta.Redirect != tc.redirect {
				t.Fatalf("result %+v", res)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("missing %q in:\n%s", w, res.Text)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(res.Text, w) {
					t.Errorf("unexpected %q in:\n%s", w, res.Text)
				}
			}
			if len(res.Text) > MaxFetchTextBytes {
				t.Errorf("text of %d bytes exceeds the cap", len(res.Text))
			}
		})
	}
}

func TestWebFetchArguments(t *testing.T) {
	d, ok := NewRegistry().Lookup(string(WebFetch))
	if !ok {
		t.Fatal("web_fetch not registered")
	}
	for _, tc := range []struct {
		url, host, err string
	}{
		{url: "https://Go.dev/doc", host: "go.dev"},
		{url: "http://127.0.0.1:8080/x", host: "127.0.0.1"},
		{url: "file:///etc/passwd", err: "http and https URLs only"},
		{url: "ftp://example.com/", err: "http and https URLs only"},
		{url: "example.com/page", err: "no scheme"},
		{url: "https://user:pw@example.com/", err: "credentials"},
		{url: "", err: "url is required"},
	} {
		raw, _ := json.Marshal(map[string]string{"url": tc.url})
		c, err := d.Call(raw)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want %q", tc.url, err, tc.err)
		case tc.err == "" && (err != nil || c.Host != tc.host || c.Effect != "network"):
			t.Errorf("%q: call %+v err %v", tc.url, c, err)
		}
	}
	next, err := RedirectArgs(json.RawMessage(`{"url":"http://a/"}`), "http://b/c")
	if err != nil || string(next) != `{"url":"http://b/c"}` {
		t.Fatalf("RedirectArgs %s %v", next, err)
	}
}

// Without a proxy in its environment web_fetch reaches nothing and says so.
func TestFetchURLNeedsTheProxy(t *testing.T) {
	srv := fetchServer(t)
	t.Setenv("HTTPS_PROXY", "")
	t.Setenv("HTTP_PROXY", "")
	res := fetchURL(context.Background(), fetchArgs{URL: srv.URL + "/page"})
	if !res.IsError || !strings.Contains(res.Text, "no network proxy") {
		t.Fatalf("result %+v", res)
	}
}

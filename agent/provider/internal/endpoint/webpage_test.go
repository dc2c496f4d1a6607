package endpoint

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"brig/agent/provider"
)

// pythonPage is what python3 -m http.server answers a POST with.
const pythonPage = `<!DOCTYPE HTML>
<html lang="en">
    <head>
        <meta charset="utf-8">
        <title>Error response</title>
    </head>
    <body>
        <h1>Error response</h1>
        <p>Error code: 501</p>
        <p>Message: Unsupported method ('POST').</p>
    </body>
</html>
`

// TestWebPageFailsAtOnceOnOneLine: a base URL that answers with a web page
// (an error page or a 200 one) fails at the first request with one line
// that names the URL and says it answered with a web page, showing at
// most the page's title; a proxy's or gateway's page (502) is retried, and every retry
// notice and error is one line.
func TestWebPageFailsAtOnceOnOneLine(t *testing.T) {
	for _, tt := range []struct {
		name     string
		status   int
		ct, body string
		kind     provider.ErrorKind
		requests int32
		has      []string
	}{
		{"python http.server 501", 501, "text/html;charset=utf-8", pythonPage, provider.ErrNoEndpoint, 1,
			[]string{"web page", `titled "Error response"`, "501"}},
		{"404 page", 404, "text/html", "<html><head><title>404\n  Not Found</title></head><body>…</body></html>", provider.ErrNoEndpoint, 1,
			[]string{"web page", `titled "404 Not Found"`}},
		{"a page without a type", 405, "", "\n<!doctype html><html><body><p>no</p></body></html>", provider.ErrNoEndpoint, 1,
			[]string{"web page"}},
		{"a page served with 200", 200, "text/html", pythonPage, provider.ErrNoEndpoint, 1,
			[]string{"web page", `titled "Error response"`}},
		{"a gateway's page is retried", 502, "text/html", "<html><head><title>502 Bad Gateway</title></head>\n<body>nginx</body></html>", provider.ErrServer, 4,
			[]string{"502: a web page", `titled "502 Bad Gateway"`, "after 4 attempts"}},
		{"plain text is one line", 500, "text/plain", "upstream failed:\n  connection reset\n", provider.ErrServer, 4,
			[]string{"upstream failed: connection reset"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var requests atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				if tt.ct != "" {
					w.Header().Set("Content-Type", tt.ct)
				} else {
					w.Header()["Content-Type"] = nil // no sniffing
				}
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
			}))
			defer srv.Close()
			var notices []string
			e := &Endpoint{Provider: provider.Anthropic, Base: srv.URL, URL: srv.URL + "/v1/messages", HC: srv.Client(),
				Retry: provider.Retry{Sleep: func(context.Context, time.Duration) error { return nil }, Logger: quietLogger()},
				DecodeError: func(b []byte) (string, string) {
					var v struct {
						Error struct{ Type, Message string }
					}
					if json.Unmarshal(b, &v) != nil {
						return "", ""
					}
					return v.Error.Type, v.Error.Message
				},
				Parse: func(context.Context, io.Reader, func(provider.Event) error) (provider.Response, error) {
					t.Fatal("a web page was parsed as a stream")
					return provider.Response{}, nil
				}}
			_, err := e.Stream(context.Background(), "m", []byte(`{}`), func(ev provider.Event) error {
				if ev.Type == provider.EventRetry {
					notices = append(notices, ev.Text)
				}
				return nil
			})
			if !provider.IsKind(err, tt.kind) {
				t.Fatalf("err %v, want kind %s", err, tt.kind)
			}
			if n := requests.Load(); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
			msg := err.Error()
			for _, l := range append([]string{msg}, notices...) {
				if strings.Contains(l, "\n") || strings.Contains(l, "<") {
					t.Errorf("not one line without markup: %q", l)
				}
			}
			if tt.kind == provider.ErrNoEndpoint && !strings.Contains(msg, srv.URL) {
				t.Errorf("%q does not name %s", msg, srv.URL)
			}
			for _, h := range tt.has {
				if !strings.Contains(msg, h) {
					t.Errorf("%q lacks %q", msg, h)
				}
			}
		})
	}
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

package mcp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServerClientKeepsTokensAtTheServersOrigin: an HTTP MCP server that
// redirects to another origin is not followed, and the other origin gets
// neither the request nor the configured token; control: a redirect
// within the server's origin is followed, with the token.
func TestServerClientKeepsTokensAtTheServersOrigin(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
	}))
	defer other.Close()
	var token atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
		case "/here":
			http.Redirect(w, r, "/mcp/", http.StatusTemporaryRedirect)
		case "/mcp/":
			token.Store(r.Header.Get("Authorization"))
		}
	}))
	defer srv.Close()
	headers := map[string]string{"Authorization": "Bearer s3cret"}

	c := serverClient(&http.Client{}, srv.URL+"/away", headers)
	resp, err := c.Post(srv.URL+"/away", "application/json", strings.NewReader("{}"))
	if err == nil {
		resp.Body.Close()
		t.Fatal("a redirect to another origin was followed")
	}
	if elsewhere.Load() != 0 {
		t.Fatal("the other origin got the request")
	}

	c = serverClient(&http.Client{}, srv.URL+"/here", headers)
	resp, err = c.Post(srv.URL+"/here", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatalf("control: a redirect within the origin: %v", err)
	}
	resp.Body.Close()
	if got, _ := token.Load().(string); got != "Bearer s3cret" {
		t.Fatalf("control: the server's own redirect lost the token: %q", got)
	}
}

// TestServerListingTooManyToolsFails: a server that lists more than
// maxServerTools tools (one paging on without end, say) fails to start
// with a reason instead of growing the supervisor's memory until its
// startup timeout; control: one with exactly the maximum starts.
func TestServerListingTooManyToolsFails(t *testing.T) {
	for _, n := range []int{maxServerTools, maxServerTools + 1} {
		srv := sdk.NewServer(&sdk.Implementation{Name: "many", Version: "1"}, &sdk.ServerOptions{PageSize: 100})
		for i := range n {
			fakeTool(srv, fmt.Sprintf("t%d", i), "a tool", func(a fakeArgs) *sdk.CallToolResult { return text("ok") })
		}
		h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
		ts := httptest.NewServer(h)
		cfg := Server{Name: "many", Transport: HTTP, Mode: ModeAllow, URL: ts.URL, StartupTimeout: 60 * time.Second, ToolTimeout: 10 * time.Second}
		m := Start(context.Background(), Config{Servers: []Server{cfg}}, Options{})
		st := m.Status()[0]
		switch {
		case n > maxServerTools && (st.State != StateFailed || !strings.Contains(st.Error, "more than")):
			t.Errorf("%d tools: %+v", n, st)
		case n <= maxServerTools && st.State != StateRunning:
			t.Errorf("control: %d tools: %+v", n, st)
		}
		m.Close()
		ts.Close()
	}
}

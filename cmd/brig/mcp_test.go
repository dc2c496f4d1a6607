package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"brig/internal/mcp"
	"brig/internal/xdg"
)

// TestMCPList runs `brig mcp list` over a config with a streamable HTTP
// server on loopback, a stdio server that exits at once, a disabled one and
// one whose name is refused, in text and JSON.
func TestMCPList(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "remote", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "lookup", Description: "Look something up"}, func(ctx context.Context, req *sdk.CallToolRequest, in struct {
		Q string `json:"q"`
	}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Q}}}, nil, nil
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer ts.Close()

	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
	for _, d := range []string{ws + "/.git", home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"HOME=" + home, "PATH=/usr/bin:/bin", "XDG_CONFIG_HOME=" + root + "/config"}
	cfgDir := xdg.Resolve(env, home).Config
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	conf := `
[mcp.servers.remote]
url = "` + ts.URL + `"
mode = "read_only"

[mcp.servers.broken]
command = "false"

[mcp.servers.off]
command = "never-started"
mode = "disabled"

[mcp.servers.bad__name]
command = "x"
`
	if err := os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".mcp.json"), []byte(`{"mcpServers":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(asJSON bool) string {
		var out bytes.Buffer
		o := &mcpListOptions{JSON: asJSON, Executable: os.Args[0], procEnv: procEnv{Cwd: ws, Home: home, Env: env, Stdout: &out, Stderr: &out}}
		// broken fails to start: the list is printed, and the exit status
		// says so (it was 0).
		if err := runMCPList(context.Background(), o); err != (exitError{1}) {
			t.Fatalf("err %v, want exit status 1 for the failed server", err)
		}
		return out.String()
	}
	text := run(false)
	for _, want := range []string{
		"remote  http  mode read_only  running", "- remote__lookup  Look something up",
		"broken  stdio  mode allow  failed", "jail: workspace read-only, network off", "exited with status 1",
		"off  stdio  mode disabled  disabled",
		`"bad__name" ignored: its name contains "__"`,
		".mcp.json: not trusted, so its servers are not started (review it, then run `brig mcp trust`)",
		"In plan mode: remote__lookup",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	// Said once (a new user read it as a line and again as a warning).
	if n := strings.Count(text, "not trusted"); n != 1 {
		t.Errorf("the untrusted .mcp.json is said %d times:\n%s", n, text)
	}
	var rep mcpListReport
	if err := json.Unmarshal([]byte(run(true)), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Servers) != 3 || rep.Servers[2].Name != "remote" || rep.Servers[2].State != mcp.StateRunning || len(rep.Servers[2].Tools) != 1 ||
		rep.Servers[0].Name != "broken" || rep.Servers[0].Grant == nil || rep.Servers[0].Grant.Network || strings.Join(rep.Mode["ask"], ",") != "remote__lookup" {
		t.Fatalf("report %+v", rep)
	}
}

// TestShellWords: `mcp list` shows a server's command line as the shell
// would read it back: an argument with a space or a quote stays one word,
// a control character is escaped, and a plain word is left as it is.
func TestShellWords(t *testing.T) {
	got := shellWords([]string{"python3", "my server.py", "--name=it's", "a\x1bb", "plain"})
	want := `python3 'my server.py' "--name=it's" $'a\x1bb' plain`
	if got != want {
		t.Errorf("shellWords = %s, want %s", got, want)
	}
}

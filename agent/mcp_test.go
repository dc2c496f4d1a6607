package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"brig/internal/mcp"
	"brig/policy"
)

// mcpExecEnv is an executor whose registry has an MCP server (streamable
// HTTP on loopback) configured with mode.
func mcpExecEnv(t *testing.T, mode policy.Mode, serverMode mcp.Mode, config string) (*execEnv, *atomic.Int32) {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "remote", Version: "1"}, nil)
	calls := &atomic.Int32{}
	srv.AddTool(&sdk.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			calls.Add(1)
			var a struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &a)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo " + a.Text}}}, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	e := newExecEnvConfig(t, mode, config)
	m := mcp.Start(context.Background(), mcp.Config{Servers: []mcp.Server{{Name: "remote", Transport: mcp.HTTP, URL: ts.URL, Mode: serverMode, StartupTimeout: 10 * time.Second, ToolTimeout: 10 * time.Second}}}, mcp.Options{})
	t.Cleanup(m.Close)
	e.ex.Registry.AddSource(m)
	return e, calls
}

// TestExecutorMCP: an MCP call goes registry → policy (Ask by default,
// Mcp rules) → approval → the server.
func TestExecutorMCP(t *testing.T) {
	ctx := context.Background()
	echo := json.RawMessage(`{"text":"hi"}`)

	e, calls := mcpExecEnv(t, policy.ModeAsk, mcp.ModeAllow, "")
	e.ap.answers = []Approval{{Answer: AnswerOnce}, {Answer: AnswerDeny}}
	o := e.ex.Execute(ctx, "m1", "remote__echo", echo, nil)
	if o.Result.IsError || o.Result.Text != "echo hi" || len(e.ap.asked) != 1 || o.Grant != nil || calls.Load() != 1 {
		t.Fatalf("approved call: %+v asked %d", o, len(e.ap.asked))
	}
	if v := e.ap.asked[0].Verdict; v.Tier != policy.Ask || !strings.Contains(strings.Join(v.Always, " "), "Mcp(remote__echo)") {
		t.Fatalf("verdict %+v", v)
	}
	if o = e.ex.Execute(ctx, "m2", "remote__echo", echo, nil); !o.Result.IsError || !strings.Contains(o.Result.Text, "denied") || calls.Load() != 1 {
		t.Fatalf("denied call reached the server: %+v", o)
	}
	if o = e.ex.Execute(ctx, "m3", "remote__echo", json.RawMessage(`{}`), nil); !o.Result.IsError || !strings.Contains(o.Result.Text, "missing required text") || calls.Load() != 1 {
		t.Fatalf("schema-invalid call: %+v", o)
	}
	if o = e.ex.Execute(ctx, "m4", "remote__nope", echo, nil); !o.Result.IsError || !strings.Contains(o.Result.Text, "unknown tool") {
		t.Fatalf("unknown tool: %+v", o)
	}

	// A rule allows it without asking; a deny rule refuses it.
	e, calls = mcpExecEnv(t, policy.ModeAsk, mcp.ModeAllow, "[permissions]\nallow = [\"Mcp(remote__*)\"]\n")
	if o = e.ex.Execute(ctx, "m5", "remote__echo", echo, nil); o.Result.IsError || len(e.ap.asked) != 0 || calls.Load() != 1 {
		t.Fatalf("allowed by rule: %+v", o)
	}
	e, calls = mcpExecEnv(t, policy.ModeAuto, mcp.ModeAllow, "[permissions]\ndeny = [\"Mcp(remote__echo)\"]\n")
	if o = e.ex.Execute(ctx, "m6", "remote__echo", echo, nil); !o.Result.IsError || !strings.Contains(o.Result.Text, "denied by brig's policy") || calls.Load() != 0 {
		t.Fatalf("denied by rule: %+v", o)
	}

	// Plan mode refuses an allow server's tools at run time.
	e, calls = mcpExecEnv(t, policy.ModePlan, mcp.ModeAllow, "")
	if o = e.ex.Execute(ctx, "m7", "remote__echo", echo, nil); !o.Result.IsError || !strings.Contains(o.Result.Text, "not available in plan mode") || calls.Load() != 0 {
		t.Fatalf("plan mode: %+v", o)
	}
}

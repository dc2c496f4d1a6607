package provider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"brig/agent/provider"
	"brig/agent/provider/anthropic"
	"brig/internal/credentials"
	"brig/test/fakeprovider"
)

// A minimal turn loop on the Client API, against the fake provider: stream a
// response, show text as it arrives, answer every tool call with exactly one
// result (a call cut by max_tokens gets an error result and is not run),
// send all results of one message back in one user turn, and stop when the
// model ends its turn. The real loop (package agent) adds the policy, the
// jail, the iteration bound and cancellation on top of this shape.
func Example_turnLoop() {
	srv, err := fakeprovider.Start(fakeprovider.Script{Turns: []fakeprovider.Turn{
		{Text: "Let me look.", ToolCalls: []fakeprovider.ToolCall{
			{Name: "read_file", Input: json.RawMessage(`{"path":"a.go"}`)},
			{Name: "read_file", Input: json.RawMessage(`{"path":"b.go"}`)},
		}},
		{Text: "Both files declare package a."},
	}})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	// The caller resolves the base URL (flag, else ANTHROPIC_BASE_URL) and
	// the key (internal/credentials) and passes them in.
	var client provider.Client = anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: credentials.NewSecret("sk-demo")})

	model, _ := provider.Lookup("claude-sonnet-4-5", false)
	req := provider.Request{
		Model:    model.ID,
		System:   "You are brig.",
		Tools:    []provider.ToolSpec{{Name: "read_file", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}},
		Messages: []provider.Message{{Role: provider.User, Content: []provider.Block{provider.Text("What package are a.go and b.go in?")}}},
	}
	var total provider.Usage
	for range 10 { // the real loop's bound is 200 tool iterations
		var shown strings.Builder
		resp, err := client.Stream(context.Background(), req, func(ev provider.Event) error {
			if ev.Type == provider.EventText {
				shown.WriteString(ev.Text)
			}
			return nil
		})
		if err != nil {
			// The user's turn stays in req.Messages: nothing is lost.
			fmt.Println("error:", err)
			return
		}
		total = total.Add(resp.Usage)
		fmt.Println("assistant:", shown.String())
		req.Messages = append(req.Messages, resp.Message)
		calls := resp.Message.ToolUses()
		if len(calls) == 0 {
			break
		}
		var results []provider.Block
		for _, c := range calls {
			if c.Incomplete {
				results = append(results, provider.ToolResultBlock(c.ID, "not run: the call was cut off", true))
				continue
			}
			var in struct{ Path string }
			_ = json.Unmarshal(c.Input, &in)
			fmt.Println("tool:", c.Name, in.Path)
			results = append(results, provider.ToolResultBlock(c.ID, "package a", false))
		}
		req.Messages = append(req.Messages, provider.Message{Role: provider.User, Content: results})
	}
	fmt.Println("requests:", len(srv.Requests()), "cost > 0:", model.Cost(total) > 0)
	// Output:
	// assistant: Let me look.
	// tool: read_file a.go
	// tool: read_file b.go
	// assistant: Both files declare package a.
	// requests: 2 cost > 0: true
}

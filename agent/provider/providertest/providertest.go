// Package providertest holds what the three provider clients' tests share: a
// conversation fixture using every block type, golden-file helpers with an
// -update flag, and a conformance suite run against test/fakeprovider.
//
// It is imported by tests only and must not be imported by production code.
package providertest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brig/agent/provider"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden files")

// Golden compares got with testdata/name.golden, or rewrites it with -update.
func Golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// Indent re-indents JSON for a readable golden file.
func Indent(t *testing.T, raw []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, raw)
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// JSON marshals v indented, for golden files.
func JSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// PNG is a 1x1 PNG.
var PNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82")

// Conversation is a request using every block type: user text and image, an
// assistant turn with thinking of both providers, server-side search blocks
// of both providers, two tool calls (one cut off), their results (one an
// error, one with an image), and a final user text.
func Conversation(model string) provider.Request {
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)
	return provider.Request{
		Model:     model,
		System:    "You are brig. Be brief.",
		MaxTokens: 2048,
		Tools: []provider.ToolSpec{
			{Name: "read_file", Description: "Read a file.", InputSchema: schema},
			{Name: "list_directory", Description: "List a directory.", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)},
		},
		CacheKey: "session-1",
		Messages: []provider.Message{
			{Role: provider.User, Content: []provider.Block{
				provider.Text("What is in a.go? See the screenshot."),
				{Type: provider.BlockImage, Image: &provider.Image{MediaType: "image/png", Data: PNG}},
			}},
			{Role: provider.Assistant, Content: []provider.Block{
				{Type: provider.BlockThinking, Thinking: &provider.Thinking{Provider: provider.Anthropic, Text: "Read it.", Signature: "sig-a"}},
				{Type: provider.BlockThinking, Thinking: &provider.Thinking{Provider: provider.Anthropic, Redacted: "redacted-a"}},
				{Type: provider.BlockThinking, Thinking: &provider.Thinking{Provider: provider.OpenAI, ID: "rs_1", Text: "Read it (summary).", EncryptedContent: "enc-o"}},
				{Type: provider.BlockServerTool, ServerTool: &provider.ServerTool{Provider: provider.Anthropic, Name: "web_search",
					Raw: json.RawMessage(`{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"a.go"}}`), Summary: "web_search: a.go"}},
				{Type: provider.BlockServerTool, ServerTool: &provider.ServerTool{Provider: provider.OpenAI, Name: "web_search",
					Raw: json.RawMessage(`{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"a.go"}}`), Summary: "web_search: a.go"}},
				provider.Text("Let me look."),
				{Type: provider.BlockToolUse, ToolUse: &provider.ToolUse{ID: "call_1", Name: "read_file", Input: json.RawMessage(`{"path":"a.go"}`)}},
				{Type: provider.BlockToolUse, ToolUse: &provider.ToolUse{ID: "call_2", Name: "read_file", PartialInput: `{"path":"b.`, Incomplete: true}},
			}},
			{Role: provider.User, Content: []provider.Block{
				{Type: provider.BlockToolResult, ToolResult: &provider.ToolResult{ToolUseID: "call_1", Content: []provider.Block{
					provider.Text("package a"),
					{Type: provider.BlockImage, Image: &provider.Image{MediaType: "image/png", Data: PNG}},
				}}},
				provider.ToolResultBlock("call_2", "tool call cut off by max_tokens; not run", true),
			}},
			{Role: provider.Assistant, Content: []provider.Block{provider.Text("It declares package a.")}},
			{Role: provider.User, Content: []provider.Block{provider.Text("Thanks.")}},
		},
	}
}

// Recorded is a stream's events and final response, for golden files.
type Recorded struct {
	Events   []provider.Event  `json:"events"`
	Response provider.Response `json:"response"`
	Error    string            `json:"error,omitempty"`
}

// StreamParser is a client's stream parser.
type StreamParser func(ctx context.Context, r io.Reader, emit func(provider.Event) error) (provider.Response, error)

// StreamGolden parses every testdata/stream_*.sse fixture of the calling
// package and compares the events, the response and the error with the
// golden files.
func StreamGolden(t *testing.T, parse StreamParser) {
	t.Helper()
	files, err := filepath.Glob("testdata/stream_*.sse")
	if err != nil || len(files) == 0 {
		t.Fatalf("no stream fixtures: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sse")
		t.Run(name, func(t *testing.T) {
			in, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			var rec Recorded
			rec.Response, err = parse(context.Background(), in, func(ev provider.Event) error {
				rec.Events = append(rec.Events, ev)
				return nil
			})
			if err != nil {
				rec.Error = err.Error()
			}
			Golden(t, name, JSON(t, rec))
		})
	}
}

package fakeprovider

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		wire Wire
		body string
		want string // substring of the refusal, "" for valid
	}{
		{"anthropic ok", WireAnthropic, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"},
			{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"x","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"r"}]}]}`, ""},
		{"anthropic missing result", WireAnthropic, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"},
			{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"x","input":{}},{"type":"tool_use","id":"b","name":"x","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"r"}]}]}`, "without `tool_result`"},
		{"anthropic unanswered at the end", WireAnthropic, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"},
			{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"x","input":{}}]}]}`, ""},
		{"anthropic stray result", WireAnthropic, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"z"}]}]}`, "unexpected `tool_use_id`"},
		{"anthropic empty text", WireAnthropic, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`, "non-empty"},
		{"anthropic string input", WireAnthropic, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"x","input":"{"}]}]}`, "valid dictionary"},
		{"anthropic no max_tokens", WireAnthropic, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "max_tokens"},
		{"anthropic starts with assistant", WireAnthropic, `{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":"hi"}]}`, "first message"},
		{"responses ok", WireResponses, `{"model":"m","input":[{"role":"user","content":"q"},{"type":"function_call","call_id":"c","name":"x","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"r"}]}`, ""},
		{"responses missing output", WireResponses, `{"model":"m","input":[{"type":"function_call","call_id":"c","name":"x","arguments":"{}"}]}`, "No tool output found for function call c"},
		{"responses stray output", WireResponses, `{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":"r"}]}`, "No tool call found"},
		{"chat ok", WireChat, `{"model":"m","messages":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"x","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"r"}]}`, ""},
		{"chat missing tool message", WireChat, `{"model":"m","messages":[{"role":"user","content":"q"},{"role":"assistant","tool_calls":[{"id":"c"}]},{"role":"user","content":"next"}]}`, "must be followed by tool messages"},
		{"chat stray tool message", WireChat, `{"model":"m","messages":[{"role":"tool","tool_call_id":"c","content":"r"}]}`, "must be a response"},
		{"no model", WireChat, `{"messages":[{"role":"user","content":"q"}]}`, "model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := validate(tt.wire, decode(t, tt.body))
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("validate = %q, want %q", got, tt.want)
			}
		})
	}
}

func post(t *testing.T, url, body string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp, b.String()
}

func TestServerRecordsAndAnswersInOrder(t *testing.T) {
	s, err := Start(Script{APIKey: "k", Turns: []Turn{
		{Error: &ErrorReply{Status: 529}},
		{Text: "hello", ChunkDelayMS: 20, ChunkSize: 1},
		{Error: &ErrorReply{Status: 429, RetryAfter: "3"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	body := `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	resp, text := post(t, s.URL()+"/v1/messages", body, nil)
	if resp.StatusCode != 401 || !strings.Contains(text, "authentication_error") {
		t.Fatalf("no key: %d %s", resp.StatusCode, text)
	}
	auth := map[string]string{"x-api-key": "k"}
	resp, text = post(t, s.URL()+"/v1/messages", body, auth)
	if resp.StatusCode != 529 || !strings.Contains(text, `"overloaded_error"`) {
		t.Fatalf("turn 0: %d %s", resp.StatusCode, text)
	}
	resp, text = post(t, s.URL()+"/v1/messages", body, auth)
	if resp.StatusCode != 200 || strings.Count(text, "text_delta") != 5 || !strings.HasSuffix(text, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n") {
		t.Fatalf("turn 1: %d %s", resp.StatusCode, text)
	}
	resp, text = post(t, s.URL()+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"q"}]}`, map[string]string{"Authorization": "Bearer k"})
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" || !strings.Contains(text, `"rate_limit_exceeded"`) {
		t.Fatalf("turn 2: %d %v %s", resp.StatusCode, resp.Header, text)
	}
	resp, text = post(t, s.URL()+"/v1/responses", `{"model":"m","input":[]}`, auth)
	if resp.StatusCode != 400 || !strings.Contains(text, "script exhausted") {
		t.Fatalf("after the script: %d %s", resp.StatusCode, text)
	}
	reqs := s.Requests()
	if len(reqs) != 5 || reqs[0].Reject != "bad API key" || reqs[2].Turn != 1 || reqs[3].Wire != WireChat || reqs[2].Header.Get("X-Api-Key") != "present" {
		t.Fatalf("records: %+v", reqs)
	}
	if reqs[2].Decoded["model"] != "m" {
		t.Errorf("decoded body %v", reqs[2].Decoded)
	}
	// The slow turn's 4 delays of 20 ms are the server's own time.
	if reqs[2].Duration < 80*time.Millisecond || s.ServerTime() < reqs[2].Duration {
		t.Errorf("durations: turn %v, total %v", reqs[2].Duration, s.ServerTime())
	}
}

func TestCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "fakeprovider")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/fakeprovider").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	script := filepath.Join(dir, "s.json")
	if err := os.WriteFile(script, []byte(`{"turns":[{"text":"hi from the script","chunk_size":100}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "log.jsonl")
	cmd := exec.Command(bin, "-script", script, "-log", logPath)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	url, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("first line %q, %v", url, err)
	}
	_, text := post(t, strings.TrimSpace(url)+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"q"}]}`, nil)
	if !strings.Contains(text, "hi from the script") || !strings.HasSuffix(text, "data: [DONE]\n\n") {
		t.Fatalf("stream: %s", text)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	log, err := os.ReadFile(logPath)
	if err != nil || !strings.Contains(string(log), `"wire":"openaichat"`) || !strings.Contains(string(log), `"duration":`) {
		t.Fatalf("log %s, %v", log, err)
	}
}

// TestMatchPicksTurnsByMarker: turns with Match answer the requests that
// carry their marker whatever the order of arrival; a turn without Match
// answers any request, in order.
func TestMatchPicksTurnsByMarker(t *testing.T) {
	s, err := Start(Script{Turns: []Turn{
		{Text: "first"},
		{Match: "MARK-A", Text: "for A"},
		{Match: "MARK-B", Text: "for B"},
		{Text: "last"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ask := func(content string) string {
		t.Helper()
		_, text := post(t, s.URL()+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"`+content+`"}]}`, nil)
		return text
	}
	if got := ask("hello"); !strings.Contains(got, "first") {
		t.Fatalf("turn 0: %s", got)
	}
	if got := ask("about MARK-B"); !strings.Contains(got, "for B") {
		t.Fatalf("B's request: %s", got)
	}
	if s.Remaining() != 2 {
		t.Fatalf("remaining %d, want 2", s.Remaining())
	}
	if got := ask("about MARK-A"); !strings.Contains(got, "for A") {
		t.Fatalf("A's request: %s", got)
	}
	if got := ask("again MARK-B"); !strings.Contains(got, "last") {
		t.Fatalf("the unmarked turn answers any request: %s", got)
	}
	if got := ask("more"); !strings.Contains(got, "script exhausted") || s.Remaining() != 0 {
		t.Fatalf("after the script: %s (remaining %d)", got, s.Remaining())
	}
	if reqs := s.Requests(); reqs[1].Turn != 2 || reqs[2].Turn != 1 {
		t.Fatalf("turns served: %d, %d", reqs[1].Turn, reqs[2].Turn)
	}
}

package providertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"brig/agent/provider"
	"brig/internal/credentials"
	"brig/test/fakeprovider"
)

// Factory builds the client under test for a fake provider at root (the
// server's URL without /v1), with key and retry policy.
type Factory func(root string, key credentials.Secret, keySource string, retry provider.Retry) provider.Client

// sleeps records the retry waits instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// The key every suite client is given; no error or log may contain it.
const testKey = "sk-test-SECRETKEY0123456789abcdef"

type harness struct {
	t      *testing.T
	srv    *fakeprovider.Server
	client provider.Client
	sleeps *sleeps
	log    *bytes.Buffer
}

func start(t *testing.T, wire fakeprovider.Wire, newClient Factory, script fakeprovider.Script) *harness {
	t.Helper()
	srv, err := fakeprovider.Start(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	h := &harness{t: t, srv: srv, sleeps: &sleeps{}, log: &bytes.Buffer{}}
	retry := provider.Retry{Sleep: h.sleeps.sleep, Logger: slog.New(slog.NewTextHandler(h.log, nil))}
	h.client = newClient(srv.URL(), credentials.NewSecret(testKey), "environment variable TEST_KEY", retry)
	if h.client.Provider() != provider.Name(wire) {
		t.Fatalf("client speaks %s, suite runs %s", h.client.Provider(), wire)
	}
	return h
}

func (h *harness) stream(ctx context.Context, req provider.Request) (Recorded, error) {
	var rec Recorded
	resp, err := h.client.Stream(ctx, req, func(ev provider.Event) error {
		rec.Events = append(rec.Events, ev)
		return nil
	})
	rec.Response = resp
	if err != nil {
		rec.Error = err.Error()
	}
	h.assertNoKey(rec.Error)
	h.assertNoKey(h.log.String())
	return rec, err
}

func (h *harness) assertNoKey(s string) {
	h.t.Helper()
	if strings.Contains(s, "SECRETKEY") || strings.Contains(s, testKey) {
		h.t.Errorf("the API key leaks: %s", s)
	}
}

func userReq(model, text string) provider.Request {
	return provider.Request{Model: model, MaxTokens: 1024, System: "test",
		Tools:    []provider.ToolSpec{{Name: "read_file", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}},
		Messages: []provider.Message{{Role: provider.User, Content: []provider.Block{provider.Text(text)}}}}
}

func textOf(evs []provider.Event, typ provider.EventType) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Type == typ {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

func count(evs []provider.Event, typ provider.EventType) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func kindOf(err error) provider.ErrorKind {
	var pe *provider.Error
	if errors.As(err, &pe) {
		return pe.Kind
	}
	return ""
}

// RunSuite checks a client against the fake provider speaking wire: text,
// several tool calls and their round trip, usage, a cut by max_tokens,
// retries before delivery and none after, errors and their text, prompt
// cancellation, and that the key never shows.
func RunSuite(t *testing.T, wire fakeprovider.Wire, model string, newClient Factory) {
	calls := []fakeprovider.ToolCall{
		{Name: "read_file", Input: json.RawMessage(`{"path":"a.go"}`)},
		{Name: "read_file", Input: json.RawMessage(`{"path":"dir/b.go","lines":[1,20]}`)},
		{Name: "list_directory", Input: json.RawMessage(`{}`)},
	}

	t.Run("text", func(t *testing.T) {
		const text = "Hello, world. This is a longer answer — with ünïcode — in several chunks."
		h := start(t, wire, newClient, fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: text, ChunkSize: 7,
			Usage: &fakeprovider.Usage{Input: 100, Output: 20, CacheRead: 50}}}})
		rec, err := h.stream(context.Background(), userReq(model, "hi"))
		if err != nil {
			t.Fatal(err)
		}
		if got := rec.Response.Message.PlainText(); got != text {
			t.Errorf("message text %q", got)
		}
		if got := textOf(rec.Events, provider.EventText); got != text {
			t.Errorf("streamed text %q", got)
		}
		if count(rec.Events, provider.EventText) < 5 {
			t.Errorf("text arrived in %d events, want it streamed in pieces", count(rec.Events, provider.EventText))
		}
		if rec.Response.StopReason != provider.StopEndTurn || rec.Response.Message.Role != provider.Assistant {
			t.Errorf("stop %q role %q", rec.Response.StopReason, rec.Response.Message.Role)
		}
		want := provider.Usage{Input: 100, Output: 20, CacheRead: 50}
		if rec.Response.Usage != want {
			t.Errorf("usage %+v, want %+v", rec.Response.Usage, want)
		}
		if last := rec.Events[len(rec.Events)-1]; last.Type != provider.EventUsage || last.Usage != want {
			t.Errorf("last event %+v, want the usage", last)
		}
		if rec.Response.Attempts != 1 {
			t.Errorf("attempts %d", rec.Response.Attempts)
		}
		reqs := h.srv.Requests()
		if len(reqs) != 1 || reqs[0].Header.Get("Authorization")+reqs[0].Header.Get("X-Api-Key") != "present" {
			t.Errorf("requests %+v: want one, carrying the key", reqs)
		}
	})

	t.Run("several tool calls and their results", func(t *testing.T) {
		h := start(t, wire, newClient, fakeprovider.Script{Turns: []fakeprovider.Turn{
			{Thinking: "Look at the files first.", Text: "Reading.", ToolCalls: calls, ChunkSize: 5},
			{Text: "Done."},
		}})
		req := userReq(model, "read them")
		rec, err := h.stream(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Response.StopReason != provider.StopToolUse {
			t.Errorf("stop %q", rec.Response.StopReason)
		}
		uses := rec.Response.Message.ToolUses()
		if len(uses) != len(calls) {
			t.Fatalf("%d tool uses, want %d: %+v", len(uses), len(calls), uses)
		}
		ids := map[string]bool{}
		for i, u := range uses {
			if u.Name != calls[i].Name || !sameJSON(u.Input, calls[i].Input) || u.Incomplete || u.ID == "" || ids[u.ID] {
				t.Errorf("tool use %d = %+v (input %s), want %s %s", i, u, u.Input, calls[i].Name, calls[i].Input)
			}
			ids[u.ID] = true
		}
		if count(rec.Events, provider.EventToolStart) != 3 || count(rec.Events, provider.EventToolEnd) != 3 {
			t.Errorf("tool events: %d starts, %d ends", count(rec.Events, provider.EventToolStart), count(rec.Events, provider.EventToolEnd))
		}
		// Each call's argument deltas add up to the input its end event carries.
		deltas := map[int]string{}
		for _, e := range rec.Events {
			switch e.Type {
			case provider.EventToolDelta:
				deltas[e.Index] += e.Text
			case provider.EventToolEnd:
				if !sameJSON(json.RawMessage(deltas[e.Index]), e.ToolUse.Input) {
					t.Errorf("block %d: deltas %q, end %s", e.Index, deltas[e.Index], e.ToolUse.Input)
				}
			}
		}
		if textOf(rec.Events, provider.EventThinking) != "Look at the files first." {
			t.Errorf("thinking streamed %q", textOf(rec.Events, provider.EventThinking))
		}
		// The round trip: the assistant message back with one result per
		// call, in one user turn. The fake refuses it if a result is missing.
		req.Messages = append(req.Messages, rec.Response.Message)
		var results []provider.Block
		for _, u := range uses {
			results = append(results, provider.ToolResultBlock(u.ID, "contents of "+string(u.Input), false))
		}
		req.Messages = append(req.Messages, provider.Message{Role: provider.User, Content: results})
		rec2, err := h.stream(context.Background(), req)
		if err != nil {
			t.Fatalf("second turn refused: %v", err)
		}
		if rec2.Response.Message.PlainText() != "Done." {
			t.Errorf("second answer %q", rec2.Response.Message.PlainText())
		}
		body := string(h.srv.Requests()[1].Body)
		for _, u := range uses {
			if !strings.Contains(body, u.ID) {
				t.Errorf("second request lacks %s", u.ID)
			}
		}
		// Reasoning goes back to the provider that made it, with what it
		// needs to accept it (Anthropic's signature, OpenAI's encrypted
		// content, the reasoning_content a thinking chat server streamed,
		// on the turn that called tools).
		switch wire {
		case fakeprovider.WireAnthropic:
			if !strings.Contains(body, `"signature":"fakesig-0"`) {
				t.Errorf("thinking not sent back with its signature: %s", body)
			}
		case fakeprovider.WireResponses:
			if !strings.Contains(body, `"encrypted_content":"enc-reasoning-0"`) {
				t.Errorf("reasoning not sent back with its encrypted content: %s", body)
			}
		case fakeprovider.WireChat:
			if !strings.Contains(body, `"reasoning_content":"Look at the files first."`) {
				t.Errorf("reasoning_content not sent back with the tool calls: %s", body)
			}
		}
		// A missing result is refused like the real API does.
		req.Messages[len(req.Messages)-1].Content = results[:2]
		if _, err := h.stream(context.Background(), req); kindOf(err) != provider.ErrInvalidRequest {
			t.Errorf("history with a missing tool result: err = %v, want a 400", err)
		}
	})

	t.Run("server-side web search", func(t *testing.T) {
		search := &fakeprovider.WebSearch{Query: "brig sandbox"}
		search.Results = append(search.Results, struct {
			Title string `json:"title"`
			URL   string `json:"url"`
		}{"Brig", "https://example.com/brig"})
		h := start(t, wire, newClient, fakeprovider.Script{Turns: []fakeprovider.Turn{
			{Text: "no search without the tool"}, {WebSearch: search, Text: "Found it."}, {Text: "ok"},
		}})
		req := userReq(model, "search")
		if _, err := h.stream(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		first := string(h.srv.Requests()[0].Body)
		if strings.Contains(first, "web_search") {
			t.Fatalf("web search sent although not enabled: %s", first)
		}
		req.WebSearch = true
		rec, err := h.stream(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		body := string(h.srv.Requests()[1].Body)
		var server []provider.Block
		for _, b := range rec.Response.Message.Content {
			if b.Type == provider.BlockServerTool {
				server = append(server, b)
			}
		}
		switch wire {
		case fakeprovider.WireChat:
			if strings.Contains(body, "web_search") || len(server) != 0 {
				t.Errorf("chat completions has no web search tool: %s", body)
			}
			return
		case fakeprovider.WireAnthropic:
			if !strings.Contains(body, `"type":"web_search_20250305"`) || len(server) != 2 {
				t.Fatalf("anthropic search: body %s, blocks %+v", body, server)
			}
		case fakeprovider.WireResponses:
			if !strings.Contains(body, `{"type":"web_search"}`) || len(server) != 1 {
				t.Fatalf("responses search: body %s, blocks %+v", body, server)
			}
		}
		if count(rec.Events, provider.EventServerTool) != 1 || !strings.Contains(textOf(rec.Events, provider.EventServerTool), "brig sandbox") {
			t.Errorf("server tool events: %+v", rec.Events)
		}
		for _, b := range server {
			if b.ServerTool.Provider != h.client.Provider() {
				t.Errorf("block tagged %s", b.ServerTool.Provider)
			}
		}
		// Round trip to the same provider: the raw blocks go back as they came.
		req.Messages = append(req.Messages, rec.Response.Message, provider.Message{Role: provider.User, Content: []provider.Block{provider.Text("thanks")}})
		if _, err := h.stream(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		third := string(h.srv.Requests()[2].Body)
		if !strings.Contains(third, "brig sandbox") {
			t.Errorf("search blocks not sent back: %s", third)
		}
		// Anthropic's results refer to the call by its id; a stateless
		// Responses request refers to no stored item, so sends no item id.
		if hasID := strings.Contains(third, "_fake_1"); hasID != (wire == fakeprovider.WireAnthropic) {
			t.Errorf("search blocks sent back with id %v: %s", hasID, third)
		}
		// To another provider they become text.
		other := provider.OpenAI
		if wire == fakeprovider.WireResponses {
			other = provider.Anthropic
		}
		for _, m := range provider.ForProvider(req.Messages, other) {
			for _, b := range m.Content {
				if b.Type == provider.BlockServerTool {
					t.Errorf("a %s server block survived the switch to %s", b.ServerTool.Provider, other)
				}
			}
		}
	})

	t.Run("cut by max_tokens", func(t *testing.T) {
		h := start(t, wire, newClient, fakeprovider.Script{Turns: []fakeprovider.Turn{
			{Text: "Writing.", ToolCalls: calls[:2], CutMaxTokens: true}, {Text: "ok"},
		}})
		req := userReq(model, "go")
		rec, err := h.stream(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Response.StopReason != provider.StopMaxTokens {
			t.Errorf("stop %q, want max_tokens", rec.Response.StopReason)
		}
		uses := rec.Response.Message.ToolUses()
		if len(uses) != 2 || uses[0].Incomplete || !uses[1].Incomplete {
			t.Fatalf("tool uses %+v: want the first complete and the cut one incomplete", uses)
		}
		// History with the cut call answered by an error stays valid.
		req.Messages = append(req.Messages, rec.Response.Message, provider.Message{Role: provider.User, Content: []provider.Block{
			provider.ToolResultBlock(uses[0].ID, "not run: the response was cut", true),
			provider.ToolResultBlock(uses[1].ID, "not run: the response was cut", true),
		}})
		if _, err := h.stream(context.Background(), req); err != nil {
			t.Errorf("history with a cut call refused: %v", err)
		}
	})

	t.Run("retries 429 and overloaded, honouring Retry-After", func(t *testing.T) {
		overloaded := fakeprovider.ErrorReply{Status: 503}
		if wire == fakeprovider.WireAnthropic {
			overloaded = fakeprovider.ErrorReply{Status: 529}
		}
		h := start(t, wire, newClient, fakeprovider.Script{Turns: []fakeprovider.Turn{
			{Error: &fakeprovider.ErrorReply{Status: 429, RetryAfter: "2"}},
			{Error: &overloaded},
			{Text: "finally"},
		}})
		rec, err := h.stream(context.Background(), userReq(model, "hi"))
		if err != nil {
			t.Fatal(err)
		}
		if rec.Response.Message.PlainText() != "finally" || rec.Response.Attempts != 3 || len(h.srv.Requests()) != 3 {
			t.Errorf("text %q after %d attempts (%d requests)", rec.Response.Message.PlainText(), rec.Response.Attempts, len(h.srv.Requests()))
		}
		waits := h.sleeps.all()
		if len(waits) != 2 || waits[0] != 2*time.Second || waits[1] <= 0 {
			t.Errorf("waits %v: want Retry-After's 2s, then a backoff", waits)
		}
	})

	t.Run("retry is bounded", func(t *testing.T) {
		h := start(t, wire, newClient, fakeprovider.Script{Turns: []fakeprovider.Turn{
			{Error: &fakeprovider.ErrorReply{Status: 429}}, {Error: &fakeprovider.ErrorReply{Status: 429}},
			{Error: &fakeprovider.ErrorReply{Status: 429}}, {Error: &fakeprovider.ErrorReply{Status: 429}},
			{Text: "never reached"},
		}})
		_, err := h.stream(context.Background(), userReq(model, "hi"))
		if kindOf(err) != provider.ErrRateLimit || !strings.Contains(err.Error(), "after 4 attempts") {
			t.Errorf("err = %v, want a rate limit after 4 attempts", err)
		}
		if h.srv.Remaining() != 1 {
			t.Errorf("%d turns left, want 1", h.srv.Remaining())
		}
	})

	t.Run("retries a stream broken before any event", func(t *testing.T) {
		h := start(t, wire, newClient, fakeprovider.Script{Turns: []fakeprovider.Turn{
			{Text: "lost", DisconnectAfter: 1}, {Text: "second try"},
		}})
		rec, err := h.stream(context.Background(), userReq(model, "hi"))
		if err != nil || rec.Response.Message.PlainText() != "second try" || rec.Response.Attempts != 2 {
			t.Errorf("err %v, text %q, attempts %d", err, rec.Response.Message.PlainText(), rec.Response.Attempts)
		}
		if textOf(rec.Events, provider.EventText) != "second try" {
			t.Errorf("events carry %q: the lost attempt must not show", textOf(rec.Events, provider.EventText))
		}
	})

	t.Run("no retry once an event was delivered", func(t *testing.T) {
		for _, turn := range []fakeprovider.Turn{
			{Text: strings.Repeat("partial answer ", 10), StreamError: &fakeprovider.ErrorReply{Type: overloadedType(wire)}, StreamErrorAfter: 6},
			{Text: strings.Repeat("partial answer ", 10), DisconnectAfter: 6},
		} {
			h := start(t, wire, newClient, fakeprovider.Script{Turns: []fakeprovider.Turn{turn, {Text: "must not be fetched"}}})
			rec, err := h.stream(context.Background(), userReq(model, "hi"))
			if err == nil || !kindOf(err).Retryable() {
				t.Fatalf("err = %v, want a retryable kind returned as is", err)
			}
			if n := len(h.srv.Requests()); n != 1 {
				t.Errorf("%d requests: retried after delivering %q", n, textOf(rec.Events, provider.EventText))
			}
			if textOf(rec.Events, provider.EventText) == "" || !strings.HasPrefix(rec.Response.Message.PlainText(), "partial") {
				t.Errorf("partial text not delivered/kept: events %q, message %q", textOf(rec.Events, provider.EventText), rec.Response.Message.PlainText())
			}
		}
	})

	t.Run("401 says which key", func(t *testing.T) {
		h := start(t, wire, newClient, fakeprovider.Script{Turns: []fakeprovider.Turn{
			{Error: &fakeprovider.ErrorReply{Status: 401, Message: "Incorrect API key provided: " + testKey[:12] + "…" + testKey[len(testKey)-10:]}},
		}})
		_, err := h.stream(context.Background(), userReq(model, "hi"))
		if kindOf(err) != provider.ErrAuth {
			t.Fatalf("err = %v, want auth", err)
		}
		for _, want := range []string{"401", "environment variable TEST_KEY", "credentials.toml"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%q lacks %q", err, want)
			}
		}
		if len(h.srv.Requests()) != 1 {
			t.Errorf("a 401 was retried")
		}
		h.assertNoKey(fmt.Sprintf("%v %+v %#v", h.client, h.client, err))
	})

	t.Run("unknown model and context overflow", func(t *testing.T) {
		overflow := fakeprovider.ErrorReply{Status: 400, Message: "prompt is too long: 210000 tokens > 200000 maximum"}
		if wire != fakeprovider.WireAnthropic {
			overflow = fakeprovider.ErrorReply{Status: 400, Type: "context_length_exceeded", Message: "Your input exceeds the context window of this model."}
		}
		h := start(t, wire, newClient, fakeprovider.Script{Turns: []fakeprovider.Turn{
			{Error: &fakeprovider.ErrorReply{Status: 404, Message: "model: no-such-model"}},
			{Error: &overflow},
		}})
		req := userReq("no-such-model", "hi")
		_, err := h.stream(context.Background(), req)
		if kindOf(err) != provider.ErrModelNotFound || !strings.Contains(err.Error(), `"no-such-model"`) {
			t.Errorf("404: %v", err)
		}
		_, err = h.stream(context.Background(), userReq(model, "hi"))
		if kindOf(err) != provider.ErrContextOverflow || !strings.Contains(err.Error(), "/compact") {
			t.Errorf("overflow: %v", err)
		}
	})

	t.Run("network failure names the base URL", func(t *testing.T) {
		h := start(t, wire, newClient, fakeprovider.Script{})
		url := h.srv.URL()
		_ = h.srv.Close()
		_, err := h.stream(context.Background(), userReq(model, "hi"))
		if kindOf(err) != provider.ErrNetwork || !strings.Contains(err.Error(), url) {
			t.Errorf("err = %v, want a network error naming %s", err, url)
		}
	})

	t.Run("cancel during a slow stream returns promptly", func(t *testing.T) {
		h := start(t, wire, newClient, fakeprovider.Script{Turns: []fakeprovider.Turn{
			{Text: strings.Repeat("slow ", 200), ChunkSize: 5, ChunkDelayMS: 200},
		}})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := h.client.Stream(ctx, userReq(model, "hi"), func(ev provider.Event) error {
				if ev.Type == provider.EventText {
					cancel()
				}
				return nil
			})
			done <- err
		}()
		select {
		case err := <-done:
			// 200 chunks at 200 ms would take 40 s: returning at all within
			// the guard below means the read was aborted.
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("Stream did not return after cancel")
		}
	})

	t.Run("an emit error stops the stream", func(t *testing.T) {
		h := start(t, wire, newClient, fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: strings.Repeat("x", 100), ChunkSize: 10}, {Text: "no"}}})
		stop := errors.New("stop here")
		n := 0
		_, err := h.client.Stream(context.Background(), userReq(model, "hi"), func(provider.Event) error {
			n++
			return stop
		})
		if !errors.Is(err, stop) || n != 1 || len(h.srv.Requests()) != 1 {
			t.Errorf("err %v after %d events, %d requests", err, n, len(h.srv.Requests()))
		}
	})
}

func overloadedType(wire fakeprovider.Wire) string {
	if wire == fakeprovider.WireAnthropic {
		return "overloaded_error"
	}
	return "server_error"
}

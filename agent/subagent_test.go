package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"brig/agent/provider"
	"brig/internal/session"
	"brig/policy"
	"brig/test/fakeprovider"
	"brig/tools"
)

// subEnv is a main agent with the task tool and its subagents over a real
// jail and policy.
type subEnv struct {
	*execEnv
	subs *Subagents
	ev   *events
}

func newSubEnv(t *testing.T, mode policy.Mode, client provider.Client, parallel int) (*subEnv, *Agent) {
	t.Helper()
	e := newExecEnv(t, mode)
	e.ex.Registry.Add(tools.TaskDefinition())
	plan, err := e.ex.Policy.Derive(policy.ModePlan)
	if err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	model := provider.Model{ID: "claude-sonnet-4-5", Price: provider.Price{Input: 3, Output: 15}}
	a := New(Config{Client: client, Model: model, Executor: e.ex, Emit: ev.add}, nil)
	subs, err := NewSubagents(SubagentConfig{
		Client: client, Model: model, Facts: PromptFacts{Workspace: e.ws}, Registry: tools.NewRegistry(),
		Policy: plan, Runner: e.ex.Runner, Parallel: parallel, Emit: ev.add, Parent: a,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.ex.Delegate = subs.Run
	return &subEnv{execEnv: e, subs: subs, ev: ev}, a
}

func task(desc, prompt, kind string) fakeprovider.ToolCall {
	b, _ := json.Marshal(map[string]string{"description": desc, "prompt": prompt, "kind": kind})
	return fakeprovider.ToolCall{Name: "task", Input: b}
}

func isErr(v bool) *bool { return &v }

// subHistories rebuilds each subagent's conversation from its events.
func subHistories(evs []Event) map[string][]provider.Message {
	out := map[string][]provider.Message{}
	for _, ev := range evs {
		if ev.Kind == EventMessage && ev.Parent != "" {
			out[ev.Parent] = append(out[ev.Parent], *ev.Message)
		}
	}
	return out
}

// toolNames are the tools a request offered.
func toolNames(r fakeprovider.Request) []string {
	var out []string
	tl, _ := r.Decoded["tools"].([]any)
	for _, x := range tl {
		m, _ := x.(map[string]any)
		name, _ := m["name"].(string)
		if fn, ok := m["function"].(map[string]any); ok && name == "" {
			name, _ = fn["name"].(string)
		}
		out = append(out, name)
	}
	return out
}

// TestSubagentsInParallel: two task calls of one message start two
// subagents that run at the same time, each with its own context and
// tools, in every wire format; each summary comes back as its call's
// result, every tool_use of every conversation has one result, and what
// the subagents spent joins the session's totals.
func TestSubagentsInParallel(t *testing.T) {
	for _, wire := range []string{"anthropic", "openai", "openaichat"} {
		t.Run(wire, func(t *testing.T) {
			slow := func(tc fakeprovider.Turn) fakeprovider.Turn {
				tc.ChunkDelayMS, tc.ChunkSize = 40, 8 // a stream long enough for the other to start
				return tc
			}
			srv := startFake(t,
				fakeprovider.Turn{Text: "Sending two helpers.", ToolCalls: []fakeprovider.ToolCall{
					task("read a.txt", "MARK-A: what does a.txt say?", "explore"),
					task("list files", "MARK-B: which files are in the workspace?", "review"),
				}},
				fakeprovider.Turn{Match: "SUMMARY-A", Text: "Both reported.", Check: []fakeprovider.Check{
					{Call: 0, Contains: "SUMMARY-A: a.txt says hello", IsError: isErr(false)},
					{Call: 1, Contains: "SUMMARY-B: the workspace holds a.txt", IsError: isErr(false)},
				}},
				slow(fakeprovider.Turn{Match: "MARK-A", ToolCalls: []fakeprovider.ToolCall{call("read_file", `{"path":"a.txt"}`)}}),
				fakeprovider.Turn{Match: "MARK-A", Text: "SUMMARY-A: a.txt says hello", Check: []fakeprovider.Check{{Call: 0, Contains: "hello"}}},
				slow(fakeprovider.Turn{Match: "MARK-B", ToolCalls: []fakeprovider.ToolCall{call("list_directory", `{"path":"."}`)}}),
				fakeprovider.Turn{Match: "MARK-B", Text: "SUMMARY-B: the workspace holds a.txt", Check: []fakeprovider.Check{{Call: 0, Contains: "a.txt"}}},
			)
			e, a := newSubEnv(t, policy.ModeAsk, wires(srv)[wire], 3)
			tr, err := a.Run(context.Background(), userText("ask two helpers"))
			if err != nil {
				t.Fatal(err)
			}
			srv.Verify(t)
			if tr.Stop != StopDone || tr.Text != "Both reported." || tr.ToolCalls != 2 {
				t.Fatalf("turn %+v", tr)
			}
			checkValid(t, a.History())
			reqs := srv.Requests()
			// The subagents' first requests (turns 2 and 4) were open at
			// the same time.
			var first []fakeprovider.Request
			for _, r := range reqs {
				if r.Turn == 2 || r.Turn == 4 {
					first = append(first, r)
				}
			}
			if len(first) != 2 {
				t.Fatalf("the subagents' first requests: %d", len(first))
			}
			a0, b0 := first[0], first[1]
			if !b0.Received.Before(a0.Received.Add(a0.Duration)) {
				t.Fatalf("the subagents ran one after the other: the second request came %v after the first, which lasted %v", b0.Received.Sub(a0.Received), a0.Duration)
			}
			// Their own tools: no task, no write tools; the main agent's
			// have task.
			for _, r := range reqs {
				names := strings.Join(toolNames(r), " ")
				main := r.Turn == 0 || r.Turn == 1
				if main != strings.Contains(" "+names+" ", " task ") {
					t.Errorf("turn %d offered %s", r.Turn, names)
				}
				if !main && strings.Contains(names, "write_file") {
					t.Errorf("a subagent was offered write_file: %s", names)
				}
			}
			// Every conversation keeps its pairs; each subagent's events
			// carry its task call's id.
			uses := a.History()[1].ToolUses()
			hist := subHistories(e.ev.all)
			if len(hist) != 2 || len(hist[uses[0].ID]) != 4 || len(hist[uses[1].ID]) != 4 {
				t.Fatalf("subagent histories: %d (%v)", len(hist), hist)
			}
			for _, h := range hist {
				checkValid(t, h)
			}
			var all, subs provider.Usage
			for _, ev := range e.ev.kinds(EventUsage) {
				all = all.Add(*ev.Usage)
				if ev.Parent != "" {
					subs = subs.Add(*ev.Usage)
				}
			}
			total, cost := a.Totals()
			if subs.Total() == 0 || total != all || cost <= tr.Cost {
				t.Fatalf("totals %+v ($%f), every response %+v, subagents %+v, the turn's own $%f", total, cost, all, subs, tr.Cost)
			}
		})
	}
}

// TestSubagentCannotWriteOrSpawn: a subagent's write_file and task calls
// are refused by its registry, and a command the policy allows that writes
// (make, whose recipe the repository wrote) is refused by its read-only
// jail: the file is absent after it. The control: the main agent in auto
// mode runs the same make in the same workspace, and the file appears.
func TestSubagentCannotWriteOrSpawn(t *testing.T) {
	srv := startFake(t,
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{task("try to write", "MARK-W: try to change things", "explore")}},
		fakeprovider.Turn{Match: "SUMMARY-W", ToolCalls: []fakeprovider.ToolCall{call("bash", `{"command":"test -e planted.txt && echo PRESENT-BEFORE || echo ABSENT-BEFORE; make; test -e planted.txt && echo PRESENT-AFTER"}`)},
			Check: []fakeprovider.Check{{Call: 0, Contains: "SUMMARY-W: nothing was written"}}},
		fakeprovider.Turn{Match: "PRESENT-AFTER", Text: "Checked.", Check: []fakeprovider.Check{{Call: 0, Regex: `(?s)ABSENT-BEFORE.*PRESENT-AFTER`}}},
		fakeprovider.Turn{Match: "MARK-W", ToolCalls: []fakeprovider.ToolCall{
			call("write_file", `{"path":"x.txt","content":"x"}`),
			task("nested", "start another", "explore"),
			call("bash", `{"command":"make"}`),
		}},
		fakeprovider.Turn{Match: "MARK-W", Text: "SUMMARY-W: nothing was written", Check: []fakeprovider.Check{
			{Call: 0, Contains: "not available in plan mode", IsError: isErr(true)},
			{Call: 1, Contains: `unknown tool "task"`, IsError: isErr(true)},
			{Call: 2, Regex: `(?i)read-only file system|permission denied|not write`},
		}},
	)
	e, a := newSubEnv(t, policy.ModeAuto, wires(srv)["anthropic"], 3)
	if err := os.WriteFile(e.ws+"/Makefile", []byte("all:\n\techo pwned > planted.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := a.Run(context.Background(), userText("try"))
	if err != nil {
		t.Fatal(err)
	}
	srv.Verify(t)
	if tr.Stop != StopDone || tr.Text != "Checked." {
		t.Fatalf("turn %+v", tr)
	}
	// Results tell a model to ask or tell "the user": a subagent is told
	// that its user is the main agent, which reads its summary; the main
	// agent is not.
	const redirect = "tells you to ask or tell the user something, put it in your summary instead"
	subs := 0
	for i, r := range srv.Requests() {
		sub := strings.Contains(string(r.Body), "You are a read-only subagent")
		if sub {
			subs++
		}
		if strings.Contains(string(r.Body), redirect) != sub {
			t.Errorf("request %d (subagent %v): the redirect to the summary is there: %v", i, sub, !sub)
		}
	}
	if subs == 0 {
		t.Error("no subagent request was seen")
	}
	if _, err := os.Stat(e.ws + "/x.txt"); err == nil {
		t.Fatal("the subagent's write_file wrote")
	}
	checkValid(t, a.History())
}

// TestSubagentsCancel: Esc (the turn's context) stops both subagents: the
// command each runs is killed and gone, both task calls are answered as
// interrupted, and the histories stay valid.
func TestSubagentsCancel(t *testing.T) {
	srv := startFake(t,
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{task("a", "MARK-A wait", "explore"), task("b", "MARK-B wait", "explore")}},
		fakeprovider.Turn{Match: "MARK-A", ToolCalls: []fakeprovider.ToolCall{call("bash", `{"command":"sleep 987.25"}`)}},
		fakeprovider.Turn{Match: "MARK-B", ToolCalls: []fakeprovider.ToolCall{call("bash", `{"command":"sleep 987.75"}`)}},
	)
	e, a := newSubEnv(t, policy.ModeAsk, wires(srv)["openai"], 3)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan TurnResult, 1)
	go func() {
		tr, _ := a.Run(ctx, userText("wait"))
		done <- tr
	}()
	// Both commands are running when the user presses Esc.
	for !(sleeping("987.25") && sleeping("987.75")) {
		select {
		case tr := <-done:
			t.Fatalf("the turn ended before both commands ran: %+v", tr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	tr := <-done
	if tr.Stop != StopInterrupted {
		t.Fatalf("turn %+v", tr)
	}
	if sleeping("987.25") || sleeping("987.75") {
		t.Fatal("a subagent's command outlived the interrupt")
	}
	h := a.History()
	checkValid(t, h)
	last := h[len(h)-1]
	if len(last.Content) != 2 {
		t.Fatalf("last message %+v", last)
	}
	for _, b := range last.Content {
		if b.ToolResult == nil || !b.ToolResult.IsError || !strings.Contains(b.ToolResult.Content[0].Text, "interrupted") {
			t.Fatalf("task result %+v", b.ToolResult)
		}
	}
	for _, sh := range subHistories(e.ev.all) {
		checkValid(t, sh)
	}
}

// sleeping reports whether a process runs `sleep arg`.
func sleeping(arg string) bool {
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err == nil && string(b) == "sleep\x00"+arg+"\x00" {
			return true
		}
	}
	return false
}

// TestSubagentBounds: a subagent stops at its token budget and is asked
// to sum up; the summary says it reached its limit.
func TestSubagentBounds(t *testing.T) {
	srv := startFake(t,
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{task("loop", "MARK-L loop", "explore")}},
		fakeprovider.Turn{Match: "SUMMARY-L", Text: "ok"},
		fakeprovider.Turn{Match: "MARK-L", ToolCalls: []fakeprovider.ToolCall{call("read_file", `{"path":"a.txt"}`)}, Usage: &fakeprovider.Usage{Input: 900, Output: 200}},
		fakeprovider.Turn{Match: "MARK-L", Text: "SUMMARY-L: stopped early"},
	)
	e, a := newSubEnv(t, policy.ModeAsk, wires(srv)["anthropic"], 1)
	e.subs.cfg.TokenBudget = 1000
	if _, err := a.Run(context.Background(), userText("go")); err != nil {
		t.Fatal(err)
	}
	srv.Verify(t)
	h := a.History()
	res := h[2].Content[0].ToolResult.Content[0].Text
	if !strings.Contains(res, "reached its limit") || !strings.Contains(res, "SUMMARY-L: stopped early") {
		t.Fatalf("task result: %s", res)
	}
	last := srv.Requests()[len(srv.Requests())-2]
	if !strings.Contains(string(last.Body), "the budget of 1000 tokens") {
		t.Fatalf("the subagent was not told why it stopped: %s", last.Body)
	}
}

// TestSubagentTranscriptsAreSaved: the recorder saves a subagent's
// messages as display records under its task call and its usage in the
// session's total, without touching the conversation the model resumes.
func TestSubagentTranscriptsAreSaved(t *testing.T) {
	store := session.NewStore(t.TempDir())
	ctx := context.Background()
	sess, err := store.Create(ctx, session.Header{Workspace: "/w", Provider: provider.Anthropic, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	rec := &Recorder{Session: sess, Model: "m"}
	call := provider.Message{Role: provider.Assistant, Content: []provider.Block{{Type: provider.BlockToolUse, ToolUse: &provider.ToolUse{ID: "t1", Name: "task", Input: json.RawMessage(`{"prompt":"p"}`)}}}}
	if _, err := rec.Persist(ctx, provider.Message{Role: provider.User, Content: []provider.Block{provider.Text("hi")}}); err != nil {
		t.Fatal(err)
	}
	rec.Event(Event{Kind: EventUsage, Usage: &provider.Usage{Input: 100, Output: 10}, Cost: 0.5})
	if _, err := rec.Persist(ctx, call); err != nil {
		t.Fatal(err)
	}
	rec.Event(Event{Kind: EventMessage, Parent: "t1", Message: &provider.Message{Role: provider.User, Content: []provider.Block{provider.Text("the task")}}})
	rec.Event(Event{Kind: EventMessage, Parent: "t1", Message: &provider.Message{Role: provider.Assistant, Content: []provider.Block{provider.Text("sub summary")}}})
	rec.Event(Event{Kind: EventUsage, Parent: "t1", Usage: &provider.Usage{Input: 7000, Output: 70}, Cost: 0.25})
	if _, err := rec.Persist(ctx, provider.Message{Role: provider.User, Content: []provider.Block{provider.ToolResultBlock("t1", "sub summary", false)}}); err != nil {
		t.Fatal(err)
	}
	sess.Close()
	_, st, err := store.Open(ctx, sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Messages) != 3 {
		t.Fatalf("%d provider-facing messages, want 3", len(st.Messages))
	}
	var nested []string
	for _, d := range st.Display {
		if d.Parent == "t1" {
			nested = append(nested, string(d.Kind)+":"+d.Text)
		}
	}
	if strings.Join(nested, "|") != "user:the task|assistant:sub summary" {
		t.Fatalf("nested display records: %v", nested)
	}
	if st.Cost != 0.75 || st.Usage.Input != 7100 || st.Last.Input != 100 {
		t.Fatalf("cost %v, usage %+v, last %+v", st.Cost, st.Usage, st.Last)
	}
}

// TestCounted: the subagent's stats and the compaction notice say "1 tool
// call", not "1 tool calls" (new user, 2026-12-02; the model reads the
// stats too).
func TestCounted(t *testing.T) {
	for n, want := range map[int]string{0: "0 tool calls", 1: "1 tool call", 2: "2 tool calls"} {
		if got := counted(n, "tool call"); got != want {
			t.Errorf("counted(%d) = %q, want %q", n, got, want)
		}
	}
}

package agent

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"brig/agent/provider"
	"brig/internal/session"
	"brig/policy"
	"brig/test/fakeprovider"
)

// TestAutoCompaction: a scripted session crosses the threshold, compacts,
// and the next request is within the window and still valid; the session
// file replays to the same history, and its display history is untouched.
func TestAutoCompaction(t *testing.T) {
	e := newExecEnv(t, policy.ModeAuto)
	big := strings.Repeat("line of a large file\n", 400) // ~8 KB per read
	if err := os.WriteFile(e.ws+"/big.txt", []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	read := fakeprovider.Turn{Text: "reading", ToolCalls: []fakeprovider.ToolCall{call("read_file", `{"path":"big.txt"}`)}}
	// Three results of ~2,800 tokens cross 80% of a 12,000-token window,
	// so the fourth request is the summary.
	srv := startFake(t, read, read, read,
		fakeprovider.Turn{Text: "SUMMARY: read big.txt three times."},
		fakeprovider.Turn{Text: "all done"},
	)
	store := session.NewStore(t.TempDir())
	sess, err := store.Create(context.Background(), session.Header{Workspace: e.ws, Provider: provider.Anthropic, Model: "claude-sonnet-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	rec := &Recorder{Session: sess, Model: "claude-sonnet-4-5"}
	// A small window: four large results cross 80% of it.
	model := provider.Model{ID: "claude-sonnet-4-5", ContextWindow: 12000, MaxOutput: 4096}
	var ev events
	a := New(Config{Client: wires(srv)["anthropic"], Model: model, Executor: e.ex, Persist: rec.Persist, Compacted: rec.Compacted, Emit: ev.add}, nil)
	tr, err := a.Run(context.Background(), userText("read big.txt until you know it"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Text != "all done" {
		t.Fatalf("turn: %+v", tr)
	}
	reqs := srv.Requests()
	for _, r := range reqs {
		if r.Reject != "" {
			t.Fatalf("a request was refused: %s", r.Reject)
		}
	}
	// Which request was the summary: it offers no tools.
	summaryReq := -1
	for i, r := range reqs {
		if _, ok := r.Decoded["tools"]; !ok {
			summaryReq = i
		}
	}
	if summaryReq < 0 {
		t.Fatal("no summary request was made")
	}
	last := reqs[len(reqs)-1]
	if !strings.Contains(string(last.Body), "SUMMARY: read big.txt three times.") {
		t.Fatal("the request after compaction does not carry the summary")
	}
	if est := EstimateTokens(a.History()); est > model.ContextWindow {
		t.Fatalf("after compaction the history is still %d tokens (window %d)", est, model.ContextWindow)
	}
	checkValid(t, a.History())

	// The session file replays to the history the agent holds.
	st, err := store.Load(context.Background(), sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := EstimateTokens(st.Messages), EstimateTokens(a.History()); got != want || len(st.Messages) != len(a.History()) {
		t.Fatalf("replayed %d messages (%d tokens), the agent holds %d (%d)", len(st.Messages), got, len(a.History()), want)
	}
	if st.Compactions == 0 {
		t.Fatal("no compaction was saved")
	}
	// The display history still has every tool call the user saw.
	calls := 0
	for _, d := range st.Display {
		if d.Kind == session.DisplayToolCall {
			calls++
		}
	}
	if calls != 3 {
		t.Fatalf("display history has %d tool calls, want 3 (compaction must not touch it)", calls)
	}
}

func TestManualCompactNeedsHistory(t *testing.T) {
	srv := startFake(t)
	a := New(Config{Client: wires(srv)["anthropic"], Model: provider.Model{ID: "claude-sonnet-4-5", ContextWindow: 200000}}, []provider.Message{
		{Role: provider.User, Content: userText("hi")},
	})
	if err := a.Compact(context.Background()); err == nil {
		t.Fatal("compacting a one-message history must be an error")
	}
	if len(a.History()) != 1 || len(srv.Requests()) != 0 {
		t.Fatal("a refused compaction changed something")
	}
}

// TestCompactNoticeCountsInWords: compacting a history whose older part
// is one message says "1 older message".
func TestCompactNoticeCountsInWords(t *testing.T) {
	srv := startFake(t, fakeprovider.Turn{Text: "SUMMARY: the user said hi."})
	var ev events
	a := New(Config{Client: wires(srv)["anthropic"], Model: provider.Model{ID: "claude-sonnet-4-5", ContextWindow: 200000}, Emit: ev.add}, []provider.Message{
		{Role: provider.User, Content: userText(strings.Repeat("a long first message ", 400))},
		{Role: provider.Assistant, Content: []provider.Block{provider.Text("hello")}},
	})
	if err := a.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	var notices []string
	for _, e := range ev.kinds(EventNotice) {
		notices = append(notices, e.Text)
	}
	if !slices.Contains(notices, "compacting: summarising 1 older message") {
		t.Fatalf("notices %q, want \"compacting: summarising 1 older message\"", notices)
	}
}

func TestTruncateOldKeepsRecent(t *testing.T) {
	long := strings.Repeat("x", 10*oldResultBytes)
	var h []provider.Message
	for i := range 6 {
		id := "t" + string(rune('a'+i))
		h = append(h,
			provider.Message{Role: provider.Assistant, Content: []provider.Block{{Type: provider.BlockToolUse, ToolUse: &provider.ToolUse{ID: id, Name: "read_file", Input: []byte(`{}`)}}}},
			provider.Message{Role: provider.User, Content: []provider.Block{provider.ToolResultBlock(id, long, false)}},
		)
	}
	a := New(Config{}, h)
	cut := a.truncateOld()
	if len(cut) == 0 || len(cut) > len(h)-recentMessages {
		t.Fatalf("cut %d messages of %d", len(cut), len(h))
	}
	for _, m := range cut {
		for _, b := range m.Content {
			if b.Type == provider.BlockToolResult && len(b.ToolResult.Content[0].Text) > oldResultBytes+200 {
				t.Fatal("an old result was not cut")
			}
		}
	}
	if got := a.History()[1].Content[0].ToolResult.Content[0].Text; got != long {
		t.Fatal("truncateOld changed the history itself")
	}
}

// TestCompactReportsComparableCounts: after a compaction the context used
// is the provider's last count less what was replaced plus the summary —
// not an estimate of the messages alone, which left out the system prompt
// and the tool definitions (a new user, 2026-12-02: "about 3585 → 683
// tokens" for a compaction that replaced one short message).
func TestCompactReportsComparableCounts(t *testing.T) {
	srv := startFake(t, fakeprovider.Turn{Text: "SUMMARY: the user said hi."})
	first := provider.Message{Role: provider.User, Content: userText(strings.Repeat("a long first message ", 400))}
	a := New(Config{Client: wires(srv)["anthropic"], Model: provider.Model{ID: "claude-sonnet-4-5", ContextWindow: 200000}}, []provider.Message{
		first,
		{Role: provider.Assistant, Content: []provider.Block{provider.Text("hello")}},
	})
	a.Restore(provider.Usage{}, 0, provider.Usage{Input: 5500, Output: 85}) // the provider counted 5585
	before := a.ContextUsed()
	if err := a.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := a.ContextUsed()
	want := before - EstimateTokens([]provider.Message{first}) + EstimateTokens(a.History()[:1])
	if before != 5585 || after != want || after < 3000 {
		t.Errorf("context %d → %d, want 5585 → %d (the long message replaced by a short summary; the system prompt and tools still counted)", before, after, want)
	}
}

// TestCompactRefusesWhatASummaryWouldNotShrink (new user, 2026-12-02):
// /compact of a short session summarised one short message and the
// context grew (about 3907 → 3929 tokens). An older part smaller than a
// summary is not compacted, no request is made, and the error says why.
func TestCompactRefusesWhatASummaryWouldNotShrink(t *testing.T) {
	srv := startFake(t, fakeprovider.Turn{Text: "SUMMARY: the user said hi."})
	a := New(Config{Client: wires(srv)["anthropic"], Model: provider.Model{ID: "claude-sonnet-4-5", ContextWindow: 200000}}, []provider.Message{
		{Role: provider.User, Content: userText("hi")},
		{Role: provider.Assistant, Content: []provider.Block{provider.Text("hello")}},
	})
	err := a.Compact(context.Background())
	if err == nil || !strings.Contains(err.Error(), "nothing to compact: of its 2 messages, the latest turns (1) are kept whole, and the older part, 1 message of about") {
		t.Fatalf("compacting one short message: %v", err)
	}
	if len(a.History()) != 2 || len(srv.Requests()) != 0 {
		t.Fatal("a refused compaction changed something or made a request")
	}
}

// TestManualCompactSummarisesTheOlderTurns (new user, 2026-12-02): a
// /compact of a session far below the window summarised its first
// message alone (it kept up to 30% of a 200k window whole). It now keeps
// the latest few thousand tokens and summarises the rest.
func TestManualCompactSummarisesTheOlderTurns(t *testing.T) {
	srv := startFake(t, fakeprovider.Turn{Text: "SUMMARY: ten questions answered."})
	var h []provider.Message
	for i := range 10 {
		h = append(h,
			provider.Message{Role: provider.User, Content: userText(fmt.Sprintf("question %d: %s", i, strings.Repeat("words ", 400)))},
			provider.Message{Role: provider.Assistant, Content: []provider.Block{provider.Text(strings.Repeat("answer ", 300))}})
	}
	a := New(Config{Client: wires(srv)["anthropic"], Model: provider.Model{ID: "claude-sonnet-4-5", ContextWindow: 200000}}, h)
	if err := a.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := a.History()
	kept := EstimateTokens(got[1:])
	if len(got) >= len(h)/2 || kept > manualKeepTokens+EstimateTokens(h[len(h)-2:]) {
		t.Errorf("after /compact: %d messages of %d, %d tokens kept whole", len(got), len(h), kept)
	}
	if got[len(got)-1].PlainText() != h[len(h)-1].PlainText() {
		t.Error("the latest answer was not kept")
	}
}

// TestCompactThatOnlyCutsOldResults (new user, 2026-12-03): /compact of a
// session whose only large part was an old tool result cut that result,
// then said "nothing to compact" although the context had shrunk. The
// cut is the compaction: no error, no summary request, the result cut.
func TestCompactThatOnlyCutsOldResults(t *testing.T) {
	srv := startFake(t)
	big := strings.Repeat("9\n", 8000)
	h := []provider.Message{
		{Role: provider.User, Content: userText("count")},
		{Role: provider.Assistant, Content: []provider.Block{{Type: provider.BlockToolUse, ToolUse: &provider.ToolUse{ID: "t1", Name: "bash", Input: []byte(`{"command":"seq 8000"}`)}}}},
		{Role: provider.User, Content: []provider.Block{{Type: provider.BlockToolResult, ToolResult: &provider.ToolResult{ToolUseID: "t1", Content: []provider.Block{provider.Text(big)}}}}},
	}
	for i := range 4 {
		h = append(h, provider.Message{Role: provider.Assistant, Content: []provider.Block{provider.Text(fmt.Sprint("answer ", i))}},
			provider.Message{Role: provider.User, Content: userText(fmt.Sprint("question ", i))})
	}
	a := New(Config{Client: wires(srv)["anthropic"], Model: provider.Model{ID: "claude-sonnet-4-5", ContextWindow: 200000}}, h)
	before := a.ContextUsed()
	if err := a.Compact(context.Background()); err != nil {
		t.Fatalf("a compaction that cut an old result: %v", err)
	}
	if after := a.ContextUsed(); after >= before || len(srv.Requests()) != 0 {
		t.Fatalf("context %d → %d, %d requests; want it smaller, no summary request", before, after, len(srv.Requests()))
	}
}

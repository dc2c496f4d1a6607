package session_test

import (
	"context"
	"fmt"
	"os"

	"brig/agent/provider"
	"brig/internal/session"
	"brig/policy"
)

// The turn loop's use of the store: create a session, append each completed
// message before the next request leaves, and resume it later. stateDir is
// xdg.Resolve(env, home).State in brig.
func Example() {
	ctx := context.Background()
	stateDir, _ := os.MkdirTemp("", "brig-state-")
	defer os.RemoveAll(stateDir)
	store := session.NewStore(stateDir)

	// A new conversation.
	sess, err := store.Create(ctx, session.Header{
		Workspace: "/home/me/project", Provider: provider.Anthropic,
		Model: "claude-sonnet-4-5", Mode: policy.ModeAsk, System: "brig's rules …",
	})
	if err != nil {
		panic(err)
	}
	prompt := provider.Message{Role: provider.User, Content: []provider.Block{provider.Text("Why does the test fail?")}}
	// What the user typed and what the model will see, saved before the
	// request leaves.
	if err := sess.Append(ctx,
		session.DisplayRecord(session.Display{Kind: session.DisplayUser, Text: "Why does the test fail?"}),
		session.MessageRecord(prompt)); err != nil {
		panic(err) // a full disk: the error says so, the file is as it was
	}
	// The answer, its usage priced by the caller, and what was shown.
	answer := provider.Message{Role: provider.Assistant, Content: []provider.Block{provider.Text("A nil map.")}}
	if err := sess.Append(ctx,
		session.MessageRecord(answer),
		session.UsageRecord("claude-sonnet-4-5", provider.Usage{Input: 1200, Output: 80}, 0.0048),
		session.DisplayRecord(session.Display{Kind: session.DisplayAssistant, Text: "A nil map."})); err != nil {
		panic(err)
	}
	// Compaction replaces model-facing messages, never the display history.
	summary := []provider.Message{{Role: provider.User, Content: []provider.Block{provider.Text("Summary: the test fails on a nil map.")}}}
	if err := sess.Append(ctx, session.CompactionRecord(2, summary, "manual"), session.ModeRecord(policy.ModeEdit)); err != nil {
		panic(err)
	}
	sess.Close()

	// brig --continue: the latest session of the workspace.
	latest, err := store.Latest(ctx, "/home/me/project")
	if err != nil {
		panic(err)
	}
	resumed, st, err := store.Open(ctx, latest.ID)
	if err != nil {
		panic(err) // a corrupt file is named in the error and left alone
	}
	defer resumed.Close()
	if err := session.CheckResume(st, provider.Anthropic); err != nil {
		panic(err) // another provider could not take this history back
	}
	fmt.Println("title:", st.Title)
	fmt.Println("model-facing messages:", len(st.Messages), "display records:", len(st.Display))
	fmt.Println("mode:", st.Mode, "model:", st.Model)
	fmt.Printf("tokens in/out: %d/%d cost: $%.4f\n", st.Usage.Input, st.Usage.Output, st.Cost)
	// Output:
	// title: Why does the test fail?
	// model-facing messages: 1 display records: 2
	// mode: edit model: claude-sonnet-4-5
	// tokens in/out: 1200/80 cost: $0.0048
}

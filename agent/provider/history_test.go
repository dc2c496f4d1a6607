package provider

import (
	"encoding/json"
	"testing"
)

func TestForProvider(t *testing.T) {
	antThinking := Block{Type: BlockThinking, Thinking: &Thinking{Provider: Anthropic, Text: "t", Signature: "s"}}
	oaiThinking := Block{Type: BlockThinking, Thinking: &Thinking{Provider: OpenAI, ID: "rs", EncryptedContent: "e"}}
	antSearch := Block{Type: BlockServerTool, ServerTool: &ServerTool{Provider: Anthropic, Name: "web_search", Raw: json.RawMessage(`{}`), Summary: "Web search results:\n- Go <https://go.dev>"}}
	use := Block{Type: BlockToolUse, ToolUse: &ToolUse{ID: "1", Name: "read_file", Input: json.RawMessage(`{}`)}}
	history := []Message{
		{Role: User, Content: []Block{Text("q")}},
		{Role: Assistant, Content: []Block{antThinking, antSearch, Text("a"), use}},
		{Role: User, Content: []Block{ToolResultBlock("1", "r", false)}},
		{Role: Assistant, Content: []Block{oaiThinking}}, // only OpenAI reasoning: empty elsewhere
		{Role: User, Content: []Block{Text("more")}},
	}

	same := ForProvider(history, Anthropic)
	// Anthropic's own blocks pass unchanged; the OpenAI-reasoning-only turn
	// vanishes and the user turns around it merge (tool result, then text).
	if len(same) != 3 || len(same[1].Content) != 4 || same[1].Content[0] != antThinking || same[1].Content[1] != antSearch {
		t.Fatalf("anthropic history: %+v", same)
	}
	if c := same[2].Content; same[2].Role != User || len(c) != 2 || c[0].Type != BlockToolResult || c[1].Text != "more" {
		t.Fatalf("merged user turn: %+v", c)
	}

	other := ForProvider(history, OpenAI)
	if len(other) != 5 {
		t.Fatalf("want 5 messages (the OpenAI-thinking turn stays), got %d", len(other))
	}
	a := other[1].Content
	if len(a) != 3 || a[0].Type != BlockText || a[0].Text != antSearch.ServerTool.Summary || a[1].Text != "a" || a[2].Type != BlockToolUse {
		t.Fatalf("anthropic blocks for openai: %+v", a)
	}
	chat := ForProvider(history, OpenAIChat)
	// The OpenAI reasoning turn vanishes; the two user turns around it merge.
	if len(chat) != 3 || chat[2].Role != User || len(chat[2].Content) != 2 || chat[2].Content[1].Text != "more" {
		t.Fatalf("chat history: %+v", chat)
	}
	if len(history[1].Content) != 4 {
		t.Fatal("ForProvider modified its input")
	}
}

// TestForProviderLeavesHistoryAlone: a message passed as it is shares its
// blocks with history, and merging a neighbour into it writes none of
// history's arrays, not even the spare room after a message's blocks.
func TestForProviderLeavesHistoryAlone(t *testing.T) {
	first := make([]Block, 1, 4) // room for three more blocks
	first[0] = Text("one")
	msgs := []Message{
		{Role: User, Content: first},
		{Role: User, Content: []Block{Text("two")}},
		{Role: Assistant, Content: append(make([]Block, 0, 2), Text("three"))},
	}
	out := ForProvider(msgs, Anthropic)
	if len(out) != 2 || len(out[0].Content) != 2 || out[0].Content[1].Text != "two" || out[1].Content[0].Text != "three" {
		t.Fatalf("ForProvider = %+v, want the two user messages merged and the assistant's as it is", out)
	}
	if spare := first[:2][1]; spare != (Block{}) {
		t.Errorf("the merge wrote into the spare room of history's first message: %+v", spare)
	}
	if len(msgs[0].Content) != 1 || msgs[0].Content[0].Text != "one" {
		t.Errorf("history's first message changed: %+v", msgs[0])
	}
	out[1].Content = append(out[1].Content, Text("four"))
	if spare := msgs[2].Content[:2][1]; spare != (Block{}) {
		t.Errorf("appending to a message passed as it is wrote into history's array: %+v", spare)
	}
}

package agent

import (
	"testing"

	"brig/agent/provider"
)

// TestDistinctToolIDs: repeated and missing tool-call ids get ids of their
// own, the first keeps its id, and distinct ids are left as they are (the
// control).
func TestDistinctToolIDs(t *testing.T) {
	use := func(id string) provider.Block {
		return provider.Block{Type: provider.BlockToolUse, ToolUse: &provider.ToolUse{ID: id, Name: "bash"}}
	}
	msg := provider.Message{Role: provider.Assistant, Content: []provider.Block{
		{Type: provider.BlockText, Text: "hi"}, use("same"), use("same"), use(""), use("same_brig2"), use("other"),
	}}
	distinctToolIDs(msg)
	seen := map[string]bool{}
	var ids []string
	for _, u := range msg.ToolUses() {
		if u.ID == "" || seen[u.ID] {
			t.Fatalf("ids not distinct: %v then %q", ids, u.ID)
		}
		seen[u.ID] = true
		ids = append(ids, u.ID)
	}
	if ids[0] != "same" || ids[len(ids)-1] != "other" {
		t.Errorf("the first of a repeated id, or a distinct one, was renamed: %v", ids)
	}
}

package providertest

import (
	"bytes"
	"encoding/json"
	"testing"

	"brig/agent/provider"
	"brig/agent/provider/internal/wirecache"
)

// Build is a client's request builder, taking the messages' JSON from
// cache where it holds them (nil: none).
type Build func(req provider.Request, cache *wirecache.Cache) ([]byte, error)

// CachedBuildsMatch sends one client's cache a session's requests as its
// history grows and changes — messages added, the last one replaced, one in
// the middle replaced by a new value (as compaction does), the history cut
// shorter, read back from disk (equal values, none of the same blocks),
// the system prompt and the tools changed, a message with nothing for the
// provider — and checks that each body is, byte for byte, the one built
// without a cache. p is the client's provider (the history is put in its
// form, as the agent does).
func CachedBuildsMatch(t *testing.T, model string, p provider.Name, build Build) {
	t.Helper()
	base := Conversation(model)
	hist := base.Messages
	turn := func(i int) []provider.Message {
		in, _ := json.Marshal(map[string]string{"path": "f.go"})
		id := "call_t" + string(rune('a'+i))
		return []provider.Message{
			{Role: provider.Assistant, Content: []provider.Block{provider.Text("Again."), {Type: provider.BlockToolUse, ToolUse: &provider.ToolUse{ID: id, Name: "read_file", Input: in}}}},
			{Role: provider.User, Content: []provider.Block{provider.ToolResultBlock(id, "package f // "+id, false)}},
		}
	}
	clone := func(msgs []provider.Message) []provider.Message {
		var out []provider.Message
		b, err := json.Marshal(msgs)
		if err == nil {
			err = json.Unmarshal(b, &out)
		}
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	steps := []struct {
		name string
		edit func(r *provider.Request)
	}{
		{"first", func(r *provider.Request) {}},
		{"same history", func(r *provider.Request) {}},
		{"a turn added", func(r *provider.Request) { hist = append(hist, turn(0)...) }},
		{"another", func(r *provider.Request) { hist = append(hist, turn(1)...) }},
		{"the last message replaced", func(r *provider.Request) {
			hist = append(hist[:len(hist)-1:len(hist)-1], provider.Message{Role: provider.User, Content: []provider.Block{provider.ToolResultBlock("call_tb", "another answer", true)}})
		}},
		{"a middle message replaced", func(r *provider.Request) {
			h := append([]provider.Message(nil), hist...)
			h[2] = provider.Message{Role: provider.User, Content: []provider.Block{provider.ToolResultBlock("call_1", "[cut to save context]", false), provider.ToolResultBlock("call_2", "cut off", true)}}
			hist = h
		}},
		{"cut shorter", func(r *provider.Request) { hist = hist[:3:3] }},
		{"grown again", func(r *provider.Request) { hist = append(hist, turn(2)...) }},
		{"read back from disk", func(r *provider.Request) { hist = clone(hist) }},
		{"an empty message at the end", func(r *provider.Request) {
			hist = append(hist[:len(hist):len(hist)], provider.Message{Role: provider.Assistant, Content: []provider.Block{provider.Text("")}})
		}},
		{"system and tools changed", func(r *provider.Request) { r.System = "Be thorough."; r.Tools = r.Tools[:1] }},
	}
	var cache wirecache.Cache
	req := base
	for _, s := range steps {
		s.edit(&req)
		req.Messages = provider.ForProvider(hist, p)
		want, err := build(req, nil)
		if err != nil {
			t.Fatalf("%s: without a cache: %v", s.name, err)
		}
		got, err := build(req, &cache)
		if err != nil {
			t.Fatalf("%s: with the cache: %v", s.name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the body built with the cache differs from the one built without:\n--- with\n%s\n--- without\n%s", s.name, got, want)
		}
		if !json.Valid(got) {
			t.Errorf("%s: not JSON: %s", s.name, got)
		}
	}
}

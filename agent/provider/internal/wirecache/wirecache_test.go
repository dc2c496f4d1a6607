package wirecache

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"brig/agent/provider"
)

// counting encodes a message as its blocks' texts, counting the messages
// it encodes.
func counting(n *int) Encode {
	return func(m provider.Message) ([]any, error) {
		*n++
		var items []any
		for _, b := range m.Content {
			items = append(items, map[string]string{"role": string(m.Role), "text": b.Text})
		}
		return items, nil
	}
}

func msg(texts ...string) provider.Message {
	m := provider.Message{Role: provider.User}
	for _, t := range texts {
		m.Content = append(m.Content, provider.Text(t))
	}
	return m
}

// TestItemsEncodeOnlyWhatChanged: a request encodes the messages that are
// new or changed at their position, and reuses the rest.
func TestItemsEncodeOnlyWhatChanged(t *testing.T) {
	var c Cache
	var n int
	enc := counting(&n)
	h := []provider.Message{msg("a"), msg("b", "c"), msg()}
	first, err := c.Items(h, enc)
	if err != nil || n != 3 {
		t.Fatalf("first request: %d encoded (%v), want 3", n, err)
	}
	if got := string(first[1]); got != `{"role":"user","text":"b"},{"role":"user","text":"c"}` {
		t.Errorf("a message of two items: %s", got)
	}
	if len(first[2]) != 0 {
		t.Errorf("a message of no items: %q, want nothing", first[2])
	}
	n = 0
	h = append(h, msg("d"), msg("e"))
	if _, err := c.Items(h, enc); err != nil || n != 2 {
		t.Errorf("two messages added: %d encoded (%v), want 2", n, err)
	}
	n = 0
	h2 := append([]provider.Message(nil), h...)
	h2[1] = msg("b", "C") // a new value at the same position
	got, err := c.Items(h2, enc)
	if err != nil || n != 1 || string(got[1]) != `{"role":"user","text":"b"},{"role":"user","text":"C"}` {
		t.Errorf("a message replaced: %d encoded, %s (%v); want 1, the new one", n, got[1], err)
	}
	n = 0
	if _, err := c.Items(h2[:2], enc); err != nil || n != 0 {
		t.Errorf("the history cut shorter: %d encoded (%v), want 0", n, err)
	}
	n = 0
	var nilCache *Cache
	if _, err := nilCache.Items(h2, enc); err != nil || n != len(h2) {
		t.Errorf("no cache: %d encoded (%v), want all %d", n, err, len(h2))
	}
}

// TestBodyIsWhatMarshalGives: the spliced body is json.Marshal's bytes
// for the whole request, with the messages' items in order and the empty
// ones left out.
func TestBodyIsWhatMarshalGives(t *testing.T) {
	type head struct {
		Model  string `json:"model"`
		System string `json:"system,omitempty"`
	}
	type tail struct {
		Tools  []string `json:"tools,omitempty"`
		Stream bool     `json:"stream"`
	}
	type whole struct {
		Model    string   `json:"model"`
		System   string   `json:"system,omitempty"`
		Messages []any    `json:"messages"`
		Tools    []string `json:"tools,omitempty"`
		Stream   bool     `json:"stream"`
	}
	for _, tc := range []struct {
		system string
		tools  []string
		items  []any
	}{
		{"", nil, []any{}},
		{"be <brief> & kind", []string{"read"}, []any{map[string]string{"a": "1"}, "two", 3}},
	} {
		var parts [][]byte
		for _, it := range tc.items {
			b, _ := json.Marshal(it)
			parts = append(parts, nil, b) // empty parts are skipped
		}
		h, _ := json.Marshal(head{Model: "m", System: tc.system})
		tl, _ := json.Marshal(tail{Tools: tc.tools, Stream: true})
		got, err := Body(h, "messages", parts, tl)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(whole{Model: "m", System: tc.system, Messages: tc.items, Tools: tc.tools, Stream: true})
		if string(got) != string(want) {
			t.Errorf("Body = %s\nwant   %s", got, want)
		}
	}
	if _, err := Body([]byte(`{}`), "messages", nil, []byte(`{"stream":true}`)); err == nil {
		t.Error("an empty head was taken: the body would begin with a comma")
	}
}

// TestItemsFromSeveralConversations: requests of different conversations
// through one cache at once each get their own messages (go test -race
// checks the cache's own state).
func TestItemsFromSeveralConversations(t *testing.T) {
	var c Cache
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			var n int
			var h []provider.Message
			for i := range 50 {
				h = append(h, msg(fmt.Sprintf("conversation %d message %d", g, i)))
				items, err := c.Items(h, counting(&n))
				if err != nil {
					t.Error(err)
					return
				}
				for j, it := range items {
					if want := fmt.Sprintf(`{"role":"user","text":"conversation %d message %d"}`, g, j); string(it) != want {
						t.Errorf("conversation %d got %s, want %s", g, it, want)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

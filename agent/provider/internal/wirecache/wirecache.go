// Package wirecache keeps the JSON of a conversation's messages from one
// request to the next, so that a request encodes only what changed: the
// history a request sends is the previous one's plus the newest messages,
// and encoding all of it again cost every request about 4 µs a message
// (1 KB of tool output each: 5 ms at 1,000 messages).
//
// It owns the reuse and the splicing of the request body. It must not know
// any provider's wire format: each client gives the function that encodes
// one message, and the parts of its body around the messages.
//
// A message is reused when it is at the same position as in the previous
// request and is the same value: the same role and blocks equal under ==,
// which compares the blocks' texts and the identity of what they point to.
// That relies on history being immutable: a message in history is never
// changed in place (a changed message, as compaction makes, is a new value
// with new blocks). A message that is equal but not identical (history
// read back from disk) is encoded again once.
package wirecache

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"brig/agent/provider"
)

// Cache is one client's encoded messages. The zero value is ready; a nil
// *Cache encodes everything every time. It is safe for concurrent use
// (requests of different conversations through one client replace each
// other's entries, and cost what they did without a cache).
type Cache struct {
	mu   sync.Mutex
	prev []entry
}

type entry struct {
	msg   provider.Message
	items []byte // the message's wire items, comma-separated; empty for none
}

// Encode is a message's wire items (zero or more JSON values).
type Encode func(provider.Message) ([]any, error)

// Items returns, for each message, its wire items as JSON joined by
// commas (empty when it has none), reusing the previous call's for the
// messages that have not changed.
func (c *Cache) Items(msgs []provider.Message, encode Encode) ([][]byte, error) {
	out := make([][]byte, len(msgs))
	var prev []entry
	if c != nil {
		c.mu.Lock()
		prev = c.prev
		c.mu.Unlock()
	}
	next := make([]entry, len(msgs))
	for i, m := range msgs {
		if i < len(prev) && same(prev[i].msg, m) {
			out[i], next[i] = prev[i].items, prev[i]
			continue
		}
		b, err := ItemsOf(m, encode)
		if err != nil {
			return nil, err
		}
		out[i], next[i] = b, entry{msg: m, items: b}
	}
	if c != nil {
		c.mu.Lock()
		c.prev = next
		c.mu.Unlock()
	}
	return out, nil
}

// ItemsOf is one message's wire items as JSON joined by commas, encoded
// now.
func ItemsOf(m provider.Message, encode Encode) ([]byte, error) {
	items, err := encode(m)
	if err != nil {
		return nil, err
	}
	if len(items) == 1 {
		return json.Marshal(items[0])
	}
	var b []byte
	for i, it := range items {
		v, err := json.Marshal(it)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, v...)
	}
	return b, nil
}

// same reports whether b is a as it was: the same role and blocks.
func same(a, b provider.Message) bool {
	return a.Role == b.Role && slices.Equal(a.Content, b.Content)
}

// Marshal is Body for head and tail given as Go values (structs whose
// fields come before and after key in the request).
func Marshal(head any, key string, items [][]byte, tail any) ([]byte, error) {
	h, err := json.Marshal(head)
	if err != nil {
		return nil, err
	}
	t, err := json.Marshal(tail)
	if err != nil {
		return nil, err
	}
	return Body(h, key, items, t)
}

// Body is a request body whose array key holds items: head, a JSON object
// holding the fields that come before key (at least one), then key with
// the items that are not empty, then the fields of tail, a JSON object
// holding those that come after it (at least one). It is the same bytes
// json.Marshal gives for the whole request when head and tail are that
// request's fields before and after key, in order.
func Body(head []byte, key string, items [][]byte, tail []byte) ([]byte, error) {
	if len(head) < 3 || head[0] != '{' || head[len(head)-1] != '}' || len(tail) < 3 || tail[0] != '{' || tail[len(tail)-1] != '}' {
		return nil, fmt.Errorf("wirecache: the fields around %q must be non-empty JSON objects (%q, %q)", key, head, tail)
	}
	n := len(head) + len(key) + len(tail) + 8
	for _, it := range items {
		n += len(it) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, head[:len(head)-1]...)
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':', '[')
	first := true
	for _, it := range items {
		if len(it) == 0 {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, it...)
	}
	b = append(b, ']', ',')
	b = append(b, tail[1:]...)
	return b, nil
}

package fakeprovider

import "strconv"

// anthropicFrames is a turn as a Messages event stream: message_start, ping,
// then per block content_block_start / _delta… / _stop, message_delta with
// the stop reason and final usage, message_stop.
func anthropicFrames(t Turn, n int, model string, bodyLen int) []frame {
	u := usage(t, bodyLen)
	var fs []frame
	add := func(event string, v any) { fs = append(fs, frame{event: event, data: mustJSON(v)}) }
	add("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_fake_" + strconv.Itoa(n), "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": u.Input, "output_tokens": 1, "cache_read_input_tokens": u.CacheRead, "cache_creation_input_tokens": u.CacheWrite},
	}})
	add("ping", map[string]any{"type": "ping"})
	idx := 0
	delta := func(d map[string]any) {
		add("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": d})
	}
	startBlock := func(b map[string]any) {
		add("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": b})
	}
	stopBlock := func() {
		add("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	if t.Thinking != "" {
		startBlock(map[string]any{"type": "thinking", "thinking": "", "signature": ""})
		for _, p := range pieces(t.Thinking, t.ChunkSize) {
			delta(map[string]any{"type": "thinking_delta", "thinking": p})
		}
		delta(map[string]any{"type": "signature_delta", "signature": "fakesig-" + strconv.Itoa(n)})
		stopBlock()
	}
	if ws := t.WebSearch; ws != nil {
		id := "srvtoolu_fake_" + strconv.Itoa(n)
		startBlock(map[string]any{"type": "server_tool_use", "id": id, "name": "web_search", "input": map[string]any{}})
		delta(map[string]any{"type": "input_json_delta", "partial_json": mustJSON(map[string]string{"query": ws.Query})})
		stopBlock()
		var results []map[string]any
		for _, r := range ws.Results {
			results = append(results, map[string]any{"type": "web_search_result", "title": r.Title, "url": r.URL, "encrypted_content": "enc-" + r.URL, "page_age": nil})
		}
		startBlock(map[string]any{"type": "web_search_tool_result", "tool_use_id": id, "content": results})
		stopBlock()
	}
	stop := "end_turn"
	if len(t.ToolCalls) > 0 {
		stop = "tool_use"
	}
	if t.Text != "" {
		text := t.Text
		if t.CutMaxTokens && len(t.ToolCalls) == 0 {
			text = text[:len(text)/2]
		}
		startBlock(map[string]any{"type": "text", "text": ""})
		for _, p := range pieces(text, t.ChunkSize) {
			delta(map[string]any{"type": "text_delta", "text": p})
		}
		stopBlock()
	}
	for i, c := range t.ToolCalls {
		startBlock(map[string]any{"type": "tool_use", "id": callID("toolu_fake_", n, i, c), "name": c.Name, "input": map[string]any{}})
		a := args(c)
		if t.CutMaxTokens && i == len(t.ToolCalls)-1 {
			a = cutArgs(c)
		}
		delta(map[string]any{"type": "input_json_delta", "partial_json": ""})
		for _, p := range pieces(a, t.ChunkSize) {
			delta(map[string]any{"type": "input_json_delta", "partial_json": p})
		}
		stopBlock()
	}
	if t.CutMaxTokens {
		stop = "max_tokens"
	}
	if t.Stop != "" {
		stop = t.Stop
	}
	add("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": u.Output}})
	add("message_stop", map[string]any{"type": "message_stop"})
	return fs
}

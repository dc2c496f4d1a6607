package fakeprovider

import "strconv"

// chatFrames is a turn as a Chat Completions chunk stream: a role chunk,
// reasoning_content and content deltas, tool_calls deltas (id and name in a
// call's first chunk, argument fragments after), a chunk with the
// finish_reason, a usage chunk with empty choices (as stream_options
// include_usage asks) and data: [DONE].
func chatFrames(t Turn, n int, model string, bodyLen int) []frame {
	u := usage(t, bodyLen)
	id := "chatcmpl-fake-" + strconv.Itoa(n)
	var fs []frame
	chunk := func(delta map[string]any, finish any) {
		fs = append(fs, frame{data: mustJSON(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 1700000000 + n, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		})})
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, p := range pieces(t.Thinking, t.ChunkSize) {
		chunk(map[string]any{"reasoning_content": p}, nil)
	}
	text := t.Text
	if t.CutMaxTokens && len(t.ToolCalls) == 0 {
		text = text[:len(text)/2]
	}
	for _, p := range pieces(text, t.ChunkSize) {
		chunk(map[string]any{"content": p}, nil)
	}
	for i, c := range t.ToolCalls {
		a := args(c)
		if t.CutMaxTokens && i == len(t.ToolCalls)-1 {
			a = cutArgs(c)
		}
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": callID("call_fake_", n, i, c), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil)
		for _, p := range pieces(a, t.ChunkSize) {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": p}}}}, nil)
		}
	}
	finish := "stop"
	if len(t.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	if t.CutMaxTokens {
		finish = "length"
	}
	if t.Stop != "" {
		finish = t.Stop
	}
	chunk(map[string]any{}, finish)
	fs = append(fs, frame{data: mustJSON(map[string]any{
		"id": id, "object": "chat.completion.chunk", "created": 1700000000 + n, "model": model, "choices": []any{},
		"usage": map[string]any{"prompt_tokens": u.Input + u.CacheRead, "completion_tokens": u.Output, "total_tokens": u.Input + u.CacheRead + u.Output,
			"prompt_tokens_details": map[string]any{"cached_tokens": u.CacheRead}},
	})})
	fs = append(fs, frame{data: "[DONE]"})
	return fs
}

package fakeprovider

import "strconv"

// responsesFrames is a turn as an OpenAI Responses event stream:
// response.created, response.in_progress, per output item
// output_item.added … output_item.done (with the text, reasoning summary or
// function-call argument deltas between), then response.completed (or
// response.incomplete for a cut by max_output_tokens).
func responsesFrames(t Turn, n int, model string, bodyLen int) []frame {
	u := usage(t, bodyLen)
	var fs []frame
	seq := 0
	add := func(typ string, v map[string]any) {
		v["type"] = typ
		v["sequence_number"] = seq
		seq++
		fs = append(fs, frame{event: typ, data: mustJSON(v)})
	}
	respID := "resp_fake_" + strconv.Itoa(n)
	base := func(status string, output []any) map[string]any {
		return map[string]any{"id": respID, "object": "response", "status": status, "model": model, "output": output}
	}
	add("response.created", map[string]any{"response": base("in_progress", []any{})})
	add("response.in_progress", map[string]any{"response": base("in_progress", []any{})})
	var output []any
	oi := 0
	if t.Thinking != "" {
		id := "rs_fake_" + strconv.Itoa(n)
		add("response.output_item.added", map[string]any{"output_index": oi, "item": map[string]any{"type": "reasoning", "id": id, "summary": []any{}}})
		add("response.reasoning_summary_part.added", map[string]any{"item_id": id, "output_index": oi, "summary_index": 0, "part": map[string]any{"type": "summary_text", "text": ""}})
		for _, p := range pieces(t.Thinking, t.ChunkSize) {
			add("response.reasoning_summary_text.delta", map[string]any{"item_id": id, "output_index": oi, "summary_index": 0, "delta": p})
		}
		add("response.reasoning_summary_text.done", map[string]any{"item_id": id, "output_index": oi, "summary_index": 0, "text": t.Thinking})
		add("response.reasoning_summary_part.done", map[string]any{"item_id": id, "output_index": oi, "summary_index": 0, "part": map[string]any{"type": "summary_text", "text": t.Thinking}})
		item := map[string]any{"type": "reasoning", "id": id, "summary": []any{map[string]any{"type": "summary_text", "text": t.Thinking}}, "encrypted_content": "enc-reasoning-" + strconv.Itoa(n)}
		add("response.output_item.done", map[string]any{"output_index": oi, "item": item})
		output = append(output, item)
		oi++
	}
	if ws := t.WebSearch; ws != nil {
		id := "ws_fake_" + strconv.Itoa(n)
		add("response.output_item.added", map[string]any{"output_index": oi, "item": map[string]any{"type": "web_search_call", "id": id, "status": "in_progress"}})
		add("response.web_search_call.in_progress", map[string]any{"item_id": id, "output_index": oi})
		add("response.web_search_call.searching", map[string]any{"item_id": id, "output_index": oi})
		add("response.web_search_call.completed", map[string]any{"item_id": id, "output_index": oi})
		item := map[string]any{"type": "web_search_call", "id": id, "status": "completed", "action": map[string]any{"type": "search", "query": ws.Query}}
		add("response.output_item.done", map[string]any{"output_index": oi, "item": item})
		output = append(output, item)
		oi++
	}
	if t.Text != "" {
		id := "msg_fake_" + strconv.Itoa(n)
		text := t.Text
		if t.CutMaxTokens && len(t.ToolCalls) == 0 {
			text = text[:len(text)/2]
		}
		add("response.output_item.added", map[string]any{"output_index": oi, "item": map[string]any{"type": "message", "id": id, "status": "in_progress", "role": "assistant", "content": []any{}}})
		add("response.content_part.added", map[string]any{"item_id": id, "output_index": oi, "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		for _, p := range pieces(text, t.ChunkSize) {
			add("response.output_text.delta", map[string]any{"item_id": id, "output_index": oi, "content_index": 0, "delta": p})
		}
		if !(t.CutMaxTokens && len(t.ToolCalls) == 0) {
			part := map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
			add("response.output_text.done", map[string]any{"item_id": id, "output_index": oi, "content_index": 0, "text": text})
			add("response.content_part.done", map[string]any{"item_id": id, "output_index": oi, "content_index": 0, "part": part})
			item := map[string]any{"type": "message", "id": id, "status": "completed", "role": "assistant", "content": []any{part}}
			add("response.output_item.done", map[string]any{"output_index": oi, "item": item})
			output = append(output, item)
		}
		oi++
	}
	for i, c := range t.ToolCalls {
		id := "fc_fake_" + strconv.Itoa(n) + "_" + strconv.Itoa(i)
		call := callID("call_fake_", n, i, c)
		cut := t.CutMaxTokens && i == len(t.ToolCalls)-1
		a := args(c)
		if cut {
			a = cutArgs(c)
		}
		add("response.output_item.added", map[string]any{"output_index": oi, "item": map[string]any{"type": "function_call", "id": id, "call_id": call, "name": c.Name, "arguments": "", "status": "in_progress"}})
		for _, p := range pieces(a, t.ChunkSize) {
			add("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": oi, "delta": p})
		}
		if !cut {
			add("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": oi, "arguments": a})
			item := map[string]any{"type": "function_call", "id": id, "call_id": call, "name": c.Name, "arguments": a, "status": "completed"}
			add("response.output_item.done", map[string]any{"output_index": oi, "item": item})
			output = append(output, item)
		}
		oi++
	}
	if output == nil {
		output = []any{}
	}
	final := base("completed", output)
	final["usage"] = map[string]any{
		"input_tokens":          u.Input + u.CacheRead, // OpenAI counts cached tokens inside input_tokens
		"input_tokens_details":  map[string]any{"cached_tokens": u.CacheRead},
		"output_tokens":         u.Output,
		"output_tokens_details": map[string]any{"reasoning_tokens": len(t.Thinking) / 4},
		"total_tokens":          u.Input + u.CacheRead + u.Output,
	}
	if t.CutMaxTokens || t.Stop == "max_output_tokens" {
		final["status"] = "incomplete"
		final["incomplete_details"] = map[string]any{"reason": "max_output_tokens"}
		add("response.incomplete", map[string]any{"response": final})
	} else {
		add("response.completed", map[string]any{"response": final})
	}
	return fs
}

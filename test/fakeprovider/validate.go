package fakeprovider

import "fmt"

// validate applies the protocol rules the real APIs enforce on history and
// returns the message of the 400 they would send, or "".
func validate(wire Wire, body map[string]any) string {
	if s, _ := body["model"].(string); s == "" {
		return "model: field required"
	}
	switch wire {
	case WireAnthropic:
		return validateAnthropic(body)
	case WireResponses:
		return validateResponses(body)
	case WireChat:
		return validateChat(body)
	}
	return ""
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// validateAnthropic: max_tokens set; messages non-empty, starting with a
// user turn; no empty content or empty text block; every tool_use answered by
// a tool_result in the very next (user) message, and every tool_result
// answering a tool_use of the message right before it.
func validateAnthropic(body map[string]any) string {
	if mt, _ := body["max_tokens"].(float64); mt < 1 {
		return "max_tokens: field required"
	}
	msgs := list(body["messages"])
	if len(msgs) == 0 {
		return "messages: at least one message is required"
	}
	if str(obj(msgs[0]), "role") != "user" {
		return "messages: first message must use the \"user\" role"
	}
	pending := map[string]bool{} // tool_use ids of the previous assistant message
	for i, m := range msgs {
		msg := obj(m)
		role := str(msg, "role")
		content := list(msg["content"])
		if s, ok := msg["content"].(string); ok {
			if s == "" {
				return fmt.Sprintf("messages.%d: content must be non-empty", i)
			}
			content = []any{map[string]any{"type": "text", "text": s}}
		}
		if len(content) == 0 {
			return fmt.Sprintf("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
		}
		answered := map[string]bool{}
		uses := map[string]bool{}
		for j, b := range content {
			blk := obj(b)
			switch str(blk, "type") {
			case "text":
				if str(blk, "text") == "" {
					return fmt.Sprintf("messages.%d.content.%d: text content blocks must be non-empty", i, j)
				}
			case "tool_use":
				if role != "assistant" {
					return fmt.Sprintf("messages.%d.content.%d: tool_use blocks are only allowed in assistant messages", i, j)
				}
				if _, ok := blk["input"].(map[string]any); !ok {
					return fmt.Sprintf("messages.%d.content.%d.input: Input should be a valid dictionary", i, j)
				}
				uses[str(blk, "id")] = true
			case "tool_result":
				id := str(blk, "tool_use_id")
				if role != "user" || !pending[id] {
					return fmt.Sprintf("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, id)
				}
				answered[id] = true
			}
		}
		for id := range pending {
			if !answered[id] {
				return fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, id)
			}
		}
		pending = uses
	}
	return ""
}

// validateResponses: every function_call has a function_call_output with
// its call_id, and every output answers an earlier call.
func validateResponses(body map[string]any) string {
	calls := map[string]bool{}
	var order []string
	outputs := map[string]bool{}
	for i, it := range list(body["input"]) {
		item := obj(it)
		switch str(item, "type") {
		case "function_call":
			id := str(item, "call_id")
			calls[id] = true
			order = append(order, id)
		case "function_call_output":
			id := str(item, "call_id")
			if !calls[id] {
				return fmt.Sprintf("No tool call found for function call output with call_id %s. (input[%d])", id, i)
			}
			outputs[id] = true
		}
	}
	for _, id := range order {
		if !outputs[id] {
			return "No tool output found for function call " + id + "."
		}
	}
	return ""
}

// validateChat: an assistant message with tool_calls is followed by one tool
// message per tool_call_id before anything else, and a tool message answers
// such a call.
func validateChat(body map[string]any) string {
	msgs := list(body["messages"])
	if len(msgs) == 0 {
		return "messages: must not be empty"
	}
	pending := map[string]bool{}
	for i, m := range msgs {
		msg := obj(m)
		role := str(msg, "role")
		if role == "tool" {
			id := str(msg, "tool_call_id")
			if !pending[id] {
				return fmt.Sprintf("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'. (messages[%d])", i)
			}
			delete(pending, id)
			continue
		}
		if len(pending) > 0 {
			return "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'."
		}
		if role == "assistant" {
			for _, c := range list(msg["tool_calls"]) {
				pending[str(obj(c), "id")] = true
			}
		}
	}
	if len(pending) > 0 {
		return "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'."
	}
	return ""
}

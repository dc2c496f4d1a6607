package anthropic

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"brig/agent/provider"
	"brig/agent/provider/internal/sse"
	"brig/agent/provider/internal/wirecache"
)

// ---- request ----

// A request body is wireHead's fields, then "messages" (a wireMessage
// each), then wireTail's (wirecache.Body).
type wireHead struct {
	Model     string      `json:"model"`
	MaxTokens int         `json:"max_tokens"`
	System    []wireBlock `json:"system,omitempty"`
}

type wireTail struct {
	Tools    []wireTool      `json:"tools,omitempty"`
	Thinking *wireThinking   `json:"thinking,omitempty"`
	Stream   bool            `json:"stream"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

type wireThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

type wireMessage struct {
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

type cacheControl struct {
	Type string `json:"type"`
}

type wireBlock struct {
	Type         string        `json:"type"`
	Text         string        `json:"text"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type wireImage struct {
	Type   string `json:"type"`
	Source struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type wireToolUse struct {
	Type         string          `json:"type"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

type wireToolResult struct {
	Type         string        `json:"type"`
	ToolUseID    string        `json:"tool_use_id"`
	IsError      bool          `json:"is_error,omitempty"`
	Content      []any         `json:"content,omitempty"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type wireThinkingBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type wireRedacted struct {
	Type string `json:"type"`
	Data string `json:"data"`
}

type wireTool struct {
	Type         string          `json:"type,omitempty"`
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema,omitempty"`
	MaxUses      int             `json:"max_uses,omitempty"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

// webSearchMaxUses bounds searches per request.
const webSearchMaxUses = 5

// thinkingBudget maps an effort to Anthropic's thinking budget.
var thinkingBudget = map[provider.Effort]int{
	provider.EffortMinimal: 1024,
	provider.EffortLow:     4096,
	provider.EffortMedium:  10_000,
	provider.EffortHigh:    24_000,
}

// buildRequest converts req to the Messages JSON body. Prompt-cache
// breakpoints go on the system prompt, the last tool and the last block of
// the last message, so a growing conversation re-reads its prefix from cache.
// The messages' JSON is taken from cache where it holds them (nil: all
// encoded now).
func buildRequest(req provider.Request, cache *wirecache.Cache) ([]byte, error) {
	ephemeral := &cacheControl{Type: "ephemeral"}
	head := wireHead{Model: req.Model, MaxTokens: req.MaxTokens}
	tail := wireTail{Stream: true}
	if head.MaxTokens <= 0 {
		head.MaxTokens = provider.DefaultMaxTokens(req.Model)
	}
	if req.System != "" {
		head.System = []wireBlock{{Type: "text", Text: req.System, CacheControl: ephemeral}}
	}
	for _, t := range req.Tools {
		schema := t.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		tail.Tools = append(tail.Tools, wireTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if req.WebSearch {
		tail.Tools = append(tail.Tools, wireTool{Type: "web_search_20250305", Name: "web_search", MaxUses: webSearchMaxUses})
	}
	if n := len(tail.Tools); n > 0 {
		tail.Tools[n-1].CacheControl = ephemeral
	}
	if budget, ok := thinkingBudget[req.Effort]; ok {
		// The budget counts against max_tokens and must be at least 1024.
		budget = min(budget, head.MaxTokens-1024)
		if budget >= 1024 {
			tail.Thinking = &wireThinking{Type: "enabled", BudgetTokens: budget}
		}
	}
	items, err := cache.Items(req.Messages, encodeMessage)
	if err != nil {
		return nil, err
	}
	// The last message that has any content carries the breakpoint on its
	// last block: encoded again with it, outside the cache.
	for i := len(items) - 1; i >= 0; i-- {
		if len(items[i]) == 0 {
			continue // an empty message is not sent
		}
		items[i], err = wirecache.ItemsOf(req.Messages[i], func(m provider.Message) ([]any, error) {
			wm, _ := wireMessageOf(m)
			setCache(wm.Content[len(wm.Content)-1], ephemeral)
			return []any{wm}, nil
		})
		if err != nil {
			return nil, err
		}
		break
	}
	return wirecache.Marshal(head, "messages", items, tail)
}

// encodeMessage is a message's wire form: none for a message with nothing
// this provider takes (the API refuses an empty one).
func encodeMessage(m provider.Message) ([]any, error) {
	if wm, ok := wireMessageOf(m); ok {
		return []any{wm}, nil
	}
	return nil, nil
}

// wireMessageOf is m on the wire, or false when none of its blocks is.
func wireMessageOf(m provider.Message) (wireMessage, bool) {
	var content []any
	for _, b := range m.Content {
		if wb := encodeBlock(b); wb != nil {
			content = append(content, wb)
		}
	}
	if len(content) == 0 {
		return wireMessage{}, false
	}
	return wireMessage{Role: string(m.Role), Content: content}, true
}

func setCache(b any, c *cacheControl) {
	switch v := b.(type) {
	case *wireBlock:
		v.CacheControl = c
	case *wireImage:
		v.CacheControl = c
	case *wireToolUse:
		v.CacheControl = c
	case *wireToolResult:
		v.CacheControl = c
	}
}

func encodeImage(im *provider.Image) *wireImage {
	w := &wireImage{Type: "image"}
	w.Source.Type = "base64"
	w.Source.MediaType = im.MediaType
	w.Source.Data = base64.StdEncoding.EncodeToString(im.Data)
	return w
}

// encodeBlock returns the wire form of b, or nil for a block this provider
// must not or cannot receive.
func encodeBlock(b provider.Block) any {
	switch b.Type {
	case provider.BlockText:
		if b.Text == "" {
			return nil // empty text blocks are refused
		}
		return &wireBlock{Type: "text", Text: b.Text}
	case provider.BlockImage:
		if b.Image == nil {
			return nil
		}
		return encodeImage(b.Image)
	case provider.BlockToolUse:
		if b.ToolUse == nil {
			return nil
		}
		input := b.ToolUse.Input
		if b.ToolUse.Incomplete || !isObject(input) {
			input = json.RawMessage(`{}`)
		}
		return &wireToolUse{Type: "tool_use", ID: b.ToolUse.ID, Name: b.ToolUse.Name, Input: input}
	case provider.BlockToolResult:
		r := b.ToolResult
		if r == nil {
			return nil
		}
		out := &wireToolResult{Type: "tool_result", ToolUseID: r.ToolUseID, IsError: r.IsError}
		for _, c := range r.Content {
			switch {
			case c.Type == provider.BlockText && c.Text != "":
				out.Content = append(out.Content, &wireBlock{Type: "text", Text: c.Text})
			case c.Type == provider.BlockImage && c.Image != nil:
				out.Content = append(out.Content, encodeImage(c.Image))
			}
		}
		return out
	case provider.BlockThinking:
		t := b.Thinking
		if t == nil || t.Provider != provider.Anthropic {
			return nil
		}
		if t.Redacted != "" {
			return &wireRedacted{Type: "redacted_thinking", Data: t.Redacted}
		}
		if t.Signature == "" {
			return nil // cut before its signature arrived: the API would refuse it
		}
		return &wireThinkingBlock{Type: "thinking", Thinking: t.Text, Signature: t.Signature}
	case provider.BlockServerTool:
		if b.ServerTool == nil || b.ServerTool.Provider != provider.Anthropic || !json.Valid(b.ServerTool.Raw) {
			return nil
		}
		return b.ServerTool.Raw
	}
	return nil
}

func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// ---- stream ----

type wireUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

type wireEvent struct {
	Type    string `json:"type"`
	Message *struct {
		ID    string    `json:"id"`
		Model string    `json:"model"`
		Usage wireUsage `json:"usage"`
		// Content and StopReason are empty in Anthropic's own streams,
		// except for a response that is whole from the start (a tool call
		// made by programmatic tool calling) and at some gateways.
		Content    []json.RawMessage `json:"content"`
		StopReason string            `json:"stop_reason"`
	} `json:"message"`
	Index        int             `json:"index"`
	ContentBlock json.RawMessage `json:"content_block"`
	Delta        *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *wireUsage `json:"usage"`
	Error *wireError `json:"error"`
}

type wireError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

type blockStart struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// block is a content block being assembled.
type block struct {
	kind string // the wire type
	text strings.Builder
	json strings.Builder // tool input
	sig  string
	data string
	id   string
	name string
	raw  map[string]json.RawMessage // a server tool block as received
	// input is a tool_use's input as content_block_start gave it: {} when
	// it streams in deltas, the whole input when it does not.
	input   json.RawMessage
	stopped bool
}

// parseStream reads a Messages event stream and assembles the response,
// passing events to emit as they arrive. A stream that ends without
// message_stop is an error of kind ErrStream.
func parseStream(ctx context.Context, body io.Reader, emit func(provider.Event) error) (_ provider.Response, err error) {
	defer func() {
		var pe *provider.Error
		if errors.As(err, &pe) && pe.Provider == "" {
			pe.Provider = provider.Anthropic
		}
	}()
	r := sse.NewReader(body)
	var resp provider.Response
	var blocks []*block
	var usage wireUsage
	stop := ""
	finish := func() provider.Response {
		resp.Message = assemble(blocks, stop)
		resp.StopReason = stopReason(stop)
		resp.Usage = provider.Usage{Input: usage.InputTokens, Output: usage.OutputTokens, CacheRead: usage.CacheReadInputTokens, CacheWrite: usage.CacheCreationInputTokens}
		return resp
	}
	at := func(i int) (*block, error) {
		if i < 0 || i >= len(blocks) || blocks[i] == nil {
			return nil, streamErr("event for unknown content block %d", i)
		}
		return blocks[i], nil
	}
	startBlock := func(index int, raw json.RawMessage) error {
		var bs blockStart
		if err := json.Unmarshal(raw, &bs); err != nil {
			return streamErr("undecodable content block: %v", err)
		}
		if index < 0 || index > maxBlocks {
			return streamErr("content block index %d out of range", index)
		}
		for len(blocks) <= index {
			blocks = append(blocks, nil)
		}
		b := &block{kind: bs.Type, id: bs.ID, name: bs.Name, sig: bs.Signature, data: bs.Data, input: bs.Input}
		b.text.WriteString(bs.Text + bs.Thinking)
		blocks[index] = b
		switch bs.Type {
		case "text":
			if bs.Text != "" {
				return emit(provider.Event{Type: provider.EventText, Index: index, Text: bs.Text})
			}
		case "thinking":
			if bs.Thinking != "" {
				return emit(provider.Event{Type: provider.EventThinking, Index: index, Text: bs.Thinking})
			}
		case "tool_use":
			return emit(provider.Event{Type: provider.EventToolStart, Index: index, ToolUse: &provider.ToolUse{ID: bs.ID, Name: bs.Name}})
		case "redacted_thinking":
		default: // server_tool_use, web_search_tool_result, mcp_tool_use and other server blocks
			if err := json.Unmarshal(raw, &b.raw); err != nil {
				return streamErr("undecodable %s block: %v", bs.Type, err)
			}
		}
		return nil
	}
	stopBlock := func(index int) error {
		b, err := at(index)
		if err != nil {
			return err
		}
		b.stopped = true
		switch b.kind {
		case "tool_use":
			tu := toolUse(b)
			return emit(provider.Event{Type: provider.EventToolEnd, Index: index, ToolUse: &tu})
		case "server_tool_use":
			st := serverTool(b)
			return emit(provider.Event{Type: provider.EventServerTool, Index: index, Text: st.Summary})
		}
		return nil
	}
	for {
		ev, err := r.Next()
		if err != nil {
			if ctx.Err() != nil {
				return finish(), ctx.Err()
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return finish(), &provider.Error{Kind: provider.ErrStream, Message: "ended before message_stop", Err: err}
		}
		var we wireEvent
		if err := json.Unmarshal(ev.Data, &we); err != nil {
			return finish(), streamErr("undecodable %s event: %v", ev.Name, err)
		}
		switch we.Type {
		case "ping":
		case "error":
			e := we.Error
			if e == nil {
				e = &wireError{Type: "api_error"}
			}
			return finish(), &provider.Error{Kind: provider.Classify(0, e.Type, e.Message), Type: e.Type, Message: e.Message}
		case "message_start":
			if m := we.Message; m != nil {
				resp.ID, resp.Model = m.ID, m.Model
				usage = m.Usage
				if m.StopReason != "" {
					stop = m.StopReason
				}
				// Blocks given whole in the message: each starts and stops.
				for i, c := range m.Content {
					if err := startBlock(i, c); err != nil {
						return finish(), err
					}
					if err := stopBlock(i); err != nil {
						return finish(), err
					}
				}
			}
		case "content_block_start":
			if err := startBlock(we.Index, we.ContentBlock); err != nil {
				return finish(), err
			}
		case "content_block_delta":
			b, err := at(we.Index)
			if err != nil {
				return finish(), err
			}
			d := we.Delta
			if d == nil {
				continue
			}
			switch d.Type {
			case "text_delta":
				b.text.WriteString(d.Text)
				err = emit(provider.Event{Type: provider.EventText, Index: we.Index, Text: d.Text})
			case "thinking_delta":
				b.text.WriteString(d.Thinking)
				err = emit(provider.Event{Type: provider.EventThinking, Index: we.Index, Text: d.Thinking})
			case "signature_delta":
				b.sig += d.Signature
			case "input_json_delta":
				b.json.WriteString(d.PartialJSON)
				if b.kind == "tool_use" && d.PartialJSON != "" {
					err = emit(provider.Event{Type: provider.EventToolDelta, Index: we.Index, Text: d.PartialJSON})
				}
			}
			if err != nil {
				return finish(), err
			}
		case "content_block_stop":
			if err := stopBlock(we.Index); err != nil {
				return finish(), err
			}
		case "message_delta":
			if we.Delta != nil && we.Delta.StopReason != "" {
				stop = we.Delta.StopReason
			}
			if u := we.Usage; u != nil {
				// The final counts supersede the start's where given.
				usage.OutputTokens = u.OutputTokens
				if u.InputTokens > 0 {
					usage.InputTokens = u.InputTokens
				}
				if u.CacheReadInputTokens > 0 {
					usage.CacheReadInputTokens = u.CacheReadInputTokens
				}
				if u.CacheCreationInputTokens > 0 {
					usage.CacheCreationInputTokens = u.CacheCreationInputTokens
				}
			}
		case "message_stop":
			out := finish()
			if err := emit(provider.Event{Type: provider.EventUsage, Usage: out.Usage}); err != nil {
				return out, err
			}
			return out, nil
		}
	}
}

func streamErr(format string, args ...any) *provider.Error {
	return &provider.Error{Kind: provider.ErrStream, Message: fmt.Sprintf(format, args...)}
}

// maxBlocks bounds a content block index (a hostile or broken stream must
// not make brig allocate without limit).
const maxBlocks = 10_000

func toolUse(b *block) provider.ToolUse {
	in := b.json.String()
	if in == "" && isObject(b.input) {
		in = string(b.input) // given whole in content_block_start, no deltas
	}
	if in == "" && b.stopped {
		in = "{}"
	}
	if !b.stopped || !isObject(json.RawMessage(in)) {
		return provider.ToolUse{ID: b.id, Name: b.name, Incomplete: true, PartialInput: in}
	}
	return provider.ToolUse{ID: b.id, Name: b.name, Input: json.RawMessage(in)}
}

func serverTool(b *block) provider.ServerTool {
	raw := b.raw
	// The input of server_tool_use, mcp_tool_use and the like streams in
	// deltas after an empty input in the block's start.
	if in := b.json.String(); in != "" && json.Valid([]byte(in)) {
		raw["input"] = json.RawMessage(in)
	}
	enc, _ := json.Marshal(raw)
	st := provider.ServerTool{Provider: provider.Anthropic, Name: b.kind, Raw: enc}
	switch b.kind {
	case "server_tool_use":
		var name string
		_ = json.Unmarshal(raw["name"], &name)
		st.Name = name
		var in struct {
			Query string `json:"query"`
		}
		_ = json.Unmarshal(raw["input"], &in)
		st.Summary = name + ": " + in.Query
	case "web_search_tool_result":
		st.Name = "web_search"
		var results []struct {
			Title string `json:"title"`
			URL   string `json:"url"`
		}
		if json.Unmarshal(raw["content"], &results) == nil && len(results) > 0 {
			lines := []string{"Web search results:"}
			for _, r := range results {
				lines = append(lines, "- "+r.Title+" <"+r.URL+">")
			}
			st.Summary = strings.Join(lines, "\n")
		}
	}
	return st
}

// assemble builds the assistant message from the blocks received so far.
func assemble(blocks []*block, stop string) provider.Message {
	m := provider.Message{Role: provider.Assistant}
	for _, b := range blocks {
		if b == nil {
			continue
		}
		switch b.kind {
		case "text":
			if b.text.Len() > 0 {
				m.Content = append(m.Content, provider.Text(b.text.String()))
			}
		case "thinking":
			m.Content = append(m.Content, provider.Block{Type: provider.BlockThinking, Thinking: &provider.Thinking{Provider: provider.Anthropic, Text: b.text.String(), Signature: b.sig}})
		case "redacted_thinking":
			m.Content = append(m.Content, provider.Block{Type: provider.BlockThinking, Thinking: &provider.Thinking{Provider: provider.Anthropic, Redacted: b.data}})
		case "tool_use":
			tu := toolUse(b)
			m.Content = append(m.Content, provider.Block{Type: provider.BlockToolUse, ToolUse: &tu})
		default:
			if b.raw != nil && (b.stopped || b.kind != "server_tool_use") {
				st := serverTool(b)
				m.Content = append(m.Content, provider.Block{Type: provider.BlockServerTool, ServerTool: &st})
			}
		}
	}
	return m
}

func stopReason(s string) provider.StopReason {
	switch s {
	case "end_turn", "stop_sequence":
		return provider.StopEndTurn
	case "tool_use":
		return provider.StopToolUse
	case "max_tokens", "model_context_window_exceeded":
		return provider.StopMaxTokens
	case "refusal":
		return provider.StopRefusal
	case "pause_turn":
		return provider.StopPause
	case "":
		return ""
	}
	return provider.StopOther
}

func decodeError(body []byte) (typ, msg string) {
	var w struct {
		Error wireError `json:"error"`
	}
	if json.Unmarshal(body, &w) != nil {
		return "", ""
	}
	return w.Error.Type, w.Error.Message
}

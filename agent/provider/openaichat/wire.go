package openaichat

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"brig/agent/provider"
	"brig/agent/provider/internal/sse"
	"brig/agent/provider/internal/wirecache"
)

// ---- request ----

// A request body is wireHead's fields, then "messages" (the system
// prompt's, then every message's, encodeMessage), then wireTail's
// (wirecache.Body).
type wireHead struct {
	Model string `json:"model"`
}

type wireTail struct {
	Tools               []wireTool     `json:"tools,omitempty"`
	MaxTokens           int            `json:"max_tokens,omitempty"`
	MaxCompletionTokens int            `json:"max_completion_tokens,omitempty"`
	ReasoningEffort     string         `json:"reasoning_effort,omitempty"`
	Stream              bool           `json:"stream"`
	StreamOptions       *streamOptions `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type wireMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"` // string, parts, or null
	// ReasoningContent goes back on an assistant turn that called tools
	// when the server streamed its reasoning under that name: DeepSeek,
	// Kimi and others refuse a tool-call turn of a thinking model without it.
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
}

type wirePart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type wireToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// buildRequest converts req to the Chat Completions JSON body. openAI
// selects OpenAI's own parameter names (max_completion_tokens,
// reasoning_effort); compatible servers get max_tokens, the name they all
// accept, and reasoning_effort only when an effort was asked for. The
// messages' JSON is taken from cache where it holds them (nil: all encoded
// now).
func buildRequest(req provider.Request, openAI bool, cache *wirecache.Cache) ([]byte, error) {
	w := wireTail{Stream: true, StreamOptions: &streamOptions{IncludeUsage: true}}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = provider.DefaultMaxTokens(req.Model)
	}
	if openAI {
		w.MaxCompletionTokens = maxTokens
	} else {
		w.MaxTokens = maxTokens
	}
	w.ReasoningEffort = string(req.Effort)
	var system []byte
	if req.System != "" {
		var err error
		if system, err = json.Marshal(wireMessage{Role: "system", Content: req.System}); err != nil {
			return nil, err
		}
	}
	for _, t := range req.Tools {
		params := t.InputSchema
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		w.Tools = append(w.Tools, wireTool{Type: "function", Function: wireFunction{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	items, err := cache.Items(req.Messages, func(m provider.Message) ([]any, error) {
		var items []any
		for _, wm := range encodeMessage(m) {
			items = append(items, wm)
		}
		return items, nil
	})
	if err != nil {
		return nil, err
	}
	return wirecache.Marshal(wireHead{Model: req.Model}, "messages", append([][]byte{system}, items...), w)
}

func dataURL(im *provider.Image) *imageURL {
	return &imageURL{URL: "data:" + im.MediaType + ";base64," + base64.StdEncoding.EncodeToString(im.Data)}
}

// encodeMessage turns one message into chat messages. An assistant message
// becomes one message with its text and tool calls. A user message's tool
// results become tool messages first (they must directly follow the
// assistant's calls), then one user message with its text, its images and
// the images of its tool results.
func encodeMessage(m provider.Message) []wireMessage {
	if m.Role == provider.Assistant {
		var text, reasoning strings.Builder
		var calls []wireToolCall
		for _, b := range m.Content {
			switch {
			case b.Type == provider.BlockThinking && b.Thinking != nil && b.Thinking.Provider == provider.OpenAIChat &&
				b.Thinking.Field == fieldReasoningContent:
				reasoning.WriteString(b.Thinking.Text)
			case b.Type == provider.BlockText:
				text.WriteString(b.Text)
			case b.Type == provider.BlockServerTool && b.ServerTool != nil && b.ServerTool.Summary != "":
				// No server tools here: keep what they found as text.
				text.WriteString(b.ServerTool.Summary + "\n")
			case b.Type == provider.BlockToolUse && b.ToolUse != nil:
				var c wireToolCall
				c.ID, c.Type = b.ToolUse.ID, "function"
				c.Function.Name = b.ToolUse.Name
				c.Function.Arguments = string(b.ToolUse.Input)
				if b.ToolUse.Incomplete || !json.Valid(b.ToolUse.Input) {
					c.Function.Arguments = "{}"
				}
				calls = append(calls, c)
			}
		}
		if text.Len() == 0 && len(calls) == 0 {
			return nil
		}
		msg := wireMessage{Role: "assistant", ToolCalls: calls}
		if text.Len() > 0 {
			msg.Content = text.String()
		}
		if len(calls) > 0 {
			msg.ReasoningContent = reasoning.String()
		}
		return []wireMessage{msg}
	}
	var out []wireMessage
	var parts []wirePart
	for _, b := range m.Content {
		switch b.Type {
		case provider.BlockText:
			if b.Text != "" {
				parts = append(parts, wirePart{Type: "text", Text: b.Text})
			}
		case provider.BlockImage:
			if b.Image != nil {
				parts = append(parts, wirePart{Type: "image_url", ImageURL: dataURL(b.Image)})
			}
		case provider.BlockToolResult:
			r := b.ToolResult
			if r == nil {
				continue
			}
			s, images := r.Split()
			for _, img := range images {
				parts = append(parts, wirePart{Type: "text", Text: "Image from tool call " + r.ToolUseID + ":"},
					wirePart{Type: "image_url", ImageURL: dataURL(img)})
			}
			out = append(out, wireMessage{Role: "tool", ToolCallID: r.ToolUseID, Content: s})
		}
	}
	if len(parts) > 0 {
		// A text-only message goes as a plain string, which every server takes.
		if len(parts) == 1 && parts[0].Type == "text" {
			out = append(out, wireMessage{Role: "user", Content: parts[0].Text})
		} else {
			out = append(out, wireMessage{Role: "user", Content: parts})
		}
	}
	return out
}

// ---- stream ----

type wireChunk struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			// Content is a string, or (Mistral) an array of text and
			// thinking parts.
			Content          json.RawMessage `json:"content"`
			ReasoningContent *string         `json:"reasoning_content"`
			Reasoning        *string         `json:"reasoning"`
			Refusal          *string         `json:"refusal"`
			ToolCalls        []wireToolCall  `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error *wireError `json:"error"`
}

type wireError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"` // a string at OpenAI, a number at some servers
	// StatusCode is the HTTP status the error stands for (Groq, in errors
	// sent inside a 200 stream).
	StatusCode int `json:"status_code"`
}

// The delta fields reasoning streams in.
const (
	fieldReasoningContent = "reasoning_content" // DeepSeek, xAI, Qwen, Kimi, llama.cpp
	fieldReasoning        = "reasoning"         // Groq, OpenRouter, Ollama, vLLM
	fieldThinkingPart     = "content.thinking"  // Mistral: thinking parts inside content
)

// deltaContent splits a delta's content into text and thinking: a string
// is text; an array holds text parts and thinking parts (whose own text
// parts are the thinking).
func deltaContent(raw json.RawMessage) (text, thinking string, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", "", nil
	}
	if raw[0] == '"' {
		err = json.Unmarshal(raw, &text)
		return text, "", err
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Thinking []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"thinking"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", "", err
	}
	var t, th strings.Builder
	for _, p := range parts {
		switch p.Type {
		case "text":
			t.WriteString(p.Text)
		case "thinking":
			for _, q := range p.Thinking {
				th.WriteString(q.Text)
			}
		}
	}
	return t.String(), th.String(), nil
}

// Block indices in events: thinking, text, then one per tool call.
const (
	indexThinking = 0
	indexText     = 1
	indexTools    = 2
)

type call struct {
	id, name string
	args     strings.Builder
	started  bool
}

// parseStream reads a Chat Completions chunk stream and assembles the
// response.
func parseStream(ctx context.Context, body io.Reader, emit func(provider.Event) error) (_ provider.Response, err error) {
	defer func() {
		var pe *provider.Error
		if errors.As(err, &pe) && pe.Provider == "" {
			pe.Provider = provider.OpenAIChat
		}
	}()
	r := sse.NewReader(body)
	var resp provider.Response
	var thinking, text strings.Builder
	thinkingField := ""
	refused := false // the text is a refusal (delta.refusal)
	calls := map[int]*call{}
	finish := ""
	var usage provider.Usage
	// A call is whole once the stream finished normally, or, in a stream cut
	// by the length limit, once a later call began.
	finished := func(k int) bool {
		if finish == "" {
			return false
		}
		if finish != "length" {
			return true
		}
		keys := sortedKeys(calls)
		return k < keys[len(keys)-1]
	}
	complete := func() provider.Response {
		m := provider.Message{Role: provider.Assistant}
		if thinking.Len() > 0 {
			m.Content = append(m.Content, provider.Block{Type: provider.BlockThinking, Thinking: &provider.Thinking{Provider: provider.OpenAIChat, Text: thinking.String(), Field: thinkingField}})
		}
		if text.Len() > 0 {
			m.Content = append(m.Content, provider.Text(text.String()))
		}
		for _, k := range sortedKeys(calls) {
			tu := calls[k].toolUse(finished(k))
			m.Content = append(m.Content, provider.Block{Type: provider.BlockToolUse, ToolUse: &tu})
		}
		resp.Message = m
		resp.Usage = usage
		resp.StopReason = stopReason(finish, len(calls) > 0, refused)
		return resp
	}
	done := func() (provider.Response, error) {
		for _, k := range sortedKeys(calls) {
			tu := calls[k].toolUse(finished(k))
			if err := emit(provider.Event{Type: provider.EventToolEnd, Index: indexTools + k, ToolUse: &tu}); err != nil {
				return complete(), err
			}
		}
		out := complete()
		if err := emit(provider.Event{Type: provider.EventUsage, Usage: out.Usage}); err != nil {
			return out, err
		}
		return out, nil
	}
	for {
		ev, err := r.Next()
		if err != nil {
			if ctx.Err() != nil {
				return complete(), ctx.Err()
			}
			if errors.Is(err, io.EOF) && finish != "" {
				return done() // some servers end without [DONE]
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return complete(), &provider.Error{Kind: provider.ErrStream, Message: "ended before the finish reason", Err: err}
		}
		if strings.TrimSpace(string(ev.Data)) == "[DONE]" {
			if finish == "" {
				return complete(), &provider.Error{Kind: provider.ErrStream, Message: "[DONE] without a finish reason"}
			}
			return done()
		}
		var ch wireChunk
		if err := json.Unmarshal(ev.Data, &ch); err != nil {
			return complete(), &provider.Error{Kind: provider.ErrStream, Message: fmt.Sprintf("undecodable chunk: %v", err)}
		}
		if ch.Error != nil {
			return complete(), streamError(ch.Error)
		}
		if resp.ID == "" {
			resp.ID, resp.Model = ch.ID, ch.Model
		}
		if u := ch.Usage; u != nil {
			cached := 0
			if u.PromptTokensDetails != nil {
				cached = u.PromptTokensDetails.CachedTokens
			}
			usage = provider.Usage{Input: u.PromptTokens - cached, Output: u.CompletionTokens, CacheRead: cached}
		}
		for _, choice := range ch.Choices {
			d := choice.Delta
			content, contentThinking, err := deltaContent(d.Content)
			if err != nil {
				return complete(), &provider.Error{Kind: provider.ErrStream, Message: fmt.Sprintf("undecodable delta content: %v", err)}
			}
			var events []provider.Event
			for _, r := range []struct {
				field string
				text  *string
			}{{fieldReasoningContent, d.ReasoningContent}, {fieldReasoning, d.Reasoning}, {fieldThinkingPart, &contentThinking}} {
				if r.text != nil && *r.text != "" {
					if thinkingField == "" {
						thinkingField = r.field
					}
					thinking.WriteString(*r.text)
					events = append(events, provider.Event{Type: provider.EventThinking, Index: indexThinking, Text: *r.text})
				}
			}
			if d.Refusal != nil && *d.Refusal != "" {
				refused = true
			}
			for _, t := range []*string{&content, d.Refusal} {
				if t != nil && *t != "" {
					text.WriteString(*t)
					events = append(events, provider.Event{Type: provider.EventText, Index: indexText, Text: *t})
				}
			}
			for i, tc := range d.ToolCalls {
				k := i
				if tc.Index != nil {
					k = *tc.Index
				}
				c, ok := calls[k]
				if !ok {
					c = &call{}
					calls[k] = c
				}
				if tc.ID != "" {
					c.id = tc.ID
				}
				if tc.Function.Name != "" {
					c.name = tc.Function.Name
				}
				if !c.started && c.name != "" {
					c.started = true
					if c.id == "" {
						c.id = "call_" + strconv.Itoa(k) // some local servers send none
					}
					events = append(events, provider.Event{Type: provider.EventToolStart, Index: indexTools + k, ToolUse: &provider.ToolUse{ID: c.id, Name: c.name}})
				}
				if a := tc.Function.Arguments; a != "" {
					c.args.WriteString(a)
					events = append(events, provider.Event{Type: provider.EventToolDelta, Index: indexTools + k, Text: a})
				}
			}
			if choice.FinishReason != nil && *choice.FinishReason != "" {
				finish = *choice.FinishReason
			}
			for _, e := range events {
				if err := emit(e); err != nil {
					return complete(), err
				}
			}
		}
	}
}

func (c *call) toolUse(finished bool) provider.ToolUse {
	args := c.args.String()
	if args == "" && finished {
		args = "{}"
	}
	var obj map[string]json.RawMessage
	if !finished || json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
		return provider.ToolUse{ID: c.id, Name: c.name, Incomplete: true, PartialInput: args}
	}
	return provider.ToolUse{ID: c.id, Name: c.name, Input: json.RawMessage(args)}
}

func sortedKeys(m map[int]*call) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}

func stopReason(finish string, hasCalls, refused bool) provider.StopReason {
	switch {
	case finish == "":
		return ""
	case finish == "length":
		return provider.StopMaxTokens
	case finish == "content_filter" || refused:
		// A refusal streamed in delta.refusal ends with "stop"; it means
		// what the Responses API's refusal means.
		return provider.StopRefusal
	}
	if hasCalls {
		// Some servers (Ollama) say "stop" for a turn that called tools.
		return provider.StopToolUse
	}
	return provider.StopEndTurn
}

// streamError turns an error sent inside the stream into a typed error.
// Its status (a numeric code, or Groq's status_code) classifies it like
// the HTTP error it stands for; without one, an error the server does not
// call an invalid request is the server's.
func streamError(e *wireError) *provider.Error {
	code := codeString(e.Code)
	status := e.StatusCode
	if n, ok := e.Code.(float64); ok && status == 0 && n >= 400 && n < 600 {
		status = int(n)
		code = ""
	}
	if code == "" {
		code = e.Type
	}
	kind := provider.Classify(status, code, e.Message)
	if kind == provider.ErrInvalidRequest && status == 0 && !strings.Contains(code, "invalid") {
		kind = provider.ErrServer
	}
	return &provider.Error{Kind: kind, Status: status, Type: code, Message: e.Message}
}

func codeString(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case float64:
		return strconv.Itoa(int(c))
	}
	return ""
}

func decodeError(body []byte) (typ, msg string) {
	var w struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &w) != nil || len(w.Error) == 0 {
		return "", ""
	}
	// Some servers send "error": "message".
	var s string
	if json.Unmarshal(w.Error, &s) == nil {
		return "", s
	}
	var e wireError
	if json.Unmarshal(w.Error, &e) != nil {
		return "", ""
	}
	typ = codeString(e.Code)
	if typ == "" {
		typ = e.Type
	}
	return typ, e.Message
}

package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"brig/agent/provider"
	"brig/agent/provider/internal/sse"
	"brig/agent/provider/internal/wirecache"
)

// ---- request ----

// A request body is wireHead's fields, then "input" (the items of every
// message, encodeMessage), then wireTail's (wirecache.Body).
type wireHead struct {
	Model        string `json:"model"`
	Instructions string `json:"instructions,omitempty"`
}

type wireTail struct {
	Tools           []any           `json:"tools,omitempty"`
	MaxOutputTokens int             `json:"max_output_tokens,omitempty"`
	Reasoning       *wireReasoning  `json:"reasoning,omitempty"`
	Include         []string        `json:"include,omitempty"`
	Store           bool            `json:"store"`
	Stream          bool            `json:"stream"`
	PromptCacheKey  string          `json:"prompt_cache_key,omitempty"`
	Text            json.RawMessage `json:"text,omitempty"`
}

type wireReasoning struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary,omitempty"`
}

type wireFunction struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

type wireMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"` // a string, or content parts
}

type wirePart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
}

type wireFunctionCall struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireFunctionOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

type wireSummary struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// wireReasoningItem is a reasoning item sent back. It has no id: requests
// are stateless (store false), so the service cannot look an id up, and
// has been recorded refusing a history where a reasoning item carries one
// and the item after it does not ("provided without its required following
// item"). The encrypted content is what it needs.
type wireReasoningItem struct {
	Type             string        `json:"type"`
	Summary          []wireSummary `json:"summary"`
	EncryptedContent string        `json:"encrypted_content,omitempty"`
}

// reasons reports whether the registry knows model as one that reasons
// (gpt-5, o3 …); a model it does not know is not sent reasoning options,
// which a model without reasoning refuses.
func reasons(model string) bool {
	m, err := provider.Lookup(model, true)
	return err == nil && m.Known && m.Reasoning()
}

// buildRequest converts req to the Responses JSON body, the messages' JSON
// taken from cache where it holds them (nil: all encoded now).
func buildRequest(req provider.Request, cache *wirecache.Cache) ([]byte, error) {
	head := wireHead{Model: req.Model, Instructions: req.System}
	w := wireTail{MaxOutputTokens: req.MaxTokens, Stream: true, PromptCacheKey: req.CacheKey}
	if w.MaxOutputTokens <= 0 {
		w.MaxOutputTokens = provider.DefaultMaxTokens(req.Model)
	}
	if req.Effort != provider.EffortNone || reasons(req.Model) {
		// A reasoning model reasons whether or not an effort is given
		// (the API's default then): its summary is asked for, and, as
		// the request is stateless, its reasoning comes back encrypted
		// and is sent back as is, so that the next turn keeps it.
		w.Reasoning = &wireReasoning{Effort: string(req.Effort), Summary: "auto"}
		w.Include = []string{"reasoning.encrypted_content"}
	}
	for _, t := range req.Tools {
		params := t.InputSchema
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		w.Tools = append(w.Tools, wireFunction{Type: "function", Name: t.Name, Description: t.Description, Parameters: params})
	}
	if req.WebSearch {
		w.Tools = append(w.Tools, map[string]string{"type": "web_search"})
	}
	items, err := cache.Items(req.Messages, func(m provider.Message) ([]any, error) { return encodeMessage(m), nil })
	if err != nil {
		return nil, err
	}
	return wirecache.Marshal(head, "input", items, w)
}

func dataURL(im *provider.Image) string {
	return "data:" + im.MediaType + ";base64," + base64.StdEncoding.EncodeToString(im.Data)
}

// encodeMessage turns one message into input items, keeping block order:
// text and images gather into message items, the other blocks are items of
// their own. Images in tool results follow as a user message, since a
// function_call_output carries text.
func encodeMessage(m provider.Message) []any {
	var items []any
	var parts []wirePart
	var text strings.Builder // assistant text
	var toolImages []wirePart
	flush := func() {
		if m.Role == provider.Assistant && text.Len() > 0 {
			items = append(items, wireMessage{Role: "assistant", Content: text.String()})
			text.Reset()
		}
		if len(parts) > 0 {
			items = append(items, wireMessage{Role: "user", Content: parts})
			parts = nil
		}
	}
	for _, b := range m.Content {
		switch b.Type {
		case provider.BlockText:
			if b.Text == "" {
				continue
			}
			if m.Role == provider.Assistant {
				text.WriteString(b.Text)
			} else {
				parts = append(parts, wirePart{Type: "input_text", Text: b.Text})
			}
		case provider.BlockImage:
			if b.Image != nil && m.Role == provider.User {
				parts = append(parts, wirePart{Type: "input_image", ImageURL: dataURL(b.Image)})
			}
		case provider.BlockToolUse:
			if tu := b.ToolUse; tu != nil {
				flush()
				args := string(tu.Input)
				if tu.Incomplete || !json.Valid(tu.Input) {
					args = "{}"
				}
				items = append(items, wireFunctionCall{Type: "function_call", CallID: tu.ID, Name: tu.Name, Arguments: args})
			}
		case provider.BlockToolResult:
			if r := b.ToolResult; r != nil {
				flush()
				s, images := r.Split()
				for _, img := range images {
					toolImages = append(toolImages, wirePart{Type: "input_text", Text: "Image from tool call " + r.ToolUseID + ":"},
						wirePart{Type: "input_image", ImageURL: dataURL(img)})
				}
				items = append(items, wireFunctionOutput{Type: "function_call_output", CallID: r.ToolUseID, Output: s})
			}
		case provider.BlockThinking:
			t := b.Thinking
			if t == nil || t.Provider != provider.OpenAI || t.EncryptedContent == "" {
				continue // without its encrypted content a stateless request cannot use it
			}
			flush()
			item := wireReasoningItem{Type: "reasoning", Summary: []wireSummary{}, EncryptedContent: t.EncryptedContent}
			if t.Text != "" {
				item.Summary = []wireSummary{{Type: "summary_text", Text: t.Text}}
			}
			items = append(items, item)
		case provider.BlockServerTool:
			if st := b.ServerTool; st != nil && st.Provider == provider.OpenAI {
				if raw, ok := withoutID(st.Raw); ok {
					flush()
					items = append(items, raw)
				}
			}
		}
	}
	flush()
	if len(toolImages) > 0 {
		items = append(items, wireMessage{Role: "user", Content: toolImages})
	}
	return items
}

// withoutID returns a provider-side item as received, less its "id" (see
// wireReasoningItem), or false when it is not a JSON object.
func withoutID(raw json.RawMessage) (json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return nil, false
	}
	delete(obj, "id")
	out, err := json.Marshal(obj)
	return out, err == nil
}

// ---- stream ----

type wireUsage struct {
	InputTokens        int `json:"input_tokens"`
	OutputTokens       int `json:"output_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
}

type wireResponse struct {
	ID                string     `json:"id"`
	Model             string     `json:"model"`
	Status            string     `json:"status"`
	Usage             *wireUsage `json:"usage"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error *wireError `json:"error"`
}

type wireError struct {
	Code    *string `json:"code"` // null in some events
	Type    string  `json:"type"`
	Message string  `json:"message"`
}

type wireItem struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	CallID           string          `json:"call_id"`
	Name             string          `json:"name"`
	Arguments        string          `json:"arguments"`
	EncryptedContent string          `json:"encrypted_content"`
	Summary          []wireSummary   `json:"summary"`
	Content          []wireSummary   `json:"content"` // output_text / refusal parts
	Action           json.RawMessage `json:"action"`
}

type wireEvent struct {
	Type        string          `json:"type"`
	OutputIndex int             `json:"output_index"`
	Delta       string          `json:"delta"`
	Item        json.RawMessage `json:"item"`
	Response    *wireResponse   `json:"response"`
	// An "error" event nests {type, code, message} under error; the API
	// reference also shows them at the top level, so both are read.
	Error   *wireError `json:"error"`
	Code    *string    `json:"code"`
	Message string     `json:"message"`
}

// item is an output item being assembled.
type item struct {
	kind      string
	id        string
	callID    string
	name      string
	text      strings.Builder // message text, refusal, or reasoning summary
	args      strings.Builder
	encrypted string
	raw       json.RawMessage // a finished web_search_call (or other server item)
	done      bool
	refusal   bool
}

// parseStream reads a Responses event stream and assembles the response.
func parseStream(ctx context.Context, body io.Reader, emit func(provider.Event) error) (_ provider.Response, err error) {
	defer func() {
		var pe *provider.Error
		if errors.As(err, &pe) && pe.Provider == "" {
			pe.Provider = provider.OpenAI
		}
	}()
	r := sse.NewReader(body)
	var resp provider.Response
	items := map[int]*item{}
	var final *wireResponse
	finish := func() provider.Response {
		resp.Message = assemble(items)
		if final != nil {
			resp.StopReason = stopReason(final, items)
			if u := final.Usage; u != nil {
				cached := u.InputTokensDetails.CachedTokens
				resp.Usage = provider.Usage{Input: u.InputTokens - cached, Output: u.OutputTokens, CacheRead: cached}
			}
		}
		return resp
	}
	get := func(i int) *item {
		if it, ok := items[i]; ok {
			return it
		}
		it := &item{}
		items[i] = it
		return it
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
			return finish(), &provider.Error{Kind: provider.ErrStream, Message: "ended before response.completed", Err: err}
		}
		var we wireEvent
		if err := json.Unmarshal(ev.Data, &we); err != nil {
			return finish(), &provider.Error{Kind: provider.ErrStream, Message: fmt.Sprintf("undecodable %s event: %v", ev.Name, err)}
		}
		var emitErr error
		switch we.Type {
		case "response.created", "response.in_progress":
			if we.Response != nil {
				resp.ID, resp.Model = we.Response.ID, we.Response.Model
			}
		case "response.output_item.added":
			var wi wireItem
			if err := json.Unmarshal(we.Item, &wi); err != nil {
				return finish(), &provider.Error{Kind: provider.ErrStream, Message: "undecodable output item: " + err.Error()}
			}
			it := get(we.OutputIndex)
			it.kind, it.id, it.callID, it.name = wi.Type, wi.ID, wi.CallID, wi.Name
			if wi.Type == "function_call" {
				it.args.WriteString(wi.Arguments)
				emitErr = emit(provider.Event{Type: provider.EventToolStart, Index: we.OutputIndex, ToolUse: &provider.ToolUse{ID: wi.CallID, Name: wi.Name}})
			}
		case "response.output_text.delta", "response.refusal.delta":
			it := get(we.OutputIndex)
			it.text.WriteString(we.Delta)
			it.refusal = it.refusal || we.Type == "response.refusal.delta"
			emitErr = emit(provider.Event{Type: provider.EventText, Index: we.OutputIndex, Text: we.Delta})
		case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
			it := get(we.OutputIndex)
			it.text.WriteString(we.Delta)
			emitErr = emit(provider.Event{Type: provider.EventThinking, Index: we.OutputIndex, Text: we.Delta})
		case "response.reasoning_summary_part.added":
			// A new summary paragraph: keep paragraphs apart.
			if it := get(we.OutputIndex); it.text.Len() > 0 {
				it.text.WriteString("\n\n")
				emitErr = emit(provider.Event{Type: provider.EventThinking, Index: we.OutputIndex, Text: "\n\n"})
			}
		case "response.function_call_arguments.delta":
			it := get(we.OutputIndex)
			it.args.WriteString(we.Delta)
			emitErr = emit(provider.Event{Type: provider.EventToolDelta, Index: we.OutputIndex, Text: we.Delta})
		case "response.output_item.done":
			var wi wireItem
			if err := json.Unmarshal(we.Item, &wi); err != nil {
				return finish(), &provider.Error{Kind: provider.ErrStream, Message: "undecodable output item: " + err.Error()}
			}
			it := get(we.OutputIndex)
			it.kind, it.id, it.done = wi.Type, wi.ID, true
			switch wi.Type {
			case "function_call":
				it.callID, it.name = wi.CallID, wi.Name
				it.args.Reset()
				it.args.WriteString(wi.Arguments)
				tu := it.toolUse()
				emitErr = emit(provider.Event{Type: provider.EventToolEnd, Index: we.OutputIndex, ToolUse: &tu})
			case "reasoning":
				it.encrypted = wi.EncryptedContent
				if it.text.Len() == 0 {
					var parts []string
					for _, s := range wi.Summary {
						parts = append(parts, s.Text)
					}
					it.text.WriteString(strings.Join(parts, "\n\n"))
				}
			case "message":
				if it.text.Len() == 0 {
					for _, c := range wi.Content {
						it.text.WriteString(c.Text)
					}
				}
			default: // web_search_call and other provider-side items
				it.raw = append(json.RawMessage(nil), we.Item...)
				emitErr = emit(provider.Event{Type: provider.EventServerTool, Index: we.OutputIndex, Text: serverSummary(wi)})
			}
		case "response.completed", "response.incomplete":
			final = we.Response
			out := finish()
			if err := emit(provider.Event{Type: provider.EventUsage, Usage: out.Usage}); err != nil {
				return out, err
			}
			return out, nil
		case "response.failed":
			e := &wireError{Type: "server_error", Message: "response failed"}
			if we.Response != nil && we.Response.Error != nil {
				e = we.Response.Error
			}
			return finish(), streamError(e)
		case "error":
			e := we.Error
			if e == nil {
				e = &wireError{Code: we.Code, Message: we.Message}
			}
			return finish(), streamError(e)
		}
		if emitErr != nil {
			return finish(), emitErr
		}
	}
}

// streamError types an error sent in the stream by its code (else its
// type) and message: insufficient_quota is a quota error, an invalid
// request stays one (neither is retried), and an error the service does
// not call an invalid request is the server's.
func streamError(e *wireError) *provider.Error {
	typ := e.Type
	if e.Code != nil && *e.Code != "" {
		typ = *e.Code
	}
	kind := provider.Classify(0, typ, e.Message)
	if kind == provider.ErrInvalidRequest && !strings.Contains(typ, "invalid") {
		kind = provider.ErrServer
	}
	return &provider.Error{Kind: kind, Type: typ, Message: e.Message}
}

func (it *item) toolUse() provider.ToolUse {
	args := it.args.String()
	if args == "" && it.done {
		args = "{}"
	}
	var obj map[string]json.RawMessage
	if !it.done || json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
		return provider.ToolUse{ID: it.callID, Name: it.name, Incomplete: true, PartialInput: args}
	}
	return provider.ToolUse{ID: it.callID, Name: it.name, Input: json.RawMessage(args)}
}

func serverSummary(wi wireItem) string {
	var a struct {
		Query string `json:"query"`
	}
	_ = json.Unmarshal(wi.Action, &a)
	if wi.Type == "web_search_call" {
		return "web_search: " + a.Query
	}
	return wi.Type
}

func assemble(items map[int]*item) provider.Message {
	m := provider.Message{Role: provider.Assistant}
	keys := make([]int, 0, len(items))
	for k := range items {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	for _, k := range keys {
		it := items[k]
		switch it.kind {
		case "message":
			if it.text.Len() > 0 {
				m.Content = append(m.Content, provider.Text(it.text.String()))
			}
		case "reasoning":
			m.Content = append(m.Content, provider.Block{Type: provider.BlockThinking, Thinking: &provider.Thinking{
				Provider: provider.OpenAI, ID: it.id, Text: it.text.String(), EncryptedContent: it.encrypted}})
		case "function_call":
			tu := it.toolUse()
			m.Content = append(m.Content, provider.Block{Type: provider.BlockToolUse, ToolUse: &tu})
		default:
			if it.raw != nil {
				var wi wireItem
				_ = json.Unmarshal(it.raw, &wi)
				name := it.kind
				if name == "web_search_call" {
					name = "web_search"
				}
				m.Content = append(m.Content, provider.Block{Type: provider.BlockServerTool, ServerTool: &provider.ServerTool{
					Provider: provider.OpenAI, Name: name, Raw: it.raw, Summary: serverSummary(wi)}})
			}
		}
	}
	return m
}

func stopReason(r *wireResponse, items map[int]*item) provider.StopReason {
	if r.Status == "incomplete" {
		if r.IncompleteDetails != nil && r.IncompleteDetails.Reason == "content_filter" {
			return provider.StopRefusal
		}
		return provider.StopMaxTokens
	}
	for _, it := range items {
		if it.refusal {
			return provider.StopRefusal
		}
	}
	for _, it := range items {
		if it.kind == "function_call" {
			return provider.StopToolUse
		}
	}
	return provider.StopEndTurn
}

func decodeError(body []byte) (typ, msg string) {
	var w struct {
		Error *wireError `json:"error"`
	}
	if json.Unmarshal(body, &w) != nil || w.Error == nil {
		return "", ""
	}
	typ = w.Error.Type
	if w.Error.Code != nil && *w.Error.Code != "" {
		typ = *w.Error.Code
	}
	return typ, w.Error.Message
}

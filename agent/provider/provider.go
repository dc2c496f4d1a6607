// Package provider holds brig's provider-neutral conversation types — messages,
// content blocks, tool specs, requests, responses, usage, stream events — the
// Client interface the turn loop talks to, typed errors, the retry policy, and
// the model registry with prices.
//
// Wire formats live in the client packages below it (anthropic, openai,
// openaichat) and never leave them. This package must not execute tools, read
// the environment or credentials files, or know any provider's JSON shapes.
package provider

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
)

// Name identifies a provider wire format. Blocks only one provider can accept
// back (thinking signatures, reasoning items, server-side search results) are
// tagged with the Name that produced them.
type Name string

// The wire formats brig speaks.
const (
	Anthropic  Name = "anthropic"  // Anthropic Messages API
	OpenAI     Name = "openai"     // OpenAI Responses API
	OpenAIChat Name = "openaichat" // Chat Completions, any OpenAI-compatible server
)

// String is the name as the user writes it (--provider): the Chat Completions
// wire is "openai-chat" there, while session files keep the value itself.
func (n Name) String() string {
	if n == OpenAIChat {
		return "openai-chat"
	}
	return string(n)
}

// Role is who wrote a message.
type Role string

// Roles. The system prompt is Request.System, not a message.
const (
	User      Role = "user"
	Assistant Role = "assistant"
)

// BlockType is the kind of a content block.
type BlockType string

// Block types.
const (
	BlockText       BlockType = "text"
	BlockImage      BlockType = "image"
	BlockToolUse    BlockType = "tool_use"
	BlockToolResult BlockType = "tool_result"
	// BlockThinking is the model's reasoning: shown to the user, and sent back
	// verbatim (with its signature / encrypted content) to the provider that
	// produced it, never to another.
	BlockThinking BlockType = "thinking"
	// BlockServerTool is a block of a provider-side tool (web search call or
	// results), kept as the provider's raw JSON and only ever sent back to the
	// same provider.
	BlockServerTool BlockType = "server_tool"
)

// Message is one turn of the conversation.
type Message struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content"`
}

// Block is one piece of a message. Exactly the field matching Type is set
// (Text for BlockText).
type Block struct {
	Type       BlockType   `json:"type"`
	Text       string      `json:"text,omitempty"`
	Image      *Image      `json:"image,omitempty"`
	ToolUse    *ToolUse    `json:"tool_use,omitempty"`
	ToolResult *ToolResult `json:"tool_result,omitempty"`
	Thinking   *Thinking   `json:"thinking,omitempty"`
	ServerTool *ServerTool `json:"server_tool,omitempty"`
}

// Image is an inline image.
type Image struct {
	MediaType string `json:"media_type"` // image/png, image/jpeg, image/gif, image/webp
	Data      []byte `json:"data"`       // raw bytes (base64 on the wire)
}

// ToolUse is the model asking for a tool call.
type ToolUse struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// Incomplete marks a call whose arguments were cut off (the response
	// stopped at max_tokens, or the stream broke mid-call): it must never be
	// executed. Input is then nil and PartialInput holds the text that did
	// arrive. Clients send such a call back with empty arguments so history
	// stays provider-valid (the loop still answers it with an error result).
	Incomplete   bool   `json:"incomplete,omitempty"`
	PartialInput string `json:"partial_input,omitempty"`
}

// ToolResult answers one ToolUse.
type ToolResult struct {
	ToolUseID string  `json:"tool_use_id"`
	IsError   bool    `json:"is_error,omitempty"`
	Content   []Block `json:"content"` // BlockText and BlockImage only
}

// Split returns the result's text blocks joined by newlines, prefixed with
// "Error: " when the result is an error (for wire formats whose tool output
// is a plain string without an error flag), and its images.
func (r ToolResult) Split() (string, []*Image) {
	var texts []string
	var images []*Image
	for _, c := range r.Content {
		switch {
		case c.Type == BlockText:
			texts = append(texts, c.Text)
		case c.Type == BlockImage && c.Image != nil:
			images = append(images, c.Image)
		}
	}
	s := strings.Join(texts, "\n")
	if r.IsError {
		s = "Error: " + s
	}
	return s, images
}

// Thinking is reasoning content, opaque to everything but the provider that
// produced it.
type Thinking struct {
	Provider Name   `json:"provider"`
	Text     string `json:"text,omitempty"` // readable reasoning or its summary
	// Anthropic: the thinking block's signature, or the data of a
	// redacted_thinking block (then Text is empty).
	Signature string `json:"signature,omitempty"`
	Redacted  string `json:"redacted,omitempty"`
	// OpenAI Responses: the reasoning item's id and encrypted content (brig
	// does not store responses server-side, so the content travels with it).
	ID               string `json:"id,omitempty"`
	EncryptedContent string `json:"encrypted_content,omitempty"`
	// Chat Completions: the delta field the reasoning streamed in
	// ("reasoning_content", "reasoning"); it goes back to the server only
	// under the name the server itself used.
	Field string `json:"field,omitempty"`
}

// ServerTool is a provider-side tool block (web search), as the provider's
// own JSON.
type ServerTool struct {
	Provider Name            `json:"provider"`
	Name     string          `json:"name"` // e.g. "web_search"
	Raw      json.RawMessage `json:"raw"`
	// Summary is plain text for other providers and the UI: the query, or
	// the titles and URLs of the results.
	Summary string `json:"summary,omitempty"`
}

// Text returns a text block.
func Text(s string) Block { return Block{Type: BlockText, Text: s} }

// ToolResultBlock returns a tool_result block with text content.
func ToolResultBlock(toolUseID, text string, isError bool) Block {
	return Block{Type: BlockToolResult, ToolResult: &ToolResult{ToolUseID: toolUseID, IsError: isError, Content: []Block{Text(text)}}}
}

// ToolUses returns the message's tool calls, complete or not, in order.
func (m Message) ToolUses() []ToolUse {
	var out []ToolUse
	for _, b := range m.Content {
		if b.Type == BlockToolUse && b.ToolUse != nil {
			out = append(out, *b.ToolUse)
		}
	}
	return out
}

// PlainText concatenates the message's text blocks.
func (m Message) PlainText() string {
	var s string
	for _, b := range m.Content {
		if b.Type == BlockText {
			s += b.Text
		}
	}
	return s
}

// ToolSpec describes a tool the model may call.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"` // a JSON Schema object
}

// Effort is how hard a reasoning model should think. "" leaves the model's
// default (and no thinking on Anthropic models).
type Effort string

// Efforts.
const (
	EffortNone    Effort = ""
	EffortMinimal Effort = "minimal"
	EffortLow     Effort = "low"
	EffortMedium  Effort = "medium"
	EffortHigh    Effort = "high"
)

// Request is one model call.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	Tools     []ToolSpec
	MaxTokens int // output limit; 0 means the registry's default for Model
	Effort    Effort
	// WebSearch enables the provider's server-side web search tool
	// (Anthropic web_search, OpenAI Responses web_search). Off by default.
	// Chat Completions has no such tool and ignores it.
	WebSearch bool
	// CacheKey is a stable id for prompt caching where the provider takes one
	// (OpenAI prompt_cache_key); typically the session id.
	CacheKey string
}

// StopReason says why the model stopped.
type StopReason string

// Stop reasons.
const (
	StopEndTurn   StopReason = "end_turn"
	StopToolUse   StopReason = "tool_use"
	StopMaxTokens StopReason = "max_tokens"
	StopRefusal   StopReason = "refusal"
	// StopPause is Anthropic's pause_turn: a long server-side tool turn was
	// paused; send the conversation back as is to let it continue.
	StopPause StopReason = "pause_turn"
	StopOther StopReason = "other"
)

// Usage counts tokens. Input excludes cached tokens on every provider
// (OpenAI's input_tokens, which includes them, is normalised), so the cost is
// a plain sum.
type Usage struct {
	Input      int `json:"input"`
	Output     int `json:"output"` // includes reasoning tokens
	CacheRead  int `json:"cache_read,omitempty"`
	CacheWrite int `json:"cache_write,omitempty"`
}

// MaxUsage bounds each count of one response's usage: no response is a
// billion tokens, and a larger figure is a provider's (or a proxy's) error.
const MaxUsage = 1 << 30

// Sane returns u with each count within [0, MaxUsage], so that a provider
// reporting a negative or absurd count (or a cached count larger than the
// input it is part of) cannot make the session's totals, its cost or its
// token budget negative or overflow.
func (u Usage) Sane() Usage {
	c := func(n int) int { return min(max(n, 0), MaxUsage) }
	return Usage{c(u.Input), c(u.Output), c(u.CacheRead), c(u.CacheWrite)}
}

// Add returns u + v.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.Input + v.Input, u.Output + v.Output, u.CacheRead + v.CacheRead, u.CacheWrite + v.CacheWrite}
}

// Total is all tokens counted.
func (u Usage) Total() int { return u.Input + u.Output + u.CacheRead + u.CacheWrite }

// Response is a finished model call.
type Response struct {
	ID         string     `json:"id,omitempty"`
	Model      string     `json:"model,omitempty"`
	Message    Message    `json:"message"` // the complete assistant message
	StopReason StopReason `json:"stop_reason,omitempty"`
	Usage      Usage      `json:"usage"`
	// Attempts is how many HTTP requests were made (1 + retries).
	Attempts int `json:"attempts,omitempty"`
}

// EventType is the kind of a stream event.
type EventType int

// Event types, in the order they can occur for one block: start, deltas, end.
const (
	EventText       EventType = iota + 1 // Text: a text delta
	EventThinking                        // Text: a thinking delta
	EventToolStart                       // ToolUse: ID and Name known, no input yet
	EventToolDelta                       // Text: a fragment of the tool's JSON input
	EventToolEnd                         // ToolUse: complete (or Incomplete) call
	EventServerTool                      // Text: a server-side tool ran (e.g. "web_search: query")
	EventUsage                           // Usage: the request's final usage
	// EventRetry: Text says that the request failed and is tried again
	// (nothing of it had arrived); it is not part of the answer.
	EventRetry
)

// Event is one streamed piece of a response.
type Event struct {
	Type    EventType `json:"type"`
	Index   int       `json:"index"` // the block's index in the provider's stream, stable for one block
	Text    string    `json:"text,omitempty"`
	ToolUse *ToolUse  `json:"tool_use,omitempty"`
	Usage   Usage     `json:"usage,omitzero"`
}

// Client sends a request and streams the answer.
type Client interface {
	// Provider is the wire format this client speaks.
	Provider() Name
	// Stream sends req and calls emit for each event as it arrives. It
	// returns when the response is complete, emit returns an error (which
	// Stream returns, wrapped), or ctx is done (promptly: the HTTP read is
	// aborted). Retryable failures (429, 5xx, overloaded, a broken connection)
	// are retried only while no event has been passed to emit. On an error
	// the Response holds what arrived so far (its Message may be partial);
	// errors from the provider are *Error.
	Stream(ctx context.Context, req Request, emit func(Event) error) (Response, error)
}

// Connector is a Client that can open its connection to the provider
// ahead of a request (the front ends do it as the session starts and as
// the user starts typing), so that the request does not wait for the
// handshakes. Connect sends nothing of the API and no key; its failure
// costs the next request nothing.
type Connector interface {
	Connect(ctx context.Context) error
}

var eventNames = map[EventType]string{
	EventText: "text", EventThinking: "thinking", EventToolStart: "tool_start", EventToolDelta: "tool_delta",
	EventToolEnd: "tool_end", EventServerTool: "server_tool", EventUsage: "usage", EventRetry: "retry",
}

// String names the event type.
func (t EventType) String() string {
	if s, ok := eventNames[t]; ok {
		return s
	}
	return "event(" + strconv.Itoa(int(t)) + ")"
}

// MarshalText makes event types readable in JSON (logs, stream-json output).
func (t EventType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

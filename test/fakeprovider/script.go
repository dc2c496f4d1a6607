// Package fakeprovider is a loopback HTTP server that speaks the three model
// wire formats brig uses — Anthropic Messages (/v1/messages), OpenAI
// Responses (/v1/responses) and Chat Completions (/v1/chat/completions) —
// with streaming, driven by a script of turns. It is written from the
// providers' public API references, for tests, end-to-end runs and
// benchmarks.
//
// It records every request (decoded JSON) and the time it spent on each, and
// refuses requests that break the providers' protocol rules (a tool call
// without its result) with the 400 a real API would send. It must not be
// imported by production code.
package fakeprovider

import (
	"encoding/json"
	"fmt"
	"os"
)

// Script is what the server answers, one Turn per request, in order (a
// turn with Match waits for a request that carries its marker).
type Script struct {
	Turns []Turn `json:"turns"`
	// APIKey, when set, must be sent (x-api-key or Authorization: Bearer);
	// other requests get the provider's 401.
	APIKey string `json:"api_key,omitempty"`
	// NoValidate turns off the protocol checks.
	NoValidate bool `json:"no_validate,omitempty"`
}

// Turn is one response.
type Turn struct {
	Thinking  string     `json:"thinking,omitempty"`
	Text      string     `json:"text,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// WebSearch makes the answer start with a provider-side web search
	// (Anthropic server_tool_use + web_search_tool_result, OpenAI
	// web_search_call; Chat Completions has none and ignores it).
	WebSearch *WebSearch `json:"web_search,omitempty"`
	// Usage overrides the token counts (default: derived from sizes).
	Usage *Usage `json:"usage,omitempty"`
	// Stop overrides the stop reason in the provider's own words
	// ("end_turn", "stop", …). Default: tool use when there are tool calls.
	Stop string `json:"stop,omitempty"`

	// Error answers with an HTTP error instead of a stream.
	Error *ErrorReply `json:"error,omitempty"`
	// StreamError sends an error event after StreamErrorAfter frames of a
	// normal stream, then ends the stream.
	StreamError      *ErrorReply `json:"stream_error,omitempty"`
	StreamErrorAfter int         `json:"stream_error_after,omitempty"`
	// CutMaxTokens stops the response at max_tokens in the middle of the
	// last tool call's JSON arguments (or of the text, without tool calls).
	CutMaxTokens bool `json:"cut_max_tokens,omitempty"`
	// DisconnectAfter drops the connection after that many frames (> 0).
	DisconnectAfter int `json:"disconnect_after,omitempty"`
	// ChunkDelayMS waits between frames (a slow stream).
	ChunkDelayMS int `json:"chunk_delay_ms,omitempty"`
	// ChunkSize is the size of text and argument pieces, default 16 bytes.
	ChunkSize int `json:"chunk_size,omitempty"`

	// Match, when set, makes this turn answer only a request whose body
	// contains it: each request gets the first turn not yet served that
	// accepts it (a turn without Match accepts any). Agents that run side
	// by side (subagents, an audit's chunks) mark their requests so that
	// each gets its own turns whatever the order of arrival; Check still
	// reads the turn before this one in the script.
	Match string `json:"match,omitempty"`

	// Check asserts what the tool results of the previous turn's calls
	// said before this turn is answered; Capture keeps values from them
	// for later turns (see Check and Capture).
	Check   []Check   `json:"check,omitempty"`
	Capture []Capture `json:"capture,omitempty"`
}

// ToolCall is one tool call of a turn.
type ToolCall struct {
	ID    string          `json:"id,omitempty"` // default: generated
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// WebSearch is a scripted provider-side search.
type WebSearch struct {
	Query   string `json:"query"`
	Results []struct {
		Title string `json:"title"`
		URL   string `json:"url"`
	} `json:"results"`
}

// Usage is a turn's token counts.
type Usage struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cache_read,omitempty"`
	CacheWrite int `json:"cache_write,omitempty"`
}

// ErrorReply is an error the server sends, shaped like the provider's.
type ErrorReply struct {
	Status int `json:"status"` // HTTP status (ignored for stream errors)
	// Type is the provider's error type or code ("overloaded_error",
	// "rate_limit_error", "model_not_found" …); default from the status.
	Type       string `json:"type,omitempty"`
	Message    string `json:"message,omitempty"`
	RetryAfter string `json:"retry_after,omitempty"` // Retry-After header value
}

// LoadScript reads a JSON script file.
func LoadScript(path string) (Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Script{}, fmt.Errorf("fakeprovider: %w", err)
	}
	var s Script
	if err := json.Unmarshal(data, &s); err != nil {
		return Script{}, fmt.Errorf("fakeprovider: %s: %w", path, err)
	}
	return s, nil
}

package fakeprovider

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Check is an assertion on one tool result that a request carries: the
// answer to the previous turn's call number Call (0-based). A turn with
// checks is answered only when every check passes; otherwise the server
// records a Failure and answers with a 400 that says what was wrong, so an
// agent that does not see its tools' results cannot get through a script.
type Check struct {
	Call        int    `json:"call,omitempty"`
	Contains    string `json:"contains,omitempty"`
	NotContains string `json:"not_contains,omitempty"`
	Regex       string `json:"regex,omitempty"`     // must match
	NotRegex    string `json:"not_regex,omitempty"` // must not match
	// IsError, when set, must equal the result's error flag.
	IsError *bool `json:"is_error,omitempty"`
}

// Capture takes a value out of one of those tool results: the first
// submatch of Regex (or the whole match when it has no group) is kept
// under Name, and "{{Name}}" in a later turn's text or tool-call input is
// replaced by it (JSON-escaped inside inputs).
type Capture struct {
	Call  int    `json:"call,omitempty"`
	Name  string `json:"name"`
	Regex string `json:"regex"`
}

// ToolResult is one tool result as a request carried it.
type ToolResult struct {
	ID      string `json:"id"`
	Text    string `json:"text"`
	IsError bool   `json:"is_error,omitempty"`
	Images  int    `json:"images,omitempty"`
}

// Failure is a check that did not hold.
type Failure struct {
	Turn   int    `json:"turn"`
	Call   int    `json:"call"`
	Tool   string `json:"tool"`
	Check  string `json:"check"`
	Result string `json:"result"` // the whole result as received ("<missing>" when absent)
}

func (f Failure) Error() string {
	return fmt.Sprintf("turn %d: the result of call %d (%s) %s; the result was:\n%s", f.Turn, f.Call, f.Tool, f.Check, f.Result)
}

// ToolResults returns the tool results of a request by call id, in the
// order they appear, for any of the three wire formats.
func (r Request) ToolResults() []ToolResult { return toolResults(r.Wire, r.Decoded) }

func toolResults(wire Wire, body map[string]any) []ToolResult {
	var out []ToolResult
	switch wire {
	case WireAnthropic:
		for _, m := range list(body["messages"]) {
			for _, b := range list(obj(m)["content"]) {
				blk := obj(b)
				if str(blk, "type") != "tool_result" {
					continue
				}
				tr := ToolResult{ID: str(blk, "tool_use_id")}
				tr.IsError, _ = blk["is_error"].(bool)
				if s, ok := blk["content"].(string); ok {
					tr.Text = s
				}
				var texts []string
				for _, c := range list(blk["content"]) {
					switch cb := obj(c); str(cb, "type") {
					case "text":
						texts = append(texts, str(cb, "text"))
					case "image":
						tr.Images++
					}
				}
				if len(texts) > 0 {
					tr.Text = strings.Join(texts, "\n")
				}
				out = append(out, tr)
			}
		}
	case WireResponses:
		for _, it := range list(body["input"]) {
			item := obj(it)
			if str(item, "type") != "function_call_output" {
				continue
			}
			tr := ToolResult{ID: str(item, "call_id")}
			if s, ok := item["output"].(string); ok {
				tr.Text = s
			}
			var texts []string
			for _, c := range list(item["output"]) {
				switch cb := obj(c); str(cb, "type") {
				case "input_text":
					texts = append(texts, str(cb, "text"))
				case "input_image":
					tr.Images++
				}
			}
			if len(texts) > 0 {
				tr.Text = strings.Join(texts, "\n")
			}
			tr.IsError = strings.HasPrefix(tr.Text, errorPrefix)
			out = append(out, tr)
		}
		// Images that a function output cannot carry follow as a user
		// message; they are counted on no result.
	case WireChat:
		for _, m := range list(body["messages"]) {
			msg := obj(m)
			if str(msg, "role") != "tool" {
				continue
			}
			tr := ToolResult{ID: str(msg, "tool_call_id")}
			if s, ok := msg["content"].(string); ok {
				tr.Text = s
			}
			var texts []string
			for _, c := range list(msg["content"]) {
				if cb := obj(c); str(cb, "type") == "text" {
					texts = append(texts, str(cb, "text"))
				}
			}
			if len(texts) > 0 {
				tr.Text = strings.Join(texts, "\n")
			}
			tr.IsError = strings.HasPrefix(tr.Text, errorPrefix)
			out = append(out, tr)
		}
	}
	return out
}

// errorPrefix is how brig marks a failed call's result on the OpenAI wires,
// which have no error flag (provider.ToolResult.Split).
const errorPrefix = "Error: "

// callPrefix is the prefix of the call ids this server makes up on a wire.
func callPrefix(wire Wire) string {
	if wire == WireAnthropic {
		return "toolu_fake_"
	}
	return "call_fake_"
}

// react runs turn n's checks and captures against the request and returns
// the turn with captured values substituted, or the failures.
func (s *Server) react(wire Wire, body map[string]any, n int) (Turn, []Failure) {
	turn := s.script.Turns[n]
	if len(turn.Check) == 0 && len(turn.Capture) == 0 {
		return s.substitute(turn), nil
	}
	if n == 0 {
		return turn, []Failure{{Turn: n, Check: "has checks, but the first turn answers no tool call", Result: "<none>"}}
	}
	prev := s.script.Turns[n-1]
	results := map[string]ToolResult{}
	for _, r := range toolResults(wire, body) {
		results[r.ID] = r
	}
	find := func(call int) (ToolResult, string, bool) {
		if call < 0 || call >= len(prev.ToolCalls) {
			return ToolResult{}, "?", false
		}
		c := prev.ToolCalls[call]
		r, ok := results[callID(callPrefix(wire), n-1, call, c)]
		return r, c.Name, ok
	}
	var fails []Failure
	fail := func(call int, tool, check string, r ToolResult, ok bool) {
		text := r.Text
		if !ok {
			text = "<missing>"
		}
		fails = append(fails, Failure{Turn: n, Call: call, Tool: tool, Check: check, Result: text})
	}
	for _, c := range turn.Check {
		r, tool, ok := find(c.Call)
		if !ok {
			fail(c.Call, tool, "is missing from the request", r, ok)
			continue
		}
		if c.Contains != "" && !strings.Contains(r.Text, s.expand(c.Contains)) {
			fail(c.Call, tool, fmt.Sprintf("does not contain %q", s.expand(c.Contains)), r, ok)
		}
		if c.NotContains != "" && strings.Contains(r.Text, s.expand(c.NotContains)) {
			fail(c.Call, tool, fmt.Sprintf("contains %q", s.expand(c.NotContains)), r, ok)
		}
		if c.Regex != "" {
			if re, err := regexp.Compile(c.Regex); err != nil {
				fail(c.Call, tool, fmt.Sprintf("cannot be checked: bad regex %q: %v", c.Regex, err), r, ok)
			} else if !re.MatchString(r.Text) {
				fail(c.Call, tool, fmt.Sprintf("does not match /%s/", c.Regex), r, ok)
			}
		}
		if c.NotRegex != "" {
			if re, err := regexp.Compile(c.NotRegex); err != nil {
				fail(c.Call, tool, fmt.Sprintf("cannot be checked: bad regex %q: %v", c.NotRegex, err), r, ok)
			} else if re.MatchString(r.Text) {
				fail(c.Call, tool, fmt.Sprintf("matches /%s/", c.NotRegex), r, ok)
			}
		}
		if c.IsError != nil && r.IsError != *c.IsError {
			fail(c.Call, tool, fmt.Sprintf("has is_error=%v, want %v", r.IsError, *c.IsError), r, ok)
		}
	}
	for _, c := range turn.Capture {
		r, tool, ok := find(c.Call)
		re, err := regexp.Compile(c.Regex)
		if err != nil || !ok {
			fail(c.Call, tool, fmt.Sprintf("cannot give %s (regex %q: %v)", c.Name, c.Regex, err), r, ok)
			continue
		}
		m := re.FindStringSubmatch(r.Text)
		if m == nil {
			fail(c.Call, tool, fmt.Sprintf("has nothing matching /%s/ to capture as %s", c.Regex, c.Name), r, ok)
			continue
		}
		v := m[0]
		if len(m) > 1 {
			v = m[1]
		}
		s.mu.Lock()
		s.vars[c.Name] = v
		s.mu.Unlock()
	}
	if len(fails) > 0 {
		s.mu.Lock()
		s.failures = append(s.failures, fails...)
		s.mu.Unlock()
		return turn, fails
	}
	return s.substitute(turn), nil
}

// expand replaces {{name}} with captured values in plain text.
func (s *Server) expand(text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.vars {
		text = strings.ReplaceAll(text, "{{"+k+"}}", v)
	}
	return text
}

// substitute returns turn with captured values in its text and inputs.
func (s *Server) substitute(turn Turn) Turn {
	s.mu.Lock()
	vars := make(map[string]string, len(s.vars))
	for k, v := range s.vars {
		vars[k] = v
	}
	s.mu.Unlock()
	if len(vars) == 0 {
		return turn
	}
	turn.Text = s.expand(turn.Text)
	calls := make([]ToolCall, len(turn.ToolCalls))
	for i, c := range turn.ToolCalls {
		in := string(c.Input)
		for k, v := range vars {
			esc, _ := json.Marshal(v)
			in = strings.ReplaceAll(in, "{{"+k+"}}", string(esc[1:len(esc)-1]))
		}
		c.Input = json.RawMessage(in)
		calls[i] = c
	}
	turn.ToolCalls = calls
	return turn
}

// Failures returns the checks that did not hold so far.
func (s *Server) Failures() []Failure {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Failure(nil), s.failures...)
}

// TB is the part of testing.TB that Verify uses.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
}

// Verify fails t for every check that did not hold and for script turns
// that were never reached.
func (s *Server) Verify(t TB) {
	t.Helper()
	for _, f := range s.Failures() {
		t.Errorf("scenario check failed: %v", f)
	}
	if n := s.Remaining(); n > 0 && len(s.Failures()) == 0 {
		t.Errorf("the agent stopped with %d scripted turns left", n)
	}
}

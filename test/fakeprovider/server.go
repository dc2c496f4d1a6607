package fakeprovider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Wire names the format of a request, from its path.
type Wire string

// The wire formats served.
const (
	WireAnthropic Wire = "anthropic"  // POST /v1/messages
	WireResponses Wire = "openai"     // POST /v1/responses
	WireChat      Wire = "openaichat" // POST /v1/chat/completions
)

// Request is one request the server received.
type Request struct {
	Wire   Wire            `json:"wire"`
	Path   string          `json:"path"`
	Header http.Header     `json:"header"` // credentials replaced by "present"
	Body   json.RawMessage `json:"body"`
	// Decoded is Body as generic JSON, for assertions.
	Decoded map[string]any `json:"-"`
	// Turn is the script turn answered (-1 when none was: refused request).
	Turn   int    `json:"turn"`
	Status int    `json:"status"`
	Reject string `json:"reject,omitempty"` // why a request was refused
	// Received is when the request arrived; Duration is the server's own time
	// on it, from arrival to the last byte (scripted delays included).
	Received time.Time     `json:"received"`
	Duration time.Duration `json:"duration"`
	// Remote is the client's address: requests with the same one came
	// over the same connection.
	Remote string `json:"remote,omitempty"`
}

// Opening is a HEAD request for an API path: a client opening its
// connection ahead of a request. The server answers it as an API does
// (405, POST allowed) and keeps the connection.
type Opening struct {
	Path     string      `json:"path"`
	Header   http.Header `json:"header"` // credentials replaced by "present"
	Remote   string      `json:"remote"`
	Received time.Time   `json:"received"`
}

// Server is a running fake provider.
type Server struct {
	script    Script
	listener  net.Listener
	http      *http.Server
	onRequest func(Request)

	mu       sync.Mutex
	next     int    // the first turn not yet served
	served   []bool // turns served out of order (Match)
	requests []Request
	openings []Opening
	vars     map[string]string // captured values (Capture)
	failures []Failure         // checks that did not hold (Check)
}

// Option configures a Server.
type Option func(*Server)

// OnRequest calls f after each request is answered (cmd/fakeprovider uses it
// to write a log).
func OnRequest(f func(Request)) Option { return func(s *Server) { s.onRequest = f } }

// Start serves script on a loopback port until Close.
func Start(script Script, opts ...Option) (*Server, error) {
	return Listen("127.0.0.1:0", script, opts...)
}

// Listen serves script on addr until Close.
func Listen(addr string, script Script, opts ...Option) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fakeprovider: %w", err)
	}
	s := &Server{script: script, listener: l, vars: map[string]string{}}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.handler(WireAnthropic))
	mux.HandleFunc("POST /v1/responses", s.handler(WireResponses))
	mux.HandleFunc("POST /v1/chat/completions", s.handler(WireChat))
	for _, path := range []string{"/v1/messages", "/v1/responses", "/v1/chat/completions"} {
		mux.HandleFunc("HEAD "+path, s.opening)
	}
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.http.Serve(l) }()
	return s, nil
}

// URL is the server's root, e.g. http://127.0.0.1:40123. It is the Anthropic
// base URL as is; OpenAI clients use URL()+"/v1".
func (s *Server) URL() string { return "http://" + s.listener.Addr().String() }

// Close stops the server and ends open streams.
func (s *Server) Close() error { return s.http.Close() }

// Requests returns every request received so far, in order of arrival. A
// request whose stream is still open has its Body and Turn set and its
// Duration zero.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	copy(out, s.requests)
	return out
}

// Openings returns the HEAD requests received so far, in order of
// arrival.
func (s *Server) Openings() []Opening {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Opening(nil), s.openings...)
}

func (s *Server) opening(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.openings = append(s.openings, Opening{Path: r.URL.Path, Header: redactHeader(r.Header), Remote: r.RemoteAddr, Received: time.Now()})
	s.mu.Unlock()
	w.Header().Set("Allow", http.MethodPost)
	w.WriteHeader(http.StatusMethodNotAllowed)
}

// ServerTime is the server's own time over all requests so far (the sum of
// Request.Duration): what a benchmark subtracts from wall time to get the
// harness overhead.
func (s *Server) ServerTime() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var d time.Duration
	for _, r := range s.requests {
		d += r.Duration
	}
	return d
}

// Remaining is how many script turns are left.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.script.Turns) - s.next
	for i := s.next; i < len(s.served); i++ {
		if s.served[i] {
			n--
		}
	}
	return n
}

// pick takes the turn that answers a request with this body: the first
// one not yet served whose Match, if any, the body contains; -1 when no
// turn is left for it. The caller holds s.mu.
func (s *Server) pick(body []byte) int {
	turns := s.script.Turns
	if len(s.served) != len(turns) {
		s.served = make([]bool, len(turns))
	}
	for i := s.next; i < len(turns); i++ {
		if s.served[i] || (turns[i].Match != "" && !bytes.Contains(body, []byte(turns[i].Match))) {
			continue
		}
		s.served[i] = true
		for s.next < len(turns) && s.served[s.next] {
			s.next++
		}
		return i
	}
	return -1
}

func (s *Server) handler(wire Wire) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rec := Request{Wire: wire, Path: r.URL.Path, Header: redactHeader(r.Header), Turn: -1, Received: time.Now(), Remote: r.RemoteAddr}
		body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
		rec.Body = body
		// Listed once its body is read (a test may look while the stream
		// is still open, and finds what was sent), completed when the
		// handler returns.
		s.mu.Lock()
		slot := len(s.requests)
		s.requests = append(s.requests, rec)
		s.mu.Unlock()
		defer func() {
			rec.Duration = time.Since(rec.Received)
			s.mu.Lock()
			s.requests[slot] = rec
			s.mu.Unlock()
			if s.onRequest != nil {
				s.onRequest(rec)
			}
		}()
		if err != nil {
			rec.Status, rec.Reject = 400, "unreadable body"
			writeError(w, wire, ErrorReply{Status: 400, Message: "unreadable body"})
			return
		}
		if err := json.Unmarshal(body, &rec.Decoded); err != nil {
			rec.Status, rec.Reject = 400, "body is not a JSON object: "+err.Error()
			writeError(w, wire, ErrorReply{Status: 400, Message: rec.Reject})
			return
		}
		if s.script.APIKey != "" && !hasKey(r.Header, s.script.APIKey) {
			rec.Status, rec.Reject = 401, "bad API key"
			writeError(w, wire, ErrorReply{Status: 401, Message: "invalid x-api-key"})
			return
		}
		if !s.script.NoValidate {
			if msg := validate(wire, rec.Decoded); msg != "" {
				rec.Status, rec.Reject = 400, msg
				writeError(w, wire, ErrorReply{Status: 400, Message: msg})
				return
			}
		}
		s.mu.Lock()
		n := s.pick(body)
		s.mu.Unlock()
		if n < 0 {
			rec.Status, rec.Reject = 400, "script exhausted"
			writeError(w, wire, ErrorReply{Status: 400, Message: fmt.Sprintf("fake provider: script exhausted after %d turns (or no turn left matches this request)", len(s.script.Turns))})
			return
		}
		rec.Turn = n
		s.mu.Lock()
		s.requests[slot] = rec
		s.mu.Unlock()
		turn, fails := s.react(wire, rec.Decoded, n)
		if len(fails) > 0 {
			var msg []string
			for _, f := range fails {
				msg = append(msg, f.Error())
			}
			rec.Status, rec.Reject = 400, "scenario check failed"
			writeError(w, wire, ErrorReply{Status: 400, Type: "invalid_request_error", Message: "fake provider: scenario check failed: " + strings.Join(msg, "; ")})
			return
		}
		if turn.Error != nil {
			rec.Status = turn.Error.Status
			writeError(w, wire, *turn.Error)
			return
		}
		rec.Status = 200
		model, _ := rec.Decoded["model"].(string)
		var frames []frame
		switch wire {
		case WireAnthropic:
			frames = anthropicFrames(turn, n, model, len(body))
		case WireResponses:
			frames = responsesFrames(turn, n, model, len(body))
		case WireChat:
			frames = chatFrames(turn, n, model, len(body))
		}
		send(w, r, wire, turn, frames)
	}
}

// frame is one SSE event.
type frame struct {
	event string // "" for data-only streams (Chat Completions)
	data  string
}

func send(w http.ResponseWriter, r *http.Request, wire Wire, turn Turn, frames []frame) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	delay := time.Duration(turn.ChunkDelayMS) * time.Millisecond
	for i, f := range frames {
		if turn.DisconnectAfter > 0 && i == turn.DisconnectAfter {
			// Drop the connection without ending the response properly.
			panic(http.ErrAbortHandler)
		}
		if turn.StreamError != nil && i == turn.StreamErrorAfter {
			writeFrame(w, streamErrorFrame(wire, *turn.StreamError))
			if flusher != nil {
				flusher.Flush()
			}
			return
		}
		if i > 0 && delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		writeFrame(w, f)
		if flusher != nil {
			flusher.Flush()
		}
	}
}

func writeFrame(w io.Writer, f frame) {
	var b strings.Builder
	if f.event != "" {
		b.WriteString("event: " + f.event + "\n")
	}
	b.WriteString("data: " + f.data + "\n\n")
	_, _ = io.WriteString(w, b.String())
}

func redactHeader(h http.Header) http.Header {
	out := h.Clone()
	for _, k := range []string{"X-Api-Key", "Authorization"} {
		if out.Get(k) != "" {
			out.Set(k, "present")
		}
	}
	return out
}

func hasKey(h http.Header, key string) bool {
	return h.Get("X-Api-Key") == key || h.Get("Authorization") == "Bearer "+key
}

func writeError(w http.ResponseWriter, wire Wire, e ErrorReply) {
	if e.RetryAfter != "" {
		w.Header().Set("Retry-After", e.RetryAfter)
	}
	if e.Status == 0 {
		e.Status = 500
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	_, _ = w.Write(errorBody(wire, e))
}

// errorBody is e in the provider's error JSON.
func errorBody(wire Wire, e ErrorReply) []byte {
	if wire == WireAnthropic {
		typ := e.Type
		if typ == "" {
			typ = anthropicErrorType(e.Status)
		}
		msg := e.Message
		if msg == "" {
			msg = defaultMessage(typ)
		}
		b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
		return b
	}
	code := e.Type
	if code == "" {
		code = openAICode(e.Status)
	}
	msg := e.Message
	if msg == "" {
		msg = defaultMessage(code)
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": openAIType(e.Status), "param": nil, "code": code}})
	return b
}

func anthropicErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

func openAICode(status int) string {
	switch status {
	case 401:
		return "invalid_api_key"
	case 404:
		return "model_not_found"
	case 429:
		return "rate_limit_exceeded"
	case 400:
		return "invalid_request"
	}
	return "server_error"
}

func openAIType(status int) string {
	switch {
	case status == 429:
		return "requests"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

func defaultMessage(typ string) string {
	switch typ {
	case "overloaded_error":
		return "Overloaded"
	case "rate_limit_error", "rate_limit_exceeded":
		return "Rate limit reached"
	case "authentication_error", "invalid_api_key":
		return "invalid x-api-key"
	}
	return "error (" + typ + ")"
}

func streamErrorFrame(wire Wire, e ErrorReply) frame {
	switch wire {
	case WireAnthropic:
		return frame{event: "error", data: string(errorBody(wire, e))}
	case WireResponses:
		code := e.Type
		if code == "" {
			code = "server_error"
		}
		b, _ := json.Marshal(map[string]any{"type": "error", "code": code, "message": orDefault(e.Message, defaultMessage(code)), "param": nil})
		return frame{event: "error", data: string(b)}
	}
	return frame{data: string(errorBody(wire, e))}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// pieces splits s into chunks of at most n bytes, never inside a UTF-8
// sequence.
func pieces(s string, n int) []string {
	if n <= 0 {
		n = 16
	}
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
			cut--
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// args returns a call's arguments as compact JSON text.
func args(c ToolCall) string {
	if len(c.Input) == 0 {
		return "{}"
	}
	var v any
	if json.Unmarshal(c.Input, &v) != nil {
		return string(c.Input)
	}
	return mustJSON(v)
}

// cutArgs is the first half of a call's arguments (an incomplete JSON text).
func cutArgs(c ToolCall) string {
	a := args(c)
	return a[:len(a)/2]
}

func callID(prefix string, turn, i int, c ToolCall) string {
	if c.ID != "" {
		return c.ID
	}
	return prefix + strconv.Itoa(turn) + "_" + strconv.Itoa(i)
}

// usage fills in default counts: about 4 bytes a token.
func usage(t Turn, bodyLen int) Usage {
	if t.Usage != nil {
		return *t.Usage
	}
	out := len(t.Text) + len(t.Thinking)
	for _, c := range t.ToolCalls {
		out += len(args(c)) + len(c.Name)
	}
	return Usage{Input: bodyLen/4 + 1, Output: out/4 + 1}
}

// SetScript replaces the script (and starts it from its first turn): for a
// test that must know its environment before it can write the script.
func (s *Server) SetScript(script Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script, s.next, s.served = script, 0, nil
}

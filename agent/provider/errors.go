package provider

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrorKind classifies a failed model call by what the user can do about it.
type ErrorKind string

// Error kinds.
const (
	ErrAuth            ErrorKind = "auth"             // 401/403: the key is missing, wrong or lacks access
	ErrQuota           ErrorKind = "quota"            // no credit left (OpenAI insufficient_quota, Anthropic billing)
	ErrModelNotFound   ErrorKind = "model_not_found"  // 404 / model_not_found
	ErrContextOverflow ErrorKind = "context_overflow" // the prompt does not fit the context window
	ErrInvalidRequest  ErrorKind = "invalid_request"  // any other 400/422
	ErrRateLimit       ErrorKind = "rate_limit"       // 429
	ErrOverloaded      ErrorKind = "overloaded"       // Anthropic 529 / overloaded_error, 503
	ErrServer          ErrorKind = "server"           // other 5xx
	ErrNetwork         ErrorKind = "network"          // no HTTP response at all
	ErrStream          ErrorKind = "stream"           // the stream broke or was malformed
	ErrNoEndpoint      ErrorKind = "no_endpoint"      // 404 without a provider error body: wrong base URL
)

// Retryable reports whether a call failing this way may be retried (before
// anything was delivered).
func (k ErrorKind) Retryable() bool {
	switch k {
	case ErrRateLimit, ErrOverloaded, ErrServer, ErrNetwork, ErrStream:
		return true
	}
	return false
}

// Error is a failed model call. Its text says what went wrong and what to do;
// it never contains the API key (clients scrub provider messages with Scrub
// before building one).
type Error struct {
	Kind     ErrorKind
	Provider Name
	Status   int    // HTTP status, 0 if none
	Type     string // the provider's error type or code, e.g. "overloaded_error"
	Message  string // the provider's message, scrubbed
	Model    string
	BaseURL  string
	// KeySource says where the key came from ("environment variable
	// ANTHROPIC_API_KEY", a credentials file path), "" when none was sent.
	KeySource  string
	RetryAfter time.Duration // what the server asked for, if it did
	Attempts   int           // requests made, set by the retry loop
	Err        error         // underlying error (network), if any
	// Fix, when set, replaces the default advice of a context overflow
	// (the TUI's "run /compact, or start a new session") with the front
	// end's own (brig -p: brig -c --compact).
	Fix string
}

func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	var b strings.Builder
	detail := e.detail()
	switch e.Kind {
	case ErrAuth:
		if e.KeySource == "" {
			fmt.Fprintf(&b, "%s at %s needs an API key%s: set %s or add it to ~/.config/brig/credentials.toml (mode 600)", e.Provider, e.BaseURL, detail, keyEnv(e.Provider))
		} else {
			fmt.Fprintf(&b, "%s rejected the API key from %s%s: check that key (or replace it in %s)", e.Provider, e.KeySource, detail, keyPlaces(e.Provider))
		}
	case ErrQuota:
		fmt.Fprintf(&b, "%s refused the request for billing reasons%s: check the account's credit and plan", e.Provider, detail)
	case ErrModelNotFound:
		fmt.Fprintf(&b, "model %q is not available at %s%s. ", e.Model, e.BaseURL, detail)
		if known := KnownIDs(e.Provider); len(known) > 0 && e.Provider != OpenAIChat {
			fmt.Fprintf(&b, "Known %s models: %s", e.Provider, strings.Join(known, ", "))
		} else {
			fmt.Fprintf(&b, "List the server's models with: curl %s/models", strings.TrimSuffix(e.BaseURL, "/"))
		}
	case ErrContextOverflow:
		fmt.Fprintf(&b, "the conversation no longer fits the context window of %s%s: %s", e.Model, detail, cmp.Or(e.Fix, "run /compact, or start a new session"))
	case ErrRateLimit:
		fmt.Fprintf(&b, "rate limited by %s%s", e.Provider, detail)
		e.writeAttempts(&b)
		if e.RetryAfter > 0 {
			fmt.Fprintf(&b, "; the server asks to retry after %s", e.RetryAfter.Round(time.Second))
		}
	case ErrOverloaded:
		fmt.Fprintf(&b, "%s is overloaded%s", e.Provider, detail)
		e.writeAttempts(&b)
		b.WriteString("; try again in a moment")
	case ErrServer:
		fmt.Fprintf(&b, "%s server error%s", e.Provider, detail)
		e.writeAttempts(&b)
		b.WriteString("; the fault is on the provider's side: try again in a moment")
	case ErrNetwork:
		fmt.Fprintf(&b, "cannot reach %s at %s: %v", e.Provider, e.BaseURL, e.Err)
		e.writeAttempts(&b)
		fmt.Fprintf(&b, " (check the network, --base-url and %s)", baseEnv(e.Provider))
	case ErrNoEndpoint:
		fmt.Fprintf(&b, "nothing at %s speaks the %s API%s: check --base-url and %s", e.BaseURL, e.Provider, detail, baseEnv(e.Provider))
		if u, err := url.Parse(e.BaseURL); err == nil && e.Provider != Anthropic && strings.Trim(u.Path, "/") == "" {
			// The usual slip (new user): an OpenAI-compatible server's
			// address without the /v1 its API lives under.
			fmt.Fprintf(&b, " (OpenAI-compatible servers serve the API under /v1: try %s/v1)", strings.TrimRight(e.BaseURL, "/"))
		}
	case ErrStream:
		fmt.Fprintf(&b, "the %s stream from %s broke%s", e.Provider, e.BaseURL, detail)
		if e.Err != nil {
			fmt.Fprintf(&b, ": %v", e.Err)
		}
		e.writeAttempts(&b)
	default:
		if e.Status >= 300 && e.Status < 400 {
			fmt.Fprintf(&b, "%s at %s answered with a redirect%s: brig does not follow one with your key and the conversation; if you trust where it leads, set --base-url (or %s) to that address", e.Provider, e.BaseURL, detail, baseEnv(e.Provider))
			break
		}
		fmt.Fprintf(&b, "%s rejected the request%s", e.Provider, detail)
	}
	return b.String()
}

func (e *Error) detail() string {
	var parts []string
	if e.Status != 0 {
		parts = append(parts, strconv.Itoa(e.Status))
	}
	if e.Type != "" {
		parts = append(parts, e.Type)
	}
	s := strings.Join(parts, " ")
	if msg := strings.Join(strings.Fields(e.Message), " "); msg != "" { // on one line
		if s != "" {
			s += ": "
		}
		s += msg
	}
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// OneLine is s on one line — every run of white space, newlines included,
// made one space — cut to at most max bytes (on a character boundary, with
// "…" after the cut).
func OneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max] + "…"
}

func (e *Error) writeAttempts(b *strings.Builder) {
	if e.Attempts > 1 {
		fmt.Fprintf(b, "; gave up after %d attempts", e.Attempts)
	}
}

func keyEnv(p Name) string {
	if p == Anthropic {
		return "ANTHROPIC_API_KEY"
	}
	return "OPENAI_API_KEY"
}

func baseEnv(p Name) string {
	if p == Anthropic {
		return "ANTHROPIC_BASE_URL"
	}
	return "OPENAI_BASE_URL"
}

func keyPlaces(p Name) string {
	section := "openai"
	if p == Anthropic {
		section = "anthropic"
	}
	return keyEnv(p) + " or the [" + section + "] api_key in ~/.config/brig/credentials.toml"
}

// Classify maps an HTTP status and the provider's error type/code and message
// to a kind. Clients call it with what they decoded from the error body
// (typ and msg both empty when the body was not the provider's error JSON).
func Classify(status int, typ, msg string) ErrorKind {
	if status == 404 && typ == "" && !strings.Contains(strings.ToLower(msg), "model") {
		return ErrNoEndpoint
	}
	t := strings.ToLower(typ)
	m := strings.ToLower(msg)
	switch {
	case strings.Contains(t, "context_length") || strings.Contains(m, "prompt is too long") ||
		strings.Contains(m, "context length") || strings.Contains(m, "context window") ||
		strings.Contains(m, "exceed context limit") || strings.Contains(m, "maximum context"):
		return ErrContextOverflow
	case t == "insufficient_quota" || t == "billing_error" || strings.Contains(m, "credit balance"):
		return ErrQuota
	case status == 401 || status == 403 || t == "authentication_error" || t == "permission_error" || t == "invalid_api_key":
		return ErrAuth
	case status == 404 || t == "model_not_found" || t == "not_found_error" ||
		(strings.Contains(m, "model") && (strings.Contains(m, "not found") || strings.Contains(m, "does not exist"))):
		return ErrModelNotFound
	case status == 429 || t == "rate_limit_error" || t == "rate_limit_exceeded":
		return ErrRateLimit
	case status == 529 || status == 503 || t == "overloaded_error" || t == "server_is_overloaded":
		return ErrOverloaded
	case status >= 500 || t == "api_error" || t == "server_error":
		return ErrServer
	}
	return ErrInvalidRequest
}

// Scrub removes every occurrence of key (and of its long prefixes and
// suffixes, which some servers echo partially) from s.
func Scrub(s, key string) string {
	if key == "" || s == "" {
		return s
	}
	const minPiece = 8
	if len(key) < minPiece {
		// Not a real provider key, but still the user's secret: replaced
		// where it stands as a word of its own, so that text containing
		// the same letters stays readable.
		return scrubWord(s, key)
	}
	s = strings.ReplaceAll(s, key, "[REDACTED]")
	// A partial echo such as "sk-ant-api03-abcd...wxyz": any 8+ character
	// piece from either end is removed too.
	for n := len(key) - 1; n >= minPiece; n-- {
		s = strings.ReplaceAll(s, key[:n], "[REDACTED]")
		s = strings.ReplaceAll(s, key[len(key)-n:], "[REDACTED]")
	}
	return s
}

// scrubWord replaces key in s wherever no letter, digit, '-' or '_' touches
// it on either side.
func scrubWord(s, key string) string {
	word := func(b byte) bool {
		return b == '-' || b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
	}
	var b strings.Builder
	for {
		i := strings.Index(s, key)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(key)
		alone := (i == 0 || !word(s[i-1])) && (end == len(s) || !word(s[end]))
		b.WriteString(s[:i])
		if alone {
			b.WriteString("[REDACTED]")
		} else {
			b.WriteString(key)
		}
		s = s[end:]
	}
}

// RetryAfter reads how long the server asked to wait: retry-after-ms, then
// Retry-After as seconds or an HTTP date. 0 when absent or unreadable.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// NetworkError builds the error for a request that got no response. A
// cancelled ctx is returned as ctx's error, not as a network failure.
func NetworkError(ctx context.Context, p Name, baseURL string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return &Error{Kind: ErrNetwork, Provider: p, BaseURL: baseURL, Err: err}
}

// IsKind reports whether err is an *Error of kind k.
func IsKind(err error, k ErrorKind) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}

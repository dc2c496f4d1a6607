// Package credentials finds the API keys brig's supervisor uses to reach a
// model provider: from the environment (ANTHROPIC_API_KEY, OPENAI_API_KEY) or
// from ~/.config/brig/credentials.toml, which is refused unless only its owner
// can read it.
//
// It owns the Secret type, which never prints its value. It must not log,
// persist or pass a key anywhere itself: callers hand a Secret to a provider
// client, which is the only place that calls Reveal. Nothing here may be
// imported by code that runs inside the jail.
package credentials

import (
	"fmt"
	"log/slog"
)

// redacted is what every printing path of a Secret shows.
const redacted = "[REDACTED]"

// Secret holds a credential. Its String, GoString, Format, MarshalJSON,
// MarshalText and LogValue all print a fixed placeholder, so a Secret inside
// a struct that is logged, printed with %+v or marshalled does not leak.
type Secret struct {
	value string
}

// NewSecret wraps s.
func NewSecret(s string) Secret { return Secret{value: s} }

// Reveal returns the secret value. Call it only where the value is put on the
// wire (an HTTP header), never to build a message.
func (s Secret) Reveal() string { return s.value }

// IsZero reports whether the secret is empty.
func (s Secret) IsZero() bool { return s.value == "" }

// String implements fmt.Stringer.
func (s Secret) String() string { return redacted }

// GoString implements fmt.GoStringer (%#v).
func (s Secret) GoString() string { return redacted }

// Format implements fmt.Formatter, so every verb (%s, %v, %q, %x …) redacts.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// MarshalJSON implements json.Marshaler.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// MarshalText implements encoding.TextMarshaler (TOML, YAML, map keys).
func (s Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// LogValue implements slog.LogValuer.
func (s Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

package session

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"time"
)

// idSuffixLen is the number of lowercase hex digits after the date.
const idSuffixLen = 6

// NewID returns a fresh session id for the day of now: YYYY-MM-DD-xxxxxx,
// six lowercase hex digits drawn from r (crypto/rand when nil).
func NewID(now time.Time, r io.Reader) (string, error) {
	if r == nil {
		r = rand.Reader
	}
	b := make([]byte, idSuffixLen/2)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", fmt.Errorf("session id: %w", err)
	}
	return now.UTC().Format("2006-01-02") + "-" + hex.EncodeToString(b), nil
}

// ValidateID accepts exactly YYYY-MM-DD-xxxxxx (a real date, six lowercase
// hex digits) and nothing else: no separators, dots, traversal, spaces or
// other characters can reach a path built from an id. Every id that comes
// from a user goes through it.
func ValidateID(id string) error {
	const layout = "2006-01-02"
	bad := func(why string) error {
		return fmt.Errorf("invalid session id %q: %s (ids look like 2026-11-22-ab12cd; see brig sessions list)", id, why)
	}
	if len(id) != len(layout)+1+idSuffixLen {
		return bad("wrong length")
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case i == 4 || i == 7 || i == len(layout):
			if c != '-' {
				return bad("a dash is missing")
			}
		case i < len(layout):
			if c < '0' || c > '9' {
				return bad("the date is not YYYY-MM-DD")
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return bad("the suffix is not six lowercase hex digits")
			}
		}
	}
	if _, err := time.Parse(layout, id[:len(layout)]); err != nil {
		return bad("the date does not exist")
	}
	return nil
}

package session

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
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
		return fmt.Errorf("invalid session id %q: %s (ids look like 2026-11-22-ab12cd, or their last six hex digits alone, ab12cd; see brig sessions list)", id, why)
	}
	if len(id) == idSuffixLen {
		return bad("six characters name a session only when they are hex digits (0-9, a-f)")
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

// IsShortID reports whether s is an id's six hex digits alone.
func IsShortID(s string) bool {
	return len(s) == idSuffixLen && strings.Trim(s, "0123456789abcdef") == ""
}

// Resolve turns what a user typed for a session into its id: a whole id
// is checked (ValidateID) and kept; the six hex digits after the date
// alone (what `brig -p` prints last) are looked up among the saved
// sessions, and must name exactly one.
func (s *Store) Resolve(id string) (string, error) {
	if ValidateID(id) == nil || !IsShortID(id) {
		return id, ValidateID(id)
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil && !os.IsNotExist(err) {
		return "", fmt.Errorf("look up session %q: %w", id, err)
	}
	var found []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), fileExt)
		if ok && strings.HasSuffix(name, "-"+id) && ValidateID(name) == nil {
			found = append(found, name)
		}
	}
	slices.Sort(found)
	switch len(found) {
	case 0:
		return "", fmt.Errorf("no saved session ends in %q (see brig sessions list)", id)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%d sessions end in %q: %s; give the whole id", len(found), id, strings.Join(found, ", "))
}

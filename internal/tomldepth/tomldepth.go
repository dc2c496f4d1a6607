// Package tomldepth refuses a TOML document nested more deeply than a
// person writes one, before the TOML parser sees it.
//
// The parser (BurntSushi/toml) recurses once per level of nested arrays
// and inline tables, and a 1.2 MB .brig/config.toml of `a = [[[[…` took it
// past Go's stack limit: a fatal error, not a recoverable panic, in every
// brig command run in that repository (audit and trust included). Check
// counts the levels outside strings and comments, without parsing; the
// parser stays the judge of everything else.
//
// It must not accept or refuse anything else: a document within the bound
// goes to the parser as it is.
package tomldepth

import "fmt"

// MaxDepth is the deepest nesting of arrays and inline tables allowed.
const MaxDepth = 64

// Error is a document nested too deeply, at Line.
type Error struct{ Line int }

func (e *Error) Error() string {
	return fmt.Sprintf("%d: arrays and inline tables nested more than %d deep", e.Line, MaxDepth)
}

// Check returns an *Error naming the line where data nests more than
// MaxDepth arrays and inline tables (a table header's brackets count as
// one or two levels), and nil otherwise. Its text is "LINE: …", to follow
// a file name and a colon.
func Check(data []byte) error {
	depth, line := 0, 1
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '\n':
			line++
		case '#':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			i-- // the newline is counted by the loop
		case '"', '\'':
			end, lines := skipString(data, i)
			i, line = end, line+lines
		case '[', '{':
			depth++
			if depth > MaxDepth {
				return &Error{Line: line}
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}

// skipString returns the index of the last byte of the string that opens
// at data[i] (a basic or literal string, one line or three quotes), and
// how many newlines it holds. An unterminated string runs to the end.
func skipString(data []byte, i int) (end, lines int) {
	q := data[i]
	multi := i+2 < len(data) && data[i+1] == q && data[i+2] == q
	j := i + 1
	if multi {
		j = i + 3
	}
	for ; j < len(data); j++ {
		switch data[j] {
		case '\\':
			if q == '"' {
				if j+1 < len(data) && data[j+1] == '\n' {
					lines++
				}
				j++ // the escaped byte
			}
		case '\n':
			lines++
			if !multi {
				return j - 1, lines - 1 // a one-line string ends at the line's end (the parser says why)
			}
		case q:
			if !multi {
				return j, lines
			}
			if j+2 < len(data) && data[j+1] == q && data[j+2] == q {
				return j + 2, lines
			}
		}
	}
	return len(data) - 1, lines
}

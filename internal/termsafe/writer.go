package termsafe

import (
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// Writer passes everything written to it through Text on its way to w: the
// gate in front of a terminal for output that carries no styling of brig's
// (`brig -p`, the subcommands). A character split across two writes is
// held back until it is complete, and so is a final CR (it may start a CR
// LF pair), so the result does not depend on how the stream was cut.
//
// JSON written through it stays valid and exact: an encoder has already
// escaped every C0 control, and each other unsafe character is shown as
// the JSON escape of itself.
//
// It is safe for concurrent use; call Flush when the stream ends.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte
}

// NewWriter returns a Writer in front of w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write implements io.Writer. It reports all of p written unless w fails.
func (sw *Writer) Write(p []byte) (int, error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	data := p
	if len(sw.pending) > 0 {
		data = append(sw.pending, p...)
		sw.pending = nil
	}
	keep := heldBack(data)
	out := Text(string(data[:len(data)-keep]))
	if keep > 0 {
		sw.pending = append([]byte(nil), data[len(data)-keep:]...)
	}
	if out == "" {
		return len(p), nil
	}
	if _, err := io.WriteString(sw.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what was held back, as it is shown at the end of a stream.
func (sw *Writer) Flush() error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if len(sw.pending) == 0 {
		return nil
	}
	out := Text(string(sw.pending))
	sw.pending = nil
	_, err := io.WriteString(sw.w, out)
	return err
}

// heldBack is how many bytes at the end of b may be completed by the next
// write: an unfinished UTF-8 sequence, or a CR.
func heldBack(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	if b[len(b)-1] == '\r' {
		return 1
	}
	// Look back at most 3 bytes for the start of an unfinished sequence.
	for i := 1; i <= 3 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return i
			}
			return 0
		}
	}
	return 0
}

// Styled makes text that carries brig's own styling safe for the terminal:
// SGR sequences (ESC [ parameters m: colours, bold, underline) are kept,
// OSC 8 hyperlinks are dropped (the text stays, the hidden target goes),
// and every other control character or escape is shown as Text shows it.
// It is the last gate of a front end that styles its output: foreign text
// was made inert where it was inserted, and nothing else can get through.
func Styled(s string) string {
	if !strings.ContainsRune(s, 0x1b) {
		return Text(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for len(s) > 0 {
		i := strings.IndexByte(s, 0x1b)
		if i < 0 {
			b.WriteString(Text(s))
			break
		}
		b.WriteString(Text(s[:i]))
		s = s[i:]
		if n := sgrLen(s); n > 0 {
			b.WriteString(s[:n])
			s = s[n:]
			continue
		}
		if n := hyperlinkLen(s); n > 0 {
			s = s[n:]
			continue
		}
		b.WriteString(Symbol(0x1b))
		s = s[1:]
	}
	return b.String()
}

// sgrLen is the length of the SGR sequence s starts with, or 0.
func sgrLen(s string) int {
	if len(s) < 3 || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s) && i < 256; i++ {
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

// hyperlinkLen is the length of the OSC 8 sequence s starts with (ended by
// BEL or ST), or 0. Its parameters and URL may hold no control character.
func hyperlinkLen(s string) int {
	if !strings.HasPrefix(s, "\x1b]8;") {
		return 0
	}
	for i := 4; i < len(s) && i < 8192; i++ {
		c := s[i]
		switch {
		case c == 0x07:
			return i + 1
		case c == 0x1b:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			return 0
		case c < 0x20 || c == 0x7f:
			return 0
		}
	}
	return 0
}

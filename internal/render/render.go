// Package render is how the TUI gets Markdown and code turned into styled
// terminal text without linking what does it: glamour and chroma take tens
// of milliseconds to initialise (chroma parses hundreds of lexers and
// styles before main), which every start of brig paid — --help, -p and
// brig sandbox included — though only the TUI renders anything. They live
// in a helper program instead (cmd/brig-render, carried inside brig like
// the jail programs), started by the TUI and spoken to over a pipe.
//
// This package owns the wire between the two (Request, Response), the
// Renderer interface the TUI draws with, the Client that runs the helper,
// and Plain, what is shown when there is no helper. It must not import
// the rendering libraries (internal/render/engine does): that is its
// point, and cmd/brig's deps test checks it.
package render

import (
	"strings"
)

// Renderer turns text the TUI has already made inert (no control
// characters) into styled terminal text.
type Renderer interface {
	// Markdown renders src for width columns in a glamour standard style
	// ("dark", or "notty" without colour).
	Markdown(style string, width int, src string) (string, error)
	// Code splits one line of code into coloured tokens by the language
	// of path's file name; nil when it knows no such language.
	Code(path, code string) []Token
}

// Token is a piece of a line of code and its foreground colour ("#rrggbb",
// "" for the terminal's own).
type Token struct {
	Text   string `json:"t"`
	Colour string `json:"c,omitempty"`
}

// Request is one message to the helper: exactly one of its fields is set.
type Request struct {
	Markdown *MarkdownRequest `json:"md,omitempty"`
	Code     *CodeRequest     `json:"code,omitempty"`
}

// MarkdownRequest asks for Renderer.Markdown.
type MarkdownRequest struct {
	Style string `json:"style"`
	Width int    `json:"width"`
	Src   string `json:"src"`
}

// CodeRequest asks for Renderer.Code.
type CodeRequest struct {
	Path string `json:"path"`
	Code string `json:"code"`
}

// Response answers one Request, in order.
type Response struct {
	Text   string  `json:"text,omitempty"`
	Tokens []Token `json:"tokens,omitempty"`
	Err    string  `json:"err,omitempty"`
}

// Plain renders nothing: Markdown comes back as it is (wrapped to width)
// and code uncoloured. It is what a build without the helper shows, and
// what the Client falls back to once its helper failed.
type Plain struct{}

// Markdown returns src with its lines wrapped at width columns.
func (Plain) Markdown(_ string, width int, src string) (string, error) {
	var b strings.Builder
	for i, line := range strings.Split(src, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(wrap(line, width))
	}
	return b.String(), nil
}

// Code knows no language.
func (Plain) Code(string, string) []Token { return nil }

// wrap breaks line at spaces so that no row is wider than width runes
// (a word longer than width stays whole).
func wrap(line string, width int) string {
	if width <= 0 || len([]rune(line)) <= width {
		return line
	}
	var b strings.Builder
	col := 0
	for i, word := range strings.Split(line, " ") {
		n := len([]rune(word))
		if i > 0 {
			if col+1+n > width {
				b.WriteByte('\n')
				col = 0
			} else {
				b.WriteByte(' ')
				col++
			}
		}
		b.WriteString(word)
		col += n
	}
	return b.String()
}

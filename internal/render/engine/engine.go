// Package engine renders Markdown with glamour and colours code with
// chroma: the rendering the TUI shows, run inside the helper program
// cmd/brig-render (Serve) and, in tests, in the test's own process. It
// owns nothing else; in particular brig itself must not link it (that is
// why it is apart from internal/render; see there).
package engine

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"charm.land/glamour/v2"
	"charm.land/glamour/v2/ansi"
	glamourstyles "charm.land/glamour/v2/styles"
	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"

	"brig/internal/render"
)

// maxRenderers bounds the glamour renderers kept (one per style and
// width): a session resized many times does not keep them all.
const maxRenderers = 8

type mdKey struct {
	style string
	width int
}

// Engine is a render.Renderer in this process. Not safe for concurrent use.
type Engine struct {
	md     map[mdKey]*glamour.TermRenderer
	style  *chroma.Style
	lexers map[string]chroma.Lexer
}

var _ render.Renderer = (*Engine)(nil)

// New returns an Engine; renderers and lexers are built on first use.
func New() *Engine {
	return &Engine{md: map[mdKey]*glamour.TermRenderer{}, style: styles.Get("monokai"), lexers: map[string]chroma.Lexer{}}
}

// Markdown renders src with glamour's standard style, wrapped at width-2
// columns, with chroma's colours for code blocks.
func (e *Engine) Markdown(style string, width int, src string) (string, error) {
	k := mdKey{style, width}
	r := e.md[k]
	if r == nil {
		var err error
		styleOpt := glamour.WithStandardStyle(style)
		if style == "notty" {
			styleOpt = glamour.WithStyles(noTTYStyle())
		} else if sc, ok := glamourstyles.DefaultStyles[style]; ok {
			styleOpt = glamour.WithStyles(unpadded(*sc))
		}
		r, err = glamour.NewTermRenderer(styleOpt, glamour.WithWordWrap(width-2), glamour.WithChromaFormatter("terminal16m"))
		if err != nil {
			return "", fmt.Errorf("a Markdown renderer (style %q, width %d): %w", style, width, err)
		}
		if len(e.md) >= maxRenderers {
			clear(e.md)
		}
		e.md[k] = r
	}
	return r.Render(src)
}

// noTTYStyle is glamour's style without colour, with inline code between
// backticks: glamour's own sets them as the code's block prefix, which
// inline code does not use, so `calc.py` lost its marks while **bold**
// kept its (a new user under NO_COLOR, 2026-12-02).
func noTTYStyle() ansi.StyleConfig {
	s := glamourstyles.NoTTYStyleConfig
	s.Code.Prefix, s.Code.Suffix = "`", "`"
	s.Code.BlockPrefix, s.Code.BlockSuffix = "", ""
	return s
}

// unpadded is a colour style with inline code drawn on its background
// alone: glamour pads it with a no-break space on each side, which a copy
// from the terminal took along (`calc.py` pasted as "\u00a0calc.py\u00a0":
// new user, 2026-12-03).
func unpadded(s ansi.StyleConfig) ansi.StyleConfig {
	if s.Code.Prefix == "\u00a0" {
		s.Code.Prefix = ""
	}
	if s.Code.Suffix == "\u00a0" {
		s.Code.Suffix = ""
	}
	return s
}

// Code tokenises one line by the language of path's file name.
func (e *Engine) Code(path, code string) []render.Token {
	l := e.lexer(path)
	if l == nil {
		return nil
	}
	it, err := l.Tokenise(nil, code)
	if err != nil {
		return nil
	}
	var toks []render.Token
	for _, tok := range it.Tokens() {
		t := render.Token{Text: strings.TrimRight(tok.Value, "\n")}
		if c := e.style.Get(tok.Type).Colour; c.IsSet() {
			t.Colour = c.String()
		}
		toks = append(toks, t)
	}
	return toks
}

func (e *Engine) lexer(path string) chroma.Lexer {
	base := filepath.Base(path)
	if l, ok := e.lexers[base]; ok {
		return l
	}
	l := lexers.Match(base)
	if l != nil {
		l = chroma.Coalesce(l)
	}
	e.lexers[base] = l
	return l
}

// Serve answers render.Requests read as JSON from r, one render.Response
// each on w, until r ends (nil) or fails.
func Serve(r io.Reader, w io.Writer) error {
	e := New()
	dec := json.NewDecoder(bufio.NewReader(r))
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for {
		var req render.Request
		if err := dec.Decode(&req); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("read a request: %w", err)
		}
		var resp render.Response
		switch {
		case req.Markdown != nil:
			out, err := e.Markdown(req.Markdown.Style, req.Markdown.Width, req.Markdown.Src)
			if err != nil {
				resp.Err = err.Error()
			}
			resp.Text = out
		case req.Code != nil:
			resp.Tokens = e.Code(req.Code.Path, req.Code.Code)
		default:
			resp.Err = "an empty request"
		}
		if err := enc.Encode(resp); err != nil {
			return fmt.Errorf("write an answer: %w", err)
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("write an answer: %w", err)
		}
	}
}

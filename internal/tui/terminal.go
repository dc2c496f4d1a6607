package tui

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"slices"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// Why the cursor is parked: the live area is drawn inline, and Bubble Tea
// finds its top again by moving the cursor up from where the last frame
// left it. Two things made that move fall short, leaving the top of an
// old live area (an input box, a spinner line, the Ctrl+C prompt) in the
// scrollback:
//   - when the live area gets shorter, Bubble Tea v2.0's inline renderer
//     clamps the cursor row it remembers to the new, shorter frame before
//     moving up;
//   - a terminal made narrower rewraps what is on it (tmux, VTE, kitty,
//     iTerm2 …), so a long row of the live area becomes two or three rows.
// A cursor left in the live area's top-left corner needs no move up at
// all, and stays there through a rewrap: the cursor moves with the
// character it is on, and the character in the first column of the top
// row stays in the first column. The redraw then erases everything from
// the top of the old live area down, however the terminal rewrapped it.
// The textarea draws its own cursor; the terminal's stays hidden.

// noWrap: while the TUI runs, autowrap is off, except while lines are
// printed above the live area. Between the moment the terminal is made narrower and the
// moment brig learns of it, a frame is still drawn for the old width; with
// autowrap on, a row written past the new right margin would wrap, moving
// the cursor a row down, and the cursor parked after the frame would land a
// row below the live area's top. With autowrap off the terminal clips the
// row instead (the redraw for the new width follows). Printed lines keep
// autowrap: a line the terminal is too narrow for wraps rather than losing
// its end.

// parkedCursor is where the live area leaves the terminal's cursor
// between frames: its top-left corner.
var parkedCursor = &tea.Cursor{Shape: tea.CursorBlock, Blink: true}

// cursorGuard is the terminal output while the TUI runs: it keeps the
// parked cursor hidden and the user's cursor style as it was, by dropping
// the two sequences Bubble Tea sends for a visible cursor (show, and the
// style of a blinking block), and turns autowrap on only around printed
// lines (noWrap). Everything else passes unchanged. It is a
// term.File when the output is one, so Bubble Tea still finds the
// terminal (its size, its modes).
type cursorGuard struct {
	mu    sync.Mutex
	w     io.Writer
	carry []byte // the start of a sequence cut at the end of a write
}

// guarded are the sequences the guard drops.
var guarded = [][]byte{[]byte(ansi.ShowCursor), []byte(ansi.SetCursorStyle(1))}

func newCursorGuard(w io.Writer) *cursorGuard { return &cursorGuard{w: w} }

// Write drops the guarded sequences from p, also one cut across writes.
func (g *cursorGuard) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := p
	if len(g.carry) > 0 {
		b = append(g.carry, p...)
		g.carry = nil
	}
	for _, s := range guarded {
		b = bytes.ReplaceAll(b, s, nil)
	}
	// Hold back a trailing prefix of a guarded sequence: the next write
	// may complete it.
	for _, s := range guarded {
		for n := min(len(s)-1, len(b)); n > 0; n-- {
			if bytes.HasSuffix(b, s[:n]) {
				g.carry = append([]byte(nil), b[len(b)-n:]...)
				b = b[:len(b)-n]
				break
			}
		}
		if g.carry != nil {
			break
		}
	}
	if insertsLines.Match(b) {
		// Lines printed above the live area: autowrap on (see noWrap).
		b = slices.Concat([]byte(ansi.SetModeAutoWrap), b, []byte(ansi.ResetModeAutoWrap))
	}
	if _, err := g.w.Write(b); err != nil {
		return 0, err
	}
	return len(p), nil
}

// insertsLines matches Insert Line, which Bubble Tea uses (and its inline
// frames do not) to print above the live area.
var insertsLines = regexp.MustCompile(`\x1b\[[0-9]*L`)

// start hides the cursor and turns autowrap off (see noWrap).
func (g *cursorGuard) start() {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, _ = g.w.Write([]byte(ansi.HideCursor + ansi.ResetModeAutoWrap))
}

// restore writes what is held back, shows the cursor and turns autowrap
// back on.
func (g *cursorGuard) restore() {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, _ = g.w.Write(append(g.carry, ansi.ShowCursor+ansi.SetModeAutoWrap...))
	g.carry = nil
}

// Read, Close and Fd make the guard a term.File over a terminal.
func (g *cursorGuard) Read(p []byte) (int, error) {
	if r, ok := g.w.(io.Reader); ok {
		return r.Read(p)
	}
	return 0, errors.New("terminal output is not readable")
}

func (g *cursorGuard) Close() error { return nil } // the caller owns the terminal

func (g *cursorGuard) Fd() uintptr {
	if f, ok := g.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

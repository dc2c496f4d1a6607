package tui

import (
	"bytes"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
)

// TestCursorGuard: the guard drops the two sequences that would show the
// parked cursor or change the user's cursor style, also when a write cuts
// one in two, and passes everything else byte for byte.
func TestCursorGuard(t *testing.T) {
	var out bytes.Buffer
	g := newCursorGuard(&out)
	frame := "\x1b[?25l\x1b[1 q\x1b[2A\rline one\x1b[K\r\nline two" + ansi.ShowCursor + "\x1b[1A"
	for i := 0; i < len(frame); i += 5 { // every cut point a write could leave
		end := min(i+5, len(frame))
		if n, err := g.Write([]byte(frame[i:end])); err != nil || n != end-i {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	g.restore()
	want := "\x1b[?25l\x1b[2A\rline one\x1b[K\r\nline two\x1b[1A" + ansi.ShowCursor + ansi.SetModeAutoWrap
	if out.String() != want {
		t.Errorf("the terminal got %q\nwant %q", out.String(), want)
	}
	if g.Fd() != ^uintptr(0) {
		t.Error("a guard over a buffer claims a file descriptor")
	}

	// Lines printed above the live area (Bubble Tea inserts lines for
	// them) are written with autowrap on; frames, with it off.
	out.Reset()
	g.start()
	_, _ = g.Write([]byte("\r\x1b[2B\n\n\x1b[3A\x1b[2Lprinted\r\n"))
	_, _ = g.Write([]byte("\x1b[2Aframe"))
	want = ansi.HideCursor + ansi.ResetModeAutoWrap + ansi.SetModeAutoWrap + "\r\x1b[2B\n\n\x1b[3A\x1b[2Lprinted\r\n" + ansi.ResetModeAutoWrap + "\x1b[2Aframe"
	if out.String() != want {
		t.Errorf("the terminal got %q\nwant %q", out.String(), want)
	}
}

// TestViewParksTheCursor: every frame leaves the terminal's cursor in the
// live area's top-left corner, where a terminal that rewraps on resize
// keeps it at the live area's top (see terminal.go).
func TestViewParksTheCursor(t *testing.T) {
	h := newHarness(t, 80, colorprofile.NoTTY, allHold())
	h.start(h.conn("ask", nil))
	v := h.m.View()
	if v.Cursor == nil || v.Cursor.X != 0 || v.Cursor.Y != 0 {
		t.Fatalf("cursor %+v, want the top-left corner", v.Cursor)
	}
	if !strings.Contains(ansi.Strip(v.Content), "Ask brig") {
		t.Errorf("frame:\n%s", v.Content)
	}
}

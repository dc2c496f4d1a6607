package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"brig/policy"
)

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// TestLongPasteSaysWhatIsHidden: the input shows at most 8 rows; a longer
// paste keeps every line, and a marker says how many are out of sight
// and where.
func TestLongPasteSaysWhatIsHidden(t *testing.T) {
	h := newHarness(t, 80, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	h.send(tea.PasteMsg{Content: numbered(50)})
	if got := h.m.input.Value(); got != numbered(50) {
		t.Fatalf("the input holds %d lines, want 50", strings.Count(got, "\n")+1)
	}
	live := ansi.Strip(h.m.frameText())
	if !strings.Contains(live, "line 50") || !strings.Contains(live, "+42 lines above") {
		t.Errorf("no marker for the hidden lines:\n%s", live)
	}
	golden(t, "input_long_paste", h.frame())
	for range 20 {
		h.keys("up")
	}
	if live := ansi.Strip(h.m.frameText()); !strings.Contains(live, "lines above") || !strings.Contains(live, "lines below") {
		t.Errorf("moved up into the paste:\n%s", live)
	}
	// A short input has no marker.
	h.m.input.Reset()
	h.send(tea.PasteMsg{Content: numbered(3)})
	if live := ansi.Strip(h.m.frameText()); strings.Contains(live, "lines above") || strings.Contains(live, "lines below") {
		t.Errorf("a marker for three lines:\n%s", live)
	}
}

// TestMoreThanEightTypedLines: Alt+Enter keeps adding lines past the
// input's visible height.
func TestMoreThanEightTypedLines(t *testing.T) {
	h := newHarness(t, 80, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	for i := 1; i <= 12; i++ {
		if i > 1 {
			h.keys("alt+enter")
		}
		h.typeText(fmt.Sprintf("line %d", i))
	}
	if got := h.m.input.Value(); got != numbered(12) {
		t.Errorf("typed 12 lines, the input holds:\n%s", got)
	}
}

// TestPasteOverTheInputsLimit: a paste the input cannot hold is refused
// whole, with a note, rather than cut.
func TestPasteOverTheInputsLimit(t *testing.T) {
	h := newHarness(t, 80, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	h.typeText("keep me")
	h.send(tea.PasteMsg{Content: numbered(maxInputLines + 1)})
	if got := h.m.input.Value(); got != "keep me" {
		t.Errorf("the input holds %d lines after a refused paste", strings.Count(got, "\n")+1)
	}
	if !strings.Contains(h.printedText(), fmt.Sprintf("the paste has %d lines", maxInputLines+1)) {
		t.Errorf("no note:\n%s", h.printedText())
	}
	// A last newline ends the last line; it is not counted as another.
	h.printed = nil
	h.send(tea.PasteMsg{Content: numbered(maxInputLines+1) + "\n"})
	if !strings.Contains(h.printedText(), fmt.Sprintf("the paste has %d lines", maxInputLines+1)) {
		t.Errorf("a paste ending in a newline:\n%s", h.printedText())
	}
}

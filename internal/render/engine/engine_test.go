package engine

import (
	"strings"
	"testing"
)

// TestNoTTYMarksInlineCode (new user, 2026-12-02): without colour, inline
// code keeps its backticks as bold keeps its asterisks, so it can be told
// from the text around it; a fenced block gains none, line by line.
func TestNoTTYMarksInlineCode(t *testing.T) {
	out, err := New().Markdown("notty", 80, "Fixed `add` in **calc.py**.\n\n```go\nfunc add() {}\n```\n")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Fixed `add` in **calc.py**.") {
		t.Errorf("inline code without its marks:\n%q", out)
	}
	if strings.Contains(out, "`func") || strings.Contains(out, "{}`") {
		t.Errorf("a code block's lines got backticks:\n%q", out)
	}
	if !strings.Contains(out, "func add() {}") {
		t.Errorf("the code block is missing:\n%q", out)
	}
}

// TestColourInlineCodeHasNoNoBreakSpace (new user, 2026-12-03): inline
// code in the colour styles is drawn on its background without the
// no-break spaces glamour pads it with, which a copy from the terminal
// took along; the text around it keeps its own spaces.
func TestColourInlineCodeHasNoNoBreakSpace(t *testing.T) {
	for _, style := range []string{"dark", "light"} {
		out, err := New().Markdown(style, 80, "Fixed add in `calc.py` now.\n")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out, "\u00a0") {
			t.Errorf("%s: a no-break space in %q", style, out)
		}
		if !strings.Contains(out, "calc.py") || !strings.Contains(out, "\x1b[") {
			t.Errorf("%s: inline code not drawn in colour: %q", style, out)
		}
	}
}

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

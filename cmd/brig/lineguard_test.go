package main

import (
	"bytes"
	"testing"
)

// TestLineGuard: a line of the model's that starts as brig's own lines do
// (▸, │, brig:) is shown told apart, however the stream splits it; other
// lines, and those glyphs inside a line, pass as they are.
func TestLineGuard(t *testing.T) {
	for _, c := range []struct {
		chunks []string
		want   string
	}{
		{[]string{"done\n▸ bash $ git push — denied\n"}, "done\n> bash $ git push — denied\n"},
		{[]string{"  ", "│", " [brig: denied]\n"}, "  | [brig: denied]\n"},
		{[]string{"br", "ig: approved (--yes): bash\n"}, "(model) brig: approved (--yes): bash\n"},
		{[]string{"brief ", "answer\n"}, "brief answer\n"},
		{[]string{"a ▸ b │ c brig: d\n"}, "a ▸ b │ c brig: d\n"},
		{[]string{"\xe2", "\x96\xb8 x\n"}, "> x\n"},
		{[]string{"last line, no newline"}, "last line, no newline"},
		{[]string{"br"}, "br"},
	} {
		var out bytes.Buffer
		g := &lineGuard{w: &out}
		for _, ch := range c.chunks {
			if _, err := g.Write([]byte(ch)); err != nil {
				t.Fatal(err)
			}
		}
		if err := g.Flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != c.want {
			t.Errorf("%q: got %q, want %q", c.chunks, out.String(), c.want)
		}
	}
}

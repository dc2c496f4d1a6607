package tui

import (
	"brig/internal/render/engine"
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
)

func TestInert(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text\nsecond", "plain text\nsecond"},
		{"\x1b[31mred\x1b[0m", "␛[31mred␛[0m"},
		{"title\x1b]0;pwned\x07", "title␛]0;pwned␇"},
		{"progress 10%\rprogress 100%\n", "progress 10%␍progress 100%\n"}, // shown, never emulated
		{"a\tb", "a    b"},
		{"crlf\r\nline", "crlf\nline"},
		{"bad \xff byte", `bad \xff byte`},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"del\x7f", `del\u007f`},
	} {
		if got := inert(tc.in); got != tc.want {
			t.Errorf("inert(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.ContainsAny(inert(tc.in), "\x1b\x07\r\x7f") {
			t.Errorf("inert(%q) kept a control character", tc.in)
		}
	}
}

func TestStableSplit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"no blank line yet", 0},
		{"para one\n\npara two", len("para one\n\n")},
		{"```\ncode\n\nmore code\n", 0},
		{"```\ncode\n\n```\n\nafter", len("```\ncode\n\n```\n\n")},
		{"a\n\nb\n\nc", len("a\n\nb\n\n")},
	} {
		if got := stableSplit(tc.in); got != tc.want {
			t.Errorf("stableSplit(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestParseUnified(t *testing.T) {
	d := "--- a/x.go\n+++ b/x.go\n@@ -3,3 +3,4 @@\n ctx\n-old\n+new\n+added\n ctx2\n\\ No newline at end of file\n"
	got := parseUnified(d)
	want := []diffLine{{3, 3, ' ', "ctx"}, {4, 0, '-', "old"}, {0, 4, '+', "new"}, {0, 5, '+', "added"}, {5, 6, ' ', "ctx2"}}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestDiffIsSyntaxColoured: a Go diff gets chroma's colours and the
// changed lines their backgrounds; NoTTY strips all of it.
func TestDiffIsSyntaxColoured(t *testing.T) {
	h := newHighlighter(engine.New())
	out := h.renderDiff("x.go", "@@ -1,1 +1,1 @@\n-func a() {}\n+func b() {}\n", 80, 10)
	if !strings.Contains(out, "\x1b[") || !strings.Contains(out, "48;2;") {
		t.Errorf("no colour in the diff: %q", out)
	}
	plain := downsample(out, colorprofile.NoTTY)
	if strings.Contains(plain, "\x1b") || !strings.Contains(plain, "- func a() {}") || !strings.Contains(plain, "+ func b() {}") {
		t.Errorf("plain diff: %q", plain)
	}
}

func TestMarkdownNoColour(t *testing.T) {
	md := newMarkdown(colorprofile.ASCII, engine.New())
	out := md.render("# Head\n\n```go\nfunc main() {}\n```\n", 60)
	if strings.Contains(out, "38;5;") || strings.Contains(out, "38;2;") {
		t.Errorf("colour with NO_COLOR: %q", out)
	}
	if !strings.Contains(ansi.Strip(out), "func main() {}") {
		t.Errorf("code lost: %q", out)
	}
}

func TestCapLines(t *testing.T) {
	kept, dropped := capLines("1\n2\n3\n4\n", 2)
	if kept != "3\n4" || dropped != 2 {
		t.Errorf("capLines = %q, %d", kept, dropped)
	}
}

// TestTailLinesKeepsWhatCapLinesKeeps: sanitising and cutting only the end
// of an output (tailLines) shows exactly what sanitising all of it and
// cutting would: random text of newlines, carriage returns (alone and in
// CR LF endings), escapes, tabs, invalid bytes and multi-byte characters.
func TestTailLinesKeepsWhatCapLinesKeeps(t *testing.T) {
	alphabet := []string{"a", "b", "é", "\n", "\n", "\r", "\r\n", "\t", "\x1b[31m", "\xff", " "}
	rng := rand.New(rand.NewPCG(7, 11))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		s, n := b.String(), 1+rng.IntN(5)
		want, _ := capLines(inert(s), n)
		got, _ := capLines(inert(tailLines(s, n)), n)
		if got != want {
			t.Fatalf("tailLines(%q, %d) = %q: shows %q, want %q", s, n, tailLines(s, n), got, want)
		}
		if w := 12 + rng.IntN(20); n <= 2 {
			want, _ := capLines(wrap(inert(s), w), n)
			got, _ := capLines(wrap(inert(tailLines(s, n)), w), n)
			if got != want {
				t.Fatalf("wrapped at %d, tailLines(%q, %d) shows %q, want %q", w, s, n, got, want)
			}
		}
	}
	// It cuts: a long output keeps only its end.
	long := strings.Repeat("line\n", 10000) + "last\n\n"
	if got := tailLines(long, 4); got != "line\nline\nline\nlast\n\n" {
		t.Fatalf("tailLines of a long output = %q", got)
	}
}

// TestAppendLiveKeepsTheTail: whatever the sizes of the pieces, the live
// output is the whole output while it fits in liveMax, and once it has
// grown past it, the last liveKeep bytes as of the piece that did so —
// what cutting the whole output would keep — in one array that is never
// replaced.
func TestAppendLiveKeepsTheTail(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var b []byte
	var whole, want []byte
	for i := range 3000 {
		n := rng.IntN(9000)
		if i%500 == 499 {
			n = liveKeep + rng.IntN(liveKeep) // now and then a piece larger than the tail
		}
		piece := make([]byte, n)
		for k := range piece {
			piece[k] = byte('a' + rng.IntN(26))
		}
		prev := b
		b = appendLive(b, string(piece))
		whole = append(whole, piece...)
		if len(want)+n > liveMax {
			want = append(want, piece...)
			want = append([]byte(nil), want[len(want)-liveKeep:]...)
		} else {
			want = append(want, piece...)
		}
		if string(b) != string(want) {
			t.Fatalf("piece %d (%d bytes): kept %d bytes, want %d", i, n, len(b), len(want))
		}
		if len(b) > len(whole) || !bytes.Equal(whole[len(whole)-len(b):], b) {
			t.Fatalf("piece %d: the kept bytes are not the output's end", i)
		}
		if prev != nil && cap(prev) > 0 && &prev[:1][0] != &b[:1][0] {
			t.Fatalf("piece %d: the live output moved to a new array", i)
		}
	}
}

// TestTrimTrailingSpaces (new user, 2026-12-03): rendered lines were
// padded to the width with spaces before their closing style sequence,
// so a narrowed terminal showed each as two rows. The spaces go, the
// sequences stay; the control, a line without padding, is unchanged.
func TestTrimTrailingSpaces(t *testing.T) {
	for in, want := range map[string]string{
		"\x1b[1mTitle\x1b[0m    ":               "\x1b[1mTitle\x1b[0m",
		"text   \x1b[0m":                        "text\x1b[0m",
		"a \x1b[38;5;2m  \x1b[0m\x1b[0m  ":      "a\x1b[38;5;2m\x1b[0m\x1b[0m",
		"plain line":                            "plain line",
		"keep \x1b]8;;x\x07link\x1b]8;;\x07   ": "keep \x1b]8;;x\x07link\x1b]8;;\x07",
	} {
		if got := trimTrailingSpaces(in); got != want {
			t.Errorf("trimTrailingSpaces(%q) = %q, want %q", in, got, want)
		}
	}
}

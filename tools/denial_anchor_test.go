package tools

import (
	"regexp/syntax"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"brig/jail"
)

// TestErrorAnchors: every alternative of the patterns that decide whether
// a line reports a denial holds one of errorAnchors (so the first look at
// a whole output never passes over a line a pattern would match), and no
// anchor holds a letter that (?i) also matches in a form strings.ToLower
// does not give (K for k, ſ for s).
func TestErrorAnchors(t *testing.T) {
	for _, re := range []string{reAccess().String(), reROFS().String(), reNetwork().String(), reRefused().String(), reMissing().String()} {
		// Each alternative on its own (the parser would factor their
		// common prefixes); none of the patterns has a group.
		body, ok := strings.CutPrefix(re, "(?i)")
		if !ok || strings.ContainsAny(body, "()") {
			t.Fatalf("%q: the test reads only case-insensitive patterns without groups", re)
		}
		for _, src := range strings.Split(body, "|") {
			alt, err := syntax.Parse(src, syntax.Perl)
			if err != nil {
				t.Fatal(err)
			}
			lit := strings.ToLower(leadingLiteral(alt))
			covered := false
			for _, a := range errorAnchors {
				covered = covered || strings.Contains(lit, a)
			}
			if !covered {
				t.Errorf("%q: no anchor covers the alternative %q", re, src)
			}
		}
	}
	for _, a := range errorAnchors {
		for _, r := range a {
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				if f > unicode.MaxASCII {
					t.Errorf("anchor %q holds %q, which (?i) also matches as %q", a, r, f)
				}
			}
		}
	}
	// Control: an output without any of them gets no note, one with a
	// denial in it gets one.
	g := &jail.Spec{Dir: "/ws", Workspace: "/ws"}
	if n := denialNotes("1\n2\n3\n", g); n != nil {
		t.Errorf("notes for plain output: %v", n)
	}
	if n := denialNotes("1\ncurl: (6) COULD NOT RESOLVE HOST: x\n3\n", g); len(n) != 1 {
		t.Errorf("notes for a resolver failure: %v", n)
	}
}

// leadingLiteral is the literal text alt starts with (after any \b).
func leadingLiteral(alt *syntax.Regexp) string {
	var b strings.Builder
	subs := []*syntax.Regexp{alt}
	if alt.Op == syntax.OpConcat {
		subs = alt.Sub
	}
	for _, s := range subs {
		switch s.Op {
		case syntax.OpWordBoundary:
			continue
		case syntax.OpLiteral:
			b.WriteString(string(s.Rune))
			continue
		}
		break
	}
	return b.String()
}

// BenchmarkDenialNotes looks for denials in the 30 KiB of a long
// command's output a model is shown: one that holds none, and one with a
// denial in its last line (make bench).
func BenchmarkDenialNotes(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < MaxCommandOutputBytes; i++ {
		sb.WriteString("ok   example.com/pkg" + strconv.Itoa(i) + "\t0.012s\n")
	}
	g := &jail.Spec{Dir: "/ws", Workspace: "/ws"}
	for _, c := range []struct{ name, out string }{
		{"none", sb.String()},
		{"one", sb.String() + "open /etc/shadow: permission denied\n"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				denialNotes(c.out, g)
			}
		})
	}
}

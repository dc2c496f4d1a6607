package tools

import (
	"bytes"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// prefilter is a piece of text every match must contain, found with a fast
// byte search before the regular expression runs on a candidate line. Go's
// regexp has no such literal scan for case-insensitive or anchored
// patterns, which is most of the gap to ripgrep.
type prefilter struct {
	lit  []byte // lower-case when fold
	fold bool
}

// minPrefilter is the shortest literal worth scanning for.
const minPrefilter = 3

// newPrefilter finds a literal that every match of pattern (in Go syntax,
// flags included) contains, or returns nil.
func newPrefilter(pattern string) *prefilter {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	lit, fold := requiredLiteral(re.Simplify())
	if fold {
		lit = foldSafe(lit)
	}
	if len(lit) < minPrefilter || strings.ContainsRune(lit, '\n') {
		return nil
	}
	if fold {
		lit = strings.ToLower(lit)
	}
	return &prefilter{lit: []byte(lit), fold: fold}
}

// requiredLiteral returns the longest literal that is a mandatory part of
// every match of re.
func requiredLiteral(re *syntax.Regexp) (string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return string(re.Rune), re.Flags&syntax.FoldCase != 0
	case syntax.OpCapture:
		return requiredLiteral(re.Sub[0])
	case syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		best, bestFold := "", false
		for _, sub := range re.Sub {
			if l, f := requiredLiteral(sub); len(l) > len(best) {
				best, bestFold = l, f
			}
		}
		return best, bestFold
	}
	return "", false
}

// foldSafe returns the longest run of lit that an ASCII case-insensitive
// byte search finds exactly as Unicode case folding would: ASCII letters
// other than k and s (which also fold to K and ſ), digits and punctuation.
func foldSafe(lit string) string {
	best, start := "", 0
	for i := 0; i <= len(lit); i++ {
		if i < len(lit) {
			c := lit[i]
			if c < utf8.RuneSelf && !strings.ContainsRune("kKsS", rune(c)) {
				continue
			}
		}
		if i-start > len(best) {
			best = lit[start:i]
		}
		start = i + 1
	}
	return best
}

// haystack is data as the prefilter searches it.
func (p *prefilter) haystack(data []byte) []byte {
	if !p.fold {
		return data
	}
	return asciiLower(data)
}

func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// next returns the index in hay, from pos on, of the next candidate, or -1.
func (p *prefilter) next(hay []byte, pos int) int {
	i := bytes.Index(hay[pos:], p.lit)
	if i < 0 {
		return -1
	}
	return pos + i
}

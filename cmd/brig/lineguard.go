package main

import (
	"io"
	"strings"
)

// lineGuard stands between the model's text and a terminal that also shows
// brig's own lines (stderr on the same screen): a line of the model's that
// starts as one of brig's would — a call's `▸`, its output's `│`, a
// `brig:` notice — could pass for brig's report of a call that never ran
// or was never denied (red team, 2026-12-03). Such a line is shown with
// its glyph replaced (`▸` as `>`, `│` as `|`) or, for `brig:`, after
// "(model) ". Only a line's start is held back, until it can be told apart;
// the rest streams as it comes.
type lineGuard struct {
	w   io.Writer
	buf strings.Builder // the line's start, not yet written
	// decided: the line's start was written; the rest of the line goes
	// through until its newline.
	decided bool
}

// ownPrefix is how brig's notices start.
const ownPrefix = "brig:"

func (g *lineGuard) Write(p []byte) (int, error) {
	s := string(p)
	for s != "" {
		if g.decided {
			i := strings.IndexByte(s, '\n')
			if i < 0 {
				if _, err := io.WriteString(g.w, s); err != nil {
					return 0, err
				}
				break
			}
			if _, err := io.WriteString(g.w, s[:i+1]); err != nil {
				return 0, err
			}
			s, g.decided = s[i+1:], false
			continue
		}
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			g.buf.WriteString(s)
			s = ""
		} else {
			g.buf.WriteString(s[:i+1])
			s = s[i+1:]
		}
		if done, err := g.decide(i >= 0); err != nil {
			return 0, err
		} else if done && i >= 0 {
			g.decided = false // the newline ended the line
		}
	}
	return len(p), nil
}

// decide writes the held line start once it can tell whether it imitates
// brig's lines (or ended: whole is true when it holds a newline).
func (g *lineGuard) decide(whole bool) (bool, error) {
	line := g.buf.String()
	rest := strings.TrimLeft(line, " \t")
	var out string
	switch {
	case strings.HasPrefix(rest, "▸"), strings.HasPrefix(rest, "│"):
		lead := line[:len(line)-len(rest)]
		out = lead + strings.NewReplacer("▸", ">", "│", "|").Replace(rest[:len("▸")]) + rest[len("▸"):]
	case strings.HasPrefix(rest, ownPrefix):
		out = "(model) " + line
	case !whole && (strings.TrimSpace(rest) == "" || strings.HasPrefix(ownPrefix, rest) || strings.HasPrefix("▸", rest) || strings.HasPrefix("│", rest)):
		return false, nil // cannot tell yet
	default:
		out = line
	}
	g.buf.Reset()
	g.decided = !whole
	_, err := io.WriteString(g.w, out)
	return true, err
}

// Flush writes a held line start as it is (the text ended, or brig's own
// line follows).
func (g *lineGuard) Flush() error {
	if g.buf.Len() == 0 {
		return nil
	}
	_, err := g.decide(true)
	g.decided = false
	return err
}

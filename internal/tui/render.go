package tui

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"brig/internal/render"
	"brig/internal/termsafe"
)

// inert makes untrusted text (the model's, a tool's, a paste) safe to put
// on a terminal with termsafe.Text, the one sanitiser: escape sequences and
// other control characters are shown as visible symbols (ESC as ␛, CR as
// ␍, never emulated), never sent. Tabs become spaces (the layout counts
// columns); newlines stay.
func inert(s string) string {
	s = termsafe.Text(s)
	if strings.ContainsRune(s, '\t') {
		s = strings.ReplaceAll(s, "\t", "    ")
	}
	return s
}

// palette is brig's colours. Text is styled in full colour and converted to
// the terminal's profile on the way out (NO_COLOR strips the colour).
var (
	colAccent = lipgloss.Color("#7aa2f7")
	colDim    = lipgloss.Color("#737aa2")
	colOK     = lipgloss.Color("#9ece6a")
	colWarn   = lipgloss.Color("#e0af68")
	colErr    = lipgloss.Color("#f7768e")
	colAddBg  = lipgloss.Color("#1d3b24")
	colDelBg  = lipgloss.Color("#4b1c22")
)

var (
	stBold   = lipgloss.NewStyle().Bold(true)
	stAccent = lipgloss.NewStyle().Foreground(colAccent).Bold(true)
	stDim    = lipgloss.NewStyle().Foreground(colDim)
	stOK     = lipgloss.NewStyle().Foreground(colOK)
	stWarn   = lipgloss.NewStyle().Foreground(colWarn).Bold(true)
	stErr    = lipgloss.NewStyle().Foreground(colErr).Bold(true)
	stUser   = lipgloss.NewStyle().Foreground(colAccent)
)

// downsample converts styled text to what the terminal's colour profile
// shows (NoTTY strips every escape, ASCII keeps no colour).
func downsample(s string, p colorprofile.Profile) string {
	if p == colorprofile.TrueColor || p == colorprofile.Unknown {
		return s
	}
	var b strings.Builder
	w := &colorprofile.Writer{Forward: &b, Profile: p}
	_, _ = w.Write([]byte(s))
	return b.String()
}

// markdown renders Markdown through the renderer (glamour, in the helper
// program; see internal/render).
type markdown struct {
	style string // glamour standard style: "dark", or "notty" without colour
	r     render.Renderer
}

func newMarkdown(p colorprofile.Profile, r render.Renderer) *markdown {
	style := "dark"
	if p <= colorprofile.ASCII && p != colorprofile.Unknown {
		style = "notty"
	}
	return &markdown{style: style, r: r}
}

// render renders src (already made inert) to width columns. On a renderer
// error the text is shown as it is.
func (md *markdown) render(src string, width int) string {
	if width < 20 {
		width = 20
	}
	out, err := md.r.Markdown(md.style, width, src)
	if err != nil {
		return src
	}
	return trimBlankLines(out)
}

// trimBlankLines drops the blank lines glamour puts around a document.
func trimBlankLines(s string) string {
	lines := strings.Split(s, "\n")
	blank := func(l string) bool { return strings.TrimSpace(ansi.Strip(l)) == "" }
	for len(lines) > 0 && blank(lines[0]) {
		lines = lines[1:]
	}
	for len(lines) > 0 && blank(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = trimTrailingSpaces(l)
	}
	return strings.Join(lines, "\n")
}

// trimTrailingSpaces takes the spaces off the end of a rendered line, also
// those before the style sequences that close it (which stay): padded to
// the width, a line took two rows after the terminal narrowed, and a copy
// took the spaces along (new user, 2026-12-03).
func trimTrailingSpaces(l string) string {
	var tail []string // the closing style sequences, last first
	for {
		switch t := strings.TrimRight(l, " "); {
		case strings.HasSuffix(t, "m") && strings.LastIndex(t, "\x1b[") >= 0 && sgrOnly(t[strings.LastIndex(t, "\x1b["):]):
			at := strings.LastIndex(t, "\x1b[")
			tail = append(tail, t[at:])
			l = t[:at]
		default:
			for i := len(tail) - 1; i >= 0; i-- {
				t += tail[i]
			}
			return t
		}
	}
}

// sgrOnly reports whether s is one SGR sequence: ESC [ digits and ; m.
func sgrOnly(s string) bool {
	body, ok := strings.CutPrefix(s, "\x1b[")
	if !ok {
		return false
	}
	body, ok = strings.CutSuffix(body, "m")
	return ok && strings.Trim(body, "0123456789;:") == ""
}

// stableSplit returns the length of the prefix of a streaming Markdown
// text that is complete: up to the last blank line outside a code fence.
// That part can be rendered once and printed; the rest stays live.
func stableSplit(s string) int {
	cut, inFence, off := 0, false, 0
	for line := range strings.SplitAfterSeq(s, "\n") {
		off += len(line)
		if !strings.HasSuffix(line, "\n") {
			break // the last, unfinished line
		}
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
			continue
		}
		if t == "" && !inFence {
			cut = off
		}
	}
	return cut
}

// highlighter colours code by file name (chroma, in the renderer),
// keeping each line's tokens — a diff is drawn again at every frame while
// it is on screen — and one style per colour.
type highlighter struct {
	r      render.Renderer
	tokens map[codeKey][]render.Token
	styles map[string]lipgloss.Style
}

type codeKey struct{ name, code string }

// maxCodeLines bounds the lines whose tokens the highlighter keeps.
const maxCodeLines = 4096

func newHighlighter(r render.Renderer) *highlighter {
	return &highlighter{r: r, tokens: map[codeKey][]render.Token{}, styles: map[string]lipgloss.Style{}}
}

// line colours one line of code; bg, when set, is the line's background.
func (h *highlighter) line(path, code string, bg lipgloss.Style) string {
	k := codeKey{filepath.Base(path), code}
	toks, ok := h.tokens[k]
	if !ok {
		toks = h.r.Code(k.name, code)
		if len(h.tokens) >= maxCodeLines {
			clear(h.tokens)
		}
		h.tokens[k] = toks
	}
	if toks == nil {
		return bg.Render(code)
	}
	var b strings.Builder
	for _, tok := range toks {
		st, ok := h.styles[tok.Colour]
		if !ok {
			st = lipgloss.NewStyle()
			if tok.Colour != "" {
				st = st.Foreground(lipgloss.Color(tok.Colour))
			}
			h.styles[tok.Colour] = st
		}
		b.WriteString(st.Inherit(bg).Render(tok.Text))
	}
	return b.String()
}

// diffLine is one line of a unified diff with its line numbers (0 where
// the line has none on that side).
type diffLine struct {
	old, new int
	op       byte // ' ', '-', '+', or '@' for a hunk separator
	text     string
}

// parseUnified reads a unified diff (as tools.Meta.Diff holds it).
func parseUnified(d string) []diffLine {
	var out []diffLine
	oldN, newN := 0, 0
	for _, l := range strings.Split(strings.TrimRight(d, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "--- "), strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, `\`):
		case strings.HasPrefix(l, "@@"):
			o, n, ok := hunkStarts(l)
			if ok {
				if len(out) > 0 {
					out = append(out, diffLine{op: '@'})
				}
				oldN, newN = o, n
			}
		case l == "":
			out = append(out, diffLine{old: oldN, new: newN, op: ' '})
			oldN++
			newN++
		default:
			dl := diffLine{op: l[0], text: l[1:]}
			switch l[0] {
			case '-':
				dl.old = oldN
				oldN++
			case '+':
				dl.new = newN
				newN++
			case ' ':
				dl.old, dl.new = oldN, newN
				oldN++
				newN++
			default:
				// Not a line of the diff: the note of a diff cut at brig's
				// cap ("[… output truncated]"), which must not read as a
				// line of the file (the card says the diff was cut).
				continue
			}
			out = append(out, dl)
		}
	}
	return out
}

// hunkStarts reads "@@ -a,b +c,d @@".
func hunkStarts(h string) (old, new int, ok bool) {
	f := strings.Fields(h)
	if len(f) < 3 {
		return 0, 0, false
	}
	num := func(s, sign string) (int, bool) {
		s = strings.TrimPrefix(s, sign)
		s, _, _ = strings.Cut(s, ",")
		n, err := strconv.Atoi(s)
		return n, err == nil
	}
	o, ok1 := num(f[1], "-")
	n, ok2 := num(f[2], "+")
	return o, n, ok1 && ok2
}

// renderDiff shows a unified diff with old and new line numbers, the code
// syntax-coloured and the changed lines on a red or green background, at
// most maxLines lines (a note says how many more there are).
func (h *highlighter) renderDiff(path, unified string, width, maxLines int) string {
	lines := parseUnified(unified)
	var b strings.Builder
	del := lipgloss.NewStyle().Background(colDelBg)
	add := lipgloss.NewStyle().Background(colAddBg)
	gutter := func(n int) string {
		if n == 0 {
			return "    "
		}
		return fmt.Sprintf("%4d", n)
	}
	codeWidth := max(width-12, 10)
	for i, dl := range lines {
		if i == maxLines {
			fmt.Fprintf(&b, "%s\n", stDim.Render(fmt.Sprintf("     … %d more diff lines", len(lines)-maxLines)))
			break
		}
		if dl.op == '@' {
			b.WriteString(stDim.Render("     ⋮") + "\n")
			continue
		}
		code := ansi.Truncate(inert(dl.text), codeWidth, "…")
		var bg lipgloss.Style
		switch dl.op {
		case '-':
			bg = del
		case '+':
			bg = add
		}
		sign := string(dl.op)
		b.WriteString(stDim.Render(gutter(dl.old)+" "+gutter(dl.new)) + " " + bg.Render(sign+" ") + h.line(path, code, bg) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// capLines keeps the last n lines of s and says how many were left out.
func capLines(s string, n int) (kept string, dropped int) {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "", 0
	}
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s, 0
	}
	return strings.Join(lines[len(lines)-n:], "\n"), len(lines) - n
}

// tailLines is the end of s that holds its last n lines as capLines counts
// them once inert has run (line endings at the very end, "\n" or "\r\n",
// do not count), cut just after a newline: capLines(inert(tailLines(s, n)),
// n) keeps what capLines(inert(s), n) keeps. A view that shows a few lines
// of a long output sanitises and splits those, not all of it, each frame.
func tailLines(s string, n int) string {
	end := len(s)
	for end > 0 && s[end-1] == '\n' {
		end--
		if end > 0 && s[end-1] == '\r' {
			end--
		}
	}
	for i := end - 1; i >= 0; i-- {
		if s[i] == '\n' {
			if n--; n == 0 {
				return s[i+1:]
			}
		}
	}
	return s
}

// A running call's live output is kept to its last liveKeep bytes once it
// grows past liveMax: the view shows its last lines only.
const (
	liveMax  = 64 << 10
	liveKeep = 32 << 10
)

// appendLive appends s to the live output b and, past liveMax, keeps the
// last liveKeep bytes of the two, moved to the front of b's own array: a
// command printing megabytes sends hundreds of these, and a fresh copy of
// the tail for each (as a strings.Builder cut and refilled made) was most
// of the UI's work for them.
func appendLive(b []byte, s string) []byte {
	if len(b)+len(s) <= liveMax {
		if b == nil {
			b = make([]byte, 0, liveMax)
		}
		return append(b, s...)
	}
	if len(s) >= liveKeep {
		return append(b[:0], s[len(s)-liveKeep:]...)
	}
	n := copy(b, b[len(b)+len(s)-liveKeep:])
	return append(b[:n], s...)
}

// fit truncates every line of s to width columns.
func fit(s string, width int) string {
	if width <= 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if ansi.StringWidth(l) > width {
			lines[i] = ansi.Truncate(l, width, "…")
		}
	}
	return strings.Join(lines, "\n")
}

// wrap soft-wraps plain or styled text to width columns, breaking at
// spaces; a word longer than the width is broken where it must be. A row
// never ends up wider than width (ansi.Wrap can leave the space it broke
// at).
func wrap(s string, width int) string {
	if width <= 0 {
		return s
	}
	// ansi.Wrap also breaks after every hyphen, which cuts flags and names
	// ("-" / "-base-url"): hyphens ride through it as a stand-in of the
	// same width.
	if hold := strings.Contains(s, "-") && !strings.Contains(s, nbHyphen); hold {
		return strings.ReplaceAll(wrap(strings.ReplaceAll(s, "-", nbHyphen), width), nbHyphen, "-")
	}
	rows := strings.Split(ansi.Wrap(s, width, " "), "\n")
	for i, r := range rows {
		if ansi.StringWidth(r) <= width {
			continue
		}
		if strings.TrimSpace(ansi.Strip(ansi.TruncateLeft(r, width, ""))) == "" {
			rows[i] = ansi.Truncate(r, width, "") // only the break's space is over
		} else {
			rows[i] = ansi.Hardwrap(r, width, true)
		}
	}
	return strings.Join(rows, "\n")
}

// nbHyphen is U+2011, a hyphen no line is broken after.
const nbHyphen = "\u2011"

// hang lays content out under a prefix: its first row starts with first,
// every later row (of a wrapped line, or a later line of content) with
// cont, and each line is wrapped at word boundaries to what is left of
// width. first and cont should be the same width.
func hang(first, cont, content string, width int) string {
	avail := max(width-max(ansi.StringWidth(first), ansi.StringWidth(cont)), 10)
	var b strings.Builder
	pre := first
	for line := range strings.SplitSeq(content, "\n") {
		for row := range strings.SplitSeq(wrap(line, avail), "\n") {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(pre + row)
			pre = cont
		}
	}
	return b.String()
}

// reflow wraps every row of s that is wider than width at word boundaries,
// its later rows indented as the row is (up to half the width); rows that
// fit are left as they are. It is the transcript's last layout step: no
// printed row is left for the terminal to cut mid-word.
func reflow(s string, width int) string {
	if width <= 0 {
		return s
	}
	rows := strings.Split(s, "\n")
	changed := false
	for i, r := range rows {
		if ansi.StringWidth(r) <= width {
			continue
		}
		plain := ansi.Strip(r)
		n := min(len(plain)-len(strings.TrimLeft(plain, " ")), width/2)
		pad := strings.Repeat(" ", n)
		rows[i] = hang(pad, pad, ansi.TruncateLeft(r, n, ""), width)
		changed = true
	}
	if !changed {
		return s
	}
	return strings.Join(rows, "\n")
}

// firstRows keeps the first n rows of s; when it cuts, the last row kept
// ends with "…" (fitted to width).
func firstRows(s string, n, width int) string {
	rows := strings.Split(s, "\n")
	if len(rows) <= n {
		return s
	}
	rows = rows[:n]
	rows[n-1] = ansi.Truncate(rows[n-1], max(width-1, 1), "") + "…"
	return strings.Join(rows, "\n")
}

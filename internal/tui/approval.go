package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"brig/agent"
	"brig/internal/termsafe"
	"brig/jail"
	"brig/policy"
	"brig/tools"
)

// The approval prompt shows the whole of what runs. Every string in it that
// the model, a tool or a repository wrote is shown with termsafe.Strict:
// control characters, carriage returns, bidi controls and zero-width
// characters appear as marked symbols, never emulated, and a line above the
// call says so. A command, a diff or a file's content too long for the
// screen keeps its head and folds its middle (v shows all of it, scrolled
// with ↑/↓); the jail grant the answer would give is said in words; "always"
// saves exactly the rule that would have allowed this call, and a call that
// asks in every mode offers neither "session" nor "always".

// approvalState is how the prompt of the pending approval is shown.
type approvalState struct {
	expanded bool // the whole body, scrolled, instead of head and tail
	scroll   int
	page     int       // how many body rows the scrolled view showed last: PgUp/PgDn's step
	typed    time.Time // the last key that was typing, not answering (Model.typing)
	// swapped says which question this one took the place of, when that
	// one was withdrawn unanswered just before (Model.gone).
	swapped string
}

// strict shows a foreign string in a prompt, its hidden characters marked.
func strict(s string) string {
	return termsafe.StrictMarked(s, func(sym string) string { return stWarn.Render(sym) })
}

// strictLine is strict for a value shown on one line (a path, a URL, the
// policy's reason): a newline or a tab in it is a marked symbol, so that
// text after it cannot pass for a line of brig's own.
func strictLine(s string) string {
	s = strict(s)
	if strings.ContainsAny(s, "\n\t") {
		s = strings.NewReplacer("\n", stWarn.Render("␊"), "\t", stWarn.Render("␉")).Replace(s)
	}
	return s
}

// code makes a line of a file's content safe to show as code: what Strict
// shows, except tabs, which are expanded.
func code(s string) string {
	parts := strings.Split(s, "\t")
	for i, p := range parts {
		parts[i] = termsafe.Strict(p)
	}
	return strings.Join(parts, "    ")
}

// approvalView is the approval prompt for p, fitted to the width and to
// room, the rows the live area has for it.
func (m *Model) approvalView(p *pending, room int) string {
	w := max(m.width, 20)
	req := p.req
	if p.prev == nil {
		p.prev = buildPreview(req)
	}
	pv := p.prev
	a := parseArgs(req.Args)
	p.laidOut = true

	var head []string // the question, the warnings and the target
	if n := req.Net; n != nil {
		// A connection of a running call, held by the proxy meanwhile.
		target := strict(hostPort(n.Host, n.Port))
		head = append(head, wrapIndent(stWarn.Render("▲ let "+strict(req.Tool)+" connect to "+target+"?")+stDim.Render(" — ")+strictLine(quotedReason(req.Verdict))+stDim.Render(" (the connection waits for your answer)"), w, "  ")...)
	} else {
		head = append(head, wrapIndent(stWarn.Render("▲ approve "+strictLine(req.Tool)+"?")+stDim.Render(" — ")+strictLine(asciiHostIn(req.Args, quotedReason(req.Verdict))), w, "  ")...)
	}
	if hiddenIn(req) {
		head = append(head, wrapIndent(stWarn.Render("⚠ this call holds characters a terminal would not show as they act (control, bidi or invisible ones); they are shown as marked symbols"), w, "  ")...)
	}
	if !p.mixedDone {
		p.mixed, p.mixedDone = lookalikes(a), true
	}
	if len(p.mixed) > 0 {
		head = append(head, wrapIndent(stWarn.Render("⚠ letters of another script inside words of ASCII ones, which can pass for them: "+strictLine(strings.Join(p.mixed, ", "))), w, "  ")...)
	}
	target := m.targetLines(req, a, pv, w)
	if p.rows == nil || p.rowsWidth != w { // highlighting is the costly part: once per width
		rows, lead := m.bodyRows(req, a, pv, w)
		if tools.Name(req.Tool) != tools.Bash {
			rows = capRows(rows) // a command is laid out whole: it is what is approved
		}
		p.rows, p.lead, p.rowsWidth = rows, min(lead, max(len(rows)-1, 0)), w
	}
	body := p.rows
	why := whyLines(req.Verdict, quotedReason(req.Verdict), w)
	grant := m.grantLines(req, w)
	// Esc closes the whole-body view when it is open, and denies when not
	// (the two labels are as wide: the layout does not change with them).
	viewing := m.apState.expanded
	short := false
	mkAnswers := func() []string {
		if short {
			return packRows("  ", "  ", shortAnswers(), "  ", w)
		}
		return packRows("  ", "  ", answerItems(req.Verdict, viewing), "  ", w)
	}
	answers := mkAnswers()
	var tail []string
	if m.denying {
		tail = append(tail, m.denyInput.View())
	}

	room = max(room, 1)
	fixed := len(head) + len(target) + len(why) + len(grant) + len(answers) + len(tail)
	if room-fixed < 4 && len(grant) > 1 { // a small terminal: the grant on one line
		grant = []string{fit(stDim.Render("  jail: "+grantSummary(req.Grant)), w)}
		fixed = len(head) + len(target) + len(why) + len(grant) + len(answers) + len(tail)
	}
	if room-fixed < 4 && len(why) > 1 {
		why = cutRows(why, 1, w)
		fixed = len(head) + len(target) + len(why) + len(grant) + len(answers) + len(tail)
	}
	lead := p.lead
	if avail := max(room-fixed, 4); lead > 1 && !m.apState.expanded && len(body) > avail && lead >= avail-1-min(2, avail/4) {
		// The context rows above a change would push it out of sight
		// (a fold keeps the first rows, see fold): start one row above.
		body, lead = body[lead-1:], 1
	}
	if fixed+min(len(body), max(room-fixed, 4)) > room {
		// Too short for all of it: the answers in a word each, without
		// "session" and "always", whose rules may be cut (rulesHidden).
		short = true
		answers = mkAnswers()
		rows, seen := m.squeeze(lead, head, target, body, why, grant, answers, tail, room, w)
		if viewing && !m.apState.expanded {
			// Laid out again with the answers of a closed view: as wide,
			// so the rows are the same.
			viewing = false
			rows, seen = m.squeeze(lead, head, target, body, why, grant, mkAnswers(), tail, room, w)
		}
		if !seen {
			// What would be approved is out of sight: the fewest answers,
			// and if it is out of sight still, no approving.
			rows, seen = m.squeeze(lead, head, target, body, why, grant, packRows("  ", "  ", []string{stAccent.Render("1") + " once", stAccent.Render("4") + " deny"}, "  ", w), tail, room, w)
			if !seen {
				rows, _ = m.squeeze(lead, head, target, body, why, grant, crampedAnswers(w), tail, room, w)
			}
		}
		p.cramped, p.rulesHidden = !seen, true
		return strings.Join(rows, "\n")
	}
	p.cramped, p.rulesHidden = false, false
	body = m.fold(body, max(room-fixed, 4))
	if viewing && !m.apState.expanded { // a body that fits is never expanded: Esc denies
		viewing = false
		answers = mkAnswers()
	}

	out := slices.Concat(head, target, body, why, grant, answers, tail)
	return strings.Join(out, "\n")
}

// squeeze fits a prompt into a terminal too short for all of it, in room
// rows. What the user needs to answer comes first: the message being
// typed, the question, the answers; then the target (the path written,
// the host), the start of what runs (v shows all of it, scrolled), the
// rest of the question, why and the grant, each as far as it fits; what
// rows are left show more of what runs. seen reports whether what would
// be approved is in sight: all of the target and the first row of what
// runs, or for a change to a file its first changed row (lead: a card at
// 24x12 showed an edit's context rows alone, and 1 approved a change the
// user never saw: new user, 2026-12-03).
func (m *Model) squeeze(lead int, head, target, body, why, grant, answers, tail []string, room, w int) (rows []string, seen bool) {
	whole := body
	left := room
	take := func(rows []string, n int) []string {
		n = min(max(n, 0), len(rows), left)
		left -= n
		return rows[:n]
	}
	tail = take(tail, len(tail))
	question := take(head, 1)
	answers = cutRows(answers, len(take(answers, len(answers))), w)
	targetAll := len(target)
	target = cutRows(target, len(take(target, len(target))), w)
	bodyN := min(len(body), 2, left)
	left -= bodyN
	rest := take(head[len(question):], len(head))
	if len(question)+len(rest) < len(head) { // the question or its reason is cut
		if len(rest) > 0 {
			rest = append(slices.Clone(rest[:len(rest)-1]), ellipsis(rest[len(rest)-1], w))
		} else if len(question) > 0 {
			question = []string{ellipsis(question[0], w)}
		}
	}
	why = cutRows(why, len(take(why, len(why))), w)
	grant = cutRows(grant, len(take(grant, len(grant))), w)
	if bodyN > 0 {
		body = m.fold(body, bodyN+left)
	} else {
		body = nil
	}
	seen = len(target) == targetAll // cutRows keeps them all, uncut, or says it cut
	if len(whole) > 0 {
		seen = seen && len(body) > 0 && (m.apState.expanded || body[0] == whole[0] || body[0] == ellipsis(whole[0], w))
		seen = seen && (lead == 0 || m.apState.expanded || slices.Contains(body, whole[lead]))
	}
	return slices.Concat(question, rest, target, body, why, grant, answers, tail), seen
}

// crampedAnswers stand for the answers when the terminal is too small to
// show what would be approved: denying works, approving waits for room.
func crampedAnswers(w int) []string {
	return packRows("  ", "  ", []string{stWarn.Render("enlarge to approve"), stAccent.Render("4") + " deny"}, "  ", w)
}

// cutRows keeps the first n of rows; when that leaves some out, the last
// row kept ends with an ellipsis, so a line cut mid-sentence says so.
func cutRows(rows []string, n, w int) []string {
	if n >= len(rows) {
		return rows
	}
	if n <= 0 {
		return nil
	}
	return append(slices.Clone(rows[:n-1]), ellipsis(rows[n-1], w))
}

// ellipsis ends a row of at most w columns with "…", cutting it to make
// room.
func ellipsis(row string, w int) string {
	row = strings.TrimRight(row, " ")
	if ansi.StringWidth(row)+1 > w {
		row = strings.TrimRight(ansi.Truncate(row, max(w-1, 0), ""), " ")
	}
	return row + stDim.Render("…")
}

// maxBodyRows bounds what a prompt lays out: a file's content of more rows
// is cut with a note (the jail and the diff after the call are unaffected).
// A bash command is never cut: `v` must show every line of what runs.
const maxBodyRows = 5000

func capRows(rows []string) []string {
	if len(rows) <= maxBodyRows {
		return rows
	}
	return append(rows[:maxBodyRows:maxBodyRows], stWarn.Render(fmt.Sprintf("    … %d more rows not laid out here", len(rows)-maxBodyRows)))
}

// fold fits body rows into room rows: all of them when they fit; else the
// head, a folded middle and the last rows; expanded, a scrolled window.
func (m *Model) fold(body []string, room int) []string {
	st := &m.apState
	if len(body) <= room {
		st.expanded, st.scroll = false, 0
		return body
	}
	if room <= 0 {
		st.expanded = false // nothing shows: no view for Esc to close
		return nil
	}
	if room < 2 {
		// Too short for the view or a fold: the first row, cut, so that
		// the start of what runs is in sight (v shows all of it).
		st.expanded = false
		return []string{ellipsis(body[0], max(m.width, 20))}
	}
	if st.expanded {
		n := room - 1
		st.page = n
		st.scroll = min(max(st.scroll, 0), len(body)-n)
		win := slices.Clone(body[st.scroll : st.scroll+n])
		return append(win, stDim.Render(fmt.Sprintf("    lines %d–%d of %d · ↑/↓ PgUp/PgDn scroll · v/Esc fold", st.scroll+1, st.scroll+n, len(body))))
	}
	tailN := min(2, room/4)
	headN := room - 1 - tailN
	hidden := len(body) - headN - tailN
	out := slices.Clone(body[:headN])
	out = append(out, stAccent.Render(fmt.Sprintf("    ⋯ %d more lines folded · v shows all", hidden)))
	return append(out, body[len(body)-tailN:]...)
}

// hiddenIn reports whether anything foreign in the request has characters
// Strict would show as symbols.
func hiddenIn(req agent.ApprovalRequest) bool {
	if termsafe.Hidden(string(req.Args)) || termsafe.Hidden(req.Tool) {
		return true
	}
	var v map[string]any
	if json.Unmarshal(req.Args, &v) == nil {
		for _, x := range v {
			if s, ok := x.(string); ok && hiddenText(s) {
				return true
			}
		}
	}
	for _, k := range []string{"path", "source", "destination", "url", "pattern"} {
		if s, ok := v[k].(string); ok && strings.ContainsAny(s, "\n\t") {
			return true // a line break in a name: text after it could pass for brig's
		}
	}
	return slices.ContainsFunc(req.Verdict.Paths, func(p policy.PathVerdict) bool {
		return termsafe.Hidden(p.Given) || termsafe.Hidden(p.Resolved) || strings.ContainsAny(p.Given+p.Resolved, "\n\t")
	})
}

// lookalikes finds words of a call's command, path or new text that mix
// ASCII letters with letters of a script whose letters pass for them
// (Cyrillic, Greek, Armenian, Cherokee, fullwidth or mathematical forms),
// each with its first such letter as a code point: pypi.оrg with a
// Cyrillic о in a requirements edit looked like the real index (red team,
// 2026-12-03). At most three.
func lookalikes(a args) []string {
	texts := []string{a.Command, a.Path, a.Source, a.Destination, a.Content, a.NewString}
	for _, e := range a.Edits {
		texts = append(texts, e.NewString)
	}
	var out []string
	for _, t := range texts {
		for _, word := range strings.FieldsFunc(t, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune("\"'`=,;()[]{}<>", r) }) {
			ascii, other := false, rune(0)
			for _, r := range word {
				switch {
				case r < 0x80 && unicode.IsLetter(r):
					ascii = true
				case other == 0 && passesForLatin(r):
					other = r
				}
			}
			if ascii && other != 0 && !slices.ContainsFunc(out, func(s string) bool { return strings.HasPrefix(s, word+" ") }) {
				out = append(out, fmt.Sprintf("%s (%c is %U)", word, other, other))
				if len(out) == 3 {
					return out
				}
			}
		}
	}
	return out
}

// passesForLatin reports whether r is a letter of a script with letters
// drawn like Latin ones.
func passesForLatin(r rune) bool {
	switch {
	case unicode.In(r, unicode.Cyrillic, unicode.Greek, unicode.Armenian, unicode.Cherokee) && unicode.IsLetter(r):
		return true
	case r >= 0xff21 && r <= 0xff5a: // fullwidth Latin letters
		return true
	case r >= 0x1d400 && r <= 0x1d7ff: // mathematical alphanumerics
		return true
	}
	return false
}

// hiddenText is Hidden, tabs and newlines aside (a file's content has them).
func hiddenText(s string) bool {
	return termsafe.Hidden(strings.NewReplacer("\t", " ", "\n", " ").Replace(s))
}

// targetLines say what the call touches: the exact paths (and where a
// symbolic link leads), the URL and its host.
func (m *Model) targetLines(req agent.ApprovalRequest, a args, pv *preview, w int) []string {
	var out []string
	line := func(label, value string) {
		out = append(out, wrapIndent(fmt.Sprintf("  %-6s %s", label, value), w, strings.Repeat(" ", 9))...)
	}
	name := tools.Name(req.Tool)
	if n := req.Net; n != nil {
		line("host", strictLine(n.Host))
		line("port", fmt.Sprintf("%d", n.Port)+stDim.Render(" ("+strictLine(n.Via)+")"))
		out = append(out, wrapIndent(stDim.Render("  asked by the running call:"), w, "    ")...)
	}
	switch {
	case name == tools.Bash:
		if dir := parseBashDir(req.Args); dir != "" {
			line("in", strictLine(dir))
		}
	case pv.target != "":
		shown := strictLine(pv.target)
		if pv.given != "" && !samePath(pv.given, pv.target, req.Grant) {
			shown = strictLine(pv.given) + " → " + shown + stDim.Render(" (where it leads)")
		}
		verb := map[tools.Name]string{tools.EditFile: "edit", tools.MultiEdit: "edit", tools.WriteFile: "write", tools.DeletePath: "delete"}[name]
		facts := ""
		switch {
		case pv.diff != nil:
			facts = fmt.Sprintf(" (+%d −%d lines)", pv.diff.Added, pv.diff.Removed)
		case name == tools.WriteFile && !pv.exists:
			facts = fmt.Sprintf(" (a new file: %d byte%s, %d line%s)", len(a.Content), plural(len(a.Content)), countLines(a.Content), plural(countLines(a.Content)))
		}
		line(verb, shown+stDim.Render(facts))
		if name == tools.DeletePath {
			what := pv.deletes
			if a.Recursive {
				what += stDim.Render(" (recursive)")
			}
			line("", what)
		}
		if pv.note != "" && !(name == tools.WriteFile && !pv.exists) {
			out = append(out, wrapIndent(stWarn.Render("  ⚠ ")+stDim.Render(strictLine(pv.note)), w, "    ")...)
		}
	case a.Source != "" || a.Destination != "":
		src, dst := a.Source, a.Destination
		for _, p := range req.Verdict.Paths {
			switch p.Given {
			case a.Source:
				src = p.Resolved
			case a.Destination:
				dst = p.Resolved
			}
		}
		line("from", strictLine(src))
		line("to", strictLine(dst))
	case a.URL != "":
		line("GET", strictLine(asciiHostIn(req.Args, a.URL)))
		if u, err := url.Parse(a.URL); err == nil {
			line("host", hostLine(u.Hostname()))
		}
	case a.Path != "":
		line("path", strictLine(a.Path))
	}
	return out
}

// samePath reports whether the given path names target without a link
// in between (placed in the workspace when relative).
func samePath(given, target string, g *jail.Spec) bool {
	if given == target {
		return true
	}
	if g != nil && g.Workspace != "" && !strings.HasPrefix(given, "/") && !strings.HasPrefix(given, "~") {
		return strings.TrimSuffix(g.Workspace, "/")+"/"+strings.TrimPrefix(given, "./") == target
	}
	return false
}

func parseBashDir(raw json.RawMessage) string {
	var a struct {
		Dir string `json:"dir"`
	}
	_ = json.Unmarshal(raw, &a)
	return a.Dir
}

func countLines(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(strings.TrimSuffix(s, "\n"), "\n") + 1
}

// bodyRows is what runs, row by row at width w: the whole command, the
// diff of an edit or an overwrite with line numbers, a new file's content,
// or an MCP tool's arguments.
// lead is the row that must be in sight before the call may be approved
// beside the first (see squeeze): a diff's first changed row, else 0.
func (m *Model) bodyRows(req agent.ApprovalRequest, a args, pv *preview, w int) (rows []string, lead int) {
	name := tools.Name(req.Tool)
	switch {
	case name == tools.Bash:
		return commandRows(a.Command, w), 0
	case pv.diff != nil && pv.diff.DiffTruncated:
		// First, where no fold hides it: the rest of the change is not
		// on the card.
		warn := wrapLines(stWarn.Render(fmt.Sprintf("⚠ the diff is cut at %d KiB: the rest of this change (+%d −%d lines in all) is not shown; deny unless you expected a change this large", tools.MaxDiffMetaBytes>>10, pv.diff.Added, pv.diff.Removed)), w)
		diff, lead := m.diffRows(pv.given, pv.diff.Diff, w)
		return append(warn, diff...), len(warn) + lead
	case pv.diff != nil:
		return m.diffRows(pv.given, pv.diff.Diff, w)
	case name == tools.WriteFile:
		return m.contentRows(a.Path, a.Content, w), 0
	case name == tools.EditFile || name == tools.MultiEdit:
		// No diff (the file could not be read, or the edit would fail):
		// what the model asked to replace, without line numbers.
		edits := a.Edits
		if len(edits) == 0 {
			edits = append(edits, struct {
				OldString string `json:"old_string"`
				NewString string `json:"new_string"`
			}{a.OldString, a.NewString})
		}
		var rows []string
		for i, e := range edits {
			if len(edits) > 1 {
				rows = append(rows, stDim.Render(fmt.Sprintf("    edit %d of %d", i+1, len(edits))))
			}
			rows = append(rows, m.changeRows(a.Path, e.OldString, '-', w)...)
			rows = append(rows, m.changeRows(a.Path, e.NewString, '+', w)...)
		}
		return rows, 0
	case strings.Contains(req.Tool, "__") || name == tools.UpdatePlan:
		pretty := string(req.Args)
		var b bytes.Buffer
		if json.Indent(&b, req.Args, "", "  ") == nil {
			pretty = b.String() // the strings as the model wrote them
		}
		var rows []string
		for l := range strings.SplitSeq(pretty, "\n") {
			rows = append(rows, wrapRows("    ", "    ", strict(l), w)...)
		}
		return rows, 0
	}
	return nil, 0
}

// commandRows shows a command line in full: each line of it (numbered when
// there are several), long lines wrapped, never cut.
func commandRows(cmd string, w int) []string {
	lines := strings.Split(strings.TrimSuffix(cmd, "\n"), "\n")
	var rows []string
	for i, l := range lines {
		first, cont := "  $ ", "    "
		if len(lines) > 1 {
			first = stDim.Render(fmt.Sprintf("  %3d │ ", i+1))
			cont = stDim.Render("      │ ")
		}
		rows = append(rows, wrapRows(first, cont, strict(l), w)...)
	}
	return rows
}

// wrapRows hard-wraps styled text to width w after a first-row prefix,
// continuing under cont.
func wrapRows(first, cont, s string, w int) []string {
	avail := max(w-ansi.StringWidth(first), 8)
	parts := strings.Split(ansi.Hardwrap(s, avail, true), "\n")
	for i := range parts {
		if i == 0 {
			parts[i] = first + parts[i]
		} else {
			parts[i] = cont + parts[i]
		}
	}
	return parts
}

// wrapLines soft-wraps a styled line to width w, as rows.
func wrapLines(s string, w int) []string {
	return strings.Split(wrap(s, w), "\n")
}

// wrapIndent soft-wraps a styled line to width w, the rows after the first
// indented by cont.
func wrapIndent(s string, w int, cont string) []string {
	cw := ansi.StringWidth(cont)
	rows := strings.Split(wrap(s, max(w-cw, 10)), "\n")
	for i := 1; i < len(rows); i++ {
		rows[i] = cont + rows[i]
	}
	return rows
}

// packRows lays items out in rows of width w after a first-row prefix
// (cont under it), separated by sep, breaking between items where it can.
func packRows(first, cont string, items []string, sep string, w int) []string {
	var rows []string
	row, pre := "", first
	flush := func() {
		if row != "" {
			rows = append(rows, wrapRows(pre, cont, row, w)...)
			row, pre = "", cont
		}
	}
	avail := max(w-ansi.StringWidth(first), 8)
	for _, it := range items {
		if row != "" && ansi.StringWidth(row+sep+it) > avail {
			flush()
		}
		if row != "" {
			row += sep
		}
		row += it
	}
	flush()
	return rows
}

// diffRows shows a unified diff with old and new line numbers, the changed
// lines on a red or green background, long lines wrapped.
// diffRows lays out a unified diff; lead is the index of its first
// changed row.
func (m *Model) diffRows(path, unified string, w int) (rows []string, lead int) {
	lead = -1
	del := lipgloss.NewStyle().Background(colDelBg)
	add := lipgloss.NewStyle().Background(colAddBg)
	num := func(n int) string {
		if n == 0 {
			return "    "
		}
		return fmt.Sprintf("%4d", n)
	}
	for _, dl := range parseUnified(unified) {
		if dl.op == '@' {
			rows = append(rows, stDim.Render("     ⋮"))
			continue
		}
		bg := lipgloss.NewStyle()
		switch dl.op {
		case '-':
			bg = del
		case '+':
			bg = add
		}
		if lead < 0 && (dl.op == '-' || dl.op == '+') {
			lead = len(rows)
		}
		gutter := stDim.Render(num(dl.old)+" "+num(dl.new)) + " " + bg.Render(string(dl.op)+" ")
		rows = append(rows, wrapRows(gutter, strings.Repeat(" ", 10)+bg.Render("↪ "), m.hl.line(path, code(dl.text), bg), w)...)
	}
	return rows, max(lead, 0)
}

// contentRows shows a new file's content, numbered, long lines wrapped.
func (m *Model) contentRows(path, content string, w int) []string {
	if content == "" {
		return []string{stDim.Render("    (empty)")}
	}
	add := lipgloss.NewStyle().Background(colAddBg)
	var rows []string
	for i, l := range strings.Split(strings.TrimSuffix(content, "\n"), "\n") {
		gutter := stDim.Render(fmt.Sprintf("%9d", i+1)) + " " + add.Render("+ ")
		rows = append(rows, wrapRows(gutter, strings.Repeat(" ", 10)+add.Render("↪ "), m.hl.line(path, code(l), add), w)...)
	}
	return rows
}

// changeRows shows text the model wants removed or added, without line
// numbers (there is no file to place it in).
func (m *Model) changeRows(path, text string, op byte, w int) []string {
	bg := lipgloss.NewStyle().Background(colDelBg)
	if op == '+' {
		bg = lipgloss.NewStyle().Background(colAddBg)
	}
	var rows []string
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		rows = append(rows, wrapRows("    "+bg.Render(string(op)+" "), "    "+bg.Render("↪ "), m.hl.line(path, code(l), bg), w)...)
	}
	return rows
}

// whyLines name the parts of a command line that are not allowed and why,
// at most four (the rest counted). A line of one such command whose words
// and reason the question already gives (header) has none: it said the
// same twice (new user, 2026-12-02).
func whyLines(v policy.Verdict, header string, w int) []string {
	var rows []string
	n := 0
	for _, c := range v.Commands {
		if c.Tier != policy.Allow {
			n++
		}
	}
	if n == 1 {
		for _, c := range v.Commands {
			if c.Tier != policy.Allow && strings.Contains(header, shellWords(c.Words)) && strings.Contains(header, c.Reason) {
				return nil
			}
		}
	}
	n = 0
	for _, c := range v.Commands {
		if c.Tier == policy.Allow {
			continue
		}
		n++
		if n <= 4 {
			rows = append(rows, wrapIndent(stDim.Render("  "+string(c.Tier)+": ")+strict(shellWords(c.Words))+stDim.Render(" — "+termsafe.Line(c.Reason)), w, "    ")...)
		}
	}
	if n > 4 {
		rows = append(rows, stDim.Render(fmt.Sprintf("  … and %d more commands that are not allowed", n-4)))
	}
	return rows
}

// shellWords shows a command's words as a shell would read them back:
// a word with a blank, a quote or another character the shell treats
// specially is quoted, so that where one word ends and the next begins
// shows (policy hands the words over unquoted). A word holding an
// expansion ($x, $(…), `…`) keeps it visible as one: in double quotes when
// it needs quoting at all.
func shellWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shellWord(w)
	}
	return strings.Join(q, " ")
}

func shellWord(w string) string {
	if w == "" {
		return "''"
	}
	plain := func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_@%+=:,./-~*?[]^!", r) || r > 0x7f
	}
	expands := strings.ContainsAny(w, "$`")
	needs := false
	for _, r := range w {
		if !plain(r) && !(expands && strings.ContainsRune("$`{}()", r)) {
			needs = true
			break
		}
	}
	switch {
	case !needs:
		return w
	case expands || strings.Contains(w, "'") && !strings.ContainsAny(w, `"\`):
		return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(w) + `"`
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// quotedReason is the verdict's reason with the command it names quoted as
// shellWords quotes it (policy names it by its words joined with blanks).
func quotedReason(v policy.Verdict) string {
	r := v.Reason
	for _, c := range v.Commands {
		if c.Tier == policy.Allow {
			continue
		}
		plain, quoted := strings.Join(c.Words, " "), shellWords(c.Words)
		if plain != quoted && strings.Contains(r, plain+": ") {
			return strings.Replace(r, plain+": ", quoted+": ", 1)
		}
	}
	return r
}

// answerItems are the choices. "session" and "always" allow exactly the
// rules the verdict proposes (the ones that would have allowed this call);
// without such rules, or for a call that asks every time, only "once".
// While v shows the whole body (viewing), Esc closes that view.
func answerItems(v policy.Verdict, viewing bool) []string {
	items := []string{stAccent.Render("1") + " allow once"}
	if offersRules(v) {
		items = append(items, stAccent.Render("2")+" allow for this session", stAccent.Render("3")+" always allow (saves "+savedRules(v.Always)+")")
	}
	esc := stDim.Render("Esc deny")
	if viewing {
		esc = stDim.Render("Esc fold") // as wide as "Esc deny"
	}
	items = append(items, stAccent.Render("4")+" deny", stAccent.Render("5")+" deny with a message", esc)
	switch {
	case v.Call.Confirm:
		items = append(items, stDim.Render("· it asks every time, so there is no session or always answer"))
	case v.Deletes() != "":
		items = append(items, stDim.Render("· a deletion asks every time, so there is no session or always answer"))
	case v.RuleAsks() != "":
		items = append(items, stDim.Render("· an ask rule asks every time, so there is no session or always answer"))
	case v.Net != nil && policy.NamesAddress(v.Net.Host):
		items = append(items, stDim.Render("· for this port and this call only: a rule would open every port"))
	case len(v.Always) == 0:
		items = append(items, stDim.Render("· no rule would allow this call as a whole, so there is no session or always answer"))
	}
	return items
}

// maxListedExact is how many rules the answer line lists one by one; past
// it, the exact ones (one command each, as written in the card above) are
// counted, so that a line of 40 commands does not push its own lines off
// the card. A rule with a wildcard, which allows more than was asked, is
// always listed.
const maxListedExact = 3

// savedRules says which rules 2 and 3 save.
func savedRules(always []string) string {
	if len(always) <= maxListedExact {
		rules := make([]string, len(always))
		for i, r := range always {
			rules[i] = strict(r)
		}
		return strings.Join(rules, ", ")
	}
	var wide []string
	exact := 0
	for _, r := range always {
		if strings.Contains(r, "*") {
			wide = append(wide, strict(r))
		} else {
			exact++
		}
	}
	parts := wide
	if exact > 0 {
		parts = append(parts, fmt.Sprintf("%d exact rules, one for each command above as written", exact))
	}
	return strings.Join(parts, ", ")
}

// shortAnswers are the choices in a word or two, for a short terminal:
// not "session" or "always", whose rule there is no room to show (the
// status line says so when 2 or 3 is pressed).
func shortAnswers() []string {
	return []string{stAccent.Render("1") + " once", stAccent.Render("4") + " deny", stAccent.Render("5") + " deny with a message"}
}

// offersRules reports whether the prompt offers "session" and "always".
func offersRules(v policy.Verdict) bool { return !v.Call.Confirm && len(v.Always) > 0 }

// asciiHost is a host name with every letter beyond ASCII shown as its
// code point (gіthub.com, a Cyrillic і, reads g\u0456thub.com), which no
// look-alike letter disguises. (Not its IDNA form: that would link
// golang.org/x/text into brig, which only the web_fetch worker carries.)
func asciiHost(h string) string {
	var b strings.Builder
	for _, r := range h {
		if r < utf8.RuneSelf {
			b.WriteRune(r)
		} else {
			b.WriteString(termsafe.Symbol(r))
		}
	}
	return b.String()
}

// asciiHostIn is s with the host of the call's URL argument (web_fetch's)
// shown as asciiHost shows it, wherever s names it: the card's title and
// GET line, the running call's line and the finished call's (a new user
// saw g\u0456thub.com on the host row alone, and gіthub.com in the three
// others).
func asciiHostIn(raw json.RawMessage, s string) string {
	var a struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(raw, &a) != nil || a.URL == "" {
		return s
	}
	u, err := url.Parse(a.URL)
	if err != nil {
		return s
	}
	h := u.Hostname()
	if h == "" || asciiHost(h) == h {
		return s
	}
	return strings.ReplaceAll(s, h, asciiHost(h))
}

// hostLine is the card's host, letters beyond ASCII shown as code points
// (asciiHost), with the warning that they may look like another site's.
func hostLine(h string) string {
	a := asciiHost(h)
	if a == h {
		return strictLine(h)
	}
	return strictLine(a) + stWarn.Render(" — written "+strictLine(h)+" with letters beyond ASCII, which can look like another site's name")
}

// hostPort writes a host and port as a connection names them.
func hostPort(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }

// systemRoots are shown as a count, not one by one.
var systemRoots = []string{"/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/opt", "/proc", "/dev", "/sys", "/run", "/var/lib", "/nix", "/snap"}

func isSystemRoot(p string) bool {
	return slices.ContainsFunc(systemRoots, func(s string) bool { return p == s || strings.HasPrefix(p, s+"/") })
}

// grantLines say in words what the call could do if allowed: the paths it
// may write and read, and the network, as the jail will enforce them.
func (m *Model) grantLines(req agent.ApprovalRequest, w int) []string {
	g := req.Grant
	if g == nil {
		if server, _, ok := strings.Cut(req.Tool, "__"); ok {
			return wrapIndent(stDim.Render("  if allowed, brig sends the call to the MCP server ")+strict(server)+stDim.Render(", which runs in its own jail with the grants of its configuration (a stdio server) or elsewhere (an HTTP server); brig mcp list shows them"), w, "    ")
		}
		return []string{stDim.Render("  if allowed, it runs in brig itself, not in a jail")}
	}
	// Every path it may write is listed; of what it may read, the
	// workspace and the paths this call names (the ones a human judges);
	// the system and toolchain roots every call of its kind gets are
	// counted.
	named := map[string]bool{}
	for _, pv := range req.Verdict.Paths {
		named[pv.Resolved] = true
	}
	var write, read []string
	hidden := 0
	private := map[string]bool{}
	for _, kv := range g.Env {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
			private[v] = true
		}
	}
	if g.PrivateTmp {
		private["/tmp"], private["/dev/shm"] = true, true
	}
	label := func(p string) string {
		s := strict(p)
		switch {
		case p == g.Workspace:
			s += stDim.Render(" (the workspace)")
		case private[p]:
			s += stDim.Render(" (private to this call)")
		}
		return s
	}
	for _, r := range g.Paths {
		switch {
		case r.Access == jail.Write && strings.HasPrefix(r.Path, "/dev/"):
			hidden++
		case r.Access == jail.Write:
			write = append(write, label(r.Path))
		case r.Path == g.Workspace, named[r.Path]:
			read = append(read, label(r.Path))
		default:
			hidden++
		}
	}
	rows := []string{stBold.Render("  if allowed, it runs in a jail that may:")}
	if req.Net != nil {
		rows = []string{stBold.Render("  it runs in a jail that may:")}
	}
	list := func(verb string, ps []string, none string) {
		if len(ps) == 0 {
			ps = []string{stDim.Render(none)}
		}
		for i := range ps[:len(ps)-1] {
			ps[i] += ","
		}
		rows = append(rows, packRows(fmt.Sprintf("    %-8s ", verb), strings.Repeat(" ", 13), ps, " ", w)...)
	}
	list("write", write, "nothing")
	list("read", read, "no other path")
	net := "none"
	switch {
	case req.Net != nil && policy.NamesAddress(req.Net.Host):
		net = stWarn.Render(strict(hostPort(req.Net.Host, req.Net.Port))) + stDim.Render(" through brig's proxy, for the rest of this call if you allow it; any other port or host is asked about on its own")
	case req.Net != nil:
		net = stWarn.Render(strict(req.Net.Host)) + stDim.Render(" through brig's proxy, as you answer: once (the rest of this call), for the session, or always (a rule); other hosts are decided on their own")
	case g.Network && tools.Name(req.Tool) == tools.WebFetch:
		host := ""
		if u, err := url.Parse(parseArgs(req.Args).URL); err == nil {
			host = u.Hostname()
		}
		net = stWarn.Render(strict(asciiHost(host))) + stDim.Render(" alone, through brig's proxy (a redirect to another host is decided again)")
	case g.Network:
		net = stDim.Render("only through brig's proxy: hosts your rules allow, any other asked about as it connects")
	}
	rows = append(rows, wrapIndent(fmt.Sprintf("    %-8s %s", "network", net), w, strings.Repeat(" ", 13))...)
	var more []string
	if g.Limits.Timeout > 0 {
		more = append(more, "timeout "+g.Limits.Timeout.String())
	}
	if len(g.Protected) > 0 {
		more = append(more, fmt.Sprintf("%d protected paths stay read-only", len(g.Protected)))
	}
	if hidden > 0 {
		more = append(more, fmt.Sprintf("read/exec on %d system and toolchain roots every such call gets (/usr, /etc … brig policy check lists them)", hidden))
	}
	if len(more) > 0 {
		rows = append(rows, wrapIndent(stDim.Render("    "+strings.Join(more, " · ")), w, "    ")...)
	}
	return rows
}

// grantSummary is the grant on one line, for a small terminal.
func grantSummary(g *jail.Spec) string {
	if g == nil {
		return "none (runs in brig itself)"
	}
	var write []string
	for _, r := range g.Paths {
		if r.Access == jail.Write && !strings.HasPrefix(r.Path, "/dev/") {
			write = append(write, termsafe.Strict(r.Path))
		}
	}
	net := "no network"
	if g.Network {
		net = "network through brig's proxy"
	}
	if len(write) == 0 {
		write = []string{"nothing"}
	}
	return "write " + strings.Join(write, ", ") + " · " + net
}

package tui

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"brig/agent"
	"brig/internal/credentials"
	"brig/internal/doctor"
	"brig/internal/termsafe"
	"brig/policy"
	"brig/tools"
)

// spinnerFrames animate the status line while the agent works.
var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// modeHelp says what each mode means, for the banner and /mode.
var modeHelp = map[policy.Mode]string{
	policy.ModePlan: "read-only: write tools are hidden and refused; commands run in a read-only jail",
	policy.ModeAsk:  "you approve every write and every command not on an allow list",
	policy.ModeEdit: "file edits in the workspace are approved; commands still ask",
	policy.ModeAuto: "calls that stay in the workspace jail are approved; deletions and anything outside the workspace or on the network still ask",
}

// View renders the live area: the answer streaming in, the running tools,
// an approval prompt or a picker, the queued messages, the input and the
// status line. Finished output is printed above it instead, so a frame's
// cost does not grow with the history.
func (m *Model) View() tea.View {
	var v tea.View
	if m.quitting {
		return v
	}
	// The printer waits while a frame is made, so that it knows the
	// height of every frame Bubble Tea may be showing (frameLog).
	m.frames.mu.Lock()
	defer m.frames.mu.Unlock()
	m.hold = m.frames.hold
	// The last gate: only brig's own styling (SGR) reaches the terminal;
	// foreign text was made inert where it was inserted.
	v.SetContent(termsafe.Styled(m.frameText()))
	m.hold = 0
	v.Cursor = parkedCursor
	m.frames.record(strings.Count(v.Content, "\n")+1, time.Now())
	return v
}

// liveRows is how many rows the live area may take: one fewer than the
// terminal has, so that it never starts in the screen's top row (see
// title), and at least one. A frame taller than the terminal floods the
// scrollback: Bubble Tea finds the top of the last frame by moving up from
// its bottom, and a top that has left the screen cannot be reached, so
// every repaint writes the whole frame again and scrolls a copy of it into
// the history. Everything in the live area fits in these rows; what the
// user needs (the input, the status line, the selected row of a menu or a
// picker, an approval's answers) goes first. While a block is printed
// above it, it leaves the rows the block needs (frameLog).
func (m *Model) liveRows() int { return max(min(m.height-1, m.height-m.hold), 1) }

// frameText is the live area as text, no taller than liveRows.
func (m *Model) frameText() string {
	rows := m.liveRows()
	status := m.statusLine()
	left := rows - 1 // under the status line
	if left == 0 {
		// One row: the input (or the selection) alone.
		left, status = 1, ""
	}
	var note string
	if m.status != "" && left >= 3 {
		// Wrapped over the rows it needs, up to three while two are left
		// for what it is about: a note cut at its width lost the key to
		// press (new user, 2026-12-03).
		rows := strings.Split(hang("", "", m.status, m.width), "\n")
		if n := max(min(3, left-2), 1); len(rows) > n {
			rows = rows[:n]
			rows[n-1] = fit(rows[n-1]+" …", m.width)
		}
		note = stWarn.Render(strings.Join(rows, "\n"))
		left -= len(rows)
	}
	var bottom []string
	switch {
	case m.approval != nil:
		bottom = append(bottom, m.approvalView(m.approval, left))
	case m.picker != nil:
		bottom = append(bottom, m.picker.view(m.width, left))
	default:
		in := m.inputView(left)
		left -= lipgloss.Height(in)
		var popup string
		if items := m.popupItems(); len(items) > 0 && left > 0 {
			popup = m.popupView(items, left)
			left -= lipgloss.Height(popup)
		}
		queued := append(slices.Clone(m.delivered), m.inbox.pending()...)       // taken but not yet printed, then waiting
		for _, q := range queued[len(queued)-min(max(left, 0), len(queued)):] { // the latest that fit
			bottom = append(bottom, stDim.Render(fit("queued › "+strings.ReplaceAll(inert(q), "\n", " ⏎ "), m.width)))
		}
		bottom = append(bottom, in)
		if popup != "" {
			bottom = append(bottom, popup)
		}
	}
	if status != "" {
		bottom = append(bottom, status)
	}
	if note != "" {
		bottom = append(bottom, note)
	}
	bottomText := strings.Join(bottom, "\n")
	if lipgloss.Height(bottomText) > rows { // the parts above keep to their rows; this is the backstop
		bottomText, _ = capLines(bottomText, rows)
	}
	room := rows - lipgloss.Height(bottomText)
	var top []string
	if t := strings.TrimSpace(m.thinking.String()); t != "" {
		kept, _ := capLines(wrap(inert(tailLines(t, 2)), m.width-len(thinkingIndent)), 2)
		top = append(top, thinkingBlock(kept))
	}
	if live := m.liveView(); live != "" {
		top = append(top, live)
	}
	for _, id := range m.order {
		top = append(top, m.runningView(m.tools[id]))
	}
	topText := strings.Join(top, "\n")
	if room <= 0 {
		topText = ""
	} else if lipgloss.Height(topText) > room {
		topText, _ = capLines(topText, room)
	}
	if topText == "" {
		return fitAll(bottomText, m.width)
	}
	return fitAll(topText+"\n"+bottomText, m.width)
}

func fitAll(s string, width int) string { return fit(s, width) }

// liveCache keeps the last render of the streaming text: a frame with no
// new text costs nothing.
type liveCache struct {
	src   string
	width int
	out   string
}

func (m *Model) liveView() string {
	src := m.live.String()
	if strings.TrimSpace(src) == "" {
		return ""
	}
	if m.liveC.src != src || m.liveC.width != m.width {
		m.liveC = liveCache{src: src, width: m.width, out: reflow(m.md.render(inert(src), m.width), m.width)}
	}
	return m.liveC.out
}

// asking reports whether the approval on screen is the question whether
// call id may run (not a running call's connection).
func (m *Model) asking(id string) bool {
	return m.approval != nil && m.approval.req.ToolUseID == id && m.approval.req.Net == nil
}

// runningView is a tool call in progress with the tail of its output.
func (m *Model) runningView(tv *toolView) string {
	spin := spinnerFrames[m.frame%len(spinnerFrames)]
	clock := m.now().Sub(tv.start).Round(time.Second).String()
	if m.asking(tv.ev.ID) {
		// The call has not started: its time is the user's, not its own
		// (the result's duration leaves the wait out too).
		clock = "waiting for your answer"
	}
	head := stAccent.Render(spin+" "+tv.ev.Name) + " " + toolTarget(tv.ev.Name, tv.ev.Args) + stDim.Render("  "+clock)
	out := fit(head, m.width)
	if tv.sub != nil {
		return out + "\n" + m.subagentView(tv.sub)
	}
	if tail, _ := capLines(inert(tailLines(string(tv.output), 4)), 4); tail != "" {
		for l := range strings.SplitSeq(tail, "\n") {
			out += "\n" + stDim.Render(fit("  │ "+l, m.width))
		}
	}
	return out
}

// statusLine is model · mode · context · cost · sandbox (· spinner).
func (m *Model) statusLine() string {
	var parts []string
	if m.busy && m.approval != nil {
		parts = append(parts, stAccent.Render("waiting for your answer"))
	} else if m.busy {
		parts = append(parts, stAccent.Render(spinnerFrames[m.frame%len(spinnerFrames)]+" working "+m.now().Sub(m.turnStart).Round(time.Second).String())+stDim.Render(" (Esc or Ctrl+C to interrupt)"))
	} else if m.starting {
		parts = append(parts, stDim.Render("starting…"))
	}
	if m.run != nil {
		parts = append(parts, m.run.Model.ID)
		ctx := fmt.Sprintf("ctx %s", tokens(m.lastInput))
		if w := m.run.Model.ContextWindow; w > 0 {
			ctx += fmt.Sprintf("/%s (%d%%)", tokens(w), m.lastInput*100/w)
		}
		parts = append(parts, ctx)
	} else if !m.starting {
		parts = append(parts, m.notStarted())
	}
	parts = append(parts, "mode "+string(m.modeOf()), fmt.Sprintf("$%.4f", m.sessCost))
	parts = append(parts, m.sandboxState())
	return fit(strings.Join(parts, stDim.Render(" · ")), m.width)
}

// sandboxState is the status line's word on the jail. It agrees with
// brig doctor: only a baseline guarantee that does not hold is a warning;
// an optional one does not change it.
func (m *Model) sandboxState() string {
	if m.sandbox == nil {
		return stDim.Render("jail …")
	}
	var missing, degraded int
	for _, g := range m.sandbox.Guarantees {
		switch {
		case !g.Baseline:
		case g.Status == doctor.Missing:
			missing++
		case g.Status == doctor.Degraded:
			degraded++
		}
	}
	switch {
	case missing > 0:
		return stErr.Render(fmt.Sprintf("jail: %d missing", missing))
	case degraded > 0:
		return stWarn.Render(fmt.Sprintf("jail: %d degraded", degraded))
	}
	return stOK.Render("jail ✓")
}

func tokens(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// title is the banner's first line, written before the live area is
// first drawn (Run): the live area then never starts in the screen's top
// row, where erasing it would make tmux scroll it into the history
// (scroll-on-clear).
func title() string {
	return stAccent.Render("brig") + stDim.Render(" — a coding agent whose every tool call runs in a kernel-enforced jail")
}

// bannerText is printed once the run is known, under the title: model,
// mode, workspace, what the sandbox guarantees here, the instruction
// files, and the keys.
func (m *Model) bannerText() string {
	var b strings.Builder
	row := func(label, value string) {
		b.WriteString(hang(fmt.Sprintf("  %-10s ", label), bannerIndent, value, m.width) + "\n")
	}
	switch {
	case m.run != nil:
		row("model", fmt.Sprintf("%s (%s)", inert(m.run.Model.ID), m.run.Provider))
		if note := m.run.Model.Note(); note != "" {
			b.WriteString(hang(bannerIndent, bannerIndent, stWarn.Render(inert(note)), m.width) + "\n")
		}
	case m.configError() != "":
		row("model", stErr.Render("not started: the configuration does not load"))
	case m.startErr != nil:
		var missing *credentials.MissingError
		if errors.As(m.startErr, &missing) {
			head, steps := keyHelp(missing)
			row("model", stWarn.Render("none: "+head))
			for _, l := range steps {
				b.WriteString(hang(bannerIndent, bannerIndent+"  ", l, m.width) + "\n")
			}
		} else {
			row("model", stErr.Render("not started: ")+inert(m.startErr.Error()))
			b.WriteString(hang(bannerIndent, bannerIndent, stDim.Render("once that is fixed, /model starts brig"), m.width) + "\n")
		}
	}
	if cerr := m.configError(); cerr != "" {
		row("config", stErr.Render(inert(cerr)))
		b.WriteString(hang(bannerIndent, bannerIndent, stDim.Render("fix the file, then pick a model with /model to start"), m.width) + "\n")
	}
	if m.run == nil && (m.startErr != nil || m.configError() != "") {
		b.WriteString(hang(bannerIndent, bannerIndent, stDim.Render("/help and /exit work now"), m.width) + "\n")
	}
	mode := m.modeOf()
	change := " (/mode to change)"
	if m.run != nil && m.run.ModeFromConfig {
		change = " ([agent] mode of your config; /mode to change)"
	}
	row("mode", string(mode)+stDim.Render(" — "+modeHelp[mode]+change))
	ws := m.cfg.Workspace
	if m.run != nil {
		ws = m.run.Policy.Places.Workspace
	}
	row("workspace", inert(ws))
	if m.run != nil && m.run.Resumed != nil {
		row("session", fmt.Sprintf("%s (resumed)", m.run.Session.ID()))
	}
	b.WriteString(m.sandboxBanner())
	if m.run != nil {
		for _, l := range m.run.Instructions {
			if strings.HasPrefix(l, "  ") {
				b.WriteString("  " + stWarn.Render(inert(strings.TrimSpace(l))) + "\n")
			} else {
				b.WriteString("  " + inert(l) + "\n")
			}
		}
		for _, w := range m.run.Policy.Warnings {
			b.WriteString("  " + stWarn.Render("config warning: ") + inert(w.String()) + "\n")
		}
		for _, w := range m.run.Policy.ProtectedRuleWarnings() {
			b.WriteString("  " + stWarn.Render("rule ignored: ") + inert(w) + "\n")
		}
		for _, tip := range m.run.Tips {
			b.WriteString("  " + stDim.Render("tip: ") + inert(tip) + "\n")
		}
		for _, l := range m.run.Policy.Layers {
			if l.Exists && !l.Trusted {
				b.WriteString("  " + stWarn.Render(fmt.Sprintf("%s is untrusted: %s (%d grant%s ignored; /permissions, brig trust)", inert(l.File), l.Applies(), len(l.Ignored), plural(len(l.Ignored)))) + "\n")
				if n := l.LimitsNote(); n != "" {
					b.WriteString("  " + stWarn.Render(inert(l.File)+" "+inert(n)) + "\n")
				}
			}
		}
	}
	b.WriteString(stDim.Render("  Enter send · Alt+Enter or Ctrl+J newline · Esc or Ctrl+C interrupt · /help · Ctrl+C twice to exit"))
	return b.String()
}

// sandboxBanner tells the truth about the jail on this machine, as brig
// doctor does: a baseline guarantee that does not hold is named in warning
// colours with why; an optional one that does not hold is named quietly.
func (m *Model) sandboxBanner() string {
	if m.sandbox == nil {
		return ""
	}
	r := m.sandbox
	var bad, optional []doctor.Guarantee
	baseline := 0
	for _, g := range r.Guarantees {
		if g.Baseline {
			baseline++
		}
		switch {
		case g.Status == doctor.Holds:
		case g.Baseline:
			bad = append(bad, g)
		default:
			optional = append(optional, g)
		}
	}
	var b strings.Builder
	row := func(label, value string) {
		b.WriteString(hang(fmt.Sprintf("  %-10s ", label), bannerIndent, value, m.width) + "\n")
	}
	details := stDim.Render(fmt.Sprintf(" (Landlock ABI %d, seccomp, %s; brig doctor for details)", r.LandlockABI, namespaces(r)))
	switch {
	case len(bad) == 0 && len(optional) == 0:
		row("sandbox", stOK.Render(fmt.Sprintf("all %d guarantees hold", len(r.Guarantees)))+details)
	case len(bad) == 0:
		row("sandbox", stOK.Render("every baseline guarantee holds")+details)
	case !r.OK:
		row("sandbox", stErr.Render(fmt.Sprintf("%d of %d baseline guarantees do not fully hold on this machine; tool calls that need a missing one are refused (brig doctor explains)", len(bad), baseline)))
	default:
		row("sandbox", stWarn.Render(fmt.Sprintf("%d of %d baseline guarantees hold only in part on this machine (brig doctor explains)", len(bad), baseline)))
	}
	for _, g := range bad {
		mark, st := "~", stWarn
		if g.Status == doctor.Missing {
			mark, st = "✗", stErr
		}
		b.WriteString(hang(bannerIndent+st.Render(mark+" "), bannerIndent+"  ", st.Render(g.Name), m.width) + "\n")
		b.WriteString(hang(bannerIndent+"  ", bannerIndent+"  ", stDim.Render(g.Why), m.width) + "\n")
	}
	for _, g := range optional {
		b.WriteString(hang(bannerIndent, bannerIndent, stDim.Render("optional, not on this machine: "+g.Name), m.width) + "\n")
	}
	return b.String()
}

func namespaces(r *doctor.Report) string {
	var ns []string
	for _, n := range []struct {
		on   bool
		name string
	}{{r.UserNS, "user"}, {r.MountNS, "mount"}, {r.PIDNS, "PID"}, {r.NetNS, "network"}} {
		if n.on {
			ns = append(ns, n.name)
		}
	}
	if len(ns) == 0 {
		return "no namespaces"
	}
	return strings.Join(ns, "/") + " namespaces"
}

// args is the union of the tools' argument fields the UI shows.
type args struct {
	Path        string `json:"path"`
	Command     string `json:"command"`
	Pattern     string `json:"pattern"`
	Source      string `json:"source"`
	Destination string `json:"destination"`
	URL         string `json:"url"`
	Content     string `json:"content"`
	Recursive   bool   `json:"recursive"`
	OldString   string `json:"old_string"`
	NewString   string `json:"new_string"`
	Edits       []struct {
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
	} `json:"edits"`
}

func parseArgs(raw json.RawMessage) args {
	var a args
	_ = json.Unmarshal(raw, &a) // a malformed call shows what it can
	return a
}

// toolTarget is what a call will touch, on one line.
func toolTarget(name string, raw json.RawMessage) string {
	return inert(asciiHostIn(raw, tools.Describe(name, raw)))
}

// toolDone is a finished call, compactly: a status line, then the diff of
// an edit or the tail of a command's output.
func (m *Model) toolDone(te agent.ToolEvent) string {
	o := te.Outcome
	if o == nil {
		return stDim.Render("● " + te.Name)
	}
	r := o.Result
	denied := (o.Verdict != nil && o.Verdict.Tier == policy.Deny) || (o.Approval != nil && o.Approval.Answer == agent.AnswerDeny)
	var mark string
	switch {
	case denied:
		mark = stWarn.Render("⊘ ")
	case r.IsError:
		mark = stErr.Render("✗ ")
	default:
		mark = stOK.Render("● ")
	}
	var facts []string
	if r.Meta.ExitCode != nil {
		facts = append(facts, fmt.Sprintf("exit %d", *r.Meta.ExitCode))
	}
	if r.Meta.TimedOut {
		facts = append(facts, "timed out")
	}
	if r.Meta.Added+r.Meta.Removed > 0 {
		facts = append(facts, fmt.Sprintf("+%d −%d", r.Meta.Added, r.Meta.Removed))
	}
	// How long the call took, without the time the user took to answer
	// its questions: an approval that waited a minute did not make the
	// command slow.
	if took := o.Duration - o.Waited; took >= 100*time.Millisecond {
		facts = append(facts, took.Round(100*time.Millisecond).String())
	}
	var tail string
	if len(facts) > 0 {
		tail = stDim.Render(" · " + strings.Join(facts, " · "))
	}
	lines := []string{m.toolHead(mark, te.Name, toolTarget(te.Name, te.Args), tail)}
	if !o.Changes.Empty() || o.Changes != nil && len(o.Changes.ExcludedChanged) > 0 {
		// What the call changed (/undo puts it back), on its own line so a
		// long command does not cut it off.
		lines = append(lines, stDim.Render(wrap("  ✎ "+inert(o.Changes.Summary()), m.width)))
	}
	if sum := tools.NetSummary(o.Net); sum != "" {
		// Its connections through brig's proxy, on a line of their own.
		lines = append(lines, stDim.Render(wrap("  ⇅ "+inert(sum), m.width)))
	}
	switch {
	case denied || (r.IsError && r.Meta.ExitCode == nil):
		lines = append(lines, hang(stDim.Render("  ⎿ "), "    ", inert(firstLine(r.Text)), m.width))
	case r.Meta.Diff != "":
		lines = append(lines, m.hl.renderDiff(r.Meta.Path, r.Meta.Diff, m.width, 40))
		if r.Meta.DiffTruncated {
			lines = append(lines, stDim.Render("     (the diff was cut by brig's cap)"))
		}
	case te.Name == string(tools.Bash):
		lines = append(lines, m.outputTail(inert(r.Text), outputRows)...)
	case te.Name == string(tools.UpdatePlan) && m.run != nil:
		lines = append(lines, stDim.Render(indent(strings.TrimRight(m.run.Executor.Plan().Checklist(), "\n"), "  ")))
	default:
		// The first line, with how many follow (a read's preview read
		// as the whole file).
		if l := agent.OneLine(inert(r.Text), 400); l != "" {
			lines = append(lines, stDim.Render(fit("  ⎿ "+l, m.width)))
		}
	}
	return strings.Join(lines, "\n")
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(s, "\n", "\n"+pre)
}

// bannerIndent lines a banner row's later rows up under its value.
const bannerIndent = "             "

// toolHead is a finished call's first line: its mark, name, target and
// facts, wrapped. A target too long for about three rows (a heredoc) is
// cut, with a marker; the facts always show.
func (m *Model) toolHead(mark, name, target, facts string) string {
	room := 3*(m.width-2) - ansi.StringWidth(name) - ansi.StringWidth(facts) - 1
	if ansi.StringWidth(target) > room {
		target = ansi.Truncate(target, max(room, 10), "…")
	}
	return hang(mark, "  ", stBold.Render(name)+" "+target+facts, m.width)
}

// outputRows is how many rows of a finished command's output the
// transcript shows (Ctrl+O prints all of it).
const outputRows = 10

// outputTail is the end of a command's output under a gutter: the last
// whole lines that fit in n rows, wrapped; when the last line alone is
// taller, its end. A note says what is left out.
func (m *Model) outputTail(text string, n int) []string {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	var rows []string
	i, cut := len(lines), false
	for i > 0 {
		r := strings.Split(hang("  │ ", "  │ ", lines[i-1], m.width), "\n")
		if len(rows)+len(r) > n {
			if len(rows) == 0 {
				rows, cut = r[len(r)-n:], true
				i--
			}
			break
		}
		rows = append(r, rows...)
		i--
	}
	var out []string
	// Ctrl+O reaches the last command only; /output N reaches this one
	// once others have finished.
	how := "Ctrl+O shows all of it, as the model got it"
	if n := m.outputBase + len(m.outputs); n > 0 {
		how += fmt.Sprintf("; later, /output %d", n)
	}
	switch {
	case cut:
		out = append(out, hang(stDim.Render("  ⎿ "), "    ", stDim.Render(fmt.Sprintf("… %d earlier lines and the start of this one (%s)", i, how)), m.width))
	case i > 0:
		out = append(out, hang(stDim.Render("  ⎿ "), "    ", stDim.Render(fmt.Sprintf("… %d earlier lines (%s)", i, how)), m.width))
	}
	if k := slices.IndexFunc(lines[:i], tools.IsCutNote); k >= 0 {
		// The output itself was cut before the model got it: the lines
		// counted above are its copy, so the cut is said too.
		out = append(out, hang(stDim.Render("  ⎿ "), "    ", stDim.Render(ansi.Truncate(lines[k], 3*(m.width-4), "…")), m.width))
	}
	for _, r := range rows {
		out = append(out, stDim.Render(r))
	}
	return out
}

// inputCount is the number of rows the input's value takes at a width,
// and the unlimited textarea that counted them (its layout cache kept).
type inputCount struct {
	value string
	width int
	rows  int
	all   *textarea.Model
}

// inputView is the input box, and under it, when it holds more rows than
// it shows and room has a row for it, how many are out of sight above and
// below. The box itself is kept to the terminal's height (inputMax).
func (m *Model) inputView(room int) string {
	view := m.input.View()
	if m.input.Height() < m.input.MaxHeight || m.input.Height() >= room {
		return view // all of it shows, or no row is left for the marker
	}
	v := m.input.Value()
	if c := &m.inRows; c.value != v || c.width != m.width {
		if c.all == nil {
			all := newInput(0) // lays the same text out with no height limit
			c.all = &all
		}
		c.all.SetWidth(m.width)
		c.all.SetValue(v)
		c.value, c.width, c.rows = v, m.width, c.all.Height()
	}
	above := m.input.ScrollYOffset()
	below := m.inRows.rows - above - m.input.Height()
	var parts []string
	if above > 0 {
		parts = append(parts, fmt.Sprintf("+%d lines above", above))
	}
	if below > 0 {
		parts = append(parts, fmt.Sprintf("+%d lines below", below))
	}
	if len(parts) == 0 {
		return view
	}
	return view + "\n" + stDim.Render("  ⋮ "+strings.Join(parts, " · ")+" (↑/↓ move through the input)")
}

package tui

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"brig/agent/provider"
	"brig/internal/session"
	"brig/policy"
)

// slashCommand is one command of the popup and /help.
type slashCommand struct {
	name, args, help string
}

var slashCommands = []slashCommand{
	{"mode", "[plan|ask|edit|auto]", "change the safety mode (told to the model; plan hides write tools)"},
	{"model", "[id]", "switch model (picker; a model with no key here, or of a provider this conversation cannot move to, is greyed out with the reason)"},
	{"resume", "[id]", "reopen a saved session of this workspace (picker)"},
	{"clear", "", "start a new session (the current one stays saved)"},
	{"compact", "", "summarise the conversation to free context"},
	{"output", "[N]", "print command N's whole output as the model got it (a folded output names its N; the last one without, as Ctrl+O)"},
	{"undo", "[--force] [--dry-run] [N]", "put back what the last call changed (N: call N and every later one; /changes lists them)"},
	{"changes", "", "the calls of this session that changed files, numbered for /undo N"},
	{"cost", "", "tokens and cost of this session and since brig started"},
	{"permissions", "", "the rules in effect and where each comes from"},
	{"plan", "", "the model's current plan checklist"},
	{"help", "", "commands and keys"},
	{"exit", "", "quit brig (also /quit)"},
}

// popupItems are the commands matching what is typed, while the input is
// a lone "/word".
func (m *Model) popupItems() []slashCommand {
	v := m.input.Value()
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \n") {
		return nil
	}
	word := strings.ToLower(v[1:])
	var prefix, inside []slashCommand
	for _, c := range slashCommands {
		switch {
		case strings.HasPrefix(c.name, word):
			prefix = append(prefix, c)
		case strings.Contains(c.name, word):
			inside = append(inside, c)
		}
	}
	return append(prefix, inside...)
}

// popupView is the popup in at most room rows: when the commands do not
// all fit, the ones around the selected one, with how many more there are
// above and below.
func (m *Model) popupView(items []slashCommand, room int) string {
	start, end, up, down := window(len(items), m.popupIdx, room)
	label := func(c slashCommand) string { return strings.TrimSpace(c.name + " " + c.args) }
	col := 0 // the descriptions start in one column, past the longest command shown
	for _, c := range items[start:end] {
		col = max(col, len(label(c)))
	}
	var rows []string
	if up {
		rows = append(rows, stDim.Render(fit(fmt.Sprintf("   ↑ %d more", start), m.width)))
	}
	for i := start; i < end; i++ {
		c := items[i]
		line := fmt.Sprintf("  /%-*s  %s", col, label(c), c.help)
		if i == m.popupIdx {
			rows = append(rows, stAccent.Render(fit("›"+line[1:], m.width)))
		} else {
			rows = append(rows, stDim.Render(fit(line, m.width)))
		}
	}
	if down {
		rows = append(rows, stDim.Render(fit(fmt.Sprintf("   ↓ %d more", len(items)-end), m.width)))
	}
	return strings.Join(rows, "\n")
}

// window chooses which of n rows of a list show in room rows, the
// selected one, sel, always among them: rows [start, end), and whether a
// row above and a row below say how many more there are (each takes one of
// the room's rows; with fewer than three there are none).
func window(n, sel, room int) (start, end int, up, down bool) {
	room = max(room, 1)
	if n <= room {
		return 0, n, false, false
	}
	sel = min(max(sel, 0), n-1)
	if room < 3 {
		start = min(max(sel-(room-1)/2, 0), n-room)
		return start, start + room, false, false
	}
	k := room - 2
	start = min(max(sel-k/2, 0), n-k)
	switch {
	case start == 0: // nothing above: its row shows one more below
		k++
	case start+k == n: // nothing below: one more above
		start--
		k++
	}
	return start, start + k, start > 0, start+k < n
}

// command runs a slash command.
func (m *Model) command(line string) tea.Cmd {
	name, arg, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "mode":
		if arg == "" {
			m.picker = m.modePicker()
			return nil
		}
		mode, err := policy.ParseMode(arg)
		if err != nil {
			m.print(stErr.Render("/mode: ") + inert(err.Error()))
			return nil
		}
		return m.setMode(mode)
	case "model":
		if arg == "" {
			m.picker = m.modelPicker()
			return nil
		}
		return m.switchModel(arg)
	case "resume":
		if !m.idle("/resume") {
			return nil
		}
		m.resumeWanted = arg
		return m.listSessions()
	case "clear":
		if !m.idle("/clear") {
			return nil
		}
		note := "── new session (the previous one stays saved; /resume reopens it) ──"
		if m.run != nil && m.run.Kept != nil && !m.run.Kept() {
			note = "── new session (nothing was said in the previous one: it is not kept) ──"
		}
		m.print(stDim.Render(note))
		m.lastInput = 0
		return m.restart(StartRequest{Model: m.current.Model, Mode: m.modeOf()})
	case "compact":
		return m.compact()
	case "undo":
		if !m.idle("/undo") {
			return nil
		}
		if m.run == nil || m.run.Undo == nil {
			m.print(stWarn.Render("/undo: no session is open"))
			return nil
		}
		undo, ctx := m.run.Undo, m.ctx
		return func() tea.Msg {
			text, err := undo(ctx, arg)
			return undoneMsg{text: text, err: err}
		}
	case "changes":
		if m.run == nil || m.run.Changes == nil {
			m.print(stWarn.Render("/changes: no session is open"))
			return nil
		}
		changes, ctx := m.run.Changes, m.ctx
		return func() tea.Msg {
			text, err := changes(ctx)
			return undoneMsg{text: text, err: err, cmd: "/changes"}
		}
	case "output":
		m.expandOutput(arg)
	case "cost":
		m.print(m.costText())
	case "permissions":
		m.print(m.permissionsText())
	case "plan":
		m.print(m.planText())
	case "help":
		m.print(m.helpText())
	case "exit", "quit", "q":
		m.quitting = true
		if m.cancel != nil {
			m.cancel()
		}
		return tea.Quit
	default:
		m.print(stWarn.Render("unknown command /"+inert(name)) + stDim.Render(" (/help lists them)"))
	}
	return nil
}

// setMode changes the mode: the run is reopened on the same session with
// the new mode, so the session records it and the system prompt tells the
// model (and the tools it advertises change).
func (m *Model) setMode(mode policy.Mode) tea.Cmd {
	if !m.idle("/mode") {
		return nil
	}
	m.print(stAccent.Render("mode "+string(mode)) + stDim.Render(" — "+modeHelp[mode]))
	if m.run == nil {
		m.cfg.Initial.Mode = mode
		return nil
	}
	if m.run.Policy.Mode() == mode {
		return nil
	}
	req := m.current
	req.Mode = mode
	return m.restart(req)
}

// switchModel reopens the session with another model.
func (m *Model) switchModel(id string) tea.Cmd {
	if !m.idle("/model") {
		return nil
	}
	if m.cfg.Usable != nil && (m.run == nil || m.run.Model.ID != id) {
		if err := m.cfg.Usable(id); err != nil {
			_, why := unusable(err)
			m.print(hang(stErr.Render("/model: "), "        ", inert(id)+": "+why, m.width))
			return nil
		}
	}
	if m.run == nil {
		m.print(stAccent.Render("model " + inert(id)))
		req := m.cfg.Initial
		req.Model = id
		return m.startCmd(req)
	}
	if m.run.Model.ID == id {
		return nil
	}
	if md, err := provider.Lookup(id, false); err == nil && md.Provider != m.run.Provider {
		if err := m.canCross(md.Provider); err != nil {
			m.print(stErr.Render("/model: ") + inert(err.Error()))
			return nil
		}
	}
	m.print(stAccent.Render("model " + id))
	req := m.current
	req.Model = id
	return m.restart(req)
}

// canCross says whether the conversation can move to another provider.
func (m *Model) canCross(target provider.Name) error {
	st := &session.State{Summary: session.Summary{ID: m.run.Session.ID(), Provider: m.run.Provider, Model: m.run.Model.ID}, Messages: m.run.Agent.History()}
	return session.CheckResume(st, target)
}

// sessionsListed opens the session picker, or resumes the id given.
func (m *Model) sessionsListed(msg sessionsMsg) tea.Cmd {
	startup := m.cfg.PickSession && !m.banner && m.run == nil && !m.starting
	want := m.resumeWanted
	m.resumeWanted = ""
	if msg.err != nil {
		m.print(stErr.Render("/resume: ") + inert(msg.err.Error()))
		if startup {
			return m.startCmd(StartRequest{Model: m.cfg.Initial.Model, Mode: m.cfg.Initial.Mode})
		}
		return nil
	}
	if want != "" {
		// The whole id, or its six hex digits, as brig -p prints them.
		var found []int
		for i, s := range msg.list {
			if s.ID == want || session.IsShortID(want) && strings.HasSuffix(s.ID, "-"+want) {
				found = append(found, i)
			}
		}
		switch {
		case len(found) == 1:
			return m.resume(msg.list[found[0]])
		case len(found) > 1:
			m.print(stErr.Render("/resume: ") + inert(want) + " names two sessions, " + msg.list[found[0]].ID + " and " + msg.list[found[1]].ID + ": give the whole id")
			return nil
		}
		m.print(stErr.Render("/resume: ") + "no session " + inert(want) + " in this workspace (brig sessions list)")
		return nil
	}
	p := &picker{title: "resume a session of this workspace", startup: startup}
	for _, s := range msg.list {
		it := pickItem{
			label: s.Title,
			// The id first: the one brig -p printed is found by it.
			detail: fmt.Sprintf("%s · %s · %s · %s · %d messages · $%.4f", s.ID, s.Updated.Local().Format(time.DateTime), s.Model, cmp.Or(s.Mode, policy.ModeAsk), s.Messages, s.Cost),
			value:  s.ID,
		}
		if it.label == "" {
			it.label = "(no prompt yet)"
		}
		if m.run != nil && s.ID == m.run.Session.ID() {
			if s.Messages == 0 {
				continue // the session just opened, with nothing in it (new user, 2026-12-03)
			}
			it.disabled, it.why = true, "open now"
		}
		p.items = append(p.items, it)
		p.summaries = append(p.summaries, s)
	}
	if len(p.items) == 0 {
		m.print(stDim.Render("no saved sessions in this workspace"))
		if startup {
			return m.startCmd(StartRequest{Model: m.cfg.Initial.Model, Mode: m.cfg.Initial.Mode})
		}
		return nil
	}
	p.onPick = func(i int) tea.Cmd { return m.resume(p.summaries[i]) }
	p.first()
	m.picker = p
	return nil
}

// resume reopens a saved session with its own model, and its own mode
// when that is no wider than the current one (a mode given with --mode, or
// picked before anything ran, is kept as with --resume ID).
func (m *Model) resume(s session.Summary) tea.Cmd {
	req := StartRequest{Resume: s.ID, Model: s.Model, Current: m.modeOf()}
	if m.cfg.Initial.Model != "" && m.run == nil {
		req.Model = m.cfg.Initial.Model
	}
	if m.cfg.Initial.Mode != "" && m.run == nil {
		req.Mode = m.cfg.Initial.Mode
	}
	if m.run == nil {
		m.prev = nil
		return m.startCmd(req)
	}
	return m.restart(req)
}

func (m *Model) modePicker() *picker {
	p := &picker{title: "mode"}
	cur := m.modeOf()
	for _, md := range []policy.Mode{policy.ModePlan, policy.ModeAsk, policy.ModeEdit, policy.ModeAuto} {
		it := pickItem{label: string(md), detail: modeHelp[md], value: string(md)}
		if md == cur {
			it.why = "current"
		}
		p.items = append(p.items, it)
	}
	p.onPick = func(i int) tea.Cmd { return m.setMode(policy.Mode(p.items[i].value)) }
	for i, it := range p.items {
		if it.value == string(cur) {
			p.idx = i
		}
	}
	return p
}

// modelPicker lists the known models. Greyed out, with the reason: those
// whose provider has no key here, and those of another provider when the
// conversation cannot move there.
func (m *Model) modelPicker() *picker {
	p := &picker{title: "model"}
	for _, md := range provider.Models() {
		it := pickItem{
			label:  md.ID,
			detail: fmt.Sprintf("%s · %s context · $%g/$%g per Mtok", md.Provider, tokens(md.ContextWindow), md.Price.Input, md.Price.Output),
			value:  md.ID,
		}
		if m.run != nil {
			switch {
			case md.ID == m.run.Model.ID:
				it.why = "current"
			case md.Provider != m.run.Provider && m.canCross(md.Provider) != nil:
				it.disabled, it.why = true, "another provider: this conversation holds "+string(m.run.Provider)+"-only blocks; /clear first"
			}
		}
		if it.why != "current" && m.cfg.Usable != nil {
			if err := m.cfg.Usable(md.ID); err != nil {
				short, long := unusable(err)
				it.disabled, it.why = true, short
				if !slices.Contains(p.notes, long) {
					p.notes = append(p.notes, long)
				}
			}
		}
		p.items = append(p.items, it)
	}
	// The model in use is selected. One the registry does not list (a
	// local or third-party server's) gets a row of its own, first.
	cur := ""
	switch {
	case m.run != nil:
		cur = m.run.Model.ID
		if !slices.ContainsFunc(p.items, func(it pickItem) bool { return it.value == cur }) {
			md := m.run.Model
			it := pickItem{label: md.ID, value: md.ID, why: "current",
				detail: fmt.Sprintf("%s · %s context · not in brig's registry", m.run.Provider, tokens(md.ContextWindow))}
			p.items = append([]pickItem{it}, p.items...)
		}
	default: // none open yet: the one asked for
		id := m.current.Model
		if id == "" {
			id = m.cfg.Initial.Model
		}
		if md, err := provider.Lookup(id, false); err == nil {
			cur = md.ID
		}
		// None asked for: the default brig would pick for the keys it
		// has, not the list's first (its dearest) model.
		for _, d := range provider.Defaults {
			if cur != "" {
				break
			}
			if slices.ContainsFunc(p.items, func(it pickItem) bool { return it.value == d.ID && !it.disabled }) {
				cur = d.ID
			}
		}
	}
	p.onPick = func(i int) tea.Cmd { return m.switchModel(p.items[i].value) }
	p.first()
	for i, it := range p.items {
		if cur != "" && it.value == cur && !it.disabled {
			p.idx = i
		}
	}
	return p
}

// pickItem is one row of a picker.
type pickItem struct {
	label, detail, value string
	disabled             bool
	why                  string
}

// picker is a modal list: ↑/↓ move (skipping greyed-out rows), Enter
// chooses, Esc cancels.
type picker struct {
	title     string
	items     []pickItem
	idx       int
	onPick    func(i int) tea.Cmd
	summaries []session.Summary
	startup   bool     // the --resume picker: Esc starts a new session
	notes     []string // why rows are greyed out, and the fix, under the list
}

func (p *picker) first() {
	for i, it := range p.items {
		if !it.disabled {
			p.idx = i
			return
		}
	}
}

func (p *picker) move(d int) {
	for i := p.idx + d; i >= 0 && i < len(p.items); i += d {
		if !p.items[i].disabled {
			p.idx = i
			return
		}
	}
}

// pickerRows is how many rows a picker shows at once.
const pickerRows = 10

// view is the picker in at most room rows. When all of it does not fit,
// the selected row shows first, then the title, the notes, and the rows
// around the selected one.
func (p *picker) view(width, room int) string {
	title := stAccent.Render(p.title) + stDim.Render("  ↑/↓ move · Enter choose · Esc cancel")
	var notes []string
	for _, n := range p.notes {
		notes = append(notes, strings.Split(hang(stDim.Render("  greyed out: "), "    ", stDim.Render(n), width), "\n")...)
	}
	start := max(0, min(p.idx-pickerRows/2, len(p.items)-pickerRows))
	end := min(len(p.items), start+pickerRows)
	up, down := start > 0, end < len(p.items)
	if full := 1 + b2i(up) + (end - start) + b2i(down) + len(notes); full > room {
		room = max(room, 1)
		var rows []string
		if room >= 2 {
			rows = append(rows, title)
			room--
		}
		list := min(len(p.items), pickerRows+2)
		keep := min(len(notes), max(room-min(list, 3), 0))
		start, end, up, down = window(len(p.items), p.idx, min(room-keep, list))
		return strings.Join(append(append(rows, p.rows(width, start, end, up, down)...), notes[:keep]...), "\n")
	}
	rows := append([]string{title}, p.rows(width, start, end, up, down)...)
	return strings.Join(append(rows, notes...), "\n")
}

// rows are the picker's rows start to end, under and over how many more
// there are when up and down say so.
func (p *picker) rows(width, start, end int, up, down bool) []string {
	var out []string
	if up {
		out = append(out, stDim.Render(fmt.Sprintf("   ↑ %d more", start)))
	}
	for i := start; i < end; i++ {
		it := p.items[i]
		mark := "  "
		if i == p.idx {
			mark = "› "
		}
		line := mark + inert(it.label)
		detail := "  " + it.detail
		if it.why != "" {
			detail += " (" + it.why + ")"
		}
		switch {
		case it.disabled:
			out = append(out, stDim.Render(fit(line+detail, width)))
		case i == p.idx:
			out = append(out, fit(stAccent.Render(line)+stDim.Render(detail), width))
		default:
			out = append(out, fit(line+stDim.Render(detail), width))
		}
	}
	if down {
		out = append(out, stDim.Render(fmt.Sprintf("   ↓ %d more", len(p.items)-end)))
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (m *Model) pickerKey(k string) tea.Cmd {
	p := m.picker
	switch k {
	case "up", "ctrl+p", "k":
		p.move(-1)
	case "down", "ctrl+n", "j":
		p.move(1)
	case "enter":
		if len(p.items) == 0 || p.items[p.idx].disabled {
			return nil
		}
		m.picker = nil
		return p.onPick(p.idx)
	case "esc", "q":
		m.picker = nil
		if p.startup {
			return m.startCmd(StartRequest{Model: m.cfg.Initial.Model, Mode: m.cfg.Initial.Mode})
		}
	}
	return nil
}

func (m *Model) costText() string {
	var b strings.Builder
	b.WriteString(stBold.Render("cost") + "\n")
	// Labelled by what each counts: after a /resume the session's total
	// (its earlier runs too) was above "since start" with nothing saying
	// why (new user, 2026-12-03).
	fmt.Fprintf(&b, "  this session   $%.4f (all its runs, earlier ones included)\n", m.sessCost)
	fmt.Fprintf(&b, "  since start    $%.4f (this brig, every session it opened) · %s in (%s cached read, %s cache write) / %s out tokens\n", m.spent,
		tokens(m.usage.Input), tokens(m.usage.CacheRead), tokens(m.usage.CacheWrite), tokens(m.usage.Output))
	if m.run != nil {
		md := m.run.Model
		if md.Known {
			fmt.Fprintf(&b, "  %s prices  $%g in · $%g out · $%g cache read · $%g cache write per million tokens\n", md.ID, md.Price.Input, md.Price.Output, md.Price.CacheRead, md.Price.CacheWrite)
		} else {
			fmt.Fprintf(&b, "  %s has no known price: its cost shows as $0\n", md.ID)
		}
		if md.ContextWindow > 0 {
			fmt.Fprintf(&b, "  context        %s of %s tokens used by the last request\n", tokens(m.lastInput), tokens(md.ContextWindow))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func (m *Model) permissionsText() string {
	if m.run == nil {
		return stWarn.Render("/permissions: ") + "no workspace policy is loaded (no model connected)"
	}
	pol := m.run.Policy
	var b strings.Builder
	b.WriteString(stBold.Render("permissions") + fmt.Sprintf(" · mode %s — %s\n", pol.Mode(), modeHelp[pol.Mode()]))
	b.WriteString("  rule files\n")
	saved := pol.SavedRules()
	for _, l := range pol.Layers {
		state := "missing"
		switch {
		case l.Exists && l.Trusted:
			state = "in effect"
		case l.Exists:
			state = stWarn.Render("untrusted: " + l.Applies() + " (brig trust to trust it)")
		case l.File == pol.Files.User && len(saved) > 0:
			state = "in effect (made by your \"always\" answers in this session)"
		}
		fmt.Fprintf(&b, "    %-10s %s  %s\n", l.Kind, inert(l.File), state)
		for _, ig := range l.Ignored {
			b.WriteString("      " + stWarn.Render("ignored: ") + inert(ig) + "\n")
		}
		if n := l.LimitsNote(); n != "" {
			b.WriteString("      " + stWarn.Render(inert(n)) + "\n")
		}
	}
	b.WriteString("  rules in effect (deny beats ask beats allow)\n")
	n := 0
	for _, t := range []struct {
		tier  policy.Tier
		rules []policy.Rule
	}{{policy.Deny, pol.Rules.Deny}, {policy.Ask, pol.Rules.Ask}, {policy.Allow, pol.Rules.Allow}} {
		for _, r := range t.rules {
			n++
			fmt.Fprintf(&b, "    %-5s %s  %s\n", t.tier, inert(r.String()), stDim.Render(inert(r.Source.String())))
		}
	}
	for _, r := range pol.SessionRules() {
		// "Always" also saves the rule to a file: listed once, there.
		same := func(f policy.Rule) bool { return f.String() == r.String() }
		switch {
		case slices.ContainsFunc(pol.Rules.Allow, same):
			continue
		case slices.ContainsFunc(saved, same):
			fmt.Fprintf(&b, "    %-5s %s  %s\n", policy.Allow, inert(r.String()), stDim.Render("saved to "+inert(pol.Files.User)+" by your answer"))
		default:
			fmt.Fprintf(&b, "    %-5s %s  %s\n", policy.Allow, inert(r.String()), stDim.Render("answered for this session"))
		}
		n++
	}
	if n == 0 {
		// Said only when no rule at all is listed: above an answer's
		// saved rule it read as a contradiction.
		b.WriteString(stDim.Render("    none") + "\n")
	}
	b.WriteString(stDim.Render("    plus brig's built-in command lists and protected paths; answers \"for this session\" last until brig exits or /clear or /resume opens another session; `brig policy check` explains one call") + "\n")
	for _, w := range pol.Warnings {
		b.WriteString("  " + stWarn.Render("warning: ") + inert(w.String()) + "\n")
	}
	for _, w := range pol.ProtectedRuleWarnings() {
		b.WriteString("  " + stWarn.Render("warning: ") + inert(w) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func (m *Model) planText() string {
	if m.run == nil {
		return stDim.Render("no plan: no model is connected")
	}
	p := m.run.Executor.Plan()
	if len(p.Steps) == 0 {
		return stDim.Render("no plan yet: the model has not called update_plan in this session")
	}
	var b strings.Builder
	b.WriteString(stBold.Render("plan") + "\n")
	if p.Explanation != "" {
		b.WriteString("  " + inert(p.Explanation) + "\n")
	}
	b.WriteString(indent(inert(strings.TrimRight(p.Checklist(), "\n")), "  "))
	return b.String()
}

func (m *Model) helpText() string {
	var b strings.Builder
	b.WriteString(stBold.Render("commands") + "\n")
	// The descriptions start past the longest command, so none runs into its
	// name (/undo [--force] [--dry-run] [N]).
	col := 27
	for _, c := range slashCommands {
		col = max(col, len("/"+strings.TrimSpace(c.name+" "+c.args))+1)
	}
	for _, c := range slashCommands {
		b.WriteString(m.twoColumns("/"+strings.TrimSpace(c.name+" "+c.args), c.help, col) + "\n")
	}
	b.WriteString(stBold.Render("keys") + "\n")
	for _, k := range [][2]string{
		{"Enter", "send (while the agent works: queue it for the next tool boundary)"},
		{"Alt+Enter, Ctrl+J", "new line"},
		{"Up / Down", "recall earlier input"},
		{"Esc", "interrupt the turn (everything under it stops); on a prompt: deny"},
		{"Ctrl+C", "interrupt the turn, as Esc does; when idle, clear the input"},
		{"Ctrl+C twice", "exit with a cost summary"},
		{"Ctrl+O", "show the whole output of the last command, as the model got it"},
		{"Tab", "complete a slash command"},
	} {
		b.WriteString(m.twoColumns(k[0], k[1], col) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// compactDoneMsg ends a /compact.
type compactDoneMsg struct {
	before, after int
	err           error
}

// compact summarises the older part of the conversation (the provider
// writes the summary), like a turn: Esc cancels it and nothing changes.
func (m *Model) compact() tea.Cmd {
	if !m.idle("/compact") {
		return nil
	}
	if m.run == nil {
		m.print(stWarn.Render("/compact: ") + "no session is open")
		return nil
	}
	ctx, cancel := context.WithCancel(m.ctx)
	m.cancel, m.busy, m.turnStart, m.frame, m.status = cancel, true, m.now(), 0, "compacting"
	a, b := m.run.Agent, m.bridge
	before := a.ContextUsed()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		err := a.Compact(ctx)
		b.ch <- compactDoneMsg{before: before, after: a.ContextUsed(), err: err}
	}()
	m.print(stDim.Render("compacting the conversation…"))
	return tick()
}

// compactDone reports a /compact.
func (m *Model) compactDone(msg compactDoneMsg) tea.Cmd {
	m.busy = false
	m.clearStatus()
	if m.cancel != nil {
		m.cancel()
		m.cancel = nil
	}
	if msg.err != nil {
		m.print(stWarn.Render("/compact: ") + inert(msg.err.Error()))
		return nil
	}
	m.lastInput = msg.after
	m.print(stDim.Render(fmt.Sprintf("compacted: about %d → %d tokens of context (the display history above is unchanged)", msg.before, msg.after)))
	return nil
}

// twoColumns is a row of a two-column list (a name kw wide, then what it
// does, wrapped under itself); on a narrow terminal the description goes
// under the name.
func (m *Model) twoColumns(name, desc string, kw int) string {
	if m.width >= kw+3+30 {
		return hang(fmt.Sprintf("  %-*s ", kw, name), strings.Repeat(" ", kw+3), desc, m.width)
	}
	return "  " + name + "\n" + hang("      ", "      ", desc, m.width)
}

// undoneMsg is the outcome of /undo, or of /changes (cmd).
type undoneMsg struct {
	text string
	err  error
	cmd  string // the command that failed, for its error ("": /undo)
}

package tui

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"brig/agent"
	"brig/internal/credentials"
	"brig/internal/doctor"
	"brig/jail"
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
	policy.ModeAuto: "everything is approved without asking; the jail still applies",
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
	v.SetContent(m.frameText())
	return v
}

// frameText is the live area as text.
func (m *Model) frameText() string {
	var bottom []string
	switch {
	case m.approval != nil:
		bottom = append(bottom, m.approvalView(m.approval.req))
	case m.picker != nil:
		bottom = append(bottom, m.picker.view(m.width))
	default:
		for _, q := range m.inbox.pending() {
			bottom = append(bottom, stDim.Render(fit("queued › "+strings.ReplaceAll(inert(q), "\n", " ⏎ "), m.width)))
		}
		bottom = append(bottom, m.input.View())
		if items := m.popupItems(); len(items) > 0 {
			bottom = append(bottom, m.popupView(items))
		}
	}
	bottom = append(bottom, m.statusLine())
	if m.status != "" {
		bottom = append(bottom, stWarn.Render(fit(m.status, m.width)))
	}
	bottomText := strings.Join(bottom, "\n")
	room := m.height - lipgloss.Height(bottomText) - 1
	var top []string
	if t := strings.TrimSpace(m.thinking.String()); t != "" {
		kept, _ := capLines(wrap(inert(t), m.width-2), 2)
		top = append(top, stDim.Italic(true).Render(kept))
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
		m.liveC = liveCache{src: src, width: m.width, out: m.md.render(inert(src), m.width)}
	}
	return m.liveC.out
}

// runningView is a tool call in progress with the tail of its output.
func (m *Model) runningView(tv *toolView) string {
	spin := spinnerFrames[m.frame%len(spinnerFrames)]
	head := stAccent.Render(spin+" "+tv.ev.Name) + " " + toolTarget(tv.ev.Name, tv.ev.Args) + stDim.Render(fmt.Sprintf("  %s", time.Since(tv.start).Round(time.Second)))
	out := fit(head, m.width)
	if tail, _ := capLines(inert(tv.output.String()), 4); tail != "" {
		for l := range strings.SplitSeq(tail, "\n") {
			out += "\n" + stDim.Render(fit("  │ "+l, m.width))
		}
	}
	return out
}

// statusLine is model · mode · context · cost · sandbox (· spinner).
func (m *Model) statusLine() string {
	var parts []string
	if m.busy {
		parts = append(parts, stAccent.Render(spinnerFrames[m.frame%len(spinnerFrames)]+" working "+time.Since(m.turnStart).Round(time.Second).String())+stDim.Render(" (Esc to interrupt)"))
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
	} else {
		parts = append(parts, stWarn.Render("no model"))
	}
	parts = append(parts, "mode "+string(m.modeOf()), fmt.Sprintf("$%.4f", m.sessCost))
	parts = append(parts, m.sandboxState())
	return fit(strings.Join(parts, stDim.Render(" · ")), m.width)
}

// sandboxState is the status line's word on the jail.
func (m *Model) sandboxState() string {
	if m.sandbox == nil {
		return stDim.Render("jail …")
	}
	var missing, degraded int
	for _, g := range m.sandbox.Guarantees {
		switch g.Status {
		case doctor.Missing:
			missing++
		case doctor.Degraded:
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

// bannerText is printed once at start: model, mode, workspace, what the
// sandbox guarantees here, the instruction files, and the keys.
func (m *Model) bannerText() string {
	var b strings.Builder
	b.WriteString(stAccent.Render("brig") + stDim.Render(" — a coding agent whose every tool call runs in a kernel-enforced jail") + "\n")
	row := func(label, value string) {
		fmt.Fprintf(&b, "  %-10s %s\n", label, value)
	}
	switch {
	case m.run != nil:
		row("model", fmt.Sprintf("%s (%s)", m.run.Model.ID, m.run.Provider))
	case m.startErr != nil:
		var missing *credentials.MissingError
		if errors.As(m.startErr, &missing) {
			row("model", stWarn.Render("none: ")+stWarn.Render(firstLine(missing.Error())))
			for _, l := range strings.Split(missing.Error(), "\n")[1:] {
				b.WriteString("             " + l + "\n")
			}
			b.WriteString("             " + stDim.Render("then restart brig or pick a model with /model; /help and /exit work now") + "\n")
		} else {
			row("model", stErr.Render("not connected: ")+inert(m.startErr.Error()))
		}
	}
	mode := m.modeOf()
	row("mode", string(mode)+stDim.Render(" — "+modeHelp[mode]+" (/mode to change)"))
	ws := m.cfg.Workspace
	if m.run != nil {
		ws = m.run.Policy.Places.Workspace
	}
	row("workspace", ws)
	if m.run != nil && m.run.Resumed != nil {
		row("session", fmt.Sprintf("%s (resumed)", m.run.Session.ID()))
	}
	b.WriteString(m.sandboxBanner())
	if m.run != nil {
		for _, l := range m.run.Instructions {
			if strings.HasPrefix(l, "  ") {
				b.WriteString("  " + stWarn.Render(strings.TrimSpace(l)) + "\n")
			} else {
				b.WriteString("  " + l + "\n")
			}
		}
		for _, w := range m.run.Policy.Warnings {
			b.WriteString("  " + stWarn.Render("config warning: ") + inert(w.String()) + "\n")
		}
		for _, w := range m.run.Policy.ProtectedRuleWarnings() {
			b.WriteString("  " + stWarn.Render("rule ignored: ") + w + "\n")
		}
		for _, l := range m.run.Policy.Layers {
			if l.Exists && !l.Trusted {
				b.WriteString("  " + stWarn.Render(fmt.Sprintf("%s is untrusted: only its deny and ask rules apply (%d grant(s) ignored; /permissions, brig trust)", l.File, len(l.Ignored))) + "\n")
			}
		}
	}
	b.WriteString(stDim.Render("  Enter send · Alt+Enter or Ctrl+J newline · Esc interrupt · /help · Ctrl+C twice to exit"))
	return b.String()
}

// sandboxBanner tells the truth about the jail on this machine: which
// guarantees do not hold, in warning colours.
func (m *Model) sandboxBanner() string {
	if m.sandbox == nil {
		return ""
	}
	r := m.sandbox
	var bad []doctor.Guarantee
	for _, g := range r.Guarantees {
		if g.Status != doctor.Holds {
			bad = append(bad, g)
		}
	}
	var b strings.Builder
	if len(bad) == 0 {
		fmt.Fprintf(&b, "  %-10s %s\n", "sandbox", stOK.Render(fmt.Sprintf("all %d guarantees hold", len(r.Guarantees)))+stDim.Render(fmt.Sprintf(" (Landlock ABI %d, seccomp, %s; brig doctor for details)", r.LandlockABI, namespaces(r))))
		return b.String()
	}
	head := fmt.Sprintf("%d of %d guarantees do not fully hold on this machine (brig doctor explains):", len(bad), len(r.Guarantees))
	if !r.OK {
		head = "a baseline guarantee is missing: tool calls will be refused. " + head
	}
	fmt.Fprintf(&b, "  %-10s %s\n", "sandbox", stWarn.Render(head))
	for _, g := range bad {
		mark, st := "~", stWarn
		if g.Status == doctor.Missing {
			mark, st = "✗", stErr
		}
		b.WriteString("             " + st.Render(mark+" "+g.Name) + "\n")
		b.WriteString(stDim.Render(indent(wrap(g.Why, max(m.width-16, 20)), "               ")) + "\n")
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
	a := parseArgs(raw)
	var s string
	switch {
	case name == string(tools.Bash):
		s = "$ " + strings.ReplaceAll(a.Command, "\n", " ⏎ ")
	case a.Source != "" || a.Destination != "":
		s = a.Source + " → " + a.Destination
	case a.URL != "":
		s = a.URL
	case a.Pattern != "" && a.Path != "":
		s = a.Pattern + " in " + a.Path
	case a.Pattern != "":
		s = a.Pattern
	case a.Path != "":
		s = a.Path
	case name == string(tools.UpdatePlan):
		s = "the plan"
	default:
		s = string(raw)
	}
	return inert(s)
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
	head := mark + stBold.Render(te.Name) + " " + toolTarget(te.Name, te.Args)
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
	if o.Duration >= 100*time.Millisecond {
		facts = append(facts, o.Duration.Round(100*time.Millisecond).String())
	}
	if len(facts) > 0 {
		head += stDim.Render(" · " + strings.Join(facts, " · "))
	}
	lines := []string{fit(head, m.width)}
	if !o.Changes.Empty() || o.Changes != nil && len(o.Changes.ExcludedChanged) > 0 {
		// What the call changed (/undo puts it back), on its own line so a
		// long command does not cut it off.
		lines = append(lines, stDim.Render(fit("  ✎ "+inert(o.Changes.Summary()), m.width)))
	}
	switch {
	case denied || (r.IsError && r.Meta.ExitCode == nil):
		lines = append(lines, stDim.Render("  ⎿ ")+wrap(inert(firstLine(r.Text)), m.width-4))
	case r.Meta.Diff != "":
		lines = append(lines, m.hl.renderDiff(r.Meta.Path, r.Meta.Diff, m.width, 40))
		if r.Meta.DiffTruncated {
			lines = append(lines, stDim.Render("     (the diff was cut by brig's cap)"))
		}
	case te.Name == string(tools.Bash):
		kept, dropped := capLines(inert(r.Text), 10)
		if dropped > 0 {
			lines = append(lines, stDim.Render(fmt.Sprintf("  ⎿ … %d earlier lines (Ctrl+O shows all of it, as the model got it)", dropped)))
		}
		for l := range strings.SplitSeq(kept, "\n") {
			if kept != "" {
				lines = append(lines, stDim.Render(fit("  │ "+l, m.width)))
			}
		}
	case te.Name == string(tools.UpdatePlan) && m.run != nil:
		lines = append(lines, stDim.Render(indent(strings.TrimRight(m.run.Executor.Plan().Checklist(), "\n"), "  ")))
	default:
		if l := firstLine(inert(r.Text)); l != "" {
			lines = append(lines, stDim.Render(fit("  ⎿ "+l, m.width)))
		}
	}
	return strings.Join(lines, "\n")
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(s, "\n", "\n"+pre)
}

// approvalView is the approval prompt: the exact command or edit, why it
// asks, the jail grant it would run under, and the answers.
func (m *Model) approvalView(req agent.ApprovalRequest) string {
	w := m.width
	var b strings.Builder
	b.WriteString(stWarn.Render("▲ approve "+req.Tool+"?") + stDim.Render(" — "+inert(req.Verdict.Reason)) + "\n")
	a := parseArgs(req.Args)
	switch {
	case req.Tool == string(tools.Bash):
		cmd, dropped := capLines(inert(a.Command), 8)
		b.WriteString(stBold.Render(indent(wrap(cmd, w-4), "  $ ")) + "\n")
		if dropped > 0 {
			b.WriteString(stDim.Render(fmt.Sprintf("    … %d more lines", dropped)) + "\n")
		}
	case a.OldString != "" || a.NewString != "" || len(a.Edits) > 0:
		b.WriteString("  " + inert(a.Path) + "\n")
		edits := a.Edits
		if len(edits) == 0 {
			edits = append(edits, struct {
				OldString string `json:"old_string"`
				NewString string `json:"new_string"`
			}{a.OldString, a.NewString})
		}
		var d strings.Builder
		for _, e := range edits {
			d.WriteString("@@ -1 +1 @@\n")
			for l := range strings.SplitSeq(strings.TrimSuffix(e.OldString, "\n"), "\n") {
				d.WriteString("-" + l + "\n")
			}
			for l := range strings.SplitSeq(strings.TrimSuffix(e.NewString, "\n"), "\n") {
				d.WriteString("+" + l + "\n")
			}
		}
		b.WriteString(m.hl.renderDiffPlain(a.Path, d.String(), w, 12) + "\n")
	case req.Tool == string(tools.WriteFile):
		content, dropped := capLines(inert(a.Content), 8)
		b.WriteString("  " + inert(a.Path) + stDim.Render(fmt.Sprintf(" (%d bytes)", len(a.Content))) + "\n")
		for l := range strings.SplitSeq(content, "\n") {
			b.WriteString("  " + m.hl.line(a.Path, fit(l, w-4), lipgloss.NewStyle()) + "\n")
		}
		if dropped > 0 {
			b.WriteString(stDim.Render(fmt.Sprintf("  … %d more lines", dropped)) + "\n")
		}
	default:
		b.WriteString("  " + fit(toolTarget(req.Tool, req.Args), w-2) + "\n")
	}
	for _, c := range req.Verdict.Commands {
		if c.Tier != policy.Allow {
			b.WriteString(stDim.Render(fit(fmt.Sprintf("  %s: %s — %s", c.Tier, inert(strings.Join(c.Words, " ")), c.Reason), w)) + "\n")
		}
	}
	b.WriteString(m.grantView(req.Grant))
	b.WriteString(stAccent.Render("  1") + " allow once  " + stAccent.Render("2") + " allow for this session  ")
	if len(req.Verdict.Always) > 0 {
		b.WriteString(stAccent.Render("3") + " always allow (saves " + strings.Join(req.Verdict.Always, ", ") + ")  ")
	} else {
		b.WriteString(stDim.Render("3 always allow: not offered for this call  "))
	}
	b.WriteString(stAccent.Render("4") + " deny  " + stAccent.Render("5") + " deny with a message  " + stDim.Render("Esc deny"))
	if m.denying {
		b.WriteString("\n" + m.denyInput.View())
	}
	return wrap(b.String(), w)
}

// grantView shows the jail a call would run under: what it may write,
// what it may read, the network.
func (m *Model) grantView(g *jail.Spec) string {
	if g == nil {
		return stDim.Render("  runs in brig itself (no jail, touches no files)") + "\n"
	}
	system := []string{"/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/opt", "/proc", "/dev", "/sys", "/run", "/var/lib", "/nix", "/snap"}
	isSystem := func(p string) bool {
		return slices.ContainsFunc(system, func(s string) bool { return p == s || strings.HasPrefix(p, s+"/") })
	}
	var write, read []string
	hidden := 0
	for _, r := range g.Paths {
		switch {
		case r.Access == jail.Write && !(r.Path == "/dev/null" || strings.HasPrefix(r.Path, "/dev/")):
			write = append(write, r.Path)
		case r.Access != jail.Write && !isSystem(r.Path):
			read = append(read, r.Path)
		default:
			hidden++
		}
	}
	var b strings.Builder
	b.WriteString(stBold.Render("  jail grant") + "\n")
	list := func(label string, ps []string) {
		if len(ps) == 0 {
			ps = []string{"nothing"}
		}
		b.WriteString(fit(fmt.Sprintf("    %-8s %s", label, strings.Join(ps, ", ")), m.width) + "\n")
	}
	list("write", write)
	list("read", read)
	net := "off"
	if g.Network {
		net = stWarn.Render("ON (host network)")
	}
	fmt.Fprintf(&b, "    %-8s %s", "network", net)
	if g.Limits.Timeout > 0 {
		fmt.Fprintf(&b, " · timeout %s", g.Limits.Timeout)
	}
	if len(g.Protected) > 0 {
		fmt.Fprintf(&b, " · %d protected paths stay read-only", len(g.Protected))
	}
	b.WriteString("\n")
	if hidden > 0 {
		b.WriteString(stDim.Render(fmt.Sprintf("    + read/exec on %d system and toolchain roots (/usr, /etc …)", hidden)) + "\n")
	}
	return b.String()
}

// renderDiffPlain shows a preview diff without line numbers (an edit not
// yet made has no line numbers brig could trust).
func (h *highlighter) renderDiffPlain(path, unified string, width, maxLines int) string {
	var b strings.Builder
	lines := parseUnified(unified)
	del := lipgloss.NewStyle().Background(colDelBg)
	add := lipgloss.NewStyle().Background(colAddBg)
	for i, dl := range lines {
		if i == maxLines {
			b.WriteString(stDim.Render(fmt.Sprintf("    … %d more lines", len(lines)-maxLines)) + "\n")
			break
		}
		if dl.op == '@' {
			b.WriteString(stDim.Render("    ⋮") + "\n")
			continue
		}
		bg := lipgloss.NewStyle()
		if dl.op == '-' {
			bg = del
		} else if dl.op == '+' {
			bg = add
		}
		code := fit(inert(dl.text), max(width-6, 10))
		b.WriteString("  " + bg.Render(string(dl.op)+" ") + h.line(path, code, bg) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

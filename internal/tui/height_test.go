package tui

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"brig/agent"
	"brig/agent/provider"
	"brig/jail"
	"brig/policy"
)

// A live area taller than the terminal floods the scrollback: Bubble Tea
// cannot move up to a top that has left the screen, so each repaint writes
// the frame again and scrolls a copy into the history (165 copies of the
// slash menu in three seconds at 80x12). These tests hold the live area to
// the terminal's height less a row, with what the user needs in sight.

// liveLines is the live area's rows, escapes stripped, trailing blanks cut.
func liveLines(h *harness) []string {
	var rows []string
	for l := range strings.SplitSeq(ansi.Strip(h.m.frameText()), "\n") {
		rows = append(rows, strings.TrimRight(l, " "))
	}
	return rows
}

// checkFits fails when the live area has more rows than liveRows (the
// terminal's height less one) or a row wider than the terminal.
func checkFits(t *testing.T, h *harness, width, height int) []string {
	t.Helper()
	rows := liveLines(h)
	if limit := max(height-1, 1); len(rows) > limit {
		t.Errorf("%dx%d: the live area has %d rows, more than the %d it may take:\n%s", width, height, len(rows), limit, strings.Join(rows, "\n"))
	}
	for _, l := range strings.Split(h.m.frameText(), "\n") {
		if w := ansi.StringWidth(l); w > max(width, 20) {
			t.Errorf("%dx%d: a row %d columns wide: %q", width, height, w, ansi.Strip(l))
		}
	}
	return rows
}

func hasRow(rows []string, pred func(string) bool) bool {
	for _, r := range rows {
		if pred(r) {
			return true
		}
	}
	return false
}

func isStatusRow(r string) bool { return strings.HasPrefix(r, "claude-sonnet-4-5 ·") }

// TestSlashMenuFitsAShortTerminal: at 12 and 8 rows the slash menu (eleven
// commands) keeps to the terminal, with the input line, the status line and
// the selected command in sight, wherever the selection is.
func TestSlashMenuFitsAShortTerminal(t *testing.T) {
	for _, height := range []int{12, 8} {
		for _, sel := range []int{0, 5, len(slashCommands) - 1} {
			t.Run(fmt.Sprintf("height %d selected %d", height, sel), func(t *testing.T) {
				h := newHarness(t, 80, colorprofile.NoTTY, allHold())
				h.start(h.conn(policy.ModeAsk, nil))
				h.send(tea.WindowSizeMsg{Width: 80, Height: height})
				h.typeText("/")
				for range sel {
					h.keys("down")
				}
				rows := checkFits(t, h, 80, height)
				if !hasRow(rows, func(r string) bool { return r == "› /" }) {
					t.Errorf("no input line:\n%s", strings.Join(rows, "\n"))
				}
				if !hasRow(rows, isStatusRow) {
					t.Errorf("no status line:\n%s", strings.Join(rows, "\n"))
				}
				want := "› /" + slashCommands[sel].name
				if !hasRow(rows, func(r string) bool { return strings.HasPrefix(r, want) }) {
					t.Errorf("the selected command %q is not shown:\n%s", want, strings.Join(rows, "\n"))
				}
				if !hasRow(rows, func(r string) bool { return strings.Contains(r, "more") }) {
					t.Errorf("no row says that more commands are out of sight:\n%s", strings.Join(rows, "\n"))
				}
			})
		}
	}
}

// TestModelPickerFitsAShortTerminal: the /model picker keeps to 12 and 8
// rows, its title, the selected model and the status line in sight.
func TestModelPickerFitsAShortTerminal(t *testing.T) {
	for _, height := range []int{12, 8} {
		for _, moves := range []int{0, 4, 30} {
			t.Run(fmt.Sprintf("height %d down %d", height, moves), func(t *testing.T) {
				h := newHarness(t, 80, colorprofile.NoTTY, allHold())
				hist := []provider.Message{
					{Role: provider.User, Content: []provider.Block{provider.Text("hi")}},
					{Role: provider.Assistant, Content: []provider.Block{{Type: provider.BlockThinking, Thinking: &provider.Thinking{Provider: provider.Anthropic, Text: "hm", Signature: "sig"}}, provider.Text("hello")}},
				}
				h.start(h.conn(policy.ModeAsk, thinkingClient{}, hist...))
				h.send(tea.WindowSizeMsg{Width: 80, Height: height})
				h.typeText("/model")
				h.keys("enter")
				if h.m.picker == nil {
					t.Fatal("no picker")
				}
				if len(h.m.picker.items) <= height {
					t.Fatalf("only %d models: the picker fits anyway, so the case proves nothing", len(h.m.picker.items))
				}
				for range moves {
					h.keys("down")
				}
				rows := checkFits(t, h, 80, height)
				if !hasRow(rows, func(r string) bool { return strings.HasPrefix(r, h.m.picker.title) }) {
					t.Errorf("no title:\n%s", strings.Join(rows, "\n"))
				}
				want := "› " + h.m.picker.items[h.m.picker.idx].label
				if !hasRow(rows, func(r string) bool { return strings.HasPrefix(r, want) }) {
					t.Errorf("the selected model %q is not shown:\n%s", want, strings.Join(rows, "\n"))
				}
				if !hasRow(rows, isStatusRow) {
					t.Errorf("no status line:\n%s", strings.Join(rows, "\n"))
				}
			})
		}
	}
}

// TestLiveAreaFitsEverySize: every kind of live area, at every size down
// to one row, keeps to the terminal and keeps what the user needs: the
// line of the input being typed, the selected row, an approval's answers;
// the status line from three rows up.
func TestLiveAreaFitsEverySize(t *testing.T) {
	for _, width := range []int{20, 30, 80} {
		for height := 1; height <= 14; height++ {
			h := newHarness(t, 80, colorprofile.NoTTY, allHold())
			h.start(h.conn(policy.ModeAsk, thinkingClient{}))
			h.send(tea.WindowSizeMsg{Width: width, Height: height})
			status := func(rows []string, what string) {
				t.Helper()
				if height >= 3 && !hasRow(rows, isStatusRow) {
					t.Errorf("%dx%d %s: no status line:\n%s", width, height, what, strings.Join(rows, "\n"))
				}
			}

			// A long input: the line being typed shows.
			for i := range 12 {
				if i > 0 {
					h.keys("ctrl+j")
				}
				h.typeText(fmt.Sprintf("line%02d", i))
			}
			rows := checkFits(t, h, width, height)
			if !hasRow(rows, func(r string) bool { return strings.Contains(r, "line11") }) {
				t.Errorf("%dx%d: the line being typed is not shown:\n%s", width, height, strings.Join(rows, "\n"))
			}
			status(rows, "long input")
			h.m.input.Reset()

			// The slash menu, the last command selected.
			h.typeText("/")
			h.keys("up")
			rows = checkFits(t, h, width, height)
			if !hasRow(rows, func(r string) bool { return strings.HasPrefix(r, "› /exit") }) && height >= 4 {
				t.Errorf("%dx%d: the selected command is not shown:\n%s", width, height, strings.Join(rows, "\n"))
			}
			if !hasRow(rows, func(r string) bool { return r == "› /" }) {
				t.Errorf("%dx%d: no input line:\n%s", width, height, strings.Join(rows, "\n"))
			}
			status(rows, "slash menu")
			h.m.input.Reset()

			// Queued messages and a note under the status line.
			h.m.busy = true
			for i := range 5 {
				h.typeText(fmt.Sprintf("queued %d", i))
				h.keys("enter")
			}
			h.m.status = "a note"
			checkFits(t, h, width, height)
			h.m.busy, h.m.status = false, ""
			go func() { <-h.m.bridge.ch }()
			h.m.inbox.drain()

			// The model picker, the last model selected.
			h.m.picker = h.m.modelPicker()
			for range 40 {
				h.keys("down")
			}
			rows = checkFits(t, h, width, height)
			sel := h.m.picker.items[h.m.picker.idx].label
			if !hasRow(rows, func(r string) bool { return strings.HasPrefix(r, "› "+sel[:min(len(sel), width-4)]) }) {
				t.Errorf("%dx%d: the selected model is not shown:\n%s", width, height, strings.Join(rows, "\n"))
			}
			status(rows, "model picker")
			h.m.picker = nil

			// An approval of a long command, folded and unfolded.
			req := bashRequest("/ws")
			req.Args = []byte(`{"command":"` + strings.Repeat("echo step && ", 40) + `true"}`)
			h.send(approvalMsg{&pending{req: req, reply: make(chan agent.Approval, 1)}})
			h.pause()
			for _, key := range []string{"", "v", "down"} {
				if key != "" {
					h.keys(key)
				}
				rows = checkFits(t, h, width, height)
				if !hasRow(rows, func(r string) bool { return strings.HasPrefix(r, "▲ approve bash?") }) {
					t.Errorf("%dx%d approval %q: the question is not shown:\n%s", width, height, key, strings.Join(rows, "\n"))
				}
				// From five rows, the answers and the start of what runs;
				// at four, no room for both: approving waits for a larger
				// window, and the prompt says so.
				if height >= 5 && !hasRow(rows, func(r string) bool { return strings.HasPrefix(r, "  1 allow once") || strings.HasPrefix(r, "  1 once") }) {
					t.Errorf("%dx%d approval %q: the answers are not shown:\n%s", width, height, key, strings.Join(rows, "\n"))
				}
				if height == 4 && !hasRow(rows, func(r string) bool { return strings.HasPrefix(r, "  enlarge to approv") }) {
					t.Errorf("%dx%d approval %q: no word that approving needs a larger window:\n%s", width, height, key, strings.Join(rows, "\n"))
				}
				status(rows, "approval")
			}
			h.pause()
			h.keys("5") // deny with a message: the message line shows
			rows = checkFits(t, h, width, height)
			if !hasRow(rows, func(r string) bool { return strings.HasPrefix(r, "message to the") }) {
				t.Errorf("%dx%d: the message being typed is not shown:\n%s", width, height, strings.Join(rows, "\n"))
			}
		}
	}
}

// pieces is how the printer cuts a block of lines (frameLog.take), each
// piece checked to be held free while it is printed.
func pieces(t *testing.T, f *frameLog, lines []string, now time.Time) [][]string {
	t.Helper()
	var out [][]string
	for len(lines) > 0 {
		n := f.take(&lines, now)
		if n < 1 || f.hold != n {
			t.Fatalf("a piece of %d lines holds %d rows", n, f.hold)
		}
		out = append(out, lines[:n])
		f.release()
		lines = lines[n:]
	}
	return out
}

// TestPrintedBlocksFitAboveTheLiveArea: a block printed above the live area
// goes in pieces no taller than the screen has rows above the live area
// (a taller one scrolls the live area into the scrollback and off the
// screen: /cost at 20x6 left no input or status line), counting every
// frame Bubble Tea may still be showing, and frames leave a piece's rows
// free while it is on its way.
func TestPrintedBlocksFitAboveTheLiveArea(t *testing.T) {
	now := time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)
	block := strings.Split(strings.TrimSuffix(strings.Repeat("cost line\n", 18), "\n"), "\n")

	f := &frameLog{}
	f.resize(20, 6)
	f.record(2, now)
	got := pieces(t, f, slices.Clone(block), now)
	total := 0
	for _, p := range got {
		if len(p) > 4 {
			t.Errorf("a piece of %d rows over a frame of 2 in 6 rows", len(p))
		}
		total += len(p)
	}
	if total != len(block) || len(got) != 5 {
		t.Errorf("%d lines in %d pieces, want %d in 5", total, len(got), len(block))
	}

	// A taller frame of a moment ago (the slash menu before Enter) may
	// still be on the screen: it counts; a second later it does not.
	f.record(5, now.Add(10*time.Millisecond))
	f.record(2, now.Add(20*time.Millisecond))
	if got := pieces(t, f, slices.Clone(block), now.Add(30*time.Millisecond)); len(got) != len(block) {
		t.Errorf("%d pieces while a 5-row frame may show in 6 rows, want one a line", len(got))
	}
	f.record(2, now.Add(time.Second))
	if got := pieces(t, f, slices.Clone(block), now.Add(time.Second)); len(got) != 5 {
		t.Errorf("%d pieces once the 5-row frame is gone, want 5", len(got))
	}

	// A line wider than the terminal is cut into rows of its width.
	f.resize(10, 6)
	got = pieces(t, f, []string{strings.Repeat("w", 25), "a", "b", "c", "d", "e"}, now.Add(time.Second))
	for _, p := range got {
		rows := 0
		for _, l := range p {
			if ansi.StringWidth(l) > 10 {
				t.Errorf("a row %d columns wide in 10", ansi.StringWidth(l))
			}
			rows++
		}
		if rows > 4 {
			t.Errorf("a piece of %d rows", rows)
		}
	}

	// While a piece is held, frames leave its rows free, keeping the input
	// and the status line; the frame's height is recorded.
	h := newHarness(t, 80, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	h.send(tea.WindowSizeMsg{Width: 80, Height: 12})
	h.typeText("/")
	h.m.frames.hold = 7
	v := h.m.View()
	rows := strings.Split(ansi.Strip(v.Content), "\n")
	if len(rows) > 5 || h.m.frames.last != len(rows) {
		t.Errorf("%d rows with 7 of 12 held (recorded %d):\n%s", len(rows), h.m.frames.last, strings.Join(rows, "\n"))
	}
	if !hasRow(rows, func(r string) bool { return strings.TrimRight(r, " ") == "› /" }) || !hasRow(rows, isStatusRow) {
		t.Errorf("no input or status line with 7 of 12 rows held:\n%s", strings.Join(rows, "\n"))
	}
}

// TestApprovalTooSmallToSeeWhatRuns: in a terminal too small to show any
// of what a call runs beside the answers, approving is refused, with the
// fix on the status line, and denying works; where the first row of the
// command fits beside the fewest answers, it is shown and approving works.
func TestApprovalTooSmallToSeeWhatRuns(t *testing.T) {
	for _, tc := range []struct {
		width, height int
		approves      bool
	}{
		{20, 4, false}, {80, 4, false}, {80, 3, false},
		{20, 5, true}, {20, 6, true}, {30, 6, true}, {80, 5, true}, {80, 24, true},
	} {
		t.Run(fmt.Sprintf("%dx%d", tc.width, tc.height), func(t *testing.T) {
			h := newHarness(t, tc.width, colorprofile.NoTTY, oneMissing())
			h.start(h.conn(policy.ModeAsk, nil))
			h.send(tea.WindowSizeMsg{Width: tc.width, Height: tc.height})
			p := &pending{req: bashRequest("/ws"), reply: make(chan agent.Approval, 1)}
			h.send(approvalMsg{p})
			h.pause()
			var rows []string
			if tc.approves {
				rows = checkFits(t, h, tc.width, tc.height)
				h.keys("1")
			} else {
				h.keys("1") // before any frame: the prompt is laid out to decide
				rows = checkFits(t, h, tc.width, tc.height)
			}
			shown := hasRow(rows, func(r string) bool { return strings.Contains(r, "$ go test") })
			select {
			case got := <-p.reply:
				if !tc.approves || !shown {
					t.Fatalf("approved (%+v) with the command in sight: %v\n%s", got, shown, strings.Join(rows, "\n"))
				}
				return
			default:
			}
			if tc.approves {
				t.Fatalf("not approved, though the command is in sight (%v):\n%s", shown, strings.Join(rows, "\n"))
			}
			if shown || !strings.Contains(h.m.status, "enlarge it to approve") {
				t.Errorf("refused: the command in sight %v, status %q", shown, h.m.status)
			}
			// Enlarged, the notice of the small window goes (new user,
			// 2026-12-02: it stayed under the full card).
			h.send(tea.WindowSizeMsg{Width: 120, Height: 40})
			if strings.Contains(h.m.status, "enlarge it to approve") {
				t.Errorf("after enlarging, the status still says %q", h.m.status)
			}
			h.pause()
			h.keys("4")
			if got := <-p.reply; got.Answer != agent.AnswerDeny {
				t.Fatalf("4 in a small terminal: %+v", got)
			}
		})
	}
}

// TestApprovalOfAWriteShowsItsPath: a write is approved only with the path
// it writes in sight, whatever the height; where the path and the start
// of the content do not both fit, approving waits for a larger window.
func TestApprovalOfAWriteShowsItsPath(t *testing.T) {
	approved := 0
	for height := 3; height <= 12; height++ {
		h := newHarness(t, 60, colorprofile.NoTTY, oneMissing())
		h.start(h.conn(policy.ModeAsk, nil))
		h.send(tea.WindowSizeMsg{Width: 60, Height: height})
		p := &pending{reply: make(chan agent.Approval, 1), req: agent.ApprovalRequest{
			ToolUseID: "t2", Tool: "write_file", Args: json.RawMessage(`{"path":"deploy/very-distinct-name.sh","content":"#!/bin/sh\ncurl https://example.com | sh\n"}`),
			Verdict: policy.Verdict{Tier: policy.Ask, Reason: "writes inside the workspace", Always: []string{"Write(./deploy/**)"}},
			Grant:   &jail.Spec{Workspace: h.ws, Dir: h.ws, Paths: []jail.PathRule{{Path: h.ws + "/deploy", Access: jail.Write}}, Limits: jail.Limits{Timeout: time.Minute}},
		}}
		h.send(approvalMsg{p})
		h.pause()
		rows := checkFits(t, h, 60, height)
		h.keys("1")
		path := hasRow(rows, func(r string) bool { return strings.Contains(r, "very-distinct-name.sh") })
		select {
		case <-p.reply:
			approved++
			if !path {
				t.Errorf("60x%d: approved without the path in sight:\n%s", height, strings.Join(rows, "\n"))
			}
		default:
			if path && hasRow(rows, func(r string) bool { return strings.Contains(r, "#!/bin/sh") }) {
				t.Errorf("60x%d: not approved with the path and the content in sight:\n%s", height, strings.Join(rows, "\n"))
			}
		}
	}
	if approved == 0 {
		t.Error("no height let the write be approved")
	}
}

// TestNoSizeIsTheUsualSize: a terminal that reports no size (0x0, as under
// script(1)) is laid out at 80x24, not wrapped at the 20-column floor.
func TestNoSizeIsTheUsualSize(t *testing.T) {
	h := newHarness(t, 100, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	h.send(tea.WindowSizeMsg{Width: 0, Height: 0})
	if h.m.width != 80 || h.m.height != 24 {
		t.Errorf("0x0 laid out at %dx%d, want 80x24", h.m.width, h.m.height)
	}
	checkFits(t, h, 80, 24)
	h.send(tea.WindowSizeMsg{Width: 10, Height: 3}) // the control: a real small size is kept
	if h.m.width != 20 || h.m.height != 3 {
		t.Errorf("10x3 laid out at %dx%d, want 20x3", h.m.width, h.m.height)
	}
}

// TestApprovalTooShortForTheRules: in a terminal too short for the whole
// question, the answers are shown in a word each, without the rules
// "session" and "always" would save, so 2 and 3 are not offered and do
// nothing (the status line says why): a rule from a folded line must not
// be saved unseen. Once the window is large enough, 3 saves the rule it
// shows.
func TestApprovalTooShortForTheRules(t *testing.T) {
	h := newHarness(t, 50, colorprofile.NoTTY, oneMissing())
	h.start(h.conn(policy.ModeAsk, nil))
	h.send(tea.WindowSizeMsg{Width: 50, Height: 8})
	lines := []string{"touch notes.md"}
	for i := range 30 {
		lines = append(lines, fmt.Sprintf("echo step %d", i))
	}
	lines = append(lines, "printf x > main.go")
	req := bashRequest("/ws")
	req.Args, _ = json.Marshal(map[string]string{"command": strings.Join(lines, "\n")})
	req.Verdict.Always = []string{"Bash(touch:*)", "Bash(printf:*)"}
	p := &pending{req: req, reply: make(chan agent.Approval, 1)}
	h.send(approvalMsg{p})
	h.pause()
	rows := checkFits(t, h, 50, 8)
	if hasRow(rows, func(r string) bool { return strings.Contains(r, "always") }) {
		t.Errorf("a short card offers 'always':\n%s", strings.Join(rows, "\n"))
	}
	h.keys("3")
	select {
	case got := <-p.reply:
		t.Fatalf("3 in a short terminal answered %+v", got)
	default:
	}
	if !strings.Contains(h.m.status, "too small to show the rule") {
		t.Errorf("status %q", h.m.status)
	}
	h.send(tea.WindowSizeMsg{Width: 100, Height: 60}) // the control
	h.pause()
	if f := h.m.frameText(); !strings.Contains(f, "Bash(printf:*)") {
		t.Fatalf("a large card does not show the rule:\n%s", f)
	}
	h.keys("3")
	if got := <-p.reply; got.Answer != agent.AnswerAlways {
		t.Fatalf("3 in a large terminal: %+v", got)
	}
}

// TestApprovalOfAnEditShowsAChangedRow (new user, 2026-12-03): at 24x12
// an edit's card showed its context rows alone, the change folded out of
// sight, and 1 applied it. An edit is approved only with its first
// changed row in sight; a taller window shows it and approves.
func TestApprovalOfAnEditShowsAChangedRow(t *testing.T) {
	approvedAt := 0
	for height := 8; height <= 30; height++ {
		h := newHarness(t, 24, colorprofile.NoTTY, oneMissing())
		h.start(h.conn(policy.ModeAsk, nil))
		writeWS(t, h.ws, "calc.py", "import os\nimport sys\n\n\ndef add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n")
		h.send(tea.WindowSizeMsg{Width: 24, Height: height})
		p := &pending{reply: make(chan agent.Approval, 1), req: agent.ApprovalRequest{
			ToolUseID: "t3", Tool: "edit_file", Args: json.RawMessage(`{"path":"calc.py","old_string":"def add(a, b):\n    return a - b","new_string":"def add(a, b):\n    return a + b"}`),
			Verdict: policy.Verdict{Tier: policy.Ask, Reason: "calc.py: writes inside the workspace", Always: []string{"Write(./calc.py)"}},
			Grant:   &jail.Spec{Workspace: h.ws, Dir: h.ws, Paths: []jail.PathRule{{Path: h.ws + "/calc.py", Access: jail.Write}}, Limits: jail.Limits{Timeout: time.Minute}},
		}}
		h.send(approvalMsg{p})
		h.pause()
		rows := checkFits(t, h, 24, height)
		h.keys("1")
		changed := hasRow(rows, func(r string) bool { return strings.Contains(r, "- ") && strings.Contains(r, "return a") })
		select {
		case <-p.reply:
			if !changed {
				t.Fatalf("%d rows: approved with no changed row in sight:\n%s", height, strings.Join(rows, "\n"))
			}
			if approvedAt == 0 {
				approvedAt = height
			}
		default:
			if !strings.Contains(h.m.status, "enlarge it to approve") {
				t.Errorf("%d rows: not approved, status %q", height, h.m.status)
			}
		}
	}
	if approvedAt == 0 {
		t.Fatal("no height up to 30 rows approved the edit (the test would prove nothing)")
	}
}

package tui

import (
	"brig/internal/render/engine"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"brig/agent"
	"brig/agent/provider"
	"brig/internal/credentials"
	"brig/internal/doctor"
	"brig/internal/render"
	"brig/internal/session"
	"brig/jail"
	"brig/policy"
	"brig/tools"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// golden compares got with testdata/name.golden (-update rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// harness is a Model driven by hand: messages in, printed lines and the
// live frame out.
type harness struct {
	t       *testing.T
	m       *Model
	printed []string
	ws      string
}

func allHold() doctor.Report {
	return doctor.Report{LandlockABI: 7, Seccomp: true, UserNS: true, MountNS: true, PIDNS: true, NetNS: true, OK: true, Guarantees: []doctor.Guarantee{
		{ID: "fs-confined", Name: "files outside the granted paths cannot be read or written", Status: doctor.Holds, Baseline: true},
		{ID: "network-off", Name: "no network unless the call is granted it", Status: doctor.Holds, Baseline: true},
		{ID: "tree-killed", Name: "no process outlives its call", Status: doctor.Holds, Baseline: true},
	}}
}

func oneMissing() doctor.Report {
	r := allHold()
	r.LandlockABI, r.OK = 0, false
	r.Guarantees[0].Status = doctor.Missing
	r.Guarantees[0].Why = "Landlock is not available: use a kernel >= 5.13 with landlock in the LSM list"
	r.Guarantees[2].Status = doctor.Degraded
	r.Guarantees[2].Why = "no PID namespace: a process group kill only"
	return r
}

// newHarness builds a model at width x 30 with the given sandbox report.
func newHarness(t *testing.T, width int, profile colorprofile.Profile, sandbox doctor.Report) *harness {
	t.Helper()
	h := &harness{t: t}
	h.m = New(context.Background(), Config{Workspace: "/home/dev/project", Profile: profile, Renderer: engine.New()})
	h.m.out = func(s string) { h.printed = append(h.printed, s) }
	// A stopped clock: a loaded machine cannot stretch the time between
	// two Ctrl+C past the window.
	stopped := time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)
	h.m.now = func() time.Time { return stopped }
	h.m.Update(tea.WindowSizeMsg{Width: width, Height: 30})
	h.m.Update(sandboxMsg(sandbox))
	return h
}

// conn builds a real policy, session and agent (with no provider behind
// it) in a temporary workspace.
func (h *harness) conn(mode policy.Mode, client provider.Client, history ...provider.Message) *Conn {
	t := h.t
	t.Helper()
	root := t.TempDir()
	h.ws = filepath.Join(root, "ws")
	if err := os.MkdirAll(h.ws, 0o755); err != nil {
		t.Fatal(err)
	}
	pol, err := policy.New(h.ws, policy.Loaded{}, mode, policy.Machine{Home: root, Limits: jail.DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	store := session.NewStore(filepath.Join(root, "state"))
	sess, err := store.Create(context.Background(), session.Header{Workspace: h.ws, Provider: provider.Anthropic, Model: "claude-sonnet-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	md, _ := provider.Lookup("claude-sonnet-4-5", false)
	ex := &agent.Executor{Registry: tools.NewRegistry(), Policy: pol, Approver: broker{h.m.bridge}}
	a := agent.New(agent.Config{Client: client, Model: md, Executor: ex, Emit: h.m.bridge.emit, Inbox: h.m.inbox.drain}, history)
	return &Conn{Agent: a, Executor: ex, Policy: pol, Session: sess, Model: md, Provider: provider.Anthropic,
		Instructions: []string{"instructions: AGENTS.md (1.2 KiB)", "  untrusted workspace: these are the repository author's words"}, Close: func() {}}
}

func (h *harness) start(c *Conn) {
	h.send(startedMsg{run: c})
}

// send delivers one message and runs the commands it returns that finish
// at once (prints, not ticks or the bridge).
func (h *harness) send(msg tea.Msg) tea.Cmd {
	_, cmd := h.m.Update(msg)
	if _, ok := msg.(approvalMsg); ok {
		// A question is on the screen for approvalShown before the
		// user's keys (which the tests send next) come.
		t := h.m.now().Add(approvalShown)
		h.m.now = func() time.Time { return t }
	}
	return cmd
}

// pause moves the stopped clock on past approvalArm: the keyboard has
// been quiet, so the next key answers a question rather than being typed.
func (h *harness) pause() {
	t := h.m.now().Add(approvalArm)
	h.m.now = func() time.Time { return t }
}

func (h *harness) keys(ks ...string) {
	for _, k := range ks {
		h.send(keyMsg(k))
	}
}

func (h *harness) typeText(s string) {
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "end":
		return tea.KeyPressMsg{Code: tea.KeyEnd}
	case "home":
		return tea.KeyPressMsg{Code: tea.KeyHome}
	case "pgup":
		return tea.KeyPressMsg{Code: tea.KeyPgUp}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "ctrl+j":
		return tea.KeyPressMsg{Code: 'j', Mod: tea.ModCtrl}
	case "alt+enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

// frame is what the terminal shows: the printed history, then the live
// area, escape sequences stripped, the workspace path made stable.
func (h *harness) frame() string {
	out := strings.Join(h.printed, "\n") + "\n─── live area ───\n" + ansi.Strip(h.m.frameText()) + "\n"
	if h.ws != "" {
		out = strings.ReplaceAll(out, h.ws, "<ws>")
	}
	var lines []string
	for l := range strings.SplitSeq(out, "\n") {
		lines = append(lines, strings.TrimRight(l, " "))
	}
	return strings.Join(lines, "\n")
}

func (h *harness) printedText() string { return strings.Join(h.printed, "\n") }

func TestBannerGolden(t *testing.T) {
	t.Run("provider", func(t *testing.T) {
		h := newHarness(t, 100, colorprofile.NoTTY, allHold())
		h.start(h.conn(policy.ModeAsk, nil))
		golden(t, "banner_provider", h.frame())
	})
	t.Run("no_provider", func(t *testing.T) {
		h := newHarness(t, 100, colorprofile.NoTTY, allHold())
		h.send(startedMsg{err: &credentials.MissingError{File: "/home/dev/.config/brig/credentials.toml"}})
		golden(t, "banner_no_provider", h.frame())
		// The fix is something to do from here: no command-line flags.
		if strings.Contains(h.printedText(), "--") {
			t.Errorf("the banner gives command-line flags as the fix:\n%s", h.printedText())
		}
		// /help and /exit still work; a prompt says how to connect.
		h.typeText("/help")
		h.keys("enter")
		if !strings.Contains(h.printedText(), "/permissions") {
			t.Errorf("/help printed nothing useful:\n%s", h.printedText())
		}
		h.typeText("hello")
		h.keys("enter")
		if !strings.Contains(h.printedText(), "not started: no model provider is configured (the banner above says how to add one)") {
			t.Errorf("a prompt without a provider was not explained:\n%s", h.printedText())
		}
		h.typeText("/exit")
		if cmd := h.send(keyMsg("enter")); cmd == nil || !isQuit(cmd) {
			t.Error("/exit did not quit")
		}
	})
	t.Run("missing_guarantee", func(t *testing.T) {
		h := newHarness(t, 100, colorprofile.NoTTY, oneMissing())
		h.start(h.conn(policy.ModePlan, nil))
		golden(t, "banner_missing_guarantee", h.frame())
	})
}

// TestBannerWarningColours: a baseline guarantee that does not hold is in
// warning colours (and NO_COLOR's profile drops the colour, not the words).
func TestBannerWarningColours(t *testing.T) {
	h := newHarness(t, 100, colorprofile.TrueColor, oneMissing())
	h.start(h.conn(policy.ModeAsk, nil))
	banner := h.printed[0]
	if !strings.Contains(banner, stErr.Render("✗ ")) || !strings.Contains(banner, stErr.Render(oneMissing().Guarantees[0].Name)) {
		t.Errorf("the missing guarantee is not in the error colour:\n%q", banner)
	}
	if !strings.Contains(h.m.statusLine(), stErr.Render("jail: 1 missing")) {
		t.Errorf("status line: %q", h.m.statusLine())
	}
	h2 := newHarness(t, 100, colorprofile.ASCII, oneMissing())
	h2.start(h2.conn(policy.ModeAsk, nil))
	if strings.Contains(h2.printed[0], "38;2;") || strings.Contains(h2.printed[0], "38;5;") {
		t.Errorf("colour escapes with the ASCII (NO_COLOR) profile:\n%q", h2.printed[0])
	}
	if !strings.Contains(ansi.Strip(h2.printed[0]), "✗ "+oneMissing().Guarantees[0].Name) {
		t.Error("the missing guarantee is not named without colour")
	}
}

// optionalMissing is a machine where every baseline guarantee holds and
// the optional Yama one does not (brig doctor: OK).
func optionalMissing() doctor.Report {
	r := allHold()
	r.Guarantees = append(r.Guarantees, doctor.Guarantee{ID: "ptrace-yama", Name: "Yama restricts ptrace between your own processes", Status: doctor.Missing,
		Why: "Yama is not enabled, so outside the jail any process of yours may ptrace another; inside, seccomp and Landlock refuse ptrace regardless"})
	return r
}

// TestBannerAgreesWithDoctor: where brig doctor says every baseline
// guarantee holds, the banner and the status line say so too, without a
// warning colour; the optional guarantee that does not hold is named, dim.
func TestBannerAgreesWithDoctor(t *testing.T) {
	h := newHarness(t, 100, colorprofile.TrueColor, optionalMissing())
	h.start(h.conn(policy.ModeAsk, nil))
	banner := h.m.sandboxBanner()
	for _, warn := range []string{colourSGR(colWarn), colourSGR(colErr)} {
		if strings.Contains(banner, warn) {
			t.Errorf("the banner's sandbox rows warn (%q):\n%q", warn, banner)
		}
	}
	if !strings.Contains(banner, stOK.Render("every baseline guarantee holds")) || !strings.Contains(banner, stDim.Render("optional, not on this machine: Yama restricts ptrace between your own processes")) {
		t.Errorf("banner:\n%q", banner)
	}
	if got := h.m.sandboxState(); got != stOK.Render("jail ✓") {
		t.Errorf("status line says %q", ansi.Strip(got))
	}
	h = newHarness(t, 80, colorprofile.NoTTY, optionalMissing())
	h.start(h.conn(policy.ModeAsk, nil))
	golden(t, "banner_optional_missing", h.frame())
}

// colourSGR is the escape a colour of the palette starts with.
func colourSGR(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("38;2;%d;%d;%d", r>>8, g>>8, b>>8)
}

func isQuit(cmd tea.Cmd) bool {
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

func bashRequest(ws string) agent.ApprovalRequest {
	return agent.ApprovalRequest{
		ToolUseID: "t1", Tool: "bash", Args: json.RawMessage(`{"command":"go test ./... && rm -rf build"}`),
		Verdict: policy.Verdict{Tier: policy.Ask, Reason: "rm is not on an allow list", Always: []string{"Bash(go test:*)"},
			Commands: []policy.CommandVerdict{{Words: []string{"go", "test", "./..."}, Tier: policy.Allow}, {Words: []string{"rm", "-rf", "build"}, Tier: policy.Ask, Reason: "deletes files"}}},
		Grant: &jail.Spec{Workspace: ws, Dir: ws, Paths: []jail.PathRule{
			{Path: ws, Access: jail.Write}, {Path: "/usr", Access: jail.Exec}, {Path: "/etc", Access: jail.Read}, {Path: "/dev/null", Access: jail.Write},
			{Path: "/root/go/pkg/mod", Access: jail.Read},
		}, Protected: []string{ws + "/.git/hooks", ws + "/.brig"}, Limits: jail.Limits{Timeout: 2 * time.Minute}},
	}
}

func TestApprovalGolden(t *testing.T) {
	h := newHarness(t, 100, colorprofile.NoTTY, allHold())
	c := h.conn(policy.ModeAsk, nil)
	h.start(c)
	h.printed = nil
	h.send(eventsMsg{{Kind: agent.EventToolStart, Tool: &agent.ToolEvent{ID: "t1", Name: "bash", Args: bashRequest(h.ws).Args}}})
	p := &pending{req: bashRequest(h.ws), reply: make(chan agent.Approval, 1)}
	h.send(approvalMsg{p})
	golden(t, "approval_bash", h.frame())
	// While the question waits, the turn is the user's, not brig's work
	// (new user, 2026-12-03: "working 8s" while nothing ran).
	h.m.busy = true
	if s := h.m.statusLine(); !strings.Contains(s, "waiting for your answer") || strings.Contains(s, "working") {
		t.Errorf("status while asking: %q", s)
	}
	h.pause()
	h.keys("4") // answered: the next question takes no one's place
	if s := h.m.statusLine(); !strings.Contains(s, "working") {
		t.Errorf("control: status after the answer: %q", s)
	}
	h.m.busy = false

	writeWS(t, h.ws, "main.go", "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n")
	edit := &pending{reply: make(chan agent.Approval, 1), req: agent.ApprovalRequest{
		ToolUseID: "t2", Tool: "edit_file", Args: json.RawMessage(`{"path":"main.go","old_string":"println(\"hello\")","new_string":"println(\"brig\")\nos.Exit(0)"}`),
		Verdict: policy.Verdict{Tier: policy.Ask, Reason: "main.go: writes inside the workspace", Always: []string{"Write(./main.go)"}},
		Grant:   &jail.Spec{Workspace: h.ws, Dir: h.ws, Paths: []jail.PathRule{{Path: h.ws + "/main.go", Access: jail.Write}}, Limits: jail.Limits{Timeout: time.Minute}},
	}}
	h.send(approvalMsg{edit})
	golden(t, "approval_edit", h.frame())
}

func TestApprovalAnswers(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys []string
		text string
		want agent.Approval
	}{
		{"once", []string{"1"}, "", agent.Approval{Answer: agent.AnswerOnce}},
		{"session", []string{"2"}, "", agent.Approval{Answer: agent.AnswerSession}},
		{"always", []string{"3"}, "", agent.Approval{Answer: agent.AnswerAlways}},
		{"deny", []string{"4"}, "", agent.Approval{Answer: agent.AnswerDeny}},
		{"esc denies", []string{"esc"}, "", agent.Approval{Answer: agent.AnswerDeny}},
		{"deny with a message", []string{"5"}, "use make instead", agent.Approval{Answer: agent.AnswerDeny, Message: "use make instead"}},
		{"first answer wins", []string{"1", "4"}, "", agent.Approval{Answer: agent.AnswerOnce}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 80, colorprofile.NoTTY, allHold())
			h.start(h.conn(policy.ModeAsk, nil))
			p := &pending{req: bashRequest("/ws"), reply: make(chan agent.Approval, 1)}
			h.send(approvalMsg{p})
			h.keys(tc.keys...)
			if tc.text != "" {
				h.typeText(tc.text)
				h.keys("enter")
			}
			select {
			case got := <-p.reply:
				if got != tc.want {
					t.Errorf("answer %+v, want %+v", got, tc.want)
				}
			default:
				t.Fatal("no answer")
			}
			if h.m.approval != nil {
				t.Error("the prompt stayed up after the answer")
			}
			// "session" names its rules as "always" does: "bash allowed
			// for this session" read as every command allowed.
			if rules := strings.Join(p.req.Verdict.Always, ", "); tc.want.Answer == agent.AnswerSession &&
				!strings.Contains(h.printedText(), "bash allowed for this session ("+rules+")") {
				t.Errorf("the session answer does not name its rules %s:\n%s", rules, h.printedText())
			}
		})
	}
}

// TestAlwaysNotOffered: no "always" for a call the policy will not save a
// rule for (interpreters); pressing 3 does not answer.
func TestAlwaysNotOffered(t *testing.T) {
	h := newHarness(t, 100, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	req := bashRequest("/ws")
	req.Verdict.Always = nil
	p := &pending{req: req, reply: make(chan agent.Approval, 1)}
	h.send(approvalMsg{p})
	if !strings.Contains(h.frame(), "no session or always answer") || strings.Contains(h.frame(), "3 always allow") {
		t.Errorf("the prompt does not say always is not offered:\n%s", h.frame())
	}
	h.keys("3", "2")
	select {
	case a := <-p.reply:
		t.Fatalf("3 answered %+v", a)
	default:
	}
}

func intp(i int) *int { return &i }

// A finished call's time on its line leaves out the time the user took to
// answer its questions.
func TestToolLineLeavesOutTheUsersTime(t *testing.T) {
	h := newHarness(t, 90, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	end := func(id, cmd string, took, waited time.Duration) agent.Event {
		a := json.RawMessage(`{"command":"` + cmd + `"}`)
		return agent.Event{Kind: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: id, Name: "bash", Args: a, Outcome: &agent.Outcome{
			Result: tools.Result{Text: "ok", Meta: tools.Meta{ExitCode: intp(0)}}, Duration: took, Waited: waited}}}
	}
	start := func(id, cmd string) agent.Event {
		return agent.Event{Kind: agent.EventToolStart, Tool: &agent.ToolEvent{ID: id, Name: "bash", Args: json.RawMessage(`{"command":"` + cmd + `"}`)}}
	}
	h.send(eventsMsg{
		start("b1", "make build"), end("b1", "make build", 5*time.Second, time.Second),
		start("b2", "python3 calc.py"), end("b2", "python3 calc.py", 3700*time.Millisecond, 3650*time.Millisecond),
		start("b3", "sleep 2"), end("b3", "sleep 2", 2*time.Second, 0),
	})
	lines := map[string]string{}
	for _, l := range strings.Split(h.frame()+"\n"+h.printedText(), "\n") {
		for _, c := range []string{"make build", "python3 calc.py", "sleep 2"} {
			if strings.Contains(l, "$ "+c) {
				lines[c] = l
			}
		}
	}
	if l := lines["make build"]; !strings.Contains(l, "· 4s") || strings.Contains(l, "5s") {
		t.Errorf("5 s with 1 s of them waiting for the user: %q", l)
	}
	if l := lines["python3 calc.py"]; !strings.HasSuffix(strings.TrimSpace(l), "· exit 0") {
		t.Errorf("50 ms of its own after 3.65 s of waiting shows no time: %q", l)
	}
	if l := lines["sleep 2"]; !strings.Contains(l, "· 2s") {
		t.Errorf("a call no one was asked about shows its whole time: %q", l)
	}
}

func TestDiffGolden(t *testing.T) {
	h := newHarness(t, 90, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeEdit, nil))
	h.printed = nil
	diff := "--- a/main.go\n+++ b/main.go\n@@ -1,5 +1,6 @@\n package main\n \n-func main() { println(\"hello\") }\n+func main() {\n+\tprintln(\"brig\")\n+}\n \n // end\n@@ -40,3 +41,3 @@\n func helper() {\n-\treturn 1\n+\treturn 2\n }\n"
	h.send(eventsMsg{
		{Kind: agent.EventToolStart, Tool: &agent.ToolEvent{ID: "e1", Name: "edit_file", Args: json.RawMessage(`{"path":"main.go"}`)}},
		{Kind: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: "e1", Name: "edit_file", Args: json.RawMessage(`{"path":"main.go"}`), Outcome: &agent.Outcome{
			Result: tools.Result{Text: "edited main.go", Meta: tools.Meta{Path: "main.go", Diff: diff, Added: 4, Removed: 2}}}}},
		{Kind: agent.EventToolStart, Tool: &agent.ToolEvent{ID: "b1", Name: "bash", Args: json.RawMessage(`{"command":"seq 1 30"}`)}},
		{Kind: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: "b1", Name: "bash", Args: json.RawMessage(`{"command":"seq 1 30"}`), Outcome: &agent.Outcome{
			Result: tools.Result{Text: seq(30), Meta: tools.Meta{ExitCode: intp(0)}}, Duration: 1500 * time.Millisecond}}},
		{Kind: agent.EventToolStart, Tool: &agent.ToolEvent{ID: "r1", Name: "read_file", Args: json.RawMessage(`{"path":"/root/.ssh/id_rsa"}`)}},
		{Kind: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: "r1", Name: "read_file", Args: json.RawMessage(`{"path":"/root/.ssh/id_rsa"}`), Outcome: &agent.Outcome{
			Verdict: &policy.Verdict{Tier: policy.Deny}, Result: tools.Result{IsError: true, Text: "denied by brig's policy: ~/.ssh is never readable"}}}},
	})
	golden(t, "tool_results", h.frame())

	// Ctrl+O prints the last command's whole result, earlier lines too.
	h.printed = nil
	h.send(tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl})
	out := h.printedText()
	if !strings.Contains(out, "output of $ seq 1 30") || strings.Count(out, "line") != 30 {
		t.Errorf("Ctrl+O printed:\n%s", out)
	}

	// Once another command has finished, /output 1 still prints the
	// first (Ctrl+O reached only the last: new user, 2026-12-03).
	h.send(eventsMsg{
		{Kind: agent.EventToolStart, Tool: &agent.ToolEvent{ID: "b2", Name: "bash", Args: json.RawMessage(`{"command":"echo two"}`)}},
		{Kind: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: "b2", Name: "bash", Args: json.RawMessage(`{"command":"echo two"}`), Outcome: &agent.Outcome{
			Result: tools.Result{Text: "two\n", Meta: tools.Meta{ExitCode: intp(0)}}}}},
	})
	for _, c := range []struct{ arg, want string }{
		{"1", "output of $ seq 1 30"},
		{"2", "output of $ echo two"},
		{"", "output of $ echo two"},
		{"3", "no command 3: 2 have finished"},
		{"x", "x is not a command's number"},
	} {
		h.printed = nil
		h.m.command("/output " + c.arg)
		if out := h.printedText(); !strings.Contains(out, c.want) {
			t.Errorf("/output %s printed:\n%s", c.arg, out)
		}
	}
}

func seq(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strings.Repeat("x", i%7) + "line\n")
	}
	return b.String()
}

// thinkingClient is a provider.Client stub that is never called; the
// pickers only read the history.
type thinkingClient struct{ provider.Client }

func TestPickersGolden(t *testing.T) {
	t.Run("model", func(t *testing.T) {
		h := newHarness(t, 110, colorprofile.NoTTY, allHold())
		// Anthropic reasoning in the history: OpenAI models are greyed out.
		hist := []provider.Message{
			{Role: provider.User, Content: []provider.Block{provider.Text("hi")}},
			{Role: provider.Assistant, Content: []provider.Block{{Type: provider.BlockThinking, Thinking: &provider.Thinking{Provider: provider.Anthropic, Text: "hm", Signature: "sig"}}, provider.Text("hello")}},
		}
		h.start(h.conn(policy.ModeAsk, thinkingClient{}, hist...))
		h.printed = nil
		h.typeText("/model")
		h.keys("enter")
		if h.m.picker == nil {
			t.Fatal("no picker")
		}
		h.keys("down", "down", "down", "down", "down", "down", "down", "down", "down", "down")
		// The cursor never lands on a greyed-out row.
		if it := h.m.picker.items[h.m.picker.idx]; it.disabled {
			t.Errorf("cursor on a disabled row %q", it.label)
		}
		golden(t, "picker_model", h.frame())
		h.keys("esc")
		if h.m.picker != nil {
			t.Error("Esc did not close the picker")
		}
	})
	t.Run("session", func(t *testing.T) {
		h := newHarness(t, 100, colorprofile.NoTTY, allHold())
		h.start(h.conn(policy.ModeAsk, nil))
		h.printed = nil
		when := time.Date(2026, 11, 20, 9, 30, 0, 0, time.Local)
		h.send(sessionsMsg{list: []session.Summary{
			{ID: "2026-11-20-aaaaaa", Title: "fix the flaky test in parser_test.go", Updated: when, Model: "claude-sonnet-4-5", Messages: 12, Cost: 0.1234},
			{ID: h.m.run.Session.ID(), Title: "", Updated: when, Model: "claude-sonnet-4-5"},
			{ID: "2026-11-19-bbbbbb", Title: "add a --json flag", Updated: when.Add(-24 * time.Hour), Model: "gpt-5", Messages: 4, Cost: 0.01},
		}})
		if h.m.picker == nil {
			t.Fatal("no picker")
		}
		out := strings.ReplaceAll(h.frame(), h.m.run.Session.ID(), "<current>")
		if strings.Contains(out, "<current>") || strings.Contains(out, "no prompt yet") {
			t.Errorf("the session just opened, empty, is offered:\n%s", out)
		}
		golden(t, "picker_session", out)
		h.keys("esc")
		// Control: once something was said in it, it is listed, not
		// offered.
		h.send(sessionsMsg{list: []session.Summary{
			{ID: h.m.run.Session.ID(), Title: "the one open", Updated: when, Model: "claude-sonnet-4-5", Messages: 2},
			{ID: "2026-11-19-bbbbbb", Title: "add a --json flag", Updated: when.Add(-24 * time.Hour), Model: "gpt-5", Messages: 4, Cost: 0.01},
		}})
		if f := h.frame(); !strings.Contains(f, "the one open") || strings.Contains(f, "› the one open") || !h.m.picker.items[0].disabled {
			t.Errorf("control: the open session with messages is not listed as open:\n%s", f)
		}
	})
}

// TestStreamedMarkdownAndANSI: the answer streams in, complete blocks are
// printed as they finish, and escape sequences from the model are shown,
// never sent.
func TestStreamedMarkdownAndANSI(t *testing.T) {
	h := newHarness(t, 80, colorprofile.TrueColor, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	h.printed = nil
	for _, d := range []string{"# Title\n\nSome **bold", "** text.\n\n", "```go\nfunc x() {}\n", "```\n\nevil \x1b[2J\x1b]0;pwned\x07 end"} {
		h.send(eventsMsg{{Kind: agent.EventText, Text: d}})
	}
	if n := len(h.printed); n != 3 {
		t.Errorf("%d blocks printed while streaming, want 3 (title, paragraph, code)", n)
	}
	live := h.m.frameText()
	if !strings.Contains(ansi.Strip(live), "evil") {
		t.Errorf("the unfinished paragraph is not live:\n%s", live)
	}
	h.send(turnDoneMsg{res: agent.TurnResult{Stop: agent.StopDone}})
	all := h.printedText() + live
	for _, raw := range []string{"\x1b[2J", "\x1b]0;", "\x07"} {
		if strings.Contains(all, raw) {
			t.Errorf("the model's %q reached the terminal", raw)
		}
	}
	if !strings.Contains(ansi.Strip(h.printedText()), "␛[2J") {
		t.Errorf("the escape is not shown inert:\n%s", ansi.Strip(h.printedText()))
	}
}

func TestPasteIsInert(t *testing.T) {
	h := newHarness(t, 80, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	h.send(tea.PasteMsg{Content: "ls\x1b[31m red\x07\r\nsecond\tline"})
	v := h.m.input.Value()
	if strings.ContainsAny(v, "\x1b\x07\r\t") {
		t.Errorf("control characters in the input: %q", v)
	}
	if !strings.Contains(v, "␛[31m") || !strings.Contains(v, "\nsecond") {
		t.Errorf("paste = %q", v)
	}
}

// TestNarrowTerminal: at 40 columns no line of the live area or of the
// printed history is wider than the terminal.
func TestNarrowTerminal(t *testing.T) {
	h := newHarness(t, 40, colorprofile.NoTTY, oneMissing())
	h.start(h.conn(policy.ModeAsk, nil))
	h.send(eventsMsg{{Kind: agent.EventToolStart, Tool: &agent.ToolEvent{ID: "t1", Name: "bash", Args: bashRequest("/ws").Args}}})
	h.send(approvalMsg{&pending{req: bashRequest("/a/rather/long/workspace/path"), reply: make(chan agent.Approval, 1)}})
	h.send(eventsMsg{{Kind: agent.EventText, Text: "A long paragraph of text that has to wrap at forty columns, with `code` in it.\n\n"}})
	for _, part := range []string{h.m.frameText()} {
		for l := range strings.SplitSeq(part, "\n") {
			if w := ansi.StringWidth(l); w > 40 {
				t.Errorf("live line %d columns wide: %q", w, ansi.Strip(l))
			}
		}
	}
	last := h.printed[len(h.printed)-1]
	for l := range strings.SplitSeq(last, "\n") {
		if w := ansi.StringWidth(l); w > 40 {
			t.Errorf("printed line %d columns wide: %q", w, l)
		}
	}
	// A resize re-wraps.
	h.send(tea.WindowSizeMsg{Width: 120, Height: 40})
	if h.m.width != 120 || h.m.input.Width() > 120 {
		t.Errorf("resize not applied: width %d, input %d", h.m.width, h.m.input.Width())
	}
}

func TestInputKeys(t *testing.T) {
	h := newHarness(t, 80, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	// Alt+Enter and Ctrl+J insert a newline; they do not send.
	h.typeText("one")
	h.keys("alt+enter")
	h.typeText("two")
	h.keys("ctrl+j")
	h.typeText("three")
	if got := h.m.input.Value(); got != "one\ntwo\nthree" {
		t.Fatalf("input %q", got)
	}
	// Up/Down recall history.
	h.m.input.Reset()
	h.m.remember("first")
	h.m.remember("second")
	h.typeText("draft")
	h.keys("up")
	if got := h.m.input.Value(); got != "second" {
		t.Errorf("up: %q", got)
	}
	h.keys("up")
	if got := h.m.input.Value(); got != "first" {
		t.Errorf("up up: %q", got)
	}
	h.keys("down", "down")
	if got := h.m.input.Value(); got != "draft" {
		t.Errorf("back down to the draft: %q", got)
	}
}

// TestHistoryPastSlashCommandsAndCtrlC (a new user, 2026-12-02): ↑ walks
// past a slash command in the history (whose menu took ↑ and ↓ over, so
// the message before it could not be reached), and what Ctrl+C cleared
// is in the history.
func TestHistoryPastSlashCommandsAndCtrlC(t *testing.T) {
	h := newHarness(t, 80, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	h.m.remember("please fix the tests in calc.go")
	h.m.remember("/cost")
	h.keys("up")
	if got := h.m.input.Value(); got != "/cost" {
		t.Fatalf("up: %q", got)
	}
	h.keys("up")
	if got := h.m.input.Value(); got != "please fix the tests in calc.go" {
		t.Errorf("up past a slash command: %q", got)
	}
	h.keys("down")
	if got := h.m.input.Value(); got != "/cost" {
		t.Errorf("down: %q", got)
	}
	// Control: a slash command being typed keeps the menu's ↑ and ↓.
	h.m.input.Reset()
	h.m.histIdx = len(h.m.history)
	h.typeText("/m")
	before := h.m.popupIdx
	h.keys("down")
	if h.m.popupIdx == before || h.m.input.Value() != "/m" {
		t.Errorf("down in the menu of a typed /m: index %d → %d, input %q", before, h.m.popupIdx, h.m.input.Value())
	}

	h.m.input.Reset()
	h.typeText("a long message")
	h.keys("ctrl+c")
	if h.m.input.Value() != "" || !strings.Contains(h.m.status, "↑ brings back") {
		t.Fatalf("Ctrl+C: input %q, status %q", h.m.input.Value(), h.m.status)
	}
	h.m.ctrlC = time.Time{} // not a second Ctrl+C
	h.keys("up")
	if got := h.m.input.Value(); got != "a long message" {
		t.Errorf("up after Ctrl+C: %q", got)
	}
}

func TestSlashPopup(t *testing.T) {
	h := newHarness(t, 80, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	h.typeText("/m")
	items := h.m.popupItems()
	if len(items) < 2 || items[0].name != "mode" || items[1].name != "model" {
		t.Fatalf("popup for /m: %+v", items)
	}
	if !strings.Contains(ansi.Strip(h.m.frameText()), "/mode") {
		t.Error("popup not drawn")
	}
	// The descriptions start in one column (new user, 2026-12-02: each
	// followed its own command).
	cols := map[int]bool{}
	for _, l := range strings.Split(ansi.Strip(h.m.popupView(items, 10)), "\n") {
		for _, help := range []string{"change the safety mode", "switch model"} {
			if i := strings.Index(l, help); i >= 0 {
				cols[utf8.RuneCountInString(l[:i])] = true
			}
		}
	}
	if len(cols) != 1 {
		t.Errorf("the popup's descriptions start in columns %v:\n%s", cols, ansi.Strip(h.m.popupView(items, 10)))
	}
	h.keys("down", "tab")
	if got := h.m.input.Value(); got != "/model " {
		t.Errorf("tab completed to %q", got)
	}
	h.m.input.Reset()
	h.printed = nil
	h.typeText("/comp")
	h.keys("enter")
	if !strings.Contains(h.printedText(), "compacting the conversation") {
		t.Errorf("/compact: %s", h.printedText())
	}
	h.printed = nil
	h.typeText("/permissions")
	h.keys("enter")
	if !strings.Contains(h.printedText(), "rule files") || !strings.Contains(h.printedText(), "rules in effect") {
		t.Errorf("/permissions: %s", h.printedText())
	}
	// An "always" answer is a session rule and a rule in a file: listed
	// once (a new user saw Bash(mkdir:*) twice). Control: a session-only
	// rule is listed as answered for this session.
	always, err := policy.ParseRule("Bash(mkdir:*)", policy.Source{File: "rules.toml"})
	if err != nil {
		t.Fatal(err)
	}
	session, err := policy.ParseRule("Bash(touch:*)", policy.Source{})
	if err != nil {
		t.Fatal(err)
	}
	pol := h.m.run.Policy
	if len(pol.Rules.Allow)+len(pol.Rules.Ask)+len(pol.Rules.Deny)+len(pol.SessionRules()) != 0 {
		t.Fatalf("the harness starts with rules: %+v", pol.Rules)
	}
	if text := ansi.Strip(h.m.permissionsText()); !strings.Contains(text, "    none\n") {
		t.Errorf("no rule at all is not said:\n%s", text)
	}
	pol.Rules.Allow = append(pol.Rules.Allow, always)
	pol.AllowForSession(always, session)
	text := h.m.permissionsText()
	if strings.Contains(ansi.Strip(text), "    none\n") {
		// A new user read "none from files" above a rule saved by an answer.
		t.Errorf("rules are listed under \"none\":\n%s", text)
	}
	if n := strings.Count(text, "Bash(mkdir:*)"); n != 1 {
		t.Errorf("an always rule is listed %d times:\n%s", n, text)
	}
	if !strings.Contains(text, "Bash(touch:*)") {
		t.Errorf("the session rule is not listed:\n%s", text)
	}
	// An "always" answer in this session is saved to the workspace's
	// rules file, which the loaded layers said was missing: the rule is
	// listed there and the file is in effect (new user, 2026-12-02: it
	// still said "missing" and "answered for this session").
	user := filepath.Join(t.TempDir(), "ws.toml")
	pol.Files.User = user
	pol.Layers = append(pol.Layers, policy.Layer{Kind: "workspace", File: user})
	if err := pol.Remember(context.Background(), true, "Bash(sort:*)"); err != nil {
		t.Fatal(err)
	}
	text = ansi.Strip(h.m.permissionsText())
	if !strings.Contains(text, "Bash(sort:*)  saved to "+user) || !strings.Contains(text, user+"  in effect") {
		t.Errorf("a rule saved in this session:\n%s", text)
	}
	h.printed = nil
	h.typeText("/plan")
	h.keys("enter")
	if !strings.Contains(h.printedText(), "no plan yet") {
		t.Errorf("/plan: %s", h.printedText())
	}
	h.printed = nil
	h.typeText("/nope")
	h.keys("enter")
	if !strings.Contains(h.printedText(), "unknown command /nope") {
		t.Errorf("unknown: %s", h.printedText())
	}
}

// TestQueuedAndCtrlC: Enter while the agent works queues the message; the
// inbox hands it to the agent once; Ctrl+C twice quits.
func TestQueuedAndCtrlC(t *testing.T) {
	h := newHarness(t, 80, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	h.m.busy = true
	h.typeText("also update the docs")
	h.keys("enter")
	if !strings.Contains(ansi.Strip(h.m.frameText()), "queued › also update the docs") {
		t.Errorf("queued message not shown:\n%s", ansi.Strip(h.m.frameText()))
	}
	go func() { <-h.m.bridge.ch }() // the delivery note
	blocks := h.m.inbox.drain()
	if len(blocks) != 1 || !strings.Contains(blocks[0].Text, "also update the docs") {
		t.Fatalf("inbox gave %+v", blocks)
	}
	if again := h.m.inbox.drain(); again != nil {
		t.Errorf("delivered twice: %+v", again)
	}
	h.send(keyMsg("ctrl+c"))
	if !h.m.ctrlC.After(time.Time{}) || h.m.status == "" {
		t.Fatal("the first Ctrl+C did not ask for a second")
	}
	cmd := h.send(keyMsg("ctrl+c"))
	if cmd == nil || !isQuit(cmd) {
		t.Fatal("the second Ctrl+C did not quit")
	}
}

// TestQueuedMessageFollowsTheResult: a message queued while a command
// runs is printed after that command's result, where it was sent. The
// agent takes the queue as soon as its calls return (the delivery reaches
// the UI first) and sends the calls' ends after it; the message showed
// above the result.
func TestQueuedMessageFollowsTheResult(t *testing.T) {
	h := newHarness(t, 80, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	h.m.busy = true
	h.printed = nil
	cmd := json.RawMessage(`{"command":"pytest -q"}`)
	h.send(eventsMsg{{Kind: agent.EventToolStart, Tool: &agent.ToolEvent{ID: "b1", Name: "bash", Args: cmd}}})
	h.typeText("then fix the failing test")
	h.keys("enter")
	go func() { <-h.m.bridge.ch }() // the delivery note, handed over below
	if blocks := h.m.inbox.drain(); len(blocks) != 1 {
		t.Fatalf("inbox gave %+v", blocks)
	}
	h.send(deliveredMsg{"then fix the failing test"})
	if live := ansi.Strip(h.m.frameText()); !strings.Contains(live, "queued › then fix the failing test") {
		t.Errorf("the message taken but not yet printed is not shown as queued:\n%s", live)
	}
	h.send(eventsMsg{{Kind: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: "b1", Name: "bash", Args: cmd, Outcome: &agent.Outcome{
		Result: tools.Result{Text: "1 failed, 1 passed\n[exit code 1]", IsError: true, Meta: tools.Meta{ExitCode: intp(1)}}}}}})
	out := ansi.Strip(h.printedText())
	result, queued := strings.Index(out, "✗ bash"), strings.Index(out, "then fix the failing test")
	if result < 0 || queued < 0 || queued < result {
		t.Fatalf("the queued message is not after the result it followed:\n%s", out)
	}
	if strings.Count(out, "then fix the failing test") != 1 || strings.Contains(ansi.Strip(h.m.frameText()), "queued ›") {
		t.Errorf("the message is printed twice or still shown as queued:\n%s\n%s", out, ansi.Strip(h.m.frameText()))
	}

	// With no call running, the delivery is printed at once.
	h.printed = nil
	h.send(deliveredMsg{"and the docs"})
	if !strings.Contains(ansi.Strip(h.printedText()), "(queued, sent at a tool boundary) and the docs") {
		t.Errorf("a delivery with no call running was not printed: %q", h.printedText())
	}
}

// TestCtrlCSurvivesTurnEnd: a turn that ends between the two presses keeps
// the prompt for the second (seen in CI: the answer's last words were on the
// screen before the turn's end arrived and wiped the status line).
func TestCtrlCSurvivesTurnEnd(t *testing.T) {
	h := newHarness(t, 80, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	h.m.busy = true
	h.send(keyMsg("ctrl+c"))
	h.send(turnDoneMsg{res: agent.TurnResult{Stop: agent.StopDone}})
	if !strings.Contains(ansi.Strip(h.m.frameText()), "press Ctrl+C again") {
		t.Fatalf("the end of the turn hid the Ctrl+C prompt:\n%s", ansi.Strip(h.m.frameText()))
	}
	if cmd := h.send(keyMsg("ctrl+c")); cmd == nil || !isQuit(cmd) {
		t.Fatal("the second Ctrl+C did not quit")
	}
}

func TestStartErrorIsShown(t *testing.T) {
	h := newHarness(t, 80, colorprofile.NoTTY, allHold())
	h.send(startedMsg{err: errors.New("session x belongs to /elsewhere")})
	if !strings.Contains(h.printedText(), "not started: session x belongs to /elsewhere") {
		t.Errorf("banner: %s", h.printedText())
	}
	if !strings.Contains(ansi.Strip(h.m.statusLine()), "not started (see above)") {
		t.Errorf("status line: %s", ansi.Strip(h.m.statusLine()))
	}
}

// TestCtrlCInterruptsTurn: the first Ctrl+C during a turn interrupts it,
// as Esc does, keeps what was typed and does not exit; a second one within
// the window exits. Idle, the first clears the input and asks for the
// second.
func TestCtrlCInterruptsTurn(t *testing.T) {
	h := newHarness(t, 80, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.m.busy, h.m.cancel = true, cancel
	h.typeText("next, the docs")
	h.send(keyMsg("ctrl+c"))
	if h.m.quitting {
		t.Fatal("the first Ctrl+C during a turn exited")
	}
	if ctx.Err() == nil {
		t.Fatal("the first Ctrl+C did not interrupt the turn")
	}
	if got := h.m.input.Value(); got != "next, the docs" {
		t.Errorf("the interrupt lost the input: %q", got)
	}
	if !strings.Contains(ansi.Strip(h.m.frameText()), "interrupting… press Ctrl+C again to exit") {
		t.Errorf("live area:\n%s", ansi.Strip(h.m.frameText()))
	}
	h.send(turnDoneMsg{res: agent.TurnResult{Stop: agent.StopInterrupted}})
	if !strings.Contains(h.printedText(), "⏹ interrupted") {
		t.Errorf("printed:\n%s", h.printedText())
	}
	if live := ansi.Strip(h.m.frameText()); !strings.Contains(live, "press Ctrl+C again to exit") || strings.Contains(live, "interrupting") {
		t.Errorf("after the turn ended, the status line says:\n%s", live)
	}
	if cmd := h.send(keyMsg("ctrl+c")); cmd == nil || !isQuit(cmd) {
		t.Fatal("the second Ctrl+C did not exit")
	}

	// Idle: the first clears the input and asks, the second exits.
	h = newHarness(t, 80, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	h.typeText("half a thought")
	h.send(keyMsg("ctrl+c"))
	if h.m.quitting {
		t.Fatal("the first Ctrl+C when idle exited")
	}
	if h.m.input.Value() != "" || !strings.Contains(ansi.Strip(h.m.frameText()), "press Ctrl+C again to exit") {
		t.Errorf("input %q, live area:\n%s", h.m.input.Value(), ansi.Strip(h.m.frameText()))
	}
	if cmd := h.send(keyMsg("ctrl+c")); cmd == nil || !isQuit(cmd) {
		t.Fatal("the second Ctrl+C did not exit")
	}
}

// startCounter is a renderer that counts its helper's starts.
type startCounter struct {
	render.Renderer
	starts atomic.Int32
}

func (s *startCounter) Start() error { s.starts.Add(1); return nil }

// runCmd runs cmd and the commands of the batches it returns, and returns
// the other messages they give.
func runCmd(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	switch msg := cmd().(type) {
	case nil:
		return nil
	case tea.BatchMsg:
		var out []tea.Msg
		for _, c := range msg {
			out = append(out, runCmd(c)...)
		}
		return out
	default:
		return []tea.Msg{msg}
	}
}

// TestBannerStartsTheRendererAndWarmsTheRun: the renderer's helper and
// the run's first calls (Conn.Warm: the jail's programs and children, the
// first snapshot) are started in the background by the command that comes
// with the banner — not before it, where they shared the cores with the
// first frame —, each once; a run that replaces it is warmed in its turn.
func TestBannerStartsTheRendererAndWarmsTheRun(t *testing.T) {
	r := &startCounter{Renderer: engine.New()}
	h := &harness{t: t}
	h.m = New(context.Background(), Config{Workspace: "/home/dev/project", Profile: colorprofile.TrueColor, Renderer: r})
	h.m.out = func(s string) { h.printed = append(h.printed, s) }
	runCmd(h.send(tea.WindowSizeMsg{Width: 100, Height: 30}))
	runCmd(h.send(sandboxMsg(allHold())))
	if r.starts.Load() != 0 || strings.Contains(strings.Join(h.printed, "\n"), "workspace") {
		t.Fatalf("before the run started: %d starts, printed %q", r.starts.Load(), h.printed)
	}
	var warms [2]atomic.Int32
	first := h.conn(policy.ModeAsk, nil)
	first.Warm = func() { warms[0].Add(1) }
	cmd := h.send(startedMsg{run: first})
	if !strings.Contains(strings.Join(h.printed, "\n"), "workspace") {
		t.Fatalf("no banner once the run started: %q", h.printed)
	}
	if r.starts.Load() != 0 || warms[0].Load() != 0 {
		t.Fatal("the renderer or the run was started inside Update, on the frame's path")
	}
	runCmd(cmd)
	if n, w := r.starts.Load(), warms[0].Load(); n != 1 || w != 1 {
		t.Fatalf("the banner's command started the renderer %d times and warmed the run %d times, want once each", n, w)
	}
	// A switch (/model, /resume …) brings a new run: warmed once, and the
	// renderer is not started again.
	second := h.conn(policy.ModeAsk, nil)
	second.Warm = func() { warms[1].Add(1) }
	runCmd(h.send(startedMsg{run: second}))
	runCmd(h.send(sandboxMsg(allHold())))
	if n, w0, w1 := r.starts.Load(), warms[0].Load(), warms[1].Load(); n != 1 || w0 != 1 || w1 != 1 {
		t.Fatalf("after a switch: renderer started %d times, runs warmed %d and %d times; want 1, 1, 1", n, w0, w1)
	}
}

// TestRunWarmedWhenTheBannerFollowsIt: when the sandbox report comes after
// the run, the banner — and the run's warm-up with it — waits for the
// report.
func TestRunWarmedWhenTheBannerFollowsIt(t *testing.T) {
	h := &harness{t: t}
	h.m = New(context.Background(), Config{Workspace: "/home/dev/project", Profile: colorprofile.TrueColor, Renderer: engine.New(),
		Sandbox: func(context.Context) doctor.Report { return allHold() }})
	h.m.out = func(s string) { h.printed = append(h.printed, s) }
	runCmd(h.send(tea.WindowSizeMsg{Width: 100, Height: 30}))
	var warms atomic.Int32
	c := h.conn(policy.ModeAsk, nil)
	c.Warm = func() { warms.Add(1) }
	runCmd(h.send(startedMsg{run: c}))
	if strings.Contains(strings.Join(h.printed, "\n"), "workspace") || warms.Load() != 0 {
		t.Fatalf("before the sandbox report: warmed %d times, printed %q", warms.Load(), h.printed)
	}
	runCmd(h.send(sandboxMsg(allHold())))
	if !strings.Contains(strings.Join(h.printed, "\n"), "workspace") || warms.Load() != 1 {
		t.Fatalf("after the sandbox report: warmed %d times (want 1), printed %q", warms.Load(), h.printed)
	}
}

// TestTypingAPromptOpensTheConnection: the first key of a prompt asks the
// run to open the provider's connection (Conn.Connect), from a command,
// not inside Update; the keys after it do not, and a prompt started again
// in an emptied input asks again, as does a paste or a recalled prompt.
func TestTypingAPromptOpensTheConnection(t *testing.T) {
	h := newHarness(t, 100, colorprofile.NoTTY, allHold())
	var connects atomic.Int32
	c := h.conn(policy.ModeAsk, nil)
	c.Connect = func() { connects.Add(1) }
	runCmd(h.send(startedMsg{run: c}))
	if n := connects.Load(); n != 0 {
		t.Fatalf("the run was asked to connect %d times before a key", n)
	}
	cmd := h.send(tea.KeyPressMsg{Code: 'f', Text: "f"})
	if n := connects.Load(); n != 0 {
		t.Fatal("the connection was opened inside Update, on the frame's path")
	}
	runCmd(cmd)
	for _, r := range "ix it" {
		runCmd(h.send(tea.KeyPressMsg{Code: r, Text: string(r)}))
	}
	if n := connects.Load(); n != 1 {
		t.Fatalf("typing a prompt asked to connect %d times, want once (its first key)", n)
	}
	for range "fix it" {
		runCmd(h.send(tea.KeyPressMsg{Code: tea.KeyBackspace}))
	}
	if v := h.m.input.Value(); v != "" {
		t.Fatalf("the input holds %q after erasing it", v)
	}
	runCmd(h.send(tea.KeyPressMsg{Code: 'x', Text: "x"}))
	if n := connects.Load(); n != 2 {
		t.Fatalf("a prompt begun again asked to connect %d times in all, want 2", n)
	}
	// A paste into the emptied input, and a prompt recalled from the
	// history, each start a prompt too.
	runCmd(h.send(tea.KeyPressMsg{Code: tea.KeyBackspace}))
	runCmd(h.send(tea.PasteMsg{Content: "pasted"}))
	if n := connects.Load(); n != 3 {
		t.Fatalf("a paste into an empty input asked to connect %d times in all, want 3", n)
	}
	h.m.input.Reset()
	h.m.remember("an earlier prompt")
	runCmd(h.send(keyMsg("up")))
	if v, n := h.m.input.Value(), connects.Load(); v != "an earlier prompt" || n != 4 {
		t.Fatalf("Up recalled %q and asked to connect %d times in all, want the earlier prompt and 4", v, n)
	}
}

// TestSwitchOfAnUnsavedSessionStartsANewOne: /mode or /model before
// anything was saved reopens no session — the one just closed was removed
// with nothing in it, and resuming it failed ("no such session", twice:
// the old run's stand-in too) and left brig not started —; once the
// session is kept, the same switch reopens it; /resume of another session
// is resumed either way.
func TestSwitchOfAnUnsavedSessionStartsANewOne(t *testing.T) {
	for _, kept := range []bool{false, true} {
		t.Run(fmt.Sprintf("kept=%v", kept), func(t *testing.T) {
			h := newHarness(t, 100, colorprofile.NoTTY, allHold())
			var asked []StartRequest
			fail := false
			h.m.cfg.Start = func(_ context.Context, req StartRequest, _ Hooks) (*Conn, error) {
				asked = append(asked, req)
				if fail {
					return nil, errors.New("cannot start")
				}
				mode := req.Mode
				if mode == "" {
					mode = policy.ModeAsk
				}
				c := h.conn(mode, nil)
				c.Kept = func() bool { return kept }
				return c, nil
			}
			first := h.conn(policy.ModeAsk, nil)
			first.Kept = func() bool { return kept }
			h.start(first)
			id := first.Session.ID()
			wantResume := ""
			if kept {
				wantResume = id
			}
			// switch types a command and delivers what its start brings.
			switchTo := func(cmd string) StartRequest {
				t.Helper()
				n := len(asked)
				h.typeText(cmd)
				for _, msg := range runCmd(h.send(keyMsg("enter"))) {
					h.send(msg)
				}
				if len(asked) <= n {
					t.Fatalf("%s started no run", cmd)
				}
				return asked[n]
			}
			if req := switchTo("/mode auto"); req.Resume != wantResume || req.Mode != policy.ModeAuto {
				t.Fatalf("/mode auto asked for %+v, want Resume %q and mode auto", req, wantResume)
			}
			if h.m.run == nil || h.m.modeOf() != policy.ModeAuto {
				t.Fatalf("after /mode auto: run %v, mode %s; printed:\n%s", h.m.run, h.m.modeOf(), h.printedText())
			}
			// The new run fails: its stand-in is the old one's request,
			// which reopens no removed session either.
			second := h.m.run.Session.ID()
			if kept {
				wantResume = second
			}
			fail = true
			n := len(asked)
			h.typeText("/model claude-opus-4-5")
			for _, msg := range runCmd(h.send(keyMsg("enter"))) {
				for _, again := range runCmd(h.send(msg)) { // the stand-in's start
					h.send(again)
				}
			}
			if len(asked) != n+2 {
				t.Fatalf("a failed /model asked for %d starts, want the switch and the stand-in: %+v", len(asked)-n, asked[n:])
			}
			if got := asked[n+1]; got.Resume != wantResume || got.Model != "" && got.Model == "claude-opus-4-5" {
				t.Fatalf("the stand-in asked for %+v, want Resume %q and the old model", got, wantResume)
			}
			fail = false
			// /resume names its session: asked for as it is.
			h.m.run = nil
			h.start(h.conn(policy.ModeAsk, nil))
			h.m.run.Kept = func() bool { return kept }
			h.m.prev = nil
			if cmd := h.m.resume(session.Summary{ID: "2026-11-01-abcdef", Model: "claude-sonnet-4-5"}); cmd != nil {
				runCmd(cmd)
			}
			if got := asked[len(asked)-1]; got.Resume != "2026-11-01-abcdef" {
				t.Fatalf("/resume asked for %+v, want that session", got)
			}
			// /clear says whether the session it leaves is kept.
			h.start(h.conn(policy.ModeAsk, nil))
			h.m.run.Kept = func() bool { return kept }
			h.typeText("/clear")
			runCmd(h.send(keyMsg("enter")))
			said := h.printed[len(h.printed)-1]
			if strings.Contains(said, "stays saved") != kept || strings.Contains(said, "not kept") == kept {
				t.Fatalf("/clear said %q of a session kept=%v", said, kept)
			}
		})
	}
}

// TestHelpColumnsDoNotRunTogether: /help's descriptions start past the
// longest command, so none runs into its name.
func TestHelpColumnsDoNotRunTogether(t *testing.T) {
	h := newHarness(t, 100, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	h.typeText("/help")
	h.keys("enter")
	out := ansi.Strip(h.printedText())
	if !strings.Contains(out, "/undo [--force] [--dry-run] [N]  put back") || !strings.Contains(out, "/help                            commands and keys") {
		t.Errorf("/help's columns:\n%s", out)
	}
}

// TestExitLineNamesOnlyAKeptSession (new user, 2026-12-02): the exit
// line's "resume with" named a session nothing was said in (removed as
// brig exits) and, after /clear, the new empty one. It names the run's
// session when it is kept, else the last kept one the run replaced, else
// none.
func TestExitLineNamesOnlyAKeptSession(t *testing.T) {
	h := newHarness(t, 100, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	h.m.run.Kept = func() bool { return false }
	if s := h.m.summary(); s.Session != "" || strings.Contains(s.String(), "resume with") {
		t.Errorf("a session never used: %q", s.String())
	}
	h.m.run.Kept = func() bool { return true }
	used := h.m.run.Session.ID()
	if s := h.m.summary(); s.Session != used || !strings.Contains(s.String(), "resume with: brig --resume "+used) {
		t.Errorf("a kept session: %q, want %s", s.String(), used)
	}
	// /clear: the next run's session is empty; the hint is the one left.
	h.typeText("/clear")
	for _, msg := range runCmd(h.send(keyMsg("enter"))) {
		h.send(msg)
	}
	h.start(h.conn(policy.ModeAsk, nil))
	h.m.run.Kept = func() bool { return false }
	if h.m.run.Session.ID() == used {
		t.Fatal("the run after /clear has the same session")
	}
	if s := h.m.summary(); s.Session != used {
		t.Errorf("after /clear: %q, want the session left (%s)", s.String(), used)
	}
}

// TestStartupPickerBannerShowsThePickedSessionsMode (new user,
// 2026-12-02): with --resume and no id, the sandbox report came before
// the session list and the banner was printed then, with the default
// mode (ask), though the session picked ran in auto. The banner waits
// for the run the pick starts.
func TestStartupPickerBannerShowsThePickedSessionsMode(t *testing.T) {
	h := &harness{t: t}
	h.m = New(context.Background(), Config{Workspace: "/home/dev/project", Profile: colorprofile.NoTTY, Renderer: engine.New(), PickSession: true})
	h.m.out = func(s string) { h.printed = append(h.printed, s) }
	h.m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	h.m.Update(sandboxMsg(allHold()))
	if strings.Contains(ansi.Strip(h.printedText()), "mode") {
		t.Fatalf("the banner was printed before a session was picked:\n%s", ansi.Strip(h.printedText()))
	}
	h.send(sessionsMsg{list: []session.Summary{{ID: "2026-11-20-aaaaaa", Title: "fix it", Model: "claude-sonnet-4-5", Messages: 2}}})
	if h.m.picker == nil {
		t.Fatal("no picker")
	}
	h.send(keyMsg("enter")) // picks: the run starts in the session's mode
	h.start(h.conn(policy.ModeAuto, nil))
	out := ansi.Strip(h.printedText())
	var modes []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "mode" {
			modes = append(modes, f[1])
		}
	}
	if !slices.Equal(modes, []string{"auto"}) {
		t.Errorf("the banner's mode rows %v, want [auto]:\n%s", modes, out)
	}
}

// TestOutputTailSaysTheOutputWasCut (new user, 2026-12-03): the rows
// shown under a command whose output brig cut before the model got it say
// so (the count of earlier lines is of the model's copy); the control: a
// long output that was not cut shows only the count.
func TestOutputTailSaysTheOutputWasCut(t *testing.T) {
	h := newHarness(t, 90, colorprofile.NoTTY, allHold())
	cut := tools.CommandResult(jail.Result{Transcript: jail.Transcript{
		Head: []jail.Chunk{{Data: []byte(seq(40))}}, Tail: []jail.Chunk{{Data: []byte(seq(20))}},
		Omitted: 2 << 20, OmittedLines: 197201, Stdout: 2<<20 + 400}}, nil, 0, "").Text
	got := ansi.Strip(strings.Join(h.m.outputTail(cut, outputRows), "\n"))
	if !strings.Contains(got, "earlier lines") || !strings.Contains(got, "[… 2.0 MiB (197201 lines) left out here") {
		t.Errorf("a cut output's rows:\n%s", got)
	}
	whole := tools.CommandResult(jail.Result{Transcript: jail.Transcript{Head: []jail.Chunk{{Data: []byte(seq(60))}}, Stdout: 400}}, nil, 0, "").Text
	got = ansi.Strip(strings.Join(h.m.outputTail(whole, outputRows), "\n"))
	if !strings.Contains(got, "earlier lines") || strings.Contains(got, "left out") {
		t.Errorf("a whole output's rows:\n%s", got)
	}
}

// TestResumeByShortID (new user, 2026-12-03): /resume takes the six hex
// digits brig -p prints as well as the whole id; digits two sessions
// share are refused with both ids; the control: digits no session has.
func TestResumeByShortID(t *testing.T) {
	h := newHarness(t, 100, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	list := []session.Summary{
		{ID: "2026-11-20-aaaaaa", Title: "one", Model: "claude-sonnet-4-5"},
		{ID: "2026-11-21-bbbbbb", Title: "two", Model: "claude-sonnet-4-5"},
		{ID: "2026-11-22-bbbbbb", Title: "three", Model: "claude-sonnet-4-5"},
	}
	for want, said := range map[string]string{
		"bbbbbb": "bbbbbb names two sessions, 2026-11-21-bbbbbb and 2026-11-22-bbbbbb",
		"cccccc": "no session cccccc",
		"aaaaaa": "",
	} {
		h.printed = nil
		h.m.resumeWanted = want
		h.send(sessionsMsg{list: list})
		got := ansi.Strip(h.printedText())
		if said == "" {
			if strings.Contains(got, "/resume:") || h.m.picker != nil {
				t.Errorf("/resume %s: %q", want, got)
			}
			continue
		}
		if !strings.Contains(got, said) {
			t.Errorf("/resume %s said %q, want %q", want, got, said)
		}
	}
}

// TestResumeAsksForNoWiderAMode: /resume asks for the saved session with
// the mode in effect as Current (the starter keeps the session's own only
// when it is no wider), or with the mode picked before anything ran as
// Mode; the run's note on the mode is printed under the session's history.
func TestResumeAsksForNoWiderAMode(t *testing.T) {
	h := newHarness(t, 100, colorprofile.NoTTY, allHold())
	var asked []StartRequest
	h.m.cfg.Start = func(_ context.Context, req StartRequest, _ Hooks) (*Conn, error) {
		asked = append(asked, req)
		c := h.conn(policy.ModeAsk, nil)
		c.Resumed = &session.State{Summary: session.Summary{ID: req.Resume}, Mode: policy.ModeEdit}
		c.ModeNote = "the session ran in edit mode; it goes on in ask, the mode in use (/mode edit to go on as before)"
		return c, nil
	}
	h.start(h.conn(policy.ModeAuto, nil))
	for _, msg := range runCmd(h.m.resume(session.Summary{ID: "2026-11-01-abcdef", Model: "claude-sonnet-4-5"})) {
		h.send(msg)
	}
	if len(asked) != 1 || asked[0].Current != policy.ModeAuto || asked[0].Mode != "" {
		t.Fatalf("/resume in auto asked for %+v, want Current auto and no Mode", asked)
	}
	if got := h.printedText(); !strings.Contains(got, "the session ran in edit mode; it goes on in ask") {
		t.Errorf("the mode note was not printed:\n%s", got)
	}

	// --mode plan given, the picker's session resumed before any run: the
	// mode given is asked for.
	h = newHarness(t, 100, colorprofile.NoTTY, allHold())
	asked = nil
	h.m.cfg.Start = func(_ context.Context, req StartRequest, _ Hooks) (*Conn, error) {
		asked = append(asked, req)
		return h.conn(policy.ModePlan, nil), nil
	}
	h.m.cfg.Initial.Mode = policy.ModePlan
	runCmd(h.m.resume(session.Summary{ID: "2026-11-01-abcdef"}))
	if len(asked) != 1 || asked[0].Mode != policy.ModePlan {
		t.Fatalf("--mode plan then the picker asked for %+v, want Mode plan", asked)
	}
}

// TestCostSaysWhatEachTotalCounts (new user, 2026-12-03): after a
// /resume the session's total, earlier runs included, was above "since
// start" with nothing saying why.
func TestCostSaysWhatEachTotalCounts(t *testing.T) {
	h := newHarness(t, 120, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	h.m.sessCost, h.m.spent = 0.2471, 0.1504
	got := ansi.Strip(h.m.costText())
	if !strings.Contains(got, "this session   $0.2471 (all its runs, earlier ones included)") || !strings.Contains(got, "since start    $0.1504 (this brig, every session it opened)") {
		t.Errorf("/cost:\n%s", got)
	}
}

// TestStatusNoteWraps: a status note longer than the window is wrapped,
// not cut before the key it names (new user, 2026-12-03), and one said
// of the window's size goes with a resize.
func TestStatusNoteWraps(t *testing.T) {
	h := newHarness(t, 60, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	h.m.status = tooSmallForRules
	if f := ansi.Strip(h.frame()); !strings.Contains(f, "(1 allows once)") {
		t.Errorf("the note's end is cut:\n%s", f)
	}
	h.send(tea.WindowSizeMsg{Width: 120, Height: 35})
	if h.m.status != "" {
		t.Errorf("a note of the old size stays: %q", h.m.status)
	}
}

// TestBannerNamesTheConfiguredMode (new user, 2026-12-03): a run that
// starts in the mode [agent] mode of the user's config names says so in
// the banner, so that a mode set long ago is not a surprise; the control,
// a mode chosen otherwise, does not.
func TestBannerNamesTheConfiguredMode(t *testing.T) {
	for _, fromConfig := range []bool{true, false} {
		h := newHarness(t, 120, colorprofile.NoTTY, allHold())
		c := h.conn(policy.ModeAuto, nil)
		c.ModeFromConfig = fromConfig
		h.start(c)
		got := h.printedText()
		if !strings.Contains(got, "mode       auto") {
			t.Fatalf("no mode row in the banner:\n%s", got)
		}
		if said := strings.Contains(got, "[agent] mode of your config"); said != fromConfig {
			t.Errorf("ModeFromConfig %v: the banner names the config: %v\n%s", fromConfig, said, got)
		}
	}
}

package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"brig/agent"
	"brig/agent/provider"
	"brig/internal/credentials"
	"brig/internal/doctor"
	"brig/internal/session"
	"brig/policy"
	"brig/tools"
)

// prose is a sentence of ordinary words, long enough to wrap at any width.
const prose = "the quick brown fox jumps over the lazy dog while seventeen careful reviewers read every changed line of the parser twice before lunch"

// offline is a provider.Client whose every request fails.
type offline struct{}

func (offline) Provider() provider.Name { return provider.Anthropic }

func (offline) Stream(context.Context, provider.Request, func(provider.Event) error) (provider.Response, error) {
	return provider.Response{}, errors.New("offline")
}

// feedTranscript sends one of everything the transcript prints: the user's
// message, a streamed answer, a server search, a queued message delivered,
// a command with long output lines, a denied call, an approval answer, a
// notice, and a failed turn.
func feedTranscript(h *harness) {
	h.typeText("please " + prose)
	h.keys("enter") // the client fails at once; the turn's end is sent below
	h.send(eventsMsg{
		{Kind: agent.EventText, Text: "Sure: " + prose + ".\n\n"},
		{Kind: agent.EventServerTool, Text: "searched the web for " + prose},
	})
	h.send(deliveredMsg{"also " + prose})
	cmd := json.RawMessage(`{"command":"go test ./... && echo ` + prose + `"}`)
	h.send(eventsMsg{
		{Kind: agent.EventToolStart, Tool: &agent.ToolEvent{ID: "b", Name: "bash", Args: cmd}},
		{Kind: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: "b", Name: "bash", Args: cmd, Outcome: &agent.Outcome{
			Result: tools.Result{Text: "ok  \tbrig/policy\t0.2s\n--- FAIL: TestParser: " + prose + "\nFAIL\n", Meta: tools.Meta{ExitCode: intp(1)}}, Duration: 2 * time.Second}}},
		{Kind: agent.EventToolStart, Tool: &agent.ToolEvent{ID: "r", Name: "read_file", Args: json.RawMessage(`{"path":"/home/dev/.ssh/id_ed25519"}`)}},
		{Kind: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: "r", Name: "read_file", Args: json.RawMessage(`{"path":"/home/dev/.ssh/id_ed25519"}`), Outcome: &agent.Outcome{
			Verdict: &policy.Verdict{Tier: policy.Deny}, Result: tools.Result{IsError: true, Text: "denied by brig's policy: " + prose}}}},
		{Kind: agent.EventNotice, Text: "retrying: " + prose},
	})
	p := &pending{req: bashRequest("/ws"), reply: make(chan agent.Approval, 1)}
	h.send(approvalMsg{p})
	h.pause()
	h.keys("5")
	h.typeText(prose)
	h.keys("enter")
	h.send(turnDoneMsg{err: errors.New("the provider said: " + prose)})
}

// TestTranscriptWrapsAtWords: at 40, 80 and 200 columns no printed row is
// wider than the terminal, and every word of what was said is whole on one
// row: rows break between words, never inside one.
func TestTranscriptWrapsAtWords(t *testing.T) {
	for _, width := range []int{40, 80, 200} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			h := newHarness(t, width, colorprofile.NoTTY, oneMissing())
			h.start(h.conn(policy.ModeAsk, offline{}))
			feedTranscript(h)
			out := ansi.Strip(h.printedText())
			rows := strings.Split(out, "\n")
			for _, r := range rows {
				if w := ansi.StringWidth(r); w > width {
					t.Errorf("a row of %d columns: %q", w, r)
				}
			}
			words := map[string]bool{}
			for _, r := range rows {
				for _, w := range strings.Fields(r) {
					words[strings.Trim(w, ".,:;()")] = true
				}
			}
			for _, w := range strings.Fields(prose) {
				if !words[w] {
					t.Errorf("%q is not whole on any row", w)
				}
			}
			// Every sentence is there once its rows are joined (the gutter
			// of command output left out).
			joined := strings.Join(strings.Fields(strings.ReplaceAll(out, "│", "")), " ")
			for _, want := range []string{"› please " + prose, "Sure: " + prose, "searched the web for " + prose, "(queued, sent at a tool boundary) also " + prose,
				"FAIL: TestParser: " + prose, "denied by brig's policy: " + prose, "brig: retrying: " + prose, "denied: " + prose, "the provider said: " + prose} {
				if !strings.Contains(joined, want) {
					t.Errorf("%q is not in the transcript", want)
				}
			}
			if t.Failed() {
				t.Logf("the transcript at %d columns:\n%s", width, out)
			}
		})
	}
}

// TestConfigErrorIsShown: a config that does not load is shown as what it
// is, with its file, line and fix, in the banner and the status line, not
// as a model that is not connected; a prompt sent meanwhile says the same.
func TestConfigErrorIsShown(t *testing.T) {
	const cerr = "/home/dev/project/.brig/config.toml:3: expected '=' after a key (this file comes with the repository; fix or remove it)"
	for _, width := range []int{40, 80, 200} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			r := allHold()
			r.SetConfig(doctor.ConfigStatus{Workspace: "/home/dev/project", Error: cerr})
			h := newHarness(t, width, colorprofile.NoTTY, r)
			h.send(startedMsg{err: errors.New(cerr)})
			golden(t, fmt.Sprintf("banner_config_error_%d", width), h.frame())
			// A path longer than the row is broken across rows: compare
			// without the spaces.
			flat := func(s string) string { return strings.Join(strings.Fields(ansi.Strip(s)), "") }
			banner := flat(h.printedText())
			if !strings.Contains(banner, flat("config "+cerr)) || !strings.Contains(banner, flat("model not started: the configuration does not load")) {
				t.Errorf("banner:\n%s", h.printedText())
			}
			if st := ansi.Strip(h.m.statusLine()); !strings.Contains(st, "config error at .brig/config.toml:3") && width >= 80 {
				t.Errorf("status line: %s", st)
			}
			h.printed = nil
			h.typeText("hello")
			h.keys("enter")
			if got := flat(h.printedText()); !strings.Contains(got, flat("not started: the configuration does not load: "+cerr+". Once it is fixed, /model starts brig (your message comes back into the input once brig starts)")) {
				t.Errorf("a prompt was answered with:\n%s", got)
			}
			if h.keys("up"); h.m.input.Value() != "hello" {
				t.Errorf("↑ did not bring the message back: %q", h.m.input.Value())
			}
			// Once a run starts (the config fixed, /model), the message is
			// back in the input, unsent: after a /model, ↑ gave the /model.
			h.m.input.SetValue("")
			h.start(h.conn(policy.ModeAsk, nil))
			if got := h.m.input.Value(); got != "hello" || h.m.busy {
				t.Errorf("after the start the input holds %q (busy %v), want the unsent message", got, h.m.busy)
			}
		})
	}
}

// TestModelPickerNeedsAKey: a model whose provider has no key is greyed
// out with the reason and a fix the user can carry out from the TUI (no
// command-line flags), cannot be chosen, and /model with its id says the
// same.
func TestModelPickerNeedsAKey(t *testing.T) {
	h := newHarness(t, 100, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	const file = "/home/dev/.config/brig/credentials.toml"
	h.m.cfg.Usable = func(model string) error {
		if md, err := provider.Lookup(model, false); err == nil && md.Provider == provider.OpenAI {
			return &credentials.MissingError{Provider: "openai", File: file}
		}
		return nil
	}
	h.printed = nil
	h.typeText("/model")
	h.keys("enter")
	p := h.m.picker
	if p == nil {
		t.Fatal("no picker")
	}
	for _, it := range p.items {
		md, _ := provider.Lookup(it.value, false)
		if greyed := it.disabled && it.why == "no OPENAI_API_KEY"; greyed != (md.Provider == provider.OpenAI) {
			t.Errorf("%s: disabled %v (%s)", it.value, it.disabled, it.why)
		}
	}
	for range p.items {
		h.keys("down")
		if it := p.items[p.idx]; it.disabled {
			t.Fatalf("the cursor reached %s, which has no key", it.value)
		}
	}
	live := strings.Join(strings.Fields(ansi.Strip(h.m.frameText())), " ")
	if !strings.Contains(live, `greyed out: no OPENAI_API_KEY: set it or add it to `+file+` as [openai] api_key = "…"`) || strings.Contains(live, "--") {
		t.Errorf("the picker does not say why, or gives flags:\n%s", ansi.Strip(h.m.frameText()))
	}
	golden(t, "picker_model_no_key", h.frame())
	h.keys("esc")

	h.typeText("/model gpt-5")
	h.keys("enter")
	got := strings.Join(strings.Fields(ansi.Strip(h.printedText())), " ")
	if !strings.Contains(got, "/model: gpt-5: no OPENAI_API_KEY: set it or add it to "+file) || strings.Contains(got, "--") || h.m.starting {
		t.Errorf("/model gpt-5 printed:\n%s", got)
	}
}

// TestWrapBreaksAtSpacesOnly: a row breaks between words, not after the
// hyphens inside one (a flag, a file name); a word longer than the row is
// broken where it must be; \u2011 in the text is kept as it is.
func TestWrapBreaksAtSpacesOnly(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"check the network, --base-url and ANTHROPIC_BASE_URL", 20, "check the network,\n--base-url and\nANTHROPIC_BASE_URL"},
		{"a well-known cross-platform tool", 14, "a well-known\ncross-platform\ntool"},
		{"supercalifragilistic", 8, "supercal\nifragili\nstic"},
		{"non\u2011breaking - and -", 40, "non\u2011breaking - and -"},
	} {
		if got := wrap(tc.in, tc.width); got != tc.want {
			t.Errorf("wrap(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

// TestModelPickerSelectsTheModelInUse: /model opens on the model in use,
// not on the first row (the most expensive model). A model the registry
// does not list (a local server's, the other rows greyed out for want of
// a key) gets a row of its own; before a run is open, the model asked for
// is selected.
func TestModelPickerSelectsTheModelInUse(t *testing.T) {
	selected := func(h *harness) pickItem {
		t.Helper()
		h.typeText("/model")
		h.keys("enter")
		if h.m.picker == nil {
			t.Fatal("no picker")
		}
		return h.m.picker.items[h.m.picker.idx]
	}
	noKey := func(model string) error {
		return &credentials.MissingError{Provider: "anthropic", File: "/home/dev/.config/brig/credentials.toml"}
	}

	t.Run("listed", func(t *testing.T) {
		h := newHarness(t, 100, colorprofile.NoTTY, allHold())
		c := h.conn(policy.ModeAsk, nil)
		c.Model, _ = provider.Lookup("claude-haiku-4-5", false)
		h.start(c)
		if it := selected(h); it.value != "claude-haiku-4-5" || it.why != "current" {
			t.Errorf("selected %s (%s), want claude-haiku-4-5 (current)", it.value, it.why)
		}
	})
	t.Run("unlisted", func(t *testing.T) {
		h := newHarness(t, 100, colorprofile.NoTTY, allHold())
		h.m.cfg.Usable = noKey
		c := h.conn(policy.ModeAsk, nil)
		c.Model, c.Provider = provider.Unlisted("qwen3-coder", provider.OpenAIChat), provider.OpenAIChat
		h.start(c)
		if it := selected(h); it.value != "qwen3-coder" || it.why != "current" || it.disabled {
			t.Errorf("selected %s (%s), want qwen3-coder (current)", it.value, it.why)
		}
		if f := ansi.Strip(h.m.frameText()); !strings.Contains(f, "› qwen3-coder  openai-chat · 32.8k context · not in brig's registry (current)") {
			t.Errorf("the model in use is not shown selected:\n%s", f)
		}
		h.keys("enter") // choosing it again changes nothing
		if h.m.starting || h.m.run != c {
			t.Error("choosing the model in use restarted the run")
		}
	})
	t.Run("not started", func(t *testing.T) {
		h := newHarness(t, 100, colorprofile.NoTTY, allHold())
		h.m.cfg.Initial.Model = "claude-sonnet-4-5"
		if it := selected(h); it.value != "claude-sonnet-4-5" {
			t.Errorf("selected %s, want the model asked for, claude-sonnet-4-5", it.value)
		}
	})
	// None asked for (a new user, 2026-12-02: the first row, the dearest
	// model, was selected): the default for the keys there are.
	t.Run("none asked for", func(t *testing.T) {
		h := newHarness(t, 100, colorprofile.NoTTY, allHold())
		if it := selected(h); it.value != "claude-sonnet-4-5" {
			t.Errorf("selected %s, want brig's default, claude-sonnet-4-5", it.value)
		}
	})
	t.Run("none asked for, only an OpenAI key", func(t *testing.T) {
		h := newHarness(t, 100, colorprofile.NoTTY, allHold())
		h.m.cfg.Usable = func(model string) error {
			if md, err := provider.Lookup(model, false); err == nil && md.Provider == provider.Anthropic {
				return &credentials.MissingError{Provider: "anthropic", File: "/home/dev/.config/brig/credentials.toml"}
			}
			return nil
		}
		if it := selected(h); it.value != "gpt-5" {
			t.Errorf("selected %s, want gpt-5", it.value)
		}
	})
}

// TestSwitchToAnUnlistedModelSaysSo: /model to a model brig's registry
// does not list (a local server's) says its price is unknown and what
// window is assumed, as the banner and -p do (a new user saw nothing).
func TestSwitchToAnUnlistedModelSaysSo(t *testing.T) {
	h := newHarness(t, 100, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	if !h.m.banner {
		t.Fatal("no banner")
	}
	h.printed = nil
	c := h.conn(policy.ModeAsk, nil)
	c.Model, c.Provider = provider.Unlisted("qwen3-coder", provider.OpenAIChat), provider.OpenAIChat
	h.start(c)
	if got := strings.Join(strings.Fields(ansi.Strip(h.printedText())), " "); !strings.Contains(got, "model qwen3-coder is not in brig's registry: its price is unknown") {
		t.Errorf("printed:\n%s", got)
	}
	// Control: a listed model says nothing of the kind.
	h.printed = nil
	h.start(h.conn(policy.ModeAsk, nil))
	if strings.Contains(h.printedText(), "not in brig's registry") {
		t.Errorf("a listed model got the note:\n%s", h.printedText())
	}
}

// TestReplayMarksFailures: a resumed session marks its calls as the live
// transcript did: a failed command with ✗ and its exit status, a denied
// call with ⊘, a command that succeeded with ● and its status (it showed
// a failed pytest with ●).
func TestReplayMarksFailures(t *testing.T) {
	h := newHarness(t, 100, colorprofile.NoTTY, allHold())
	call := func(id, cmd string) provider.Block {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		return provider.Block{Type: provider.BlockToolUse, ToolUse: &provider.ToolUse{ID: id, Name: "bash", Input: in}}
	}
	st := &session.State{
		Messages: []provider.Message{
			{Role: provider.User, Content: []provider.Block{provider.Text("run the tests")}},
			{Role: provider.Assistant, Content: []provider.Block{call("b1", "pytest -q"), call("b2", "ls"), call("b3", "rm -rf build")}},
			{Role: provider.User, Content: []provider.Block{
				provider.ToolResultBlock("b1", "F.\nFAILED test_calc.py::test_sub - assert 1 == -1\n[exit code 0] printed by the test\n1 failed, 1 passed\n[exit code 1]", true),
				provider.ToolResultBlock("b2", "calc\ntests\n[exit code 0]", false),
				provider.ToolResultBlock("b3", "the user denied this call. Do not retry it unchanged.", true),
			}},
		},
		Display: []session.Entry{
			{Display: session.Display{Kind: session.DisplayUser, Text: "run the tests"}},
			{Display: session.Display{Kind: session.DisplayToolCall, Tool: "bash", ToolUseID: "b1", Text: "$ pytest -q"}},
			{Display: session.Display{Kind: session.DisplayToolCall, Tool: "bash", ToolUseID: "b2", Text: "$ ls"}},
			{Display: session.Display{Kind: session.DisplayToolCall, Tool: "bash", ToolUseID: "b3", Text: "$ rm -rf build"}},
			{Display: session.Display{Kind: session.DisplayToolResult, ToolUseID: "b1", IsError: true, Text: "F. … (+4 lines)"}},
			{Display: session.Display{Kind: session.DisplayToolResult, ToolUseID: "b2", Text: "calc … (+2 lines)"}},
			{Display: session.Display{Kind: session.DisplayToolResult, ToolUseID: "b3", IsError: true, Text: "the user denied this call. Do not retry it unchanged."}},
		},
	}
	out := ansi.Strip(h.m.replay(st))
	for _, want := range []string{"✗ bash $ pytest -q · exit 1\n", "● bash $ ls · exit 0\n", "⊘ bash $ rm -rf build\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the replay has no %q:\n%s", want, out)
		}
	}
	// Each result under its own call, though the three ran side by side
	// and their results came after all of them (new user, 2026-12-02);
	// a result whose call is not shown stays where it was.
	for _, want := range []string{
		"$ pytest -q · exit 1\n  ⎿ F. … (+4 lines)\n",
		"$ ls · exit 0\n  ⎿ calc … (+2 lines)\n",
		"$ rm -rf build\n  ⎿ the user denied this call.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("a result is not under its call (%q):\n%s", want, out)
		}
	}
	if n := strings.Count(out, "⎿ calc"); n != 1 {
		t.Errorf("a result is shown %d times:\n%s", n, out)
	}
	st.Display = append(st.Display, session.Entry{Display: session.Display{Kind: session.DisplayToolResult, ToolUseID: "gone", Text: "an orphan result"}})
	if out := ansi.Strip(h.m.replay(st)); !strings.Contains(out, "  ⎿ an orphan result\n") {
		t.Errorf("control: a result without its call is not shown:\n%s", out)
	}
}

// TestReplaySaysALastMessageGotNoAnswer (new user, 2026-12-02): a session
// whose last turn failed ended its replay with "› what next?" and nothing
// saying no answer came. Control: an answered one says nothing of it.
func TestReplaySaysALastMessageGotNoAnswer(t *testing.T) {
	h := newHarness(t, 100, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	st := &session.State{Display: []session.Entry{
		{Display: session.Display{Kind: session.DisplayUser, Text: "fix it"}},
		{Display: session.Display{Kind: session.DisplayAssistant, Text: "Fixed."}},
		{Display: session.Display{Kind: session.DisplayUser, Text: "what next?"}},
	}}
	if out := ansi.Strip(h.m.replay(st)); !strings.Contains(out, "› what next?\n(no answer to this message") {
		t.Errorf("replay of an unanswered last message:\n%s", out)
	}
	st.Display = st.Display[:2]
	if out := ansi.Strip(h.m.replay(st)); strings.Contains(out, "no answer") {
		t.Errorf("control: an answered session:\n%s", out)
	}
}

// TestReplayPairsRepeatedIDs (new user, 2026-12-03): a server that used a
// call id again in a later answer made every call of that id show the last
// result (and exit status) of it. Each call now shows the first result of
// its id after it; the control, ids used once, is TestReplayMarksFailures.
func TestReplayPairsRepeatedIDs(t *testing.T) {
	h := newHarness(t, 100, colorprofile.NoTTY, allHold())
	call := func(cmd string) provider.Block {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		return provider.Block{Type: provider.BlockToolUse, ToolUse: &provider.ToolUse{ID: "t0", Name: "bash", Input: in}}
	}
	st := &session.State{
		Messages: []provider.Message{
			{Role: provider.User, Content: []provider.Block{provider.Text("go")}},
			{Role: provider.Assistant, Content: []provider.Block{call("ls")}},
			{Role: provider.User, Content: []provider.Block{provider.ToolResultBlock("t0", "calc\n[exit code 0]", false)}},
			{Role: provider.Assistant, Content: []provider.Block{call("false")}},
			{Role: provider.User, Content: []provider.Block{provider.ToolResultBlock("t0", "[exit code 1]", true)}},
		},
		Display: []session.Entry{
			{Display: session.Display{Kind: session.DisplayUser, Text: "go"}},
			{Display: session.Display{Kind: session.DisplayToolCall, Tool: "bash", ToolUseID: "t0", Text: "$ ls"}},
			{Display: session.Display{Kind: session.DisplayToolResult, ToolUseID: "t0", Text: "calc"}},
			{Display: session.Display{Kind: session.DisplayToolCall, Tool: "bash", ToolUseID: "t0", Text: "$ false"}},
			{Display: session.Display{Kind: session.DisplayToolResult, ToolUseID: "t0", IsError: true, Text: "[exit code 1]"}},
		},
	}
	out := ansi.Strip(h.m.replay(st))
	for _, want := range []string{"● bash $ ls · exit 0\n  ⎿ calc\n", "✗ bash $ false · exit 1\n  ⎿ [exit code 1]\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the replay has no %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "⎿"); n != 2 {
		t.Errorf("%d results shown, want 2:\n%s", n, out)
	}
}

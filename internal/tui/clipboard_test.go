package tui

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"brig/policy"
)

// clipboardChildEnv names the file the fake clipboard programs write to; set,
// it makes TestClipboardKeysInAChild run.
const clipboardChildEnv = "BRIG_TUI_CLIPBOARD_MARKER"

// TestNoClipboardProgramRuns: the clipboard keys run no program. Bubbles'
// inputs bind Ctrl+V (and the textarea Ctrl+Shift+C) to a package that
// runs xclip, xsel or wl-paste from PATH in the supervisor, with its
// environment (API keys); one planted on PATH would run unjailed. That
// package picks its program when it is initialised, so the check runs in
// a child test process whose PATH starts with fake ones that record that
// they ran (TestClipboardKeysInAChild, with its control).
func TestNoClipboardProgramRuns(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "ran")
	for _, name := range []string{"xclip", "xsel", "wl-paste", "wl-copy"} {
		script := "#!/bin/sh\necho " + name + " >> '" + marker + "'\necho pasted\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestClipboardKeysInAChild$", "-test.v", "-test.count=1")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "WAYLAND_DISPLAY=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PATH="+bin+":/usr/bin:/bin", clipboardChildEnv+"="+marker)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child test failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestClipboardKeysInAChild") {
		t.Fatalf("the child test did not run:\n%s", out)
	}
}

// TestClipboardKeysInAChild is TestNoClipboardProgramRuns's child.
func TestClipboardKeysInAChild(t *testing.T) {
	marker := os.Getenv(clipboardChildEnv)
	if marker == "" {
		t.Skip("run by TestNoClipboardProgramRuns")
	}
	ctrlV := tea.KeyPressMsg{Code: 'v', Mod: tea.ModCtrl}
	copyKey := tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl | tea.ModShift}
	ran := func() string {
		b, _ := os.ReadFile(marker)
		return strings.TrimSpace(string(b))
	}

	// The controls: bubbles' own inputs, keymaps as they come, run the
	// fake program for Ctrl+V.
	ta := textarea.New()
	ta.Focus()
	_, cmd := ta.Update(ctrlV)
	runCmds(cmd)
	if ran() == "" {
		t.Fatal("control: a default textarea's Ctrl+V ran no clipboard program; this check proves nothing here")
	}
	_ = os.Remove(marker)
	ti := textinput.New()
	ti.Focus()
	_, cmd = ti.Update(ctrlV)
	runCmds(cmd)
	if ran() == "" {
		t.Fatal("control: a default text input's Ctrl+V ran no clipboard program")
	}
	_ = os.Remove(marker)

	// brig's input.
	h := newHarness(t, 80, colorprofile.NoTTY, allHold())
	h.start(h.conn(policy.ModeAsk, nil))
	h.typeText("hi")
	for _, k := range []tea.KeyPressMsg{ctrlV, copyKey} {
		runCmds(h.send(k))
	}
	if got := ran(); got != "" {
		t.Errorf("brig's input ran %q", got)
	}
	if h.m.status != noClipboard {
		t.Errorf("status after Ctrl+V = %q, want the terminal's paste named", h.m.status)
	}
	if got := h.m.input.Value(); got != "hi" {
		t.Errorf("the input holds %q after the clipboard keys, want \"hi\"", got)
	}
	// Said once: the next key clears it (it stayed for good).
	h.typeText("!")
	if h.m.status == noClipboard {
		t.Errorf("the clipboard note stayed after the next key")
	}
	h.keys("backspace")
	// A paste through the terminal still works.
	h.send(tea.PasteMsg{Content: " there"})
	if got := h.m.input.Value(); got != "hi there" {
		t.Errorf("after a terminal paste the input holds %q", got)
	}

	// The message typed when denying a call.
	h.ask(h.request("bash", `{"command":"rm -rf docs"}`))
	h.pause()
	h.keys("5")
	if !h.m.denying {
		t.Fatal("5 did not open the deny message")
	}
	runCmds(h.send(ctrlV))
	if got := ran(); got != "" {
		t.Errorf("the deny message's input ran %q", got)
	}
}

// runCmds runs cmd and, for a batch or sequence, the commands it holds,
// each to its end: the clipboard commands return at once (the programs
// are scripts that exit). Commands that wait on the run or on a timer are
// not in what a key press returns here.
func runCmds(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	var wg sync.WaitGroup
	var run func(c tea.Cmd)
	run = func(c tea.Cmd) {
		defer wg.Done()
		switch msg := c().(type) {
		case tea.BatchMsg:
			for _, c := range msg {
				if c != nil {
					wg.Add(1)
					go run(c)
				}
			}
		}
	}
	wg.Add(1)
	run(cmd)
	wg.Wait()
}

package tui

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"brig/test/fakeprovider"
)

// spinner is any frame of the live area's spinner: it belongs to the live
// area only, so one in the scrollback is a frame left behind.
const spinner = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

// The live area's own lines: the empty input and the status line.
const (
	placeholder = "› Ask brig…"
	statusLine  = " · mode auto · $"
)

// waitUntil polls the screen until ok holds, or fails saying what.
func (tm *term) waitUntil(timeout time.Duration, what string, ok func(screen string) bool) string {
	tm.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := tm.screen()
		if ok(s) {
			return s
		}
		if exited(s) {
			tm.t.Fatalf("brig exited before the screen showed %s:\n%s", what, s)
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("the screen never showed %s:\n%s", what, s)
		}
		time.Sleep(40 * time.Millisecond)
	}
}

// lastLine is the screen's last non-blank line.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n "), "\n")
	return strings.TrimRight(lines[len(lines)-1], " ")
}

// resize changes the window's size and waits until brig has drawn its
// status line again for the new width (while a command runs, the status
// line is the live area's last line and starts with the spinner).
func (tm *term) resize(width, height int) {
	tm.t.Helper()
	tm.tmux("resize-window", "-t", "main", "-x", strconv.Itoa(width), "-y", strconv.Itoa(height))
	tm.waitUntil(10*time.Second, "the status line redrawn at "+strconv.Itoa(width)+" columns", func(s string) bool {
		l := lastLine(s)
		return strings.ContainsAny(l, spinner) && strings.Contains(l, "working") &&
			ansi.StringWidth(l) <= width && ansi.StringWidth(l) > width-12
	})
}

// TestScrollbackKeepsNoLiveLines: the live area (input box, spinner, status
// line, queued messages, the Ctrl+C prompt) never leaves a copy of itself
// in the scrollback when it gets shorter, when the terminal is resized
// while a command runs, when a queued message is delivered, or when brig
// exits with Ctrl+C twice.
func TestScrollbackKeepsNoLiveLines(t *testing.T) {
	tm := newTerm(t,
		fakeprovider.Turn{Text: "Running it.", ToolCalls: []fakeprovider.ToolCall{tc("bash", `{"command":"echo started; while [ ! -e go ]; do sleep 0.1; done; echo finished"}`)}},
		fakeprovider.Turn{Text: "Finished, and noted the queued message."},
	)
	tm.launch("--mode", "auto")
	tm.waitFor(10*time.Second, placeholder, statusLine)

	// The Ctrl+C prompt comes and goes: the live area is one line shorter.
	tm.keys("C-c")
	tm.waitFor(5*time.Second, "press Ctrl+C again")
	s := tm.waitUntil(10*time.Second, "the Ctrl+C prompt gone", func(s string) bool { return !strings.Contains(s, "press Ctrl+C again") })
	if n := strings.Count(s, placeholder); n != 1 {
		t.Fatalf("%d input boxes after the Ctrl+C prompt went:\n%s", n, s)
	}

	// A two-line input that becomes one line again.
	tm.tmux("send-keys", "-t", "main", "-l", "one")
	tm.keys("C-j")
	tm.tmux("send-keys", "-t", "main", "-l", "two")
	tm.waitFor(5*time.Second, "› two")
	tm.keys("BSpace", "BSpace", "BSpace", "BSpace")
	s = tm.waitUntil(5*time.Second, "the second input line gone", func(s string) bool { return !strings.Contains(s, "› two") })
	if n := strings.Count(s, "› one"); n != 1 {
		t.Fatalf("%d copies of the input line after it shrank:\n%s", n, s)
	}
	tm.keys("BSpace", "BSpace", "BSpace")
	tm.waitUntil(5*time.Second, "an empty input", func(s string) bool { return !strings.Contains(s, "› one") })

	// A command runs; the window is resized under it, narrower and wider,
	// and a message is queued.
	tm.typeLine("run the long thing")
	tm.waitFor(20*time.Second, "│ started", "working")
	for _, size := range [][2]int{{60, 30}, {100, 40}, {45, 25}, {100, 40}} {
		tm.resize(size[0], size[1])
	}
	tm.typeLine("also note this")
	tm.waitFor(10*time.Second, "queued › also note this")
	tm.resize(50, 30)
	tm.resize(100, 40)
	if err := os.WriteFile(tm.ws+"/go", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s = tm.waitFor(30*time.Second, "(queued, sent at a tool boundary) also note this", "Finished, and noted the queued message.")
	s = tm.waitUntil(10*time.Second, "the turn's end", func(s string) bool { return !strings.Contains(s, "working") })
	for _, c := range []struct {
		text string
		want int
	}{
		{placeholder, 1}, {statusLine, 1}, {"queued › also note this", 0},
		{"(queued, sent at a tool boundary) also note this", 1}, {"● bash $ echo started", 1},
	} {
		if n := strings.Count(s, c.text); n != c.want {
			t.Errorf("%q is on the screen %d times, want %d", c.text, n, c.want)
		}
	}
	if strings.ContainsAny(s, spinner) {
		t.Errorf("a spinner frame was left behind")
	}
	if t.Failed() {
		t.Fatalf("the screen with its scrollback:\n%s", s)
	}

	// Ctrl+C twice: nothing of the live area stays.
	s = tm.quit()
	for _, live := range []string{placeholder, statusLine, "press Ctrl+C again"} {
		if strings.Contains(s, live) {
			t.Errorf("%q stayed on the screen after exit", live)
		}
	}
	if strings.ContainsAny(s, spinner) {
		t.Errorf("a spinner frame was left behind")
	}
	if t.Failed() {
		t.Fatalf("the screen after exit:\n%s", s)
	}
}

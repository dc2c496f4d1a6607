package tui

import (
	"os"
	"strings"
	"testing"
	"time"

	"brig/test/composition"
	"brig/test/fakeprovider"
	"brig/test/scenario"
)

// TestFixTaskInTheTUI runs the scenario task in the real terminal UI, in
// each wire format and in modes edit (the commit asks; the test answers
// "allow once" as a user would) and auto. The fake model checks every tool
// result, so the task finishes only if the model saw each command's output;
// the screen shows the output too.
func TestFixTaskInTheTUI(t *testing.T) {
	for _, wire := range []string{"anthropic", "openai", "openaichat"} {
		for _, mode := range []string{"edit", "auto"} {
			t.Run(wire+"/"+mode, func(t *testing.T) {
				resume := wire == "anthropic" && mode == "auto"
				turns := scenario.FixTask()
				if resume {
					turns = append(turns, fakeprovider.Turn{Text: "Resumed with the results."})
				}
				tm := newTerm(t, turns...)
				tm.wire = wire
				if err := os.Remove(tm.ws + "/main.go"); err != nil {
					t.Fatal(err)
				}
				if err := os.RemoveAll(tm.ws + "/.git"); err != nil {
					t.Fatal(err)
				}
				if err := scenario.Repo(tm.ws); err != nil {
					t.Fatal(err)
				}
				tm.launch("--mode", mode)
				tm.waitFor(10*time.Second, "› Ask brig")
				tm.typeLine("make the tests pass and commit")
				approvals := tm.answerUntil(90*time.Second, "both tests pass, committed as")
				defer tm.srv.Verify(t)
				if mode == "auto" && approvals > 0 {
					t.Errorf("auto mode asked %d times", approvals)
				}
				if mode == "edit" && approvals == 0 {
					t.Errorf("edit mode never asked (the commit is not an edit)")
				}
				// The user saw the failing run's output, not only its status.
				s := tm.screen()
				for _, want := range []string{"AssertionError: -1 != 5", "FAILED (failures=1)", "Ran 2 tests"} {
					if !strings.Contains(s, want) {
						t.Errorf("the screen never showed %q:\n%s", want, s)
					}
				}
				tm.quit()
				if !resume {
					return
				}
				// The session picker reopens it, and the model gets the
				// earlier tool results back with their content.
				tm.launch("--resume")
				tm.waitFor(10*time.Second, "resume a session of this workspace")
				tm.keys("Enter")
				tm.waitFor(10*time.Second, "end of the resumed history")
				tm.typeLine("what did the first test run say?")
				tm.waitFor(10*time.Second, "Resumed with the results.")
				reqs := tm.srv.Requests()
				var all []string
				for _, r := range reqs[len(reqs)-1].ToolResults() {
					all = append(all, r.Text)
				}
				for _, want := range []string{"return a - b", "AssertionError: -1 != 5", "Ran 2 tests"} {
					if !strings.Contains(strings.Join(all, "\n"), want) {
						t.Errorf("the resumed request's tool results lack %q", want)
					}
				}
				tm.quit()
			})
		}
	}
}

// answerUntil allows each approval prompt once until the screen shows
// done, and returns how many it answered. A failed scenario check ends it
// early (the fake provider refuses the request).
func (tm *term) answerUntil(timeout time.Duration, done string) int {
	tm.t.Helper()
	deadline := time.Now().Add(timeout)
	n := 0
	for {
		s := tm.screen()
		switch {
		case strings.Contains(s, done):
			return n
		case exited(s):
			tm.t.Fatalf("brig exited before the screen showed %q (%d approvals given):\n%s", done, n, s)
		case len(tm.srv.Failures()) > 0:
			tm.srv.Verify(tm.t)
			tm.t.Fatalf("the scenario failed; the screen:\n%s", s)
		case strings.Contains(lastLines(s, 30), "1 allow once"):
			tm.answer("1")
			n++
			// Wait for the prompt to go before looking again.
			for strings.Contains(lastLines(tm.screen(), 30), "1 allow once") && time.Now().Before(deadline) {
				time.Sleep(40 * time.Millisecond)
			}
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("the screen never showed %q (%d approvals given):\n%s", done, n, s)
		}
		time.Sleep(40 * time.Millisecond)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestComposition checks that a run is in the composition it was started
// for (test/composition); in the test's own run it is the control.
func TestComposition(t *testing.T) { composition.Verify(t, brig) }

// compositionUID is this package's unprivileged user for the
// compositions (test/e2e uses 65532, the escape suite 65534): a tmux
// server and brig as this uid share no process budget, socket directory
// or signal rights with packages that run at the same time.
const compositionUID = 65533

// TestScenarioInEveryComposition runs the TUI scenario again without user
// namespaces, as an unprivileged uid, and both.
func TestScenarioInEveryComposition(t *testing.T) {
	composition.Run(t, `^(TestComposition|TestFixTaskInTheTUI)$`, brig, compositionUID)
}

// TestHumanAnswerWidensTheGrant: in auto mode, calls beyond the mode's
// jail profile (a write and a read outside the workspace) are not run by
// themselves — the terminal asks — and a human's "allow once" gives them
// the wider grant: the file is written and the outside content reaches the
// model. (brig -p refuses the same calls: test/e2e modes_test.go.)
func TestHumanAnswerWidensTheGrant(t *testing.T) {
	// Not under /tmp: a call's /tmp is its own.
	outside, err := os.MkdirTemp("/var/tmp", "brig-tui-outside-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	if err := os.WriteFile(outside+"/notes.txt", []byte("OUTSIDE-NOTES-42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tm := newTerm(t,
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{scenario.Call("write_file", `{"path":"`+outside+`/out.txt","content":"from brig\n"}`)}},
		fakeprovider.Turn{
			Check:     []fakeprovider.Check{scenario.Has(0, "Created "+outside+"/out.txt")},
			ToolCalls: []fakeprovider.ToolCall{scenario.Call("read_file", `{"path":"`+outside+`/notes.txt"}`)},
		},
		fakeprovider.Turn{Check: []fakeprovider.Check{scenario.Has(0, "OUTSIDE-NOTES-42")}, Text: "Both went through."},
	)
	tm.launch("--mode", "auto")
	tm.waitFor(10*time.Second, "› Ask brig", "· ctx ") // the run has started
	tm.typeLine("write outside and read back")
	tm.waitFor(30*time.Second, "approve write_file?", "1 allow once")
	tm.answer("1")
	tm.waitFor(30*time.Second, "approve read_file?", "1 allow once")
	tm.answer("1")
	tm.waitFor(30*time.Second, "Both went through.")
	tm.srv.Verify(t)
	if b, err := os.ReadFile(outside + "/out.txt"); err != nil || string(b) != "from brig\n" {
		t.Fatalf("the approved write: %q %v", b, err)
	}
	tm.quit()
}

package tui

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"brig/test/fakeprovider"
)

func taskCall(desc, prompt string) fakeprovider.ToolCall {
	b, _ := json.Marshal(map[string]string{"description": desc, "prompt": prompt})
	return fakeprovider.ToolCall{Name: "task", Input: b}
}

func sleeping(arg string) bool {
	out, _ := exec.Command("pgrep", "-f", "^sleep "+arg+"$").Output()
	return len(strings.TrimSpace(string(out))) > 0
}

// TestSubagentsNestedAndEsc: in a real terminal, two subagents' commands
// show under their own task calls while they run; Esc stops both (their
// commands are gone) and the next prompt works.
func TestSubagentsNestedAndEsc(t *testing.T) {
	tm := newTerm(t,
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{taskCall("first helper", "MARK-A wait"), taskCall("second helper", "MARK-B wait")}},
		fakeprovider.Turn{Match: "MARK-A", ToolCalls: []fakeprovider.ToolCall{tc("bash", `{"command":"sleep 987.31"}`)}},
		fakeprovider.Turn{Match: "MARK-B", ToolCalls: []fakeprovider.ToolCall{tc("bash", `{"command":"sleep 987.32"}`)}},
		fakeprovider.Turn{Text: "after the interrupt, all good"},
	)
	tm.launch()
	tm.waitFor(10*time.Second, "› Ask brig")
	tm.typeLine("send two helpers")
	s := tm.waitFor(20*time.Second, "task explore: first helper", "task explore: second helper", "bash $ sleep 987.31", "bash $ sleep 987.32")
	// Each command is under its own call.
	first, second := strings.Index(s, "first helper"), strings.Index(s, "second helper")
	a, b := strings.Index(s, "sleep 987.31"), strings.Index(s, "sleep 987.32")
	if !(first < a && a < second && second < b) && !(second < b && b < first && first < a) {
		t.Fatalf("the commands are not under their calls:\n%s", s)
	}
	for deadline := time.Now().Add(20 * time.Second); !sleeping("987.31") || !sleeping("987.32"); {
		if time.Now().After(deadline) {
			t.Fatalf("the commands never ran\n%s", tm.screen())
		}
		time.Sleep(20 * time.Millisecond)
	}
	tm.keys("Escape")
	tm.waitFor(10*time.Second, "interrupted")
	for deadline := time.Now().Add(5 * time.Second); sleeping("987.31") || sleeping("987.32"); {
		if time.Now().After(deadline) {
			t.Fatal("a subagent's command outlived Esc")
		}
		time.Sleep(20 * time.Millisecond)
	}
	tm.typeLine("carry on")
	tm.waitFor(10*time.Second, "after the interrupt, all good")
	if r := tm.srv.Requests()[len(tm.srv.Requests())-1]; r.Status != 200 {
		t.Errorf("the request after the interrupt was refused: %d %s", r.Status, r.Reject)
	}
	tm.quit()
}

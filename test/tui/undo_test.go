package tui

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"brig/test/fakeprovider"
)

// TestUndoInTheUI: the model makes a mess with a shell command; the result
// line says what changed; /undo puts the workspace back byte for byte and
// the model is told at its next turn.
func TestUndoInTheUI(t *testing.T) {
	tm := newTerm(t,
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("bash", `{"command":"rm main.go && mkdir -p gen/x && echo junk > gen/x/out.txt && chmod 600 notes.txt"}`)}},
		fakeprovider.Turn{Text: "Made a mess."},
		fakeprovider.Turn{Text: "Understood."},
	)
	os.WriteFile(tm.ws+"/notes.txt", []byte("notes\n"), 0o644)
	mainGo, _ := os.ReadFile(tm.ws + "/main.go")
	tm.launch("--mode", "auto")
	tm.waitFor(10*time.Second, "› Ask brig")
	tm.typeLine("make a mess")
	tm.answerUntil(30*time.Second, "Made a mess.") // the deletion asks in every mode
	tm.waitFor(15*time.Second, "3 files changed, 1 created, 1 deleted, 2 directories created", "Made a mess.")
	if _, err := os.Stat(tm.ws + "/main.go"); err == nil {
		t.Fatal("the call did not run")
	}
	tm.typeLine("/undo")
	tm.waitFor(10*time.Second, "undid call 1 (bash", "removed   gen", "recreated main.go", "the model is told at its next turn")
	if b, err := os.ReadFile(tm.ws + "/main.go"); err != nil || string(b) != string(mainGo) {
		t.Fatalf("main.go after /undo: %q %v", b, err)
	}
	if fi, err := os.Stat(tm.ws + "/notes.txt"); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("notes.txt after /undo: %v %v", fi, err)
	}
	if _, err := os.Stat(tm.ws + "/gen"); err == nil {
		t.Fatal("gen/ is still there")
	}
	tm.typeLine("what happened?")
	tm.waitFor(10*time.Second, "Understood.")
	msgs, _ := json.Marshal(tm.request(2)["messages"])
	if !strings.Contains(string(msgs), "[brig] The user undid one of your earlier tool calls") {
		t.Fatalf("the model was not told:\n%s", msgs)
	}
	tm.quit()
}

package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"brig/jail"
)

func TestPlanUpdate(t *testing.T) {
	var p Plan
	res := p.Update(json.RawMessage(`{"plan":[{"step":"read the code","status":"completed"},{"step":"write the fix","status":"in_progress"},{"step":"run the tests","status":"pending"}]}`))
	if res.IsError || res.Text != "Plan updated: 1 of 3 steps completed; in progress: write the fix" {
		t.Fatalf("ack %q", res.Text)
	}
	if strings.Contains(res.Text, "run the tests") {
		t.Error("the acknowledgement repeats the plan")
	}
	if got := p.Checklist(); got != "[x] read the code\n[~] write the fix\n[ ] run the tests\n" {
		t.Errorf("checklist %q", got)
	}
	for _, bad := range []string{
		`{"plan":[{"step":"a","status":"in_progress"},{"step":"b","status":"in_progress"}]}`,
		`{"plan":[{"step":"a","status":"done"}]}`,
		`{"plan":[]}`,
		`{"plan":[{"step":" ","status":"pending"}]}`,
	} {
		if res := p.Update(json.RawMessage(bad)); !res.IsError {
			t.Errorf("accepted %s", bad)
		}
		if len(p.Steps) != 3 {
			t.Fatalf("a bad update changed the plan: %+v", p)
		}
	}
}

func TestFromJail(t *testing.T) {
	out, _ := json.Marshal(Result{Text: "fine"})
	if r, err := FromJail(jail.Result{Output: out}, nil); err != nil || r.Text != "fine" {
		t.Fatalf("%+v %v", r, err)
	}
	if r, err := FromJail(jail.Result{}, &jail.StageError{Stage: jail.StageTool, Msg: "boom"}); err != nil || !r.IsError || !strings.Contains(r.Text, "boom") {
		t.Fatalf("tool failure: %+v %v", r, err)
	}
	if _, err := FromJail(jail.Result{}, &jail.StageError{Stage: jail.StageLandlock, Msg: "no"}); err == nil {
		t.Fatal("a set-up failure must be an error, not a result")
	}
	if r, err := FromJail(jail.Result{ExitCode: 2, Stderr: []byte("panic: oops")}, nil); err != nil || !r.IsError || !strings.Contains(r.Text, "panic: oops") {
		t.Fatalf("crash: %+v %v", r, err)
	}
	// What the sweep after a file tool took out is said to the model, as
	// for a command: write_file of .git/rebase-merge/strategy "succeeded",
	// but the operation it would have run is gone.
	out, _ = json.Marshal(Result{Text: "Created .git/rebase-merge/strategy (12 bytes, 1 line)\n"})
	r, err := FromJail(jail.Result{Output: out, Violations: []string{"/w/.git/rebase-merge"}}, nil)
	if err != nil || !strings.HasPrefix(r.Text, "Created .git/rebase-merge/strategy (12 bytes, 1 line)\n[the call created or changed protected paths; brig undid it: /w/.git/rebase-merge]") || len(r.Meta.Violations) != 1 {
		t.Fatalf("violations: %+v %v", r, err)
	}
	// A name copied from a listing that showed bytes not UTF-8 as U+FFFD
	// (new user, 2026-12-02): the failure says why; control: a plain
	// missing file gets no such note.
	out, _ = json.Marshal(Result{Text: "read caf\uFFFD.txt: no such file or directory", IsError: true})
	if r, _ := FromJail(jail.Result{Output: out}, nil); !strings.Contains(r.Text, "bytes that are not UTF-8") {
		t.Errorf("a name with U+FFFD: %q", r.Text)
	}
	out, _ = json.Marshal(Result{Text: "read cafe.txt: no such file or directory", IsError: true})
	if r, _ := FromJail(jail.Result{Output: out}, nil); strings.Contains(r.Text, "UTF-8") {
		t.Errorf("control: a plain missing file: %q", r.Text)
	}
}

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

func TestCommandResult(t *testing.T) {
	long := strings.Repeat("x", MaxCommandOutputBytes) + "THE END"
	tests := []struct {
		name    string
		res     jail.Result
		isError bool
		has     []string
	}{
		{"ok", jail.Result{Stdout: []byte("hi\n")}, false, []string{"hi\n[exit code 0]"}},
		{"fails", jail.Result{ExitCode: 2, Stdout: []byte("out"), Stderr: []byte("err\n")}, true, []string{"out\nerr\n[exit code 2]"}},
		{"long output keeps head and tail", jail.Result{Stdout: []byte("START" + long)}, false, []string{"START", "THE END", "bytes omitted"}},
		{"timeout", jail.Result{TimedOut: true, ExitCode: 137}, true, []string{"timed out"}},
		{"violations", jail.Result{Violations: []string{"/ws/.git/hooks/pre-commit"}}, false, []string{"protected paths", "pre-commit"}},
		{"limit", jail.Result{ExitCode: 137, Signal: "SIGKILL", Limit: jail.LimitMemory, LimitDetail: "the call used more than its memory limit of 1.0 GiB"}, true, []string{"killed by SIGKILL", "[brig's memory limit: the call used more than its memory limit of 1.0 GiB]"}},
	}
	for _, tt := range tests {
		r := CommandResult(tt.res)
		if r.IsError != tt.isError {
			t.Errorf("%s: IsError = %v", tt.name, r.IsError)
		}
		for _, h := range tt.has {
			if !strings.Contains(r.Text, h) {
				t.Errorf("%s: %q lacks %q", tt.name, tail(r.Text), h)
			}
		}
		if len(r.Text) > MaxCommandOutputBytes+512 {
			t.Errorf("%s: %d bytes", tt.name, len(r.Text))
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
}

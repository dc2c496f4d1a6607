package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"brig/test/fakeprovider"
)

func taskCall(desc, prompt string) fakeprovider.ToolCall {
	b, _ := json.Marshal(map[string]string{"description": desc, "prompt": prompt})
	return fakeprovider.ToolCall{Name: "task", Input: b}
}

// subagentScript: the main agent sends two subagents; each reads or lists,
// then sums up; the main agent checks both summaries.
func subagentScript() []fakeprovider.Turn {
	return []fakeprovider.Turn{
		{Text: "Two helpers.", ToolCalls: []fakeprovider.ToolCall{taskCall("read main.go", "MARK-A: what does main.go print?"), taskCall("list", "MARK-B: list the files")}},
		{Match: "SUMMARY-A", Text: "All done.", Check: []fakeprovider.Check{{Call: 0, Contains: "SUMMARY-A: it prints hello"}, {Call: 1, Contains: "SUMMARY-B: main.go"}}},
		{Match: "MARK-A", ToolCalls: []fakeprovider.ToolCall{tc("read_file", `{"path":"main.go"}`)}, Usage: &fakeprovider.Usage{Input: 500, Output: 20}},
		{Match: "MARK-A", Text: "SUMMARY-A: it prints hello", Check: []fakeprovider.Check{{Call: 0, Contains: "hello"}}, Usage: &fakeprovider.Usage{Input: 600, Output: 30}},
		{Match: "MARK-B", ToolCalls: []fakeprovider.ToolCall{tc("list_directory", `{"path":"."}`)}, Usage: &fakeprovider.Usage{Input: 400, Output: 20}},
		{Match: "MARK-B", Text: "SUMMARY-B: main.go and .git", Check: []fakeprovider.Check{{Call: 0, Contains: "main.go"}}, Usage: &fakeprovider.Usage{Input: 450, Output: 25}},
	}
}

// TestSubagentsStreamJSON: in -p --output stream-json every event of a
// subagent carries its task call's id as parent; the result counts what
// each subagent spent and includes it in the run's usage; the session
// saved their transcripts, and `brig sessions show` prints them under
// their calls.
func TestSubagentsStreamJSON(t *testing.T) {
	for _, wire := range []string{"anthropic", "openai", "openaichat"} {
		t.Run(wire, func(t *testing.T) {
			e := newEnv(t, wire, subagentScript()...)
			r := e.run(t, append(modelArgs(wire), "-p", "send helpers", "--output", "stream-json")...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			e.srv.Verify(t)
			var taskIDs []string
			byParent := map[string][]string{}
			var result struct {
				Result    string
				Session   string
				Usage     struct{ Input, Output int }
				Subagents []struct {
					Parent    string
					Requests  int
					ToolCalls int `json:"tool_calls"`
					Usage     struct{ Input, Output int }
				}
			}
			for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				var rec struct {
					Type, ID, Name, Parent string
					Args                   json.RawMessage
				}
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("%v: %s", err, line)
				}
				switch {
				case rec.Type == "result":
					json.Unmarshal([]byte(line), &result)
				case rec.Type == "tool_start" && rec.Name == "task" && rec.Parent == "":
					// The two start side by side: order them by prompt.
					if strings.Contains(string(rec.Args), "MARK-A") {
						taskIDs = append([]string{rec.ID}, taskIDs...)
					} else {
						taskIDs = append(taskIDs, rec.ID)
					}
				case rec.Parent != "":
					byParent[rec.Parent] = append(byParent[rec.Parent], rec.Type+":"+rec.Name)
				}
			}
			if len(taskIDs) != 2 || result.Result != "All done." {
				t.Fatalf("task calls %v, result %+v", taskIDs, result)
			}
			for i, want := range []string{"tool_end:read_file", "tool_end:list_directory"} {
				got := strings.Join(byParent[taskIDs[i]], " ")
				if !strings.Contains(got, want) || !strings.Contains(got, "usage:") {
					t.Errorf("subagent %d's events: %s", i, got)
				}
			}
			if len(result.Subagents) != 2 {
				t.Fatalf("subagents in the result: %+v", result.Subagents)
			}
			subIn := 0
			for _, s := range result.Subagents {
				if s.Requests != 2 || s.ToolCalls != 1 {
					t.Errorf("subagent %+v", s)
				}
				subIn += s.Usage.Input
			}
			if subIn != 1950 || result.Usage.Input <= subIn {
				t.Fatalf("the subagents' input %d; the run's %d", subIn, result.Usage.Input)
			}
			// The session shows their transcripts under their calls.
			show := e.run(t, "sessions", "show", result.Session)
			if show.code != 0 {
				t.Fatalf("sessions show: %d\n%s", show.code, show.stderr)
			}
			for _, want := range []string{"    │ > MARK-A: what does main.go print?", "    │ • read_file main.go", "    │ SUMMARY-B: main.go and .git"} {
				if !strings.Contains(show.stdout, want) {
					t.Errorf("sessions show lacks %q:\n%s", want, show.stdout)
				}
			}
		})
	}
}

// TestSubagentsTextOutput: in text mode a subagent's calls show on stderr
// under the main agent's, and its text is not printed as the answer.
func TestSubagentsTextOutput(t *testing.T) {
	e := newEnv(t, "anthropic", subagentScript()...)
	r := e.run(t, "--model", "claude-sonnet-4-5", "-p", "send helpers")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, "SUMMARY-A") || !strings.Contains(r.stdout, "All done.") {
		t.Fatalf("stdout:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "  ↳ ▸ read_file") || !strings.Contains(r.stderr, "▸ task") {
		t.Fatalf("stderr:\n%s", r.stderr)
	}
	// The summary counts what the subagents did beside the main agent's
	// work, as its tokens and cost include theirs.
	if !strings.Contains(r.stderr, "(and 4 requests, 2 tool calls by 2 subagents)") {
		t.Errorf("the summary line:\n%s", r.stderr)
	}
	// The subagents' calls are in the audit log, as the main agent's are.
	log := e.run(t, "log", "--json")
	for _, want := range []string{`"tool":"task"`, `"tool":"read_file"`, `"tool":"list_directory"`} {
		if !strings.Contains(log.stdout, want) {
			t.Errorf("brig log lacks %s:\n%s", want, log.stdout)
		}
	}
}

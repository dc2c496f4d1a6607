package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brig/test/composition"
	"brig/test/fakeprovider"
	"brig/test/scenario"
)

// TestFixTask runs a whole task — look, read, run the failing tests, fix,
// rerun, commit, inspect the commit by the hash the commit printed —
// through brig -p in every wire format, output format and unattended mode.
// Each scripted step checks what the model received from the step before,
// so the run only finishes when the model sees its tools' output.
func TestFixTask(t *testing.T) {
	for _, wire := range []string{"anthropic", "openai", "openaichat"} {
		for _, output := range []string{"text", "json", "stream-json"} {
			for _, mode := range []string{"edit", "auto"} {
				t.Run(wire+"/"+output+"/"+mode, func(t *testing.T) {
					e := newEnv(t, wire, scenario.FixTask()...)
					if err := scenario.Repo(e.ws); err != nil {
						t.Fatal(err)
					}
					args := append(modelArgs(wire), "-p", "make the tests pass and commit", "--mode", mode, "--output", output)
					if mode == "edit" {
						args = append(args, "--yes") // bash asks in edit mode; --yes answers within the mode's profile
					}
					r := e.run(t, args...)
					e.srv.Verify(t)
					if r.code != 0 {
						t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
					}
					if b, _ := os.ReadFile(e.ws + "/calc.py"); !strings.Contains(string(b), "return a + b") {
						t.Fatalf("calc.py was not fixed: %q", b)
					}
					checkOutput(t, output, r)
				})
			}
		}
	}
}

// checkOutput: every output format carries each call's result as the
// model received it.
func checkOutput(t *testing.T, output string, r result) {
	t.Helper()
	switch output {
	case "text":
		// The answer on stdout; the calls and a short view of their
		// results on stderr.
		if !strings.Contains(r.stdout, "both tests pass, committed as ") {
			t.Errorf("final answer missing from stdout:\n%s", r.stdout)
		}
		if !strings.Contains(r.stderr, "FAILED (failures=1)") {
			t.Errorf("the failing test run is not shown on stderr:\n%s", r.stderr)
		}
	case "json":
		var sum struct {
			Result    string `json:"result"`
			ToolCalls []struct {
				Name    string `json:"name"`
				Result  string `json:"result"`
				IsError bool   `json:"is_error"`
			} `json:"calls"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
			t.Fatalf("%v: %q", err, r.stdout)
		}
		if len(sum.ToolCalls) != 7 {
			t.Fatalf("%d calls in the JSON summary, want 7: %s", len(sum.ToolCalls), r.stdout)
		}
		if c := sum.ToolCalls[2]; c.Name != "bash" || !c.IsError || !strings.Contains(c.Result, "AssertionError: -1 != 5") {
			t.Errorf("the failing test run in the JSON summary: %+v", c)
		}
	case "stream-json":
		var results []string
		sc := bufio.NewScanner(strings.NewReader(r.stdout))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var ev struct {
				Type   string `json:"type"`
				Name   string `json:"name"`
				Result string `json:"result"`
			}
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Fatalf("%v: %q", err, sc.Text())
			}
			if ev.Type == "tool_end" {
				results = append(results, ev.Result)
			}
		}
		if len(results) != 7 || !strings.Contains(results[2], "FAILED (failures=1)") || !strings.Contains(results[4], "Ran 2 tests") {
			t.Errorf("tool_end events do not carry the results (%d events): %q", len(results), results)
		}
	}
}

// TestFixTaskThenResume: after the task, a continued session sends the
// model the earlier tool results with their content.
func TestFixTaskThenResume(t *testing.T) {
	turns := append(scenario.FixTask(), fakeprovider.Turn{Text: "The first run failed in test_add."}, fakeprovider.Turn{Text: "Noted."}, fakeprovider.Turn{Text: "Summary: add was fixed and committed."})
	e := newEnv(t, "anthropic", turns...)
	if err := scenario.Repo(e.ws); err != nil {
		t.Fatal(err)
	}
	if r := e.run(t, append(modelArgs("anthropic"), "-p", "fix it", "--mode", "auto")...); r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := e.run(t, append(modelArgs("anthropic"), "-c", "-p", "what did the first test run say?")...); r.code != 0 {
		t.Fatalf("continue: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := e.srv.Requests()
	last := reqs[len(reqs)-1]
	var texts []string
	for _, tr := range last.ToolResults() {
		texts = append(texts, tr.Text)
	}
	all := strings.Join(texts, "\n---\n")
	for _, want := range []string{"calc.py", "return a - b", "AssertionError: -1 != 5", "Ran 2 tests", "calc: add adds"} {
		if !strings.Contains(all, want) {
			t.Errorf("the resumed request lacks %q in its tool results:\n%s", want, all)
		}
	}
	// The README's `brig -c --compact`, without a terminal: it compacts
	// and exits. (A session this short has nothing worth compacting: a
	// long note first gives its older part more than a summary's size.)
	note := "Keep these notes for later. " + strings.Repeat("The parser must keep every comment. ", 700)
	if r := e.run(t, append(modelArgs("anthropic"), "-c", "-p", note)...); r.code != 0 {
		t.Fatalf("continue with a long note: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := e.run(t, append(modelArgs("anthropic"), "-c", "--compact")...); r.code != 0 || !strings.Contains(r.stderr, "brig: compacted session") {
		t.Fatalf("-c --compact: exit %d\n%s", r.code, r.stderr)
	}
	// Again at once: nothing to compact is not a failure (it exited 2,
	// as bad usage), and no request is sent for it.
	sent := len(e.srv.Requests())
	if r := e.run(t, append(modelArgs("anthropic"), "-c", "--compact")...); r.code != 0 || !strings.Contains(r.stderr, "is left as it was: nothing to compact") || len(e.srv.Requests()) != sent {
		t.Fatalf("-c --compact twice: exit %d, %d requests more\n%s", r.code, len(e.srv.Requests())-sent, r.stderr)
	}
}

// TestScenarioFailsBlind: the check machinery itself — a model that acts
// on a result it did not get cannot finish the script, and the failure
// names the result it got.
func TestScenarioFailsBlind(t *testing.T) {
	e := newEnv(t, "anthropic",
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{scenario.Bash("echo one")}},
		fakeprovider.Turn{Check: []fakeprovider.Check{scenario.Has(0, "two")}, Text: "never"},
	)
	r := e.run(t, append(modelArgs("anthropic"), "-p", "x", "--mode", "auto")...)
	fails := e.srv.Failures()
	if r.code == 0 || len(fails) != 1 || !strings.Contains(fails[0].Result, "one") {
		t.Fatalf("exit %d, failures %+v\n%s", r.code, fails, r.stderr)
	}
}

// TestEdgeResults: what the model gets from the hard cases — a flood of
// output, stderr alone, a timeout, a jail refusal, huge and binary files.
func TestEdgeResults(t *testing.T) {
	for _, wire := range []string{"anthropic", "openai", "openaichat"} {
		t.Run(wire, func(t *testing.T) {
			e := newEnv(t, wire)
			canary, err := scenario.Fixtures(e.ws, filepath.Join(filepath.Dir(e.ws), "outside"))
			if err != nil {
				t.Fatal(err)
			}
			e.srv.SetScript(fakeprovider.Script{Turns: scenario.Edges(canary)})
			r := e.run(t, append(modelArgs(wire), "-p", "x", "--mode", "auto")...)
			e.srv.Verify(t)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
		})
	}
}

// TestToolTour: every native tool's result as the model receives it.
func TestToolTour(t *testing.T) {
	e := newEnv(t, "anthropic")
	if _, err := scenario.Fixtures(e.ws, filepath.Join(filepath.Dir(e.ws), "outside")); err != nil {
		t.Fatal(err)
	}
	e.srv.SetScript(fakeprovider.Script{Turns: scenario.ToolTour()})
	r := e.run(t, append(modelArgs("anthropic"), "-p", "x", "--mode", "auto", "--yes")...)
	e.srv.Verify(t)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
}

// TestDenialReachesTheModel: with nobody to ask, a call that needs
// approval is answered with why it did not run.
func TestDenialReachesTheModel(t *testing.T) {
	e := newEnv(t, "anthropic",
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{scenario.Bash("touch made-by-the-model")}},
		fakeprovider.Turn{Check: []fakeprovider.Check{scenario.Failed(0, true), scenario.Has(0, "not approved: the call needs approval")}, Text: "ok"},
	)
	r := e.run(t, append(modelArgs("anthropic"), "-p", "x", "--mode", "ask")...)
	e.srv.Verify(t)
	if _, err := os.Stat(e.ws + "/made-by-the-model"); r.code != 0 || err == nil {
		t.Fatalf("exit %d, file made: %v\n%s", r.code, err == nil, r.stderr)
	}
}

// scenarioTests are the scenario tests, as a -test.run pattern.
const scenarioTests = `^(TestComposition|TestFixTask|TestFixTaskThenResume|TestScenarioFailsBlind|TestEdgeResults|TestToolTour|TestDenialReachesTheModel)$`

// TestComposition checks that a run is in the composition it was started
// for (test/composition); in the test's own run it is the control.
func TestComposition(t *testing.T) { composition.Verify(t, brig) }

// compositionUID is this package's unprivileged user for the
// compositions; the escape suite uses 65534 and test/tui 65533, so that
// packages running at the same time never share a uid's process budget.
const compositionUID = 65532

// TestScenariosInEveryComposition runs the scenario tests again without
// user namespaces (brig in a user namespace that cannot create another),
// as an unprivileged uid, and both: ordinary work must go the same way in
// each.
func TestScenariosInEveryComposition(t *testing.T) {
	composition.Run(t, scenarioTests, brig, compositionUID)
}

// TestFullWorkerCalls: the calls only the full jail worker can run — a
// web_fetch, and an answer whose read-only calls (a view_image among
// them) run as one batch — reach their tools and return their results
// through the real binary, whose usual calls run in the light worker (a
// call sent to the light one would come back as an unknown tool).
func TestFullWorkerCalls(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<html><body><h1>Landing</h1><p>fetched <b>page-canary-41</b></p></body></html>")
	}))
	t.Cleanup(site.Close)
	e := newEnv(t, "anthropic",
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{scenario.Call("web_fetch", `{"url":"`+site.URL+`/page"}`)}},
		fakeprovider.Turn{
			Check: []fakeprovider.Check{scenario.Has(0, "# Landing"), scenario.Has(0, "**page-canary-41**"), scenario.Failed(0, false)},
			ToolCalls: []fakeprovider.ToolCall{
				scenario.Call("read_file", `{"path":"main.go"}`),
				scenario.Call("view_image", `{"path":"pixel.png"}`),
				scenario.Bash("echo light"),
			},
		},
		fakeprovider.Turn{
			Check: []fakeprovider.Check{
				scenario.Has(0, "println(\"hello\")"), scenario.Has(1, "Image pixel.png: 4×3 image/png"), scenario.Has(2, "light"),
				scenario.Failed(0, false), scenario.Failed(1, false), scenario.Failed(2, false),
			},
			Text: "done",
		},
	)
	if _, err := scenario.Fixtures(e.ws, filepath.Join(filepath.Dir(e.ws), "outside")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(e.home+"/.config/brig", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.home+"/.config/brig/config.toml", []byte("[permissions]\nallow = [\"WebFetch(domain:127.0.0.1)\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := e.run(t, append(modelArgs("anthropic"), "-p", "x", "--mode", "auto")...)
	e.srv.Verify(t)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
}

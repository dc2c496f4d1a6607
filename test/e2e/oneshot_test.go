// Package e2e drives the real brig binary against the fake provider on
// loopback, in each wire format: whole tasks through the policy and the
// jail, hostile scripts, errors, retries and interrupts, observed from the
// outside the way a user or a script sees them.
package e2e

import (
	"brig/jail"
	"brig/test/brigbin"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"brig/test/fakeprovider"
)

var brig string

func TestMain(m *testing.M) {
	brigbin.Main(m, &brig)
}

// env is a workspace and a home for one run, with the provider variables
// pointing at a fake provider for the wire format.
type env struct {
	ws, home string
	vars     []string
	srv      *fakeprovider.Server
}

func newEnv(t *testing.T, wire string, turns ...fakeprovider.Turn) *env {
	t.Helper()
	return newEnvIn(t, "/var/tmp", wire, turns...)
}

// newEnvIn is newEnv with the workspace and home under parent.
func newEnvIn(t *testing.T, parent, wire string, turns ...fakeprovider.Turn) *env {
	t.Helper()
	root, err := os.MkdirTemp(parent, "brig-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	root, _ = filepath.EvalSymlinks(root)
	e := &env{ws: root + "/ws", home: root + "/home"}
	for _, d := range []string{e.ws + "/.git/hooks", e.home + "/.ssh"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(e.home+"/.ssh/id_ed25519", []byte("canary-key-bytes"), 0o600)
	os.WriteFile(e.ws+"/main.go", []byte("package main\n\nfunc main() { println(\"hello\") }\n"), 0o644)
	if e.srv, err = fakeprovider.Start(fakeprovider.Script{Turns: turns}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.srv.Close() })
	e.vars = []string{"PATH=/usr/bin:/bin", "HOME=" + e.home, "LANG=C.UTF-8"}
	if v, ok := os.LookupEnv(jail.TestABIEnv); ok {
		e.vars = append(e.vars, jail.TestABIEnv+"="+v) // a run capped at an older kernel's Landlock
	}
	switch wire {
	case "anthropic":
		e.vars = append(e.vars, "ANTHROPIC_API_KEY=sk-ant-e2e-secret", "ANTHROPIC_BASE_URL="+e.srv.URL())
	case "openai":
		e.vars = append(e.vars, "OPENAI_API_KEY=sk-e2e-secret", "OPENAI_BASE_URL="+e.srv.URL()+"/v1")
	case "openaichat":
		e.vars = append(e.vars, "OPENAI_BASE_URL="+e.srv.URL()+"/v1")
	}
	return e
}

func (e *env) cmd(args ...string) *exec.Cmd {
	c := exec.Command(brig, args...)
	c.Dir, c.Env = e.ws, e.vars
	return c
}

type result struct {
	code           int
	stdout, stderr string
}

func (e *env) run(t *testing.T, args ...string) result {
	t.Helper()
	c := e.cmd(args...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

func tc(name, input string) fakeprovider.ToolCall {
	return fakeprovider.ToolCall{Name: name, Input: json.RawMessage(input)}
}

func modelArgs(wire string) []string {
	switch wire {
	case "anthropic":
		return []string{"--model", "claude-sonnet-4-5"}
	case "openai":
		return []string{"--model", "gpt-5"}
	}
	return []string{"--model", "qwen3-coder"} // an unknown model on a compatible server: no key needed
}

// TestEditTaskEachWire: a task with several tool calls edits a file, in
// each wire format; the JSON summary says how it went.
func TestEditTaskEachWire(t *testing.T) {
	for _, wire := range []string{"anthropic", "openai", "openaichat"} {
		t.Run(wire, func(t *testing.T) {
			e := newEnv(t, wire,
				fakeprovider.Turn{Text: "Looking.", ToolCalls: []fakeprovider.ToolCall{tc("read_file", `{"path":"main.go"}`), tc("search_code", `{"pattern":"println"}`)}},
				fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("edit_file", `{"path":"main.go","old_string":"hello","new_string":"brig"}`)}},
				fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("bash", `{"command":"grep -c brig main.go"}`)}},
				fakeprovider.Turn{Text: "main.go now prints brig.", Usage: &fakeprovider.Usage{Input: 1000, Output: 50}},
			)
			r := e.run(t, append(modelArgs(wire), "-p", "say brig instead of hello", "--mode", "edit", "--yes", "--output", "json")...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			var sum struct {
				Result    string
				Stop      string
				ToolCalls int     `json:"tool_calls"`
				CostUSD   float64 `json:"cost_usd"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
				t.Fatalf("%v: %q", err, r.stdout)
			}
			if sum.Stop != "done" || sum.ToolCalls != 4 || sum.Result != "main.go now prints brig." {
				t.Fatalf("summary: %+v", sum)
			}
			if wire != "openaichat" && sum.CostUSD <= 0 {
				t.Fatalf("a priced model's cost is missing: %+v", sum)
			}
			if b, _ := os.ReadFile(e.ws + "/main.go"); !strings.Contains(string(b), `println("brig")`) {
				t.Fatalf("main.go = %q", b)
			}
			if strings.Contains(r.stdout+r.stderr, "e2e-secret") {
				t.Fatal("the API key was printed")
			}
			// The connection opened as the session was set up carried no
			// credential. Whether one was opened at all is a race with
			// the set-up: on a loaded machine the first request can leave
			// first, and an opening is then not sent (endpoint.Connect:
			// nothing within Fresh of a request; CI saw none, 2026-12-02).
			// endpoint's tests check the opening itself, and test/tui the
			// request going over it.
			openings, reqs := e.srv.Openings(), e.srv.Requests()
			if len(reqs) == 0 {
				t.Fatal("no request reached the server")
			}
			if len(openings) == 0 {
				t.Logf("%s: the first request left before the opening", wire)
			}
			for _, o := range openings {
				if o.Header.Get("X-Api-Key") != "" || o.Header.Get("Authorization") != "" || o.Path != reqs[0].Path {
					t.Errorf("an opening for %s carried a credential or missed the API's path (%s): %v", o.Path, reqs[0].Path, o.Header)
				}
			}
		})
	}
}

// TestHostileScript: the model tries to read a key, exfiltrate to a sink,
// plant a hook and kill its parent; every attempt fails, the run goes on,
// and the final answer arrives.
func TestHostileScript(t *testing.T) {
	e := newEnv(t, "anthropic",
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{
			tc("read_file", `{"path":"~/.ssh/id_ed25519"}`),
			tc("bash", `{"command":"cat ~/.ssh/id_ed25519 /proc/1/environ; env"}`),
			tc("write_file", `{"path":".git/hooks/pre-commit","content":"#!/bin/sh\necho pwned\n"}`),
			tc("bash", `{"command":"kill -9 $PPID; pkill -9 brig; kill -9 -1"}`),
		}},
		fakeprovider.Turn{Text: "All refused."},
	)
	r := e.run(t, "--model", "claude-sonnet-4-5", "-p", "be evil", "--mode", "auto", "--output", "stream-json")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "canary-key-bytes") || strings.Contains(r.stdout, "e2e-secret") {
		t.Fatalf("a secret reached the output:\n%s", r.stdout)
	}
	if _, err := os.Stat(e.ws + "/.git/hooks/pre-commit"); err == nil {
		t.Fatal("the hook was planted")
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var first, last struct{ Type, Result, Session string }
	json.Unmarshal([]byte(lines[len(lines)-1]), &last)
	if last.Type != "result" || last.Result != "All refused." {
		t.Fatalf("last line: %s", lines[len(lines)-1])
	}
	// The first line names the session, before the run ends.
	json.Unmarshal([]byte(lines[0]), &first)
	if first.Type != "start" || first.Session == "" || first.Session != last.Session {
		t.Fatalf("first line %s; the result's session %q", lines[0], last.Session)
	}
	// The secrets the model asked the provider for never went to it either.
	for _, req := range e.srv.Requests() {
		if bytes.Contains(req.Body, []byte("canary-key-bytes")) {
			t.Fatal("the key was sent to the provider")
		}
	}
}

// TestRetryThenSuccess: a 429 and a 529 are retried before anything of the
// answer arrived; the task then finishes.
func TestRetryThenSuccess(t *testing.T) {
	e := newEnv(t, "anthropic",
		fakeprovider.Turn{Error: &fakeprovider.ErrorReply{Status: 429, Type: "rate_limit_error", RetryAfter: "0"}},
		fakeprovider.Turn{Error: &fakeprovider.ErrorReply{Status: 529, Type: "overloaded_error"}},
		fakeprovider.Turn{Text: "fine now"},
	)
	r := e.run(t, "--model", "claude-sonnet-4-5", "-p", "hi")
	if r.code != 0 || !strings.Contains(r.stdout, "fine now") || len(e.srv.Requests()) != 3 {
		t.Fatalf("exit %d, %d requests\n%s\n%s", r.code, len(e.srv.Requests()), r.stdout, r.stderr)
	}
	// Each retry is one line for people, not a log record.
	if !strings.Contains(r.stderr, "brig: anthropic: rate limit (429 rate_limit_error") || !strings.Contains(r.stderr, "retrying in") ||
		!strings.Contains(r.stderr, "(attempt 3 of 4)") || strings.Contains(r.stderr, "level=") {
		t.Errorf("retry notices:\n%s", r.stderr)
	}
}

// TestServerErrorKeepsTheSession: a server error after a call's result,
// every retry used, ends -p with advice, and the kept session goes on
// with -c: the next request carries the call's result and the new words.
func TestServerErrorKeepsTheSession(t *testing.T) {
	fail := fakeprovider.Turn{Error: &fakeprovider.ErrorReply{Status: 500, Type: "api_error"}}
	e := newEnv(t, "anthropic",
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("bash", `{"command":"echo step-one-output"}`)}},
		fail, fail, fail, fail,
		fakeprovider.Turn{Text: "went on"},
	)
	r := e.run(t, "--model", "claude-sonnet-4-5", "--mode", "auto", "-p", "run step one")
	if r.code != 1 || !strings.Contains(r.stderr, "server error (500 api_error") || !strings.Contains(r.stderr, "try again in a moment") ||
		!strings.Contains(r.stderr, `the session is kept: brig -c -p "…" goes on from where it failed`) {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	r = e.run(t, "--model", "claude-sonnet-4-5", "-c", "-p", "go on")
	reqs := e.srv.Requests()
	if r.code != 0 || !strings.Contains(r.stdout, "went on") || len(reqs) != 6 {
		t.Fatalf("exit %d, %d requests\n%s\n%s", r.code, len(reqs), r.stdout, r.stderr)
	}
	last := string(reqs[5].Body)
	if !strings.Contains(last, "step-one-output") || !strings.Contains(last, "go on") || !strings.Contains(last, "run step one") {
		t.Errorf("the request after -c does not carry the session:\n%s", last)
	}

	// Nothing answered: no session is kept, and the advice does not offer one.
	e = newEnv(t, "anthropic", fail, fail, fail, fail)
	r = e.run(t, "--model", "claude-sonnet-4-5", "-p", "hi")
	if r.code != 1 || !strings.Contains(r.stderr, "try again in a moment") || strings.Contains(r.stderr, "brig -c") ||
		!strings.Contains(r.stderr, "no session was kept: run the same command again once it passes") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
}

// TestWebPageIsNotAnAPI: a base URL that serves a web page fails at once
// with what it is, not as a broken stream after every retry.
func TestWebPageIsNotAnAPI(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><title>Router login</title>")
	}))
	defer page.Close()
	e := newEnv(t, "anthropic")
	r := e.run(t, "--model", "claude-sonnet-4-5", "--base-url", page.URL, "-p", "hi")
	if r.code != 1 || !strings.Contains(r.stderr, `it answered with a web page titled "Router login"`) ||
		!strings.Contains(r.stderr, "check --base-url") || strings.Contains(r.stderr, "retrying") || strings.Contains(r.stderr, "<title>") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
}

// TestBadKey: a 401 fails with a message that says where the key came from
// and never shows it.
func TestBadKey(t *testing.T) {
	e := newEnv(t, "openai", fakeprovider.Turn{Error: &fakeprovider.ErrorReply{Status: 401, Type: "invalid_api_key", Message: "Incorrect API key provided: sk-e2e-secret"}})
	r := e.run(t, "--model", "gpt-5", "-p", "hi")
	if r.code != 1 || !strings.Contains(r.stderr, "OPENAI_API_KEY") || strings.Contains(r.stderr, "sk-e2e-secret") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
}

// TestNoProvider: with no key and no endpoint, one message lists every way
// to configure a provider.
func TestNoProvider(t *testing.T) {
	e := newEnv(t, "none")
	r := e.run(t, "-p", "hi")
	if r.code == 0 || !strings.Contains(r.stderr, "ANTHROPIC_API_KEY") || !strings.Contains(r.stderr, "--base-url") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
}

// TestIterationBound: the bound stops the loop, a summary is printed, and
// the exit status says so.
func TestIterationBound(t *testing.T) {
	again := fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("list_directory", `{"path":"."}`)}}
	e := newEnv(t, "openai", again, again, fakeprovider.Turn{Text: "Summary: I listed the directory twice."})
	r := e.run(t, "--model", "gpt-5", "-p", "loop", "--max-iterations", "2")
	if r.code != 3 || !strings.Contains(r.stdout, "Summary") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestInterruptLeavesNothingRunning: SIGINT, SIGTERM or SIGHUP (a closed
// terminal) during a long tool call ends the run with 130, 143 or 129,
// saying which, and the call's process is gone. Started with SIGHUP
// ignored (nohup), brig keeps ignoring it: a SIGHUP and then a SIGTERM
// end it as the SIGTERM does (both pending, the SIGHUP would come first).
func TestInterruptLeavesNothingRunning(t *testing.T) {
	// A test run under nohup would hand brig an ignored SIGHUP, which it
	// keeps (the nohup case below): caught here, the signal is at its
	// default in every program this test starts (execve resets caught
	// signals, not ignored ones).
	signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP)
	defer signal.Reset(syscall.SIGHUP)
	for _, c := range []struct {
		name  string
		sigs  []syscall.Signal
		nohup bool
		want  int
		says  string
	}{
		{"SIGINT", []syscall.Signal{syscall.SIGINT}, false, 130, "brig: interrupted (Ctrl-C)"},
		{"SIGTERM", []syscall.Signal{syscall.SIGTERM}, false, 143, "brig: stopped by SIGTERM"},
		{"SIGHUP", []syscall.Signal{syscall.SIGHUP}, false, 129, "brig: stopped by SIGHUP"},
		{"nohup", []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM}, true, 143, "brig: stopped by SIGTERM"},
	} {
		t.Run(c.name, func(t *testing.T) {
			marker := "brig-e2e-sleep-" + filepath.Base(t.TempDir())
			e := newEnv(t, "anthropic",
				fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("bash", `{"command":"exec -a `+marker+` sleep 60"}`)}},
				fakeprovider.Turn{Text: "never reached"},
			)
			cmd := e.cmd("--model", "claude-sonnet-4-5", "-p", "sleep", "--mode", "auto")
			if c.nohup {
				// The shell's exec keeps the ignored disposition, as nohup's does.
				cmd.Args = append([]string{"sh", "-c", `trap "" HUP; exec "$0" "$@"`, brig}, cmd.Args[1:]...)
				cmd.Path = "/bin/sh"
			}
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := waitDeadline(t)
			for !running(marker) {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("the tool call never started\n%s", errb.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			for _, sig := range c.sigs {
				cmd.Process.Signal(sig)
			}
			err := cmd.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != c.want || !strings.Contains(errb.String(), c.says) {
				t.Fatalf("exit: %v (want %d and %q)\n%s", err, c.want, c.says, errb.String())
			}
			for deadline := waitDeadline(t); running(marker); {
				if time.Now().After(deadline) {
					t.Fatal("the interrupted call's process is still running")
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// running reports whether a process whose command line starts with name
// exists.
func running(name string) bool {
	out, _ := exec.Command("pgrep", "-f", "^"+name).Output()
	return len(bytes.TrimSpace(out)) > 0
}

// TestCrashThenContinue: brig is SIGKILLed in the middle of a turn while a
// tool call runs; `brig sessions show` has every completed message, and
// `--continue` carries on with a history the provider accepts.
func TestCrashThenContinue(t *testing.T) {
	marker := "brig-e2e-crash-" + filepath.Base(t.TempDir())
	e := newEnv(t, "anthropic",
		fakeprovider.Turn{Text: "Reading first.", ToolCalls: []fakeprovider.ToolCall{tc("read_file", `{"path":"main.go"}`)}},
		fakeprovider.Turn{Text: "Now the long part.", ToolCalls: []fakeprovider.ToolCall{tc("bash", `{"command":"exec -a `+marker+` sleep 60"}`)}},
		fakeprovider.Turn{Text: "Resumed fine."},
	)
	c := e.cmd("--model", "claude-sonnet-4-5", "-p", "do the long thing", "--mode", "auto")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := waitDeadline(t)
	for !running(marker) {
		if time.Now().After(deadline) {
			c.Process.Kill()
			t.Fatal("the tool call never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The answer that started the call is written while the call starts
	// (the write and the jail overlap); give that write its moment, then
	// SIGKILL: no chance to clean up.
	for deadline := waitDeadline(t); !strings.Contains(e.run(t, "sessions", "list", "--json").stdout, `"messages": 4`); {
		if time.Now().After(deadline) {
			break // the assertions below say what is missing
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.Process.Kill()
	c.Wait()

	r := e.run(t, "sessions", "list", "--json")
	var listed struct{ Sessions []struct{ ID string } }
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil || len(listed.Sessions) != 1 {
		t.Fatalf("sessions list: %v\n%s\n%s", err, r.stdout, r.stderr)
	}
	list := listed.Sessions
	r = e.run(t, "sessions", "show", list[0].ID)
	for _, want := range []string{"do the long thing", "Reading first.", "package main", "Now the long part."} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("sessions show lacks %q:\n%s", want, r.stdout)
		}
	}

	r = e.run(t, "--model", "claude-sonnet-4-5", "-p", "carry on", "--continue", "--output", "json")
	if r.code != 0 || !strings.Contains(r.stdout, "Resumed fine.") || !strings.Contains(r.stdout, list[0].ID) {
		t.Fatalf("continue: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var sum struct {
		Cost        float64 `json:"cost_usd"`
		SessionCost float64 `json:"session_cost_usd"`
	}
	json.Unmarshal([]byte(r.stdout), &sum)
	if !(sum.SessionCost > sum.Cost && sum.Cost > 0) {
		t.Fatalf("the resumed session's cost must include the killed run's requests: %+v", sum)
	}
	reqs := e.srv.Requests()
	if last := reqs[len(reqs)-1]; last.Reject != "" {
		t.Fatalf("the resumed history was refused: %s", last.Reject)
	}
	// The resumed request carried the first turn: the tool call that was
	// running got an answer so the provider accepted it.
	if !bytes.Contains(reqs[len(reqs)-1].Body, []byte("do the long thing")) {
		t.Fatal("the resumed request lost the first prompt")
	}
	for deadline := waitDeadline(t); running(marker); {
		if time.Now().After(deadline) {
			t.Fatal("the killed run's tool call outlived it")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWebSearchFromConfig: the provider's web search is off by default, on
// from the user's config, and a repository's own config cannot turn it on
// until trusted.
func TestWebSearchFromConfig(t *testing.T) {
	e := newEnv(t, "anthropic", fakeprovider.Turn{Text: "a"}, fakeprovider.Turn{Text: "b"}, fakeprovider.Turn{Text: "c"})
	sent := func() bool {
		reqs := e.srv.Requests()
		return bytes.Contains(reqs[len(reqs)-1].Body, []byte("web_search"))
	}
	os.MkdirAll(e.ws+"/.brig", 0o755)
	os.WriteFile(e.ws+"/.brig/config.toml", []byte("[agent]\nweb_search = true\n"), 0o644)
	if r := e.run(t, "--model", "claude-sonnet-4-5", "-p", "x"); r.code != 0 || sent() {
		t.Fatalf("an untrusted repository config turned web search on (exit %d)\n%s", r.code, r.stderr)
	}
	os.MkdirAll(e.home+"/.config/brig", 0o700)
	os.WriteFile(e.home+"/.config/brig/config.toml", []byte("[agent]\nweb_search = true\n"), 0o600)
	if r := e.run(t, "--model", "claude-sonnet-4-5", "-p", "x"); r.code != 0 || !sent() {
		t.Fatalf("the user's config did not turn web search on (exit %d)\n%s", r.code, r.stderr)
	}
}

// TestResumeWithoutIDIsTheLatest: in one-shot mode there is no picker, so
// --resume with no id continues the workspace's latest session.
func TestResumeWithoutIDIsTheLatest(t *testing.T) {
	e := newEnv(t, "anthropic", fakeprovider.Turn{Text: "first"}, fakeprovider.Turn{Text: "second"})
	session := func(r result) string {
		var s struct{ Session string }
		if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || s.Session == "" {
			t.Fatalf("no session in %q (exit %d, %s)", r.stdout, r.code, r.stderr)
		}
		return s.Session
	}
	first := session(e.run(t, "--model", "claude-sonnet-4-5", "-p", "one", "--output", "json"))
	r := e.run(t, "--model", "claude-sonnet-4-5", "-p", "two", "--output", "json", "--resume")
	if got := session(r); got != first || !strings.Contains(r.stdout, "second") {
		t.Fatalf("--resume continued %s, want %s:\n%s", got, first, r.stdout)
	}
	reqs := e.srv.Requests()
	if !bytes.Contains(reqs[len(reqs)-1].Body, []byte(`"one"`)) {
		t.Fatal("the resumed request lost the first turn")
	}
}

// waitDeadline is when a wait for an event gives up: shortly before the
// test's own deadline, so that a loaded machine is slower, not red.
func waitDeadline(t *testing.T) time.Time {
	if d, ok := t.Deadline(); ok {
		return d.Add(-10 * time.Second)
	}
	return time.Now().Add(10 * time.Minute)
}

// TestResumeKeepsTheSessionsModel: a session resumed without --model goes
// on with its own model and provider, not the default of whichever key
// is set (with both keys set, that default is Anthropic's); control: an
// explicit --model still switches it.
func TestResumeKeepsTheSessionsModel(t *testing.T) {
	e := newEnv(t, "openai", fakeprovider.Turn{Text: "first"}, fakeprovider.Turn{Text: "second"}, fakeprovider.Turn{Text: "third"})
	e.vars = append(e.vars, "ANTHROPIC_API_KEY=sk-ant-e2e-secret", "ANTHROPIC_BASE_URL="+e.srv.URL())
	if r := e.run(t, "--model", "gpt-5", "-p", "one"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if r := e.run(t, "-p", "two", "--continue"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	last := reqs[len(reqs)-1]
	if last.Path != "/v1/responses" || last.Decoded["model"] != "gpt-5" {
		t.Fatalf("the resumed session went to %s with %v, want /v1/responses with gpt-5", last.Path, last.Decoded["model"])
	}
	if r := e.run(t, "--model", "claude-sonnet-4-5", "-p", "three", "--continue"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs = e.srv.Requests()
	if last = reqs[len(reqs)-1]; last.Path != "/v1/messages" {
		t.Fatalf("control: --model did not switch the resumed session (%s)", last.Path)
	}
}

// TestDeniedCallsSayHowToGoOn (new user, 2026-12-03): in ask mode -p
// cannot ask, so a write is denied; the run ends saying how many calls
// needed approval and how to let them run, and going on that way (-c
// with --yes) does run the call. The control: after the first run the
// file is absent.
func TestDeniedCallsSayHowToGoOn(t *testing.T) {
	write := fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("write_file", `{"path":"a.txt","content":"x\n"}`)}}
	done := fakeprovider.Turn{Text: "done"}
	e := newEnv(t, "anthropic", write, done, write, done)
	r := e.run(t, append(modelArgs("anthropic"), "-p", "write a.txt")...)
	if r.code != 0 || !strings.Contains(r.stderr, `1 call needed your approval and was denied: to let such calls run, go on with brig -c -p "go on" --yes`) {
		t.Fatalf("the denied run: %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "a.txt")); err == nil {
		t.Fatal("control: the denied write ran")
	}
	if r := e.run(t, append(modelArgs("anthropic"), "-c", "-p", "go on", "--yes")...); r.code != 0 || strings.Contains(r.stderr, "needed your approval") {
		t.Fatalf("going on with --yes: %d\n%s", r.code, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(e.ws, "a.txt")); err != nil || string(b) != "x\n" {
		t.Fatalf("going on with --yes did not write a.txt: %q, %v", b, err)
	}
}

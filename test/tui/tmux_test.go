// Package tui drives the real brig binary in a real terminal (tmux) against
// the fake provider: keys go in with send-keys, the screen comes back with
// capture-pane, and each test waits for what it expects with a deadline
// (never a fixed sleep as an assertion).
package tui

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"brig/jail"
	"brig/test/brigbin"
	"brig/test/fakeprovider"
)

var brig string

func TestMain(m *testing.M) {
	if _, err := exec.LookPath("tmux"); err != nil {
		fmt.Println("tmux is not installed: the real-terminal tests need it (apt-get install tmux)")
		os.Exit(1)
	}
	brigbin.Main(m, &brig)
}

var sockets atomic.Int32

// term is one workspace, home and fake provider, and a tmux server to run
// brig in.
type term struct {
	t        *testing.T
	root     string
	ws, home string
	srv      *fakeprovider.Server
	sock     string
	n        int
	last     string // the pane as last captured
	wire     string // the provider brig talks to; default anthropic
}

func newTerm(t *testing.T, turns ...fakeprovider.Turn) *term {
	t.Helper()
	root, err := os.MkdirTemp("/var/tmp", "brig-tui-")
	if err != nil {
		t.Fatal(err)
	}
	root, _ = filepath.EvalSymlinks(root)
	tm := &term{t: t, root: root, ws: root + "/ws", home: root + "/home"}
	t.Cleanup(func() { os.RemoveAll(root) })
	for _, d := range []string{tm.ws + "/.git", tm.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(tm.ws+"/main.go", []byte("package main\n\nfunc main() { println(\"hello\") }\n"), 0o644)
	if tm.srv, err = fakeprovider.Start(fakeprovider.Script{Turns: turns}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tm.srv.Close() })
	return tm
}

// launch starts brig with args in a new tmux window of 100x40 and waits for
// its input prompt.
func (tm *term) launch(args ...string) {
	tm.t.Helper()
	tm.n++
	script := filepath.Join(tm.root, fmt.Sprintf("run%d.sh", tm.n))
	var q []string
	model, provider := "claude-sonnet-4-5", "ANTHROPIC_API_KEY=sk-ant-tui-test ANTHROPIC_BASE_URL="+tm.srv.URL()
	switch tm.wire {
	case "openai":
		model, provider = "gpt-5", "OPENAI_API_KEY=sk-tui-test OPENAI_BASE_URL="+tm.srv.URL()+"/v1"
	case "openaichat":
		model, provider = "qwen3-coder", "OPENAI_BASE_URL="+tm.srv.URL()+"/v1"
	}
	for _, a := range append([]string{brig, "--model", model}, args...) {
		q = append(q, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	if v, ok := os.LookupEnv(jail.TestABIEnv); ok {
		provider += " " + jail.TestABIEnv + "=" + v // a run capped at an older kernel's Landlock
	}
	body := fmt.Sprintf("#!/bin/sh\ncd %s\nexec env -i PATH=/usr/bin:/bin HOME=%s TERM=xterm-256color LANG=C.UTF-8 %s %s\n",
		tm.ws, tm.home, provider, strings.Join(q, " "))
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		tm.t.Fatal(err)
	}
	if tm.sock != "" {
		tm.tmux("kill-server") // one brig at a time
	}
	tm.sock = fmt.Sprintf("brig-tui-%d-%d", os.Getpid(), sockets.Add(1))
	sock := tm.sock
	tm.t.Cleanup(func() { exec.Command("tmux", "-L", sock, "kill-server").Run() })
	// A pane whose command dies stays on screen (remain-on-exit), so that
	// a shell that could not start brig says why instead of taking the
	// server with it; the server ends itself 10 minutes after brig did, in
	// case this test never gets to kill it.
	conf := filepath.Join(tm.root, "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g remain-on-exit on\n"), 0o644); err != nil {
		tm.t.Fatal(err)
	}
	tm.last = ""
	if out, err := exec.Command("tmux", "-L", tm.sock, "-f", conf, "new-session", "-d", "-s", "main", "-x", "100", "-y", "40",
		"sh -c '"+script+"; echo \"[brig exited $?]\"; sleep 600; tmux -L "+tm.sock+" kill-server'").CombinedOutput(); err != nil {
		tm.t.Fatalf("tmux: %v\n%s", err, out)
	}
}

func (tm *term) tmux(args ...string) string {
	out, _ := exec.Command("tmux", append([]string{"-L", tm.sock}, args...)...).CombinedOutput()
	return string(out)
}

// screen is the pane with its scrollback. When the tmux server is gone
// nothing more can show, so it fails the test at once with what the pane
// showed last and what may have ended the server.
func (tm *term) screen() string {
	tm.t.Helper()
	out, err := exec.Command("tmux", "-L", tm.sock, "capture-pane", "-p", "-J", "-S", "-3000", "-t", "main").CombinedOutput()
	if err != nil {
		tm.t.Fatalf("the terminal is gone (tmux capture-pane: %v: %s)\n%s\nthe pane last showed:\n%s", err, bytes.TrimSpace(out), tm.diagnose(), tm.last)
	}
	tm.last = string(out)
	return tm.last
}

// diagnose describes this user's share of the machine's process budget and
// the server's socket: a failed fork (RLIMIT_NPROC counts every process of
// the uid) or a removed socket ends a tmux server.
func (tm *term) diagnose() string {
	var rl unix.Rlimit
	_ = unix.Getrlimit(unix.RLIMIT_NPROC, &rl)
	tasks := 0
	uid := strconv.Itoa(os.Getuid())
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" && f[1] == uid {
				threads, _ := os.ReadDir("/proc/" + e.Name() + "/task")
				tasks += len(threads)
			}
		}
	}
	sock := filepath.Join(cmp.Or(os.Getenv("TMUX_TMPDIR"), "/tmp"), "tmux-"+uid, tm.sock)
	present := "present"
	if _, err := os.Lstat(sock); err != nil {
		present = err.Error()
	}
	return fmt.Sprintf("uid %s has %d tasks (RLIMIT_NPROC %d); socket %s: %s", uid, tasks, rl.Cur, sock, present)
}

// waitFor polls the screen until it holds every want, or fails. timeout is
// how long it usually takes at most; the wait itself lasts until shortly
// before the test's deadline, so that a loaded machine is slower, not red.
func (tm *term) waitFor(timeout time.Duration, want ...string) string {
	tm.t.Helper()
	deadline := time.Now().Add(timeout)
	if d, ok := tm.t.Deadline(); ok {
		deadline = d.Add(-10 * time.Second)
	}
	for {
		s := tm.screen()
		missing := ""
		for _, w := range want {
			if !strings.Contains(s, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return s
		}
		if exited(s) {
			tm.t.Fatalf("brig exited before the screen showed %q:\n%s", missing, s)
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("the screen never showed %q:\n%s", missing, s)
		}
		time.Sleep(40 * time.Millisecond)
	}
}

// exited reports whether the pane says brig has exited: after that line
// nothing more comes.
func exited(screen string) bool { return strings.Contains(screen, "[brig exited ") }

// typeLine types text literally, then Enter.
func (tm *term) typeLine(text string) {
	tm.tmux("send-keys", "-t", "main", "-l", text)
	tm.tmux("send-keys", "-t", "main", "Enter")
}

func (tm *term) keys(keys ...string) {
	tm.tmux(append([]string{"send-keys", "-t", "main"}, keys...)...)
}

// answer answers the approval on screen with key (1, 2 or 3) as a person
// does, after a pause: brig ignores an allowing key that comes within its
// arming time (600 ms) of the previous key, so that a question appearing
// while the user types does not take the message's keys. Every key this
// test sent before was handled before the question appeared on screen,
// so a pause counted from seeing it is enough, however loaded the machine.
func (tm *term) answer(key string) {
	time.Sleep(approvalPause)
	tm.keys(key)
}

// approvalPause is longer than brig's arming time for approvals.
const approvalPause = 800 * time.Millisecond

// quit exits brig with Ctrl+C twice and waits for it to be gone.
func (tm *term) quit() string {
	tm.t.Helper()
	tm.keys("C-c")
	tm.waitFor(5*time.Second, "press Ctrl+C again")
	tm.keys("C-c")
	return tm.waitFor(15*time.Second, "[brig exited 0]")
}

// requestBody is the decoded body of the fake provider's i-th request.
func (tm *term) request(i int) map[string]any {
	tm.t.Helper()
	reqs := tm.srv.Requests()
	if len(reqs) <= i {
		tm.t.Fatalf("%d requests, want more than %d", len(reqs), i)
	}
	var m map[string]any
	if err := json.Unmarshal(reqs[i].Body, &m); err != nil {
		tm.t.Fatal(err)
	}
	return m
}

func toolNames(body map[string]any) []string {
	var names []string
	tools, _ := body["tools"].([]any)
	for _, t := range tools {
		if m, ok := t.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				names = append(names, n)
			}
		}
	}
	return names
}

func tc(name, input string) fakeprovider.ToolCall {
	return fakeprovider.ToolCall{Name: name, Input: json.RawMessage(input)}
}

// waitServer waits until ok holds of the fake provider; past the wait (the
// test's deadline, when it has one) it fails with why() and the screen.
func (tm *term) waitServer(timeout time.Duration, ok func() bool, why func() string) {
	tm.t.Helper()
	deadline := time.Now().Add(timeout)
	if d, ok := tm.t.Deadline(); ok {
		deadline = d.Add(-10 * time.Second) // wait on the event, not a budget
	}
	for !ok() {
		if time.Now().After(deadline) {
			tm.t.Fatalf("%s\n%s", why(), tm.screen())
		}
		time.Sleep(40 * time.Millisecond)
	}
}

// TestEditApprovedOnce: the model asks to edit a file; the prompt shows the
// edit and the grant; "1" allows it once and the file changes.
func TestEditApprovedOnce(t *testing.T) {
	tm := newTerm(t,
		fakeprovider.Turn{Text: "I will change the greeting.", ToolCalls: []fakeprovider.ToolCall{tc("edit_file", `{"path":"main.go","old_string":"hello","new_string":"brig"}`)}},
		fakeprovider.Turn{Text: "Done: main.go prints **brig**.", Usage: &fakeprovider.Usage{Input: 2000, Output: 30}},
	)
	tm.launch()
	tm.waitFor(10*time.Second, "sandbox", "› Ask brig")
	tm.typeLine("say brig instead of hello")
	s := tm.waitFor(10*time.Second, "approve edit_file?", "if allowed, it runs in a jail", `3 + func main() { println("brig") }`, "1 allow once")
	if !strings.Contains(s, "write    "+tm.ws) {
		t.Errorf("the grant does not name the write path:\n%s", s)
	}
	if data, _ := os.ReadFile(tm.ws + "/main.go"); bytes.Contains(data, []byte("brig")) {
		t.Fatal("the file changed before the approval")
	}
	tm.answer("1")
	tm.waitFor(10*time.Second, "allowed once", "Done: main.go prints brig.")
	if data, _ := os.ReadFile(tm.ws + "/main.go"); !bytes.Contains(data, []byte(`println("brig")`)) {
		t.Errorf("main.go after the approval:\n%s", data)
	}
	out := tm.quit()
	if !strings.Contains(out, "brig: 1 turn · ") || !strings.Contains(out, "resume with: brig --resume") {
		t.Errorf("no cost summary on exit:\n%s", out)
	}
}

// TestEscDuringBash: Esc during a long command ends the call and its
// process tree; the next prompt works. A single Ctrl+C does the same (and
// does not exit).
func TestEscDuringBash(t *testing.T) {
	for _, key := range []string{"Escape", "C-c"} {
		t.Run(key, func(t *testing.T) {
			marker := "brig-tui-sleep-" + filepath.Base(t.TempDir())
			tm := newTerm(t,
				fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("bash", `{"command":"(exec -a `+marker+`-child sleep 60) & exec -a `+marker+` sleep 60"}`)}},
				fakeprovider.Turn{Text: "after the interrupt, all good"},
			)
			tm.launch("--mode", "auto")
			tm.waitFor(10*time.Second, "› Ask brig")
			tm.typeLine("run the long thing")
			deadline := waitDeadline(t)
			for !running(marker) {
				if time.Now().After(deadline) {
					t.Fatalf("the command never started\n%s", tm.screen())
				}
				time.Sleep(20 * time.Millisecond)
			}
			tm.waitFor(5*time.Second, "working")
			tm.keys(key)
			tm.waitFor(10*time.Second, "interrupted")
			for deadline := waitDeadline(t); running(marker); {
				if time.Now().After(deadline) {
					t.Fatal("a process of the interrupted call is still running")
				}
				time.Sleep(20 * time.Millisecond)
			}
			if key == "C-c" {
				// The Ctrl+C prompt expires; brig is still there.
				s := tm.waitUntil(10*time.Second, "the Ctrl+C prompt gone", func(s string) bool { return !strings.Contains(s, "press Ctrl+C again") })
				if strings.Contains(s, "[brig exited") {
					t.Fatalf("one Ctrl+C exited brig:\n%s", s)
				}
			}
			tm.typeLine("carry on")
			tm.waitFor(10*time.Second, "after the interrupt, all good")
			// The second request is provider-valid: the interrupted call has its
			// result (the fake provider refuses a history without it).
			if r := tm.srv.Requests()[1]; r.Status != 200 {
				t.Errorf("the request after the interrupt was refused: %d %s", r.Status, r.Reject)
			}
			tm.quit()
		})
	}
}

func running(name string) bool {
	out, _ := exec.Command("pgrep", "-f", "^"+name).Output()
	return len(bytes.TrimSpace(out)) > 0
}

// TestQueuedMessage: a message typed while a command runs reaches the
// model with the tool results, at the next tool boundary.
func TestQueuedMessage(t *testing.T) {
	marker := "brig-tui-wait-" + filepath.Base(t.TempDir())
	// The command runs until the test has seen the message queued: a
	// sleep 2 could end first on a loaded machine, and the live line the
	// test waits for was then never drawn (CI, 2026-12-03).
	tm := newTerm(t,
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("bash", `{"command":"exec -a `+marker+` sh -c 'until [ -e release ]; do sleep 0.05; done'"}`)}},
		fakeprovider.Turn{Text: "noted the extra request"},
	)
	tm.launch("--mode", "auto")
	tm.waitFor(10*time.Second, "› Ask brig")
	tm.typeLine("wait a bit")
	deadline := waitDeadline(t)
	for !running(marker) {
		if time.Now().After(deadline) {
			t.Fatalf("the command never started\n%s", tm.screen())
		}
		time.Sleep(20 * time.Millisecond)
	}
	tm.typeLine("also update the README")
	tm.waitFor(5*time.Second, "queued › also update the README")
	if err := os.WriteFile(filepath.Join(tm.ws, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tm.waitFor(15*time.Second, "(queued, sent at a tool boundary) also update the README", "noted the extra request")
	body, _ := json.Marshal(tm.request(1)["messages"])
	if !bytes.Contains(body, []byte("also update the README")) || !bytes.Contains(body, []byte("tool_result")) {
		t.Errorf("the queued message did not go with the tool results:\n%s", body)
	}
	if n := len(tm.srv.Requests()); n != 2 {
		t.Errorf("%d requests: the queued message was also sent as a turn of its own", n)
	}
	tm.quit()
}

// TestModePlanHidesWriteTools: after /mode plan the next request
// advertises no write tool.
func TestModePlanHidesWriteTools(t *testing.T) {
	tm := newTerm(t, fakeprovider.Turn{Text: "first answer"}, fakeprovider.Turn{Text: "planning only"})
	tm.launch()
	tm.waitFor(10*time.Second, "› Ask brig")
	tm.typeLine("hello")
	tm.waitFor(10*time.Second, "first answer")
	if names := strings.Join(toolNames(tm.request(0)), " "); !strings.Contains(names, "edit_file") || !strings.Contains(names, "write_file") {
		t.Fatalf("ask mode advertises %s", names)
	}
	tm.typeLine("/mode plan")
	tm.waitFor(10*time.Second, "mode plan —", "· mode plan ·")
	tm.typeLine("what would you do?")
	tm.waitFor(10*time.Second, "planning only")
	names := toolNames(tm.request(1))
	for _, n := range names {
		switch n {
		case "edit_file", "write_file", "multi_edit", "delete_path", "move_path", "copy_path", "create_directory":
			t.Errorf("plan mode advertises %s (all: %v)", n, names)
		}
	}
	if !strings.Contains(strings.Join(names, " "), "read_file") {
		t.Errorf("plan mode lost the read tools: %v", names)
	}
	sys, _ := json.Marshal(tm.request(1)["system"])
	if !bytes.Contains(bytes.ToLower(sys), []byte("plan")) {
		t.Errorf("the system prompt does not tell the model about plan mode")
	}
	tm.quit()
}

// TestResumeRestoresSession: a second brig reopens the first one's
// session, with /resume and with --resume and no id (the picker): the
// history is shown and the model gets it back.
func TestResumeRestoresSession(t *testing.T) {
	tm := newTerm(t,
		fakeprovider.Turn{Text: "I will remember zebra."},
		fakeprovider.Turn{Text: "The word was zebra."},
		fakeprovider.Turn{Text: "Still zebra."},
	)
	tm.launch()
	tm.waitFor(10*time.Second, "› Ask brig")
	tm.typeLine("remember the word zebra")
	tm.waitFor(10*time.Second, "I will remember zebra.")
	tm.quit()

	tm.launch()
	tm.waitFor(10*time.Second, "› Ask brig", "· ctx ") // started: /resume needs the agent idle
	tm.typeLine("/resume")
	tm.waitFor(10*time.Second, "resume a session of this workspace", "remember the word zebra")
	tm.keys("Enter")
	tm.waitFor(10*time.Second, "resumed session", "end of the resumed history")
	tm.typeLine("which word?")
	tm.waitFor(10*time.Second, "The word was zebra.")
	body, _ := json.Marshal(tm.request(1)["messages"])
	if !bytes.Contains(body, []byte("remember the word zebra")) || !bytes.Contains(body, []byte("I will remember zebra.")) {
		t.Errorf("the resumed request lacks the earlier turn:\n%s", body)
	}
	tm.quit()

	tm.launch("--resume")
	tm.waitFor(10*time.Second, "resume a session of this workspace")
	tm.keys("Enter")
	tm.waitFor(10*time.Second, "end of the resumed history", "sandbox")
	tm.typeLine("and now?")
	tm.waitFor(10*time.Second, "Still zebra.")
	body, _ = json.Marshal(tm.request(2)["messages"])
	if !bytes.Contains(body, []byte("which word?")) {
		t.Errorf("--resume lost the second turn:\n%s", body)
	}
	tm.quit()
}

// TestHangupClosesTheRun: closing the terminal (the tmux server killed
// with brig on it: SIGHUP) closes the run as quitting does, so the
// session in which nothing was said is removed, not left behind for
// --continue to pick; until then it is on disk.
func TestHangupClosesTheRun(t *testing.T) {
	tm := newTerm(t)
	tm.launch()
	tm.waitFor(10*time.Second, "› Ask brig", "· ctx ")
	if n := tm.sessions(); n != 1 {
		t.Fatalf("while brig runs, %d sessions are listed, want its own", n)
	}
	tm.tmux("kill-server")
	for deadline := waitDeadline(t); tm.sessions() != 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the terminal closed and the session in which nothing was said is still listed: brig did not close its run")
		}
	}
}

// sessions is how many sessions `brig sessions list --all` lists for the
// term's home.
func (tm *term) sessions() int {
	tm.t.Helper()
	c := exec.Command(brig, "sessions", "list", "--all", "--json")
	c.Dir, c.Env = tm.ws, []string{"PATH=/usr/bin:/bin", "HOME=" + tm.home}
	out, err := c.Output()
	if err != nil {
		tm.t.Fatalf("brig sessions list: %v\n%s", err, out)
	}
	var l struct{ Sessions []json.RawMessage }
	if err := json.Unmarshal(out, &l); err != nil {
		tm.t.Fatalf("brig sessions list: %v\n%s", err, out)
	}
	return len(l.Sessions)
}

// waitDeadline is when a wait for an event gives up: shortly before the
// test's own deadline, so that a loaded machine is slower, not red.
func waitDeadline(t *testing.T) time.Time {
	if d, ok := t.Deadline(); ok {
		return d.Add(-10 * time.Second)
	}
	return time.Now().Add(10 * time.Minute)
}

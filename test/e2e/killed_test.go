package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"brig/test/fakeprovider"
)

// TestAKilledBrigsPlantIsSweptNextTime: the repository's make target,
// allowed in auto mode, plants an .envrc (direnv runs it on cd) and then
// waits; brig is killed with SIGKILL during the call, so no sweep runs
// after it and the .envrc is left (the precondition). The next session
// in the workspace takes it out before anything runs and says so.
// Control: the call's ordinary file stays.
func TestAKilledBrigsPlantIsSweptNextTime(t *testing.T) {
	e := newEnv(t, "anthropic",
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("bash", bashInput("make plant"))}},
		fakeprovider.Turn{Text: "hello again"},
	)
	mk := "plant:\n\t@printf 'echo pwned\\n' > .envrc; echo ordinary > planted.txt; sleep 120\n"
	if err := os.WriteFile(filepath.Join(e.ws, "Makefile"), []byte(mk), 0o644); err != nil {
		t.Fatal(err)
	}
	killMidCall(t, e, "--model", "claude-sonnet-4-5", "--mode", "auto", "-p", "plant it")
	r := e.run(t, "--model", "claude-sonnet-4-5", "-p", "hi")
	if r.code != 0 || !strings.Contains(r.stdout, "hello again") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Lstat(filepath.Join(e.ws, ".envrc")); err == nil {
		t.Error("the .envrc the killed call planted is still there")
	}
	if !strings.Contains(r.stderr, "stopped during a call") || !strings.Contains(r.stderr, ".envrc") {
		t.Errorf("the next session did not say what it undid:\n%s", r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(e.ws, "planted.txt")); err != nil || string(b) != "ordinary\n" {
		t.Errorf("control: the call's ordinary file: %q %v", b, err)
	}
}

// TestAKilledSandboxsPlantIsSweptNextTime: the same for brig sandbox,
// whose next run takes out what the killed one's command planted.
func TestAKilledSandboxsPlantIsSweptNextTime(t *testing.T) {
	e := newEnv(t, "anthropic")
	killMidCall(t, e, "sandbox", "--", "sh", "-c", "printf 'echo pwned\\n' > .envrc; echo ordinary > planted.txt; sleep 120")
	r := e.run(t, "sandbox", "--", "true")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Lstat(filepath.Join(e.ws, ".envrc")); err == nil {
		t.Error("the .envrc the killed command planted is still there")
	}
	if !strings.Contains(r.stderr, "stopped during a call") {
		t.Errorf("the next run did not say what it undid:\n%s", r.stderr)
	}
}

// killMidCall starts brig with args, kills it with SIGKILL once its call
// has made planted.txt (the call is under way; the test's own deadline
// bounds the wait), and checks that the .envrc the call planted is left.
func killMidCall(t *testing.T, e *env, args ...string) {
	t.Helper()
	c := e.cmd(args...)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(e.ws, "planted.txt")); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.Process.Signal(syscall.SIGKILL)
	c.Wait()
	if _, err := os.Lstat(filepath.Join(e.ws, ".envrc")); err != nil {
		t.Fatalf("the killed call left no .envrc (%v): the case proves nothing", err)
	}
}

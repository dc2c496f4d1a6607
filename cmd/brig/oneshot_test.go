package main

import (
	"brig/policy"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"brig/agent"
	"brig/agent/provider"
	"brig/tools"
)

// TestOneShotShowsAToolsOutputAsReceived: -p's stderr shows a command's
// output with its blank lines, nothing for an empty one, and the last
// lines of a long one with a count of those left out.
func TestOneShotShowsAToolsOutputAsReceived(t *testing.T) {
	show := func(name, text string) string {
		var out, errb bytes.Buffer
		p := newPrinter(outputText, &out, &errb)
		code := 0
		p.toolEnd(agent.ToolEvent{Name: name, Args: json.RawMessage(`{"command":"x"}`), Outcome: &agent.Outcome{
			Result: tools.Result{Text: text, Meta: tools.Meta{ExitCode: &code, Truncated: strings.Contains(text, "left out here")}},
		}}, "")
		_, body, _ := strings.Cut(errb.String(), "\n")
		return body
	}
	if got, want := show("bash", "a\n\nb\n\n\nc\n"), "  │ a\n  │\n  │ b\n  │\n  │\n  │ c\n"; got != want {
		t.Errorf("blank lines: got %q, want %q", got, want)
	}
	if got := show("bash", ""); got != "" {
		t.Errorf("empty output shown as %q", got)
	}
	if got := show("bash", "\n\n"); got != "" {
		t.Errorf("output of newlines alone shown as %q", got)
	}
	var long strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&long, "line %d\n\n", i)
	}
	got := show("bash", long.String())
	if !strings.HasPrefix(got, "  │ … 27 earlier lines") || !strings.HasSuffix(got, "  │ line 19\n  │\n  │ line 20\n") {
		t.Errorf("a long output shown as %q", got)
	}
	// The model's copy was cut in the middle: the note it got is shown
	// with the count (new user, 2026-12-02: only the tail was shown, and
	// read as the whole output).
	var cut strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&cut, "head %d\n", i)
	}
	cut.WriteString("[… 1.9 MiB (294923 lines) left out here; the whole output was 2.0 MiB …]\n")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&cut, "tail %d\n", i)
	}
	got = show("bash", cut.String())
	if !strings.HasPrefix(got, "  │ … 49 earlier lines (the model received them; --output json has what it received)\n  │ [… 1.9 MiB (294923 lines) left out here") || !strings.HasSuffix(got, "  │ tail 30\n") {
		t.Errorf("a cut output shown as %q", got)
	}
	// brig's own note is shown whole, to the fix at its end (a new user
	// saw the loopback note cut before it); the command's lines are cut.
	note := "[brig: " + strings.Repeat("why ", 100) + "the fix: curl --noproxy '' URL]"
	got = show("bash", strings.Repeat("o", 400)+"\n"+note+"\n")
	if !strings.Contains(got, "the fix: curl --noproxy '' URL]") || strings.Contains(got, strings.Repeat("o", 301)) {
		t.Errorf("a note and a long line shown as %q", got)
	}
	if got, want := show("read_file", "first\n\nthird\n"), "  │ first … (+2 lines)\n"; got != want {
		t.Errorf("another tool's result: got %q, want %q", got, want)
	}
}

// TestOneShotNoticeStartsOnItsOwnLine: a notice on stderr after streamed
// text that did not end its line ends that line first, so on a terminal
// (both streams on one screen) the two do not run together.
func TestOneShotNoticeStartsOnItsOwnLine(t *testing.T) {
	var both bytes.Buffer // stdout and stderr on the same terminal
	p := newPrinter(outputText, &both, &both)
	p.event(agent.Event{Kind: agent.EventText, Text: "Writing the file now"})
	p.event(agent.Event{Kind: agent.EventNotice, Text: "the answer was cut by the output limit; its tool calls were not run"})
	p.event(agent.Event{Kind: agent.EventText, Text: "done\n"})
	p.event(agent.Event{Kind: agent.EventNotice, Text: "second"})
	p.event(agent.Event{Kind: agent.EventText, Text: "Fetching it"})
	fmt.Fprintln(p.errLines(), "brig: refused bash's connection") // the approver's line
	want := "Writing the file now\nbrig: the answer was cut by the output limit; its tool calls were not run\ndone\nbrig: second\nFetching it\nbrig: refused bash's connection\n"
	if got := both.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestOneShotOverflowAdvice: a context overflow in -p advises compacting
// the session it names from the command line, not the TUI's /compact;
// when no session was kept (the first request alone was too large: new
// user, 2026-12-02, whose brig -c then compacted an unrelated older
// session), it advises sending less instead.
func TestOneShotOverflowAdvice(t *testing.T) {
	overflow := func() error {
		return fmt.Errorf("request: %w", &provider.Error{Kind: provider.ErrContextOverflow, Provider: provider.Anthropic, Model: "claude-x", Status: 400})
	}
	got := oneShotError(overflow(), true, "2026-12-02-ab12cd")
	if !strings.Contains(got, "brig --resume 2026-12-02-ab12cd --compact") || strings.Contains(got, "/compact") || strings.Contains(got, "brig -c") {
		t.Errorf("overflow in -p, session kept: %s", got)
	}
	got = oneShotError(overflow(), false, "2026-12-02-ab12cd")
	if strings.Contains(got, "compact") || strings.Contains(got, "--resume") || !strings.Contains(got, "the first request alone is too large") {
		t.Errorf("overflow in -p, no session kept: %s", got)
	}
}

// TestPromptBlocksRefusesBinaryStdin: binary data piped into -p (a NUL in
// it, as read_file tells a binary file) is refused with what it looks
// like and what to do, not sent as noise; text, and Latin-1 text that is
// not UTF-8, still go.
func TestPromptBlocksRefusesBinaryStdin(t *testing.T) {
	_, err := promptBlocks(context.Background(), "what is this", bytes.NewReader([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")))
	if err == nil || !strings.Contains(err.Error(), "standard input is binary (16 bytes, looks like image/png)") || !strings.Contains(err.Error(), "view_image") {
		t.Errorf("binary stdin: %v", err)
	}
	// Bytes with no NUL in them that are mostly not UTF-8 (a new user
	// piped /dev/urandom through tr -d '\0') are not text either.
	noise := bytes.Repeat([]byte{0xff, 0xfe, 0xc3, 'a'}, 64)
	if _, err := promptBlocks(context.Background(), "what is this", bytes.NewReader(noise)); err == nil || !strings.Contains(err.Error(), "standard input is not text (192 of its 256 bytes are not UTF-8)") {
		t.Errorf("non-UTF-8 noise: %v", err)
	}
	for _, text := range []string{"diff --git a/x b/x\n", "caf\xe9 au lait\n"} {
		blocks, err := promptBlocks(context.Background(), "review", strings.NewReader(text))
		if err != nil || len(blocks) != 2 {
			t.Errorf("text %q: %v %d blocks", text, err, len(blocks))
		}
	}
}

// TestConfigModelErrorNamesItsFile: a model set in the config that brig
// cannot serve is reported as the config's, with the file and --model as
// the way around it (a new user read it as if typed).
func TestConfigModelErrorNamesItsFile(t *testing.T) {
	e := newCLIEnv(t)
	cfg := filepath.Join(e.root, "config/brig/config.toml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("[agent]\nmodel = \"gpt-9\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ANTHROPIC_API_KEY", "test")
	t.Setenv("OPENAI_API_KEY", "")
	_, _, err := e.run(t, "", "-p", "hi", "--base-url", "http://127.0.0.1:9")
	if err == nil || !strings.Contains(err.Error(), `[agent] model = "gpt-9" in `+cfg+` (--model overrides it): model "gpt-9"`) {
		t.Errorf("error: %v", err)
	}
}

// TestCostInJSONHasNoFloatNoise (new user, 2026-12-02): a sum of costs
// such as 0.040086000000000004 is written as 0.040086.
func TestCostInJSONHasNoFloatNoise(t *testing.T) {
	b, err := json.Marshal(oneShotSummary{CostUSD: usd(0.030086 + 0.01), SessionCostUSD: usd(0.1 + 0.2), Calls: []callRecord{}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"cost_usd":0.040086,`) || !strings.Contains(string(b), `"session_cost_usd":0.3,`) {
		t.Errorf("costs in JSON: %s", b)
	}
}

// TestJSONOutputOfARunThatNeverStarted (new user, 2026-12-03): with
// --output json or stream-json, a run stopped by bad usage or a missing
// provider still writes its one result object on stdout, with the error
// stderr shows; in text mode stdout stays empty.
func TestJSONOutputOfARunThatNeverStarted(t *testing.T) {
	e := newCLIEnv(t)
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-p", "hi", "--output", "json", "--mode", "yolo"}, `unknown mode "yolo"`},
		{[]string{"-p", "hi", "--output", "stream-json"}, "no model provider is configured"},
	} {
		stdout, _, err := e.run(t, "", c.args...)
		if err == nil {
			t.Fatalf("%v: no error", c.args)
		}
		var got struct {
			Type, Stop, Error string
		}
		if jerr := json.Unmarshal([]byte(stdout), &got); jerr != nil {
			t.Fatalf("%v: stdout is not one JSON object (%v): %q", c.args, jerr, stdout)
		}
		if got.Stop != "failed" || !strings.Contains(got.Error, c.want) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %+v (error %v)", c.args, got, err)
		}
		if stream := slices.Contains(c.args, "stream-json"); stream != (got.Type == "result") {
			t.Errorf("%v: type %q", c.args, got.Type)
		}
	}
	// The control: text mode keeps stdout for the answer.
	if stdout, _, err := e.run(t, "", "-p", "hi", "--mode", "yolo"); err == nil || stdout != "" {
		t.Errorf("text mode: %q, %v", stdout, err)
	}
}

// TestInterruptedJSONSaysWhatStoppedIt (new user, 2026-12-03): a run a
// signal stopped says so in --output json and stream-json as text mode
// does, with the signal named, not the Go context's "context canceled".
func TestInterruptedJSONSaysWhatStoppedIt(t *testing.T) {
	newCLIEnv(t)
	t.Setenv("ANTHROPIC_API_KEY", "x")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1") // never reached: the run is stopped before it asks
	for _, c := range []struct {
		sig  syscall.Signal
		code int
		want string
	}{
		{syscall.SIGINT, 130, "interrupted (Ctrl-C); the running call's processes were killed"},
		{syscall.SIGTERM, 143, "stopped by SIGTERM; the running call's processes were killed"},
	} {
		for _, output := range []string{"json", "stream-json"} {
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(stopSignal{c.sig})
			root := newRootCmd()
			var out, errb bytes.Buffer
			root.SetOut(&out)
			root.SetErr(&errb)
			root.SetArgs([]string{"-p", "hi", "--output", output})
			err := root.ExecuteContext(ctx)
			var ee exitError
			if !errors.As(err, &ee) || ee.code != c.code {
				t.Errorf("%s, %s: %v, want exit status %d (stderr %q)", c.sig, output, err, c.code, errb.String())
			}
			last := out.String() // json: one object
			if output == "stream-json" {
				lines := strings.Split(strings.TrimSpace(last), "\n")
				last = lines[len(lines)-1] // the result event
			}
			var got struct{ Type, Stop, Error string }
			if jerr := json.Unmarshal([]byte(last), &got); jerr != nil {
				t.Fatalf("%s, %s: %v: %q", c.sig, output, jerr, out.String())
			}
			if got.Stop != "interrupted" || !strings.HasPrefix(got.Error, c.want) || strings.Contains(got.Error, "context canceled") {
				t.Errorf("%s, %s: %+v", c.sig, output, got)
			}
		}
	}
}

// TestStopSignalStoppedBy: the model's tool results name a SIGTERM or
// SIGHUP; only Ctrl-C is said to be the user's.
func TestStopSignalStoppedBy(t *testing.T) {
	for sig, want := range map[syscall.Signal]string{syscall.SIGINT: "the user", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP"} {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(stopSignal{sig})
		if got := agent.StoppedBy(ctx); got != want {
			t.Errorf("%s: %q, want %q", sig, got, want)
		}
	}
}

// TestPromptFromStdin (new user, 2026-12-03): `echo "fix the bug" | brig
// -p -` sends what was piped in as the prompt (it sent "-" and the input
// wrapped as <stdin>); with stdin a terminal it says what to do; piped
// input after a prompt ends at its own last newline, no blank line added.
func TestPromptFromStdin(t *testing.T) {
	text := func(blocks []provider.Block) []string {
		var s []string
		for _, b := range blocks {
			s = append(s, b.Text)
		}
		return s
	}
	blocks, err := promptBlocks(context.Background(), "-", strings.NewReader("fix the bug\n"))
	if got := text(blocks); err != nil || !slices.Equal(got, []string{"fix the bug"}) {
		t.Errorf("-p - with a piped prompt: %q %v", got, err)
	}
	if _, err := promptBlocks(context.Background(), "-", nil); err == nil || !strings.Contains(err.Error(), "-p - reads the prompt from standard input, which is a terminal (or /dev/null) here") {
		t.Errorf("-p - on a terminal: %v", err)
	}
	if _, err := promptBlocks(context.Background(), "-", strings.NewReader(" \n")); err == nil || !strings.Contains(err.Error(), "it was empty") {
		t.Errorf("-p - with nothing piped: %v", err)
	}
	for in, want := range map[string]string{"a\nb\n": "<stdin>\na\nb\n</stdin>", "a\nb": "<stdin>\na\nb\n</stdin>"} {
		blocks, err := promptBlocks(context.Background(), "review", strings.NewReader(in))
		if got := text(blocks); err != nil || !slices.Equal(got, []string{"review", want}) {
			t.Errorf("piped %q: %q %v", in, got, err)
		}
	}
}

// TestContinueWithNoSession (new user, 2026-12-03): brig -c in a
// workspace with no session says so once, and what to do ("no saved
// session for /ws: no such session" said it twice, and no more).
func TestContinueWithNoSession(t *testing.T) {
	e := newCLIEnv(t)
	t.Setenv("ANTHROPIC_API_KEY", "x")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1") // never reached
	for args, want := range map[string]string{
		"-c -p hi":       "no saved session for " + e.ws + " to continue: run without -c to start one",
		"--resume -p hi": "--resume (with -p and no id: the latest session): no saved session for " + e.ws + " to continue: leave out --resume to start one",
		"undo":           "no saved session for " + e.ws + " (brig sessions list --all lists every workspace's)",
	} {
		_, _, err := e.run(t, "", strings.Fields(args)...)
		if err == nil || err.Error() != want {
			t.Errorf("brig %s: %v, want %q", args, err, want)
		}
	}
}

// TestPromptFromStdinStopsWithTheContext (new user, 2026-12-03): with
// `sleep 15 | brig -p hi` a Ctrl-C waited for the pipe to close. The read
// gives up when the run is stopped.
func TestPromptFromStdinStopsWithTheContext(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := promptBlocks(ctx, "hi", r)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("a stopped read of a pipe no one closes: %v", err)
	}
}

// TestJSONResultKeepsTheNotices (new user, 2026-12-03): --output json
// dropped what text mode says on stderr (a retry, the model giving no
// summary, an unlisted model's price): the result object lists them.
func TestJSONResultKeepsTheNotices(t *testing.T) {
	var out, errb bytes.Buffer
	p := newPrinter(outputJSON, &out, &errb)
	p.note("model x is not in brig's registry")
	p.event(agent.Event{Kind: agent.EventNotice, Text: "anthropic: overloaded, retrying in 1s"})
	p.event(agent.Event{Kind: agent.EventNotice, Parent: "t1", Text: "a subagent's own"})
	p.finish(oneShotSummary{Stop: agent.StopDone})
	var got struct{ Notices []string }
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Notices) != 2 || got.Notices[0] != "model x is not in brig's registry" || got.Notices[1] != "anthropic: overloaded, retrying in 1s" {
		t.Errorf("notices %q", got.Notices)
	}
	if errb.Len() != 0 {
		t.Errorf("json mode wrote to stderr: %q", errb.String())
	}
}

// TestDeniedCallsNote (new user, 2026-12-03): the advice after a -p run
// that could not ask offers --mode edit only where it would approve one
// of the calls: a file edit, not a deletion or a write into .git, and not
// when the run is in edit mode already.
func TestDeniedCallsNote(t *testing.T) {
	edit := policy.Verdict{Call: policy.Call{Tool: "write_file", Effect: policy.EffectWrite}}
	bash := policy.Verdict{Call: policy.Call{Tool: "bash", Effect: policy.EffectExec}}
	var none deniedCalls
	if n := none.note(policy.ModeAsk); n != "" {
		t.Errorf("nothing denied: %q", n)
	}
	var d deniedCalls
	d.add(bash)
	if n := d.note(policy.ModeAsk); !strings.HasPrefix(n, "1 call needed your approval and was denied") || strings.Contains(n, "--mode edit") {
		t.Errorf("a command: %q", n)
	}
	d.add(edit)
	if n := d.note(policy.ModeAsk); !strings.HasPrefix(n, "2 calls needed") || !strings.Contains(n, "--mode edit") {
		t.Errorf("a file edit among them: %q", n)
	}
	if n := d.note(policy.ModeEdit); strings.Contains(n, "--mode edit") {
		t.Errorf("in edit mode already: %q", n)
	}
}

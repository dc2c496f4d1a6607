package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brig/test/fakeprovider"
)

// sessionsList is `brig sessions list` in the env's workspace.
func (e *env) sessionsList(t *testing.T) string {
	t.Helper()
	r := e.run(t, "sessions", "list")
	if r.code != 0 {
		t.Fatalf("sessions list: exit %d\n%s", r.code, r.stderr)
	}
	return r.stdout
}

// TestStdinIsNeverCut: input over the cap is refused with a message, not
// cut; nothing is sent and no session is left.
func TestStdinIsNeverCut(t *testing.T) {
	e := newEnv(t, "anthropic", fakeprovider.Turn{Text: "never"})
	c := e.cmd("--model", "claude-sonnet-4-5", "-p", "review this")
	c.Stdin = bytes.NewReader(bytes.Repeat([]byte("x"), 8<<20+1))
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	if err == nil || !strings.Contains(errb.String(), "standard input is larger than 8 MiB; brig does not cut it") {
		t.Fatalf("err %v\n%s", err, errb.String())
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Errorf("%d requests were sent", n)
	}
}

// TestTooLargeForTheContext: a message that cannot fit the model's window
// is refused before anything is sent, and leaves no session.
func TestTooLargeForTheContext(t *testing.T) {
	e := newEnv(t, "anthropic", fakeprovider.Turn{Text: "never"})
	c := e.cmd("--model", "claude-sonnet-4-5", "-p", "review this")
	c.Stdin = strings.NewReader(strings.Repeat("word ", 250_000)) // ~1.2 MB, ~300k tokens
	var errb bytes.Buffer
	c.Stderr = &errb
	err := c.Run()
	if err == nil || !strings.Contains(errb.String(), "more than the 200000-token context window of claude-sonnet-4-5; nothing was sent") {
		t.Fatalf("err %v\n%s", err, errb.String())
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Errorf("%d requests were sent", n)
	}
	if l := e.sessionsList(t); strings.Contains(l, "review this") {
		t.Errorf("a session was kept:\n%s", l)
	}
}

// TestSessionRecords: a session records the mode it ran in, its title is
// the prompt (not the piped input), and a run whose first request failed
// leaves no session behind.
func TestSessionRecords(t *testing.T) {
	e := newEnv(t, "anthropic",
		fakeprovider.Turn{Error: &fakeprovider.ErrorReply{Status: 400, Message: "bad request"}},
		fakeprovider.Turn{Text: "Looks fine."},
	)
	if r := e.run(t, "--model", "claude-sonnet-4-5", "-p", "first try"); r.code != 1 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if l := e.sessionsList(t); strings.Contains(l, "first try") {
		t.Errorf("the failed run's session was kept:\n%s", l)
	}
	c := e.cmd("--model", "claude-sonnet-4-5", "-p", "review the diff", "--mode", "auto")
	c.Stdin = strings.NewReader("diff --git a/x b/x\n+secret stuff from stdin\n")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	l := e.sessionsList(t)
	if !strings.Contains(l, "review the diff") || strings.Contains(l, "stdin") {
		t.Errorf("the title is not the prompt:\n%s", l)
	}
	show := e.run(t, "sessions", "show", strings.Fields(strings.Split(l, "\n")[1])[0])
	if !strings.Contains(show.stdout, "mode auto") {
		t.Errorf("sessions show does not say the mode it ran in:\n%s%s\nlist:\n%s", show.stdout, show.stderr, l)
	}
}

// TestAnyModelAnyEndpoint: a model id brig does not list works wherever
// the API it is served over is clear — from the base URL variable, the
// key, or --provider — and brig says its price is unknown; where it is not
// clear, brig asks for --provider.
func TestAnyModelAnyEndpoint(t *testing.T) {
	type tc struct {
		name    string
		env     func(url string) []string
		args    []string
		wire    fakeprovider.Wire // "" when brig must refuse
		refusal string
	}
	cases := []tc{
		{name: "alias behind ANTHROPIC_BASE_URL", env: func(u string) []string { return []string{"ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL=" + u} },
			args: []string{"--model", "team-sonnet"}, wire: fakeprovider.WireAnthropic},
		{name: "--provider anthropic with --base-url", env: func(u string) []string { return []string{"ANTHROPIC_API_KEY=k"} },
			args: []string{"--model", "gw-model", "--provider", "anthropic", "--base-url", "{url}"}, wire: fakeprovider.WireAnthropic},
		{name: "--provider openai (Responses)", env: func(u string) []string { return []string{"OPENAI_API_KEY=k"} },
			args: []string{"--model", "gpt-next", "--provider", "openai", "--base-url", "{url}/v1"}, wire: fakeprovider.WireResponses},
		{name: "a local server, no key", env: func(u string) []string { return nil },
			args: []string{"--model", "llama9", "--base-url", "{url}/v1"}, wire: fakeprovider.WireChat},
		{name: "--base-url with only an Anthropic key", env: func(u string) []string { return []string{"ANTHROPIC_API_KEY=k"} },
			args: []string{"--model", "gw-model", "--base-url", "{url}"}, refusal: "say which API serves it with --provider anthropic"},
		{name: "a bad --provider", env: func(u string) []string { return []string{"ANTHROPIC_API_KEY=k"} },
			args: []string{"--model", "x", "--provider", "bedrock"}, refusal: `--provider "bedrock": want anthropic`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, "none", fakeprovider.Turn{Text: "served"})
			url := e.srv.URL()
			e.vars = append(e.vars, c.env(url)...)
			var args []string
			for _, a := range c.args {
				args = append(args, strings.ReplaceAll(a, "{url}", url))
			}
			r := e.run(t, append(args, "-p", "hi")...)
			if c.wire == "" {
				if r.code != 2 || !strings.Contains(r.stderr, c.refusal) || len(e.srv.Requests()) != 0 {
					t.Fatalf("exit %d, %d requests\n%s", r.code, len(e.srv.Requests()), r.stderr)
				}
				return
			}
			reqs := e.srv.Requests()
			if r.code != 0 || !strings.Contains(r.stdout, "served") || len(reqs) != 1 || reqs[0].Wire != c.wire {
				t.Fatalf("exit %d, requests %+v\n%s\n%s", r.code, reqs, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, "is not in brig's registry: its price is unknown") {
				t.Errorf("no word that the price is unknown:\n%s", r.stderr)
			}
		})
	}
}

// TestConfigMistakesStopTheStart: a misspelled table (which would leave its
// deny rules out of force) and a [sandbox] grant that every call would fail
// on are refused at start, naming the file and the fix, before any request.
func TestConfigMistakesStopTheStart(t *testing.T) {
	for _, c := range []struct{ name, config, want string }{
		{"misspelled table", "[permisions]\ndeny = [\"Bash(git push:*)\"]\n", `config.toml:1: unknown table [permisions] (did you mean "permissions"?)`},
		{"missing sandbox path", "[sandbox]\nwrite = [\"/nonexistent/build-out\"]\n", `[sandbox] path "/nonexistent/build-out" (/nonexistent/build-out) does not exist; create it or remove it from the config`},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, "anthropic", fakeprovider.Turn{Text: "never"})
			if err := os.MkdirAll(e.home+"/.config/brig", 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(e.home+"/.config/brig/config.toml", []byte(c.config), 0o600); err != nil {
				t.Fatal(err)
			}
			r := e.run(t, "--model", "claude-sonnet-4-5", "-p", "hi")
			if r.code != 2 || !strings.Contains(r.stderr, c.want) || len(e.srv.Requests()) != 0 {
				t.Fatalf("exit %d, %d requests\n%s", r.code, len(e.srv.Requests()), r.stderr)
			}
		})
	}
}

// TestFirstQuarantineIsKept: on a fresh install (no state directory yet)
// the first protected path a call creates is taken out of the workspace
// and kept in the quarantine that the same sweep creates.
func TestFirstQuarantineIsKept(t *testing.T) {
	e := newEnv(t, "anthropic")
	r := e.run(t, "sandbox", "--", "sh", "-c", "mkdir .vscode && echo planted > .vscode/tasks.json")
	if r.code != 0 || !strings.Contains(r.stderr, "the protected path "+e.ws+"/.vscode") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(e.ws + "/.vscode"); err == nil {
		t.Fatal(".vscode is still in the workspace")
	}
	kept, _ := filepath.Glob(e.home + "/.local/state/brig/quarantine/*/.vscode/tasks.json")
	if len(kept) != 1 {
		t.Fatalf("the quarantined file was not kept: %v\n%s", kept, r.stderr)
	}
	if b, _ := os.ReadFile(kept[0]); string(b) != "planted\n" {
		t.Fatalf("kept %q", b)
	}
}

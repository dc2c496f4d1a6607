package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brig/test/fakeprovider"
)

// TestReadDenyRuleHidesFromBash: a Read deny rule of the user's hides its
// paths from a bash call that reaches them without naming them (grep -r,
// a glob), in the default mode where both lines run without asking, and
// from `brig sandbox`; control: the same lines read an ordinary file.
func TestReadDenyRuleHidesFromBash(t *testing.T) {
	e := newEnv(t, "anthropic",
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("bash", `{"command":"grep -r hunter2 . ; head -n 5 */db.env; grep -r visible-word . ; echo end"}`)}},
		fakeprovider.Turn{Text: "done",
			Check: []fakeprovider.Check{{Contains: "end"}, {Contains: "visible-word"}, {NotContains: "hunter2"}}},
	)
	if err := os.MkdirAll(filepath.Join(e.ws, "secrets"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(e.ws, "secrets/db.env"), []byte("DBPASS=hunter2\n"), 0o600)
	os.WriteFile(filepath.Join(e.ws, "public.txt"), []byte("visible-word\n"), 0o644)
	if err := os.MkdirAll(e.home+"/.config/brig", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.home+"/.config/brig/config.toml", []byte("[permissions]\ndeny = [\"Read(./secrets/**)\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := e.run(t, "--model", "claude-sonnet-4-5", "-p", "look for the password")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	e.srv.Verify(t)

	out, err := e.cmd("sandbox", "--", "sh", "-c", "cat secrets/db.env; cat public.txt").CombinedOutput()
	if strings.Contains(string(out), "hunter2") || !strings.Contains(string(out), "visible-word") {
		t.Errorf("brig sandbox: %v\n%s", err, out)
	}
}

// TestInstructionLinkToAHiddenFile: AGENTS.md is a link to a file a Read
// deny rule hides (a repository can ship one; a call can plant one with a
// path built at run time): a session, even in plan mode with no tool
// call, must not send that file's bytes in its system prompt. The
// control: the same link to an ordinary file is sent.
func TestInstructionLinkToAHiddenFile(t *testing.T) {
	for _, c := range []struct {
		target, want, never string
	}{
		{"config/secrets/prod.env", "", "CANARY_NESTED"},
		{"docs/guide.md", "guide-word", ""},
	} {
		e := newEnv(t, "anthropic", fakeprovider.Turn{Text: "done"})
		for _, d := range []string{"config/secrets", "docs"} {
			if err := os.MkdirAll(filepath.Join(e.ws, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		os.WriteFile(filepath.Join(e.ws, "config/secrets/prod.env"), []byte("PW=CANARY_NESTED_1111\n"), 0o600)
		os.WriteFile(filepath.Join(e.ws, "docs/guide.md"), []byte("guide-word: run go vet\n"), 0o644)
		if err := os.Symlink(c.target, filepath.Join(e.ws, "AGENTS.md")); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(e.home+"/.config/brig", 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(e.home+"/.config/brig/config.toml", []byte("[permissions]\ndeny = [\"Read(./config/secrets/**)\"]\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		r := e.run(t, "--model", "claude-sonnet-4-5", "-p", "hello", "--mode", "plan")
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", c.target, r.code, r.stderr)
		}
		sent := requests(e.srv)
		if c.never != "" && strings.Contains(sent, c.never) {
			t.Errorf("ESCAPE: AGENTS.md -> %s: the hidden file's bytes were sent to the model", c.target)
		}
		if c.want != "" && !strings.Contains(sent, c.want) {
			t.Errorf("control: AGENTS.md -> %s was not sent", c.target)
		}
	}
}

// TestHiddenPlaceCannotBeMovedOutFromUnderItsMask: a Read deny rule's
// place sits below a directory a call may write (config/secrets). A call
// that renames that directory (bash mv in auto mode, move_path in edit
// mode) must not leave the place readable under the new name, by that
// call or a later one: the rename fails, or the bytes stay hidden. The
// control: the same rename of a directory holding no hidden place works
// (one level down: without a mount namespace the workspace's own entries
// cannot be renamed while it holds a hidden place, its grant being split
// around the place).
func TestHiddenPlaceCannotBeMovedOutFromUnderItsMask(t *testing.T) {
	for _, c := range []struct {
		mode  string
		moves []fakeprovider.ToolCall
	}{
		{"auto", []fakeprovider.ToolCall{tc("bash", `{"command":"mv config cfg2; mv keys k2; mv plain/inner plain/inner2; echo moved"}`)}},
		{"edit", []fakeprovider.ToolCall{
			tc("move_path", `{"source":"config","destination":"cfg2"}`),
			tc("move_path", `{"source":"keys","destination":"k2"}`),
			tc("move_path", `{"source":"plain/inner","destination":"plain/inner2"}`),
		}},
	} {
		t.Run(c.mode, func(t *testing.T) {
			e := newEnv(t, "anthropic",
				fakeprovider.Turn{ToolCalls: c.moves},
				fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{
					tc("read_file", `{"path":"cfg2/secrets/prod.env"}`),
					tc("read_file", `{"path":"k2/a.key"}`),
					tc("bash", `{"command":"cat cfg2/secrets/prod.env k2/a.key plain/inner2/notes.txt; echo end"}`),
				}},
				fakeprovider.Turn{Text: "done"},
			)
			for _, d := range []string{"config/secrets", "keys", "plain/inner"} {
				if err := os.MkdirAll(filepath.Join(e.ws, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			os.WriteFile(filepath.Join(e.ws, "config/secrets/prod.env"), []byte("PW=CANARY_NESTED_1111\n"), 0o600)
			os.WriteFile(filepath.Join(e.ws, "keys/a.key"), []byte("CANARY_KEYFILE_2222\n"), 0o600)
			os.WriteFile(filepath.Join(e.ws, "plain/inner/notes.txt"), []byte("plain-word\n"), 0o644)
			if err := os.MkdirAll(e.home+"/.config/brig", 0o700); err != nil {
				t.Fatal(err)
			}
			rules := "[permissions]\ndeny = [\"Read(./config/secrets/**)\", \"Read(./keys/*.key)\"]\n"
			if err := os.WriteFile(e.home+"/.config/brig/config.toml", []byte(rules), 0o600); err != nil {
				t.Fatal(err)
			}
			r := e.run(t, "--model", "claude-sonnet-4-5", "-p", "tidy up", "--mode", c.mode)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			sent := requests(e.srv)
			for _, canary := range []string{"CANARY_NESTED_1111", "CANARY_KEYFILE_2222"} {
				if strings.Contains(sent, canary) {
					t.Errorf("ESCAPE: %s reached the model after its directory was renamed", canary)
				}
			}
			if _, err := os.Stat(filepath.Join(e.ws, "plain/inner2/notes.txt")); err != nil || !strings.Contains(sent, "plain-word") {
				t.Errorf("control: a directory holding no hidden place was not renamed and read (%v)\n%s", err, r.stderr)
			}
		})
	}
}

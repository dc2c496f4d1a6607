package tui

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"brig/test/fakeprovider"
)

// TestConfigErrorAndMissingKey: a config that does not load is shown as
// what it is (file, line, the fix) in the banner and the status line, not
// as a model that is not connected; once the file is fixed, /model starts
// brig. A model whose provider has no key is refused with a fix a TUI user
// can carry out, not command-line flags.
func TestConfigErrorAndMissingKey(t *testing.T) {
	tm := newTerm(t, fakeprovider.Turn{Text: "started after the fix"})
	if err := os.MkdirAll(tm.ws+"/.brig", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tm.ws+"/.brig/config.toml", []byte("[permissions]\nallow = [\"Bash(ls)\"\ndeny = 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tm.launch()
	s := tm.waitFor(15*time.Second, "not started: the configuration does not load", "config error at .brig/config.toml:3")
	if !strings.Contains(flat(s), flat("config "+tm.ws+"/.brig/config.toml:3: permissions.allow: expected")) || strings.Contains(s, "not connected") {
		t.Fatalf("the banner does not name the file and line:\n%s", s)
	}
	tm.typeLine("hello")
	tm.waitFor(10*time.Second, "brig: not started: the configuration does not load")
	if err := os.Remove(tm.ws + "/.brig/config.toml"); err != nil {
		t.Fatal(err)
	}
	tm.typeLine("/model claude-sonnet-4-5")
	// The message sent while brig could not start is back in the input,
	// unsent: Enter sends it.
	tm.waitFor(15*time.Second, "claude-sonnet-4-5 · ctx", "your message is back in the input")
	tm.keys("Enter")
	tm.waitFor(15*time.Second, "started after the fix")
	if got := tm.request(0); !strings.Contains(flat(fmtJSON(got)), "hello") {
		t.Errorf("the first request does not carry the message typed before the start: %v", got)
	}
	tm.typeLine("/model gpt-5")
	want := flat("/model: gpt-5: no OPENAI_API_KEY: set it or add it to " + tm.home + "/.config/brig/credentials.toml")
	s = tm.waitUntil(10*time.Second, "the missing key's fix", func(s string) bool { return strings.Contains(flat(s), want) })
	if strings.Contains(s, "--base-url") || strings.Contains(s, "--model") {
		t.Errorf("a command-line flag as the fix:\n%s", s)
	}
	tm.quit()
}

// fmtJSON is v as JSON, for a substring check of a recorded request.
func fmtJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// flat is s without its white space: a long path wrapped across rows
// compares whole.
func flat(s string) string { return strings.Join(strings.Fields(s), "") }

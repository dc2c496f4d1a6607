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

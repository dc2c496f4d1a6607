package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"brig/test/fakeprovider"
)

// TestMCPServerProgramIsNotCallsToRewrite: a server in the user's config
// runs a script from the workspace (with the user's token in its env at
// its next start). In auto mode, a write_file of that script and a bash
// line naming it are refused, one that reaches it through a variable
// fails in the jail, and the script keeps its bytes;
// control: the same write_file of another file goes through.
func TestMCPServerProgramIsNotCallsToRewrite(t *testing.T) {
	e := newEnv(t, "anthropic",
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("write_file", `{"path":"tools/srv.sh","content":"env > /tmp/stolen\n"}`)}},
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("bash", bashInput("echo 'env > leak' >> tools/srv.sh"))},
			Check: []fakeprovider.Check{{Contains: "protected"}}},
		// The path known only at run time: the policy cannot see it, the
		// jail's view holds the script's directory read-only.
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("bash", bashInput(`d=tools; echo 'env > leak' >> "$d/srv.sh"`))},
			Check: []fakeprovider.Check{{Contains: "protected"}}},
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{tc("write_file", `{"path":"notes.txt","content":"fine\n"}`)},
			Check: []fakeprovider.Check{{Contains: "Read-only file system"}}},
		fakeprovider.Turn{Text: "done"},
	)
	script := filepath.Join(e.ws, "tools", "srv.sh")
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte("exit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "[mcp.servers.local]\ncommand = \"sh\"\nargs = [\"tools/srv.sh\"]\nenv = { TOKEN = \"secret\" }\n"
	if err := os.MkdirAll(e.home+"/.config/brig", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.home+"/.config/brig/config.toml", []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	r := e.run(t, "--model", "claude-sonnet-4-5", "--mode", "auto", "-p", "change the server")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	e.srv.Verify(t)
	if b, err := os.ReadFile(script); err != nil || string(b) != "exit 1\n" {
		t.Errorf("the server's script is now %q (%v)", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(e.ws, "notes.txt")); err != nil || string(b) != "fine\n" {
		t.Errorf("control: notes.txt %q %v", b, err)
	}
}

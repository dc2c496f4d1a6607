package e2e

import (
	"os"
	"strings"
	"testing"
)

// TestSandboxRunsARelativeProgram: brig sandbox -- ./tool.sh runs the
// workspace's program as a shell would (it was looked for from init's
// directory, not the command's: "no such file or directory").
func TestSandboxRunsARelativeProgram(t *testing.T) {
	e := newEnv(t, "anthropic")
	if err := os.WriteFile(e.ws+"/tool.sh", []byte("#!/bin/sh\necho relative-ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := e.run(t, "sandbox", "--", "./tool.sh")
	if r.code != 0 || !strings.Contains(r.stdout, "relative-ran") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestSandboxShowsUndonePathsInert: a protected path the command made,
// under a directory whose name holds escape sequences, is named on
// stderr with them shown as symbols, not sent to the terminal.
func TestSandboxShowsUndonePathsInert(t *testing.T) {
	e := newEnv(t, "anthropic")
	r := e.run(t, "sandbox", "--", "sh", "-c", `d="x$(printf '\033')]0;TITLE$(printf '\007')"; mkdir -p "$d" && git init -q "$d"`)
	if !strings.Contains(r.stderr, "brig undid it") {
		t.Fatalf("nothing was undone (exit %d):\n%s", r.code, r.stderr)
	}
	if strings.ContainsAny(r.stderr, "\x1b\x07") {
		t.Fatalf("an escape sequence reached the terminal:\n%q", r.stderr)
	}
}

package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// deps lists the packages pkg links (go test puts its own go command first
// on PATH).
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// TestLinksOnlyWhatItRuns: every call starts the worker, and Go
// initialises every package a program links before main, so the worker
// must not link what it never runs — the policy's rule tables, the
// supervisor, the provider clients, the terminal UI and its renderers (the
// policy's tables alone were a fifth of the worker's package
// initialisation). The init program links not even the tools.
func TestLinksOnlyWhatItRuns(t *testing.T) {
	never := []string{
		"brig/policy", "brig/supervisor", "brig/agent", "brig/agent/provider", "brig/internal/audit",
		"brig/internal/egress", "brig/internal/tui", "github.com/BurntSushi/toml",
		"charm.land/bubbletea/v2", "charm.land/glamour/v2", "github.com/alecthomas/chroma/v2", "github.com/spf13/cobra",
	}
	for _, tc := range []struct {
		pkg   string
		needs []string // the control: what it does link
		never []string
	}{
		{"brig/cmd/brig-jail", []string{"brig/jail", "brig/tools", "brig/internal/audit/collect", "brig/policy/toolcall"}, never},
		{"brig/cmd/brig-jail-init", []string{"brig/jail"}, append([]string{"brig/tools", "brig/internal/audit/collect", "golang.org/x/net/html"}, never...)},
	} {
		linked := deps(t, tc.pkg)
		for _, p := range tc.needs {
			if !slices.Contains(linked, p) {
				t.Errorf("%s does not link %s (the list is wrong, not the program)", tc.pkg, p)
			}
		}
		for _, p := range tc.never {
			if slices.Contains(linked, p) {
				t.Errorf("%s links %s, which it never runs: every call would initialise it", tc.pkg, p)
			}
		}
	}
}

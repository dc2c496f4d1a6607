package tools

import (
	"strings"
	"testing"

	"brig/jail"
)

func TestNetworkNote(t *testing.T) {
	if NetworkNote([]jail.Connection{{Host: "a.example", Port: 443, Down: 10}}, nil) != "" {
		t.Error("a note without a refusal")
	}
	conns := []jail.Connection{
		{Host: "registry.npmjs.org", Port: 443, Down: 100},
		{Host: "evil.example", Port: 443, Refused: "no rule allows evil.example"},
		{Host: "evil.example", Port: 443, Refused: "no rule allows evil.example"}, // once
		{Host: "::1", Port: 80, Refused: "the user refused ::1"},
	}
	n := NetworkNote(conns, []string{"registry.npmjs.org", "*.github.com"})
	for _, want := range []string{
		"refused evil.example:443 (no rule allows evil.example); [::1]:80 (the user refused ::1).",
		"Allowed without asking: registry.npmjs.org, *.github.com.", "Do not retry a refused host unchanged",
	} {
		if !strings.Contains(n, want) {
			t.Errorf("note %q lacks %q", n, want)
		}
	}
	if strings.Count(n, "evil.example:443") != 1 {
		t.Errorf("a host named twice: %q", n)
	}
}

func TestNetSummary(t *testing.T) {
	got := NetSummary([]jail.Connection{
		{Host: "registry.npmjs.org", Port: 443, Up: 2048, Down: 3 << 20},
		{Host: "registry.npmjs.org", Port: 443, Up: 0, Down: 1 << 20},
		{Host: "proxy.golang.org", Port: 443},
		{Host: "evil.example", Port: 443, Refused: "no"},
		{Refused: "too many connections at once (the limit is 64 per call)"},
	})
	want := "net 3 connections to registry.npmjs.org proxy.golang.org, ↑2.0 KiB ↓4.0 MiB · refused evil.example over the limit"
	if got != want {
		t.Errorf("NetSummary = %q\nwant        %q", got, want)
	}
	if NetSummary(nil) != "" {
		t.Error("a summary of nothing")
	}
}

// TestNetworkNoteUnreachable (new user, 2026-12-03): a web_fetch of an
// allowed loopback port where nothing listened was told "the network
// proxy refused … Do not retry a refused host", as if the policy had.
// Control: a refusal beside it is still one.
func TestNetworkNoteUnreachable(t *testing.T) {
	down := jail.Connection{Host: "127.0.0.1", Port: 18398, Refused: "dial tcp 127.0.0.1:18398: connect: connection refused", Unreachable: true}
	n := NetworkNote([]jail.Connection{down}, []string{"127.0.0.1"})
	if !strings.Contains(n, "could not connect to 127.0.0.1:18398") || !strings.Contains(n, "This is not a refusal") || strings.Contains(n, "Do not retry a refused host") {
		t.Errorf("unreachable: %q", n)
	}
	n = NetworkNote([]jail.Connection{down, {Host: "evil.example", Port: 443, Refused: "no rule allows evil.example"}}, nil)
	if !strings.Contains(n, "This is not a refusal") || !strings.Contains(n, "the network proxy refused evil.example:443") {
		t.Errorf("unreachable and refused: %q", n)
	}
	if s := NetSummary([]jail.Connection{down}); s != "nothing answered at 127.0.0.1" {
		t.Errorf("summary %q", s)
	}
}

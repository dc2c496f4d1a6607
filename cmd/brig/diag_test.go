package main

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// TestNoteHandler (new user, 2026-12-03): diagnostics on the command line
// read as brig's lines, one each, with what a call named made safe for the
// terminal; information records are not shown (the control: a warning
// and an error are).
func TestNoteHandler(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(newNoteHandler(&buf)).With("call", "c1")
	log.Info("removed the cache of an older workspace", "path", "/x")
	if buf.Len() != 0 {
		t.Fatalf("an information record was shown: %q", buf.String())
	}
	log.Warn("a pack the call wrote does not check out", "path", "/ws/.git/objects/pack/\x1b]52;c;AAAA\x07\nx.pack")
	log.WithGroup("sweep").Error("could not take out a repository", "err", errors.New("permission denied"))
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want two lines, got %q", buf.String())
	}
	if !strings.HasPrefix(lines[0], "brig: warning: a pack the call wrote does not check out (call c1, path /ws/.git/objects/pack/") || strings.ContainsAny(lines[0], "\x1b\x07") {
		t.Errorf("the warning: %q", lines[0])
	}
	if lines[1] != "brig: error: could not take out a repository (call c1, sweep.err permission denied)" {
		t.Errorf("the error: %q", lines[1])
	}
}

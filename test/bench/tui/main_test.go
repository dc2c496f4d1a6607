package main

import "testing"

// TestBenchRuns: make bench's TUI pass runs to its end (one launch, a
// short session), so that a change to what brig accepts cannot break the
// bench unseen — a home directory inside the workspace did, once brig
// began refusing such a workspace.
func TestBenchRuns(t *testing.T) {
	if err := run(1, 2); err != nil {
		t.Fatal(err)
	}
}

// Package hangtest is a test helper: it runs a function that must not
// block (an open of a FIFO, a read of /dev/zero) and fails the test if it
// has not returned after a generous deadline. It catches a hang, never a
// slow run, so a loaded machine only makes such a test slower. Tests
// only; it owns nothing else.
package hangtest

import (
	"testing"
	"time"
)

// Deadline is how long Within waits: far beyond any honest run.
const Deadline = 30 * time.Second

// Within runs f and fails the test (t.Fatalf, naming what) if f has not
// returned after Deadline. f keeps running in its goroutine then; the
// test's process ends with the failure.
func Within(t testing.TB, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(Deadline):
		t.Fatalf("%s did not return within %s: it blocked", what, Deadline)
	}
}

package textbusy

import (
	"errors"
	"fmt"
	"slices"
	"syscall"
	"testing"
)

// TestRetry: an exec refused with ETXTBSY is tried again, up to
// Tries times with a wait between tries; any other outcome ends
// the tries at once.
func TestRetry(t *testing.T) {
	busyThen := func(n int, last error) (func() error, *int) {
		calls := 0
		return func() error {
			calls++
			if calls <= n {
				return fmt.Errorf("exec: %w", syscall.ETXTBSY)
			}
			return last
		}, &calls
	}
	var waits []int
	wait := func(try int) { waits = append(waits, try) }

	start, calls := busyThen(2, nil)
	if err := Retry(start, wait); err != nil || *calls != 3 || !slices.Equal(waits, []int{0, 1}) {
		t.Fatalf("busy twice, then started: %v after %d tries, waits %v", err, *calls, waits)
	}
	waits = nil
	start, calls = busyThen(1000, nil)
	if err := Retry(start, wait); !errors.Is(err, syscall.ETXTBSY) || *calls != Tries || len(waits) != Tries-1 {
		t.Fatalf("always busy: %v after %d tries, %d waits", err, *calls, len(waits))
	}
	waits = nil
	start, calls = busyThen(0, syscall.ENOENT)
	if err := Retry(start, wait); !errors.Is(err, syscall.ENOENT) || *calls != 1 || len(waits) != 0 {
		t.Fatalf("another error: %v after %d tries, %d waits", err, *calls, len(waits))
	}
}

package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"
)

// Retry bounds how a client retries a failed call. The zero value means the
// defaults. A call is retried only while nothing of it has reached the
// caller: once an event was emitted, a failure is returned as it is, so a
// half-shown answer is never shown twice and nothing downstream acts twice.
type Retry struct {
	MaxAttempts int           // requests in all, default 4
	BaseDelay   time.Duration // first backoff, default 500ms; doubles each time
	MaxDelay    time.Duration // cap of one computed backoff, default 20s
	// MaxRetryAfter is the longest server-requested wait honoured, default
	// 60s; a longer Retry-After ends the retries with the error.
	MaxRetryAfter time.Duration
	// Sleep waits d or until ctx is done; nil means a real timer. Tests
	// replace it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger receives one line per retry; nil means slog.Default().
	Logger *slog.Logger
}

func (r Retry) withDefaults() Retry {
	if r.MaxAttempts <= 0 {
		r.MaxAttempts = 4
	}
	if r.BaseDelay <= 0 {
		r.BaseDelay = 500 * time.Millisecond
	}
	if r.MaxDelay <= 0 {
		r.MaxDelay = 20 * time.Second
	}
	if r.MaxRetryAfter <= 0 {
		r.MaxRetryAfter = 60 * time.Second
	}
	if r.Sleep == nil {
		r.Sleep = sleep
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	return r
}

// Backoff is the wait before retry number n (1-based): full jitter over an
// exponentially growing window, capped.
func (r Retry) Backoff(n int) time.Duration {
	r = r.withDefaults()
	window := r.BaseDelay << (n - 1)
	if window > r.MaxDelay || window <= 0 {
		window = r.MaxDelay
	}
	// Never less than half the window, so retries are not bunched at zero.
	return window/2 + rand.N(window/2+1)
}

// Attempt is one try at a call; it passes events to emit.
type Attempt func(ctx context.Context, emit func(Event) error) (Response, error)

// Run calls attempt until it succeeds, fails in a way that is not
// retryable, has emitted an event, or the attempts are used up. Clients wrap
// their HTTP request and stream parse in it.
func (r Retry) Run(ctx context.Context, emit func(Event) error, attempt Attempt) (Response, error) {
	r = r.withDefaults()
	delivered := false
	tracked := func(ev Event) error {
		delivered = true
		return emit(ev)
	}
	for n := 1; ; n++ {
		resp, err := attempt(ctx, tracked)
		resp.Attempts = n
		if err == nil {
			return resp, nil
		}
		var pe *Error
		if errors.As(err, &pe) {
			pe.Attempts = n
		}
		if ctx.Err() != nil {
			return resp, ctx.Err()
		}
		if delivered || pe == nil || !pe.Kind.Retryable() || n >= r.MaxAttempts {
			return resp, err
		}
		wait := r.Backoff(n)
		if pe.RetryAfter > 0 {
			if pe.RetryAfter > r.MaxRetryAfter {
				return resp, err
			}
			wait = pe.RetryAfter
		}
		r.Logger.Debug("provider: retrying", "provider", pe.Provider, "kind", pe.Kind, "status", pe.Status, "attempt", n, "wait", wait)
		// Said to the caller without counting as delivered: the answer
		// has not started. One line, however long the server's message.
		detail := pe.detail()
		if detail == "" && pe.Err != nil {
			detail = " (" + lastCause(pe.Err) + ")" // "connection refused", not only "network"
		}
		if detail != "" {
			detail = " " + OneLine(detail, 300)
		}
		_ = emit(Event{Type: EventRetry, Text: fmt.Sprintf("%s: %s%s; retrying in %s (attempt %d of %d)", pe.Provider, strings.ReplaceAll(string(pe.Kind), "_", " "), detail, wait.Round(100*time.Millisecond), n+1, r.MaxAttempts)})
		if err := r.Sleep(ctx, wait); err != nil {
			return resp, err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// lastCause is the innermost part of a wrapped error's message ("connection
// refused" of "Post …: dial tcp …: connect: connection refused").
func lastCause(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 && i+2 < len(msg) {
		return msg[i+2:]
	}
	return msg
}

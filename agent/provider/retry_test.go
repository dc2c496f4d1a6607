package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestRetryRun(t *testing.T) {
	rateLimited := &Error{Kind: ErrRateLimit, Status: 429}
	tests := []struct {
		name      string
		results   []error // per attempt; nil = success
		deliverAt int     // attempt (1-based) that emits an event before failing; 0 none
		wantCalls int
		wantErr   bool
	}{
		{"success first", []error{nil}, 0, 1, false},
		{"429 then success", []error{rateLimited, nil}, 0, 2, false},
		{"bounded", []error{rateLimited, rateLimited, rateLimited, rateLimited, nil}, 0, 4, true},
		{"not retryable", []error{&Error{Kind: ErrAuth}, nil}, 0, 1, true},
		{"plain error not retried", []error{errors.New("bug"), nil}, 0, 1, true},
		{"no retry after delivery", []error{&Error{Kind: ErrStream}, nil}, 1, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			var waits []time.Duration
			r := Retry{Logger: quiet(), Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
			resp, err := r.Run(context.Background(), func(Event) error { return nil }, func(ctx context.Context, emit func(Event) error) (Response, error) {
				calls++
				if calls == tt.deliverAt {
					_ = emit(Event{Type: EventText, Text: "x"})
				}
				return Response{}, tt.results[calls-1]
			})
			if calls != tt.wantCalls || (err != nil) != tt.wantErr || resp.Attempts != calls {
				t.Errorf("calls %d (want %d), err %v, attempts %d", calls, tt.wantCalls, err, resp.Attempts)
			}
			if len(waits) != calls-1 && !(tt.wantErr && len(waits) == calls-1) {
				t.Errorf("%d waits for %d calls", len(waits), calls)
			}
			var pe *Error
			if errors.As(err, &pe) && pe.Attempts != calls {
				t.Errorf("error says %d attempts, made %d", pe.Attempts, calls)
			}
		})
	}
}

func TestRetryAfterTooLongGivesUp(t *testing.T) {
	calls := 0
	r := Retry{Logger: quiet(), MaxRetryAfter: time.Minute, Sleep: func(context.Context, time.Duration) error { t.Fatal("slept"); return nil }}
	_, err := r.Run(context.Background(), nil, func(context.Context, func(Event) error) (Response, error) {
		calls++
		return Response{}, &Error{Kind: ErrRateLimit, RetryAfter: time.Hour}
	})
	if calls != 1 || !IsKind(err, ErrRateLimit) {
		t.Errorf("calls %d err %v", calls, err)
	}
}

func TestRetryStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	r := Retry{Logger: quiet()} // the real sleep: cancellation must cut it short
	_, err := r.Run(ctx, nil, func(context.Context, func(Event) error) (Response, error) {
		calls++
		cancel()
		return Response{}, &Error{Kind: ErrOverloaded, RetryAfter: 30 * time.Second}
	})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("calls %d err %v", calls, err)
	}
}

func TestBackoff(t *testing.T) {
	r := Retry{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}
	for n := 1; n <= 8; n++ {
		window := min(100*time.Millisecond<<(n-1), time.Second)
		for range 50 {
			if d := r.Backoff(n); d < window/2 || d > window {
				t.Fatalf("Backoff(%d) = %v, want within [%v, %v]", n, d, window/2, window)
			}
		}
	}
}

// TestRetryNoticeIsOneLine: a retry is said on one line, however many
// lines the server's message has.
func TestRetryNoticeIsOneLine(t *testing.T) {
	var notices []string
	r := Retry{Logger: quiet(), MaxAttempts: 2, Sleep: func(context.Context, time.Duration) error { return nil }}
	_, _ = r.Run(context.Background(), func(ev Event) error { notices = append(notices, ev.Text); return nil },
		func(context.Context, func(Event) error) (Response, error) {
			return Response{}, &Error{Kind: ErrOverloaded, Provider: Anthropic, Status: 529, Message: "busy\n\n  try\tlater\n"}
		})
	if len(notices) != 1 || !strings.HasPrefix(notices[0], "anthropic: overloaded (529: busy try later); retrying in ") {
		t.Errorf("notices %q", notices)
	}
}

// TestRetryNoticeSaysTheNetworkCause: a network failure's retry line says
// what failed (a new user saw only "network" three times; the cause came
// with the final error).
func TestRetryNoticeSaysTheNetworkCause(t *testing.T) {
	var notices []string
	r := Retry{Logger: quiet(), MaxAttempts: 2, Sleep: func(context.Context, time.Duration) error { return nil }}
	cause := fmt.Errorf(`Post "http://127.0.0.1:1/v1/messages": %w`, errors.New("dial tcp 127.0.0.1:1: connect: connection refused"))
	_, _ = r.Run(context.Background(), func(ev Event) error { notices = append(notices, ev.Text); return nil },
		func(context.Context, func(Event) error) (Response, error) {
			return Response{}, &Error{Kind: ErrNetwork, Provider: Anthropic, Err: cause}
		})
	if len(notices) != 1 || !strings.HasPrefix(notices[0], "anthropic: network (connection refused); retrying in ") {
		t.Errorf("notices %q", notices)
	}
}

package audit

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestMeterTerminal: on a terminal the bar is redrawn in place, a note
// goes on a line of its own above it, and Done ends the bar's line.
func TestMeterTerminal(t *testing.T) {
	var b bytes.Buffer
	m := NewMeter(&b, true)
	start := m.start
	m.now = func() time.Time { return start.Add(3 * time.Second) }
	m.Update(Progress{Stage: StageReview, Total: 4})
	m.Update(Progress{Stage: StageReview, Done: 2, Total: 4, SentBytes: 2048, Tokens: 12345})
	m.Update(Progress{Stage: StageRetry, Done: 2, Total: 4, Note: "part 3 of 4: the answer holds no JSON object"})
	m.Done()
	out := b.String()
	for _, want := range []string{
		"\r\x1b[2Kbrig audit ▕░░░░░░░░░░░░░░░░░░░░░░░░▏ 0/4 parts",
		"\r\x1b[2Kbrig audit ▕████████████░░░░░░░░░░░░▏ 2/4 parts · 2.0 KiB sent · 12,345 tokens · 3s",
		"\r\x1b[2Kbrig audit: asking again: part 3 of 4: the answer holds no JSON object\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%q", want, out)
		}
	}
	if !strings.HasSuffix(out, "3s\n") {
		t.Errorf("the bar's line is not ended: %q", out)
	}
}

// TestMeterPlain: elsewhere each step is a plain line with no escapes.
func TestMeterPlain(t *testing.T) {
	var b bytes.Buffer
	m := NewMeter(&b, false)
	m.Update(Progress{Stage: StageReview, Total: 2})
	m.Update(Progress{Stage: StageReview, Done: 1, Total: 2, SentBytes: 10, Tokens: 100})
	m.Update(Progress{Stage: StageMerge, Done: 2, Total: 2})
	m.Done()
	want := "brig audit: reviewing in 2 parts\nbrig audit: part 1 of 2 reviewed (10 B sent, 100 tokens so far)\nbrig audit: merging the findings of 2 parts\n"
	if b.String() != want {
		t.Fatalf("got %q", b.String())
	}
}

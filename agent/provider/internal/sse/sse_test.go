package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReader(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Event
		wantErr error
	}{
		{"named events", "event: a\ndata: {\"x\":1}\n\nevent: b\ndata: 2\n\n", []Event{{"a", []byte(`{"x":1}`)}, {"b", []byte("2")}}, io.EOF},
		{"crlf, comments, multi-line data", ": ping\r\n\r\ndata: one\r\ndata: two\r\n\r\n", []Event{{"", []byte("one\ntwo")}}, io.EOF},
		{"no space after colon", "data:[DONE]\n\n", []Event{{"", []byte("[DONE]")}}, io.EOF},
		{"cut inside an event", "event: a\ndata: {\"x\"", nil, io.ErrUnexpectedEOF},
		{"complete lines, no blank line at the end", "event: a\ndata: 1\n", []Event{{"a", []byte("1")}}, io.EOF},
		{"[DONE] without the blank line", "data: {}\n\ndata: [DONE]\n", []Event{{"", []byte("{}")}, {"", []byte("[DONE]")}}, io.EOF},
		{"cut inside a line after an event", "data: {}\n\ndata: [DO", []Event{{"", []byte("{}")}}, io.ErrUnexpectedEOF},
		{"long line", "data: " + strings.Repeat("x", 100_000) + "\n\n", []Event{{"", []byte(strings.Repeat("x", 100_000))}}, io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tt.in))
			var got []Event
			var err error
			for {
				var ev Event
				ev, err = r.Next()
				if err != nil {
					break
				}
				got = append(got, ev)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d events, want %d", len(got), len(tt.want))
			}
			for i := range got {
				if got[i].Name != tt.want[i].Name || string(got[i].Data) != string(tt.want[i].Data) {
					t.Errorf("event %d = %q %q", i, got[i].Name, got[i].Data)
				}
			}
		})
	}
}

// endless repeats line forever.
type endless struct {
	line []byte
	off  int
}

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], e.line[e.off:])
		n += c
		e.off = (e.off + c) % len(e.line)
	}
	return n, nil
}

// TestReaderStopsAnEndlessStream: a stream that never ends (here nothing
// but keep-alive comments, which no event carries) is cut at MaxStream
// with ErrTooLarge, rather than read for ever; a stream under it is read.
func TestReaderStopsAnEndlessStream(t *testing.T) {
	r := NewReader(&endless{line: append(append([]byte(":"), bytes.Repeat([]byte("k"), 60<<10)...), '\n')})
	if _, err := r.Next(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("an endless stream: %v, want ErrTooLarge", err)
	}
	if r.read > MaxStream+(64<<10) {
		t.Errorf("read %d bytes, past MaxStream (%d)", r.read, MaxStream)
	}
	// Control: the same keep-alives, then an event, well under the bound.
	body := strings.Repeat(":"+strings.Repeat("k", 60<<10)+"\n", 100) + "data: {}\n\n"
	ev, err := NewReader(strings.NewReader(body)).Next()
	if err != nil || string(ev.Data) != "{}" {
		t.Fatalf("a stream under the bound: %q, %v", ev.Data, err)
	}
}

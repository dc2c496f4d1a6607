package sse

import (
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

// Package sse reads Server-Sent Events (the text/event-stream framing all
// three provider APIs stream in) and holds the small HTTP helpers the
// provider clients share.
//
// It owns framing only: it must not know any provider's event names or JSON.
package sse

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// Event is one dispatched event.
type Event struct {
	Name string // the "event:" field, "" when absent
	Data []byte // the "data:" lines joined by "\n"
}

// Reader reads events from a stream.
type Reader struct {
	r    *bufio.Reader
	read int // bytes of the stream read so far
}

// maxLine bounds one line (a reasoning item's encrypted content can be large,
// but not unbounded).
const maxLine = 16 << 20

// MaxStream bounds one response's stream. The longest answer a model gives
// (128k output tokens, each delta wrapped in its event's JSON) is tens of
// MiB; a stream past this is broken or hostile, and what it sent would
// otherwise all be held in memory.
const MaxStream = 256 << 20

// ErrTooLarge is returned once a stream has sent more than MaxStream bytes.
var ErrTooLarge = fmt.Errorf("sse: the response stream went past %d MiB, more than any model answer; it was cut there", MaxStream>>20)

// NewReader reads events from r.
func NewReader(r io.Reader) *Reader { return &Reader{r: bufio.NewReaderSize(r, 32<<10)} }

// Next returns the next event. At a clean end of stream it returns io.EOF; a
// stream that ends inside a line returns io.ErrUnexpectedEOF.
//
// It is lenient about framing and strict about content: an event whose
// lines all arrived whole is dispatched even when the stream ends before
// the blank line that should close it (servers end with "data: [DONE]\n"),
// while a line cut short is an error. Whether the stream as a whole is
// complete is for the caller to judge from what the events said.
func (r *Reader) Next() (Event, error) {
	var ev Event
	var data bytes.Buffer
	seen := false
	for {
		line, err := r.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) && seen {
				ev.Data = data.Bytes()
				return ev, nil
			}
			return Event{}, err
		}
		if len(line) == 0 {
			if !seen {
				continue
			}
			ev.Data = data.Bytes()
			return ev, nil
		}
		if line[0] == ':' {
			continue // comment / keep-alive
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.Name = string(value)
			seen = true
		case "data":
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.Write(value)
			seen = true
		}
	}
}

func (r *Reader) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.r.ReadSlice('\n')
		line = append(line, chunk...)
		if r.read += len(chunk); r.read > MaxStream {
			return nil, ErrTooLarge
		}
		if len(line) > maxLine {
			return nil, errors.New("sse: line too long")
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if len(line) > 0 && err == io.EOF {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		return line, nil
	}
}

// Post sends body as JSON to url with headers, asking for an event stream.
// The request is bound to ctx, so cancelling ctx aborts the read of the
// response body too.
func Post(ctx context.Context, hc *http.Client, url string, headers http.Header, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	return hc.Do(req)
}

// ReadErrorBody reads at most 64 KiB of an error response body.
func ReadErrorBody(resp *http.Response) []byte {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return b
}

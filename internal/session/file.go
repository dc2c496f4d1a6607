package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// CorruptError is a session file that cannot be read: a record in the middle
// that is not valid JSON, a missing header, a record that contradicts the
// ones before it. brig reports it by name and never writes over it.
type CorruptError struct {
	Path string
	Line int
	Err  error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("session file %s is corrupt at line %d: %v (brig leaves it untouched; move it away, or delete it with brig sessions rm)", e.Path, e.Line, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// readRecords reads the records of r, which starts at byte offset start of
// the file and at line number line+1. It calls fn for each complete record
// (a line ending in a newline) with the offset just past it. It returns the
// offset past the last complete record and the length of a torn tail: bytes
// after the last newline, which a crash mid-write leaves and which are not
// part of the session. A complete line that does not decode is an error
// (*CorruptError, without Path).
func readRecords(r io.Reader, start int64, line int, fn func(rec Record, line int, end int64) error) (end int64, torn int64, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	end = start
	for {
		b, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return end, int64(len(b)), nil
		}
		if err != nil {
			return end, 0, fmt.Errorf("read: %w", err)
		}
		line++
		next := end + int64(len(b))
		if len(bytes.TrimSpace(b)) == 0 {
			end = next
			continue
		}
		var rec Record
		if err := json.Unmarshal(b, &rec); err != nil {
			return end, 0, &CorruptError{Line: line, Err: err}
		}
		if err := fn(rec, line, next); err != nil {
			return end, 0, &CorruptError{Line: line, Err: err}
		}
		end = next
	}
}

// loadState replays the whole file of session id.
func loadState(r io.Reader, path, id string) (*State, error) {
	st := newState()
	end, torn, err := readRecords(r, 0, 0, func(rec Record, line int, _ int64) error {
		if line == 1 && rec.Header != nil && rec.Header.ID != id {
			return fmt.Errorf("the header names session %q, not %q", rec.Header.ID, id)
		}
		return st.apply(rec, line)
	})
	if err != nil {
		var ce *CorruptError
		if errors.As(err, &ce) {
			ce.Path = path
		}
		return nil, err
	}
	if end == 0 {
		return nil, &CorruptError{Path: path, Line: 1, Err: errors.New("no complete header record")}
	}
	st.Size = end
	if torn > 0 {
		st.Warnings = append(st.Warnings, fmt.Sprintf("an incomplete last record (%d bytes, a crash or a write in progress) was left out", torn))
	}
	return st, nil
}

package auditlog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Anchor is a chain head kept outside the log (the head file, a session's
// records): the log must hold record Seq with exactly that Hash.
type Anchor struct {
	Ref
	Source string `json:"source"` // where it was kept
}

// Problem is one place where the log is not what was written.
type Problem struct {
	Line int    `json:"line,omitempty"` // 0: not a line (a head kept elsewhere)
	Seq  uint64 `json:"seq,omitempty"`
	What string `json:"what"`
}

func (p Problem) String() string {
	switch {
	case p.Line > 0 && p.Seq > 0:
		return fmt.Sprintf("line %d (record %d): %s", p.Line, p.Seq, p.What)
	case p.Line > 0:
		return fmt.Sprintf("line %d: %s", p.Line, p.What)
	}
	return p.What
}

// Report is what verification found.
type Report struct {
	Path    string `json:"path"`
	Records int    `json:"records"`
	First   uint64 `json:"first,omitempty"`
	Head    Ref    `json:"head"`
	// Torn is the size of an incomplete last line: a crash mid-append.
	// It is not part of the chain and is cut off by the next append.
	Torn     int64     `json:"torn,omitempty"`
	Anchors  int       `json:"anchors"` // heads kept elsewhere that were checked
	Problems []Problem `json:"problems,omitempty"`
}

// OK reports whether the log is intact.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// Verify reads the whole log and checks that each record's hash matches
// its content, that each names the hash of the one before and follows it
// in number, that the chain starts at record 1, and that every anchor's
// record is in the log with the anchor's hash. It lists every problem, the
// first one being where the chain breaks.
func (l *Log) Verify(anchors []Anchor) (*Report, error) {
	rep := &Report{Path: l.Path()}
	f, err := os.OpenFile(l.Path(), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, os.ErrNotExist) {
		f = nil
	} else if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	seen := map[uint64]string{}
	if f != nil {
		defer f.Close()
		l.verifyLines(f, rep, seen)
	}
	for _, a := range anchors {
		rep.Anchors++
		h, ok := seen[a.Seq]
		switch {
		case ok && h == a.Hash:
		case ok:
			rep.Problems = append(rep.Problems, Problem{Seq: a.Seq, What: fmt.Sprintf("%s recorded record %d with hash %.12s…, the log has %.12s…: the log was rewritten from there on", a.Source, a.Seq, a.Hash, h)})
		case a.Seq > rep.Head.Seq:
			rep.Problems = append(rep.Problems, Problem{Seq: a.Seq, What: fmt.Sprintf("%s recorded record %d, but the log ends at record %d: records were deleted from its end", a.Source, a.Seq, rep.Head.Seq)})
		default:
			rep.Problems = append(rep.Problems, Problem{Seq: a.Seq, What: fmt.Sprintf("%s recorded record %d, which is missing from the log", a.Source, a.Seq)})
		}
	}
	return rep, nil
}

func (l *Log) verifyLines(r io.Reader, rep *Report, seen map[uint64]string) {
	br := bufio.NewReaderSize(r, 64<<10)
	var prev Ref
	havePrev := false
	problem := func(line int, seq uint64, format string, a ...any) {
		rep.Problems = append(rep.Problems, Problem{Line: line, Seq: seq, What: fmt.Sprintf(format, a...)})
	}
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			rep.Torn = int64(len(line))
			return
		}
		if err != nil {
			problem(n, 0, "unreadable: %v", err)
			return
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		rec, claimed, ok, err := decodeLine(line)
		if err != nil {
			problem(n, 0, "%v: the line was edited or inserted", err)
			prev, havePrev = Ref{Seq: prev.Seq + 1, Hash: claimed}, true
			continue
		}
		rep.Records++
		if rep.First == 0 {
			rep.First = rec.Seq
			if rec.Seq != 1 || rec.Prev != "" {
				problem(n, rec.Seq, "the log starts at record %d, not 1: earlier records were deleted", rec.Seq)
			}
		}
		if !ok {
			problem(n, rec.Seq, "its content does not match its hash: the record was edited")
		}
		if havePrev {
			switch {
			case rec.Seq == prev.Seq+1 && rec.Prev != prev.Hash:
				problem(n, rec.Seq, "it does not follow the record before it (its prev hash is %.12s…, record %d's hash is %.12s…): the record before was edited, or this one replaced", rec.Prev, prev.Seq, prev.Hash)
			case rec.Seq > prev.Seq+1:
				problem(n, rec.Seq, "records %d to %d are missing: they were deleted", prev.Seq+1, rec.Seq-1)
			case rec.Seq <= prev.Seq:
				problem(n, rec.Seq, "record %d comes after record %d: records were inserted or reordered", rec.Seq, prev.Seq)
			}
		}
		if _, dup := seen[rec.Seq]; !dup {
			seen[rec.Seq] = claimed
		}
		prev, havePrev = Ref{Seq: rec.Seq, Hash: claimed}, true
		rep.Head = prev
	}
}

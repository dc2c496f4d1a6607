package supervisor

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"

	"brig/jail"
)

func text(cs []jail.Chunk) string {
	var b strings.Builder
	for _, c := range cs {
		if c.Stderr {
			b.WriteString("E:")
		} else {
			b.WriteString("O:")
		}
		b.Write(c.Data)
		b.WriteString("|")
	}
	return b.String()
}

func TestTranscriptKeepsOrderHeadAndTail(t *testing.T) {
	tr := newTranscript(Keep{Head: 6, Tail: 8})
	tr.write(false, []byte("abc"))
	tr.write(true, []byte("de"))
	tr.write(false, []byte("f\ng"))   // head is full after 'f'
	tr.write(true, []byte("1\n2\n3")) // tail: "\ng" + "1\n2\n3" = 7 bytes
	tr.write(false, []byte("45"))     // tail 9 bytes: the oldest byte ("\n") goes
	got := tr.result()
	if h := text(got.Head); h != "O:abc|E:de|O:f|" {
		t.Errorf("head %q", h)
	}
	if tl := text(got.Tail); tl != "O:g|E:1\n2\n3|O:45|" {
		t.Errorf("tail %q", tl)
	}
	if got.Omitted != 1 || got.OmittedLines != 1 || got.Stdout != 8 || got.Stderr != 7 {
		t.Errorf("counts %+v", got)
	}
	// A write larger than the tail skips its own middle.
	tr = newTranscript(Keep{Head: 2, Tail: 3})
	tr.write(false, []byte("ab\n\n\nxyz"))
	got = tr.result()
	if text(got.Head) != "O:ab|" || text(got.Tail) != "O:xyz|" || got.Omitted != 3 || got.OmittedLines != 3 {
		t.Errorf("one big write: %q %q %+v", text(got.Head), text(got.Tail), got)
	}
	if newTranscript(Keep{}) != nil {
		t.Error("the zero Keep made a transcript")
	}
}

// TestTranscriptSaysWhereALineWasCut: MidLine says, per stream, that the
// stream's tail begins inside a line (its last byte left out was not a
// newline), so that the model is not shown the end of a line as a line.
func TestTranscriptSaysWhereALineWasCut(t *testing.T) {
	tr := newTranscript(Keep{Head: 2, Tail: 4})
	tr.write(false, []byte("ab\n12345\n")) // left out "\n12": the tail starts in "12345"
	if got := tr.result(); text(got.Tail) != "O:345\n|" || got.MidLine != [2]bool{true, false} {
		t.Errorf("cut inside a line: tail %q, MidLine %v", text(got.Tail), got.MidLine)
	}
	tr.write(true, []byte("E\n")) // pushes out "34" of stdout: still inside that line
	if got := tr.result(); text(got.Tail) != "O:5\n|E:E\n|" || got.MidLine != [2]bool{true, false} {
		t.Errorf("the other stream's write: tail %q, MidLine %v", text(got.Tail), got.MidLine)
	}
	tr.write(true, []byte("FGH")) // pushes out "5\n" (stdout at a line) and "E" of stderr
	if got := tr.result(); text(got.Tail) != "E:\nFGH|" || got.MidLine != [2]bool{false, true} {
		t.Errorf("both streams cut: tail %q, MidLine %v", text(got.Tail), got.MidLine)
	}
	// A write larger than the tail leaves out what the tail held first,
	// then its own start: the cut is inside "345678".
	tr = newTranscript(Keep{Head: 2, Tail: 4})
	tr.write(false, []byte("ab12\n"))
	tr.write(false, []byte("345678\n9"))
	if got := tr.result(); text(got.Tail) != "O:78\n9|" || got.MidLine != [2]bool{true, false} || got.Omitted != 7 {
		t.Errorf("a write larger than the tail: tail %q, MidLine %v, omitted %d", text(got.Tail), got.MidLine, got.Omitted)
	}
	// The control: a cut that falls after a newline.
	tr = newTranscript(Keep{Head: 3, Tail: 4})
	tr.write(false, []byte("ab\nxy\n123\n"))
	if got := tr.result(); text(got.Tail) != "O:123\n|" || got.MidLine != [2]bool{} {
		t.Errorf("cut at a line: tail %q, MidLine %v", text(got.Tail), got.MidLine)
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// TestTranscriptBesideLiveOutput: a call whose output is streamed live
// still returns it, both streams, whole, in its transcript (the model's
// copy) — and one whose output is not watched too.
func TestTranscriptBesideLiveOutput(t *testing.T) {
	ctx := context.Background()
	sup, spec := coldSupervisor(t)
	inv := jail.Invocation{Argv: []string{"/bin/sh", "-c", "echo MARKER_A1; echo MARKER_ERR >&2; seq 1 20000; exit 3"}}
	all := int64(len("MARKER_A1\n")) + int64(len(seqOutput(20000)))
	for _, live := range []bool{true, false} {
		var w lockedBuffer
		// A head that holds everything: which pipe is read first is not
		// the test's to pin, so both markers must be kept whatever it is.
		stdio := IO{Keep: Keep{Head: 1 << 20, Tail: 100}}
		if live {
			stdio.Stdout, stdio.Stderr = &w, &w
		}
		res, err := sup.Run(ctx, spec, inv, stdio)
		if err != nil || res.ExitCode != 3 {
			t.Fatalf("live=%v: %v %+v", live, err, res)
		}
		tr := res.Transcript
		if h := text(tr.Head); !strings.Contains(h, "O:MARKER_A1\n") || !strings.Contains(h, "E:MARKER_ERR\n|") || !strings.Contains(h, "1\n2\n3\n") || !strings.HasSuffix(h, "19999\n20000\n|") {
			t.Errorf("live=%v: head %q…%q", live, h[:min(len(h), 80)], h[max(0, len(h)-40):])
		}
		if tr.Stdout != all || tr.Stderr != int64(len("MARKER_ERR\n")) || tr.Omitted != 0 || len(tr.Tail) != 0 {
			t.Errorf("live=%v: counts %+v (stdout should be %d)", live, tr, all)
		}
		if live && (!strings.Contains(w.b.String(), "MARKER_A1") || !strings.Contains(w.b.String(), "20000\n")) {
			t.Errorf("the live copy lacks output: %d bytes", w.b.Len())
		}
		if !live && (len(res.Stdout) != 0 || len(res.Stderr) != 0) {
			t.Errorf("an unwatched stream with a transcript was also captured whole (%d bytes)", len(res.Stdout))
		}
	}
	// A small budget keeps the first and the last bytes of a flood.
	var w lockedBuffer
	res, err := sup.Run(ctx, spec, jail.Invocation{Argv: []string{"seq", "1", "20000"}}, IO{Stdout: &w, Stderr: &w, Keep: Keep{Head: 100, Tail: 100}})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Transcript
	if h, tl := text(tr.Head), text(tr.Tail); !strings.HasPrefix(h, "O:1\n2\n3\n") || !strings.HasSuffix(tl, "19999\n20000\n|") || tr.Omitted != int64(len(seqOutput(20000)))-200 {
		t.Errorf("head %q tail %q omitted %d", h, tl, tr.Omitted)
	}
}

func seqOutput(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i) + "\n")
	}
	return b.String()
}

// BenchmarkDrainLongOutput: what the supervisor does with each byte of a
// call that prints 6.9 MB (seq 1000000), read in the chunks a pipe gives:
// the transcript the model's copy is cut from, and the live copy handed to
// the front end as strings (as the agent's output events are).
func BenchmarkDrainLongOutput(b *testing.B) {
	out := []byte(seqOutput(1000000))
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		tr := newTranscript(Keep{Head: 8 << 10, Tail: 22 << 10})
		var live int
		var last string // kept, as an event's text is
		s := newCappedStream("stdout", writerFunc(func(p []byte) (int, error) {
			last = string(p)
			live += len(last)
			return len(p), nil
		}), 16<<20)
		s.also = tr
		s.drain(&chunkReader{b: out, n: 32 << 10})
		if r := tr.result(); r.Stdout != int64(len(out)) || live != len(out) {
			b.Fatalf("transcript saw %d, live %d of %d bytes", r.Stdout, live, len(out))
		}
	}
}

// chunkReader reads b at most n bytes at a time, as a pipe does.
type chunkReader struct {
	b []byte
	n int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], r.b)
	r.b = r.b[k:]
	return k, nil
}

// TestTranscriptMatchesWholeOutput: for random writes from both streams
// against small and odd Head and Tail sizes (the tail's ring wraps at every
// offset), the transcript equals what cutting the whole output gives: the
// first Head bytes, the last Tail bytes, each run labelled with its stream,
// and the bytes and lines between them counted.
func TestTranscriptMatchesWholeOutput(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		keep := Keep{Head: rng.IntN(12), Tail: 1 + rng.IntN(17)}
		tr := newTranscript(keep)
		var all []byte
		var from []bool // the stream of each byte
		var out, errN int64
		for range rng.IntN(30) {
			stderr := rng.IntN(3) == 0
			p := make([]byte, rng.IntN(25))
			for i := range p {
				p[i] = "ab\n"[rng.IntN(3)]
			}
			tr.write(stderr, p)
			all = append(all, p...)
			for range p {
				from = append(from, stderr)
			}
			if stderr {
				errN += int64(len(p))
			} else {
				out += int64(len(p))
			}
		}
		// The reference: cut the whole output.
		chunks := func(lo, hi int) []jail.Chunk {
			var cs []jail.Chunk
			for i := lo; i < hi; i++ {
				cs = appendChunk(cs, from[i], all[i:i+1])
			}
			return cs
		}
		h := min(keep.Head, len(all))
		tl := max(h, len(all)-keep.Tail)
		got := tr.result()
		if want := text(chunks(0, h)); text(got.Head) != want {
			t.Fatalf("round %d %+v: head %q, want %q", round, keep, text(got.Head), want)
		}
		if want := text(chunks(tl, len(all))); text(got.Tail) != want {
			t.Fatalf("round %d %+v: tail %q, want %q", round, keep, text(got.Tail), want)
		}
		if got.Omitted != int64(tl-h) || got.OmittedLines != bytes.Count(all[h:tl], []byte{'\n'}) || got.Stdout != out || got.Stderr != errN {
			t.Fatalf("round %d %+v: counts %+v, want omitted %d (%d lines), %d out, %d err", round, keep, got, tl-h, bytes.Count(all[h:tl], []byte{'\n'}), out, errN)
		}
	}
}

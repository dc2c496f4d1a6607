package supervisor

import (
	"bytes"
	"sync"

	"brig/jail"
)

// Keep says how much of a command's output the Result's transcript keeps:
// the first Head bytes and the last Tail bytes of stdout and stderr
// together. The zero Keep keeps no transcript.
type Keep struct {
	Head, Tail int
}

// transcript records both output streams of a call in the order they are
// read, keeping a bounded head and tail. It sees every byte (the per-stream
// cap of the live copy does not apply), so the tail is the real end of the
// output.
type transcript struct {
	keep Keep

	mu    sync.Mutex
	head  []jail.Chunk
	headN int
	// The tail is a ring of keep.Tail bytes (allocated at its first byte)
	// holding the last tailN bytes from ring[start], in segments of one
	// stream each: every byte is copied once, and a long output leaves no
	// garbage behind (appending to a slice cut from the front reallocated
	// it every few dozen kilobytes).
	ring     []byte
	start    int
	tailN    int
	segs     []segment
	omitted  int64
	omitLine int
	midLine  [2]bool // per stream (stdout, stderr): its last omitted byte was not a newline
	out, err int64
}

// segment is a run of tail bytes from one stream.
type segment struct {
	stderr bool
	n      int
}

func newTranscript(k Keep) *transcript {
	if k.Head <= 0 && k.Tail <= 0 {
		return nil
	}
	return &transcript{keep: k}
}

// write records p, read from stderr or stdout. p is not retained.
func (t *transcript) write(stderr bool, p []byte) {
	if t == nil || len(p) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if stderr {
		t.err += int64(len(p))
	} else {
		t.out += int64(len(p))
	}
	if room := t.keep.Head - t.headN; room > 0 {
		n := min(room, len(p))
		t.head = appendChunk(t.head, stderr, p[:n])
		t.headN += n
		p = p[n:]
	}
	if len(p) == 0 || t.keep.Tail <= 0 {
		t.omit(stderr, p)
		return
	}
	if len(p) > t.keep.Tail {
		// What the tail holds is older than p: it is left out first, so
		// that the bytes left out stay in order (midLine is of the last).
		t.dropFront(t.tailN)
		cut := len(p) - t.keep.Tail
		t.omit(stderr, p[:cut])
		p = p[cut:]
	}
	if t.ring == nil {
		t.ring = make([]byte, t.keep.Tail)
	}
	t.dropFront(t.tailN + len(p) - t.keep.Tail)
	// Copy p in after the last byte, wrapping at the ring's end.
	end := (t.start + t.tailN) % len(t.ring)
	n := copy(t.ring[end:], p)
	copy(t.ring, p[n:])
	t.tailN += len(p)
	if k := len(t.segs); k > 0 && t.segs[k-1].stderr == stderr {
		t.segs[k-1].n += len(p)
	} else {
		t.segs = append(t.segs, segment{stderr: stderr, n: len(p)})
	}
}

// dropFront omits the oldest n bytes of the tail (none when n <= 0).
func (t *transcript) dropFront(n int) {
	if n <= 0 {
		return
	}
	off := 0
	for n > 0 {
		k := min(t.segs[0].n, n)
		a, b := t.span(off, k)
		t.omit(t.segs[0].stderr, a)
		t.omit(t.segs[0].stderr, b)
		off += k
		n -= k
		if t.segs[0].n > k {
			t.segs[0].n -= k
			break
		}
		t.segs = t.segs[1:]
	}
	t.start = (t.start + off) % len(t.ring)
	t.tailN -= off
}

// span is the tail's bytes [off, off+n) as one or two slices of the ring.
func (t *transcript) span(off, n int) (a, b []byte) {
	from := (t.start + off) % len(t.ring)
	if from+n <= len(t.ring) {
		return t.ring[from : from+n], nil
	}
	return t.ring[from:], t.ring[:n-(len(t.ring)-from)]
}

func (t *transcript) omit(stderr bool, p []byte) {
	if len(p) == 0 {
		return
	}
	t.omitted += int64(len(p))
	t.omitLine += bytes.Count(p, []byte{'\n'})
	s := 0
	if stderr {
		s = 1
	}
	t.midLine[s] = p[len(p)-1] != '\n'
}

// appendChunk adds a copy of p to cs, joining the last chunk when it is of
// the same stream.
func appendChunk(cs []jail.Chunk, stderr bool, p []byte) []jail.Chunk {
	if n := len(cs); n > 0 && cs[n-1].Stderr == stderr {
		cs[n-1].Data = append(cs[n-1].Data, p...)
		return cs
	}
	return append(cs, jail.Chunk{Stderr: stderr, Data: append([]byte(nil), p...)})
}

func (t *transcript) result() jail.Transcript {
	if t == nil {
		return jail.Transcript{}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var tail []jail.Chunk
	off := 0
	for _, sg := range t.segs {
		a, b := t.span(off, sg.n)
		tail = append(tail, jail.Chunk{Stderr: sg.stderr, Data: append(append(make([]byte, 0, sg.n), a...), b...)})
		off += sg.n
	}
	return jail.Transcript{Head: t.head, Tail: tail, Omitted: t.omitted, OmittedLines: t.omitLine, MidLine: t.midLine, Stdout: t.out, Stderr: t.err}
}

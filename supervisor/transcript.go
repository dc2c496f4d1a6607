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

	mu       sync.Mutex
	head     []jail.Chunk
	headN    int
	tail     []jail.Chunk
	tailN    int
	omitted  int64
	omitLine int
	out, err int64
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
	if len(p) == 0 {
		return
	}
	if len(p) > t.keep.Tail {
		cut := len(p) - t.keep.Tail
		t.omit(p[:cut])
		p = p[cut:]
	}
	t.tail = appendChunk(t.tail, stderr, p)
	t.tailN += len(p)
	for t.tailN > t.keep.Tail {
		c := &t.tail[0]
		n := min(len(c.Data), t.tailN-t.keep.Tail)
		t.omit(c.Data[:n])
		c.Data = c.Data[n:]
		t.tailN -= n
		if len(c.Data) == 0 {
			t.tail = t.tail[1:]
		}
	}
}

func (t *transcript) omit(p []byte) {
	t.omitted += int64(len(p))
	t.omitLine += bytes.Count(p, []byte{'\n'})
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
	return jail.Transcript{Head: t.head, Tail: t.tail, Omitted: t.omitted, OmittedLines: t.omitLine, Stdout: t.out, Stderr: t.err}
}

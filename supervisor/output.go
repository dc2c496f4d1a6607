package supervisor

import (
	"bytes"
	"fmt"
	"io"
	"sync"
)

// cappedStream copies one output stream of a call to a writer, or into a
// buffer, up to a cap. Past the cap it keeps draining (so the writer never
// blocks on a full pipe) but drops the bytes, and says once, in the stream
// itself, that it did.
type cappedStream struct {
	name  string
	w     io.Writer // nil: capture
	limit int64
	// also receives every byte, past the cap too (nil: none).
	also   *transcript
	stderr bool
	// quiet: the note that the cap cut the stream is not written into it.
	quiet bool

	mu        sync.Mutex
	buf       bytes.Buffer
	n         int64
	truncated bool
}

func newCappedStream(name string, w io.Writer, limit int64) *cappedStream {
	return &cappedStream{name: name, w: w, limit: limit}
}

func (c *cappedStream) drain(r io.Reader) {
	chunk := make([]byte, 32<<10)
	for {
		k, err := r.Read(chunk)
		if k > 0 {
			c.also.write(c.stderr, chunk[:k])
			c.write(chunk[:k])
		}
		if err != nil {
			return
		}
	}
}

func (c *cappedStream) write(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.truncated {
		return
	}
	if c.limit > 0 && c.n+int64(len(p)) > c.limit {
		p = p[:c.limit-c.n]
		c.truncated = true
	}
	c.n += int64(len(p))
	c.emit(p)
	if c.truncated && !c.quiet {
		c.emit(fmt.Appendf(nil, "\n[brig: %s truncated after %d bytes; the rest was discarded]\n", c.name, c.limit))
	}
}

func (c *cappedStream) emit(p []byte) {
	if c.w != nil {
		_, _ = c.w.Write(p)
		return
	}
	c.buf.Write(p)
}

// result returns the captured bytes (nil when streaming) and whether the cap
// cut the stream.
func (c *cappedStream) result() ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w != nil {
		return nil, c.truncated
	}
	return c.buf.Bytes(), c.truncated
}

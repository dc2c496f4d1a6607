package egress

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"brig/jail"
)

// chunk is how much one copy step moves at most. Between steps the
// deadlines are renewed, so a transfer that keeps moving is never cut,
// whatever its length; with TCP on both sides each step is a splice(2) in
// the kernel.
const chunk = 256 << 10

// tunnel copies both ways between the client and the host until both
// directions have ended, an idle timeout passes with no byte moving either
// way, or one side stops reading. It adds the bytes to rec, and calls sent
// (from trackUp) once the client's direction has ended.
func (s *Session) tunnel(client, up net.Conn, rec *jail.Connection, sent func()) {
	var last atomic.Int64 // unix nanoseconds of the last progress either way
	last.Store(time.Now().UnixNano())
	var wg sync.WaitGroup
	var upN, downN int64
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer sent()
		upN = s.pipe(up, client, &last)
	}()
	go func() {
		defer wg.Done()
		downN = s.pipe(client, up, &last)
	}()
	wg.Wait()
	_ = up.Close()
	_ = client.Close()
	rec.Up += upN
	rec.Down += downN
}

// pipe copies src to dst. At src's end it half-closes dst (the other
// direction may go on); on any failure it closes both, ending the other
// direction too.
func (s *Session) pipe(dst, src net.Conn, last *atomic.Int64) int64 {
	idle := s.p.o.IdleTimeout
	var total int64
	for {
		now := time.Now()
		_ = src.SetReadDeadline(now.Add(idle))
		_ = dst.SetWriteDeadline(now.Add(idle))
		n, err := io.CopyN(dst, src, chunk)
		total += n
		if n > 0 {
			last.Store(time.Now().UnixNano())
		}
		switch {
		case err == nil:
			continue
		case errors.Is(err, io.EOF):
			closeWrite(dst)
			return total
		case errors.Is(err, os.ErrDeadlineExceeded) && time.Since(time.Unix(0, last.Load())) < idle:
			// Quiet this way, but something moved lately (this way or
			// the other). A client that stops reading stops both: then
			// nothing moves and the tunnel ends.
			continue
		}
		_ = src.Close()
		_ = dst.Close()
		return total
	}
}

// closeWrite half-closes c when it can, else closes it.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}

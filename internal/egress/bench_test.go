package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// The proxy's cost, on loopback (make bench): what a connection through a
// CONNECT tunnel costs to set up beyond a direct one, and the throughput
// of a tunnel against a direct connection. Goals: at most 1 ms of setup,
// at least 80% of direct throughput.

// server accepts connections and, for each, writes size bytes (0: closes
// at once).
func server(b *testing.B, size int64) net.Listener {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 256<<10)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for left := size; left > 0; {
					n := min(int64(len(buf)), left)
					if _, err := c.Write(buf[:n]); err != nil {
						return
					}
					left -= n
				}
			}()
		}
	}()
	b.Cleanup(func() { l.Close() })
	return l
}

func benchSession(b *testing.B) *Session {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	s := New(Options{MaxRecords: 1 << 20}).Serve(l, SessionOptions{Decider: DeciderFunc(func(_ context.Context, _ Request) Verdict {
		return Verdict{Allow: true, Named: true, Rule: "bench"}
	}), Token: "bench-token-0123456789"})
	b.Cleanup(func() { s.Close() })
	return s
}

// tunnelTo opens a CONNECT tunnel to target through s.
func tunnelTo(b *testing.B, s *Session, target string) (net.Conn, *bufio.Reader) {
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic YnJpZzpiZW5jaC10b2tlbi0wMTIzNDU2Nzg5\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("CONNECT: %v %v", resp, err)
	}
	return c, br
}

func BenchmarkSetup(b *testing.B) {
	l := server(b, 0)
	target := l.Addr().String()
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			c, err := net.Dial("tcp", target)
			if err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
	})
	b.Run("proxy", func(b *testing.B) {
		s := benchSession(b)
		for b.Loop() {
			c, _ := tunnelTo(b, s, target)
			c.Close()
		}
	})
}

const transfer = 64 << 20

func BenchmarkThroughput(b *testing.B) {
	l := server(b, transfer)
	target := l.Addr().String()
	read := func(b *testing.B, r io.Reader) {
		n, err := drain(r)
		if err != nil || n != transfer {
			b.Fatalf("read %d bytes, %v; want %d", n, err, transfer)
		}
	}
	b.Run("direct", func(b *testing.B) {
		b.SetBytes(transfer)
		for b.Loop() {
			c, err := net.Dial("tcp", target)
			if err != nil {
				b.Fatal(err)
			}
			read(b, c)
			c.Close()
		}
	})
	b.Run("proxy", func(b *testing.B) {
		s := benchSession(b)
		b.SetBytes(transfer)
		for b.Loop() {
			c, br := tunnelTo(b, s, target)
			read(b, io.MultiReader(io.LimitReader(br, int64(br.Buffered())), c))
			c.Close()
		}
	})
}

// BenchmarkProxyCost runs both comparisons and reports the figures the
// goals are stated in: setup-overhead-µs (proxy minus direct, per
// connection) and throughput-% (proxy over direct).
func BenchmarkProxyCost(b *testing.B) {
	setup := func(proxied bool, n int) time.Duration {
		l := server(b, 0)
		s := benchSession(b)
		start := time.Now()
		for range n {
			var c net.Conn
			if proxied {
				c, _ = tunnelTo(b, s, l.Addr().String())
			} else {
				var err error
				if c, err = net.Dial("tcp", l.Addr().String()); err != nil {
					b.Fatal(err)
				}
			}
			c.Close()
		}
		return time.Since(start) / time.Duration(n)
	}
	rate := func(proxied bool) float64 {
		l := server(b, transfer)
		s := benchSession(b)
		start := time.Now()
		var r io.Reader
		var c net.Conn
		if proxied {
			var br *bufio.Reader
			c, br = tunnelTo(b, s, l.Addr().String())
			r = io.MultiReader(io.LimitReader(br, int64(br.Buffered())), c)
		} else {
			var err error
			if c, err = net.Dial("tcp", l.Addr().String()); err != nil {
				b.Fatal(err)
			}
			r = c
		}
		if n, err := drain(r); err != nil || n != transfer {
			b.Fatalf("read %d, %v", n, err)
		}
		c.Close()
		return float64(transfer) / time.Since(start).Seconds()
	}
	var overhead time.Duration
	var direct, proxied float64
	for b.Loop() {
		overhead += setup(true, 200) - setup(false, 200)
		direct += rate(false)
		proxied += rate(true)
	}
	b.ReportMetric(float64(overhead.Microseconds())/float64(b.N), "setup-overhead-µs")
	b.ReportMetric(100*proxied/direct, "throughput-%")
	b.ReportMetric(direct/float64(b.N)/(1<<20), "direct-MiB/s")
	b.ReportMetric(proxied/float64(b.N)/(1<<20), "proxy-MiB/s")
}

// drain reads r to its end in large reads, as a download client would.
func drain(r io.Reader) (int64, error) {
	buf := make([]byte, 256<<10)
	var n int64
	for {
		k, err := r.Read(buf)
		n += int64(k)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

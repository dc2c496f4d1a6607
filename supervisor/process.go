package supervisor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"brig/internal/egress"
	"brig/jail"
)

// MaxStderrTail is how much of a long-lived process's standard error is
// kept (its last bytes), for the message when it dies.
const MaxStderrTail = 16 << 10

// Process is a long-lived jailed command whose standard input and output
// the caller holds (an MCP stdio server). Its whole tree dies with the
// handle: Kill, the context given to Start, or the supervisor's exit (init
// sees its control socket close and kills the tree).
type Process struct {
	// Stdin is the command's standard input. Closing it sends EOF.
	Stdin io.WriteCloser
	// Stdout is the command's standard output. The caller reads it (and
	// closes it when done); EOF means the tree is gone.
	Stdout io.ReadCloser

	s      *Supervisor
	c      *child
	stderr *tailBuffer
	stop   context.CancelFunc

	killOnce sync.Once
	killed   atomic.Bool
	done     chan struct{} // closed when the result is known
	res      jail.Result
	err      error

	// sweep runs the sweep of the protected paths as they were at the
	// start (Sweep); nil until the process started.
	sweep   func() []string
	sweepMu sync.Mutex
}

// Start starts inv under spec as a long-lived process and returns at once;
// a set-up failure in the jail shows as EOF on Stdout and as Wait's error.
// It always uses a freshly started (cold) child: a prewarmed one was started
// with standard input on /dev/null. spec.Limits.Timeout, when set, bounds
// the process's whole life; zero means it lives until killed. With
// spec.Network, net decides each connection it makes through the egress
// proxy (nil refuses them all); the proxy's session lasts as long as the
// process.
func (s *Supervisor) Start(ctx context.Context, spec jail.Spec, inv jail.Invocation, net egress.Decider) (*Process, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := inv.Validate(); err != nil {
		return nil, err
	}
	pl, err := s.plan(spec)
	if err != nil {
		return nil, err
	}
	// A long-lived process's changes could not be put back until it
	// ends: without namespaces its grant is split around the protected
	// paths instead.
	pl.opts.RestoreProtected = false
	if spec.Cache != nil {
		if err := s.prepareCache(spec.Cache); err != nil {
			return nil, err
		}
	}
	pl.opts.NprocExtra = nprocExtra(pl, spec.Limits)
	if spec.Limits.Disk > 0 {
		// Over a long life, what the disk loses says little about this
		// process: only the reserve of free space is kept.
		spec.Limits.Disk = math.MaxUint64
	}

	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	c, err := s.startChildStdin(pl.flags, spec.Limits, inR, pl.base, pl.notify, s.programs().full(inv))
	inR.Close() // init holds it now
	if err != nil {
		inW.Close()
		return nil, err
	}
	life, stop := context.WithCancel(ctx)
	if spec.Limits.Timeout > 0 {
		life, stop = context.WithTimeout(ctx, spec.Limits.Timeout)
	}
	p := &Process{
		Stdin: inW, Stdout: c.outR, s: s, c: c, stop: stop,
		stderr: &tailBuffer{limit: MaxStderrTail, log: s.log, name: firstArg(inv)},
		done:   make(chan struct{}),
	}
	px, err := s.startProxy(c, &spec, &pl, net)
	if err != nil {
		stop()
		inW.Close()
		c.discard()
		return nil, err
	}
	stderrDone := make(chan struct{})
	go func() { p.stderr.drain(c.errR); close(stderrDone) }()
	started := time.Now()
	var before map[string]protectedState
	var pending string
	callStart := callClock()
	pl.opts.MemoryCgroup = c.cg.boundsMemory()
	var meta *metadataGuard
	record := func() (err error) {
		if pl.notify != nil {
			if meta, err = s.metadataFor(c, spec); err != nil {
				return err
			}
		}
		before = snapshotProtected(spec.Protected)
		pending = s.notePending(spec, before, callStart) // a killed brig's next session sweeps for it
		return nil
	}
	if err := c.parent.Start(spec, inv, pl.opts, record); err != nil {
		donePending(pending)
		meta.stop()
		px.close()
		stop()
		c.kill(s.log)
		report := c.parent.Report() // init is gone: what it said before, if anything
		c.wait()
		c.cg.remove()
		inW.Close()
		c.outR.Close()
		if report != nil {
			return nil, report
		}
		return nil, &jail.StageError{Stage: jail.StageProtocol, Msg: fmt.Sprintf("send the spec to init: %v", err)}
	}
	go func() {
		res, err := c.parent.Wait()
		res.Connections = px.close()
		if p.killed.Load() {
			// Killed on purpose: init may have been killed before it
			// could report; either way the tree is gone.
			res.Canceled, err = true, nil
		}
		c.wait()
		c.cg.remove()
		// The tree is dead, so standard error reaches its end: read it to
		// the last byte (a crash's reason is usually there) before the
		// process is reported gone; bound the wait so a bug cannot hang.
		select {
		case <-stderrDone:
		case <-time.After(5 * time.Second):
			c.errR.Close()
			<-stderrDone
		}
		c.errR.Close()
		meta.stop()
		res.Duration = time.Since(started)
		res.Stderr = p.stderr.bytes()
		p.sweepMu.Lock()
		res.Violations = s.sweepAll(spec, before, callStart)
		p.sweepMu.Unlock()
		donePending(pending)
		p.res, p.err = res, err
		close(p.done)
		stop()
	}()
	if len(writtenRoots(spec)) > 0 {
		p.sweep = func() []string { return s.sweepAll(spec, before, callStart) }
	}
	go func() {
		select {
		case <-life.Done():
			p.Kill()
		case <-p.done:
		}
	}()
	return p, nil
}

// Sweep takes out, while the process runs, what it has planted in the
// protected paths of the places it may write since it started (as the
// sweep at its end does), and returns those paths; a process that may
// write nothing, or one that has ended, has none. The MCP manager calls
// it after each tool call of a server with a write grant, so that what
// the server planted does not wait for the session's end.
func (p *Process) Sweep() []string {
	if p.sweep == nil {
		return nil
	}
	select {
	case <-p.done:
		return nil
	default:
	}
	p.sweepMu.Lock()
	defer p.sweepMu.Unlock()
	return p.sweep()
}

// Kill ends the process and everything it started, and waits until the
// tree is gone. It is safe to call more than once and after the process
// exited by itself.
func (p *Process) Kill() {
	p.killOnce.Do(func() {
		p.killed.Store(true) // before stdin closes: the command may end on that EOF
		p.Stdin.Close()
		select {
		case <-p.done:
			return
		default:
		}
		_ = p.c.parent.Cancel()
		select {
		case <-p.done:
		case <-time.After(p.s.grace):
			p.s.log.Warn("jail init did not stop in time; killing it", "pid", p.c.proc.Pid)
			p.c.kill(p.s.log)
			<-p.done
		}
	})
	<-p.done
}

// Wait blocks until the process ended and returns how: the command's exit
// status, Canceled when it was killed, the tail of its standard error, and
// any protected path it created (already undone). A *jail.StageError means
// it never ran.
func (p *Process) Wait() (jail.Result, error) {
	<-p.done
	return p.res, p.err
}

// Done is closed when the process has ended.
func (p *Process) Done() <-chan struct{} { return p.done }

// StderrTail returns the last bytes the process wrote to standard error.
func (p *Process) StderrTail() string { return string(p.stderr.bytes()) }

// InitPID is the host pid of the jail's init process (for diagnostics).
func (p *Process) InitPID() int { return p.c.proc.Pid }

func firstArg(inv jail.Invocation) string {
	if len(inv.Argv) > 0 {
		return inv.Argv[0]
	}
	return inv.Tool
}

// tailBuffer keeps the last limit bytes written to it and logs each line
// at debug level (a line longer than the limit is logged cut).
type tailBuffer struct {
	limit int
	log   *slog.Logger
	name  string

	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) drain(r io.Reader) {
	chunk := make([]byte, 8<<10)
	var line []byte
	for {
		n, err := r.Read(chunk)
		if n > 0 {
			t.write(chunk[:n])
			line = append(line, chunk[:n]...)
			for {
				i := bytes.IndexByte(line, '\n')
				if i < 0 {
					break
				}
				t.log.Debug("jailed process stderr", "process", t.name, "line", string(line[:i]))
				line = line[i+1:]
			}
			if len(line) > t.limit {
				t.log.Debug("jailed process stderr", "process", t.name, "line", string(line[:t.limit]), "cut", true)
				line = line[:0]
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				t.log.Debug("read jailed process stderr", "process", t.name, "err", err)
			}
			return
		}
	}
}

func (t *tailBuffer) write(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.limit; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
}

func (t *tailBuffer) bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.buf...)
}

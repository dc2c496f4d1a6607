package jail

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// StartOptions are the parts of a start message that the supervisor decides
// from what the kernel offers, not from policy.
type StartOptions struct {
	Seccomp     []byte // raw BPF from filter.BuildNarrowingFilter, stacked on the base filter (Prepare)
	Namespaces  bool   // init runs in fresh user, mount and PID namespaces
	PrivateNet  bool   // ... and a fresh network namespace
	LandlockABI int
	// ProxyPort is the egress proxy's port on the host's loopback, for a
	// call with Network and no private network namespace: the one port
	// Landlock lets it connect to.
	ProxyPort int
	// MemoryCgroup: the call's cgroup bounds its memory (init need not
	// watch it).
	MemoryCgroup bool
	// NprocExtra is added to RLIMIT_NPROC: the user's processes outside
	// the call, which the kernel counts too without a user namespace.
	NprocExtra uint64
	// RestoreProtected: without a mount namespace, the supervisor puts
	// back every protected path after the call (it has recorded them, and
	// no process outlives the call), so the Landlock grant is not split
	// around them and the directories they sit in (the workspace root,
	// .git) accept new entries. Without it, and without namespaces, the
	// grant is split (long-lived processes: nothing could put back what
	// they change while they run).
	RestoreProtected bool
}

// Parent is the supervisor's end of an init process's control socket, and
// of the worker's start socket.
type Parent struct {
	c, w *conn
	// OnProxy gets the listening socket init made on the loopback of the
	// call's network namespace for a call with Network (set before Start;
	// nil closes it). It is called from Wait, as soon as the socket
	// arrives, before the tool starts.
	OnProxy func(listener *os.File)
	// listener is the notify filter's listener when it came before
	// {prepared} (WaitPrepared), kept for Listener.
	listener *os.File
	// direct: init starts the command itself and reads the start socket
	// (direct.go); it gets no view part on its control socket, and it
	// serves calls in turn until EndCalls.
	direct bool
	// output is the next call's stdout and stderr, for a direct init's
	// call after its first (SetOutput); sent with the start message.
	output []*os.File
}

// NewParent wraps the supervisor's ends of two SocketPairs: init's control
// socket (its ControlFD) and the worker's start socket (init's and then the
// worker's StartFD; a direct init's own, InitArgs). direct says init was
// started so.
func NewParent(initEnd, workerEnd *os.File, direct bool) *Parent {
	return &Parent{c: &conn{f: initEnd}, w: &conn{f: workerEnd}, direct: direct}
}

// SendWorker hands a carried init the worker's program (jail.InitArgs with
// carried set): the first message on its control socket, which init waits
// for before it forks the worker.
func (p *Parent) SendWorker(f *os.File) error {
	return p.c.sendFD(message{WorkerExe: true}, int(f.Fd()))
}

// Report is what init reported before it exited, read after a failed
// Start once init is gone (killed, or exited on its own): a failure while
// it prepared — a mount refused, say — says more than the failed send
// that followed. Nil when it left no report. Init must be gone, or this
// waits for it.
func (p *Parent) Report() *StageError {
	m, err := p.c.recv()
	if err != nil || m.Error == nil {
		return nil
	}
	return m.Error
}

// Prepare sends the worker the base seccomp filter, which it loads before
// its call is known, and the notify filter (nil: none), which it loads
// first; the notify filter's listener then comes back (Listener). It must
// come before Start; a child that never gets it refuses every call that
// wants the seccomp layer.
func (p *Parent) Prepare(baseSeccomp, notify []byte) error {
	return p.w.sendRaw(encodePrepare(prepareMsg{Seccomp: baseSeccomp, Notify: notify}))
}

// Listener receives the notify filter's listener from a worker that was
// prepared with one. It waits for the worker to have loaded it (a
// prewarmed worker has long done so) and fails if the worker exits first.
func (p *Parent) Listener() (*os.File, error) {
	if l := p.listener; l != nil {
		p.listener = nil
		return l, nil
	}
	m, fd, err := p.w.recvWithFD()
	if err != nil {
		return nil, fmt.Errorf("receive the notify filter's listener from the worker: %w", err)
	}
	if !m.Listener || fd < 0 {
		if fd >= 0 {
			unix.Close(fd)
		}
		return nil, errors.New("receive the notify filter's listener from the worker: unexpected message")
	}
	return os.NewFile(uintptr(fd), "seccomp-notify"), nil
}

// WaitPrepared waits for a worker that was prepared (Prepare) to say it
// has loaded the base filter and waits for its call: the child's start is
// over. A notify filter's listener, which comes before, is kept for
// Listener. It fails if the worker exits first.
func (p *Parent) WaitPrepared() error {
	for {
		m, fd, err := p.w.recvWithFD()
		if err != nil {
			return fmt.Errorf("wait for the worker to be ready: %w", err)
		}
		switch {
		case m.Listener && fd >= 0 && p.listener == nil:
			p.listener = os.NewFile(uintptr(fd), "seccomp-notify")
			continue
		case m.Prepared && fd < 0:
			return nil
		}
		if fd >= 0 {
			unix.Close(fd)
		}
		return errors.New("wait for the worker to be ready: unexpected message")
	}
}

// Start sends the call to the worker, and to init what it needs of it to
// build the view (Spec.viewPart); both start on it at once. It then runs
// beforeTool (nil: nothing), and only once that has returned lets the
// worker start the tool: what beforeTool records (the supervisor's snapshot
// of the protected paths) is recorded before the tool can change anything,
// yet off the call's critical path, while the child builds the view and
// the Landlock ruleset.
//
// When beforeTool fails, the worker never gets {go} (it exits without
// running anything) and Start returns a *BeforeToolError holding the
// error.
func (p *Parent) Start(spec Spec, inv Invocation, o StartOptions, beforeTool func() error) error {
	var toInit []byte
	var err error
	if !p.direct {
		toInit, err = encodeStart(startMsg{
			Spec: spec.viewPart(), Namespaces: o.Namespaces, PrivateNet: o.PrivateNet, LandlockABI: o.LandlockABI,
			ProxyPort:    o.ProxyPort,
			MemoryCgroup: o.MemoryCgroup,
		})
		if err != nil {
			return err
		}
	}
	toWorker, err := encodeStart(startMsg{
		Spec: spec, Invocation: inv, Seccomp: o.Seccomp,
		Namespaces: o.Namespaces, PrivateNet: o.PrivateNet, LandlockABI: o.LandlockABI,
		ProxyPort:  o.ProxyPort,
		NprocExtra: o.NprocExtra, RestoreProtected: o.RestoreProtected,
		MemoryCgroup: o.MemoryCgroup, // for a direct init

	})
	if err != nil {
		return err
	}
	// Both wake at once; init's mount view is the longer way. A direct
	// init reads the whole call on the start socket.
	if !p.direct {
		if err := p.c.sendRaw(toInit); err != nil {
			return err
		}
	}
	if err := p.w.sendRawFiles(toWorker, p.output); err != nil {
		return fmt.Errorf("to the worker: %w", err)
	}
	p.output = nil
	if beforeTool != nil {
		if err := beforeTool(); err != nil {
			_ = p.w.close()
			return &BeforeToolError{Err: err}
		}
	}
	// Nothing else goes that way. A worker that cannot hear {go} has
	// already failed (a grant that does not exist, say) and exited: its
	// own report reaches the supervisor through init, which is worth more
	// than this send's EPIPE; and without {go} a worker never starts the
	// tool.
	_ = p.w.sendRaw(goAhead)
	if !p.direct {
		_ = p.w.close()
	}
	return nil
}

// SetOutput gives a direct init's next call its own stdout and stderr
// (the first call's are init's own): sent with its start message, they
// are the caller's to close once Start has returned.
func (p *Parent) SetOutput(stdout, stderr *os.File) { p.output = []*os.File{stdout, stderr} }

// Gone reports whether init has closed its end of the control socket —
// it exited, or is exiting (a process's descriptors close before it
// finishes dying: PID 1 of a namespace still waits for the namespace's
// processes then). A waiting init writes nothing there, so this does
// not read.
func (p *Parent) Gone() bool {
	fds := []unix.PollFd{{Fd: int32(p.c.fd()), Events: unix.POLLRDHUP}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&(unix.POLLHUP|unix.POLLRDHUP|unix.POLLERR) != 0
}

// EndCalls tells a direct init that no other call comes (it exits once
// the one under way, if any, has ended): the start socket closes.
func (p *Parent) EndCalls() { _ = p.w.close() }

// Wait blocks until init reports how the call ended. A set-up failure comes
// back as a *StageError.
func (p *Parent) Wait() (Result, error) {
	m, fd, err := p.c.recvWithFD()
	for err == nil && m.Proxy {
		l := os.NewFile(uintptr(fd), "egress-proxy-listener")
		if fd < 0 || p.OnProxy == nil {
			if l != nil {
				l.Close()
			}
		} else {
			p.OnProxy(l)
		}
		m, fd, err = p.c.recvWithFD()
	}
	if fd >= 0 {
		unix.Close(fd) // nothing else carries one
	}
	switch {
	case errors.Is(err, errEOF):
		return Result{}, &StageError{Stage: StageProtocol, Msg: "the jail's init process exited without reporting a result (it crashed or was killed)"}
	case err != nil:
		return Result{}, &StageError{Stage: StageProtocol, Msg: fmt.Sprintf("read from init: %v", err)}
	case m.Error != nil:
		return Result{}, m.Error
	case m.Result != nil:
		return *m.Result, nil
	}
	return Result{}, &StageError{Stage: StageProtocol, Msg: "init sent an unexpected message"}
}

// Cancel asks init to kill the call's tree and report.
func (p *Parent) Cancel() error { return p.c.send(message{Cancel: true}) }

// Close closes the sockets; init treats that as a cancel, and a worker
// still waiting for its start message exits.
func (p *Parent) Close() error {
	if p.listener != nil {
		p.listener.Close()
	}
	_ = p.w.close()
	return p.c.close()
}

// BeforeToolError is Start's error when its beforeTool failed: the tool
// never started.
type BeforeToolError struct{ Err error }

func (e *BeforeToolError) Error() string { return "before the tool: " + e.Err.Error() }
func (e *BeforeToolError) Unwrap() error { return e.Err }

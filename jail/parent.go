package jail

import (
	"errors"
	"fmt"
	"os"
)

// StartOptions are the parts of a start message that the supervisor decides
// from what the kernel offers, not from policy.
type StartOptions struct {
	Seccomp     []byte // raw BPF from BuildFilter
	Namespaces  bool   // init runs in fresh user, mount and PID namespaces
	PrivateNet  bool   // ... and a fresh network namespace
	LandlockABI int
}

// Parent is the supervisor's end of an init process's control socket.
type Parent struct{ c *conn }

// NewParent wraps the supervisor's end of SocketPair.
func NewParent(f *os.File) *Parent { return &Parent{c: &conn{f: f}} }

// Start sends the call to init.
func (p *Parent) Start(spec Spec, inv Invocation, o StartOptions) error {
	return p.c.send(message{Start: &startMsg{
		Spec: spec, Invocation: inv, Seccomp: o.Seccomp,
		Namespaces: o.Namespaces, PrivateNet: o.PrivateNet, LandlockABI: o.LandlockABI,
	}})
}

// Wait blocks until init reports how the call ended. A set-up failure comes
// back as a *StageError.
func (p *Parent) Wait() (Result, error) {
	m, err := p.c.recv()
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

// Close closes the socket; init treats that as a cancel.
func (p *Parent) Close() error { return p.c.close() }

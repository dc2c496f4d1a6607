package jail

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// Fixed descriptor numbers in every jail child.
const (
	// ControlFD is the SOCK_SEQPACKET socket to the parent (supervisor for
	// init, init for worker).
	ControlFD = 3
	// StartFD is the SOCK_SEQPACKET socket on which the worker gets its
	// start message straight from the supervisor (in parallel with init,
	// which hands it down as its own fd 4 and closes it).
	StartFD = 4
	// InitExeFD is, when init's arguments say so (InitArgs), init's own
	// carried program, through which it was executed; init closes it first
	// thing. The worker's program (brig-jail, whose Go tools the init
	// program lacks) comes later, in {worker_exe} on ControlFD: init
	// starts while the supervisor may still be writing it. Without carried
	// programs init runs its own binary as the worker.
	InitExeFD = 5
	// maxMessage bounds one protocol packet.
	maxMessage = 4 << 20
)

// Argv[1] values that mark a re-executed jail child.
const (
	initArg   = "__brig_jail_init"
	workerArg = "__brig_jail_worker"
	// carriedArg, right after initArg, says init holds its carried
	// program at InitExeFD and gets the worker's in {worker_exe}.
	carriedArg = "__brig_carried"
	// directArg, after initArg (and carriedArg), says init starts the
	// command itself, without a worker (direct.go).
	directArg = "__brig_direct"
)

// InitArgs returns the arguments (after argv[0]) that make the brig binary
// start as a jail init process. cgroupProcs are the cgroup.procs files of
// the call's cgroups (a root call's process and memory bound), which the
// worker is in before it can fork: born in them on cgroup v1 (init's
// forking thread joins them for the fork only, cgroupjoin.go), moved into
// them as soon as it has started on v2 (a direct start's command writes
// itself into them before its exec). Init itself stays outside, so it
// can always start the threads it needs to clean up.
// carried says the supervisor hands init its carried program at
// InitExeFD (and the worker's in {worker_exe}); direct, that init starts
// the call's command itself, without a worker (direct.go).
func InitArgs(carried, direct bool, cgroupProcs ...string) []string {
	args := []string{initArg}
	if carried {
		args = append(args, carriedArg)
	}
	if direct {
		args = append(args, directArg)
	}
	return append(args, cgroupProcs...)
}

// parseInitArgs splits init's arguments after initArg (os.Args[2:]).
func parseInitArgs(args []string) (carried, direct bool, cgroupProcs []string) {
	if len(args) > 0 && args[0] == carriedArg {
		carried, args = true, args[1:]
	}
	if len(args) > 0 && args[0] == directArg {
		direct, args = true, args[1:]
	}
	return carried, direct, args
}

// message is one packet of the fd-3 protocol. Exactly one field is set.
type message struct {
	// (The prepare and start messages are not JSON: see codec.go.)
	Error  *StageError `json:"error,omitempty"`
	Output *toolOutput `json:"output,omitempty"`
	Result *Result     `json:"result,omitempty"`
	Cancel bool        `json:"cancel,omitempty"`
	// Ready tells the worker that init has built the call's view.
	Ready bool `json:"ready,omitempty"`
	// Exec is the pid of the command the worker started (a child of init).
	Exec int `json:"exec,omitempty"`
	// Go lets the worker start the tool: the supervisor has recorded what
	// it checks after the call.
	Go bool `json:"go,omitempty"`
	// Listener carries the notify filter's listener (SCM_RIGHTS), from
	// the worker to the supervisor.
	Listener bool `json:"listener,omitempty"`
	// Prepared tells the supervisor that the worker has loaded the base
	// filter and waits for its call: a prewarmed child's start is over.
	Prepared bool `json:"prepared,omitempty"`
	// WorkerExe carries (as SCM_RIGHTS) the worker's program, from the
	// supervisor to a carried init, before anything else on ControlFD.
	WorkerExe bool `json:"worker_exe,omitempty"`
	// Proxy carries (as SCM_RIGHTS) the listening socket init made on the
	// loopback of the call's network namespace, for the supervisor's
	// egress proxy to accept the call's connections from.
	Proxy bool `json:"proxy,omitempty"`
}

// prepareMsg is what the worker (or a direct init) can do before its
// call is known: the first packet on the start socket (encodePrepare).
type prepareMsg struct {
	// Seccomp is the base filter (filter.BuildFilter(filter.BaseFilterOptions())); the
	// worker loads it at once, and the call's narrowing filter
	// (startMsg.Seccomp) is stacked on it.
	Seccomp []byte
	// Notify, when set, is the notify filter (filter.BuildNotifyFilter): the
	// worker loads it first and sends its listener back on the same
	// socket ({listener}, the descriptor attached).
	Notify []byte
}

// startMsg is everything a child needs to run one call (encodeStart).
type startMsg struct {
	Spec       Spec       `json:"spec"`
	Invocation Invocation `json:"invocation"`
	// Seccomp is the raw BPF program, compiled by the supervisor, that
	// narrows the base filter down to the call (filter.BuildNarrowingFilter);
	// empty when the base filter is all the call needs.
	Seccomp []byte `json:"seccomp,omitempty"`
	// Namespaces tells init it runs in fresh user, mount, PID (and maybe
	// network) namespaces and must build the view.
	Namespaces bool `json:"namespaces,omitempty"`
	// PrivateNet tells init the network namespace is private (bring up lo).
	PrivateNet bool `json:"private_net,omitempty"`
	// LandlockABI is the Landlock ABI the supervisor found.
	LandlockABI int `json:"landlock_abi"`
	// ProxyPort is the egress proxy's port on the host's loopback, the
	// one port a call with Network and no network namespace may connect
	// to (0: none).
	ProxyPort int `json:"proxy_port,omitempty"`
	// MemoryCgroup tells init that the call's cgroup bounds its memory,
	// so init need not watch it.
	MemoryCgroup bool `json:"memory_cgroup,omitempty"`
	// NprocExtra is added to RLIMIT_NPROC (not to the call's own process
	// budget, Limits.Processes): without a user namespace the kernel
	// counts every process of the user.
	NprocExtra uint64 `json:"nproc_extra,omitempty"`
	// RestoreProtected tells the worker that the supervisor restores the
	// protected paths after the call (StartOptions.RestoreProtected).
	RestoreProtected bool `json:"restore_protected,omitempty"`
}

type toolOutput struct {
	Data  json.RawMessage `json:"data,omitempty"`
	Error string          `json:"error,omitempty"`
}

// conn is one end of a SOCK_SEQPACKET socketpair carrying messages.
type conn struct{ f *os.File }

func newConn(fd int, name string) *conn { return &conn{f: os.NewFile(uintptr(fd), name)} }

func (c *conn) send(m message) error {
	b, err := encodeMessage(m)
	if err != nil {
		return err
	}
	if len(b) > maxMessage {
		return fmt.Errorf("message of %d bytes exceeds the %d-byte limit", len(b), maxMessage)
	}
	_, err = c.f.Write(b)
	return err
}

// recv reads one message. io.EOF-like conditions come back as errEOF.
func (c *conn) recv() (message, error) {
	m, _, err := c.recvRaw()
	return m, err
}

// sendRaw sends an already encoded message (init forwards the
// supervisor's start message to the worker without encoding it again).
func (c *conn) sendRaw(b []byte) error {
	_, err := c.f.Write(b)
	return err
}

// recvRaw reads one message and also returns its encoded bytes.
func (c *conn) recvRaw() (message, []byte, error) {
	buf, err := c.recvBytes()
	if err != nil {
		return message{}, nil, err
	}
	m, err := decodeMessage(buf)
	return m, buf, err
}

// recvBytes reads one packet without decoding it.
func (c *conn) recvBytes() ([]byte, error) {
	b, fd, err := c.recvPacket(false)
	if fd >= 0 {
		unix.Close(fd)
	}
	return b, err
}

// recvPacket reads one packet and, with fds, the first descriptor sent
// with it (-1 when none; any others are closed). Without fds, descriptors
// sent are discarded by the kernel.
func (c *conn) recvPacket(fds bool) ([]byte, int, error) {
	b, got, err := c.recvPacketAll(fds)
	fd := -1
	if len(got) > 0 {
		fd = got[0]
		closeAll(got[1:])
	}
	return b, fd, err
}

// recvPacketFDs reads one packet and every descriptor sent with it (at
// most maxPacketFDs; the kernel closes any beyond).
func (c *conn) recvPacketFDs() ([]byte, []int, error) { return c.recvPacketAll(true) }

// maxPacketFDs is how many descriptors a packet may carry here.
const maxPacketFDs = 4

func (c *conn) recvPacketAll(fds bool) ([]byte, []int, error) {
	// Peek at the packet's size first so a small message does not pay for
	// a buffer of the largest one.
	rc, err := c.f.SyscallConn()
	if err != nil {
		return nil, nil, err
	}
	var size int
	var perr error
	// ECONNRESET means the peer exited with a message of ours unread (say,
	// a worker that failed and exited as init told it the view was
	// ready). The kernel reports that once and clears it; what the peer
	// sent before it went is still queued and comes next, so it must not
	// be taken for the end of the conversation.
	for resets := 0; ; resets++ {
		if err := rc.Read(func(fd uintptr) bool {
			size, _, perr = unix.Recvfrom(int(fd), nil, unix.MSG_PEEK|unix.MSG_TRUNC)
			return perr != unix.EAGAIN
		}); err != nil {
			return nil, nil, err
		}
		if perr != unix.ECONNRESET || resets > 0 {
			break
		}
	}
	if perr != nil {
		return nil, nil, perr
	}
	if size == 0 {
		return nil, nil, errEOF
	}
	if size > maxMessage {
		return nil, nil, fmt.Errorf("message of %d bytes exceeds the %d-byte limit", size, maxMessage)
	}
	buf := make([]byte, size)
	if !fds {
		n, err := c.f.Read(buf)
		if n == 0 && errors.Is(err, unix.ECONNRESET) {
			n, err = c.f.Read(buf) // the reset arrived between the peek and the read
		}
		if n == 0 {
			if err == nil {
				err = errEOF
			}
			return nil, nil, err
		}
		return buf[:n], nil, nil
	}
	oob := make([]byte, unix.CmsgSpace(maxPacketFDs*4))
	var n, oobn int
	var rerr error
	for resets := 0; ; resets++ {
		if err := rc.Read(func(s uintptr) bool {
			n, oobn, _, _, rerr = unix.Recvmsg(int(s), buf, oob, unix.MSG_CMSG_CLOEXEC)
			return rerr != unix.EAGAIN
		}); err != nil {
			return nil, nil, err
		}
		if rerr != unix.ECONNRESET || resets > 0 {
			break
		}
	}
	var got []int
	if oobn > 0 {
		if cmsgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
			for _, cm := range cmsgs {
				if fds, err := unix.ParseUnixRights(&cm); err == nil {
					got = append(got, fds...)
				}
			}
		}
	}
	if rerr == nil && n == 0 {
		rerr = errEOF
	}
	if rerr != nil {
		closeAll(got)
		return nil, nil, rerr
	}
	return buf[:n], got, nil
}

// The messages a call's init sends and reads on its way (the go-ahead,
// {prepared}, {proxy}, the result) are encoded and recognised here without
// encoding/json's reflection: the first json.Marshal of a message in a
// process builds its encoder for every type a message holds, 0.13-0.17 ms
// of CPU, which every init paid once per call. Everything else (errors,
// cancellation, a worker's messages) goes through encoding/json, which
// reads and writes the same bytes (TestMessageEncodingAsJSON).
var (
	goAhead  = []byte(`{"go":true}`) // Parent.Start sends it as is
	prepared = []byte(`{"prepared":true}`)
	proxyFD  = []byte(`{"proxy":true}`)
)

// encodeMessage is json.Marshal(m), without reflection for the messages
// above.
func encodeMessage(m message) ([]byte, error) {
	switch {
	case m == message{Go: true}:
		return goAhead, nil
	case m == message{Prepared: true}:
		return prepared, nil
	case m == message{Proxy: true}:
		return proxyFD, nil
	case m.Result != nil && m == message{Result: m.Result}:
		if b, ok := encodeResult(m.Result); ok {
			return b, nil
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode message: %w", err)
	}
	return b, nil
}

// encodeResult writes {"result":{...}} as json.Marshal would, for a result
// as init reports it: the fields the supervisor fills in (the transcript,
// violations, connections) empty and no Go tool output (ok is false
// otherwise, and encoding/json does it).
func encodeResult(r *Result) (b []byte, ok bool) {
	if len(r.Output) > 0 || len(r.Violations) > 0 || len(r.Connections) > 0 {
		return nil, false
	}
	b = append(b, `{"result":{"exit_code":`...)
	b = strconv.AppendInt(b, int64(r.ExitCode), 10)
	str := func(key, v string) {
		if v != "" {
			q, _ := json.Marshal(v) // a string's encoder: no reflection over a struct
			b = append(append(append(b, `,"`...), key...), `":`...)
			b = append(b, q...)
		}
	}
	flag := func(key string, v bool) {
		if v {
			b = append(append(append(b, `,"`...), key...), `":true`...)
		}
	}
	str("signal", r.Signal)
	flag("timed_out", r.TimedOut)
	flag("canceled", r.Canceled)
	str("redo", r.Redo)
	flag("stdout_truncated", r.StdoutTruncated)
	flag("stderr_truncated", r.StderrTruncated)
	b = append(b, `,"duration":`...)
	b = strconv.AppendInt(b, int64(r.Duration), 10)
	str("limit", r.Limit)
	str("limit_detail", r.LimitDetail)
	return append(b, "}}"...), true
}

func decodeMessage(b []byte) (message, error) {
	if bytes.Equal(b, goAhead) {
		return message{Go: true}, nil
	}
	var m message
	if err := json.Unmarshal(b, &m); err != nil {
		return message{}, fmt.Errorf("decode message: %w", err)
	}
	return m, nil
}

// sendFD sends a message with one descriptor attached (SCM_RIGHTS).
func (c *conn) sendFD(m message, fd int) error {
	b, err := encodeMessage(m)
	if err != nil {
		return err
	}
	return c.sendWithFDs(b, fd)
}

// sendRawFiles sends an encoded message with files attached (none: a
// plain send).
func (c *conn) sendRawFiles(b []byte, files []*os.File) error {
	if len(files) == 0 {
		return c.sendRaw(b)
	}
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	err := c.sendWithFDs(b, fds...)
	runtime.KeepAlive(files)
	return err
}

// sendWithFDs sends the packet b with the descriptors attached.
func (c *conn) sendWithFDs(b []byte, fds ...int) error {
	rc, err := c.f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Write(func(s uintptr) bool {
		serr = unix.Sendmsg(int(s), b, unix.UnixRights(fds...), nil, 0)
		return serr != unix.EAGAIN
	}); err != nil {
		return err
	}
	return serr
}

// recvWithFD reads one message and the descriptor attached to it, if any
// (-1 when none).
func (c *conn) recvWithFD() (message, int, error) {
	b, fd, err := c.recvPacket(true)
	if err != nil {
		return message{}, -1, err
	}
	m, err := decodeMessage(b)
	if err != nil {
		if fd >= 0 {
			unix.Close(fd)
		}
		return message{}, -1, err
	}
	return m, fd, nil
}

func (c *conn) close() error { return c.f.Close() }

// fd is the socket's descriptor, for poll(2). The socket is blocking (it
// was never handed to Go's poller), so using the number leaves it as it is.
func (c *conn) fd() int { return int(c.f.Fd()) }

var errEOF = fmt.Errorf("peer closed the control socket")

// SocketPair returns a connected SOCK_SEQPACKET pair, both close-on-exec.
func SocketPair() (parent, child *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	// Raise the send buffer so a large Spec fits in one packet.
	for _, fd := range fds {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, maxMessage+4096)
	}
	return os.NewFile(uintptr(fds[0]), "jail-control"), os.NewFile(uintptr(fds[1]), "jail-control-child"), nil
}

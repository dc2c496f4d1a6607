package jail

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"brig/internal/textbusy"
)

// ToolFunc is a Go tool that runs inside the worker after every restriction
// is in place. Its output goes back to the supervisor as the call's Output.
type ToolFunc func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)

// FileToolFunc is a Go tool that reads the one file its call names
// (Invocation.Open). open opens that file: in a worker, os.Open after every
// restriction is in place; in an init that serves calls, a clone of init
// that takes every layer of the call, opens the file and exits, leaving it
// open for init (jail/direct.go). It refuses any other name. Init runs
// the tool itself, on what that open returned.
type FileToolFunc func(ctx context.Context, open func(name string) (*os.File, error), args json.RawMessage) (json.RawMessage, error)

// FileTool names a FileToolFunc.
type FileTool struct {
	Name string
	Run  FileToolFunc
}

// IsChild reports whether this process was started as a jail child. main()
// must check it before any other initialisation.
func IsChild() bool {
	return len(os.Args) > 1 && (os.Args[1] == initArg || os.Args[1] == workerArg)
}

// ChildMain runs the jail child and exits. tools are the Go tools this binary
// can run inside the worker (nil for none); fileTools those an init that
// serves calls can run on a file its clone opened (the worker runs them
// from tools).
func ChildMain(tools map[string]ToolFunc, fileTools ...FileTool) {
	switch os.Args[1] {
	case initArg:
		os.Exit(initMain(fileTools))
	case workerArg:
		os.Exit(workerMain(tools))
	}
	os.Exit(126)
}

// Exit statuses of a worker that never reached the tool.
const (
	exitSetupFailed = 126
	exitNotFound    = 127
)

// ---------------------------------------------------------------------------
// init: the trusted process that owns the call's process tree.

func initMain(fileTools []FileTool) int {
	// Spawning the worker uses SysProcAttr.Pdeathsig, which is tied to the
	// forking OS thread: keep this goroutine on one thread for good.
	runtime.LockOSThread()
	sup := newConn(ControlFD, "supervisor")

	fail := func(err *StageError) int {
		_ = sup.send(message{Error: err})
		return exitSetupFailed
	}
	// First of all, so that every process of the call inherits it.
	if err := oomScoreAdj(); err != nil {
		return fail(stageErr(StageRlimit, err))
	}
	carried, direct, cgroupProcs := parseInitArgs(os.Args[2:])
	// Init's own carried program is not needed once it runs.
	if carried {
		_ = unix.Close(InitExeFD)
	}

	pidNS := unix.Getpid() == 1
	if pidNS {
		if err := prepareNamespace(); err != nil {
			return fail(stageErr(StageMount, err))
		}
	}
	// Stage: session. A new session has no controlling terminal, so the tool
	// can never open or inject into the user's terminal.
	if _, err := unix.Setsid(); err != nil {
		if sid, _ := unix.Getsid(0); sid != unix.Getpid() {
			return fail(stageErr(StageSession, fmt.Errorf("setsid: %w", err)))
		}
	}
	// If the supervisor dies, the parent-death signal reaches us. In a PID
	// namespace it is SIGKILL: the kernel ends every process of the
	// namespace with its init, so init has nothing to clean up and needs
	// no signal handling (os/signal's goroutine, and the thread its wait
	// blocks, cost 2.6 ms of CPU in every call's start on a slow VM); a
	// SIGTERM, SIGHUP or SIGINT ends it likewise (Go's default). Without a
	// namespace a SIGKILL would leave the tree behind: the signal is
	// SIGTERM, and init watches for it and kills the tree first.
	term, deathSignal := -1, syscall.SIGKILL
	if !pidNS {
		var err error
		if term, err = notifyTermination(); err != nil {
			return fail(stageErr(StageSession, err))
		}
		deathSignal = syscall.SIGTERM
	}
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(deathSignal), 0, 0, 0); err != nil {
		return fail(stageErr(StageSession, fmt.Errorf("PR_SET_PDEATHSIG: %w", err)))
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fail(stageErr(StageSession, fmt.Errorf("PR_SET_CHILD_SUBREAPER: %w", err)))
	}
	// Without a PID namespace, init's own Landlock domain is what confines
	// its kill(-1) to the call. In one, the namespace does; and init must
	// stay free to mount, which a Landlock domain that handles any
	// filesystem right forbids.
	scoped := false
	if !pidNS {
		var err error
		if scoped, err = enterOuterDomain(); err != nil {
			return fail(stageErr(StageScope, err))
		}
	}

	if direct {
		return directMain(sup, term, pidNS, cgroupProcs, fileTools)
	}

	// The masks are made before the worker exists: making them mounts a
	// scratch tmpfs over /tmp for a moment, and a worker already running
	// would find /tmp empty there as it composed its grants (a write grant
	// under /tmp failed: "stat …: no such file or directory").
	hidden := masks{dir: -1, file: -1}
	if pidNS {
		var err error
		if hidden, err = makeMasks(); err != nil {
			return fail(stageErr(StageMount, err))
		}
	}

	// The worker's program: brig's own binary, or the carried one the
	// supervisor sends once it is written (init's start overlaps that).
	exe, exeFD := "/proc/self/exe", -1
	if carried {
		fd, err := recvWorkerExe(sup)
		if errors.Is(err, errEOF) {
			return 0 // a warm child discarded before its worker was sent
		}
		if err != nil {
			return fail(stageErr(StageWorker, err))
		}
		exe, exeFD = "/proc/self/fd/"+strconv.Itoa(fd), fd
	}

	// The worker is forked from this (locked) thread and inherits its
	// no_new_privs, securebits and bounding set: it starts unprivileged,
	// and the Go start-up of a privileged process never happens.
	if err := unprivilegeForkThread(); err != nil {
		return fail(stageErr(StageCaps, err))
	}
	// On cgroup v1 this thread joins the call's cgroups just for the fork,
	// so that the worker is born in them (cgroupjoin.go); on v2 the
	// worker is moved after it starts.
	joins, moves := splitCgroupJoins(cgroupProcs)
	if err := enterCgroups(joins); err != nil {
		return fail(stageErr(StageRlimit, err))
	}
	worker, wconn, err := startWorker(exe)
	if lerr := leaveCgroups(joins); lerr != nil {
		if err == nil {
			_ = unix.Kill(worker, unix.SIGKILL)
			wconn.f.Close()
		}
		return fail(stageErr(StageRlimit, lerr))
	}
	if exeFD >= 0 {
		_ = unix.Close(exeFD) // the worker runs it now; init keeps no copy for the call's life
	}
	if err != nil {
		return fail(stageErr(StageWorker, err))
	}
	// From here on the worker exists: every exit path must kill the tree.
	rp, err := newReaper(worker, pidNS, scoped)
	if err != nil {
		_ = unix.Kill(worker, unix.SIGKILL)
		return fail(stageErr(StageWorker, err))
	}
	defer rp.close()
	killTree := rp.killAll
	// On cgroup v2 the worker joins the call's cgroups now, before it can
	// fork anything: it starts a command or a Go tool only after this init
	// says the view is ready, which comes after this. It may already have
	// failed on its own (a grant that does not exist) and exited: then its
	// own report says why, not this move.
	for _, procs := range moves {
		if err := os.WriteFile(procs, []byte(strconv.Itoa(worker)), 0); err != nil {
			if errors.Is(err, syscall.ESRCH) {
				break
			}
			killTree()
			return fail(stageErr(StageRlimit, fmt.Errorf("move the worker into cgroup %s: %w", procs, err)))
		}
	}
	if pidNS {
		if err := sealMounts(); err != nil {
			killTree()
			return fail(stageErr(StageMount, err))
		}
	}

	warmCodec()
	raw, err := sup.recvBytes()
	if err != nil {
		killTree()
		if errors.Is(err, errEOF) {
			return 0 // a warm child that was never used
		}
		return fail(stageErr(StageProtocol, err))
	}
	if !pidNS && !scoped {
		killTree()
		return fail(&StageError{Stage: StageScope, Msg: "neither a PID namespace nor Landlock scoping (ABI 6) is available, so the call's process tree cannot be contained"})
	}
	// The worker got the whole call from the supervisor (init only the
	// part that shapes the view) and prepares what does not depend on the
	// view while init builds it; it waits for {ready} for the rest.
	start, err := decodeStart(raw)
	if err != nil {
		killTree()
		return fail(stageErr(StageProtocol, err))
	}
	if start.Namespaces {
		if err := setupView(start.Spec, &hidden); err != nil {
			killTree()
			return fail(stageErr(StageMount, err))
		}
	} else if start.Spec.privateTmpWanted() {
		killTree()
		return fail(&StageError{Stage: StageMount, Msg: "the spec asks for a private /tmp but no mount namespace is available"})
	}
	// The proxy's listener is made before the tool can start: a
	// connection made at once waits in its backlog until the supervisor,
	// which gets it now, accepts.
	if start.Spec.Network && start.PrivateNet {
		if err := sendProxyListener(sup); err != nil {
			killTree()
			return fail(stageErr(StageNetwork, err))
		}
	}
	// The disks' starting state is recorded before the tool can write.
	w := newWatch(start.Spec, pidNS, start.MemoryCgroup)
	readyErr := wconn.send(message{Ready: true})
	if readyErr != nil {
		// The worker failed already (its error is waiting on the socket)
		// or cannot hear us: either way the call is over.
		killTree()
	}

	res, stageFail := superviseWorker(sup, wconn, rp, term, w)
	if stageFail == nil && readyErr != nil {
		stageFail = stageErr(StageProtocol, fmt.Errorf("tell the worker the view is ready: %w", readyErr))
	}
	if stageFail != nil {
		return fail(stageFail)
	}
	if err := sup.send(message{Result: &res}); err != nil {
		return exitSetupFailed
	}
	return 0
}

// unprivilegeForkThread sets, on the calling thread only, what the worker
// must inherit: no_new_privs; securebits NOROOT and NO_SETUID_FIXUP, locked
// (uid 0 gains no capabilities at exec); an empty bounding set and no
// ambient capabilities. Init keeps its own effective capabilities (it still
// mounts), because none of this removes a capability already held.
// Without CAP_SETPCAP (an ordinary user, no user namespace) there is no
// privilege to lose and only no_new_privs is set.
func unprivilegeForkThread() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	// Empty the inheritable set (the supervisor raised it to pass init its
	// ambient capabilities); effective and permitted stay for init's mounts.
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clear inheritable capabilities: %w", err)
	}
	// linux/securebits.h: NOROOT, NOROOT_LOCKED, NO_SETUID_FIXUP and its lock.
	const secure = 1<<0 | 1<<1 | 1<<2 | 1<<3
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, secure, 0, 0, 0); err != nil {
		if err == unix.EPERM {
			return nil
		}
		return fmt.Errorf("securebits: %w", err)
	}
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if err == unix.EINVAL {
				break // beyond the kernel's last capability
			}
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	return nil
}

// warmCodec encodes and decodes a start message of a typical size and shape,
// and the JSON messages of a call, so that encoding/json has built its
// encoders and decoders, and the heap has grown, before the real ones
// arrive: a fresh process pays for that reflection and those page faults
// once, which a prewarmed child should not do on the clock.
func warmCodec() {
	spec := Spec{Dir: "/", Workspace: "/", Limits: LimitsFor(16 << 30)} // the shape, without reading /proc/meminfo
	for i := range 60 {
		spec.Paths = append(spec.Paths, PathRule{Path: "/warm/" + strconv.Itoa(i), Access: Exec, Optional: true})
		spec.Env = append(spec.Env, "WARM_"+strconv.Itoa(i)+"=/warm/value")
	}
	for i := range 20 {
		spec.Protected = append(spec.Protected, "/warm/protected/"+strconv.Itoa(i))
		spec.Hidden = append(spec.Hidden, "/warm/hidden/"+strconv.Itoa(i))
	}
	if b, err := encodeStart(startMsg{Spec: spec, Invocation: Invocation{Argv: []string{"warm"}}, Seccomp: make([]byte, 512)}); err == nil {
		_, _ = decodeStart(b)
	}
	var m message
	_, _ = json.Marshal(message{Result: &Result{}})
	_, _ = json.Marshal(message{Exec: 1})
	_, _ = json.Marshal(message{Error: &StageError{Stage: StageExec, Msg: "warm"}})
	_ = json.Unmarshal([]byte(`{"ready":true}`), &m)
	_ = json.Unmarshal([]byte(`{"go":true}`), &m)
	_ = json.Unmarshal([]byte(`{"exec":1}`), &m)
}

// recvWorkerExe receives the worker's carried program ({worker_exe},
// the supervisor's first message to a carried init) and returns it as a
// close-on-exec descriptor numbered 100 or above, out of the way of the
// descriptors the worker is given, so nothing but the worker's exec uses
// it.
func recvWorkerExe(sup *conn) (int, error) {
	m, fd, err := sup.recvWithFD()
	if err != nil {
		return -1, err
	}
	if !m.WorkerExe || fd < 0 {
		if fd >= 0 {
			_ = unix.Close(fd)
		}
		return -1, fmt.Errorf("the supervisor's first message is not the worker's program (%+v)", m)
	}
	high, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 100)
	_ = unix.Close(fd)
	if err != nil {
		return -1, fmt.Errorf("the worker's program: %w", err)
	}
	return high, nil
}

// workerEnv is the worker's environment: one P, and the user's timer
// slack for its command, as init got it (slack.go).
func workerEnv() []string {
	env := []string{"GOMAXPROCS=1"}
	if v, ok := os.LookupEnv(TimerSlackEnv); ok {
		env = append(env, TimerSlackEnv+"="+v)
	}
	return env
}

// startWorker executes exe (this binary, or the worker program the
// supervisor handed over) as the worker with fds 0-2 and the supervisor's
// start socket (StartFD) inherited, and a fresh control socket on fd 3.
// /proc/self/exe keeps working when the binary was replaced on disk, and
// init still sees the host /proc here (the view is built later).
func startWorker(exe string) (int, *conn, error) {
	parent, child, err := SocketPair()
	if err != nil {
		return 0, nil, err
	}
	defer child.Close()
	attr := &syscall.ProcAttr{
		// The worker's own Go runtime (not the tool's environment): one P
		// means fewer threads for psx to stop at each all-thread syscall.
		Env:   workerEnv(),
		Files: []uintptr{0, 1, 2, child.Fd(), StartFD},
		Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	}
	var pid int
	err = textbusy.Retry(func() error {
		pid, err = syscall.ForkExec(exe, []string{"brig-jail-worker", workerArg}, attr)
		return err
	}, nil)
	if err != nil {
		parent.Close()
		return 0, nil, fmt.Errorf("start worker: %w", err)
	}
	// The supervisor's socket to the worker is the worker's now.
	_ = unix.Close(StartFD)
	releaseOutput()
	return pid, &conn{f: parent}, nil
}

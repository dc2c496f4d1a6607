package jail

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// A direct start: init starts the command itself, and there is no
// worker. A command needs none of the worker's Go code — only its steps
// before the exec, which a single-threaded clone of init takes as well
// (spawnDirect) — and a worker is a second Go program started for every
// call: on two cores, about a fifth of a call's CPU. The supervisor asks
// for it (InitArgs) for calls without a Go tool that get fresh namespaces
// (init is then PID 1, and the kernel ends the call's processes with it);
// a Go tool, and a call without namespaces (whose notify filter's
// listener the worker hands over), keep the worker — except a file tool
// (FileTool, read_file), whose one file the clone opens instead of
// executing anything, and which init runs on what was opened
// (runFileTool).
//
// Such an init serves calls in turn: once a call's tree is gone and its
// result sent, it waits for the next one on its start socket, until the
// supervisor closes it. A fresh Go process per call — its clone into new
// namespaces, its runtime's start and its exit — was half of a call's
// CPU (test/bench/reuse, for the same mount and command: 15 ms of CPU a
// call above a plain fork and exec on the VM it was measured on, against
// 1.7 for one init serving calls). What a call may change
// does not reach the next: each runs on a thread of its own that
// unshares a mount and an IPC namespace (the command inherits both, and
// both end with the thread and the command), so its view, its /tmp and
// /dev/shm, its System V and POSIX IPC objects are its own; init kills
// every other process of the PID namespace before it reports; the
// command cannot mount (no capability) nor signal or trace init (its
// Landlock domain). The user, PID, UTS and network namespaces are the
// init's: the command holds no capability over any of them, and nothing
// it can make in them outlives its processes.
//
// Protocol of a direct start, on the same sockets (jail/doc.go has the
// worker's):
//
//	| from       | to   | fd | message    | when                                      |
//	|------------|------|----|------------|-------------------------------------------|
//	| supervisor | init | 4  | {prepare}  | at start-up: the base seccomp filter      |
//	|            |      |    |            | (never a notify filter)                   |
//	| init       | sup. | 4  | {prepared} | init waits for its first call             |
//	| supervisor | init | 4  | {start}    | the whole call (no view part on fd 3): a  |
//	|            |      |    |            | command, or a file tool and its file;     |
//	|            |      |    |            | after the first, with the call's stdout   |
//	|            |      |    |            | and stderr attached (SCM_RIGHTS)          |
//	| supervisor | init | 4  | {go}       | as for the worker                         |
//	| init       | sup. | 3  | {result}/{error} | the call ended, or a stage failed   |
//	|            |      |    |                  | (a file tool's: its output, or redo |
//	|            |      |    |                  | when init does not read that file)  |
//	| supervisor | init | 3  | {cancel} or EOF  | timeout, cancel, or supervisor death|
//	| supervisor | init | 4  | {start} or EOF   | the next call, or the end (init exits)|
//
// For each call init builds the view, then the Landlock ruleset (as the
// worker would, with the view in place), finds the command, records the
// disks' state and, on {go}, starts it. It builds the ruleset with its
// own capabilities in the call's user namespace: a grant is only a path
// the kernel lets the command reach, never a right over a file the
// command's own credentials lack. The call's thread, made before the
// call comes (serveCall), has settled no_new_privs, the securebits and
// the bounding set, which take none of its capabilities; the clone
// inherits them, gives up those capabilities and loads the base seccomp
// filter before anything else (directSteps.base): the call's thread
// keeps them for its view, its watch of the call and the kill of its
// tree.

// directSteps is what a direct start does before the layers, in the
// clone, for init: what the worker does for itself otherwise.
type directSteps struct {
	cgroups []int    // the call's cgroup files (openCgroupProcs), open for writing: the command joins each
	limits  []rlimit // set as both soft and hard limits
	dir     string   // the working directory ("": stay)
	// settled says the calling thread has settled what the clone must
	// start with (unprivilegeForkThread: no_new_privs, locked securebits,
	// an empty bounding set), so the clone inherits it instead of
	// settling it itself.
	settled bool
	// base is the base seccomp filter (nil: none), which the clone loads
	// first, once it has settled no_new_privs, the securebits and the
	// bounding set: the call's thread keeps init's privileges.
	base []unix.SockFilter
	// stdio, when set, holds the command's descriptors 0, 1 and 2 (-1
	// keeps init's); nil keeps all three.
	stdio []int
	// open, for a file tool, is its file: the clone opens it and exits
	// (openServed) instead of executing a command.
	open string
}

// directMain runs the rest of a direct start's init, from the point
// where the worker would be forked: it prepares, then serves calls until
// the supervisor closes the start socket. pidNS must be true.
func directMain(sup *conn, term int, pidNS bool, cgroupProcs []string, fileTools []FileTool) int {
	fail := func(err *StageError) int {
		_ = sup.send(message{Error: err})
		return exitSetupFailed
	}
	if !pidNS {
		return fail(&StageError{Stage: StageScope, Msg: "a call without a worker needs a PID namespace, and this init is not PID 1 of one"})
	}
	// The call's cgroups (root's calls) are open now, before the view
	// hides the host's cgroup files; each call's command writes itself
	// into them.
	cgroups, err := openCgroupProcs(cgroupProcs)
	defer func() { closeAll(cgroups) }()
	if err != nil {
		return fail(stageErr(StageRlimit, err))
	}
	hidden, err := sealNamespace()
	if err != nil {
		return fail(stageErr(StageMount, err))
	}
	defer func() { hidden.close() }()

	startConn := newConn(StartFD, "supervisor")
	defer startConn.close()
	var first *packet // a start that came without a {prepare} before it
	raw, fds, err := startConn.recvPacketFDs()
	var base []unix.SockFilter
	if err == nil && isPrepare(raw) {
		closeAll(fds)
		prep, err := decodePrepare(raw)
		switch {
		case err != nil:
			return fail(stageErr(StageProtocol, err))
		case prep.Notify != nil:
			return fail(&StageError{Stage: StageProtocol, Msg: "a call without a worker got a notify filter, which only a worker hands over"})
		}
		if base, err = decodeBPF(prep.Seccomp); err != nil {
			return fail(stageErr(StageSeccomp, fmt.Errorf("the base filter: %w", err)))
		}
		// The supervisor starts its next warm child once this one is
		// ready. A supervisor that is gone shows as EOF on the next
		// receive.
		_ = startConn.send(message{Prepared: true})
	} else {
		first = &packet{raw: raw, fds: fds, err: err}
	}
	for served := 0; ; served++ {
		out := serveCall(sup, startConn, first, served, base, term, &hidden, cgroups, fileTools)
		first = nil
		switch {
		case out.eof:
			return 0 // a warm child that was never used, or served its last call
		case out.fail != nil:
			return fail(out.fail)
		case out.unsent:
			return exitSetupFailed // the supervisor cannot hear us
		case !out.reusable:
			return 0 // the supervisor does not reuse a cancelled call's init
		}
		if hidden.attached {
			// The last call's view holds a mask now: new ones, between
			// calls, off the next one's clock.
			hidden.close()
			if hidden, err = makeMasks(); err != nil {
				return fail(stageErr(StageMount, err))
			}
		}
	}
}

// packet is one message received on the start socket, with the
// descriptors that came with it.
type packet struct {
	raw []byte
	fds []int
	err error
}

// served is how one serveCall ended.
type served struct {
	eof      bool        // the start socket closed before a call came: init's work is done
	fail     *StageError // a stage failed (not yet reported)
	unsent   bool        // the result could not be sent
	reusable bool        // the result was sent, and init may serve another call
}

// callStdio is the command's descriptors 0-2 for a serving init's call
// number served (from 0), given those its start came with: none for the
// first (init's own), stdout and stderr for a later one.
func callStdio(served int, fds []int) ([]int, *StageError) {
	switch {
	case served == 0 && len(fds) == 0:
		return nil, nil
	case served > 0 && len(fds) == 2:
		return []int{-1, fds[0], fds[1]}, nil
	}
	return nil, &StageError{Stage: StageProtocol, Msg: fmt.Sprintf("call %d of this init came with %d descriptors (its output pipes come with every call but the first)", served+1, len(fds))}
}

// serveCall runs one call, from the receipt of its start message (or
// first, one received already) to its result, on a new thread that ends
// with it (its goroutine returns locked), in a mount and IPC namespace of
// that thread's own. The thread and its namespaces are made before the
// start message comes, off the call's clock, and the thread sends the
// result itself, before init's main thread wakes. The result says init
// may serve another call when the tree ended on its own, not by a cancel
// or a signal to init.
func serveCall(sup, startConn *conn, first *packet, n int, base []unix.SockFilter, term int, hidden *masks, cgroups []int, fileTools []FileTool) (out served) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // for good: the thread, and the call's namespaces, end with this goroutine
		nsErr := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_NEWIPC)
		// What the command's clone must start with, settled once on
		// the thread it is cloned from (its capabilities stay, for the
		// view): runCall's clones inherit it.
		capsErr := unprivilegeForkThread()
		p := first
		if p == nil {
			raw, fds, err := startConn.recvPacketFDs()
			p = &packet{raw: raw, fds: fds, err: err}
		}
		switch {
		case errors.Is(p.err, errEOF):
			out.eof = true
			return
		case p.err != nil:
			out.fail = stageErr(StageProtocol, p.err)
			return
		}
		// The call's output pipes, which the supervisor reads to their
		// end, are closed before its result is sent.
		defer func() { closeAll(p.fds) }()
		if nsErr != nil {
			out.fail = stageErr(StageMount, fmt.Errorf("a mount and IPC namespace for the call: %w", nsErr))
			return
		}
		if capsErr != nil {
			out.fail = stageErr(StageCaps, capsErr)
			return
		}
		// The first call's output is init's own descriptors 1 and 2; a
		// later call's comes with its start.
		stdio, se := callStdio(n, p.fds)
		if se != nil {
			out.fail = se
			return
		}
		res, reusable, se := runCall(sup, startConn, p.raw, base, stdio, term, hidden, cgroups, fileTools)
		if se != nil {
			out.fail = se
			return
		}
		closeAll(p.fds)
		p.fds = nil
		if err := sup.send(message{Result: &res}); err != nil {
			out.unsent = true
			return
		}
		out.reusable = reusable
	}()
	<-done
	return out
}

// runCall is serveCall's work, on the call's thread, which has settled
// what its clones start with (unprivilegeForkThread).
func runCall(sup, startConn *conn, raw []byte, base []unix.SockFilter, stdio []int, term int, hidden *masks, cgroups []int, fileTools []FileTool) (Result, bool, *StageError) {
	st, err := decodeStart(raw)
	if err != nil {
		return Result{}, false, stageErr(StageProtocol, err)
	}
	spec, inv := st.Spec, st.Invocation
	var tool FileToolFunc
	if inv.Tool != "" {
		for _, t := range fileTools {
			if t.Name == inv.Tool {
				tool = t.Run
			}
		}
	}
	switch {
	case inv.Tool != "" && inv.Open == "":
		return Result{}, false, &StageError{Stage: StageProtocol, Msg: fmt.Sprintf("a Go tool's call without a worker must name the file it reads (%q)", inv.Tool)}
	case inv.Tool == "" && len(inv.Argv) == 0:
		return Result{}, false, &StageError{Stage: StageProtocol, Msg: "a call without a worker must be a command"}
	case !st.Namespaces:
		return Result{}, false, &StageError{Stage: StageProtocol, Msg: "a call without a worker must have its namespaces"}
	case !spec.Layers.NoSeccomp && base == nil:
		return Result{}, false, &StageError{Stage: StageSeccomp, Msg: "the base seccomp filter was never sent to this child, so the call would run without one"}
	case spec.Layers.NoSeccomp && base != nil:
		return Result{}, false, &StageError{Stage: StageSeccomp, Msg: "the spec switches seccomp off but this child got the base filter"}
	}
	var prog []unix.SockFilter // the narrowing filter, stacked on the base
	if len(st.Seccomp) > 0 {
		if prog, err = decodeBPF(st.Seccomp); err != nil {
			return Result{}, false, stageErr(StageSeccomp, fmt.Errorf("jail: seccomp: load filter: %w", err))
		}
	}
	if err := setupView(spec, hidden); err != nil {
		return Result{}, false, stageErr(StageMount, err)
	}
	if spec.Network && st.PrivateNet {
		if err := sendProxyListener(sup); err != nil {
			return Result{}, false, stageErr(StageNetwork, err)
		}
	}
	ruleset := -1
	if !spec.Layers.NoLandlock {
		rs, late, err := workerRuleset(spec, true, st.PrivateNet, st.RestoreProtected, st.LandlockABI, st.ProxyPort)
		if err == nil {
			defer rs.close()
			err = rs.addLate(spec, late)
		}
		if err != nil {
			return Result{}, false, stageErr(StageLandlock, err)
		}
		ruleset = rs.fd
	}
	if inv.Tool != "" {
		if se := awaitGo(startConn); se != nil {
			return Result{}, false, se
		}
		// A program without the tool (a test's) leaves it to a worker.
		res, se := Result{Redo: fmt.Sprintf("this init does not run the file tool %q", inv.Tool)}, (*StageError)(nil)
		if tool != nil {
			res, se = runFileTool(tool, inv, ruleset, prog, directSteps{base: base, dir: spec.Dir, open: inv.Open, settled: true})
		}
		if stdio == nil {
			releaseOutput()
		}
		return res, se == nil, se
	}
	path, err := lookPath(inv.Argv[0], spec.Env, spec.Dir)
	if err != nil {
		return Result{}, false, &StageError{Stage: StageExec, Errno: int(unix.ENOENT), Msg: err.Error()}
	}
	// The disks' starting state is recorded before the command can write.
	w := newWatch(spec, true, st.MemoryCgroup)
	if se := awaitGo(startConn); se != nil {
		return Result{}, false, se
	}
	pid, se := spawnDirect(path, inv.Argv, spec.Env, ruleset, prog, directSteps{
		cgroups: cgroups, limits: rlimitsFor(spec.Limits, st.NprocExtra), dir: spec.Dir,
		base: base, stdio: stdio, settled: true,
	})
	if se != nil {
		return Result{}, false, se
	}
	if stdio == nil {
		releaseOutput()
	}
	// The command is the only process init started: it is the reaper's
	// "worker" and its command at once.
	rp, err := newReaper(pid, true, false)
	if err != nil {
		_ = unix.Kill(pid, unix.SIGKILL)
		return Result{}, false, stageErr(StageWorker, err)
	}
	defer rp.close()
	rp.watch(pid)
	res, stageFail := superviseWorker(sup, nil, rp, term, w)
	if stageFail != nil {
		return Result{}, false, stageFail
	}
	return res, !res.Canceled, nil
}

// awaitGo waits for the supervisor's go-ahead, which follows its record
// of the protected paths.
func awaitGo(startConn *conn) *StageError {
	m, err := startConn.recv()
	switch {
	case errors.Is(err, errEOF):
		return &StageError{Stage: StageProtocol, Msg: "the supervisor gave up on the call before its go-ahead"}
	case err != nil || !m.Go:
		return &StageError{Stage: StageProtocol, Msg: fmt.Sprintf("expected the supervisor's go-ahead (%v)", err)}
	}
	return nil
}

// ErrNotRegular is what a file tool's open gives for a FIFO, a socket
// or a device: a file tool reads files.
var ErrNotRegular = errors.New("not a regular file (a FIFO, a socket or a device)")

// runFileTool runs a file tool in init, on the file a clone of init
// opened with every layer of the call in place (openServed): init itself
// never opens a path for the tool, it only reads what that clone opened,
// and nothing of the call runs after the clone's exit, so there is no
// tree to watch or kill. A FIFO, a socket or a device is refused
// (ErrNotRegular); a regular file init does not read (one on the
// kernel's own filesystems or on FUSE) makes the call's Result a Redo:
// the supervisor runs it again with a worker. A deadline or a
// cancel that comes while the tool reads is the supervisor's to enforce
// (it kills an init that does not report within its grace period).
func runFileTool(tool FileToolFunc, inv Invocation, ruleset int, prog []unix.SockFilter, d directSteps) (Result, *StageError) {
	var (
		layerFail *StageError // a step before the open failed: the call fails
		redo      string      // the file is not one init reads
		opened    bool
		file      *os.File // closed once the tool returns, whatever it did with it
	)
	open := func(name string) (*os.File, error) {
		if name != inv.Open || opened {
			return nil, &os.PathError{Op: "open", Path: name, Err: errors.New("not the file this call opens (a file tool opens its one file once)")}
		}
		opened = true
		f, se := openServed(ruleset, prog, d)
		switch {
		case se == nil:
			file = f
			return f, nil
		case se.Stage == stageOpen:
			return nil, &os.PathError{Op: "open", Path: name, Err: unix.Errno(se.Errno)}
		case se.Stage == stageUnserved && se.Errno == int(unix.EINVAL):
			// A FIFO, a socket or a device, which the clone closed
			// again: no file tool reads one (a worker's open of a
			// FIFO would wait for a writer).
			return nil, &os.PathError{Op: "open", Path: name, Err: ErrNotRegular}
		case se.Stage == stageUnserved:
			redo = se.Msg
		default:
			layerFail = se
		}
		return nil, &os.PathError{Op: "open", Path: name, Err: errors.New(se.Msg)}
	}
	out, err := tool(context.Background(), open, inv.Args)
	if file != nil {
		_ = file.Close() // init serves further calls: nothing of this one stays open
	}
	switch {
	case layerFail != nil:
		return Result{}, layerFail
	case redo != "":
		return Result{Redo: redo}, nil
	case err != nil:
		return Result{}, &StageError{Stage: StageTool, Msg: err.Error()}
	}
	return Result{Output: out}, nil
}

// openCgroupProcs opens, for writing and close-on-exec, the files through
// which the command joins the call's cgroups: on cgroup v1 the "tasks"
// file beside each cgroup.procs (the command's clone has one thread, so
// moving it moves the process, and a thread's move skips the
// RCU-synchronised lock that moving a process takes: 0.1 against 8 ms
// here), else cgroup.procs itself (the supervisor gives root's calls on
// cgroup v2 a worker instead: that lock would be on the call's clock).
// Each is opened through a detached copy of its cgroup's mount
// (open_tree): a file open for writing on a mount of the view would stop
// sealNamespace from making that mount read-only (EBUSY), and the copy is
// in no tree anything could reach it through.
func openCgroupProcs(procs []string) ([]int, error) {
	var fds []int
	for _, p := range procs {
		dir := filepath.Dir(p)
		tree, err := unix.OpenTree(unix.AT_FDCWD, dir, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if err != nil {
			return fds, fmt.Errorf("copy the mount of the call's cgroup %s: %w", dir, err)
		}
		fd, err := unix.Openat(tree, "tasks", unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if errors.Is(err, unix.ENOENT) {
			fd, err = unix.Openat(tree, filepath.Base(p), unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		}
		_ = unix.Close(tree)
		if err != nil {
			return fds, fmt.Errorf("open the call's cgroup %s: %w", p, err)
		}
		fds = append(fds, fd)
	}
	return fds, nil
}

func closeAll(fds []int) {
	for _, fd := range fds {
		_ = unix.Close(fd)
	}
}

// releaseOutput points init's own stdout and stderr at /dev/null: the
// call's processes hold the output pipes now, and the supervisor sees
// their end as soon as the tree is gone.
func releaseOutput() {
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		_ = unix.Dup3(int(null.Fd()), 1, 0)
		_ = unix.Dup3(int(null.Fd()), 2, 0)
		null.Close()
	}
}

package jail

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"unsafe"

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
// listener the worker hands over), keep the worker.
//
// Protocol of a direct start, on the same sockets (jail/doc.go has the
// worker's):
//
//	| from       | to   | fd | message    | when                                      |
//	|------------|------|----|------------|-------------------------------------------|
//	| supervisor | init | 4  | {prepare}  | at start-up: the base seccomp filter      |
//	|            |      |    |            | (never a notify filter)                   |
//	| init       | sup. | 4  | {prepared} | the launcher holds the filter: init waits |
//	| supervisor | init | 4  | {start}    | the whole call (no view part on fd 3)     |
//	| supervisor | init | 4  | {go}       | as for the worker; then it closes fd 4    |
//	| init       | sup. | 3  | {result}/{error} | the call ended, or a stage failed   |
//	| supervisor | init | 3  | {cancel} or EOF  | timeout, cancel, or supervisor death|
//
// Init builds the view, then the Landlock ruleset (as the worker would,
// with the view in place), finds the command, records the disks' state
// and, on {go}, starts it. It builds the ruleset with its own capabilities
// in the call's user namespace: a grant is only a path the kernel lets
// the command reach, never a right over a file the command's own
// credentials lack.

// launcher is the thread of a direct init from which the command is
// cloned. It is set up while the call is not yet known with what every
// command inherits from it: no_new_privs, locked securebits, an empty
// bounding set and no ambient or inheritable capability
// (unprivilegeForkThread), and the base seccomp filter, on this thread
// alone (loading it costs the kernel a pass over every syscall number and
// a JIT compilation: not on the call's clock). Init's own thread keeps
// its privileges and no filter: it still builds the view.
//
// The goroutine stays locked to the thread and never returns, so no
// other goroutine ever runs there, and the thread lives as long as init:
// a command's parent-death signal follows the thread that cloned it.
type launcher struct{ req chan func() }

// newLauncher starts the launcher's thread and sets it up; base nil loads
// no filter.
func newLauncher(base []unix.SockFilter) (*launcher, *StageError) {
	l := &launcher{req: make(chan func())}
	ready := make(chan *StageError, 1)
	go func() {
		runtime.LockOSThread() // for good: see launcher
		if err := unprivilegeForkThread(); err != nil {
			ready <- stageErr(StageCaps, err)
			select {} // the thread must not go back to the runtime
		}
		if base != nil {
			if err := loadThreadFilter(base); err != nil {
				ready <- stageErr(StageSeccomp, err)
				select {}
			}
		}
		ready <- nil
		for f := range l.req {
			f()
		}
	}()
	if se := <-ready; se != nil {
		return nil, se
	}
	return l, nil
}

// run runs f on the launcher's thread and returns once it has.
func (l *launcher) run(f func()) {
	done := make(chan struct{})
	l.req <- func() { f(); close(done) }
	<-done
}

// loadThreadFilter loads prog as a seccomp filter on the calling thread
// alone (no TSYNC), which must have no_new_privs set.
func loadThreadFilter(prog []unix.SockFilter) error {
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return fmt.Errorf("jail: seccomp(SECCOMP_SET_MODE_FILTER) on the launcher's thread: %w", errno)
	}
	return nil
}

// directSteps is what a direct start does before the layers, in the
// clone, for init: what the worker does for itself otherwise.
type directSteps struct {
	cgroups []int    // the call's cgroup files (openCgroupProcs), open for writing: the command joins each
	limits  []rlimit // set as both soft and hard limits
	dir     string   // the working directory ("": stay)
}

// directMain runs the rest of a direct start's init, from the point
// where the worker would be forked. pidNS must be true.
func directMain(sup *conn, term int, pidNS bool, cgroupProcs []string) int {
	fail := func(err *StageError) int {
		_ = sup.send(message{Error: err})
		return exitSetupFailed
	}
	if !pidNS {
		return fail(&StageError{Stage: StageScope, Msg: "a call without a worker needs a PID namespace, and this init is not PID 1 of one"})
	}
	// The call's cgroups (root's calls) are open now, before the view
	// hides the host's cgroup files; the command writes itself into them.
	cgroups, err := openCgroupProcs(cgroupProcs)
	defer func() { closeAll(cgroups) }()
	if err != nil {
		return fail(stageErr(StageRlimit, err))
	}
	hidden, err := sealNamespace()
	if err != nil {
		return fail(stageErr(StageMount, err))
	}

	startConn := newConn(StartFD, "supervisor")
	defer startConn.close()
	raw, err := startConn.recvBytes()
	var (
		base []unix.SockFilter
		l    *launcher
		se   *StageError
	)
	if err == nil && isPrepare(raw) {
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
		if l, se = newLauncher(base); se != nil {
			return fail(se)
		}
		// The supervisor starts its next warm child once this one is
		// ready. A supervisor that is gone shows as EOF just below.
		_ = startConn.send(message{Prepared: true})
		raw, err = startConn.recvBytes()
	}
	if err != nil {
		if errors.Is(err, errEOF) {
			return 0 // a warm child that was never used
		}
		return fail(stageErr(StageProtocol, err))
	}
	st, err := decodeStart(raw)
	if err != nil {
		return fail(stageErr(StageProtocol, err))
	}
	spec, inv := st.Spec, st.Invocation
	switch {
	case inv.Tool != "" || len(inv.Argv) == 0:
		return fail(&StageError{Stage: StageProtocol, Msg: "a call without a worker must be a command"})
	case !st.Namespaces:
		return fail(&StageError{Stage: StageProtocol, Msg: "a call without a worker must have its namespaces"})
	case !spec.Layers.NoSeccomp && base == nil:
		return fail(&StageError{Stage: StageSeccomp, Msg: "the base seccomp filter was never sent to this child, so the call would run without one"})
	case spec.Layers.NoSeccomp && base != nil:
		return fail(&StageError{Stage: StageSeccomp, Msg: "the spec switches seccomp off but this child got the base filter"})
	}
	var prog []unix.SockFilter // the narrowing filter, stacked on the base
	if len(st.Seccomp) > 0 {
		if prog, err = decodeBPF(st.Seccomp); err != nil {
			return fail(stageErr(StageSeccomp, fmt.Errorf("jail: seccomp: load filter: %w", err)))
		}
	}
	if err := setupView(spec, hidden); err != nil {
		return fail(stageErr(StageMount, err))
	}
	if spec.Network && st.PrivateNet {
		if err := sendProxyListener(sup); err != nil {
			return fail(stageErr(StageNetwork, err))
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
			return fail(stageErr(StageLandlock, err))
		}
		ruleset = rs.fd
	}
	path, err := lookPath(inv.Argv[0], spec.Env)
	if err != nil {
		return fail(&StageError{Stage: StageExec, Errno: int(unix.ENOENT), Msg: err.Error()})
	}
	// The disks' starting state is recorded before the command can write.
	w := newWatch(spec, pidNS, st.MemoryCgroup)
	// The supervisor's go-ahead follows its record of the protected paths.
	if m, err := startConn.recv(); err != nil || !m.Go {
		if errors.Is(err, errEOF) {
			return exitSetupFailed // the supervisor gave up on the call
		}
		return fail(&StageError{Stage: StageProtocol, Msg: fmt.Sprintf("expected the supervisor's go-ahead (%v)", err)})
	}
	startConn.close()

	if l == nil { // no base filter: a spec without the seccomp layer
		if l, se = newLauncher(nil); se != nil {
			return fail(se)
		}
	}
	var pid int
	l.run(func() {
		pid, se = spawnDirect(path, inv.Argv, spec.Env, ruleset, prog, directSteps{
			cgroups: cgroups, limits: rlimitsFor(spec.Limits, st.NprocExtra), dir: spec.Dir,
		})
	})
	if se != nil {
		return fail(se)
	}
	closeAll(cgroups)
	cgroups = nil
	releaseOutput()
	// The command is the only process init started: it is the reaper's
	// "worker" and its command at once.
	rp, err := newReaper(pid, pidNS, false)
	if err != nil {
		_ = unix.Kill(pid, unix.SIGKILL)
		return fail(stageErr(StageWorker, err))
	}
	defer rp.close()
	rp.watch(pid)
	res, stageFail := superviseWorker(sup, nil, rp, term, w)
	if stageFail != nil {
		return fail(stageFail)
	}
	if err := sup.send(message{Result: &res}); err != nil {
		return exitSetupFailed
	}
	return 0
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

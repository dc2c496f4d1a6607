package jail

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Init watches the running call from one loop on its own (locked) thread:
// a single poll(2) over the sockets to the supervisor and the worker, the
// worker's and the command's pidfds, and an eventfd for termination
// signals. Every event is handled where it is noticed, so the call's end is
// one wake-up of init, not a chain of goroutine and thread hand-offs, and
// init needs no lock and no second thread to wait on anything.

// orphanReapInterval is how often the loop collects orphans of the call
// (re-parented to init) even when nothing else happens, so that zombies do
// not pile up against the call's process limit.
const orphanReapInterval = 100 * time.Millisecond

// notifyTermination returns an eventfd that becomes readable when init is
// told to stop by a signal: SIGTERM (the parent-death signal, should the
// supervisor die), SIGHUP or SIGINT. Go delivers signals on a channel; one
// goroutine, idle unless a signal comes, turns that into something poll can
// wait on. Only an init without a PID namespace needs it (initMain).
func notifyTermination() (int, error) {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return -1, fmt.Errorf("eventfd for termination signals: %w", err)
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
	go func() {
		<-ch
		var one [8]byte
		binary.NativeEndian.PutUint64(one[:], 1)
		_, _ = unix.Write(fd, one[:])
	}()
	return fd, nil
}

// reaper collects init's children without ever blocking. Init is PID 1 of
// the call's namespace or a child subreaper, so every process of the call
// descends from it and orphans come back to it: once init has no child
// left, the call's tree is gone. It keeps the statuses the call's outcome
// depends on, the worker's and the command's; the command's pid is known
// only once the worker names it, and the command may have exited by then,
// so until then every status is kept.
type reaper struct {
	worker   int
	workerFD int // pidfd of the worker: readable once it has exited
	command  int
	status   map[int]unix.WaitStatus
	// How far a kill(-1) reaches: see killAll.
	pidNS, scoped bool
}

func newReaper(worker int, pidNS, scoped bool) (*reaper, error) {
	fd, err := unix.PidfdOpen(worker, 0)
	if err != nil {
		return nil, fmt.Errorf("pidfd_open for the worker (Linux 5.3 or later): %w", err)
	}
	return &reaper{worker: worker, workerFD: fd, status: map[int]unix.WaitStatus{}, pidNS: pidNS, scoped: scoped}, nil
}

func (r *reaper) close() { _ = unix.Close(r.workerFD) }

// reap collects every child that has exited, without waiting, and reports
// whether init has no child left.
func (r *reaper) reap() (none bool) {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.ECHILD:
			return true
		case err != nil || pid <= 0:
			return false
		}
		if pid == r.worker || r.command == 0 || pid == r.command {
			r.status[pid] = ws
		}
	}
}

// watch names the command and forgets every other status but the worker's.
func (r *reaper) watch(command int) {
	r.command = command
	for pid := range r.status {
		if pid != command && pid != r.worker {
			delete(r.status, pid)
		}
	}
}

// exited returns pid's status if it has been reaped.
func (r *reaper) exited(pid int) (unix.WaitStatus, bool) {
	ws, ok := r.status[pid]
	return ws, ok
}

func (r *reaper) workerReaped() bool {
	_, ok := r.status[r.worker]
	return ok
}

// killAll kills every process of the call and collects them all. In a PID
// namespace kill(-1) reaches only that namespace; otherwise Landlock's
// signal scoping limits it to init's own domain and the worker's nested
// one. Without either it would reach every process of the user, so then
// only the worker is killed (initMain refuses such a call before it runs).
// When the call ended cleanly nothing is left and this returns at once.
func (r *reaper) killAll() {
	if !r.pidNS && !r.scoped {
		_ = unix.Kill(r.worker, unix.SIGKILL)
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for !r.reap() && time.Now().Before(deadline) {
		// Repeat: a process that was forking when the signal went out
		// may leave a child that missed it. Outside a PID namespace
		// kill(-1) succeeds as long as any process exists, so its result
		// says nothing; only "no child left" does.
		_ = unix.Kill(-1, unix.SIGKILL)
		r.pause(time.Millisecond)
	}
}

// pause waits up to d for the worker to exit, or just d once it has (the
// worker is usually the last process left when a call ends). It sleeps in
// poll(2) on this thread rather than in the Go scheduler.
func (r *reaper) pause(d time.Duration) {
	var fds []unix.PollFd
	if !r.workerReaped() {
		fds = []unix.PollFd{{Fd: int32(r.workerFD), Events: unix.POLLIN}}
	}
	_, _ = unix.Poll(fds, int(d.Milliseconds()))
}

// superviseWorker waits for the call to end, relays the worker's stage
// errors and tool output, honours cancellation, stops the call when it
// exceeds a limit w watches, and kills the tree when the call ends. The
// call ends when the command the worker started ({exec}) exits, or, when
// the worker started none (a Go tool, a failed stage, a crash), when the
// worker has exited and said all it had to say. A direct start has no
// worker: wconn is nil, and rp's worker is the command itself. term is
// notifyTermination's eventfd, or -1 in a PID namespace (no signal is
// watched: it ends init, and the kernel the call, at once).
func superviseWorker(sup, wconn *conn, rp *reaper, term int, w *watch) (Result, *StageError) {
	var (
		res          Result
		stageFail    *StageError
		status       unix.WaitStatus
		commandFD    = -1           // pidfd of the command, once named
		workerSilent = wconn == nil // its control socket reached EOF: nothing more will come (none: a direct start)
		supDone      bool           // the supervisor asked to stop (or went away)
		termDone     bool           // a termination signal arrived
	)
	workerConnFD := -1
	if wconn != nil {
		workerConnFD = wconn.fd()
	}
	defer func() {
		if commandFD >= 0 {
			_ = unix.Close(commandFD)
		}
	}()
	cancel := func() {
		res.Canceled = true
		rp.killAll()
	}
	// Fixed slots; poll ignores a negative fd.
	const (
		slotSup = iota
		slotTerm
		slotWorkerConn
		slotWorker
		slotCommand
		slots
	)
	var fds [slots]unix.PollFd
	watch := func(slot, fd int, on bool) {
		fds[slot] = unix.PollFd{Fd: -1, Events: unix.POLLIN}
		if on {
			fds[slot].Fd = int32(fd)
		}
	}
	for {
		rp.reap()
		if rp.command != 0 {
			if ws, ok := rp.exited(rp.command); ok {
				status = ws
				break
			}
		} else if workerSilent {
			if ws, ok := rp.exited(rp.worker); ok {
				status = ws
				break
			}
		}
		if res.Limit == "" && !res.Canceled {
			if limit, detail := w.check(time.Now()); limit != "" {
				res.Limit, res.LimitDetail = limit, detail
				rp.killAll()
				continue // collect the command's status
			}
		}
		watch(slotSup, sup.fd(), !supDone)
		watch(slotTerm, term, !termDone)
		watch(slotWorkerConn, workerConnFD, !workerSilent)
		watch(slotWorker, rp.workerFD, !rp.workerReaped())
		watch(slotCommand, commandFD, commandFD >= 0)
		if _, err := unix.Poll(fds[:], int(orphanReapInterval.Milliseconds())); err != nil && err != unix.EINTR {
			rp.killAll()
			return res, stageErr(StageProtocol, fmt.Errorf("poll: %w", err))
		}
		if fds[slotWorkerConn].Revents != 0 {
			m, err := wconn.recv()
			switch {
			case err != nil:
				workerSilent = true
			case m.Error != nil:
				stageFail = m.Error
			case m.Output != nil:
				res.Output = m.Output.Data
				if m.Output.Error != "" {
					stageFail = &StageError{Stage: StageTool, Msg: m.Output.Error}
				}
			case m.Exec > 0 && rp.command == 0:
				rp.watch(m.Exec)
				// A command already reaped has its status kept; one not
				// yet reaped cannot have been replaced, so its pid is
				// still its own.
				if _, gone := rp.exited(m.Exec); !gone {
					if fd, err := unix.PidfdOpen(m.Exec, 0); err == nil {
						commandFD = fd
					}
				}
			}
		}
		if fds[slotSup].Revents != 0 {
			// Any message or EOF from the supervisor now means "stop".
			supDone = true
			cancel()
		}
		if fds[slotTerm].Revents != 0 {
			termDone = true
			cancel()
		}
	}
	rp.killAll()
	switch {
	case status.Exited():
		res.ExitCode = status.ExitStatus()
	case status.Signaled():
		res.ExitCode = 128 + int(status.Signal())
		res.Signal = unix.SignalName(status.Signal())
	}
	if stageFail != nil && !res.Canceled {
		return res, stageFail
	}
	return res, nil
}

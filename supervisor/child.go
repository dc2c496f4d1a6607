package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"brig/jail"
	"brig/jail/filter"
)

// selfExe is brig's own binary, the jail child of a build that carries none.
const selfExe = "/proc/self/exe"

// programs are the carried jail programs: init's, and the workers init
// runs. Init's is handed to init at a fixed descriptor (jail.InitExeFD),
// and init is executed through it (the worker's follows in a message):
// a high descriptor number named in the exec path is not safe, because
// the fork copies the descriptors it hands over to their numbers and may
// move its own error pipe onto the number above the highest of them,
// which is where a carried program sat (the exec then failed with EACCES,
// now and then, under bursts of spawns).
type programs struct {
	init *os.File
	// worker has every Go tool; made on first use when light is set.
	worker func() (*os.File, error)
	// light, when set, is the worker of every call needsFull does not
	// name (Programs.Light).
	light     func() (*os.File, error)
	needsFull func(jail.Invocation) bool
}

// full reports whether inv must run in the full worker while there is a
// light one (which the pool then holds). Without a light worker every
// call runs the full one, and this is false.
func (p programs) full(inv jail.Invocation) bool {
	return p.light != nil && p.needsFull != nil && p.needsFull(inv)
}

// workerFor is the worker program for a child: the full one, or the light
// one when there is one and full is false. The light one may still be
// being written (jailexe.Open): this waits for it; should that write have
// failed, the full worker serves instead.
func (p programs) workerFor(full bool) (*os.File, error) {
	var lightErr error
	if !full && p.light != nil {
		l, err := p.light()
		if err == nil && l != nil {
			return l, nil
		}
		lightErr = err
	}
	w, err := p.worker()
	if err != nil {
		if lightErr != nil {
			return nil, fmt.Errorf("the jail worker's program: %w (and the light worker's: %v)", err, lightErr)
		}
		return nil, fmt.Errorf("the jail worker's program: %w", err)
	}
	return w, nil
}

// child is a started jail init (which has already started its worker),
// waiting on fd 3 for its call.
type child struct {
	proc       *os.Process
	parent     *jail.Parent
	cg         *callCgroup
	outR, errR *os.File
	// pidNS: init is PID 1 of its own namespace, and the kernel ends the
	// call's processes when init dies.
	pidNS bool
	// reaped makes wait idempotent; state is init's end, once reaped.
	reaped sync.Once
	state  *os.ProcessState
	// ready: refill saw the worker ready for its call (jail.Parent.
	// WaitPrepared). A child joins the pool while still starting; acquire
	// takes a ready one before it. Guarded by the Supervisor's mu.
	ready bool
	// serves: a direct init started for the pool (no stdin of its own),
	// which serves calls in turn (jail/direct.go); served is how many it
	// has, owned by the call that holds it.
	serves bool
	served int
	// away: it is counted in the Supervisor's away while out on its call.
	// Guarded by the Supervisor's mu.
	away bool
	// filtered: init was sent the base seccomp filter (Prepare). Only
	// such a child is given back: a call without the seccomp layer gets
	// a child of its own (acquire), which the pool must never hand to a
	// call with it.
	filtered bool
}

// maxServed is how many calls one init serves before it is retired and
// a fresh one takes its place: nothing a call leaves in it is known to
// grow, and this bounds what something unforeseen could. The fresh start
// is hidden behind the model's answer at a model's pace; with calls back
// to back it costs a few calls around the 64th some 15 ms in all (its
// replacement starts as that call takes the init: acquire).
const maxServed = 64

// newOutput gives c's next call pipes of its own for stdout and stderr
// (the first call's are those init was started with), and returns their
// write ends, which Start sends to init and the caller then closes.
func (c *child) newOutput() (outW, errW *os.File, err error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, nil, fmt.Errorf("stderr pipe: %w", err)
	}
	c.outR, c.errR = outR, errR
	c.parent.SetOutput(outW, errW)
	return outW, errW, nil
}

// reusable reports whether c may serve another call after one that ended
// as res: a serving init whose call ended on its own (not cancelled,
// timed out or stopped at a limit, where init killed the tree on an
// order) and that has not served maxServed.
func (c *child) reusable(res jail.Result) bool {
	return c.servesAgain() && !res.Canceled && !res.TimedOut && res.Limit == ""
}

// servesAgain reports whether c goes back to the pool after the call it
// is taken for, should that call end on its own: a serving init with the
// base filter, before its last call.
func (c *child) servesAgain() bool {
	return c.serves && c.filtered && c.served+1 < maxServed
}

// giveBack puts c, which has just served a call for flags, back in the
// pool, where it waits for the next; when the pool is full or closed, or
// the supervisor starts no more children (Prestart's, once its one start
// is spent: brig sandbox runs one call), it is retired instead (its
// start socket closes, and init exits).
func (s *Supervisor) giveBack(flags uintptr, c *child) {
	s.mu.Lock()
	s.returned(flags, c)
	keep := s.prewarm && !s.closed && s.starts != 0 && len(s.warm[flags]) < s.poolTarget(flags)
	if keep {
		c.served++
		c.ready = true // it has served a call: long past its start
		s.warm[flags] = append(s.warm[flags], c)
	}
	s.mu.Unlock()
	if !keep {
		// Its cgroup is empty (init is not in it, and reported once the
		// call's tree was gone): back in the pool now, not once init has
		// exited, so that a Close right after this (brig sandbox's) finds
		// it and removes it rather than leaving it for the next brig.
		s.cgroups.put(c.cg)
		go c.wait()
	}
}

// returned ends c's count in away, if it has one: it is back, or will
// not come back. c may be nil (the call got no child). Called with mu
// held.
func (s *Supervisor) returned(flags uintptr, c *child) {
	if c != nil && c.away {
		c.away = false
		s.away[flags]--
	}
}

// exited reports whether init has ended or is ending (it stays to be
// reaped by wait or discard).
func (c *child) exited() bool {
	if c.parent.Gone() {
		return true
	}
	fd, err := unix.PidfdOpen(c.proc.Pid, 0)
	if err != nil {
		return true // ESRCH: gone already
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 // a pidfd is readable once its process has exited
}

// treeKillBound is how long kill waits for the call's processes to die
// after SIGKILL before it gives up on them (it logs that they remain).
const treeKillBound = time.Minute

// kill ends init at once, for when it did not end the call when asked. In
// a PID namespace the kernel takes the call's processes with init. Without
// one they would outlive it — init is their only reaper and killer — so
// they are killed first, found below init (jail.KillTree). Init may have
// been starved of CPU by the very call it was stopping (a fork bomb on a
// loaded machine); the supervisor is not.
func (c *child) kill(log *slog.Logger) {
	if !c.pidNS {
		ctx, cancel := context.WithTimeout(context.Background(), treeKillBound)
		defer cancel()
		if err := jail.KillTree(ctx, c.proc.Pid); err != nil {
			log.Warn("processes of a call whose init was killed may remain", "pid", c.proc.Pid, "err", err)
		}
	}
	_ = c.proc.Kill()
}

// acquire returns a child for a call planned as p: a warm one when there
// is one (one ready for its call first: takeWarm), else one a refill is
// starting now (a session's first call comes while the pool is being
// filled: starting yet another child beside those would only share the
// cores three ways), else a fresh one. Warm children
// have the base seccomp filter loaded, so a call without the seccomp layer
// (tests of the other layers) always gets a fresh child.
//
// Taking a warm child starts its replacement at once, so that the next
// call — which an instant model sends a millisecond after this one's
// result — finds one waiting; except when the call comes at a model's
// pace (paced: atModelsPace), or when the last one of its kind ended more
// than quietGap ago and another child still waits: then later is true,
// and the caller starts the replacement when its call is done (refill),
// so that the start does not take a core from the call while the model,
// answering next, leaves both idle (a read_file call at a model's pace:
// 8.7–9.2 ms in its child with the start beside it, 5.4–5.5 without). A
// call of a burst starts none: its replacements follow the burst (busy).
func (s *Supervisor) acquire(ctx context.Context, p plan, lim jail.Limits, burst, paced bool) (c *child, later bool, err error) {
	if s.prewarm && p.base != nil && !p.full {
		refilled, looked := false, false
		for {
			s.mu.Lock()
			c = s.takeWarm(p.flags)
			inFlight, landed, left := s.starting[p.flags], s.landed, len(s.warm[p.flags])
			ended := s.lastEnd[p.flags]
			if !looked && (c == nil || !c.ready) && !ended.IsZero() && time.Since(ended) <= quietGap {
				s.missedPace(p.flags)
			}
			looked = true
			s.mu.Unlock()
			if !burst && !refilled {
				refilled = true
				if c != nil && (c.servesAgain() || paced || left > 0 && !ended.IsZero() && time.Since(ended) > quietGap) {
					// A serving init comes back to the pool after its
					// call (giveBack), and counts as in it meanwhile
					// (away); only one that does not is
					// replaced, then — one on its last call at once
					// unless the model is slow, like a child that
					// serves one call: the next call of an instant
					// model would otherwise wait out its replacement's
					// whole start (28–37 ms against 15 here, every 64th
					// call).
					later = true
					if c.servesAgain() {
						s.mu.Lock()
						c.away = true
						s.away[p.flags]++
						s.mu.Unlock()
					}
				} else {
					go s.refill(p.flags)
				}
			}
			if c != nil {
				// A waiting init can die (the OOM killer's first choice,
				// by design): the call takes another, not its report.
				if !c.exited() {
					if err := c.cg.setLimits(lim.Processes, lim.Memory); err == nil {
						return c, later, nil
					}
				}
				s.mu.Lock()
				s.returned(p.flags, c) // it will not come back
				s.mu.Unlock()
				c.discard()
				continue
			}
			if inFlight == 0 {
				break
			}
			select {
			case <-landed:
			case <-ctx.Done():
				return nil, later, fmt.Errorf("wait for a jail child: %w", context.Cause(ctx))
			}
		}
	}
	c, err = s.startChildStdin(p.flags, lim, nil, p.base, p.notify, p.full)
	return c, later, err
}

// takeWarm removes from the pool for flags, and returns, the newest child
// that is ready for its call, or the newest if none is yet (nil: the pool
// is empty). A refill puts a child in the pool as soon as it is cloned;
// a call that took it while a ready one waited would wait out its start
// (init, then the worker) beside the start itself: 15–25 ms instead of
// 5–8 for the first call an instant answer asks for after calls at a
// model's pace, whose replacement starts as the call ends. Called with
// mu held.
func (s *Supervisor) takeWarm(flags uintptr) *child {
	pool := s.warm[flags]
	if len(pool) == 0 {
		return nil
	}
	i := len(pool) - 1
	for j := i; j >= 0; j-- {
		if pool[j].ready {
			i = j
			break
		}
	}
	c := pool[i]
	s.warm[flags] = slices.Delete(pool, i, i+1)
	return c
}

// preparedBound is how long refill waits for a child it started to be
// ready before it starts the next one anyway: far more than any start
// takes (10–30 ms on two loaded cores), only so that a child that hangs
// cannot stop the pool's refills.
const preparedBound = 10 * time.Second

// awaitPrepared waits until c's worker is ready for its call
// (jail.Parent.WaitPrepared), or preparedBound at most: a child that has
// been cloned is still starting (init, then the worker, then its filter),
// and refill's next start should not share the cores with it. The child
// may meanwhile serve a call, which only sends on the socket this reads
// (no notify filter: see refill); a child that died is the call's error,
// not this one's.
func (s *Supervisor) awaitPrepared(c *child) error {
	done := make(chan error, 1)
	go func() { done <- c.parent.WaitPrepared() }()
	t := time.NewTimer(preparedBound)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		// The read ends when the worker sends, or exits with its child.
		return fmt.Errorf("the jail child was not ready after %v", preparedBound)
	}
}

// atModelsPace reports whether a call starting now comes at a model's
// pace: no call is under way, and the model's answer that asked for it
// took more than quietGap (ModelAnswered) — or, when no answer was
// reported, no call has run for more than quietGap since the last one
// ended (or, before any, since Warm).
func (s *Supervisor) atModelsPace() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running != 0 {
		return false
	}
	if s.answered {
		return s.answerTook > quietGap
	}
	return !s.quietSince.IsZero() && time.Since(s.quietSince) > quietGap
}

// ModelAsked tells the supervisor that the agent has just sent the model
// a request, and the next calls are the answer's: a call that comes more
// than quietGap later comes at a model's pace (atModelsPace), whatever
// came before. Without it the first call is timed from Warm, which is
// brig's own start-up and the request's making away from the question:
// on a slow machine that alone passed for a model's pace, and the Go
// tools' first child then started beside an instant model's next calls.
// While a call runs (a subagent asking its model) it changes nothing.
//
// Until the Go tools' pool is being filled, an answer that has not come
// quietGap after the request starts filling it (toolsWhileWaiting): the
// model leaves the cores idle, and a session's first read_file, grep or
// glob — often its first call — finds a child waiting instead of
// starting two processes.
func (s *Supervisor) ModelAsked() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running == 0 {
		s.quietSince = time.Now()
		s.askedAt, s.answered = s.quietSince, false
		if s.prewarm && !s.prestart && !s.toolsFilling.Load() {
			asked := s.askedAt
			time.AfterFunc(quietGap, func() { s.toolsWhileWaiting(asked) })
		}
	}
}

// toolsWhileWaiting starts filling the Go tools' pool if the request
// ModelAsked announced at asked is still unanswered, no call runs and the
// supervisor is open.
func (s *Supervisor) toolsWhileWaiting(asked time.Time) {
	s.mu.Lock()
	waiting := !s.closed && s.running == 0 && !s.answered && s.askedAt.Equal(asked)
	s.mu.Unlock()
	if waiting {
		ns := s.Namespaces()
		s.fillTools(ns)
	}
}

// fillTools starts filling the pool of Go tools' children (those of a
// call in fresh namespaces, ns, with its network namespace), once.
func (s *Supervisor) fillTools(ns bool) {
	s.toolPool.Do(func() {
		s.toolsFilling.Store(true)
		go s.refill(cloneFlags(ns, ns))
	})
}

// ModelAnswered tells the supervisor that the answer to the request
// ModelAsked announced is in: the calls it asks for come at a model's
// pace if it took more than quietGap. What the agent does between the
// answer and a call (the first snapshot of the workspace, the first
// policy check, the session's first writes, which together passed
// quietGap on a slow machine) is its own work, not the model's, and no
// longer passes for a model's pace. While a call runs (a subagent's model answering) it changes
// nothing, as ModelAsked.
func (s *Supervisor) ModelAnswered() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running == 0 && !s.askedAt.IsZero() {
		s.answerTook, s.answered = time.Since(s.askedAt), true
	}
}

// quietGap is how long no call may have held a child for acquire to take
// calls as coming at a model's pace: a real model takes hundreds of
// milliseconds to answer, an instant one (a script on loopback) one or
// two; the roundtrip bench's streamed answers take 40–80 ms.
const quietGap = 25 * time.Millisecond

// landStart ends the start of a warm child for flags (c nil: it failed):
// c joins the pool unless the supervisor closed or the pool is full (then
// it is returned, for the caller to discard), and the calls waiting for a
// start in flight are woken. Called with mu held.
func (s *Supervisor) landStart(flags uintptr, c *child) (surplus *child) {
	s.starting[flags]--
	close(s.landed)
	s.landed = make(chan struct{})
	if c == nil {
		return nil
	}
	if s.closed || len(s.warm[flags]) >= s.poolTarget(flags) {
		return c
	}
	s.warm[flags] = append(s.warm[flags], c)
	return nil
}

// burstKey marks a context whose call is one of a burst.
type burstKey struct{}

// Burst marks ctx for a call the model asked for together with others, run
// at the same time (one answer's read-only calls). The children a burst
// takes from the pool are replaced when its last call ends, and none is
// started while any call of a burst runs: starting them then would take
// the cores from the very calls the model is waiting for (on two cores,
// four read-only calls took 200–250 ms with their four replacements
// starting beside them, 90–180 ms without).
func Burst(ctx context.Context) context.Context {
	return context.WithValue(ctx, burstKey{}, true)
}

// InBurst reports whether ctx was marked by Burst.
func InBurst(ctx context.Context) bool {
	b, _ := ctx.Value(burstKey{}).(bool)
	return b
}

// busy counts a call that holds a child for flags until the returned
// function is called; burst says the call is one of a burst. When a burst
// of calls ends (none holds one any more) with more of them at once than
// ever before, the pool is filled up to that many from then on; and when
// the last call of a burst ends, the children the burst took are replaced.
// Not during the burst, whose calls need the cores more than the next
// burst's children do.
func (s *Supervisor) busy(flags uintptr, burst bool) (done func()) {
	s.mu.Lock()
	s.running++
	s.active[flags]++
	s.peak[flags] = max(s.peak[flags], s.active[flags])
	if burst {
		s.bursting[flags]++
	}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		if s.running--; s.running == 0 {
			s.quietSince = time.Now()
		}
		s.active[flags]--
		fill := false
		if s.active[flags] == 0 {
			s.lastEnd[flags] = time.Now()
			if d := min(s.peak[flags], maxPoolSize); d > s.poolTarget(flags) {
				s.demand[flags], fill = d, true
			}
			s.peak[flags] = 0
		}
		if burst {
			s.bursting[flags]--
			fill = fill || s.bursting[flags] == 0
		}
		s.mu.Unlock()
		if fill {
			go s.refill(flags) // returns at once when the pool is full
		}
	}
}

// poolTarget is how many warm children refill keeps for flags: the pool
// size, or the demand calls have shown if greater. A pool that starts
// with one (startsWithOne: the Go tools', and the commands' of serving
// inits) keeps one until calls have shown they need more (a burst, or
// missedPace): a waiting init and light worker hold 9–10 MB, and in a
// session of commands the second one only waits (the roundtrip bench's
// peak RSS of the tree, 13 runs alternating: 51.9–58.5 → 45.0–49.1 MB;
// its four reads in one answer the same within the noise). Called with
// mu held.
func (s *Supervisor) poolTarget(flags uintptr) int {
	if s.startsWithOne(flags) && s.demand[flags] == 0 {
		return 1
	}
	return max(s.poolSize, s.demand[flags])
}

// startsWithOne reports whether the pool for flags holds one child until
// calls show they need more (missedPace): the Go tools' pool (a second
// waiting pair is 9–10 MB that a session of commands never uses), and,
// unless Options.PoolSize fixed its size, the commands' pool of inits
// that serve calls in turn — one comes back after each call, and a
// second, started as the first became ready, shared the cores with an
// instant model's first calls (the bench's first call 29–34 → 23–27 ms
// here).
func (s *Supervisor) startsWithOne(flags uintptr) bool {
	return s.toolsOnly(flags) || s.oneServing && flags&directStart != 0
}

// toolsOnly reports whether the pool for flags serves Go tools alone:
// where a command's init starts it without a worker (direct), only a Go
// tool's call, in the same namespaces, takes a child with a worker.
func (s *Supervisor) toolsOnly(flags uintptr) bool {
	return s.directOK && flags&unix.CLONE_NEWPID != 0 && flags&directStart == 0
}

// missedPace records that a call for flags came within quietGap of the
// last one's end and found no child ready: calls come faster than one
// child is replaced (or, for serving inits, than one comes back: calls
// side by side, an init's last call), so a pool that starts with one
// keeps the pool size from then on. Called with mu held.
func (s *Supervisor) missedPace(flags uintptr) {
	if s.startsWithOne(flags) {
		s.demand[flags] = max(s.demand[flags], s.poolSize)
	}
}

// refill starts warm children for flags until the pool holds poolTarget,
// one at a time: while a start is in flight (until the child is ready for
// a call, though it joins the pool as soon as it is cloned) it returns at
// once, and the refill that started it goes on once it is ready. Two cold starts side by
// side (a call's replacement, then the next call's) would take both cores
// from the call running meanwhile, and hold two more children's memory
// at once. It stops while a call of a burst runs (Burst): the burst's end
// refills.
func (s *Supervisor) refill(flags uintptr) { s.refillReporting(flags, nil) }

// refillReporting is refill. first, when not nil, is told how its first
// start went (nil: a child started, on its way to the pool) as soon as
// it has: it is not called when no start was tried.
func (s *Supervisor) refillReporting(flags uintptr, first func(error)) {
	if !s.prewarm {
		return
	}
	// A child without a user namespace has a worker that hands over the
	// notify filter's listener.
	withNotify := flags&unix.CLONE_NEWUSER == 0
	for {
		s.mu.Lock()
		if s.closed || s.starts == 0 || s.bursting[flags] > 0 || s.starting[flags] > 0 || s.readying[flags] > 0 || len(s.warm[flags])+s.away[flags] >= s.poolTarget(flags) {
			s.mu.Unlock()
			return
		}
		if s.starts > 0 {
			s.starts--
		}
		s.starting[flags]++
		s.mu.Unlock()
		// The child is started first and sent its filters once they are
		// compiled (once a process: the first start's filter took 0.7 ms,
		// which the child's own start now hides).
		c, err := s.startChildStdin(flags, s.limits, nil, nil, nil, false)
		// The child is in its namespaces: that is first's answer, before
		// its filter is compiled and sent.
		if f := first; f != nil {
			first = nil
			f(err)
		}
		if err == nil {
			if err = s.prepare(c, withNotify); err != nil {
				c = nil // discarded
			}
		}
		s.mu.Lock()
		surplus := s.landStart(flags, c)
		if err == nil && surplus == nil && !withNotify {
			s.readying[flags]++
		}
		s.mu.Unlock()
		if err != nil {
			s.log.Debug("prewarm a jail child", "err", err)
			return
		}
		if surplus != nil {
			surplus.discard()
			return
		}
		if !withNotify {
			// The child is in the pool (a call may take it meanwhile),
			// but still starting; the next start waits for this one.
			// (With a notify filter its socket also carries the listener,
			// which the call reads: no wait then.)
			err := s.awaitPrepared(c)
			if err != nil {
				s.log.Debug("a prewarmed jail child did not get ready", "err", err)
			}
			s.mu.Lock()
			c.ready = err == nil
			s.readying[flags]--
			s.mu.Unlock()
		}
	}
}

// prepare sends a waiting child, started without them, the base seccomp
// filter and, withNotify, the notify filter (compiled at the first
// need). A child that cannot be prepared is discarded.
func (s *Supervisor) prepare(c *child, withNotify bool) error {
	base, err := s.filter(filter.BaseFilterOptions(), false)
	var notify []byte
	if err == nil && withNotify {
		notify, err = s.notifyFilter()
	}
	if err == nil {
		if err = c.parent.Prepare(base, notify); err != nil {
			err = &jail.StageError{Stage: jail.StageProtocol, Msg: fmt.Sprintf("send the base seccomp filter to the worker: %v", err)}
		}
		c.filtered = err == nil && base != nil
	}
	if err != nil {
		c.discard()
	}
	return err
}

// startChildStdin spawns init with fresh output pipes, a control socket on
// fd 3 and, for a root supervisor, a cgroup bounding the call's processes.
// stdin is init's (and so the worker's) standard input: nil means
// /dev/null; long-lived processes (Start) pass a pipe. base is the seccomp
// filter the worker loads as soon as it starts (nil: none), notify the
// notify filter it loads before it (nil: none; see metadata.go). full
// asks for the worker with every Go tool (programs.full). flags are the
// clone flags, with directStart for an init that starts the call's
// command itself (no worker; jail/direct.go).
func (s *Supervisor) startChildStdin(flags uintptr, lim jail.Limits, stdin *os.File, base, notify []byte, full bool) (*child, error) {
	direct := flags&directStart != 0
	flags &^= directStart
	// The carried programs, if any: init's now, and the worker the call
	// needs once init runs (it may still be being written).
	progs := s.programs()
	cg, err := s.cgroups.get(lim.Processes, lim.Memory)
	if err != nil {
		return nil, fmt.Errorf("%w: bound the process count of a root call: %v", jail.ErrUnenforceable, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		s.cgroups.put(cg)
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		s.cgroups.put(cg)
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	// Init holds the write ends from now on; ours must go so that EOF
	// means "the call's tree is gone".
	defer outW.Close()
	defer errW.Close()
	parentEnd, childEnd, err := jail.SocketPair()
	if err != nil {
		s.cgroups.put(cg)
		outR.Close()
		errR.Close()
		return nil, err
	}
	defer childEnd.Close()
	workerEnd, workerChildEnd, err := jail.SocketPair()
	if err != nil {
		s.cgroups.put(cg)
		outR.Close()
		errR.Close()
		parentEnd.Close()
		return nil, err
	}
	defer workerChildEnd.Close()
	// mk describes the start of init: the carried programs, if any and
	// carried says so, else path.
	mk := func(path string, carried bool) jail.NSProcess {
		files := []*os.File{stdin, outW, errW, childEnd, workerChildEnd} // fds 0-2, then 3 and 4 (jail.ControlFD, jail.StartFD)
		carried = carried && progs.init != nil
		if carried {
			files = append(files, progs.init) // fd 5 (jail.InitExeFD)
			path = "/proc/self/fd/" + strconv.Itoa(jail.InitExeFD)
		}
		p := jail.NSProcess{
			Path: path,
			Args: append([]string{"brig-jail-init"}, jail.InitArgs(carried, direct, cg.procFiles()...)...),
			// One P: init runs one loop on one thread, and a second P only
			// makes each wake-up start a spinning thread looking for work.
			Env:        childEnv(),
			Dir:        "/",
			Files:      files,
			Cloneflags: flags,
			TimerSlack: jail.InitTimerSlack,
		}
		if flags&unix.CLONE_NEWUSER != 0 {
			uid, gid := os.Getuid(), os.Getgid()
			p.UIDMap, p.GIDMap = fmt.Sprintf("%d %d 1", uid, uid), fmt.Sprintf("%d %d 1", gid, gid)
			// An ordinary user keeps its uid inside the namespace, so exec
			// would drop the capabilities init needs over its own
			// namespaces: mounts, bringing up loopback, securebits.
			// Ambient capabilities carry them across; init clears them
			// before forking the worker. CAP_DAC_OVERRIDE is for the
			// overlay of the Go layer (overlayfs keeps its work directory
			// at mode 0, and creates in it with the mounter's rights); it
			// covers only files of the user's own ids (the only ones
			// mapped), which the user could chmod anyway.
			p.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP, unix.CAP_DAC_OVERRIDE}
		}
		return p
	}
	np := mk(s.exe(), true)
	carried := progs.init != nil
	proc, err := jail.StartInNamespaces(np)
	if err != nil && np.Path != selfExe && errors.Is(err, fs.ErrPermission) {
		// The carried program could not be executed: brig itself is the
		// same jail code, only slower to start.
		s.log.Warn("the carried jail child could not be started; this call's child is brig itself", "err", err)
		np, carried = mk(selfExe, false), false
		proc, err = jail.StartInNamespaces(np)
	}
	if err != nil {
		parentEnd.Close()
		workerEnd.Close()
		s.cgroups.put(cg)
		outR.Close()
		errR.Close()
		return nil, &jail.StageError{Stage: jail.StageSpawn, Msg: err.Error()} // it names the program and the step
	}
	c := &child{proc: proc, parent: jail.NewParent(parentEnd, workerEnd, direct), cg: cg, outR: outR, errR: errR, pidNS: flags&unix.CLONE_NEWPID != 0, serves: direct && stdin == nil}
	if carried && !direct {
		// A carried init asks for its worker's program once it has
		// started; writing that program may have gone on meanwhile.
		worker, err := progs.workerFor(full)
		if err == nil {
			err = c.parent.SendWorker(worker) // queued, even if init has failed meanwhile: its report comes at Start
		}
		if err != nil {
			c.discard()
			return nil, &jail.StageError{Stage: jail.StageSpawn, Msg: err.Error()}
		}
	}
	if base != nil {
		if err := c.parent.Prepare(base, notify); err != nil {
			c.discard()
			return nil, &jail.StageError{Stage: jail.StageProtocol, Msg: fmt.Sprintf("send the base seccomp filter to the worker: %v", err)}
		}
		c.filtered = true
	}
	return c, nil
}

// wait reaps init. It may be called more than once: the calls after the
// first return at once.
func (c *child) wait() {
	c.reaped.Do(func() {
		c.parent.EndCalls() // a serving init waits for its next call otherwise
		c.state, _ = c.proc.Wait()
		c.parent.Close()
	})
}

// discard ends an unused child: closing the socket tells init to kill its
// worker and exit.
func (c *child) discard() {
	c.parent.Close()
	c.outR.Close()
	c.errR.Close()
	_, _ = c.proc.Wait()
	c.cg.remove()
}

// childEnv is a jail child's whole environment: one P, and the test cap on
// the Landlock ABI when it is set (the child must use the ABI the
// supervisor planned with).
func childEnv() []string {
	// The commands get the user's timer slack back (init runs with
	// jail.InitTimerSlack): this thread's is the supervisor's, the
	// user's, which it never changes.
	env := []string{"GOMAXPROCS=1"}
	if slack := jail.TimerSlack(); slack != 0 {
		env = append(env, jail.TimerSlackEnv+"="+strconv.FormatUint(slack, 10))
	}
	if v, ok := os.LookupEnv(jail.TestABIEnv); ok {
		env = append(env, jail.TestABIEnv+"="+v)
	}
	return env
}

// Package supervisor spawns, feeds, times out and reaps jail children.
//
// It owns the process side of a tool call: the re-exec of the brig binary
// (in fresh namespaces where the kernel allows it unprivileged), the
// allowlisted environment, the toolchain cache the Spec describes
// (prepared right before the call), a root call's cgroup, output capture
// with caps, timeouts and cancellation, and the check after the call that
// no protected path was created. Every file operation it performs where a
// call can write goes through internal/safefs. It must not decide what a
// call may do (that is the Spec, built by policy), it never puts a secret
// into a child, and it starts nothing looked up on PATH.
package supervisor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"brig/internal/egress"
	"brig/internal/safefs"
	"brig/jail"
	"brig/jail/filter"
)

// Options configure a Supervisor.
type Options struct {
	// Executable is the brig binary to re-execute; default /proc/self/exe.
	Executable string
	// ExecutableFunc, when Executable is empty, gives it at the first
	// spawn instead of at New (the carried jail child is still being
	// written while the session starts); "" means /proc/self/exe.
	ExecutableFunc func() string
	// Programs, when Executable is empty, gives the carried jail programs
	// (internal/jailexe: kept files or sealed memory files, open) at the
	// first spawn; they take the
	// executable's place. Without an Init or a Worker (or without
	// Programs) both run the executable.
	Programs func() Programs
	// QuarantineDir receives protected files a call created (moved out of
	// the workspace after the call). Empty: they are deleted.
	QuarantineDir string
	// PendingDir holds the records of calls whose sweep is not done yet
	// (pending.go), for RecoverSweeps after a brig that was killed.
	// Empty: none is kept.
	PendingDir string
	// Logger for diagnostics; default slog.Default().
	Logger *slog.Logger
	// KillGrace is how long init gets to kill the tree and report after a
	// cancel before it is killed itself; default 3s.
	KillGrace time.Duration
	// Prewarm keeps started inits (each with its worker) waiting for the
	// next calls, taking process start-up off the calls' critical path.
	// For long-lived supervisors (the agent); call Close when done.
	Prewarm bool
	// NeverReach are host:port endpoints no call may reach through the
	// egress proxy, whatever its Decider says (the model provider).
	NeverReach []string
	// PoolSize is how many children Prewarm keeps waiting at least;
	// default 2 (a taken child is replaced at once). The pool grows to the
	// most calls seen holding a child at once, up to maxPoolSize: a model
	// that reads four files in one answer finds four waiting the next time.
	// The Go tools' pool holds one until calls show they need more; so
	// does the commands' pool of inits that serve calls in turn when
	// PoolSize is left at 0 (see startsWithOne).
	PoolSize int
	// Prestart (without Prewarm) starts one child for the usual command
	// (no network) once Warm is called, and no other: for a process that
	// runs one call (brig sandbox), which works out the call's grant while
	// the child starts on the other core. A call planned otherwise starts
	// its own, as without it.
	Prestart bool
	// WarmAnswersProbe (with Prewarm) leaves the start-up probe to Warm:
	// its first child's start in fresh namespaces answers it
	// (probeByStart), instead of a probe process of its own started by
	// New beside that child. For a process that calls Warm right after
	// New and asks for the answer only at its first call (brig -p, whose
	// policy takes Namespaces as a function): the probe was a clone of
	// four namespaces, about 2 ms of CPU on the cores the start shares.
	// Namespaces before Warm starts the probe proper.
	WarmAnswersProbe bool
}

// Programs are the carried jail programs: init runs Init, and a worker
// program as the call's worker.
type Programs struct {
	Init *os.File
	// Worker runs every Go tool. It is asked for at the first call that
	// needs it when there is a Light one (writing a program into memory
	// costs milliseconds of the start).
	Worker func() (*os.File, error)
	// Light, when not nil, gives the worker of every call NeedsFull does
	// not name: commands and most Go tools. It leaves out the largest
	// tools' libraries, so it is smaller and starts faster; the pool of
	// waiting children holds only light ones. It may wait for the
	// program to be written: it is asked for only once an init runs.
	Light     func() (*os.File, error)
	NeedsFull func(jail.Invocation) bool
}

// maxPoolSize bounds how far demand grows the pool of waiting children
// (each is an init and a worker: about 20 MB of RSS between them, 6.5 MB
// of it their own, the rest the program they share).
const maxPoolSize = 4

// Supervisor runs jailed calls. It is safe for concurrent use.
type Supervisor struct {
	exe           func() string   // the jail executable, resolved at the first spawn
	programs      func() programs // the carried programs, if any; resolved at the first spawn
	quarantineDir string
	pendingDir    string
	pendingMade   atomic.Bool // pendingDir exists
	log           *slog.Logger
	grace         time.Duration
	landlockABI   int
	// probed is closed once the start-up probe has answered: userNS is
	// set (read it through Namespaces) and stale cgroups are gone.
	// probeStart starts finding out, once: New, by the probe, except with
	// Prestart or WarmAnswersProbe, where Warm's first start answers it
	// (probeByStart) and Namespaces or Close start the probe only if
	// Warm has not. probeCtx is New's, which bounds the probe.
	probed     chan struct{}
	probeStart sync.Once
	probeCtx   context.Context
	userNS     bool

	prewarm bool
	// prestart: a process that runs one call (Prestart), whose one child's
	// start answers the probe (probeByStart).
	prestart bool
	// probeByWarm: Warm's first start answers the probe (Prestart, or
	// WarmAnswersProbe).
	probeByWarm bool
	// directOK: a command in fresh namespaces may run without a worker
	// (directStart).
	directOK bool
	// toolPool starts filling the pool of Go tools' children, after the
	// first call that came at a model's pace (see run) or while the model
	// is slow to answer (ModelAsked), whichever comes first; toolsFilling
	// says it did.
	toolPool     sync.Once
	toolsFilling atomic.Bool
	// limits are jail.DefaultLimits, read once: a waiting child's
	// cgroup is made with them (the call's own come with its Spec).
	limits jail.Limits

	// cacheMu makes the preparations of the toolchain cache (prepareCache)
	// one at a time; cachePrepared is set by the first a call made.
	cacheMu       sync.Mutex
	cachePrepared bool

	protect protectStore // records of protected paths, for calls without namespaces
	// egress is the proxy through which calls with Network reach hosts.
	egress *egress.Proxy

	mu      sync.Mutex
	filters map[filterKey]*compiled
	notify  []byte               // the notify filter, compiled once (metadata.go)
	warm    map[uintptr][]*child // by clone flags; only with prewarm
	// starting counts warm children being started, by clone flags;
	// landed is closed (and replaced) whenever one of those starts ends,
	// for the calls waiting for it (acquire).
	starting map[uintptr]int
	landed   chan struct{}
	// readying counts the children refill has put in the pool that are
	// still starting (awaitPrepared), by clone flags: refill starts no
	// other meanwhile.
	readying map[uintptr]int
	// away counts, by clone flags, the serving inits out on a call that
	// come back to the pool after it (acquire, giveBack): refill counts
	// them as in the pool, or the first call of a session, which took
	// the pool's one init while refill waited for it to get ready, had a
	// second one started beside it for nothing.
	away     map[uintptr]int
	poolSize int
	// oneServing: the commands' pool of serving inits holds one until
	// calls show they need more (PoolSize left at 0).
	oneServing bool
	// starts is how many more children refill may start (Prestart: one);
	// negative, no bound. Guarded by mu.
	starts int
	// lastEnd is when the last call holding a child for these flags ended
	// (none held one any more): how acquire tells a model's pace.
	lastEnd map[uintptr]time.Time
	// active counts the calls holding (or acquiring) a child now, peak
	// the most at once since none did, and demand the most at once of any
	// burst so far (at most maxPoolSize): what refill fills the pool to,
	// when it exceeds poolSize (see busy). By clone flags.
	active, peak, demand map[uintptr]int
	// bursting counts the calls of a burst (Burst) holding a child now.
	bursting map[uintptr]int
	// running counts the calls under way (any flags); quietSince is when
	// the last of them ended, or the model was last asked (ModelAsked),
	// or Warm ran: with none running for more than quietGap, a call comes
	// at a model's pace (atModelsPace). Once the agent says the model's
	// answer is in (ModelAnswered), answerTook — from the request, at
	// askedAt, to the answer — is what decides instead, and answered says
	// so until the model is asked again.
	running    int
	quietSince time.Time
	askedAt    time.Time
	answerTook time.Duration
	answered   bool
	closed     bool
	cgroups    cgroupPool // empty call cgroups for reuse (root only)
	// links gives each workspace its own copies of the files it shares
	// through hard links, before the first call that may write it.
	links sharedLinks
	// repos remembers the written trees' directories between the sweeps'
	// searches for repositories a call made (jail.RepoCache), for a spec
	// that brings no memory of its grant's (Spec.Repos).
	repos *jail.RepoCache
}

// New returns a Supervisor and starts its one probe of the kernel (can
// this process make user namespaces?) in the background; Namespaces and
// every call wait for the answer. It also marks this process non-dumpable,
// so no process of the same user can read its memory or /proc/PID/environ
// through ptrace rules.
func New(ctx context.Context, o Options) (*Supervisor, error) {
	if err := jail.SetNonDumpable(); err != nil {
		return nil, fmt.Errorf("mark the supervisor non-dumpable: %w", err)
	}
	s := &Supervisor{
		quarantineDir: o.QuarantineDir,
		pendingDir:    o.PendingDir,
		log:           o.Logger,
		grace:         o.KillGrace,
		landlockABI:   jail.LandlockABI(),
		directOK:      directCgroupOK(),
		filters:       map[filterKey]*compiled{},
		warm:          map[uintptr][]*child{},
		starting:      map[uintptr]int{},
		readying:      map[uintptr]int{},
		away:          map[uintptr]int{},
		landed:        make(chan struct{}),
		active:        map[uintptr]int{},
		lastEnd:       map[uintptr]time.Time{},
		peak:          map[uintptr]int{},
		demand:        map[uintptr]int{},
		bursting:      map[uintptr]int{},
		poolSize:      cmp.Or(max(o.PoolSize, 0), 2),
		oneServing:    o.PoolSize <= 0,
		prewarm:       o.Prewarm,
		starts:        -1,
		limits:        jail.DefaultLimits(),
		repos:         jail.NewRepoCache(),
	}
	if o.Prestart && !o.Prewarm {
		s.prewarm, s.prestart, s.poolSize, s.starts = true, true, 1, 1
	}
	s.probeByWarm = s.prestart || o.WarmAnswersProbe && o.Prewarm
	s.egress = egress.New(egress.Options{Never: o.NeverReach, Logger: o.Logger})
	if o.Executable != "" && !filepath.IsAbs(o.Executable) {
		// Never a name looked up on PATH.
		return nil, fmt.Errorf("the jail executable %q is not an absolute path", o.Executable)
	}
	s.exe = sync.OnceValue(func() string {
		exe := o.Executable
		if exe == "" && o.ExecutableFunc != nil {
			exe = o.ExecutableFunc()
		}
		if !filepath.IsAbs(exe) {
			exe = selfExe // never a name looked up on PATH
		}
		return exe
	})
	s.programs = sync.OnceValue(func() programs {
		if o.Programs == nil || o.Executable != "" {
			return programs{} // a program of the caller's
		}
		p := o.Programs()
		if p.Init == nil || p.Worker == nil {
			return programs{}
		}
		progs := programs{init: p.Init, worker: p.Worker, light: p.Light, needsFull: p.NeedsFull}
		if p.Light != nil {
			// A failed write of the light worker is said once; its calls
			// then run the full worker (programs.workerFor).
			var warnOnce sync.Once
			progs.light = func() (*os.File, error) {
				f, err := p.Light()
				if err != nil {
					warnOnce.Do(func() {
						s.log.Warn("the carried light jail worker cannot be used; calls run the full worker, slower to start", "err", err)
					})
				}
				return f, err
			}
		}
		if progs.light == nil || progs.needsFull == nil {
			// Every call runs the full worker: made now, with init.
			if _, err := p.Worker(); err != nil {
				s.log.Warn("the carried jail worker cannot be used; brig re-executes itself for each call", "err", err)
				return programs{}
			}
			progs.light = nil
		}
		return progs
	})
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.grace == 0 {
		s.grace = 3 * time.Second
	}
	if s.quarantineDir != "" {
		// Made now, not by the first sweep that needs it: brig's state
		// directory is a protected path, and one that appeared during a
		// call would be taken for the call's doing and swept away with
		// what was just kept in it.
		if q, err := safefs.MkdirAllResolved(s.quarantineDir, 0o700); err == nil {
			q.Close()
		} else {
			s.log.Warn("the quarantine directory cannot be made; a protected path a call creates will be deleted, not kept", "dir", s.quarantineDir, "err", err)
		}
	}
	// The probe runs while the caller goes on (it opens its session, say):
	// what needs its answer waits for it (Namespaces, every call's plan).
	s.probed, s.probeCtx = make(chan struct{}), ctx
	if !s.probeByWarm {
		s.startProbe()
	}
	return s, nil
}

// startProbe starts the probe in the background, unless the answer is
// already there or on its way.
func (s *Supervisor) startProbe() {
	select {
	case <-s.probed:
		return
	default:
	}
	s.probeStart.Do(func() {
		go func() {
			defer close(s.probed)
			s.userNS = s.probeUserNS(s.probeCtx)
			if os.Geteuid() == 0 {
				removeStaleCgroups() // before this supervisor makes any
			}
		}()
	})
}

// Warm fills the pool of prewarmed children for the usual call (no
// network) in the background, if Prewarm is on, as the start-up probe's
// answer says (with Prestart, its one child's start in fresh namespaces
// is the answer: probeByStart). brig -p calls it as soon as the
// supervisor is made (a command's child, an init alone, starts on the
// other core beside the session's set-up); the TUI once its banner is up;
// brig sandbox, with Prestart, as it begins.
func (s *Supervisor) Warm() {
	if !s.prewarm {
		return
	}
	s.mu.Lock()
	s.quietSince = time.Now() // the session's own set-up is the model's first answer away
	s.mu.Unlock()
	// What every start needs is made side by side, not one after the
	// other in the first start: the base seccomp filter compiled, the
	// carried programs written (and the probe's answer awaited). Started
	// on one goroutine, the child first and the filter while its runtime
	// starts, the first child's clone came 2–3 ms sooner, but brig -p's
	// first request 0.5–1.7 ms later (four rounds of 30–40 alternating
	// sessions) for a first call within the noise: the clone's work then
	// shares the cores with the request's.
	go func() { _, _ = s.filter(filter.BaseFilterOptions(), false) }()
	go s.programs()
	// Claimed here, not in the goroutine: a Namespaces right after Warm
	// must find the answer on its way.
	byStart := false
	if s.probeByWarm {
		s.probeStart.Do(func() { byStart = true })
	}
	go func() {
		// With namespaces, a child for a command (no worker): most calls
		// are commands, and it is ready sooner. The pool of Go tools'
		// children fills once a call at a model's pace is over (run), or
		// while the model is slow to answer (ModelAsked): filled now, it
		// would take the cores from the session's start.
		if byStart {
			s.probeByStart()
		}
		s.refill(s.commandKey())
	}()
	if s.prestart {
		// brig sandbox's one call waits for this child while the caller
		// builds the call's grant: the caller yields, so that the start,
		// the goroutine its core runs next, runs now and the caller goes
		// on on the other core. Without it the start waited for the
		// caller to block (0.2–1.5 ms later, brig sandbox -- true's
		// timestamps).
		runtime.Gosched()
	}
}

// PrepareWorkspace starts, in the background, the walk for the files
// workspace shares with files outside it through hard links (links.go),
// so that the session's first call that may write does not wait for it.
func (s *Supervisor) PrepareWorkspace(workspace string) { s.links.prepare(workspace) }

// probeByStart answers the start-up probe with the start of Warm's first
// child (Prestart's one child, for brig sandbox, whose call waits for it;
// brig -p's first, with WarmAnswersProbe) in fresh namespaces,
// as every call's init is started: the probe is a start in the same
// namespaces, so this one answers as well, with no process of its own
// beside it (both were a clone of a user, mount, PID and network
// namespace, one after the other: the C start is serialised). Started,
// calls get namespaces. If it cannot start, for whatever reason, its
// turn is given back (Prestart's), so the child comes with the answer,
// and the probe proper answers. brig -p answers so since its policy no
// longer waits for the answer at its start (it did, and the answer came
// 1.9 ms later when it waited for the first child).
func (s *Supervisor) probeByStart() {
	answered := false
	answer := func(ns bool) {
		if !answered {
			answered = true
			s.userNS = ns
			close(s.probed)
		}
	}
	defer func() {
		if !answered { // no start was tried
			answer(s.probeUserNS(s.probeCtx))
		}
	}()
	if os.Geteuid() == 0 {
		removeStaleCgroups() // before this supervisor makes any
	}
	if s.probeCtx.Err() != nil {
		answer(false) // nothing is started for a context already done
		return
	}
	s.refillReporting(s.commandKeyFor(true), func(err error) {
		if err == nil {
			s.log.Debug("the jail child started in fresh namespaces: calls get them")
			answer(true)
			return
		}
		s.log.Debug("the jail child did not start in fresh namespaces; the probe decides", "err", err)
		s.mu.Lock()
		if s.starts >= 0 {
			s.starts++ // Prestart's one child comes with the probe's answer
		}
		s.mu.Unlock()
		answer(s.probeUserNS(s.probeCtx))
	})
}

// commandKey is the key of the pool the usual command (no network)
// takes its child from.
func (s *Supervisor) commandKey() uintptr { return s.commandKeyFor(s.Namespaces()) }

// commandKeyFor is commandKey where calls get namespaces (ns) or not.
func (s *Supervisor) commandKeyFor(ns bool) uintptr {
	return cloneFlags(ns, ns) | s.direct(plan{flags: cloneFlags(ns, ns)}, jail.Invocation{Argv: []string{"sh"}}, "/")
}

// Close stops the prewarmed children. Calls in flight are not affected.
func (s *Supervisor) Close() {
	s.startProbe() // (a supervisor whose Warm, which was to answer it, never ran)
	<-s.probed     // its process and its cgroup clean-up are done
	s.mu.Lock()
	s.closed = true
	warm := s.warm
	s.warm = map[uintptr][]*child{}
	s.mu.Unlock()
	for _, pool := range warm {
		for _, c := range pool {
			c.discard()
		}
	}
	s.cgroups.removeAll()
}

// Namespaces reports whether calls get fresh user, mount, PID and network
// namespaces.
// It waits for the start-up probe.
func (s *Supervisor) Namespaces() bool {
	s.startProbe() // (a supervisor whose Warm, which is to answer it, has not run)
	<-s.probed
	return s.userNS
}

// LandlockABI is the kernel's Landlock ABI as probed by New.
func (s *Supervisor) LandlockABI() int { return s.landlockABI }

// IO says where a call's output goes, and who decides its network. A nil
// writer captures the stream into the Result (up to the Spec's
// OutputBytes). Independently of the writers, Keep asks for the Result's
// Transcript: both streams in the order they came, bounded at both ends
// (what a model is shown of a command).
type IO struct {
	Stdout, Stderr io.Writer
	// CapApart leaves the note that an output cap cut a stream out of the
	// stream itself (the result's StdoutTruncated and StderrTruncated say
	// it): brig sandbox's stdout is the user's data, and the note in it
	// corrupted a file piped through (new user, 2026-12-03).
	CapApart bool
	Keep     Keep
	// Net decides each connection of a call whose Spec has Network (the
	// egress proxy holds the connection meanwhile); nil refuses them all.
	Net egress.Decider
	// BeforeTool, if set, runs while the jail child builds the call's
	// view, after the supervisor's record of the protected paths; the tool
	// starts only once it has returned nil. An error ends the call before
	// the tool starts and Run returns it as is. (The agent takes its
	// snapshot of what the call may write here, beside the view instead
	// of before the child is taken.) It may run more than once for one
	// Run: a call whose cgroup vanished before it started is run again.
	BeforeTool func() error
}

// Run executes inv under spec and returns how it ended. A *jail.StageError
// means the call never ran the tool (or could not be set up); an error
// wrapping jail.ErrUnenforceable means the kernel cannot give what the Spec
// asks. A non-zero exit of the tool is not an error.
func (s *Supervisor) Run(ctx context.Context, spec jail.Spec, inv jail.Invocation, stdio IO) (jail.Result, error) {
	res, err := s.run(ctx, spec, inv, stdio)
	if err == nil && res.Redo != "" {
		// An init that serves calls did not read the file tool's file
		// itself (jail/direct.go): nothing ran; a worker runs it.
		s.log.Debug("a file tool's call goes to a worker", "tool", inv.Tool, "why", res.Redo)
		inv.Open = ""
		res, err = s.run(ctx, spec, inv, stdio)
	}
	if cgroupVanished(err) {
		// The call's empty cgroup was removed between its creation and
		// the worker joining it (by another supervisor that took it for
		// a dead one's): the tool never started, so run it once more.
		s.log.Warn("the call's cgroup vanished before the call started; retrying once", "err", err)
		res, err = s.run(ctx, spec, inv, stdio)
	}
	return res, err
}

// cgroupVanished reports whether err says init could not move the worker
// into the call's cgroup because the cgroup is gone.
func cgroupVanished(err error) bool {
	var se *jail.StageError
	return errors.As(err, &se) && se.Stage == jail.StageRlimit && se.Errno == int(unix.ENOENT) && strings.Contains(se.Msg, "cgroup")
}

func (s *Supervisor) run(ctx context.Context, spec jail.Spec, inv jail.Invocation, stdio IO) (jail.Result, error) {
	if err := spec.Validate(); err != nil {
		return jail.Result{}, err
	}
	if err := inv.Validate(); err != nil {
		return jail.Result{}, err
	}
	plan, err := s.plan(spec)
	if err != nil {
		return jail.Result{}, err
	}
	plan.full = s.programs().full(inv)
	plan.flags |= s.direct(plan, inv, spec.Dir)
	if spec.Cache != nil {
		if err := s.prepareCache(spec.Cache); err != nil {
			return jail.Result{}, err
		}
	}
	plan.opts.NprocExtra = nprocExtra(plan, spec.Limits)
	// Before the first call that may write the workspace, the files it
	// shares with files outside through hard links get copies of their
	// own (links.go).
	var ownCopies string
	if len(writtenRoots(spec)) > 0 {
		n, sample, err := s.links.ensure(ctx, spec.Workspace)
		if err != nil {
			return jail.Result{}, err
		}
		if n > 0 {
			ownCopies = fmt.Sprintf("before this call, brig gave the workspace its own copies of %d files that were hard links to files outside it (%s among them), so that no call writes through them", n, sample)
		}
	}

	started := time.Now()
	runCtx := ctx
	var cancelTimeout context.CancelFunc = func() {}
	if spec.Limits.Timeout > 0 {
		runCtx, cancelTimeout = context.WithTimeout(ctx, spec.Limits.Timeout)
	}
	defer cancelTimeout()

	burst := InBurst(ctx)
	paced := s.atModelsPace()
	defer s.busy(plan.flags, burst)()
	c, later, err := s.acquire(ctx, plan, spec.Limits, burst, paced)
	replace := func() {}
	given := false // a serving init given back needs no replacement
	if later {
		// Once the call is done (or failed), not beside it.
		replace = sync.OnceFunc(func() {
			if !given {
				s.mu.Lock()
				s.returned(plan.flags, c)
				s.mu.Unlock()
				go s.refill(plan.flags)
			}
		})
	}
	defer replace()
	if err != nil {
		return jail.Result{}, err
	}
	// A serving init's later calls get pipes of their own; the first
	// has init's. Ours are closed once the call is over (EOF then means
	// its tree is gone), and the read ends are this call's alone: the
	// child may serve the next call before these are drained.
	var outW, errW *os.File
	if c.served > 0 {
		c.parent.OnProxy = nil
		if outW, errW, err = c.newOutput(); err != nil {
			c.discard()
			return jail.Result{}, err
		}
	}
	outR, errR := c.outR, c.errR
	tr := newTranscript(stdio.Keep)
	if tr != nil {
		// The transcript is the caller's copy: streams nobody watches
		// need no second one.
		if stdio.Stdout == nil {
			stdio.Stdout = io.Discard
		}
		if stdio.Stderr == nil {
			stdio.Stderr = io.Discard
		}
	}
	plan.opts.MemoryCgroup = c.cg.boundsMemory()
	oomBefore := c.cg.oomKillsBefore()
	stdout := newCappedStream("stdout", stdio.Stdout, spec.Limits.OutputBytes)
	stderr := newCappedStream("stderr", stdio.Stderr, spec.Limits.OutputBytes)
	stdout.also, stderr.also, stderr.stderr = tr, tr, true
	stdout.quiet, stderr.quiet = stdio.CapApart, stdio.CapApart
	var copies sync.WaitGroup
	copies.Add(2)
	go func() { defer copies.Done(); stdout.drain(outR) }()
	go func() { defer copies.Done(); stderr.drain(errR) }()

	// A call with network gets its own session of the egress proxy, on a
	// listener in its network namespace (made by init) or on the host's
	// loopback; it ends with the call.
	px, err := s.startProxy(c, &spec, &plan, stdio.Net)
	if err != nil {
		closeFiles(outW, errW)
		c.discard()
		copies.Wait()
		return jail.Result{}, err
	}
	defer px.close() // also when converse fails; a no-op once closed below

	// The protected paths are recorded while the child builds the view;
	// the tool starts only after that (see jail.Parent.Start).
	var (
		before  map[string]protectedState
		guard   *restoreGuard
		meta    *metadataGuard
		pending string // the call's record for a sweep after a crash (pending.go)
	)
	callStart := callClock()
	record := func() (err error) {
		if plan.notify != nil {
			if meta, err = s.metadataFor(c, spec); err != nil {
				return err
			}
		}
		recorded := before
		if plan.opts.RestoreProtected {
			if guard, err = s.beginRestore(spec); err != nil {
				return err
			}
			if len(writtenRoots(spec)) > 0 && s.pendingDir != "" {
				recorded = snapshotProtected(spec.Protected) // for a sweep after a crash only
			}
		} else {
			before = snapshotProtected(spec.Protected)
			recorded = before
		}
		pending = s.notePending(spec, recorded, callStart)
		if stdio.BeforeTool != nil {
			return stdio.BeforeTool()
		}
		return nil
	}
	res, runErr := s.converse(runCtx, c, spec, inv, plan, record)
	closeFiles(outW, errW)
	// The call's proxy session ends with it: its listener, on the
	// loopback of init's network namespace, closes before another call
	// can have that init.
	res.Connections = px.close()
	reuse := false
	if runErr == nil {
		if res.Limit == "" {
			res.Limit, res.LimitDetail = s.limitHit(c.cg, oomBefore, res, spec.Limits)
		}
		// A serving init waits for the next call in the pool; it is
		// back before replace looks, which then starts nothing.
		if reuse = c.reusable(res) && runCtx.Err() == nil; reuse {
			// Given back, it needs no replacement: a refill started
			// anyway runs on a goroutine of its own, and if the next
			// call has taken this init by then, it starts another for
			// nothing (which retires this one when it next comes back).
			s.giveBack(plan.flags, c)
			given = true
		}
	}
	replace() // the call's processes are gone: its sweep and the model's answer leave the cores idle
	// Once a call that came at a model's pace is over, a child for Go
	// tools joins the pool (Warm fills the commands' only): the model's
	// next answer leaves the cores to its start, and the first Go tool
	// call finds it. Calls that come back to back (an instant model)
	// would share the cores with that start.
	if paced {
		s.fillTools(plan.opts.Namespaces)
	}
	undo := func() []string {
		meta.stop()
		return append(guard.finish(), s.sweepAll(spec, before, callStart)...)
	}
	var violations []string
	if runErr != nil {
		// Init failed or was killed: collect it now, and do not reuse a
		// cgroup that may still hold something (rmdir refuses then).
		c.wait()
		c.cg.remove()
	} else {
		// Init reports only after the whole tree is dead; its own exit
		// (and the namespace teardown) need not delay the caller. The
		// empty cgroup (init is not in it) can serve a later call, once
		// its OOM count is read (above). The sweep can start at once,
		// while the pipes reach their end. A serving init given back
		// keeps its cgroup.
		if !reuse {
			go c.wait()
			s.cgroups.put(c.cg)
		}
		violations = undo()
	}
	// The tree is dead, so the pipes reach EOF; bound the wait anyway so a
	// bug can never hang the caller.
	drained := make(chan struct{})
	go func() { copies.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(5 * time.Second):
		outR.Close()
		errR.Close()
		<-drained
	}
	outR.Close()
	errR.Close()

	res.Duration = time.Since(started)
	res.Stdout, res.StdoutTruncated = stdout.result()
	res.Stderr, res.StderrTruncated = stderr.result()
	res.Transcript = tr.result()
	if errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		res.TimedOut = true
		res.Canceled = false
	}
	if runErr != nil {
		violations = undo() // only now is the tree surely gone
	}
	res.Violations = violations
	res.OwnCopies = ownCopies
	donePending(pending) // swept: nothing left for a later brig to do
	return res, runErr
}

// closeFiles closes those of fs that are set.
func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

// limitHit names a limit the kernel enforced on the call, which init could
// not see: the memory cgroup's OOM killer killed one of its processes, or
// the command was killed for writing beyond its file size limit.
func (s *Supervisor) limitHit(cg *callCgroup, oomBefore uint64, res jail.Result, lim jail.Limits) (string, string) {
	if cg.boundsMemory() && cg.oomKillsAfter() > oomBefore {
		return jail.LimitMemory, fmt.Sprintf("the call reached its memory limit of %s (its processes plus its /tmp and /dev/shm), and the kernel killed a process of it", jail.Bytes(lim.Memory))
	}
	if res.Signal == "SIGXFSZ" {
		return jail.LimitFileSize, fmt.Sprintf("the command was killed for writing a file beyond the file size limit of %s", jail.Bytes(lim.FileSize))
	}
	return "", ""
}

// nprocExtra is what RLIMIT_NPROC needs on top of the call's own budget of
// tasks: without a user namespace the kernel counts every process and
// thread of the user, not just the call's, so the call gets its budget on
// top of what the user already runs. (In the call's user namespace the
// kernel counts the call alone; root is bounded by the call's own cgroup
// instead.)
func nprocExtra(p plan, lim jail.Limits) uint64 {
	if lim.Processes == 0 || os.Geteuid() == 0 || p.opts.Namespaces {
		return 0
	}
	return userTasks(os.Getuid())
}

// directStart, in a plan's flags (which also key the pools of warm
// children), marks a call whose init starts the command itself, without a
// worker (jail/direct.go): a command in fresh namespaces. It lies above
// every clone flag and is taken out before the clone.
const directStart uintptr = 1 << 48

// DirectStarts reports whether a command's call starts without a worker
// process on this machine (jail/direct.go), given whether calls get
// their namespaces, and why not.
func DirectStarts(namespaces bool) (bool, string) {
	switch {
	case !namespaces:
		return false, "calls get no user namespaces here: each has a worker process, which hands brig the notify filter's listener"
	case !directCgroupOK():
		return false, "brig runs as root on cgroup v2: moving a command into its call's cgroup would wait for the kernel's RCU-synchronised lock on the call's clock, so a worker started ahead moves itself instead"
	}
	return true, ""
}

// directCgroupOK: a call's command may join its cgroups as it starts.
// Root's calls on cgroup v2 join theirs as a process, which takes an
// RCU-synchronised lock (milliseconds): their worker does so while it
// waits for its call, a direct start's command would on the call's
// clock. Other users' calls have no cgroup; on v1 the command moves its
// one thread.
func directCgroupOK() bool {
	return os.Geteuid() != 0 || !exists("/sys/fs/cgroup/cgroup.controllers")
}

// direct is directStart when init can start inv itself under p: a
// command, or a file tool whose file init may read (servedFile), in
// fresh namespaces (init is PID 1), without a notify filter (the worker
// hands its listener over), where joining the call's cgroup is quick
// (directOK); else 0.
func (s *Supervisor) direct(p plan, inv jail.Invocation, dir string) uintptr {
	if (inv.Tool == "" || servedFile(dir, inv.Open)) && p.flags&unix.CLONE_NEWPID != 0 && p.notify == nil && s.directOK {
		return directStart
	}
	return 0
}

// servedFile reports whether a file tool's file (name, from dir) is one
// an init that serves calls reads for the tool: any but those of the
// kernel's own filesystems at their usual places, which init would send
// back to a worker anyway (Result.Redo). It checks names only: what the
// file is, init's clone finds out with the call's layers in place.
func servedFile(dir, name string) bool {
	if name == "" {
		return false
	}
	if !filepath.IsAbs(name) {
		name = filepath.Join(dir, name)
	}
	name = filepath.Clean(name)
	return !within(name, "/proc") && !within(name, "/sys") && !within(name, "/dev")
}

// cloneFlags are the namespaces a call's init is started in.
func cloneFlags(ns, privateNet bool) uintptr {
	if !ns {
		return 0
	}
	f := uintptr(unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS)
	if privateNet {
		f |= unix.CLONE_NEWNET
	}
	return f
}

// plan is what the kernel can give a Spec, decided before spawning.
type plan struct {
	opts  jail.StartOptions // opts.Seccomp: the narrowing filter, stacked on base
	flags uintptr           // clone flags, and directStart
	// full: the call needs the full worker where the pool of waiting
	// children holds light ones (programs.full).
	full bool
	// base is the base seccomp filter the child loads before its call,
	// nil when the Spec switches the seccomp layer off.
	base []byte
	// notify is the notify filter loaded before it, without namespaces
	// (metadata.go); nil otherwise.
	notify []byte
}

func (s *Supervisor) plan(spec jail.Spec) (plan, error) {
	var p plan
	ns := s.Namespaces() && !spec.Layers.NoNamespaces
	if !spec.Layers.NoLandlock && s.landlockABI < 1 {
		return p, fmt.Errorf("%w: Landlock is not available (ABI 0); enable it (boot with lsm=...,landlock) and see `brig doctor`", jail.ErrUnenforceable)
	}
	if !ns && s.landlockABI < 6 {
		return p, fmt.Errorf("%w: containing the call's processes needs either unprivileged user namespaces or Landlock ABI 6 (this kernel has ABI %d and no usable user namespaces); see `brig doctor`", jail.ErrUnenforceable, s.landlockABI)
	}
	if spec.PrivateTmp && !ns {
		return p, fmt.Errorf("%w: the spec asks for a private /tmp but user namespaces are unavailable", jail.ErrUnenforceable)
	}
	if spec.Network && !ns && !spec.Layers.NoLandlock && s.landlockABI < 4 {
		return p, fmt.Errorf("%w: a call with network may reach it only through brig's proxy, which needs unprivileged user namespaces (a private network namespace) or Landlock ABI 4 (TCP rules); this kernel has ABI %d and no usable user namespaces; see `brig doctor`", jail.ErrUnenforceable, s.landlockABI)
	}
	p.opts.Namespaces = ns
	// A call without namespaces gets the whole grant and its protected
	// paths are put back after it (restore.go); Start, whose processes
	// live on, keeps the split grant instead.
	p.opts.RestoreProtected = !ns
	// Every call with namespaces gets a private network namespace: one
	// with network reaches it through the egress proxy's listener there.
	p.opts.PrivateNet = ns
	p.opts.LandlockABI = s.landlockABI
	p.flags = cloneFlags(ns, p.opts.PrivateNet)
	if !spec.Layers.NoSeccomp {
		// In a private network namespace inet sockets reach only the
		// call's own loopback (and the proxy's listener there); on the
		// host's network a call with network gets TCP sockets alone
		// (Landlock lets them connect to the proxy's port alone), and one
		// without gets no inet socket.
		opts := filter.FilterOptions{
			AllowInet: spec.Network || p.opts.PrivateNet, AllowUnix: spec.UnixSockets,
			TCPOnly: spec.Network && !p.opts.PrivateNet,
		}
		var err error
		if p.base, err = s.filter(filter.BaseFilterOptions(), false); err != nil {
			return p, err
		}
		if p.opts.Seccomp, err = s.filter(opts, true); err != nil {
			return p, err
		}
		if !ns {
			if p.notify, err = s.notifyFilter(); err != nil {
				return p, err
			}
		}
	}
	return p, nil
}

// filterKey names a compiled seccomp program: the full filter for opts, or
// the one narrowing the base filter down to opts.
type filterKey struct {
	opts      filter.FilterOptions
	narrowing bool
}

// compiled is one seccomp program, compiled once (filter).
type compiled struct {
	once sync.Once
	b    []byte
	err  error
}

// filter returns a compiled seccomp program, compiling it once. The
// compile (libseccomp: 0.6–0.7 ms for the base filter) runs outside mu,
// which every call and refill takes; a second caller for the same program
// waits for the first's.
func (s *Supervisor) filter(opts filter.FilterOptions, narrowing bool) ([]byte, error) {
	key := filterKey{opts, narrowing}
	s.mu.Lock()
	c := s.filters[key]
	if c == nil {
		c = &compiled{}
		s.filters[key] = c
	}
	s.mu.Unlock()
	c.once.Do(func() {
		build := filter.BuildFilter
		if narrowing {
			build = filter.BuildNarrowingFilter
		}
		if c.b, c.err = build(opts); c.err != nil {
			c.err = fmt.Errorf("%w: compile the seccomp filter: %v", jail.ErrUnenforceable, c.err)
		}
	})
	return c.b, c.err
}

// converse sends the call and waits for its end, cancelling on ctx.
// beforeTool runs after the call is sent and before the tool may start.
func (s *Supervisor) converse(ctx context.Context, c *child, spec jail.Spec, inv jail.Invocation, p plan, beforeTool func() error) (jail.Result, error) {
	if err := c.parent.Start(spec, inv, p.opts, beforeTool); err != nil {
		c.kill(s.log)
		var bt *jail.BeforeToolError
		if errors.As(err, &bt) {
			return jail.Result{}, bt.Err
		}
		if report := c.parent.Report(); report != nil {
			return jail.Result{}, report // init failed before the call came (a waiting child)
		}
		return jail.Result{}, &jail.StageError{Stage: jail.StageProtocol, Msg: fmt.Sprintf("send the spec to init: %v", err)}
	}
	// Init's report is read on this goroutine (one wake-up, no hand-off).
	// A cancelled ctx makes init kill the tree and report; if it does not
	// within the grace period, init is killed (in a PID namespace that
	// takes the tree too), which ends the wait as well.
	var (
		mu       sync.Mutex
		grace    *time.Timer
		killed   bool
		reported bool // Wait has returned: no grace period is needed any more
	)
	stop := context.AfterFunc(ctx, func() {
		_ = c.parent.Cancel()
		mu.Lock()
		defer mu.Unlock()
		if reported {
			return
		}
		grace = time.AfterFunc(s.grace, func() {
			mu.Lock()
			killed = true
			mu.Unlock()
			s.log.Warn("jail init did not stop in time; killing it", "pid", c.proc.Pid)
			c.kill(s.log)
		})
	})
	res, err := c.parent.Wait()
	if stop() {
		return res, err // not cancelled
	}
	mu.Lock()
	defer mu.Unlock()
	reported = true
	if grace != nil {
		grace.Stop()
	}
	switch {
	case killed:
		// The report ended when init's descriptors closed, which the
		// kernel does before it kills the rest of init's PID namespace:
		// only reaping init proves the call's processes are gone, and
		// the caller sweeps and reports the call as ended next.
		c.wait()
		return jail.Result{Canceled: true, ExitCode: 128 + int(unix.SIGKILL), Signal: "SIGKILL"}, nil
	case err != nil:
		return jail.Result{Canceled: true}, nil
	}
	res.Canceled = true
	return res, nil
}

// protectedState is what a protected path was before a call: absent, or a
// symlink to link. Other existing protected paths are read-only mount points
// (or carved out of the grant) and cannot be replaced, so they need no record.
type protectedState struct {
	missing bool
	link    string
}

// snapshotProtected records the protected paths that a call could still
// create or replace: the missing ones, and symlinks (the read-only bind
// lands on the target; the link itself sits in a writable directory) —
// also a symlink on the way to an existing one (.config a link, and
// .config/lefthook.yml in what it names): no mount can pin a link, and a
// call that replaced it would decide what the path holds.
func snapshotProtected(paths []string) map[string]protectedState {
	out := map[string]protectedState{}
	absent := jail.ReadAbsence(paths)
	walked := map[string]bool{}
	for _, p := range paths {
		if absent.Absent(p) {
			out[p] = protectedState{missing: true}
			continue
		}
		for d := filepath.Dir(p); d != "/" && d != "."; d = filepath.Dir(d) {
			if walked[d] {
				break // on the way to another protected path: looked at, and so was what lies above it
			}
			walked[d] = true
			if fi, err := os.Lstat(d); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				if target, err := os.Readlink(d); err == nil {
					out[d] = protectedState{link: target}
				}
			}
		}
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, os.ErrNotExist):
			out[p] = protectedState{missing: true}
		case err == nil && fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				continue
			}
			out[p] = protectedState{link: target}
			// A dangling link's target is a protected path that does not
			// exist yet: the call must not create it either.
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(p), target)
			}
			if _, err := os.Stat(target); errors.Is(err, os.ErrNotExist) {
				out[filepath.Clean(target)] = protectedState{missing: true}
			}
		}
	}
	return out
}

// sweep undoes what a call did to protected paths it could reach: a path it
// created is moved out of the workspace, a symlink it replaced is put back.
// Every process of the call is dead by now, so nothing races with this; but
// the call may have replaced a directory on the way by a symlink, so every
// step happens inside the path's parent opened without following symlinks
// (safefs).
func (s *Supervisor) sweep(before map[string]protectedState) []string {
	var found []string
	absent := jail.ReadAbsence(slices.Collect(maps.Keys(before)))
	for p, st := range before {
		// Cheap first look: most calls change nothing. A path that looks
		// untouched through a symlinked parent is not where git will
		// look either; anything that looks changed is examined safely.
		if st.missing && absent.Absent(p) {
			continue
		}
		if fi, err := os.Lstat(p); err != nil {
			if errors.Is(err, os.ErrNotExist) && st.missing {
				continue
			}
		} else if !st.missing && fi.Mode()&os.ModeSymlink != 0 {
			if target, err := os.Readlink(p); err == nil && target == st.link {
				continue
			}
		}
		dir, err := safefs.Open(filepath.Dir(p))
		if errors.Is(err, unix.ELOOP) {
			// A directory on the way is a symlink: one the call made or
			// changed is taken out (a new link named tools, where
			// core.hooksPath names the missing tools/hooks, would make
			// what it points at the hooks), and the path is looked at
			// again without it.
			taken, userLink := s.unplant(p, before)
			found = append(found, taken...)
			if len(taken) > 0 {
				dir, err = safefs.Open(filepath.Dir(p))
			}
			if errors.Is(err, unix.ELOOP) && userLink != "" {
				// Still a link on the way: the user's own, from before
				// the call, which git follows too. The path is swept
				// where that link leads as it was recorded — with no
				// other link on the way, which the call may have made.
				dir, err = safefs.Open(beyondLink(userLink, before[userLink].link, filepath.Dir(p)))
			}
		}
		if err != nil {
			// ENOTDIR: a file sits where a directory on the way belongs,
			// so nothing lies below it (a .git file a call wrote is the
			// repository sweep's: sweepNewRepositories).
			if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, unix.ENOTDIR) {
				s.log.Warn("could not look at a protected path after a call", "path", p, "err", err)
			}
			continue
		}
		if v := s.sweepOne(dir, p, st); v {
			found = append(found, p)
		}
		dir.Close()
	}
	slices.Sort(found)
	return found
}

// unplant takes out the symlinks on the way to p that the call made or
// changed, and reports them: one recorded before the call (a link of the
// user's that the call replaced) is put back as it was. It stops at a
// link of the user's that the call left alone, or put back, and returns
// it. The path is canonical up
// to the workspace, so every link on the way is in the workspace.
func (s *Supervisor) unplant(p string, before map[string]protectedState) (taken []string, userLink string) {
	for a := range ancestors(filepath.Dir(p)) {
		if fi, err := os.Lstat(a); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			if err != nil {
				return taken, ""
			}
			continue
		}
		st, recorded := before[a]
		if recorded && !st.missing {
			if t, err := os.Readlink(a); err == nil && t == st.link {
				return taken, a // the user's link, untouched
			}
		}
		parent, err := safefs.Open(filepath.Dir(a))
		if err != nil {
			return taken, ""
		}
		if !recorded {
			st = protectedState{missing: true}
		}
		if s.sweepOne(parent, a, st) {
			taken = append(taken, a)
		}
		parent.Close()
		if !st.missing {
			return taken, a // put back: what lies beyond is the user's again
		}
	}
	return taken, ""
}

// beyondLink is dir (below the link at link, whose target was target)
// where the link leads: the target joined with the rest of dir.
func beyondLink(link, target, dir string) string {
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(link), target)
	}
	rest, err := filepath.Rel(link, dir)
	if err != nil {
		return target
	}
	return filepath.Join(target, rest)
}

// ancestors yields dir's ancestors and dir itself, from the top down,
// without the root.
func ancestors(dir string) func(func(string) bool) {
	return func(yield func(string) bool) {
		var chain []string
		for d := filepath.Clean(dir); d != "/" && d != "."; d = filepath.Dir(d) {
			chain = append(chain, d)
		}
		for i := len(chain) - 1; i >= 0; i-- {
			if !yield(chain[i]) {
				return
			}
		}
	}
}

// sweepOne checks one protected path inside its parent directory and undoes
// a change. It reports whether there was one.
func (s *Supervisor) sweepOne(dir *safefs.Dir, p string, st protectedState) bool {
	base := filepath.Base(p)
	mode, err := dir.Lstat(base)
	if err != nil {
		return false // absent: nothing was created
	}
	if !st.missing && mode&os.ModeSymlink != 0 {
		if target, err := dir.Readlink(base); err == nil && target == st.link {
			return false // unchanged
		}
	}
	if err := s.quarantine(dir, base); err != nil {
		s.log.Error("could not remove a protected path the call created", "path", p, "err", err)
		return true
	}
	if !st.missing {
		if err := dir.Symlink(st.link, base); err != nil {
			s.log.Error("could not restore a protected symlink", "path", p, "target", st.link, "err", err)
		}
	}
	return true
}

// writtenRoots are the parts of the workspace the call could write: the
// whole workspace when a write grant covers it, else the write grants
// inside it. A call with none (read_file, a read-only bash) cannot have
// created a repository, so nothing is walked.
func writtenRoots(spec jail.Spec) []string {
	if spec.Workspace == "" {
		return nil
	}
	var roots []string
	for _, r := range spec.Paths {
		if r.Access != jail.Write {
			continue
		}
		switch {
		case within(spec.Workspace, r.Path):
			return []string{spec.Workspace}
		case within(r.Path, spec.Workspace):
			roots = append(roots, r.Path)
		}
	}
	return roots
}

// quarantine moves dir/base under the quarantine directory (brig's own
// state, which no call can write), or deletes it when that is not possible
// (another filesystem, no quarantine set). Neither follows a link.
func (s *Supervisor) quarantine(dir *safefs.Dir, base string) error {
	if s.quarantineDir != "" {
		q, err := safefs.MkdirAllResolved(filepath.Join(s.quarantineDir, time.Now().UTC().Format("20060102T150405.000000000")), 0o700)
		if err == nil {
			err = dir.Rename(base, q, base)
			q.Close()
			if err == nil {
				return nil
			}
		}
		s.log.Debug("quarantine", "path", filepath.Join(dir.Path(), base), "err", err)
	}
	return dir.RemoveAll(base)
}

// probeUserNS reports whether an unprivileged user namespace with mount, PID
// and network namespaces can be made here, by a start in them the way
// every call's init is started that runs no program (jail.NSProcess
// without a Path): the child exits once it has written its maps. Nothing
// is looked up on PATH, and nothing runs with the supervisor's
// environment (API keys).
func (s *Supervisor) probeUserNS(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false // nothing is started for a context already done
	}
	proc, err := jail.StartProbe(cloneFlags(true, true))
	if err != nil {
		s.log.Debug("user namespaces unavailable", "err", err)
		return false
	}
	// It started in the namespaces (a failure before its exit, the maps
	// included, is the start's error): that is all the probe asks. It is
	// reaped in the background (killed if ctx ends first).
	stop := context.AfterFunc(ctx, func() { _ = proc.Kill() })
	go func() {
		_, _ = proc.Wait()
		stop()
	}()
	return true
}

// userTasks counts the processes and threads whose real uid is uid (what
// RLIMIT_NPROC counts).
func userTasks(uid int) uint64 {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	want := strconv.Itoa(uid)
	var n uint64
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		// /proc/PID's owner is the effective uid (root for a
		// non-dumpable process); the kernel counts by real uid.
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		var real string
		var threads uint64
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Uid:"); ok {
				if f := strings.Fields(v); len(f) > 0 {
					real = f[0]
				}
			} else if v, ok := strings.CutPrefix(line, "Threads:"); ok {
				threads, _ = strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			}
		}
		if real == want {
			n += max(threads, 1)
		}
	}
	return n
}

// within reports whether p is dir or below it (both clean and absolute).
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

package jail

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// workerMain prepares the restrictions while init builds the call's view,
// then runs the tool: a Go tool in this process after restricting every
// thread, a command in a fresh single-threaded process that restricts
// itself before exec (spawnCommand). Each failure is reported to init as a
// StageError.
func workerMain(tools map[string]ToolFunc) int {
	ctl := newConn(ControlFD, "init")
	fail := func(err *StageError, code int) int {
		_ = ctl.send(message{Error: err})
		return code
	}
	// The parent-death signal (SIGKILL) was set at fork by init, and Go's
	// fork checks that init was still alive after setting it. Capabilities
	// and exec are per thread: stay on this one.
	runtime.LockOSThread()
	warmCodec()
	warmLandlock()
	// The start message comes straight from the supervisor, after the
	// base seccomp filter; then, once the supervisor has recorded what it
	// checks after the call, {go}.
	startConn := newConn(StartFD, "supervisor")
	defer startConn.close()
	raw, err := startConn.recvBytes()
	baseSeccomp := false
	if err == nil && isPrepare(raw) {
		prep, err := decodePrepare(raw)
		if err != nil {
			return fail(stageErr(StageProtocol, err), exitSetupFailed)
		}
		// The notify filter first: the base filter refuses installing
		// one with a listener. Its listener goes to the supervisor at
		// once, and this process keeps no copy (the command must not
		// inherit it).
		if prep.Notify != nil {
			lfd, err := LoadNotifyFilter(prep.Notify)
			if err != nil {
				return fail(stageErr(StageSeccomp, err), exitSetupFailed)
			}
			err = startConn.sendFD(message{Listener: true}, lfd)
			unix.Close(lfd)
			if err != nil {
				return fail(stageErr(StageProtocol, fmt.Errorf("send the notify filter's listener: %w", err)), exitSetupFailed)
			}
		}
		// Loading a filter costs the kernel a pass over every syscall
		// number and a JIT compilation; the base filter is the large
		// one, so it is loaded now, before the call is known, on every
		// thread. The worker needs nothing it refuses.
		if err := LoadFilter(prep.Seccomp); err != nil {
			return fail(stageErr(StageSeccomp, err), exitSetupFailed)
		}
		baseSeccomp = true
		// The supervisor starts its next warm child once this one is
		// ready. A supervisor that is gone shows as EOF just below.
		_ = startConn.send(message{Prepared: true})
		raw, err = startConn.recvBytes()
	}
	if err != nil {
		if errors.Is(err, errEOF) {
			return 0 // the supervisor dropped a warm child
		}
		return fail(stageErr(StageProtocol, err), exitSetupFailed)
	}
	st, err := decodeStart(raw)
	if err != nil {
		return fail(stageErr(StageProtocol, err), exitSetupFailed)
	}
	spec := st.Spec

	// Init builds the view meanwhile, so everything that does not depend
	// on the view happens now: limits, the privilege check, most of the
	// Landlock ruleset (built, not applied), decoding the call's narrowing
	// seccomp program.
	if err := applyRlimits(spec.Limits, st.NprocExtra); err != nil {
		return fail(stageErr(StageRlimit, err), exitSetupFailed)
	}
	if err := checkUnprivileged(); err != nil {
		return fail(stageErr(StageCaps, err), exitSetupFailed)
	}
	var (
		rs   *ruleset
		late []PathRule
	)
	if !spec.Layers.NoLandlock {
		if rs, late, err = workerRuleset(spec, st.Namespaces, st.PrivateNet, st.RestoreProtected, st.LandlockABI, st.ProxyPort); err != nil {
			return fail(stageErr(StageLandlock, err), exitSetupFailed)
		}
		defer rs.close()
	}
	var prog []unix.SockFilter // the narrowing filter, stacked on the base
	switch {
	case !spec.Layers.NoSeccomp && !baseSeccomp:
		return fail(&StageError{Stage: StageSeccomp, Msg: "the base seccomp filter was never sent to this child, so the call would run without one"}, exitSetupFailed)
	case spec.Layers.NoSeccomp && baseSeccomp:
		return fail(&StageError{Stage: StageSeccomp, Msg: "the spec switches seccomp off but this child already loaded the base filter"}, exitSetupFailed)
	case len(st.Seccomp) > 0:
		if prog, err = decodeBPF(st.Seccomp); err != nil {
			return fail(stageErr(StageSeccomp, fmt.Errorf("jail: seccomp: load filter: %w", err)), exitSetupFailed)
		}
	}

	// The rest waits for the view.
	if m, err := ctl.recv(); err != nil || !m.Ready {
		if errors.Is(err, errEOF) {
			return exitSetupFailed // init gave up on the call (and kills us)
		}
		return fail(&StageError{Stage: StageProtocol, Msg: fmt.Sprintf("expected the view-ready message (%v)", err)}, exitSetupFailed)
	}
	if err := os.Chdir(spec.Dir); err != nil {
		return fail(stageErr(StageDir, err), exitSetupFailed)
	}
	if rs != nil {
		if err := rs.addLate(spec, late); err != nil {
			return fail(stageErr(StageLandlock, err), exitSetupFailed)
		}
	}

	// The supervisor's go-ahead usually arrived long ago.
	if m, err := startConn.recv(); err != nil || !m.Go {
		if errors.Is(err, errEOF) {
			return exitSetupFailed // the supervisor gave up on the call
		}
		return fail(&StageError{Stage: StageProtocol, Msg: fmt.Sprintf("expected the supervisor's go-ahead (%v)", err)}, exitSetupFailed)
	}
	startConn.close()

	if inv := st.Invocation; inv.Tool != "" {
		if rs != nil {
			if err := rs.restrictAllThreads(); err != nil {
				return fail(stageErr(StageLandlock, err), exitSetupFailed)
			}
		}
		if prog != nil {
			if err := LoadFilter(st.Seccomp); err != nil {
				return fail(stageErr(StageSeccomp, err), exitSetupFailed)
			}
		}
		return runTool(ctl, tools, inv, spec.Env)
	}

	argv := st.Invocation.Argv
	path, err := lookPath(argv[0], spec.Env, spec.Dir)
	if err != nil {
		return fail(&StageError{Stage: StageExec, Errno: int(unix.ENOENT), Msg: err.Error()}, exitNotFound)
	}
	ruleset := -1
	if rs != nil {
		ruleset = rs.fd
	}
	pid, se := spawnCommand(path, argv, spec.Env, ruleset, prog)
	if se != nil {
		code := exitSetupFailed
		if se.Stage == StageExec && se.Errno == int(unix.ENOENT) {
			code = exitNotFound
		}
		return fail(se, code)
	}
	if err := ctl.send(message{Exec: pid}); err != nil {
		// Init ends the call when we exit without naming the command.
		return exitSetupFailed
	}
	return 0
}

// runTool runs a Go tool compiled into the binary, inside the restrictions,
// with the call's environment as its process environment (as a command
// would have it: web_fetch finds the egress proxy there).
func runTool(ctl *conn, tools map[string]ToolFunc, inv Invocation, env []string) int {
	fn, ok := tools[inv.Tool]
	if !ok {
		_ = ctl.send(message{Error: &StageError{Stage: StageTool, Msg: fmt.Sprintf("unknown tool %q", inv.Tool)}})
		return exitNotFound
	}
	os.Clearenv()
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			_ = os.Setenv(k, v)
		}
	}
	out, err := fn(context.Background(), inv.Args)
	msg := &toolOutput{Data: out}
	code := 0
	if err != nil {
		msg.Error = err.Error()
		code = 1
	}
	if err := ctl.send(message{Output: msg}); err != nil {
		return exitSetupFailed
	}
	return code
}

// lookPath resolves a command the way a shell would, using the tool's PATH
// and the call's view (so "not found" means not visible inside the jail;
// Landlock does not govern stat, so it finds the same as the command would).
// A relative name, or a relative PATH entry, is looked for from dir, where
// the command will run; what it returns is what the command's exec, in
// dir, is given.
func lookPath(name string, env []string, dir string) (string, error) {
	at := func(p string) string {
		if filepath.IsAbs(p) || dir == "" {
			return p
		}
		return filepath.Join(dir, p)
	}
	if strings.Contains(name, "/") {
		if _, err := os.Stat(at(name)); err != nil {
			return "", fmt.Errorf("command %q: %w", name, err)
		}
		return name, nil
	}
	pathEnv := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v
		}
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(at(p)); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("command not found in the jail: %q (PATH=%s)", name, pathEnv)
}

// applyRlimits sets hard and soft limits; a zero limit is left as inherited.
// nprocExtra is added to RLIMIT_NPROC (the user's processes outside the
// call, which the kernel counts too without a user namespace).
func applyRlimits(l Limits, nprocExtra uint64) error {
	for _, r := range rlimitsFor(l, nprocExtra) {
		if err := unix.Setrlimit(r.res, &unix.Rlimit{Cur: r.v, Max: r.v}); err != nil {
			return fmt.Errorf("%s=%d: %w", rlimitName(r.res), r.v, err)
		}
	}
	return nil
}

// rlimit is one resource limit, set as both the soft and the hard one.
type rlimit struct {
	res int
	v   uint64
}

// rlimitName names a limit rlimitsFor sets, for errors.
func rlimitName(res int) string {
	switch res {
	case unix.RLIMIT_CORE:
		return "RLIMIT_CORE"
	case unix.RLIMIT_FSIZE:
		return "RLIMIT_FSIZE"
	case unix.RLIMIT_NOFILE:
		return "RLIMIT_NOFILE"
	case unix.RLIMIT_NPROC:
		return "RLIMIT_NPROC"
	case unix.RLIMIT_DATA:
		return "RLIMIT_DATA"
	}
	return "RLIMIT_" + strconv.Itoa(res)
}

// rlimitsFor lists the limits a call's processes get: no core files (they
// would land in the workspace), and each of l's that is set.
func rlimitsFor(l Limits, nprocExtra uint64) []rlimit {
	out := []rlimit{{unix.RLIMIT_CORE, 0}}
	for _, r := range []rlimit{
		{unix.RLIMIT_FSIZE, l.FileSize},
		{unix.RLIMIT_NOFILE, l.OpenFiles},
		{unix.RLIMIT_NPROC, nprocAdd(l.Processes, nprocExtra)},
		{unix.RLIMIT_DATA, l.Memory},
	} {
		if r.v != 0 {
			out = append(out, r)
		}
	}
	return out
}

// checkUnprivileged fails closed unless the worker started as init set it
// up: no_new_privs, and no capability held, inheritable or (for uid 0)
// regainable. Threads are created from this one after exec, so what holds
// here holds on every thread; the kernel tests read every thread's status.
func checkUnprivileged() error {
	nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	if err != nil || nnp != 1 {
		return fmt.Errorf("no_new_privs is not set (%v)", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	for _, d := range data {
		if d.Effective|d.Permitted|d.Inheritable != 0 {
			return fmt.Errorf("the worker holds capabilities (effective %#x, permitted %#x, inheritable %#x)", d.Effective, d.Permitted, d.Inheritable)
		}
	}
	return nil
}

// nprocAdd is the RLIMIT_NPROC for a call's process budget n: n plus extra,
// or 0 (unset) when there is no budget.
func nprocAdd(n, extra uint64) uint64 {
	if n == 0 {
		return 0
	}
	return n + extra
}

package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"brig/internal/egress"
	"brig/internal/envguard"
	"brig/internal/safefs"
	"brig/internal/sensitive"
	"brig/internal/termsafe"
	"brig/internal/xdg"
	"brig/jail"
	"brig/policy"
	"brig/supervisor"
	"brig/tools"
)

// sandboxOptions are the inputs of `brig sandbox`, separate from the command
// so flags can be tested without running anything.
type sandboxOptions struct {
	Write, Read []string
	// AddDirs are --add-dir values, checked as brig -p checks them.
	AddDirs    []string
	ReadOnly   bool
	Net        bool
	AllowHosts []string
	Unix       bool
	Explain    string // "": no; "text" or "json": print the grant on stderr first
	Unsafe     bool
	Workspace  string
	Timeout    time.Duration
	MaxOutput  int64
	Memory     uint64
	Procs      uint64
	Disk       uint64
	Argv       []string

	Cwd            string
	Home           string
	Env            []string
	Stdout, Stderr io.Writer

	// buildsGoLayer is set by brig cache warm alone (workspaceConfig).
	buildsGoLayer bool
}

func newSandboxCmd() *cobra.Command {
	o := &sandboxOptions{}
	// The figures the help shows that do not depend on the machine: every
	// brig start builds this command, and reading the machine's memory
	// (/proc/meminfo) is for a sandbox run to do.
	lim := jail.LimitsFor(0)
	cmd := &cobra.Command{
		Use:   "sandbox [flags] -- COMMAND [ARG...]",
		Short: "Run a command in the jail with the workspace policy (no provider needed)",
		Long: `Run COMMAND with the workspace (the enclosing git root, or the current
directory) readable and writable, the system and toolchains readable and
executable, and nothing else: no home directory secrets, no network but
the hosts your rules, --allow-host or --net let through brig's proxy, no
terminal, no way to signal processes outside the call, and nothing left
running when it ends. The exit status is the command's own.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("no command given: brig sandbox [flags] -- COMMAND [ARG...], e.g. brig sandbox -- make test")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Explain != "" && o.Explain != "text" && o.Explain != "json" {
				return fmt.Errorf("--explain=%s: want --explain (for a person) or --explain=json", o.Explain)
			}
			if o.Explain == "text" && (args[0] == "json" || args[0] == "text") {
				// --explain json: the word is the command, as after any
				// flag whose value may be left out.
				return fmt.Errorf("--explain %s: write --explain=%s (with =); a word after --explain is the command to run", args[0], args[0])
			}
			o.Argv = args
			o.Stdout, o.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			var err error
			if o.Env, o.Home, err = homeEnv(); err != nil {
				return err
			}
			if o.Cwd, err = workingDir(); err != nil {
				return err
			}
			return runSandbox(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.SetInterspersed(false)
	f.StringArrayVar(&o.Write, "write", nil, "also grant write access to `PATH` (repeatable; must exist)")
	f.StringArrayVar(&o.Read, "read", nil, "also grant read access to `PATH` (repeatable; must exist)")
	f.Var(addDirFlag{o}, "add-dir", "the same as --write `DIR`, or --read DIR when written DIR:ro (as brig -p spells it)")
	f.BoolVar(&o.ReadOnly, "read-only", false, "make the workspace read-only")
	f.BoolVar(&o.Net, "net", false, "let the command reach every public host through brig's proxy (as [sandbox] network = true)")
	f.StringArrayVar(&o.AllowHosts, "allow-host", nil, "let the command reach `HOST` through brig's proxy (a name, *.domain, or an address; a name given exactly may reach private addresses); repeatable")
	f.BoolVar(&o.Unix, "unix-sockets", false, "allow creating unix sockets (reaches host sockets by path on kernels before Landlock ABI 9)")
	f.StringVar(&o.Explain, "explain", "", "print the grant on stderr before running: --explain for a person, --explain=json for the whole jail Spec")
	f.Lookup("explain").NoOptDefVal = "text"
	f.BoolVar(&o.Unsafe, "unsafe-no-sandbox", false, "run WITHOUT the jail (no Landlock, no seccomp, no namespaces)")
	f.StringVar(&o.Workspace, "workspace", "", "workspace root (default: the enclosing git root, or the current directory)")
	// The limit flags default to the [limits] config, else brig's defaults.
	f.DurationVar(&o.Timeout, "timeout", 0, fmt.Sprintf("wall-clock limit (default: [limits] timeout, else %s)", lim.Timeout))
	// Unbounded by default: the output streams to the caller, nothing is
	// held (a 40 MB file piped through was cut at 16 MiB, status 0: new
	// user, 2026-12-03).
	f.Int64Var(&o.MaxOutput, "max-output", 0, "bytes passed on per output stream before the rest is discarded (0: no bound; a cut makes the status 126)")
	f.Var(sizeFlag{&o.Memory, jail.MinMemory}, "memory", fmt.Sprintf("memory for the whole call, a size (\"512M\", \"2G\"): its processes plus its /tmp and /dev/shm (default: [limits] memory, else half the machine's memory, at most %s)", jail.Bytes(lim.Memory)))
	f.Uint64Var(&o.Procs, "procs", 0, fmt.Sprintf("processes and threads for the call (default: [limits] processes, else %d)", lim.Processes))
	f.Var(sizeFlag{&o.Disk, 0}, "disk", fmt.Sprintf("free disk space the call may use up, a size (\"10G\") (default: [limits] disk, else %s)", jail.Bytes(lim.Disk)))
	return cmd
}

// sizeFlag is a byte count given as a size, as in [limits]: a number of
// bytes, or one with K, M, G or T ("512M"); at least min when given.
type sizeFlag struct {
	n   *uint64
	min uint64
}

func (f sizeFlag) String() string {
	if f.n == nil || *f.n == 0 {
		return ""
	}
	return jail.Bytes(*f.n)
}

func (f sizeFlag) Type() string { return "size" }

func (f sizeFlag) Set(s string) error {
	n, err := policy.ParseSize(s)
	if err != nil {
		return err
	}
	if n < f.min {
		return fmt.Errorf("%s is below the least a call can start in (%s)", jail.Bytes(n), jail.Bytes(f.min))
	}
	*f.n = n
	return nil
}

// addDirFlag is --add-dir DIR[:ro], spelled and checked as for brig -p: a
// write grant, or a read grant with :ro, refused where -p refuses it (a
// directory holding credentials, brig's files or your home; one holding
// later-run files unless :ro; one reached through a link in the workspace).
type addDirFlag struct{ o *sandboxOptions }

func (f addDirFlag) String() string { return "" }
func (f addDirFlag) Type() string   { return "stringArray" }
func (f addDirFlag) Set(v string) error {
	f.o.AddDirs = append(f.o.AddDirs, v)
	return nil
}

// Exit statuses of `brig sandbox` when the command itself did not decide.
const (
	exitUnenforceable = 125 // the kernel cannot give the grant
	exitCannotRun     = 126 // the jail could not be set up
	exitNotFound      = 127 // the command does not exist inside the jail
	exitTimedOut      = 124
)

func runSandbox(ctx context.Context, o *sandboxOptions) error {
	go carriedChild() // written while the policy loads; the spawn waits for it
	ws, err := resolveWorkspace(o.Workspace, o.Cwd)
	if err != nil {
		return err
	}
	if err := o.check(); err != nil {
		return err
	}
	if o.Unsafe {
		return runUnconfined(ctx, o)
	}
	o.notes()
	dirs := xdg.Resolve(o.Env, o.Home)
	if err := makeOwnDirs(dirs); err != nil {
		return err
	}
	// The call's child starts now, on the other core, while the policy
	// and the grant are worked out here (Prestart).
	sup, err := supervisor.New(ctx, supervisor.Options{ExecutableFunc: carriedPath, Programs: carriedPrograms, QuarantineDir: filepath.Join(dirs.State, "quarantine"),
		PendingDir: filepath.Join(dirs.State, "pending"), Prestart: true})
	if err != nil {
		return err
	}
	defer sup.Close()
	sup.Warm()
	sup.PrepareWorkspace(ws) // the hard-link walk, beside the policy's load
	write, err := resolveGrants("--write", o.Write, o.Cwd, o.Home, ws)
	if err != nil {
		return err
	}
	read, err := resolveGrants("--read", o.Read, o.Cwd, o.Home, ws)
	if err != nil {
		return err
	}
	// The same policy defaults as the agent's bash calls: the workspace's
	// [sandbox] grants, brig's directories protected, the same caches.
	// Built while the child starts: the policy asks whether calls get
	// namespaces (the child's start answers it) only when the grant is
	// compiled (BashProfile), not when it is loaded.
	pe := procEnv{Cwd: o.Cwd, Home: o.Home, Env: o.Env, Stdout: o.Stdout, Stderr: o.Stderr}
	wc, err := loadWorkspaceConfig(pe, ws)
	if err != nil {
		return err
	}
	wc.buildsGoLayer = o.buildsGoLayer
	wp, err := wc.policy(pe, policy.ModeAsk, sup.Namespaces, false)
	if err != nil {
		return err
	}
	var extra []policy.ExtraDir
	for _, v := range o.AddDirs {
		d, err := policy.ParseAddDir(v, o.Cwd, o.Home)
		if err != nil {
			return err
		}
		extra = append(extra, d)
	}
	if err := wp.Policy.AddDirs(extra...); err != nil {
		return err // the profile below takes them (BashProfile)
	}
	recoverSweeps(sup, wp.Workspace, dirs.State, o.Stderr) // as a session's start does
	callTmp := ""
	if !sup.Namespaces() {
		tmp, err := os.MkdirTemp("", "brig-call-")
		if err != nil {
			return fmt.Errorf("per-call temporary directory: %w", err)
		}
		defer safefs.RemoveAllUnder(tmp) // the call could write it: nothing in it is followed
		callTmp = tmp
	}
	prof, err := wp.Policy.BashProfile(o.ReadOnly, callTmp)
	if err != nil {
		return err
	}
	prof.ReadOnlyCache = o.ReadOnly
	prof.Write = append(prof.Write, write...)
	prof.Read = append(prof.Read, read...)
	// A broad grant (--read ~) keeps the secrets inside it masked; say so.
	all := append(append([]string{}, read...), write...)
	for _, g := range []struct {
		flag  string
		paths []string
	}{{"--read", read}, {"--write", write}} {
		for _, p := range g.paths {
			if w := policy.CoveredSecretsWarning(g.flag, p, prof.Home, prof.BrigDirs, all); w != "" {
				fmt.Fprintf(o.Stderr, "brig: warning: %s\n", w)
			}
		}
	}
	// The command reaches hosts through the egress proxy, decided by the
	// workspace's Net rules and presets, --allow-host and --net; with no
	// one to ask, any other host is refused (and said on stderr).
	if err := wp.Policy.AllowHosts(o.AllowHosts...); err != nil {
		return err
	}
	wp.Policy.Sandbox.Network = wp.Policy.Sandbox.Network || o.Net
	prof.GoDownloads = wp.Policy.GoDownloads()
	prof.UnixSockets = prof.UnixSockets || o.Unix
	prof.Limits.Timeout, prof.Limits.OutputBytes = cmp.Or(o.Timeout, prof.Limits.Timeout), o.MaxOutput
	prof.Limits.Memory, prof.Limits.Processes, prof.Limits.Disk = cmp.Or(o.Memory, prof.Limits.Memory), cmp.Or(o.Procs, prof.Limits.Processes), cmp.Or(o.Disk, prof.Limits.Disk)
	prof.Limits.TmpBytes = min(prof.Limits.TmpBytes, prof.Limits.Memory)
	o.Timeout = prof.Limits.Timeout // for the message when it fires
	if within(o.Cwd, ws) {
		prof.Dir = o.Cwd
	}
	spec, err := prof.Spec()
	if err != nil {
		return err
	}
	switch o.Explain {
	case "json":
		enc := json.NewEncoder(o.Stderr)
		enc.SetIndent("", "  ")
		if err := enc.Encode(explained(spec, sup)); err != nil {
			return err
		}
	case "text":
		kernel := fmt.Sprintf("Landlock ABI %d, seccomp", sup.LandlockABI())
		if sup.Namespaces() {
			kernel += ", its own namespaces"
		} else {
			kernel += ", no namespaces (this host does not allow them: brig doctor)"
		}
		fmt.Fprintf(o.Stderr, "brig sandbox: the grant (%s):\n", kernel)
		writeGrant(o.Stderr, spec, "  ")
	}
	nets := newSandboxNet(wp.Policy, o.Stderr)
	tail := &tailWriter{w: o.Stderr}
	res, err := sup.Run(ctx, spec, jail.Invocation{Argv: o.Argv}, supervisor.IO{Stdout: o.Stdout, Stderr: tail, Net: nets, CapApart: true})
	nets.after(res.Connections)
	if err == nil && res.ExitCode != 0 {
		sayRefusals(o.Stderr, tools.Refusals(tail.String(), &spec), ws, o.Home, o.ReadOnly, []string{dirs.Config, dirs.State})
	}
	return sandboxOutcome(ctx, o, res, err)
}

// sandboxNet decides brig sandbox's connections by the policy alone (there
// is no one to ask) and says on stderr which it refused and how to allow
// each; after the call, refusals the proxy made itself (an address no rule
// names, a limit) are said too.
type sandboxNet struct {
	p      *policy.Policy
	stderr io.Writer
	mu     sync.Mutex
	said   map[string]bool
}

func newSandboxNet(p *policy.Policy, stderr io.Writer) *sandboxNet {
	return &sandboxNet{p: p, stderr: stderr, said: map[string]bool{}}
}

// say writes one refusal of host, once per host.
func (n *sandboxNet) say(host string, port int, why string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.said[host] {
		return
	}
	n.said[host] = true
	fmt.Fprintf(n.stderr, "brig: refused a connection to %s: %s\n", termsafe.Line(net.JoinHostPort(host, strconv.Itoa(port))), termsafe.Line(why))
}

func (n *sandboxNet) Decide(_ context.Context, r egress.Request) egress.Verdict {
	nd := n.p.DecideNet(r.Host)
	if nd.Tier == policy.Allow {
		return egress.Verdict{Allow: true, Named: nd.Named, Rule: nd.Rule}
	}
	why := nd.Reason
	if nd.Tier == policy.Ask {
		why += "; brig sandbox asks no one: --allow-host " + r.Host + " or a rule " + policy.NetRule(r.Host) + " allows it"
	}
	n.say(policy.NormalHost(r.Host), r.Port, why)
	return egress.Verdict{Reason: why, Rule: nd.Rule}
}

// after says the refusals of the finished call not said yet.
func (n *sandboxNet) after(conns []jail.Connection) {
	for _, c := range conns {
		if c.Refused != "" {
			n.say(policy.NormalHost(c.Host), c.Port, c.Refused)
		}
	}
}

// tailWriter passes writes on to w and keeps the last tailKept bytes of
// them: the command's stderr, where the errors the jail caused are.
type tailWriter struct {
	w   io.Writer
	buf []byte
}

const tailKept = 64 << 10

func (t *tailWriter) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailKept {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailKept:]...)
	}
	return t.w.Write(p)
}

func (t *tailWriter) String() string { return string(t.buf) }

// sayRefusals tells the person who ran brig sandbox which of the paths
// the command's errors name the jail refused, and the flag that grants
// each: --read for the path itself, --write only for a place in the
// workspace or the home directory (a write to /usr is refused, not
// answered with --write /usr). readOnly: the
// workspace was made read-only (--read-only).
func sayRefusals(w io.Writer, rs []tools.Refusal, ws, home string, readOnly bool, brigDirs []string) {
	for _, r := range rs {
		p := termsafe.Line(r.Path)
		// --read and --write take a path that exists: the nearest one.
		grant := r.Path
		for {
			if _, err := os.Lstat(grant); err == nil || grant == filepath.Dir(grant) {
				break
			}
			grant = filepath.Dir(grant)
		}
		how := func(flag string) string {
			_, secret := sensitive.Match(r.Path, home, sensitive.Secret)
			switch {
			case slices.ContainsFunc(brigDirs, func(d string) bool { return within(r.Path, d) }):
				return " (brig's own files, which no flag grants)"
			case secret:
				return " (it holds credentials)"
			case readOnly && within(r.Path, ws):
				return " (--read-only made the workspace so)"
			case flag == "--read" && grant == r.Path, within(grant, ws) || home != "" && grant != home && within(grant, home):
				return fmt.Sprintf(" (%s %s grants it)", flag, termsafe.Line(grant))
			}
			return ""
		}
		switch r.Why {
		case tools.RefusedHidden:
			fmt.Fprintf(w, "brig: %s is hidden from every call (it holds secrets); no flag grants it\n", p)
		case tools.RefusedRead:
			fmt.Fprintf(w, "brig: the jail refused %s: outside the grant%s\n", p, how("--read"))
		case tools.RefusedProcess:
			fmt.Fprintf(w, "brig: %s belongs to a process outside the call, which the jail keeps from it\n", p)
		case tools.RefusedProtect:
			fmt.Fprintf(w, "brig: %s is protected: a program outside the jail runs or obeys it later, so no call may change it\n", p)
		default:
			fmt.Fprintf(w, "brig: the jail refused the write to %s: the call may only read it%s\n", p, how("--write"))
		}
	}
}

// explained is the Spec plus what the kernel layer adds, for --explain.
func explained(spec jail.Spec, sup *supervisor.Supervisor) any {
	env := make([]string, len(spec.Env))
	for i, kv := range spec.Env {
		name, _, _ := strings.Cut(kv, "=")
		env[i] = name // values are not shown: they can be long and personal
	}
	spec.Env = env
	return struct {
		Spec        jail.Spec `json:"spec"`
		Namespaces  bool      `json:"namespaces"`
		LandlockABI int       `json:"landlock_abi"`
	}{spec, sup.Namespaces(), sup.LandlockABI()}
}

// sandboxOutcome maps a call's end to brig's exit status and messages.
func sandboxOutcome(ctx context.Context, o *sandboxOptions, res jail.Result, err error) error {
	if res.OwnCopies != "" {
		fmt.Fprintf(o.Stderr, "brig: %s\n", termsafe.Line(res.OwnCopies))
	}
	for _, v := range res.Violations {
		fmt.Fprintf(o.Stderr, "brig: the command created or changed the protected path %s; brig undid it (what the command left there is kept under %s when it could be moved there)\n", termsafe.Line(v), filepath.Join(xdg.Resolve(o.Env, o.Home).State, "quarantine"))
	}
	if res.LimitDetail != "" {
		fmt.Fprintf(o.Stderr, "brig: %s\n", res.LimitDetail)
	}
	for _, s := range []struct {
		name string
		cut  bool
	}{{"stdout", res.StdoutTruncated}, {"stderr", res.StderrTruncated}} {
		if s.cut {
			fmt.Fprintf(o.Stderr, "brig: the command's %s was cut after %d bytes (--max-output); the rest was discarded\n", s.name, o.MaxOutput)
		}
	}
	var se *jail.StageError
	switch {
	case errors.Is(err, jail.ErrUnenforceable):
		fmt.Fprintf(o.Stderr, "brig: %v\nbrig: run `brig doctor` for details; --unsafe-no-sandbox runs without the jail\n", err)
		return exitError{exitUnenforceable}
	case errors.As(err, &se) && se.Stage == jail.StageExec && errors.Is(err, syscall.ENOENT):
		fmt.Fprintf(o.Stderr, "brig: %s\n", se.Msg)
		return exitError{exitNotFound}
	case errors.As(err, &se) && se.Stage == jail.StageExec && errors.Is(err, syscall.EACCES) && notRunnable(o) != "":
		// Said as the shell says it: "the jail could not run the command:
		// … permission denied" read as the jail refusing it (new user,
		// 2026-12-03).
		fmt.Fprintf(o.Stderr, "brig: %s\n", notRunnable(o))
		return exitError{exitCannotRun}
	case errors.As(err, &se):
		fmt.Fprintf(o.Stderr, "brig: the jail could not run the command: %v\n", se)
		return exitError{exitCannotRun}
	case err != nil:
		return err
	case res.TimedOut:
		fmt.Fprintf(o.Stderr, "brig: timed out after %s; every process of the command was killed\n", o.Timeout)
		return exitError{exitTimedOut}
	case res.Canceled:
		code, why := interruptStatus(ctx)
		fmt.Fprintf(o.Stderr, "brig: %s; every process of the command was killed\n", why)
		return exitError{code}
	case res.ExitCode != 0:
		return exitError{res.ExitCode}
	case res.StdoutTruncated || res.StderrTruncated:
		// The command succeeded, but what reached the caller is cut:
		// a script must not take it for the whole.
		return exitError{exitCannotRun}
	}
	return nil
}

// check refuses flags that would do nothing, or less than they say (a new
// user's --timeout -5s turned the limit off, and --unsafe-no-sandbox
// --read-only --timeout 2s ran with neither, 2026-12-03).
func (o *sandboxOptions) check() error {
	if o.Timeout < 0 {
		return fmt.Errorf("--timeout %s: give a positive duration such as 30s (without it, [limits] timeout applies)", o.Timeout)
	}
	if o.MaxOutput < 0 {
		return fmt.Errorf("--max-output %d: give a number of bytes, or 0 for no bound", o.MaxOutput)
	}
	if !o.Unsafe {
		return nil
	}
	var jailed []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"--read", len(o.Read) > 0}, {"--write", len(o.Write) > 0}, {"--add-dir", len(o.AddDirs) > 0}, {"--read-only", o.ReadOnly},
		{"--net", o.Net}, {"--allow-host", len(o.AllowHosts) > 0}, {"--unix-sockets", o.Unix}, {"--explain", o.Explain != ""},
		{"--timeout", o.Timeout > 0}, {"--max-output", o.MaxOutput > 0}, {"--memory", o.Memory > 0}, {"--procs", o.Procs > 0}, {"--disk", o.Disk > 0},
	} {
		if f.set {
			jailed = append(jailed, f.name)
		}
	}
	if len(jailed) > 0 {
		return fmt.Errorf("--unsafe-no-sandbox runs the command without the jail, where %s would do nothing: leave them out, or leave out --unsafe-no-sandbox", strings.Join(jailed, ", "))
	}
	return nil
}

// notes says what the command will not get that a user may expect: what
// is piped in (its stdin is /dev/null), and the host's loopback through
// the usual clients, which NO_PROXY keeps off the proxy.
func (o *sandboxOptions) notes() {
	if fi, err := os.Stdin.Stat(); err == nil && (fi.Mode()&os.ModeNamedPipe != 0 || fi.Mode().IsRegular() && fi.Size() > 0) {
		fmt.Fprintln(o.Stderr, "brig: the command's standard input is /dev/null: what is piped into brig sandbox is not passed on (put it in a file in the workspace and name the file)")
	}
	for _, h := range o.AllowHosts {
		if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil && a.IsLoopback() || strings.EqualFold(h, "localhost") {
			fmt.Fprintf(o.Stderr, "brig: --allow-host %s: the command's NO_PROXY keeps curl and most clients off brig's proxy for localhost, 127.0.0.1 and ::1 (its own loopback); reach yours through the proxy with curl --noproxy '' URL, or NO_PROXY= before the command\n", h)
			break
		}
	}
}

// notRunnable says why the command named by a path is not a program to
// run, as a shell would ("" when it is, or is found on PATH).
func notRunnable(o *sandboxOptions) string {
	name := o.Argv[0]
	if !strings.Contains(name, "/") {
		return ""
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(o.Cwd, p)
	}
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return ""
	case fi.IsDir():
		return termsafe.Line(name) + " is a directory, not a program"
	case fi.Mode()&0o111 == 0:
		return termsafe.Line(name) + " is not executable: chmod +x it, or name its interpreter (brig sandbox -- sh " + termsafe.Line(name) + ")"
	}
	return ""
}

// runUnconfined runs the command without any jail, as asked, and says so.
func runUnconfined(ctx context.Context, o *sandboxOptions) error {
	fmt.Fprintln(o.Stderr, "brig: WARNING: --unsafe-no-sandbox: running WITHOUT the jail. The command can read your secrets, use the network and change anything you can.")
	c := exec.CommandContext(ctx, o.Argv[0], o.Argv[1:]...)
	c.Dir = o.Cwd
	c.Env = envguard.Build(o.Env, nil, nil)
	c.Stdout, c.Stderr = o.Stdout, o.Stderr
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = 2 * time.Second
	err := c.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return exitError{ee.ExitCode()}
	case errors.Is(err, exec.ErrNotFound):
		fmt.Fprintf(o.Stderr, "brig: command not found: %s\n", o.Argv[0])
		return exitError{exitNotFound}
	}
	return err
}

// resolveWorkspace returns the workspace root: the flag, else the enclosing
// git root, else cwd. It refuses / and the home directory's ancestors.
func resolveWorkspace(flag, cwd string) (string, error) {
	ws := flag
	if ws == "" {
		ws = cwd
		for d := cwd; ; d = filepath.Dir(d) {
			if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
				ws = d
				break
			}
			if d == "/" {
				break
			}
		}
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist) && flag != "":
		return "", fmt.Errorf("--workspace %s does not exist: pass an existing project directory", ws)
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("the current directory %s no longer exists: cd to a project directory, or pass --workspace", ws)
	case err != nil:
		return "", fmt.Errorf("workspace %s: %w", ws, err)
	}
	if real == "/" {
		return "", errors.New("the workspace would be / (the whole machine); run brig inside a project directory or pass --workspace")
	}
	if fi, err := os.Stat(real); err == nil && !fi.IsDir() {
		return "", fmt.Errorf("workspace %s is not a directory: pass --workspace a project directory", ws)
	}
	if !utf8.ValidString(real) {
		// Sessions, undo records and the audit log hold the workspace's
		// path as JSON text, where a byte that is not UTF-8 becomes U+FFFD:
		// the path would never match again (undo found nothing to undo
		// and said the files were as before).
		return "", fmt.Errorf("the workspace's path %q is not valid UTF-8: brig's sessions and undo records could not name it; rename the directory to a UTF-8 name (such as %q)", real, strings.ToValidUTF8(real, "_"))
	}
	return real, nil
}

// resolveGrants makes extra grant paths absolute and resolved, and fails on a
// path that does not exist (a typo would otherwise silently grant nothing).
func resolveGrants(flag string, paths []string, cwd, home, workspace string) ([]string, error) {
	var out []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil, fmt.Errorf("%s %s: the path does not exist (create it first): %w", flag, p, err)
		}
		// A link in the workspace on the way was the repository's choice
		// (vendor-cache -> ~/.ssh would grant, and unmask, the keys).
		if d, err := policy.ParseAddDir(p, cwd, home); err == nil {
			if err := d.ThroughWorkspaceLink(flag, workspace); err != nil {
				return nil, err
			}
		}
		if real == "/" && flag == "--write" {
			// The jail cannot bind the root over itself; say so now,
			// not as a mount failure once the child is set up.
			return nil, fmt.Errorf("%s %s: that is the whole machine; name the directories the command writes (--read / lets it read everything but the secrets)", flag, p)
		}
		out = append(out, real)
	}
	return out, nil
}

func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

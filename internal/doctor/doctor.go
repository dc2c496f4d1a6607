// Package doctor turns what the kernel offers ([jail.Features]) into a report
// of the guarantees brig's jail can keep on this machine: for each one
// whether it holds, is degraded or is missing, which kernel feature provides
// it, and what to change when it does not hold. It also lists which
// credentials brig can see (environment variable names and the credentials
// file), so the user knows what the jail keeps away from tool calls.
//
// For each thing the machine lacks (Landlock, a recent enough ABI, seccomp,
// user namespaces, a tested architecture) it also says in one line what
// that removes and what to do, first choice first; the first choice never
// turns a system-wide restriction off.
//
// The package only describes. It never enforces anything (the jail does),
// never probes the kernel itself (jail.DetectFeatures does; it only reads
// the three sysctls that say why user namespaces are off), and never
// reads, prints or serialises a credential's value: only names, a file's
// path and its mode.
package doctor

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"brig/internal/envguard"
	"brig/jail"
)

// Status says how far a guarantee holds on this machine.
type Status string

const (
	Holds    Status = "holds"    // the guarantee holds as documented
	Degraded Status = "degraded" // it holds in part; Why says what is lost
	Missing  Status = "missing"  // it does not hold; Why says how to fix it
)

// Guarantee is one promise of the jail and how far it holds here.
type Guarantee struct {
	ID       string `json:"id"`       // stable, e.g. "fs-confined"
	Name     string `json:"name"`     // what is promised, in plain words
	Status   Status `json:"status"`   // holds, degraded or missing
	Baseline bool   `json:"baseline"` // doctor fails when a baseline guarantee is missing
	Why      string `json:"why"`      // the feature that provides it, or what is lost and the fix
}

// CredentialFinding is a credential brig can see. It carries names only.
type CredentialFinding struct {
	Source string `json:"source"` // "env" or "file"
	Name   string `json:"name"`   // the variable name or the file path
	Note   string `json:"note"`   // what it is, or what to fix; never the value
}

// Report is the outcome of brig doctor.
type Report struct {
	Kernel          string              `json:"kernel"`
	LandlockABI     int                 `json:"landlock_abi"`
	LandlockHave    []string            `json:"landlock_have"`
	LandlockMissing []string            `json:"landlock_missing"`
	Seccomp         bool                `json:"seccomp"`
	SeccompTSync    bool                `json:"seccomp_tsync"`
	NoNewPrivs      bool                `json:"no_new_privs"`
	UserNS          bool                `json:"user_ns"`
	MountNS         bool                `json:"mount_ns"`
	PIDNS           bool                `json:"pid_ns"`
	NetNS           bool                `json:"net_ns"`
	YamaPtraceScope int                 `json:"yama_ptrace_scope"` // -1: Yama absent
	Machine         Machine             `json:"machine"`
	ProbeErrors     map[string]string   `json:"probe_errors,omitempty"`
	Credentials     []CredentialFinding `json:"credentials"`
	Config          ConfigStatus        `json:"config"`
	Outside         *Outside            `json:"outside,omitempty"`  // what calls can read outside the workspace
	JailRun         *JailRun            `json:"jail_run,omitempty"` // where the jail's programs run from, and whether commands need a worker
	Findings        []Finding           `json:"findings"`           // what this machine lacks, one line each
	Guarantees      []Guarantee         `json:"guarantees"`
	// Storage says why brig cannot keep its state (sessions, undo, the
	// audit log) or its cache; "" when it can.
	Storage string `json:"storage_error,omitempty"`
	OK      bool   `json:"ok"` // no baseline guarantee is missing, and brig can start
}

// Fixes shown when a kernel feature is absent.
const (
	fixLandlock = "use a kernel >= 5.13 built with CONFIG_SECURITY_LANDLOCK=y and boot with landlock in the LSM list (lsm=landlock,lockdown,yama,integrity,apparmor,bpf or your distribution's list plus landlock)"
	fixSeccomp  = "use a kernel >= 4.14 with CONFIG_SECCOMP_FILTER=y; inside a container, the container's seccomp profile must allow seccomp(2)"
)

// Build derives the report from the detected features, this machine (see
// ReadMachine), the supervisor's environment (only the names are used) and
// the user's home directory.
func Build(f jail.Features, env []string, home string) Report {
	return BuildFor(f, ReadMachine(), env, home)
}

// BuildFor is Build with the machine given.
func BuildFor(f jail.Features, m Machine, env []string, home string) Report {
	have, missing := f.LandlockRights()
	r := Report{
		Kernel:          f.Kernel,
		LandlockABI:     f.LandlockABI,
		LandlockHave:    orEmpty(have),
		LandlockMissing: orEmpty(missing),
		Seccomp:         f.Seccomp,
		SeccompTSync:    f.SeccompTSync,
		NoNewPrivs:      f.NoNewPrivs,
		UserNS:          f.UserNS,
		MountNS:         f.MountNS,
		PIDNS:           f.PIDNS,
		NetNS:           f.NetNS,
		YamaPtraceScope: f.YamaPtraceScope,
		Machine:         m,
		Credentials:     findCredentials(env, home),
		Findings:        orEmptyFindings(findings(f, m)),
		Guarantees:      guarantees(f, m),
		OK:              true,
	}
	if len(f.Errors) > 0 {
		r.ProbeErrors = make(map[string]string, len(f.Errors))
		for k, v := range f.Errors {
			r.ProbeErrors[k] = v
		}
	}
	for _, g := range r.Guarantees {
		if g.Baseline && g.Status == Missing {
			r.OK = false
		}
	}
	return r
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func orEmptyFindings(s []Finding) []Finding {
	if s == nil {
		return []Finding{}
	}
	return s
}

// ProtectedWithoutNS says how protected paths are kept without a mount
// namespace, and what differs from the composition with one (README,
// Security model, says the same).
const ProtectedWithoutNS = "no mount namespace, so a call gets its whole write grant (git commit and new files and directories anywhere in the workspace work as with namespaces) and brig records every protected path before the call and puts it back when the call ends, moving what the call left there to the quarantine and reporting it. What differs from the namespace composition: during the call a protected file can be changed, and the call itself, or a program of yours reading it at that moment (git in another terminal running a hook the call planted, an editor reloading its tasks), sees the change until the call ends; and MCP servers, which live on, get their grant split around the protected paths instead (they cannot create entries in the workspace root or .git)"

// MetadataWithoutNS says how metadata is kept without a mount namespace.
const MetadataWithoutNS = "no mount namespace, so seccomp sends every chmod, chown and utimes (and truncate below Landlock ABI 3) to brig as a user notification, and brig performs it only on a file inside the call's write grant that is neither protected nor hidden, through the descriptor it resolved, and refuses it (EPERM) everywhere else"

// guarantees evaluates every guarantee, in a fixed order.
func guarantees(f jail.Features, m Machine) []Guarantee {
	abi := f.LandlockABI
	landlock := abi >= 1
	// The jail loads its seccomp filter on every thread at once (TSYNC); a
	// kernel that has seccomp but refuses TSYNC cannot load it either.
	seccomp := f.Seccomp && f.SeccompTSync
	noLandlock := "Landlock is unavailable" + probeReason(f, "landlock") + "; " + fixLandlock
	noSeccomp := seccompMissing(f)

	var gs []Guarantee
	add := func(id, name string, baseline bool, st Status, why string) {
		gs = append(gs, Guarantee{ID: id, Name: name, Status: st, Baseline: baseline, Why: why})
	}

	// fs-confined
	{
		const name = "files outside the granted paths (~/.ssh, ~/.aws, other projects) cannot be read or written"
		switch {
		case !landlock:
			add("fs-confined", name, true, Missing, noLandlock)
		case abi < 3:
			lost := "truncate(2) is not controlled, so a file granted read-only can be emptied"
			if abi < 2 {
				lost = "renaming or linking a file into another directory always fails (refer, ABI 2), and " + lost
			}
			add("fs-confined", name, true, Degraded, fmt.Sprintf(
				"Landlock ABI %d confines reads and writes, but %s (truncate, ABI 3); fix: a kernel >= 6.2", abi, lost))
		default:
			add("fs-confined", name, true, Holds, fmt.Sprintf(
				"Landlock ABI %d: only the paths a call is granted are reachable, including rename/link across directories and truncate", abi))
		}
	}

	// protected-paths
	{
		const name = ".git/hooks, .git/config, .brig/ and the other files later run outside the jail cannot be written"
		switch {
		case !landlock:
			add("protected-paths", name, true, Missing, noLandlock)
		case f.MountNS:
			add("protected-paths", name, true, Holds,
				"Landlock plus read-only bind mounts in a private mount namespace: the protected paths stay read-only while the rest of the workspace and .git are writable, so git commit works")
		default:
			add("protected-paths", name, true, Degraded, ProtectedWithoutNS+"; fix: "+userNSFixText(f, m, false))
		}
	}

	// metadata-confined
	{
		const name = "the mode, owner and times of files outside the granted paths cannot be changed (chmod 666 ~/.config/brig/config.toml)"
		switch {
		case f.MountNS:
			add("metadata-confined", name, true, Holds,
				"everything outside the call's write grants is a read-only mount in its mount namespace (Landlock up to ABI 7 does not govern chmod, chown or utimes)")
		case !seccomp:
			add("metadata-confined", name, true, Missing, "no mount namespace, and "+noSeccomp)
		case f.YamaPtraceScope >= 2:
			add("metadata-confined", name, true, Degraded, MetadataWithoutNS+fmt.Sprintf(
				"; but Yama's ptrace_scope is %d here, which keeps brig from reading a call's arguments, so every such change is refused, inside the grant too (chmod +x fails); fix: %s", f.YamaPtraceScope, userNSFixText(f, m, false)))
		default:
			add("metadata-confined", name, true, Holds, MetadataWithoutNS)
		}
	}

	// network-off: the only way out is brig's egress proxy.
	{
		const name = "no network except through brig's proxy, to the hosts your rules or answers allow"
		proxy := "brig's proxy resolves names itself, refuses loopback, private and link-local addresses unless a rule names the host, and asks about hosts no rule decides"
		switch {
		case !seccomp:
			add("network-off", name, true, Missing, noSeccomp)
		case f.NetNS:
			add("network-off", name, true, Holds, "each call runs in a private network namespace whose only way out is brig's proxy, listening on the call's own loopback (the call's own test servers work); "+proxy+"; seccomp refuses packet, raw and every other non-inet socket family")
		case abi >= 4:
			add("network-off", name, true, Degraded, "no private network namespace (not available), so calls share the host's network: Landlock (ABI 4+) lets them connect to the proxy's port alone and bind nothing, and seccomp allows TCP alone (no UDP, so no DNS) and refuses TCP Fast Open, which Landlock does not see; "+proxy+"; but Landlock limits the port, not the address, so a server elsewhere listening on that same port number could be reached directly; fix: "+userNSFixText(f, m, false))
		default:
			add("network-off", name, true, Holds, "no private network namespace and no Landlock TCP rules (ABI 4): calls get no network at all (seccomp refuses inet sockets); a call that needs the network is refused with a message")
		}
	}

	// unix-sockets
	{
		const name = "host unix sockets (docker, ssh-agent, D-Bus) are unreachable"
		switch {
		case !seccomp:
			add("unix-sockets", name, true, Missing, noSeccomp+
				" (Landlock below ABI 9 does not restrict connect() to a pathname socket)")
		default:
			why := "seccomp refuses socket(AF_UNIX) unless the call is granted unix sockets (socketpair still works)"
			if abi < 9 {
				why += "; Landlock ABI " + fmt.Sprint(abi) + " does not restrict connect() to pathname sockets, so this rests on seccomp"
			}
			if abi >= 6 {
				why += "; Landlock scoping also blocks abstract sockets outside the call"
			} else if f.NetNS {
				why += "; the private network namespace also hides the host's abstract sockets"
			}
			add("unix-sockets", name, true, Holds, why)
		}
	}

	// signals-scoped
	{
		const name = "the jail cannot signal or ptrace processes outside its own tree (the supervisor, your other programs)"
		var by []string
		if abi >= 6 {
			by = append(by, "Landlock ABI 6 signal scoping")
		}
		if f.PIDNS {
			by = append(by, "a PID namespace (outside processes are invisible)")
		}
		switch {
		case len(by) > 0:
			why := strings.Join(by, " and ")
			if seccomp {
				why += "; seccomp also refuses ptrace"
			}
			add("signals-scoped", name, true, Holds, why)
		default:
			add("signals-scoped", name, true, Missing, fmt.Sprintf(
				"needs Landlock ABI 6 (this kernel: %d) or a PID namespace (not available); fix: %s", abi, userNSFixText(f, m, true)))
		}
	}

	// tree-killed
	{
		const name = "no process outlives its call (setsid, double fork)"
		switch {
		case f.PIDNS:
			why := "a PID namespace per call: when its init exits, the kernel kills every process left in it"
			if abi >= 6 {
				why += "; Landlock ABI 6 scoping would also let init kill its own domain"
			}
			add("tree-killed", name, true, Holds, why)
		case abi >= 6:
			add("tree-killed", name, true, Holds,
				"no PID namespace, but Landlock ABI 6 scoping lets the call's init process kill(-1) exactly its own Landlock domain when the call ends")
		default:
			add("tree-killed", name, true, Missing, fmt.Sprintf(
				"needs a PID namespace (not available) or Landlock ABI 6 (this kernel: %d); fix: %s", abi, userNSFixText(f, m, true)))
		}
	}

	// kernel-surface
	{
		const name = "ptrace, bpf, keyctl, mount, io_uring, perf_event_open, 32-bit and x32 syscalls are refused"
		switch {
		case !seccomp:
			add("kernel-surface", name, true, Missing, noSeccomp)
		case !testedArch(m.Arch):
			add("kernel-surface", name, true, Degraded,
				"a seccomp filter loaded on every thread (TSYNC), but it is built and tested for x86_64 and arm64 only: on "+m.Arch+" a syscall missing from its list, or a multiplexed one (socketcall, ipc), may pass; fix: run brig on an x86_64 or arm64 machine")
		default:
			add("kernel-surface", name, true, Holds,
				"a seccomp filter loaded on every thread (TSYNC) that refuses these and every syscall of a non-native architecture or the x32 ABI")
		}
	}

	// no-tty-injection
	{
		const name = "no keystrokes can be injected into your terminal"
		tiocsti := "this kernel still allows TIOCSTI (dev.tty.legacy_tiocsti=1)"
		if !f.LegacyTIOCSTI {
			tiocsti = "this kernel also disables TIOCSTI (dev.tty.legacy_tiocsti=0)"
		}
		switch {
		case !seccomp:
			add("no-tty-injection", name, true, Missing, noSeccomp+"; "+tiocsti)
		default:
			add("no-tty-injection", name, true, Holds,
				"each call runs in a new session with no controlling terminal and stdin from /dev/null, and seccomp refuses ioctl TIOCSTI and TIOCLINUX; "+tiocsti)
		}
	}

	// no-new-privs
	{
		const name = "setuid and setgid programs cannot raise privileges"
		if f.NoNewPrivs {
			add("no-new-privs", name, true, Holds, "PR_SET_NO_NEW_PRIVS is set before Landlock and seccomp, and is inherited by every process of the call")
		} else {
			add("no-new-privs", name, true, Missing, "prctl(PR_GET_NO_NEW_PRIVS) failed"+probeReason(f, "no_new_privs")+"; fix: a kernel >= 3.5")
		}
	}

	// private-tmp
	{
		const name = "each call gets its own private /tmp and /dev/shm"
		if f.MountNS {
			add("private-tmp", name, false, Holds, "fresh tmpfs mounts in a private mount namespace")
		} else {
			add("private-tmp", name, false, Degraded,
				"no mount namespace: a per-call TMPDIR directory is used instead, and programs that write to /tmp directly fail; fix: "+userNSFixText(f, m, false))
		}
	}

	// resource-bounds
	{
		const name = "memory, processes, disk, file size, output and run time are bounded"
		base := "rlimits (RLIMIT_NPROC, RLIMIT_DATA, RLIMIT_FSIZE, RLIMIT_NOFILE), output caps and a timeout; every jailed process has oom_score_adj 1000 (the OOM killer's first choice); brig stops a call that exceeds its memory (processes plus /tmp and /dev/shm) or disk allowance, or stays at its process limit. " + limitDefaults(jail.DefaultLimits())
		switch {
		case f.Root && f.PidsCgroup:
			add("resource-bounds", name, true, Holds,
				base+"; brig runs as root, which the kernel exempts from RLIMIT_NPROC, so each call gets its own pids and memory cgroup, which the kernel enforces")
		case f.Root:
			add("resource-bounds", name, true, Degraded,
				base+"; but brig runs as root, the kernel never enforces RLIMIT_NPROC for uid 0, and no pids cgroup controller is mounted, so the kernel does not refuse a call's forks: brig stops a call above its process limit within 0.2 s; fix: run brig as an ordinary user, or mount the pids controller")
		case !f.UserNS:
			add("resource-bounds", name, true, Degraded,
				base+"; without a user namespace RLIMIT_NPROC counts all of your user's processes, not just the call's, so the limit is loose or hits your other programs; fix: "+userNSFixText(f, m, false))
		default:
			add("resource-bounds", name, true, Holds,
				base+"; the call's user namespace makes RLIMIT_NPROC count the call's processes only; brig checks the call's memory every 0.1 s")
		}
	}

	// ptrace-yama
	{
		const name = "Yama restricts ptrace between your own processes"
		switch s := f.YamaPtraceScope; {
		case s < 0:
			add("ptrace-yama", name, false, Missing,
				"Yama is not enabled, so outside the jail any process of yours may ptrace another; inside, seccomp and Landlock refuse ptrace regardless")
		case s == 0:
			add("ptrace-yama", name, false, Degraded,
				"kernel.yama.ptrace_scope=0 (classic: any process of yours may ptrace another); the jail refuses ptrace with seccomp and Landlock regardless")
		default:
			meaning := map[int]string{1: "restricted: only a parent may ptrace its descendants", 2: "admin-only: ptrace needs CAP_SYS_PTRACE", 3: "no attach: ptrace is disabled"}[s]
			if meaning == "" {
				meaning = "unknown value"
			}
			add("ptrace-yama", name, false, Holds, fmt.Sprintf("kernel.yama.ptrace_scope=%d (%s)", s, meaning))
		}
	}
	return gs
}

func seccompMissing(f jail.Features) string {
	switch {
	case !f.Seccomp:
		return "seccomp filters are unavailable" + probeReason(f, "seccomp") + "; " + fixSeccomp
	default:
		return "seccomp cannot load a filter on all threads (SECCOMP_FILTER_FLAG_TSYNC refused" + probeReason(f, "seccomp_tsync") + "); fix: a kernel >= 3.17"
	}
}

// probeReason quotes the probe's recorded error, if any.
func probeReason(f jail.Features, probe string) string {
	if msg := f.Errors[probe]; msg != "" {
		return " (" + msg + ")"
	}
	return ""
}

var credentialNotes = map[string]string{
	"ANTHROPIC_API_KEY":     "Anthropic API key",
	"OPENAI_API_KEY":        "OpenAI API key",
	"OPENROUTER_API_KEY":    "OpenRouter API key",
	"GITHUB_TOKEN":          "GitHub token",
	"GH_TOKEN":              "GitHub token",
	"AWS_ACCESS_KEY_ID":     "AWS access key",
	"AWS_SECRET_ACCESS_KEY": "AWS secret key",
	"AWS_SESSION_TOKEN":     "AWS session token",
	"SSH_AUTH_SOCK":         "ssh-agent socket",
}

// findCredentials lists credential-looking environment variable names and
// the credentials file. It reads a value only to tell "set" from "empty".
func findCredentials(env []string, home string) []CredentialFinding {
	seen := map[string]bool{}
	var out []CredentialFinding
	for _, kv := range env {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || name == "" || seen[name] || !envguard.IsCredential(name) {
			continue
		}
		seen[name] = true
		note := credentialNotes[name]
		if note == "" {
			note = "looks like a credential"
		}
		if val == "" {
			note += ", set but empty"
		}
		note += "; never passed to a jail"
		out = append(out, CredentialFinding{Source: "env", Name: name, Note: note})
	}
	slices.SortFunc(out, func(a, b CredentialFinding) int { return strings.Compare(a.Name, b.Name) })

	if path := credentialsFile(env, home); path != "" {
		out = append(out, CredentialFinding{Source: "file", Name: path, Note: credentialsFileNote(path)})
	}
	if out == nil {
		out = []CredentialFinding{}
	}
	return out
}

// credentialsFile is $XDG_CONFIG_HOME/brig/credentials.toml, or
// ~/.config/brig/credentials.toml.
func credentialsFile(env []string, home string) string {
	dir := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok && filepath.IsAbs(v) {
			dir = v
		}
	}
	if dir == "" {
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "brig", "credentials.toml")
}

// credentialsFileNote describes the file from its metadata; it never opens it.
func credentialsFileNote(path string) string {
	fi, err := os.Stat(path)
	switch {
	case os.IsNotExist(err):
		return "not present"
	case err != nil:
		return "cannot be inspected: " + err.Error()
	case !fi.Mode().IsRegular():
		return "is not a regular file"
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Sprintf("present, mode %04o: other users may read it; fix: chmod 600 %s", fi.Mode().Perm(), path)
	default:
		return fmt.Sprintf("present, mode %04o", fi.Mode().Perm())
	}
}

// marks shows a status at a glance.
var marks = map[Status]string{Holds: "✓", Degraded: "~", Missing: "✗"}

// WriteText writes the report in plain words: the kernel features, the
// credentials seen (names only), then one aligned, marked line per
// guarantee, each followed by an indented line saying why.
func (r Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(tw, format, args...) }
	yesno := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}

	p("brig doctor: what the kernel lets the jail guarantee\n\n")
	p("Kernel\t%s\n", r.Kernel)
	if r.LandlockABI > 0 {
		p("Landlock\tABI %d\n", r.LandlockABI)
		p("  covers\t%s\n", strings.Join(r.LandlockHave, "; "))
	} else {
		p("Landlock\tunavailable\n")
	}
	if len(r.LandlockMissing) > 0 {
		p("  not in this kernel\t%s\n", strings.Join(r.LandlockMissing, "; "))
	}
	p("Seccomp\t%s (TSYNC %s)\n", yesno(r.Seccomp), yesno(r.SeccompTSync))
	p("no_new_privs\t%s\n", yesno(r.NoNewPrivs))
	p("Namespaces\tuser %s, mount %s, PID %s, network %s\n", yesno(r.UserNS), yesno(r.MountNS), yesno(r.PIDNS), yesno(r.NetNS))
	if line := appArmorLine(r.Machine); line != "" {
		p("AppArmor\t%s\n", line)
	}
	if r.UserNS && r.MountNS {
		p("Composition\tnamespaces: protected paths are read-only mounts, metadata outside the grant is on read-only mounts\n")
	} else {
		p("Composition\twithout namespaces: the whole write grant, protected paths put back after each call, metadata changes decided by brig (seccomp notification)\n")
	}
	if r.YamaPtraceScope < 0 {
		p("Yama ptrace_scope\tabsent\n")
	} else {
		p("Yama ptrace_scope\t%d\n", r.YamaPtraceScope)
	}
	if len(r.ProbeErrors) > 0 {
		keys := make([]string, 0, len(r.ProbeErrors))
		for k := range r.ProbeErrors {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		p("Probe errors\t\n")
		for _, k := range keys {
			p("  %s\t%s\n", k, r.ProbeErrors[k])
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	p("\nCredentials (names only: values are never shown and never reach a jail)\n")
	if len(r.Credentials) == 0 {
		p("  none found\n")
	}
	for _, c := range r.Credentials {
		p("  %s\t%s\t%s\n", c.Source, c.Name, c.Note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	r.writeConfig(p)
	r.writeOutside(p)
	r.writeJailRun(p)
	if err := tw.Flush(); err != nil {
		return err
	}

	if len(r.Findings) > 0 {
		p("\nWhat this machine lacks (what it removes; what to do, first choice first)\n")
		for _, f := range r.Findings {
			p("  ! %s\n", f.Line())
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	// One marked line per guarantee; the reason follows on an indented line
	// (an empty first cell keeps it in the tabwriter column).
	p("\nGuarantees (✓ holds, ~ degraded, ✗ missing)\n")
	for _, g := range r.Guarantees {
		opt := ""
		if !g.Baseline {
			opt = " (optional)"
		}
		p("  %s %s\t%s%s\n", marks[g.Status], g.ID, g.Name, opt)
		p("\t%s\n", g.Why)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	var missing, degraded []string
	for _, g := range r.Guarantees {
		switch {
		case g.Baseline && g.Status == Missing:
			missing = append(missing, g.ID)
		case g.Baseline && g.Status == Degraded:
			degraded = append(degraded, g.ID)
		}
	}
	var err error
	switch {
	case r.Config.Error != "":
		// A config file that does not load, or a workspace brig refuses (one
		// that holds the home directory): the error says which.
		_, err = fmt.Fprintf(w, "\nNOT OK: brig will not start in %s: %s\n", r.Config.Workspace, r.Config.Error)
	case r.Storage != "":
		_, err = fmt.Fprintf(w, "\nNOT OK: brig will not start: %s\n", r.Storage)
	case !r.OK:
		_, err = fmt.Fprintf(w, "\nNOT OK: baseline guarantees missing: %s. Tool calls that need them are refused (fail closed) until the kernel provides them.\n",
			strings.Join(missing, ", "))
	case len(degraded) > 0:
		_, err = fmt.Fprintf(w, "\nOK: every baseline guarantee holds; degraded: %s (see above).\n", strings.Join(degraded, ", "))
	default:
		_, err = fmt.Fprintln(w, "\nOK: every baseline guarantee holds.")
	}
	return err
}

// ConfigStatus is the state of the permission config of one workspace.
type ConfigStatus struct {
	Workspace string       `json:"workspace,omitempty"`
	Files     []ConfigFile `json:"files,omitempty"`
	// Problems are warnings: unknown keys, rules that try to open a
	// protected path. Error is a config that does not load (brig refuses
	// to start with it).
	Problems []string `json:"problems,omitempty"`
	Error    string   `json:"error,omitempty"`
}

// ConfigFile is one config file and whether it is in effect.
type ConfigFile struct {
	Kind  string `json:"kind"`
	File  string `json:"file"`
	State string `json:"state"`
}

// SetStorage records why brig cannot keep its state or cache ("" when it
// can); a reason makes the report not OK, since brig will not start.
func (r *Report) SetStorage(why string) {
	r.Storage = why
	if why != "" {
		r.OK = false
	}
}

// SetConfig records the workspace's config status; a config that does not
// load makes the report not OK.
func (r *Report) SetConfig(c ConfigStatus) {
	r.Config = c
	if c.Error != "" {
		r.OK = false
	}
}

func (r Report) writeConfig(p func(string, ...any)) {
	c := r.Config
	if c.Workspace == "" && c.Error == "" {
		return
	}
	p("\nPermission config for %s\n", c.Workspace)
	for _, f := range c.Files {
		p("  %s\t%s\t%s\n", f.Kind, f.File, f.State)
	}
	for _, pr := range c.Problems {
		p("  warning\t%s\n", pr)
	}
	if c.Error != "" {
		p("  ERROR\t%s\n", c.Error)
	}
}

// WriteJSON writes the report as one indented JSON object.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// limitDefaults states the per-call limits in plain words.
func limitDefaults(l jail.Limits) string {
	return fmt.Sprintf("Per call by default: %s of memory, %d processes and threads, /tmp and /dev/shm of %s each (counted in the memory), %s of disk, files up to %s, %d open files, %s of output per stream, %s of run time ([limits] in the config changes them)",
		jail.Bytes(l.Memory), l.Processes, jail.Bytes(l.TmpBytes), jail.Bytes(l.Disk), jail.Bytes(l.FileSize), l.OpenFiles, jail.Bytes(uint64(l.OutputBytes)), l.Timeout)
}

// appArmorLine says whether brig's AppArmor profile is in place, where
// AppArmor restricts user namespaces or the profile is installed ("" when
// neither).
func appArmorLine(m Machine) string {
	switch {
	case strings.HasPrefix(m.AppArmorLabel, "brig "):
		return "brig runs under its profile (" + AppArmorProfilePath + "), which lets it create user namespaces"
	case m.AppArmorRestrictUserNS == 1:
		return "restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1); " + appArmorStep(m)
	case m.AppArmorProfile != "":
		return "brig's profile " + AppArmorProfilePath + " is installed for " + m.AppArmorProfile + " (not needed here: AppArmor does not restrict user namespaces)"
	}
	return ""
}

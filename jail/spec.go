package jail

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Access is the right a PathRule grants.
type Access string

const (
	// Read lets the call read files and list directories under the path.
	Read Access = "read"
	// Exec is Read plus execute.
	Exec Access = "exec"
	// Write is everything: read, execute, write, truncate, create, remove,
	// rename, link, and device ioctls (only meaningful on /dev nodes).
	Write Access = "write"
)

// Includes reports whether a grants everything b does (read < exec < write).
func (a Access) Includes(b Access) bool { return accessRank(a) >= accessRank(b) }

func accessRank(a Access) int {
	switch a {
	case Write:
		return 3
	case Exec:
		return 2
	case Read:
		return 1
	}
	return 0
}

// PathRule grants one access on a file or directory tree.
type PathRule struct {
	Path   string `json:"path"`
	Access Access `json:"access"`
	// Optional rules are skipped when the path is missing (system and
	// toolchain roots that only some machines have). A missing required
	// path is an error.
	Optional bool `json:"optional,omitempty"`
	// Exact rules name a path whose every link the policy resolved when
	// it decided: the jail opens it without following any, so a link
	// planted on the way since (by a call of another session writing the
	// same place) fails the call instead of moving the grant to its
	// target. Every grant but the default's system and toolchain paths,
	// which are links on many machines (/bin -> usr/bin). A path inside
	// the workspace is opened so whatever this says.
	Exact bool `json:"exact,omitempty"`
}

// Limits bound one call. Zero means "no limit" (the kernel's or the
// user's own) for each.
type Limits struct {
	Timeout     time.Duration `json:"timeout"`      // wall clock; 0 = none (the supervisor's default applies)
	OutputBytes int64         `json:"output_bytes"` // per stream, kept by the supervisor
	FileSize    uint64        `json:"file_size"`    // RLIMIT_FSIZE
	OpenFiles   uint64        `json:"open_files"`   // RLIMIT_NOFILE
	// Processes is how many processes the call may have at once:
	// RLIMIT_NPROC (counted per user namespace when there is one), a pids
	// cgroup for a root supervisor. A call that stays at it is stopped.
	Processes uint64 `json:"processes"`
	// Memory is the call's memory in total: its processes' private and
	// shared memory plus what its private /tmp and /dev/shm hold. A
	// memory cgroup enforces it for a root supervisor; otherwise init
	// watches it and stops the call above it. Each process also gets it
	// as RLIMIT_DATA, and every process of the call is the OOM killer's
	// first choice (oom_score_adj 1000).
	Memory uint64 `json:"memory"`
	// TmpBytes is the size of the private /tmp and of /dev/shm (each);
	// what they hold counts against Memory.
	TmpBytes uint64 `json:"tmp_bytes"`
	// Disk is how much of the free space of the filesystems the call can
	// write it may use up; the call is stopped beyond it, and also when
	// such a filesystem gets nearly full (see DiskReserve).
	Disk uint64 `json:"disk"`
}

// MinMemory is the least Limits.Memory a call can start in: the jail's
// own setup (its seccomp filter, init) is charged to the call's memory,
// and below a few hundred KiB it fails with a bare ENOMEM.
const MinMemory = 1 << 20

// Limit names, as Result.Limit gives them.
const (
	LimitMemory    = "memory"
	LimitProcesses = "processes"
	LimitDisk      = "disk"
	LimitFileSize  = "file size"
)

// DefaultLimits are sized so that Go, Node, Python, Rust and Java builds
// work on a workstation while a fork bomb, an allocation storm, a full
// /tmp, an output flood or a disk filler end by themselves, and the
// machine keeps memory for everything else: a call gets half the memory
// of the machine, at most 8 GiB.
func DefaultLimits() Limits { return LimitsFor(MemTotal()) }

// LimitsFor are the DefaultLimits of a machine with total bytes of memory
// (0: unknown, taken as 16 GiB or more). Reading /proc/meminfo costs
// about 50 µs of kernel time, which a caller that already knows the
// figure need not pay again.
func LimitsFor(total uint64) Limits {
	mem := uint64(8 << 30)
	if total > 0 {
		mem = min(mem, total/2)
	}
	return Limits{
		Timeout:     10 * time.Minute,
		OutputBytes: 16 << 20,
		FileSize:    4 << 30,
		OpenFiles:   8192,
		Processes:   4096,
		Memory:      mem,
		TmpBytes:    min(2<<30, mem/4),
		Disk:        10 << 30,
	}
}

// Layers switches kernel layers off. It exists so tests can prove each layer
// holds on its own; nothing user-facing sets it except --unsafe-no-sandbox,
// which bypasses the jail entirely.
type Layers struct {
	NoLandlock   bool `json:"no_landlock,omitempty"`
	NoSeccomp    bool `json:"no_seccomp,omitempty"`
	NoNamespaces bool `json:"no_namespaces,omitempty"`
}

// Spec is everything a jailed call may do. It is the only input that decides
// the child's rights.
type Spec struct {
	// Workspace is the project root (absolute). It is informational for the
	// child; rights come from Paths.
	Workspace string `json:"workspace"`
	// Dir is the working directory of the tool (absolute).
	Dir string `json:"dir"`
	// Paths are the Landlock grants.
	Paths []PathRule `json:"paths"`
	// Protected paths stay read-only whatever Paths grant, whether or not
	// they exist yet (see ProtectedPaths).
	Protected []string `json:"protected"`
	// Hidden paths are never readable, whatever Paths grant: secrets that
	// sit inside a granted tree, such as /etc/shadow under /etc. With a
	// mount namespace they are masked by empty, unreadable mounts;
	// without one the grant is split around them.
	Hidden []string `json:"hidden,omitempty"`
	// PrivateTmp mounts a fresh tmpfs on /tmp and /dev/shm for this call;
	// it needs a mount namespace (the supervisor uses a per-call TMPDIR
	// directory instead where there is none).
	PrivateTmp bool `json:"private_tmp,omitempty"`
	// Network lets the call reach the network through the supervisor's
	// egress proxy, and nothing else of it: in a private network
	// namespace the proxy is a listener on the call's own loopback
	// (127.0.0.1:NamespaceProxyPort), on the host's network Landlock
	// allows connecting to the proxy's port alone and seccomp allows TCP
	// alone (StartOptions.ProxyPort). The supervisor puts the proxy's
	// address into the environment. Without it the call has no network at
	// all (only its own loopback where it has a network namespace).
	Network bool `json:"network"`
	// UnixSockets permits creating AF_UNIX sockets (connect to pathname
	// sockets is not confined by Landlock before ABI 9).
	UnixSockets bool `json:"unix_sockets"`
	// Env is the tool's complete environment, built by the supervisor from
	// an allowlist. The child never adds its own.
	Env    []string `json:"env"`
	Limits Limits   `json:"limits"`
	Layers Layers   `json:"layers,omitempty"`
	// Overlays are write-granted directories the call sees with a
	// read-only layer beneath them (an overlay mount, in the call's
	// mount namespace; without one they are left as they are): what the
	// call writes there goes into the directory itself, and the layer is
	// never written. brig shows every workspace's Go build cache over
	// the standard library it built once (brig cache warm).
	Overlays []Overlay `json:"overlays,omitempty"`
	// Cache is the per-workspace toolchain cache the call may write (it
	// is also among Paths), which the supervisor prepares right before
	// the call starts. nil: none. The child never sees it.
	Cache *Cache `json:"cache,omitempty" codec:"-"`
	// OwnCache is Cache's directory as the child sees it ("": none): a
	// write grant that stays writable when a protected path above it
	// (brig's cache as a whole, under a grant of ~/.cache) is made
	// read-only.
	OwnCache string `json:"-"`
	// Repos is the search memory (RepoCache) of the grant that made this
	// spec, which has just searched the workspace for repositories: the
	// sweep after the call searches with it, so even the first call's
	// sweep lists only the directories that changed since the grant.
	// nil: the supervisor's own. The child never sees it.
	Repos *RepoCache `json:"-" codec:"-"`
}

// Cache describes brig's per-workspace toolchain cache for one call. It is
// data only: compiling a grant has no side effect, and the supervisor
// prepares the directory once the call is approved and about to run,
// without following any link a call left there (see the README's security
// model).
type Cache struct {
	// Root is brig's cache root (~/.cache/brig/jail); no call can write it.
	Root string `json:"root"`
	// Name is this workspace's cache directory under Root (one path
	// element). It names the repository's identity as well as its path,
	// so another repository at the same path gets a fresh cache.
	Name string `json:"name"`
	// Dirs are made when missing; whatever else bears one of these names
	// (a symbolic link, a file) is replaced by a directory.
	Dirs []string `json:"dirs,omitempty"`
	// Files are toolchain configuration that brig checks before every
	// call: one that is not exactly brig's (a regular file of brig's user,
	// mode 0600, one link, brig's content) is written anew; what an earlier
	// call left there is never trusted.
	Files []CacheFile `json:"files,omitempty"`
	// Remove are paths below the cache (relative) that a toolchain would
	// read as configuration; they are removed before every call.
	Remove []string `json:"remove,omitempty"`
	// Stale are other entries of Root holding older caches of this
	// workspace's path (another repository lived there); they are removed.
	Stale []string `json:"stale,omitempty"`
}

// Overlay is a directory shown over a read-only layer (Spec.Overlays).
type Overlay struct {
	// Dir is the directory the call sees and writes (the overlay's
	// upper layer, and where it is mounted); it must be write-granted.
	Dir string `json:"dir"`
	// Lower is the read-only layer beneath: the call reads it through
	// Dir, and nothing the call does changes it.
	Lower string `json:"lower"`
	// Work is the overlay's work directory: on Dir's file system, not
	// inside Dir, and write-granted too.
	Work string `json:"work"`
}

// CacheFile is a file the supervisor makes sure of in the cache before a
// call (written anew unless it holds exactly Data).
type CacheFile struct {
	Name string `json:"name"` // one path element
	Data string `json:"data,omitempty"`
}

// Dir is the cache directory itself.
func (c Cache) Dir() string { return filepath.Join(c.Root, c.Name) }

// Validate reports the first malformed name: every name is one path element
// (Remove entries are relative paths without ..), so preparing the cache
// never leaves it.
func (c Cache) Validate() error {
	if !filepath.IsAbs(c.Root) {
		return fmt.Errorf("jail spec: cache root %q is not absolute", c.Root)
	}
	one := func(what, n string) error {
		if n == "" || n == "." || n == ".." || strings.Contains(n, "/") {
			return fmt.Errorf("jail spec: cache %s %q is not a single path element", what, n)
		}
		return nil
	}
	if err := one("name", c.Name); err != nil {
		return err
	}
	for _, d := range c.Dirs {
		if err := one("directory", d); err != nil {
			return err
		}
	}
	for _, f := range c.Files {
		if err := one("file", f.Name); err != nil {
			return err
		}
	}
	for _, n := range c.Stale {
		if err := one("stale entry", n); err != nil {
			return err
		}
	}
	for _, r := range c.Remove {
		if filepath.IsAbs(r) || r != filepath.Clean(r) || r == "." || r == ".." || strings.HasPrefix(r, "../") {
			return fmt.Errorf("jail spec: cache path to remove %q is not a clean relative path below the cache", r)
		}
	}
	return nil
}

// NamespaceProxyPort is the port of the egress proxy's listener on the
// loopback of a call's private network namespace.
const NamespaceProxyPort = 3128

// Invocation is what runs inside the jail: a command, or a Go tool compiled
// into the binary.
type Invocation struct {
	Argv []string        `json:"argv,omitempty"`
	Tool string          `json:"tool,omitempty"`
	Args json.RawMessage `json:"args,omitempty"`
	// Open, for a file tool (FileTool: one that reads the one file it
	// names, such as read_file), is that file: an init that serves calls
	// has a clone of itself open it under every layer of the call and
	// runs the tool on what it opened, with no worker (jail/direct.go).
	// A worker ignores it (the tool opens the file itself).
	Open string `json:"open,omitempty"`
}

func (s Spec) privateTmpWanted() bool { return s.PrivateTmp }

// viewPart is what init needs of the Spec to build the call's view
// (setupView) and watch its limits: the write grants, every grant on /tmp
// and /dev/shm, the protected and hidden paths, the private /tmp's size,
// the memory, process and disk limits, and whether the call has network
// (init makes the egress proxy's listener). Init is sent
// only that: decoding the start message is on the call's critical path, and
// the environment, the other grants and the seccomp program are the
// worker's business alone.
func (s Spec) viewPart() Spec {
	v := Spec{
		Workspace: s.Workspace, Dir: s.Dir,
		Protected: s.Protected, Hidden: s.Hidden,
		PrivateTmp: s.PrivateTmp, Layers: s.Layers, Overlays: s.Overlays,
		Network: s.Network, // init makes the proxy's listener
		Limits:  Limits{TmpBytes: s.Limits.TmpBytes, Memory: s.Limits.Memory, Processes: s.Limits.Processes, Disk: s.Limits.Disk},
	}
	for _, r := range s.Paths {
		if r.Access == Write || within(r.Path, "/tmp") || within(r.Path, "/dev/shm") {
			v.Paths = append(v.Paths, r)
		}
	}
	return v
}

// viewDependent reports whether path may name a different file once init
// has built the call's view (setupView) than before: anything on the fresh
// /tmp and /dev/shm, and anything masked as hidden. A Landlock rule binds to
// the file its path named when the rule was added, so rules on such paths
// are added only after the view is ready. Every other mount of the view
// (write grants made writable again, protected paths bound read-only over
// themselves) shows the same files as before.
func (s Spec) viewDependent(path string) bool {
	if s.PrivateTmp && (within(path, "/tmp") || within(path, "/dev/shm")) {
		return true
	}
	for _, h := range s.Hidden {
		if within(path, h) {
			return true
		}
	}
	return false
}

// Validate reports the first problem that makes a Spec unusable.
func (s Spec) Validate() error {
	if !filepath.IsAbs(s.Dir) {
		return fmt.Errorf("jail spec: working directory %q is not absolute", s.Dir)
	}
	for _, p := range s.Paths {
		if !filepath.IsAbs(p.Path) {
			return fmt.Errorf("jail spec: path %q is not absolute", p.Path)
		}
		switch p.Access {
		case Read, Exec, Write:
		default:
			return fmt.Errorf("jail spec: path %q has unknown access %q (want read, exec or write)", p.Path, p.Access)
		}
	}
	for _, p := range append(slices.Clone(s.Protected), s.Hidden...) {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("jail spec: protected or hidden path %q is not absolute", p)
		}
	}
	for _, o := range s.Overlays {
		if err := o.validate(s.Paths, s.PrivateTmp); err != nil {
			return err
		}
	}
	if s.Cache != nil {
		return s.Cache.Validate()
	}
	return nil
}

// validate reports what makes the overlay unusable: a path that is not
// absolute and clean, a Dir or Work the call may not write, layers inside
// one another, or a Lower the call could write some other way. With a
// private /tmp, the write grant of /tmp (and /dev/shm) is of the fresh
// tmpfs: what is carried onto it keeps its own grant.
func (o Overlay) validate(paths []PathRule, privateTmp bool) error {
	for _, p := range []string{o.Dir, o.Lower, o.Work} {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return fmt.Errorf("jail spec: overlay path %q is not absolute and clean", p)
		}
	}
	writable := func(p string) bool {
		return slices.ContainsFunc(paths, func(r PathRule) bool {
			fresh := privateTmp && (r.Path == "/tmp" || r.Path == "/dev/shm")
			return r.Access == Write && within(p, r.Path) && (!fresh || p == r.Path)
		})
	}
	switch {
	case !writable(o.Dir) || !writable(o.Work):
		return fmt.Errorf("jail spec: overlay %s: its directory and work directory must be write-granted", o.Dir)
	case writable(o.Lower):
		return fmt.Errorf("jail spec: overlay %s: its layer %s is write-granted, so the call could change it", o.Dir, o.Lower)
	case within(o.Work, o.Dir) || within(o.Dir, o.Work) || within(o.Lower, o.Dir) || within(o.Dir, o.Lower) || within(o.Lower, o.Work) || within(o.Work, o.Lower):
		return fmt.Errorf("jail spec: overlay %s: its directory, layer and work directory must not lie inside one another", o.Dir)
	}
	return nil
}

// Validate reports whether the Invocation names exactly one thing to run.
func (inv Invocation) Validate() error {
	switch {
	case len(inv.Argv) > 0 && inv.Tool != "":
		return errors.New("jail invocation: both a command and a tool given")
	case len(inv.Argv) == 0 && inv.Tool == "":
		return errors.New("jail invocation: nothing to run")
	case len(inv.Argv) > 0 && inv.Argv[0] == "":
		return errors.New("jail invocation: empty command name")
	case inv.Open != "" && inv.Tool == "":
		return errors.New("jail invocation: a file to open without a file tool to read it")
	}
	return nil
}

// Result is how a call ended.
type Result struct {
	ExitCode int    `json:"exit_code"`        // the command's own status; 128+n when killed by signal n
	Signal   string `json:"signal,omitempty"` // the signal that killed it, if any
	TimedOut bool   `json:"timed_out,omitempty"`
	Canceled bool   `json:"canceled,omitempty"`
	// Output is a Go tool's result.
	Output json.RawMessage `json:"output,omitempty"`
	// Redo says why an init that serves calls did not run a file tool
	// itself (a special file, or one on a filesystem it does not read
	// for tools): nothing ran, and the supervisor runs the call again
	// with a worker (Invocation.Open cleared). It never leaves the
	// supervisor.
	Redo string `json:"redo,omitempty"`
	// Stdout and Stderr hold captured output when the caller did not stream it.
	Stdout          []byte `json:"-"`
	Stderr          []byte `json:"-"`
	StdoutTruncated bool   `json:"stdout_truncated,omitempty"`
	StderrTruncated bool   `json:"stderr_truncated,omitempty"`
	// Transcript is the command's output as the model is shown it, kept
	// whether or not the output was also streamed (see supervisor.IO).
	Transcript Transcript `json:"-"`
	// Violations lists protected paths the call created or replaced; the
	// supervisor undid each after the call (see the README's security
	// model).
	Violations []string `json:"violations,omitempty"`
	// OwnCopies says, for the first call that may write a workspace, that
	// the supervisor gave it its own copies of files it shared with files
	// outside it through hard links (empty when it had none).
	OwnCopies string `json:"-"` // the supervisor's own: never sent by init
	// Connections are the network connections the call asked the egress
	// proxy for, allowed or refused, in the order they ended (filled in
	// by the supervisor; see the egress package).
	Connections []Connection  `json:"connections,omitempty"`
	Duration    time.Duration `json:"duration"`
	// Limit names the limit that stopped the call or killed one of its
	// processes (LimitMemory, LimitProcesses, LimitDisk, LimitFileSize);
	// empty when none did. LimitDetail says it in a sentence for the
	// model and the user.
	Limit       string `json:"limit,omitempty"`
	LimitDetail string `json:"limit_detail,omitempty"`
}

// Connection is one connection a call asked the egress proxy for: where
// to, what decided it, and, when it went through, the bytes each way and
// how long it was open.
type Connection struct {
	// Host and Port are what the call asked for (a name, or an IP literal).
	Host string `json:"host"`
	Port int    `json:"port"`
	// Via is how it asked: "CONNECT", "HTTP" (a plain http:// request) or
	// "SOCKS5".
	Via string `json:"via"`
	// Addr is the address the proxy connected to (empty when refused
	// before connecting).
	Addr string `json:"addr,omitempty"`
	// Rule is what allowed or refused it (a rule and its file, a preset,
	// an answer of the user's).
	Rule string `json:"rule,omitempty"`
	// Refused says why the connection was not made; empty when it was.
	Refused string `json:"refused,omitempty"`
	// Unreachable: the host was allowed, and the proxy's own connection
	// to it failed (nothing listening, a host down): not a refusal.
	Unreachable bool `json:"unreachable,omitempty"`
	// Up and Down are the bytes from the call to the host and back.
	Up       int64         `json:"up"`
	Down     int64         `json:"down"`
	Start    time.Time     `json:"start"`
	Duration time.Duration `json:"duration"`
}

// Transcript is a command's standard output and error together, in the
// order the supervisor read them: the first bytes (Head) and the last
// (Tail), with what lies between them counted but not kept.
type Transcript struct {
	Head, Tail []Chunk
	// Omitted bytes (OmittedLines of them newlines) lie between Head and
	// Tail.
	Omitted      int64
	OmittedLines int
	// MidLine says, for stdout ([0]) and stderr ([1]), that the stream's
	// last byte left out was not a newline: its first bytes in Tail end
	// a line whose start is not shown.
	MidLine [2]bool
	// Stdout and Stderr count every byte the command wrote to each, kept
	// or not.
	Stdout, Stderr int64
}

// HostVisible reports whether the call sees the host's file at path: not
// so for a path in a private /tmp or /dev/shm that no grant carries in
// (the call has a fresh, empty tmpfs there).
func (s Spec) HostVisible(path string) bool {
	if !s.PrivateTmp {
		return true
	}
	for _, dir := range []string{"/tmp", "/dev/shm"} {
		if within(path, dir) {
			return slices.ContainsFunc(s.Paths, func(r PathRule) bool { return r.Path != dir && within(r.Path, dir) && within(path, r.Path) })
		}
	}
	return true
}

// readOnlyCarried reports whether path is in a grant that a private /tmp
// or /dev/shm carries over read-only (privateTmp): the tmpfs's own write
// grant covers it for Landlock, but the carried mount refuses writes. The
// deepest grant under the tmpfs that covers path is the mount it is on.
func (s Spec) readOnlyCarried(path string) bool {
	if !s.PrivateTmp {
		return false
	}
	for _, dir := range []string{"/tmp", "/dev/shm"} {
		if !within(path, dir) {
			continue
		}
		deepest, write := "", false
		for _, r := range s.Paths {
			if r.Path == dir || !within(r.Path, dir) || !within(path, r.Path) || len(r.Path) < len(deepest) {
				continue
			}
			if len(r.Path) > len(deepest) {
				deepest, write = r.Path, false
			}
			write = write || r.Access == Write
		}
		return deepest != "" && !write
	}
	return false
}

// Chunk is a run of bytes from one stream.
type Chunk struct {
	Stderr bool
	Data   []byte
}

// Allows reports whether the Spec grants access a on path (absolute and
// clean; compared lexically, as the grant was written), and when it does
// not, why: "hidden", "protected", "read-only mount" or "outside the
// grant".
func (s Spec) Allows(path string, a Access) (bool, string) {
	for _, h := range s.Hidden {
		if within(path, h) {
			return false, "hidden"
		}
	}
	if a == Write {
		for _, p := range s.Protected {
			if within(path, p) {
				return false, "protected"
			}
		}
	}
	if a == Write && s.readOnlyCarried(path) {
		return false, "read-only mount"
	}
	// Landlock rules add up: any rule that covers the path with the
	// access grants it.
	for _, r := range s.Paths {
		if within(path, r.Path) && r.Access.Includes(a) {
			return true, ""
		}
	}
	return false, "outside the grant"
}

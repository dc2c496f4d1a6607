package jail

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// Landlock rights, grouped the way a Spec speaks about them.
const (
	fsRead  = landlock.AccessFSSet(ll.AccessFSReadFile | ll.AccessFSReadDir)
	fsExec  = fsRead | landlock.AccessFSSet(ll.AccessFSExecute)
	fsWrite = landlock.AccessFSSet(1<<16 - 1) // every right of ABI 5–7
	// fsFileOnly are the rights that apply to a non-directory.
	fsFileOnly = landlock.AccessFSSet(ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev)
)

// handledFS returns every filesystem right the kernel's ABI can restrict,
// capped at what brig uses (ABI 7). Asking for less than the kernel has
// would leave the rest unrestricted; asking for more fails closed.
func handledFS(abi int) landlock.AccessFSSet {
	switch {
	case abi >= 5:
		return fsWrite
	case abi >= 3:
		return 1<<15 - 1
	case abi == 2:
		return 1<<14 - 1
	case abi == 1:
		return 1<<13 - 1
	}
	return 0
}

// LandlockABI returns the Landlock ABI version brig uses: the kernel's, 0
// when unavailable, or lower when TestABIEnv caps it.
func LandlockABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return CapABI(v)
}

// TestABIEnv names the test setting that caps the Landlock ABI brig uses
// below the kernel's (BRIG_TEST_LANDLOCK_ABI=4 on a kernel with ABI 7), so
// that the escape suite and the scenarios prove what brig keeps on older
// kernels. It only ever lowers the ABI; brig doctor and the TUI's banner
// say when it is set. The supervisor passes it on to its jail children.
const TestABIEnv = "BRIG_TEST_LANDLOCK_ABI"

// CapABI applies TestABIEnv to a kernel's ABI version.
func CapABI(kernel int) int {
	if c, err := strconv.Atoi(os.Getenv(TestABIEnv)); err == nil && c >= 0 && c < kernel {
		return c
	}
	return kernel
}

// enterOuterDomain puts init, when there is no PID namespace, into a
// Landlock domain that scopes signals and abstract unix sockets and allows
// every other operation. The worker's domain nests inside it, so init's
// kill(-1) reaches exactly the call's processes, and the tool cannot signal
// init. It reports false when the kernel has no scoping (ABI < 6); the caller
// decides whether that is acceptable.
//
// Landlock counts "refer" (reparenting a file by rename or link across
// directories) as handled by every ruleset, so a domain that handled only
// scopes would forbid every such rename for everything nested in it. This
// one handles refer and grants it on /, which keeps renames working; the
// price is that init may no longer mount, which it does not need to without
// namespaces.
func enterOuterDomain() (bool, error) {
	abi := LandlockABI()
	if abi < 6 {
		return false, nil
	}
	if err := allThreadsNoNewPrivs(); err != nil {
		return false, err
	}
	attr := ll.RulesetAttr{
		HandledAccessFS: ll.AccessFSRefer,
		Scoped:          ll.ScopeSignal | ll.ScopeAbstractUnixSocket,
	}
	if err := enforce(attr, []grant{{path: "/", access: ll.AccessFSRefer}}, abi); err != nil {
		return false, fmt.Errorf("outer domain: %w", err)
	}
	return true, nil
}

// allThreadsNoNewPrivs sets no_new_privs on every thread (Landlock needs it
// on the thread that restricts itself, and psx applies the ruleset to all).
func allThreadsNoNewPrivs() error {
	if _, _, e := psx.Syscall6(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("no_new_privs on every thread: %w", e)
	}
	return nil
}

// ruleset is a Landlock ruleset under construction. Building it restricts
// nothing; restrictAllThreads, or the single-threaded command start-up in
// spawnCommand, applies it.
type ruleset struct {
	fd      int
	handled landlock.AccessFSSet
	abi     int
}

func newRuleset(attr ll.RulesetAttr, abi int) (*ruleset, error) {
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return nil, fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	return &ruleset{fd: fd, handled: landlock.AccessFSSet(attr.HandledAccessFS), abi: abi}, nil
}

// add adds one path-beneath rule per grant.
func (r *ruleset) add(grants []grant) error {
	for _, g := range grants {
		acc := g.access & r.handled
		if acc == 0 {
			continue // the kernel refuses an empty rule
		}
		pfd, err := openGrant(g.path, g.exact)
		if err != nil {
			return fmt.Errorf("open %s for a rule: %w", g.path, err)
		}
		err = ll.LandlockAddPathBeneathRule(r.fd, &ll.PathBeneathAttr{AllowedAccess: uint64(acc), ParentFd: pfd}, 0)
		unix.Close(pfd)
		if err != nil {
			return fmt.Errorf("landlock_add_rule %s (%v): %w", g.path, acc, err)
		}
	}
	return nil
}

// restrictAllThreads applies the ruleset to every thread of this process.
// no_new_privs is already set on every thread (inherited from init,
// checked by the worker), so one all-thread landlock_restrict_self is all
// that is left; go-landlock would broadcast no_new_privs once more first.
func (r *ruleset) restrictAllThreads() error {
	if r.abi >= 8 {
		// The kernel synchronises every thread itself.
		if err := ll.LandlockRestrictSelf(r.fd, ll.FlagRestrictSelfTSync); err != nil {
			return fmt.Errorf("landlock_restrict_self: %w", err)
		}
		return nil
	}
	// psx restricts the calling thread first and then lists the others
	// through /proc/<pid>/task, so that directory (this process's own
	// threads, nothing else) must stay readable whatever the Spec grants.
	tasks := fmt.Sprintf("/proc/%d/task", os.Getpid())
	if fi, err := os.Stat(tasks); err == nil {
		if err := r.add([]grant{fitted(tasks, fi, fsRead)}); err != nil {
			return err
		}
	}
	if _, _, e := psx.Syscall3(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(r.fd), 0, 0); e != 0 {
		return fmt.Errorf("landlock_restrict_self on every thread: %w", e)
	}
	return nil
}

func (r *ruleset) close() { unix.Close(r.fd) }

// workerRuleset builds the worker's ruleset for spec. It fails closed: ABI 0
// is an error, not a silent no-op. Rules on paths whose meaning the view
// init is still building changes (see viewDependent) are left out and
// returned as late, to be added with addLate once the view is ready; the
// rest is added now.
//
// How protected and hidden paths below a grant are kept: with namespaces,
// by the view's mounts (nothing is carved); without, hidden paths are
// always carved out of the grant, and protected ones too unless the
// supervisor restores them after the call (restore), in which case the
// grant covers them and the directories they sit in keep every right.
func workerRuleset(spec Spec, namespaces, privateNet, restore bool, abi, proxyPort int) (rs *ruleset, late []PathRule, err error) {
	if abi < 1 {
		return nil, nil, fmt.Errorf("landlock is unavailable on this kernel: %w", ErrUnenforceable)
	}
	attr := ll.RulesetAttr{HandledAccessFS: uint64(handledFS(abi))}
	// TCP rules matter only on the host network: a private network
	// namespace has nothing but its own loopback (and, for a call with
	// Network, the egress proxy's listener there). On the host's network
	// a call binds nothing and connects to the proxy's port alone (and to
	// nothing without Network; seccomp then refuses inet sockets anyway).
	hostNet := !privateNet
	if hostNet && abi >= 4 {
		attr.HandledAccessNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	}
	if hostNet && spec.Network {
		switch {
		case abi < 4:
			return nil, nil, fmt.Errorf("the call may reach the network only through brig's proxy, which needs a network namespace or Landlock ABI 4 (TCP rules); this kernel has ABI %d: %w", abi, ErrUnenforceable)
		case proxyPort < 1 || proxyPort > 65535:
			return nil, nil, fmt.Errorf("the call has network on the host but no proxy port to connect to (%d): %w", proxyPort, ErrUnenforceable)
		}
	}
	if abi >= 6 {
		attr.Scoped = ll.ScopeSignal | ll.ScopeAbstractUnixSocket
	}
	early := spec
	if namespaces {
		early.Paths = nil
		for _, r := range spec.Paths {
			if spec.viewDependent(r.Path) {
				late = append(late, r)
			} else {
				early.Paths = append(early.Paths, r)
			}
		}
	}
	// With a mount namespace, protected paths are read-only mounts and
	// hidden ones are masked, so the grants need no carving.
	grants, err := composeGrants(early, carving{
		protected: !namespaces && !restore,
		hidden:    !namespaces,
	})
	if err != nil {
		return nil, nil, err
	}
	if rs, err = newRuleset(attr, abi); err != nil {
		return nil, nil, err
	}
	if err := rs.add(grants); err != nil {
		rs.close()
		return nil, nil, err
	}
	if hostNet && spec.Network {
		attr := ll.NetPortAttr{AllowedAccess: ll.AccessNetConnectTCP, Port: uint64(proxyPort)}
		if err := ll.LandlockAddNetPortRule(rs.fd, &attr, 0); err != nil {
			rs.close()
			return nil, nil, fmt.Errorf("landlock_add_rule: connect to the proxy's port %d: %w", proxyPort, err)
		}
	}
	return rs, late, nil
}

// addLate adds the rules workerRuleset left for after the view was built.
// Only calls with namespaces have any, and those need no carving.
func (r *ruleset) addLate(spec Spec, late []PathRule) error {
	if len(late) == 0 {
		return nil
	}
	spec.Paths = late
	grants, err := composeGrants(spec, carving{})
	if err != nil {
		return err
	}
	return r.add(grants)
}

// warmLandlock builds (and drops) a one-rule ruleset, so that a prewarmed
// worker has run that code once before its call arrives.
func warmLandlock() {
	abi := LandlockABI()
	if abi < 1 {
		return
	}
	rs, err := newRuleset(ll.RulesetAttr{HandledAccessFS: uint64(handledFS(abi))}, abi)
	if err != nil {
		return
	}
	defer rs.close()
	if fi, err := os.Stat("/"); err == nil {
		_ = rs.add([]grant{fitted("/", fi, fsRead)})
	}
}

// enforce builds a ruleset and applies it to every thread.
func enforce(attr ll.RulesetAttr, grants []grant, abi int) error {
	rs, err := newRuleset(attr, abi)
	if err != nil {
		return err
	}
	defer rs.close()
	if err := rs.add(grants); err != nil {
		return err
	}
	return rs.restrictAllThreads()
}

// grant is one Landlock path rule, already fitted to the file's type.
type grant struct {
	path   string
	access landlock.AccessFSSet
	// exact: the rule is exact (PathRule.Exact) or lies in the
	// workspace, where calls write and so can plant links; the policy
	// resolved every link of it before deciding, so one found now was put
	// there since, and the rule is refused rather than moved to wherever
	// the link points.
	exact bool
}

// carving says which of a Spec's paths composeGrants carves out of the
// grants that contain them.
type carving struct {
	protected bool // protected paths: read and execute only
	hidden    bool // hidden paths: nothing
}

// composeGrants turns the Spec's rules into Landlock rules. Landlock rights
// only add up, and a right on a directory covers everything below it, so a
// protected (read-only) or hidden (unreadable) path below a granted tree
// cannot be carved out of one rule. Where no mount namespace masks them
// (carve), a grant whose tree contains such a path is split: the directories
// on the way get only what cannot reach the carved path, and every other
// entry gets the full grant, recursively. The price of the split: no new
// entries in those directories (the workspace root, .git, /etc), which is
// also what keeps a not-yet-existing .git/hooks/pre-commit or .envrc from
// being created. That price is why a call's protected paths are restored
// by the supervisor instead where it can (workerRuleset).
func composeGrants(spec Spec, carve carving) ([]grant, error) {
	var carved map[string]landlock.AccessFSSet
	if carve.protected || carve.hidden {
		carved = map[string]landlock.AccessFSSet{}
		// A carved symlink carves what it names as well: Landlock checks
		// the file a path resolves to, so carving only the link would
		// leave its target as granted as before (the mounts of a view
		// follow the link the same way).
		add := func(p string, keep landlock.AccessFSSet) {
			carved[p] = keep
			if target, err := filepath.EvalSymlinks(p); err == nil && target != p {
				carved[target] = keep
			}
		}
		if carve.protected {
			for _, p := range spec.Protected {
				add(p, fsExec) // read-only
			}
		}
		if carve.hidden {
			for _, p := range spec.Hidden {
				add(p, 0) // nothing at all
			}
		}
	}
	var out []grant
	for _, r := range spec.Paths {
		fi, err := os.Stat(r.Path)
		if err != nil {
			if r.Optional {
				continue // missing, or not ours to see (another user's toolchain on PATH)
			}
			return nil, fmt.Errorf("grant %s %s: %w", r.Access, r.Path, err)
		}
		gs, err := splitGrant(r.Path, fi, accessSet(r.Access), carved)
		if err != nil {
			return nil, err
		}
		for i := range gs {
			gs[i].exact = r.Exact || exactIn(gs[i].path, spec)
		}
		out = append(out, gs...)
	}
	return out, nil
}

func accessSet(a Access) landlock.AccessFSSet {
	switch a {
	case Write:
		return fsWrite
	case Exec:
		return fsExec
	}
	return fsRead
}

// fitted drops directory-only rights from a rule on a non-directory (the
// kernel refuses them).
func fitted(path string, fi os.FileInfo, acc landlock.AccessFSSet) grant {
	if !fi.IsDir() {
		acc &= fsFileOnly
	}
	return grant{path: path, access: acc}
}

// splitGrant grants acc on path minus the carved paths below it.
func splitGrant(path string, fi os.FileInfo, acc landlock.AccessFSSet, carved map[string]landlock.AccessFSSet) ([]grant, error) {
	if keep, ok := carved[path]; ok {
		if keep&acc == 0 {
			return nil, nil
		}
		return []grant{fitted(path, fi, keep&acc)}, nil
	}
	var below []string
	for p := range carved {
		if within(p, path) {
			below = append(below, p)
		}
	}
	if len(below) == 0 || !fi.IsDir() {
		return []grant{fitted(path, fi, acc)}, nil
	}
	// The directory itself: listing only when something below must stay
	// unreadable, read+exec when something below is merely read-only.
	top := acc & fsExec
	if slices.ContainsFunc(below, func(p string) bool { return carved[p] == 0 }) {
		top = acc & landlock.AccessFSSet(ll.AccessFSReadDir)
	}
	out := []grant{{path: path, access: top}}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("split grant at %s: %w", path, err)
	}
	for _, e := range entries {
		if e.Type()&os.ModeSymlink != 0 {
			// A rule on a symlink would grant its target, which may be
			// anywhere. Targets inside the grant are covered as themselves.
			continue
		}
		child := filepath.Join(path, e.Name())
		cfi, err := os.Stat(child)
		if err != nil {
			continue // vanished or unreadable: grant nothing
		}
		gs, err := splitGrant(child, cfi, acc, carved)
		if err != nil {
			return nil, err
		}
		out = append(out, gs...)
	}
	return out, nil
}

// exactIn reports whether a grant of path must be opened without
// following links whatever its rule says: it lies in the Spec's
// workspace (see grant.exact and PathRule.Exact).
func exactIn(path string, spec Spec) bool {
	return spec.Workspace != "" && within(path, spec.Workspace)
}

// openGrant opens path (O_PATH) for a rule or a mount of a grant; exact
// refuses a symbolic link anywhere on the way with an error saying so,
// where a plain open would follow it (system grants such as /bin ->
// usr/bin must). The walk is one openat per component (O_NOFOLLOW), not
// openat2, which the worker's filter refuses.
func openGrant(path string, exact bool) (int, error) {
	if !exact {
		return unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	}
	if !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return -1, fmt.Errorf("%q is not a clean absolute path", path)
	}
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for _, name := range strings.Split(path, "/")[1:] {
		if name == "" {
			continue // the root itself
		}
		next, err := unix.Openat(fd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return -1, err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(fd)
			return -1, fmt.Errorf("a symbolic link is now on the way to this path, which had none when the call was decided (a link planted since): %w", unix.ELOOP)
		}
	}
	return fd, nil
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

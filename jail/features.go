package jail

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Features is what this kernel offers the jail, probed without privileges.
type Features struct {
	Kernel          string // uname release
	LandlockABI     int    // 0 when Landlock is unavailable
	Seccomp         bool   // seccomp filter mode is available (PR_GET_SECCOMP works, SECCOMP_RET_ERRNO is an available action)
	SeccompTSync    bool   // SECCOMP_FILTER_FLAG_TSYNC is accepted: a filter can be loaded on every thread at once
	NoNewPrivs      bool   // PR_GET_NO_NEW_PRIVS works
	UserNS          bool   // an unprivileged user namespace can be created
	MountNS         bool   // a mount namespace can be created together with a user namespace
	PIDNS           bool   // a PID namespace can be created together with a user namespace
	NetNS           bool   // a network namespace can be created together with a user namespace
	YamaPtraceScope int    // -1 when Yama is absent (/proc/sys/kernel/yama/ptrace_scope missing)
	LegacyTIOCSTI   bool   // TIOCSTI works: dev.tty.legacy_tiocsti is 1, or the sysctl is absent (older kernel)
	// Root is true when the caller's real uid is 0. The kernel never
	// enforces RLIMIT_NPROC for uid 0 (not even inside a user namespace
	// that maps it), so the jail's process-count limit does not hold.
	Root bool
	// PidsCgroup is true when a pids cgroup controller is mounted where a
	// root supervisor can give each call its own cgroup (which is how the
	// process count of a root call is bounded).
	PidsCgroup bool
	Errors     map[string]string // probe name → why it failed, for doctor to show
}

// Namespaces reports whether the jail can use its namespace layer
// (user + mount + PID + network namespaces together).
func (f Features) Namespaces() bool {
	return f.UserNS && f.MountNS && f.PIDNS && f.NetNS
}

// landlockRightNames describes what each Landlock ABI version adds; entry i
// is ABI i+1.
var landlockRightNames = []string{
	"filesystem (ABI 1)",
	"refer: rename/link across directories (ABI 2)",
	"truncate (ABI 3)",
	"TCP bind/connect (ABI 4)",
	"ioctl on devices (ABI 5)",
	"signal and abstract-unix-socket scoping (ABI 6)",
	"audit logging flags (ABI 7)",
	"thread sync (ABI 8)",
	"pathname unix socket connect (ABI 9)",
	"UDP bind/connect/send (ABI 10)",
}

// LandlockRights describes, in plain words, which Landlock rights the
// detected ABI covers (have) and which later ABIs add that this kernel lacks
// (missing), in ABI order. At ABI 0 everything is missing.
func (f Features) LandlockRights() (have, missing []string) {
	for i, name := range landlockRightNames {
		if i+1 <= f.LandlockABI {
			have = append(have, name)
		} else {
			missing = append(missing, name)
		}
	}
	return have, missing
}

// Probe names used as keys of Features.Errors.
const (
	probeKernel        = "kernel"
	probeLandlock      = "landlock"
	probeSeccomp       = "seccomp"
	probeSeccompTSync  = "seccomp_tsync"
	probeNoNewPrivs    = "no_new_privs"
	probeUserNS        = "userns"
	probeMountNS       = "mountns"
	probePIDNS         = "pidns"
	probeNetNS         = "netns"
	probeYama          = "yama"
	probeLegacyTIOCSTI = "legacy_tiocsti"
)

// featureProbeTimeout bounds one namespace probe child.
const featureProbeTimeout = 5 * time.Second

// DetectFeatures probes the running kernel. It never changes the calling
// process: every probe is a query (uname, prctl GET, seccomp GET, the
// Landlock version call, sysctl reads), except the namespace probes, which
// start a short-lived child in the namespaces and wait for it. ctx bounds
// those children; once it is done, the namespace layer is reported as
// unavailable, with the reason in Errors.
func DetectFeatures(ctx context.Context) Features {
	return detectFeatures(ctx, featProbeNamespaces)
}

// detectFeatures is DetectFeatures with the namespace probe given (a test
// gives one that fails for some namespaces).
func detectFeatures(ctx context.Context, probeNS func(ctx context.Context, extra uintptr) error) Features {
	f := Features{YamaPtraceScope: -1, Errors: map[string]string{}, Root: os.Getuid() == 0}
	f.PidsCgroup = f.Root && pidsControllerMounted()
	fail := func(probe string, err error) { f.Errors[probe] = err.Error() }

	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		fail(probeKernel, fmt.Errorf("uname: %w", err))
	} else {
		f.Kernel = unix.ByteSliceToString(uts.Release[:])
	}

	if abi, err := llsys.LandlockGetABIVersion(); err != nil {
		fail(probeLandlock, landlockProbeError(err))
	} else {
		f.LandlockABI = CapABI(abi)
		if f.LandlockABI != abi {
			f.Errors[probeLandlock] = fmt.Sprintf("capped at ABI %d (the kernel has %d) by %s, a test setting", f.LandlockABI, abi, TestABIEnv)
		}
	}

	if err := featProbeSeccomp(); err != nil {
		fail(probeSeccomp, err)
	} else {
		f.Seccomp = true
	}
	if err := featProbeSeccompTSync(); err != nil {
		fail(probeSeccompTSync, err)
	} else {
		f.SeccompTSync = true
	}

	if _, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); err != nil {
		fail(probeNoNewPrivs, fmt.Errorf("prctl(PR_GET_NO_NEW_PRIVS): %w", err))
	} else {
		f.NoNewPrivs = true
	}

	// One probe with every namespace the jail uses, as each call's start
	// has them; only when it fails are they probed one by one, to say
	// which is missing (four starts took 3–4 ms of every TUI banner and
	// brig doctor).
	if probeNS(ctx, unix.CLONE_NEWNS|unix.CLONE_NEWPID|unix.CLONE_NEWNET) == nil {
		f.UserNS, f.MountNS, f.PIDNS, f.NetNS = true, true, true, true
	} else if err := probeNS(ctx, 0); err != nil {
		fail(probeUserNS, err)
		why := errors.New("needs a user namespace, which could not be created")
		fail(probeMountNS, why)
		fail(probePIDNS, why)
		fail(probeNetNS, why)
	} else {
		f.UserNS = true
		for _, p := range []struct {
			name  string
			flags uintptr
			ok    *bool
		}{
			{probeMountNS, unix.CLONE_NEWNS, &f.MountNS},
			{probePIDNS, unix.CLONE_NEWPID, &f.PIDNS},
			{probeNetNS, unix.CLONE_NEWNET, &f.NetNS},
		} {
			if err := probeNS(ctx, p.flags); err != nil {
				fail(p.name, err)
			} else {
				*p.ok = true
			}
		}
	}

	if v, err := featReadSysctlInt("/proc/sys/kernel/yama/ptrace_scope"); err == nil {
		f.YamaPtraceScope = v
	} else if !errors.Is(err, os.ErrNotExist) {
		fail(probeYama, err)
	}

	// Absent sysctl: the kernel predates the knob (6.2), so TIOCSTI works.
	// Unreadable or malformed: assume the worst, TIOCSTI works.
	f.LegacyTIOCSTI = true
	if v, err := featReadSysctlInt("/proc/sys/dev/tty/legacy_tiocsti"); err == nil {
		f.LegacyTIOCSTI = v != 0
	} else if !errors.Is(err, os.ErrNotExist) {
		fail(probeLegacyTIOCSTI, err)
	}

	return f
}

func landlockProbeError(err error) error {
	switch {
	case errors.Is(err, syscall.ENOSYS):
		return fmt.Errorf("landlock_create_ruleset: %w (kernel built without CONFIG_SECURITY_LANDLOCK, or older than 5.13)", err)
	case errors.Is(err, syscall.EOPNOTSUPP):
		return fmt.Errorf("landlock_create_ruleset: %w (Landlock is built in but not enabled: add landlock to the lsm= boot parameter)", err)
	default:
		return fmt.Errorf("landlock_create_ruleset: %w", err)
	}
}

// featProbeSeccomp checks that seccomp filter mode is usable: prctl
// PR_GET_SECCOMP answers (EINVAL without CONFIG_SECCOMP), and the seccomp(2)
// syscall reports SECCOMP_RET_ERRNO as an available action (kernel 4.14+).
func featProbeSeccomp() error {
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_GET_SECCOMP): %w", err)
	}
	action := uint32(unix.SECCOMP_RET_ERRNO)
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action)))
	if errno != 0 {
		return fmt.Errorf("seccomp(SECCOMP_GET_ACTION_AVAIL, SECCOMP_RET_ERRNO): %w", errno)
	}
	return nil
}

// featProbeSeccompTSync checks that SECCOMP_FILTER_FLAG_TSYNC is accepted
// without installing anything. seccomp(SECCOMP_SET_MODE_FILTER, flags, NULL)
// validates the flags first (unknown flags: EINVAL) and only then copies the
// filter program from user memory, which fails with EFAULT for NULL before
// any filter is prepared or attached. So EFAULT proves that the kernel knows
// TSYNC, and the call has no side effect. (TSYNC arrived with the seccomp
// syscall itself in 3.17, so ENOSYS means neither exists.)
func featProbeSeccompTSync() error {
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, 0)
	switch errno {
	case unix.EFAULT:
		return nil
	case 0:
		// Cannot happen with a NULL program; never report success for it.
		return errors.New("seccomp(SECCOMP_SET_MODE_FILTER, TSYNC, NULL) unexpectedly succeeded")
	case unix.EINVAL:
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER) rejects SECCOMP_FILTER_FLAG_TSYNC: %w", errno)
	default:
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER, TSYNC): %w", errno)
	}
}

// featProbeNamespaces starts a probe in a new user namespace plus extra
// (CLONE_NEW* flags), mapping the caller's uid and gid to themselves, with
// the same flags and the same C start the jail uses for every call's init
// (also when the caller is root), and waits for it. The probe runs no
// program: it exits once its maps are written (NSProcess without a Path).
// The calling process is never moved into a namespace: the kernel creates
// them for the child at clone time.
//
// It proves the namespaces can be created; it does not try operations
// inside them (mounting, bringing up loopback), which the jail's own stages
// report if a security module forbids them later.
func featProbeNamespaces(ctx context.Context, extra uintptr) error {
	ctx, cancel := context.WithTimeout(ctx, featureProbeTimeout)
	defer cancel()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("a probe in %s: not started: %w", featNSName(extra), err)
	}
	proc, err := StartProbe(syscall.CLONE_NEWUSER | extra)
	if err != nil {
		return fmt.Errorf("%s: %w", featNSName(extra), err)
	}
	stop := context.AfterFunc(ctx, func() { _ = proc.Kill() })
	defer stop()
	st, err := proc.Wait()
	switch {
	case err != nil:
		return fmt.Errorf("a probe in %s: %w", featNSName(extra), err)
	case !st.Success():
		return fmt.Errorf("a probe in %s: %v", featNSName(extra), st)
	}
	return nil
}

// StartProbe starts a probe in new namespaces (cloneflags, CLONE_NEWUSER
// among them), mapping the caller's uid and gid to themselves, the way
// every call's init is started: the child runs no program, and exits once
// its maps are written. An error names the step that failed.
func StartProbe(cloneflags uintptr) (*os.Process, error) {
	uid, gid := os.Getuid(), os.Getgid()
	return StartInNamespaces(NSProcess{
		Files:      []*os.File{nil, nil, nil},
		Cloneflags: cloneflags,
		UIDMap:     fmt.Sprintf("%d %d 1", uid, uid),
		GIDMap:     fmt.Sprintf("%d %d 1", gid, gid),
	})
}

func featNSName(extra uintptr) string {
	names := []string{"user"}
	if extra&unix.CLONE_NEWNS != 0 {
		names = append(names, "mount")
	}
	if extra&unix.CLONE_NEWPID != 0 {
		names = append(names, "PID")
	}
	if extra&unix.CLONE_NEWNET != 0 {
		names = append(names, "network")
	}
	return strings.Join(names, "+") + " namespace"
}

func featReadSysctlInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// pidsControllerMounted reports whether the pids controller is available as
// cgroup v1 (/sys/fs/cgroup/pids) or v2 (listed in cgroup.controllers).
func pidsControllerMounted() bool {
	if _, err := os.Stat("/sys/fs/cgroup/pids/cgroup.procs"); err == nil {
		return true
	}
	b, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers")
	return err == nil && slices.Contains(strings.Fields(string(b)), "pids")
}

package filter

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	seccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"

	"brig/jail"
)

// Tests that install a filter do it in a fresh copy of the test binary: a
// seccomp filter cannot be removed, and it would change every later test.

const (
	seccompSubprocessEnv = "BRIG_SECCOMP_SUBPROCESS" // the test name the subprocess runs
	seccompProbeEnv      = "BRIG_SECCOMP_PROBE"      // path of the compiled C probe
	seccompRanMarker     = "brig-seccomp-subprocess-ok: "
	seccompSkipMarker    = "brig-seccomp-subprocess-skipped: "
)

// runSeccompSubprocess runs fn in a new process of this test binary that
// runs only the calling test (or subtest). In the parent it waits for that
// process and reports its output on failure; in the subprocess it calls fn.
func runSeccompSubprocess(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	switch os.Getenv(seccompSubprocessEnv) {
	case t.Name():
		defer func() { // also runs after t.Fatal and t.Skip (runtime.Goexit)
			switch {
			case t.Skipped():
				fmt.Println(seccompSkipMarker + t.Name())
			case !t.Failed():
				fmt.Println(seccompRanMarker + t.Name())
			}
		}()
		fn(t)
		return
	case "":
	default:
		t.Skip("inside the subprocess of another test")
	}

	parts := strings.Split(t.Name(), "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	// A broken filter can leave the subprocess stopped (say, traced by us
	// after a PTRACE_TRACEME that got through), where its own -test.timeout
	// never fires: kill it from here.
	// Its deadline is this test's (a loaded machine is slow, not broken).
	wait := 10 * time.Minute
	if d, ok := t.Deadline(); ok {
		wait = max(time.Until(d)-10*time.Second, 10*time.Second)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0],
		"-test.run="+strings.Join(parts, "/"), "-test.count=1", "-test.v", "-test.timeout="+(wait-5*time.Second).String())
	cmd.Env = append(os.Environ(), seccompSubprocessEnv+"="+t.Name())
	if os.Getenv("GORACE") == "" {
		cmd.Env = append(cmd.Env, "GORACE=atexit_sleep_ms=0") // not 1 s per subprocess under -race
	}
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	switch {
	case ctx.Err() != nil:
		t.Fatalf("subprocess killed after %v: %v\n%s", 30*time.Second, err, out)
	case err != nil:
		t.Fatalf("subprocess failed: %v\n%s", err, out)
	case bytes.Contains(out, []byte(seccompSkipMarker+t.Name()+"\n")):
		t.Skipf("subprocess skipped:\n%s", out)
	case !bytes.Contains(out, []byte(seccompRanMarker+t.Name()+"\n")):
		t.Fatalf("subprocess did not run the test:\n%s", out)
	}
	if testing.Verbose() {
		t.Logf("subprocess output:\n%s", out)
	}
}

// installSeccomp sets no_new_privs and loads the filter for opts, the way
// the jail child does. Only ever called inside runSeccompSubprocess.
func installSeccomp(t *testing.T, opts FilterOptions) {
	t.Helper()
	prog, err := BuildFilter(opts)
	if err != nil {
		t.Fatal(err)
	}
	loadSeccomp(t, prog)
}

// installStackedSeccomp loads the base filter and then the narrowing filter
// for opts, the way a jail child does.
func installStackedSeccomp(t *testing.T, opts FilterOptions) {
	t.Helper()
	base, err := BuildFilter(BaseFilterOptions())
	if err != nil {
		t.Fatal(err)
	}
	narrow, err := BuildNarrowingFilter(opts)
	if err != nil {
		t.Fatal(err)
	}
	if (narrow == nil) != (opts == BaseFilterOptions()) {
		t.Fatalf("narrowing filter for %+v: %d bytes", opts, len(narrow))
	}
	loadSeccomp(t, base)
	if narrow != nil {
		loadSeccomp(t, narrow)
	}
}

func loadSeccomp(t *testing.T, prog []byte) {
	t.Helper()
	if os.Getenv(seccompSubprocessEnv) != t.Name() {
		t.Fatal("loading a filter outside runSeccompSubprocess would restrict the whole test binary")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		t.Fatalf("prctl(PR_SET_NO_NEW_PRIVS): %v", err)
	}
	if err := jail.LoadFilter(prog); err != nil {
		t.Fatalf("LoadFilter: %v", err)
	}
}

// Helpers to spell raw syscalls in the tables below; the sc prefix keeps
// them apart from other tests of the package. C strings are globals so they
// stay reachable during the calls.
var (
	scNoSuchPath   = scCString("/nonexistent-brig-seccomp-test")
	scEmpty        = scCString("")
	scNone         = scCString("none")
	scTmpfs        = scCString("tmpfs")
	scNoSuchFS     = scCString("brig-no-such-fs")
	scNoSuchModule = scCString("brig_no_such_module")
	scIoctlByte    byte
)

func scCString(s string) *byte {
	p, err := unix.BytePtrFromString(s)
	if err != nil {
		panic(err)
	}
	return p
}

func scPtr(p *byte) uintptr { return uintptr(unsafe.Pointer(p)) }

// scNeg turns a negative int into the register value the kernel sees.
func scNeg(n int) uintptr { return uintptr(n) }

// scSys makes a syscall and returns only its errno (0 on success).
func scSys(trap uintptr, args ...uintptr) unix.Errno {
	var a [6]uintptr
	copy(a[:], args)
	_, _, errno := unix.Syscall6(trap, a[0], a[1], a[2], a[3], a[4], a[5])
	return errno
}

// seccompSocketCall calls socket(2), or socketpair(2) if pair, with raw 64-bit
// arguments and closes what it gets.
func seccompSocketCall(pair bool, family, typ, proto uint64) unix.Errno {
	if pair {
		var fds [2]int32
		_, _, errno := unix.RawSyscall6(unix.SYS_SOCKETPAIR, uintptr(family), uintptr(typ), uintptr(proto),
			uintptr(unsafe.Pointer(&fds)), 0, 0)
		if errno == 0 {
			unix.Close(int(fds[0]))
			unix.Close(int(fds[1]))
		}
		return errno
	}
	fd, _, errno := unix.RawSyscall(unix.SYS_SOCKET, uintptr(family), uintptr(typ), uintptr(proto))
	if errno == 0 {
		unix.Close(int(fd))
	}
	return errno
}

func seccompErrnoString(e unix.Errno) string {
	if e == 0 {
		return "success"
	}
	return unix.ErrnoName(e)
}

// seccompCase is one call with the errno the filter must produce (0: success).
type seccompCase struct {
	name string
	call func() unix.Errno
	want []unix.Errno // any of these
	// control: before the filter the call must succeed if want is
	// success, and otherwise give something else than want.
	control bool
}

func scWant(e ...unix.Errno) []unix.Errno { return e }

func (c seccompCase) matches(got unix.Errno) bool {
	for _, w := range c.want {
		if got == w {
			return true
		}
	}
	return false
}

func seccompCheckControls(t *testing.T, cases []seccompCase) {
	t.Helper()
	for _, c := range cases {
		if !c.control {
			continue
		}
		got := c.call()
		wantsSuccess := len(c.want) == 1 && c.want[0] == 0
		switch {
		case wantsSuccess && got != 0:
			t.Errorf("control %s without the filter: got %s, want success", c.name, seccompErrnoString(got))
		case !wantsSuccess && c.matches(got):
			t.Errorf("control %s without the filter: got %s already; the filtered check would prove nothing",
				c.name, seccompErrnoString(got))
		}
	}
}

func seccompCheckFiltered(t *testing.T, cases []seccompCase) {
	t.Helper()
	for _, c := range cases {
		if got := c.call(); !c.matches(got) {
			var ws []string
			for _, w := range c.want {
				ws = append(ws, seccompErrnoString(w))
			}
			t.Errorf("%s under the filter: got %s, want %s", c.name, seccompErrnoString(got), strings.Join(ws, " or "))
		}
	}
}

// seccompModes reads the Seccomp: line of every thread of this process.
func seccompModes(t *testing.T) map[int]string {
	t.Helper()
	dirs, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	modes := map[int]string{}
	for _, d := range dirs {
		tid, _ := strconv.Atoi(d.Name())
		status, err := os.ReadFile(filepath.Join("/proc/self/task", d.Name(), "status"))
		if err != nil {
			continue // the thread exited
		}
		for line := range strings.Lines(string(status)) {
			if v, ok := strings.CutPrefix(line, "Seccomp:"); ok {
				modes[tid] = strings.TrimSpace(v)
			}
		}
	}
	return modes
}

func TestSeccompBuildFilterDeterministic(t *testing.T) {
	variants := []FilterOptions{{}, {AllowInet: true}, {AllowUnix: true}, {AllowInet: true, AllowUnix: true}, {AllowInet: true, TCPOnly: true}}
	seen := map[string]FilterOptions{}
	for _, opts := range variants {
		a, err := BuildFilter(opts)
		if err != nil {
			t.Fatalf("BuildFilter(%+v): %v", opts, err)
		}
		b, err := BuildFilter(opts)
		if err != nil {
			t.Fatalf("BuildFilter(%+v): %v", opts, err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("BuildFilter(%+v) gave different bytes on two calls", opts)
		}
		insns, err := decodeBPF(a)
		if err != nil {
			t.Fatalf("BuildFilter(%+v): %v", opts, err)
		}
		// The program starts by loading seccomp_data.arch (offset 4).
		if first := insns[0]; first.Code != 0x20 || first.K != 4 {
			t.Errorf("BuildFilter(%+v): first instruction %+v does not load the architecture", opts, first)
		}
		if prev, dup := seen[string(a)]; dup {
			t.Errorf("BuildFilter(%+v) and BuildFilter(%+v) gave the same program", prev, opts)
		}
		seen[string(a)] = opts
		t.Logf("%+v: %d instructions, %d rules", opts, len(insns), len(filterRules(opts)))
	}
}

func TestSeccompRulesKnownToLibseccomp(t *testing.T) {
	// BuildFilter skips names libseccomp does not know; on this machine it
	// should know them all, or the filter silently has a hole.
	names := map[string]bool{}
	byNumber := map[string]bool{} // rules that carry their own number
	for _, r := range filterRules(FilterOptions{AllowInet: true, AllowUnix: true, TCPOnly: true}) {
		names[r.syscall] = true
		byNumber[r.syscall] = r.number > 0
	}
	for name := range names {
		nr, err := seccompSyscallNumber(name)
		if err != nil {
			if !byNumber[name] {
				t.Errorf("libseccomp does not know %q on this architecture: BuildFilter skips it", name)
			}
			continue
		}
		if want, ok := seccompAmd64Numbers[name]; ok && runtime.GOARCH == "amd64" && nr != want {
			t.Errorf("libseccomp numbers %q as %d, x/sys/unix as %d", name, nr, want)
		}
	}
}

// seccompSyscallNumber resolves name the way BuildFilter does.
func seccompSyscallNumber(name string) (int, error) {
	nr, err := seccomp.GetSyscallFromName(name)
	if err != nil {
		return 0, err
	}
	if nr < 0 {
		return 0, fmt.Errorf("only a pseudo-syscall (%d) on this architecture", nr)
	}
	return int(nr), nil
}

// seccompAmd64Numbers cross-checks libseccomp's numbering for the table.
var seccompAmd64Numbers = map[string]int{
	"ptrace": unix.SYS_PTRACE, "mount": unix.SYS_MOUNT, "mount_setattr": unix.SYS_MOUNT_SETATTR,
	"clone": unix.SYS_CLONE, "clone3": unix.SYS_CLONE3, "socket": unix.SYS_SOCKET,
	"socketpair": unix.SYS_SOCKETPAIR, "ioctl": unix.SYS_IOCTL, "personality": unix.SYS_PERSONALITY,
	"io_uring_setup": unix.SYS_IO_URING_SETUP, "uselib": unix.SYS_USELIB,
}

func TestSeccompLoadFilterRejectsMalformedPrograms(t *testing.T) {
	// These fail before any syscall, so they are safe in the test process.
	for _, prog := range [][]byte{nil, {}, make([]byte, 7), make([]byte, 8*(bpfMaxInsns+1))} {
		if err := jail.LoadFilter(prog); err == nil {
			t.Errorf("jail.LoadFilter(%d bytes) succeeded", len(prog))
		}
	}
	if modes := seccompModes(t); modes[unix.Getpid()] != "0" {
		t.Fatalf("the test process has a seccomp filter: %v", modes)
	}
}

// personaVectors are personality(2) arguments worth trying.
func personaVectors() []uint64 {
	vs := []uint64{0, 0x8, 0x20000, 0x20008, 0xffffffff,
		0x400000, 0x40000, 0x400008, 0x40008, 0x420008, 0x0200000, 0xfffffff7, 0xfffdffff,
		1 << 32, 1<<32 | 0x20008, 1<<32 | 0xffffffff, ^uint64(0), 1<<63 | 0x400000}
	for i := range 32 {
		bit := uint64(1) << i
		vs = append(vs, bit, bit|0x20008, bit|0x8, 0xffffffff&^bit)
		for j := i + 1; j < 32; j += 5 {
			vs = append(vs, 0xffffffff&^(bit|1<<j), bit|1<<j)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		vs = append(vs, uint64(rng.Uint32()), uint64(rng.Uint32()&rng.Uint32()&rng.Uint32()))
	}
	return vs
}

// personaAllowed is the reference: what personality(2) may set.
func personaAllowed(v uint64) bool {
	switch uint32(v) { // the kernel reads an unsigned int
	case 0, 0x8, 0x20000, 0x20008, 0xffffffff:
		return true
	}
	return false
}

func TestSeccompPersonaPatterns(t *testing.T) {
	pats := personaDenyPatterns(allowedPersonaBits)
	denied := func(v uint64) bool {
		for _, p := range pats {
			if v&p.mask == p.value {
				return true
			}
		}
		return false
	}
	check := func(v uint64) {
		if denied(v) == personaAllowed(v) {
			t.Fatalf("persona %#x: denied=%v, want %v", v, denied(v), !personaAllowed(v))
		}
	}
	for _, v := range personaVectors() {
		check(v)
	}
	// Every value of the low 20 bits, with the high 12 bits all clear or all set.
	for v := uint64(0); v < 1<<20; v++ {
		check(v)
		check(v | 0xfff00000)
	}
	t.Logf("%d patterns", len(pats))
}

// deniedSyscallCases calls each syscall of deniedSyscalls with arguments
// that make it fail (or succeed) harmlessly without the filter, as root.
func deniedSyscallCases() map[string]func() unix.Errno {
	pid := uintptr(unix.Getpid())
	atFDCWD := scNeg(unix.AT_FDCWD)
	return map[string]func() unix.Errno{
		"ptrace":            func() unix.Errno { return scSys(unix.SYS_PTRACE, unix.PTRACE_PEEKDATA, pid, 0, 0) },
		"process_vm_readv":  func() unix.Errno { return scSys(unix.SYS_PROCESS_VM_READV, pid, 0, 0, 0, 0, 0) },
		"process_vm_writev": func() unix.Errno { return scSys(unix.SYS_PROCESS_VM_WRITEV, pid, 0, 0, 0, 0, 0) },
		"mount": func() unix.Errno {
			return scSys(unix.SYS_MOUNT, scPtr(scNone), scPtr(scNoSuchPath), scPtr(scTmpfs), 0, 0)
		},
		"umount2":    func() unix.Errno { return scSys(unix.SYS_UMOUNT2, scPtr(scNoSuchPath), 0) },
		"pivot_root": func() unix.Errno { return scSys(unix.SYS_PIVOT_ROOT, scPtr(scNoSuchPath), scPtr(scNoSuchPath)) },
		"chroot":     func() unix.Errno { return scSys(unix.SYS_CHROOT, scPtr(scNoSuchPath)) },
		// A Go process has threads, so the kernel refuses a new user namespace with EINVAL.
		"unshare":   func() unix.Errno { return scSys(unix.SYS_UNSHARE, unix.CLONE_NEWUSER) },
		"setns":     func() unix.Errno { return scSys(unix.SYS_SETNS, scNeg(-1), 0) },
		"open_tree": func() unix.Errno { return scSys(unix.SYS_OPEN_TREE, atFDCWD, scPtr(scNoSuchPath), 0) },
		"move_mount": func() unix.Errno {
			return scSys(unix.SYS_MOVE_MOUNT, atFDCWD, scPtr(scNoSuchPath), atFDCWD, scPtr(scNoSuchPath), 0)
		},
		"fsopen":        func() unix.Errno { return scSys(unix.SYS_FSOPEN, scPtr(scNoSuchFS), 0) },
		"fsconfig":      func() unix.Errno { return scSys(unix.SYS_FSCONFIG, scNeg(-1), 0, 0, 0, 0) },
		"fsmount":       func() unix.Errno { return scSys(unix.SYS_FSMOUNT, scNeg(-1), 0, 0) },
		"fspick":        func() unix.Errno { return scSys(unix.SYS_FSPICK, atFDCWD, scPtr(scNoSuchPath), 0) },
		"mount_setattr": func() unix.Errno { return scSys(unix.SYS_MOUNT_SETATTR, scNeg(-1), scPtr(scEmpty), 0, 0, 0) },
		"keyctl": func() unix.Errno {
			return scSys(unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, scNeg(unix.KEY_SPEC_THREAD_KEYRING), 0)
		},
		"add_key":         func() unix.Errno { return scSys(unix.SYS_ADD_KEY, 0, 0, 0, 0, 0) },
		"request_key":     func() unix.Errno { return scSys(unix.SYS_REQUEST_KEY, 0, 0, 0, 0) },
		"bpf":             func() unix.Errno { return scSys(unix.SYS_BPF, 0xffff, 0, 0) },
		"perf_event_open": func() unix.Errno { return scSys(unix.SYS_PERF_EVENT_OPEN, 0, 0, scNeg(-1), scNeg(-1), 0) },
		// More segments than KEXEC_SEGMENT_MAX; never nr_segments 0, which unloads.
		"kexec_load": func() unix.Errno { return scSys(unix.SYS_KEXEC_LOAD, 0, 1000, 0, 0) },
		// An unknown flag; never KEXEC_FILE_UNLOAD.
		"kexec_file_load": func() unix.Errno {
			return scSys(unix.SYS_KEXEC_FILE_LOAD, scNeg(-1), scNeg(-1), 0, 0, 0x80000000)
		},
		"init_module":       func() unix.Errno { return scSys(unix.SYS_INIT_MODULE, 0, 0, 0) },
		"finit_module":      func() unix.Errno { return scSys(unix.SYS_FINIT_MODULE, scNeg(-1), 0, 0) },
		"delete_module":     func() unix.Errno { return scSys(unix.SYS_DELETE_MODULE, scPtr(scNoSuchModule), unix.O_NONBLOCK) },
		"io_uring_setup":    func() unix.Errno { return scSys(unix.SYS_IO_URING_SETUP, 0, 0) },
		"io_uring_enter":    func() unix.Errno { return scSys(unix.SYS_IO_URING_ENTER, scNeg(-1), 0, 0, 0, 0, 0) },
		"io_uring_register": func() unix.Errno { return scSys(unix.SYS_IO_URING_REGISTER, scNeg(-1), 0, 0, 0) },
		"userfaultfd":       func() unix.Errno { return scSys(unix.SYS_USERFAULTFD, 0xffffffff) },
		"fanotify_init":     func() unix.Errno { return scSys(unix.SYS_FANOTIFY_INIT, 0xffffffff, 0) },
		"fanotify_mark":     func() unix.Errno { return scSys(unix.SYS_FANOTIFY_MARK, scNeg(-1), 0, 0, atFDCWD, 0) },
		// Refused by number (newMountRules): EFAULT or EINVAL without the filter.
		"statmount":      func() unix.Errno { return scSys(457, 0, 0, 0, 0) },
		"listmount":      func() unix.Errno { return scSys(458, 0, 0, 0, 0) },
		"open_tree_attr": func() unix.Errno { return scSys(467, atFDCWD, 0, 0, 0, 0) },
		"name_to_handle_at": func() unix.Errno {
			return scSys(unix.SYS_NAME_TO_HANDLE_AT, atFDCWD, scPtr(scNoSuchPath), 0, 0, 0)
		},
		"open_by_handle_at": func() unix.Errno { return scSys(unix.SYS_OPEN_BY_HANDLE_AT, scNeg(-1), 0, 0) },
		"acct":              func() unix.Errno { return scSys(unix.SYS_ACCT, scPtr(scNoSuchPath)) },
		"swapon":            func() unix.Errno { return scSys(unix.SYS_SWAPON, scPtr(scNoSuchPath), 0) },
		"swapoff":           func() unix.Errno { return scSys(unix.SYS_SWAPOFF, scPtr(scNoSuchPath)) },
		"reboot":            func() unix.Errno { return scSys(unix.SYS_REBOOT, 0, 0, 0, 0) }, // bad magic
		"syslog":            func() unix.Errno { return scSys(unix.SYS_SYSLOG, 10, 0, 0) },   // SYSLOG_ACTION_SIZE_BUFFER
		"quotactl":          func() unix.Errno { return scSys(unix.SYS_QUOTACTL, 0, 0, 0, 0) },
		// Called only once the process has no controlling terminal (see below).
		"vhangup": func() unix.Errno { return scSys(unix.SYS_VHANGUP) },
		"iopl":    func() unix.Errno { return scSys(unix.SYS_IOPL, 0) },
		"ioperm":  func() unix.Errno { return scSys(unix.SYS_IOPERM, 0, 0, 0) },
		"uselib":  func() unix.Errno { return scSys(unix.SYS_USELIB, scPtr(scNoSuchPath)) },
	}
}

func TestSeccompDeniedSyscalls(t *testing.T) {
	calls := deniedSyscallCases()
	for _, name := range deniedSyscalls {
		if calls[name] == nil {
			t.Fatalf("deniedSyscalls has %q but the test has no call for it", name)
		}
	}
	runSeccompSubprocess(t, func(t *testing.T) {
		// vhangup hangs up the controlling terminal: make sure there is none.
		if _, err := unix.Setsid(); err != nil {
			t.Fatalf("setsid: %v", err)
		}
		if fd, err := unix.Open("/dev/tty", unix.O_RDWR|unix.O_CLOEXEC, 0); err == nil {
			unix.Close(fd)
			t.Fatal("still a controlling terminal after setsid")
		}

		// The test's own list, not the filter's table: dropping a name
		// from deniedSyscalls must fail here.
		var cases []seccompCase
		for _, name := range slices.Sorted(maps.Keys(calls)) {
			cases = append(cases, seccompCase{name: name, call: calls[name], want: scWant(unix.EPERM), control: true})
		}
		cases = append(cases, seccompCase{name: "clone3", want: scWant(unix.ENOSYS), control: true,
			call: func() unix.Errno { return scSys(unix.SYS_CLONE3, 0, 0) }}) // EINVAL without the filter
		for _, f := range cloneNamespaceFlags {
			cases = append(cases, seccompCase{name: "fork/exec with " + f.name, want: scWant(unix.EPERM), control: true,
				call: func() unix.Errno { return execWithCloneflags(uintptr(f.bit)) }})
		}
		cases = append(cases, seccompCase{name: "plain fork/exec", want: scWant(0), control: true,
			call: func() unix.Errno { return execWithCloneflags(0) }})

		seccompCheckControls(t, cases)
		installSeccomp(t, FilterOptions{})
		seccompCheckFiltered(t, cases)

		// PTRACE_TRACEME, were it let through, would make the parent test
		// process our tracer; try it only on a thread where another ptrace
		// request has just been refused.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if calls["ptrace"]() == unix.EPERM {
			seccompCheckFiltered(t, []seccompCase{{name: "ptrace(PTRACE_TRACEME)", want: scWant(unix.EPERM),
				call: func() unix.Errno { return scSys(unix.SYS_PTRACE, unix.PTRACE_TRACEME, 0, 0, 0) }}})
		}
	})
}

// execWithCloneflags runs /bin/true in new namespaces through Go's
// fork/exec, which uses clone(2) (flags in arg0) unless it needs clone3.
func execWithCloneflags(flags uintptr) unix.Errno {
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: flags}
	err := cmd.Run()
	var errno syscall.Errno
	switch {
	case err == nil:
		return 0
	case errors.As(err, &errno):
		return errno
	}
	return unix.EIO // some other failure: matches nothing the tests want
}

// seccompSockCase describes a socket(2) or socketpair(2) call.
func seccompSockCase(pair bool, family, typ, proto uint64, w []unix.Errno) seccompCase {
	call := "socket"
	if pair {
		call = "socketpair"
	}
	return seccompCase{
		name:    fmt.Sprintf("%s(%#x, %#x, %#x)", call, family, typ, proto),
		call:    func() unix.Errno { return seccompSocketCall(pair, family, typ, proto) },
		want:    w,
		control: true,
	}
}

func TestSeccompSocket(t *testing.T) {
	const hi = 1 << 32 // high bits the kernel ignores in these int arguments
	var (
		ok     = scWant(0)
		noAF   = scWant(unix.EAFNOSUPPORT)
		eperm  = scWant(unix.EPERM)
		noMPTC = scWant(unix.EPROTONOSUPPORT)
		stream = uint64(unix.SOCK_STREAM)
		dgram  = uint64(unix.SOCK_DGRAM)
		raw    = uint64(unix.SOCK_RAW)
		mptcp  = uint64(unix.IPPROTO_MPTCP)
	)
	// Always, whatever the options.
	common := []seccompCase{
		seccompSockCase(false, unix.AF_PACKET, dgram, 0, noAF),
		seccompSockCase(false, unix.AF_PACKET, raw, 0, scWant(unix.EAFNOSUPPORT, unix.EPERM)),
		seccompSockCase(true, unix.AF_UNIX, stream, 0, ok),
		seccompSockCase(true, unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0, ok),
		seccompSockCase(true, unix.AF_INET, stream, 0, noAF), // EOPNOTSUPP without the filter
		seccompSockCase(true, unix.AF_UNIX|hi, stream, 0, noAF),
	}
	variants := []struct {
		name  string
		opts  FilterOptions
		cases []seccompCase
	}{
		{"none", FilterOptions{}, []seccompCase{
			// A datagram pair could sendto any socket path (/dev/log).
			seccompSockCase(true, unix.AF_UNIX, dgram|unix.SOCK_CLOEXEC, 0, eperm),
			seccompSockCase(true, unix.AF_UNIX, raw, 0, eperm), // AF_UNIX takes SOCK_RAW as SOCK_DGRAM
			seccompSockCase(false, unix.AF_INET, dgram, 0, noAF),
			seccompSockCase(false, unix.AF_INET6, stream, 0, noAF),
			seccompSockCase(false, unix.AF_NETLINK, raw, unix.NETLINK_ROUTE, noAF),
			seccompSockCase(false, unix.AF_UNIX, stream, 0, noAF),
			seccompSockCase(false, unix.AF_UNIX|hi, stream, 0, noAF),
		}},
		{"inet", FilterOptions{AllowInet: true}, []seccompCase{
			seccompSockCase(true, unix.AF_UNIX, dgram, 0, eperm),
			seccompSockCase(false, unix.AF_INET, dgram, 0, ok),
			seccompSockCase(false, unix.AF_INET, stream|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, ok),
			seccompSockCase(false, unix.AF_INET6, stream, 0, ok),
			seccompSockCase(false, unix.AF_NETLINK, raw|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE, ok),
			seccompSockCase(false, unix.AF_NETLINK, dgram, unix.NETLINK_ROUTE, ok),
			seccompSockCase(false, unix.AF_NETLINK, raw, unix.NETLINK_AUDIT, eperm),
			seccompSockCase(false, unix.AF_NETLINK, raw, unix.NETLINK_ROUTE|hi, eperm),
			seccompSockCase(false, unix.AF_INET, raw, unix.IPPROTO_ICMP, eperm),
			seccompSockCase(false, unix.AF_INET, raw|hi, unix.IPPROTO_ICMP, eperm),
			seccompSockCase(false, unix.AF_INET6, raw|unix.SOCK_CLOEXEC, unix.IPPROTO_ICMPV6, eperm),
			seccompSockCase(false, unix.AF_INET, unix.SOCK_PACKET, 0, eperm),
			seccompSockCase(false, unix.AF_INET, stream, mptcp, noMPTC),
			seccompSockCase(false, unix.AF_INET, stream, mptcp|hi, noMPTC),
			seccompSockCase(false, unix.AF_INET6, stream, mptcp, noMPTC),
			seccompSockCase(false, unix.AF_INET|hi, dgram, 0, noAF),
			seccompSockCase(false, unix.AF_INET6|hi, dgram, 0, noAF),
			seccompSockCase(false, unix.AF_NETLINK|hi, raw, 0, scWant(unix.EAFNOSUPPORT, unix.EPERM)),
			seccompSockCase(false, unix.AF_UNIX, stream, 0, noAF),
		}},
		{"unix", FilterOptions{AllowUnix: true}, []seccompCase{
			seccompSockCase(true, unix.AF_UNIX, dgram|unix.SOCK_CLOEXEC, 0, ok), // control: Unix sockets allowed
			seccompSockCase(false, unix.AF_UNIX, stream, 0, ok),
			seccompSockCase(false, unix.AF_UNIX, dgram, 0, ok),
			seccompSockCase(false, unix.AF_UNIX, unix.SOCK_SEQPACKET, 0, ok),
			seccompSockCase(false, unix.AF_UNIX, raw, 0, eperm), // AF_UNIX takes SOCK_RAW as SOCK_DGRAM
			seccompSockCase(false, unix.AF_UNIX|hi, stream, 0, noAF),
			seccompSockCase(false, unix.AF_INET, dgram, 0, noAF),
			seccompSockCase(false, unix.AF_NETLINK, raw, unix.NETLINK_ROUTE, noAF),
		}},
		{"tcp", FilterOptions{AllowInet: true, TCPOnly: true}, []seccompCase{
			seccompSockCase(true, unix.AF_UNIX, dgram, 0, eperm),
			seccompSockCase(false, unix.AF_INET, stream|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, ok),
			seccompSockCase(false, unix.AF_INET, stream, unix.IPPROTO_TCP, ok),
			seccompSockCase(false, unix.AF_INET6, stream, 0, ok),
			seccompSockCase(false, unix.AF_INET, dgram, 0, eperm),
			seccompSockCase(false, unix.AF_INET, dgram|unix.SOCK_CLOEXEC, unix.IPPROTO_UDP, scWant(unix.EPERM, unix.EPROTONOSUPPORT)),
			seccompSockCase(false, unix.AF_INET6, dgram, 0, eperm),
			seccompSockCase(false, unix.AF_INET, dgram, unix.IPPROTO_ICMP, eperm), // ping sockets
			seccompSockCase(false, unix.AF_INET, unix.SOCK_SEQPACKET, 0, eperm),
			seccompSockCase(false, unix.AF_INET, unix.SOCK_DCCP, 0, eperm),
			uncontrolled(seccompSockCase(false, unix.AF_INET, stream, unix.IPPROTO_SCTP, noMPTC)), // SCTP may not be built
			uncontrolled(seccompSockCase(false, unix.AF_INET6, stream, unix.IPPROTO_SCTP, noMPTC)),
			seccompSockCase(false, unix.AF_INET, stream, unix.IPPROTO_TCP|hi, noMPTC),
			seccompSockCase(false, unix.AF_INET, stream, mptcp, noMPTC),
			seccompSockCase(false, unix.AF_NETLINK, raw, unix.NETLINK_ROUTE, ok),
			seccompSockCase(false, unix.AF_UNIX, stream, 0, noAF),
		}},
		{"both", FilterOptions{AllowInet: true, AllowUnix: true}, []seccompCase{
			seccompSockCase(false, unix.AF_UNIX, stream, 0, ok),
			seccompSockCase(false, unix.AF_INET, stream, 0, ok),
			seccompSockCase(false, unix.AF_INET6, dgram, 0, ok),
		}},
	}
	// Each variant holds for the single filter and for the base filter with
	// the narrowing one stacked on it (what a jail child loads).
	for _, stacked := range []bool{false, true} {
		for _, v := range variants {
			name := v.name
			if stacked {
				name = "stacked-" + name
			}
			t.Run(name, func(t *testing.T) {
				runSeccompSubprocess(t, func(t *testing.T) {
					cases := append(append([]seccompCase{}, common...), v.cases...)
					// Every other family, and anything above the table, is refused.
					allowed := map[uint64]bool{}
					if v.opts.AllowUnix {
						allowed[unix.AF_UNIX] = true
					}
					if v.opts.AllowInet {
						allowed[unix.AF_INET], allowed[unix.AF_INET6], allowed[unix.AF_NETLINK] = true, true, true
					}
					for fam := uint64(0); fam <= maxSocketFamily; fam++ {
						if !allowed[fam] {
							c := seccompSockCase(false, fam, dgram, 0, noAF)
							c.control = false // most of them are EAFNOSUPPORT anyway
							cases = append(cases, c)
						}
						if fam != unix.AF_UNIX {
							c := seccompSockCase(true, fam, stream, 0, noAF)
							c.control = false
							cases = append(cases, c)
						}
					}
					for _, fam := range []uint64{64, 0x7fffffff, 0x80000000, 0xffffffff, hi, ^uint64(0)} {
						for _, pair := range []bool{false, true} {
							c := seccompSockCase(pair, fam, stream, 0, noAF)
							c.control = false
							cases = append(cases, c)
						}
					}

					seccompCheckControls(t, cases)
					if stacked {
						installStackedSeccomp(t, v.opts)
					} else {
						installSeccomp(t, v.opts)
					}
					seccompCheckFiltered(t, cases)

					if v.opts.TCPOnly {
						seccompCheckNoFastOpen(t)
					}
					if v.opts.AllowInet {
						// Real consumers: netlink RIB dumps (SOCK_RAW) and a TCP
						// listener, which Go first tries as MPTCP.
						if _, err := net.Interfaces(); err != nil {
							t.Errorf("net.Interfaces under the filter: %v", err)
						}
						ln, err := net.Listen("tcp", "127.0.0.1:0")
						if err != nil {
							t.Fatalf("net.Listen under the filter: %v", err)
						}
						ln.Close()
					}
				})
			})
		}
	}
}

// uncontrolled drops a case's control (the kernel may refuse it already).
func uncontrolled(c seccompCase) seccompCase {
	c.control = false
	return c
}

// seccompCheckNoFastOpen proves, under a TCPOnly filter, that TCP Fast
// Open cannot connect (Landlock's TCP rules do not see its implicit
// connect): sendto, sendmsg and sendmmsg with MSG_FASTOPEN fail with EPERM
// and a loopback sink receives nothing, while a plain connect and send
// reach it (the control).
func seccompCheckNoFastOpen(t *testing.T) {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan string, 8)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			b, _ := io.ReadAll(c)
			c.Close()
			got <- string(b)
		}
	}()
	sa := &unix.SockaddrInet4{Port: l.Addr().(*net.TCPAddr).Port, Addr: [4]byte{127, 0, 0, 1}}
	tfo := []struct {
		name string
		send func(fd int) error
	}{
		{"sendto", func(fd int) error { return unix.Sendto(fd, []byte("TFO-sendto"), unix.MSG_FASTOPEN, sa) }},
		{"sendmsg", func(fd int) error {
			_, err := unix.SendmsgN(fd, []byte("TFO-sendmsg"), nil, sa, unix.MSG_FASTOPEN)
			return err
		}},
		{"sendmmsg", func(fd int) error {
			// struct mmsghdr { struct msghdr msg_hdr; unsigned msg_len; }
			var name unix.RawSockaddrInet4
			name.Family = unix.AF_INET
			name.Port = uint16(sa.Port>>8 | sa.Port<<8&0xff00)
			name.Addr = sa.Addr
			data := []byte("TFO-sendmmsg")
			iov := unix.Iovec{Base: &data[0]}
			iov.SetLen(len(data))
			var mm struct {
				hdr unix.Msghdr
				len uint32
				_   [4]byte
			}
			mm.hdr.Name = (*byte)(unsafe.Pointer(&name))
			mm.hdr.Namelen = unix.SizeofSockaddrInet4
			mm.hdr.Iov = &iov
			mm.hdr.SetIovlen(1)
			_, _, errno := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&mm)), 1, unix.MSG_FASTOPEN, 0, 0)
			if errno != 0 {
				return errno
			}
			return nil
		}},
	}
	for _, c := range tfo {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.send(fd); !errors.Is(err, unix.EPERM) {
			t.Errorf("%s with MSG_FASTOPEN: %v, want EPERM", c.name, err)
		}
		unix.Close(fd)
	}
	// The control: a plain connect and write arrive.
	conn, err := net.Dial("tcp4", l.Addr().String())
	if err != nil {
		t.Fatalf("plain connect under the filter: %v", err)
	}
	io.WriteString(conn, "plain")
	conn.Close()
	if s := <-got; s != "plain" {
		t.Errorf("the sink got %q first; want only the plain connection's bytes", s)
	}
	select {
	case s := <-got:
		t.Errorf("the sink got a second connection: %q", s)
	default:
	}
}

func TestSeccompIoctl(t *testing.T) {
	runSeccompSubprocess(t, func(t *testing.T) {
		ptmx, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Skipf("no pty: %v", err)
		}
		defer unix.Close(ptmx)
		if err := unix.IoctlSetPointerInt(ptmx, unix.TIOCSPTLCK, 0); err != nil {
			t.Fatalf("unlockpt: %v", err)
		}
		pts, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(ptmx), unix.TIOCGPTPEER,
			unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC)
		if errno != 0 {
			t.Fatalf("TIOCGPTPEER: %v", errno)
		}
		defer unix.Close(int(pts))

		ioctl := func(req uint64) func() unix.Errno {
			return func() unix.Errno {
				return scSys(unix.SYS_IOCTL, pts, uintptr(req), uintptr(unsafe.Pointer(&scIoctlByte)))
			}
		}
		// TIOCSTI on a terminal that is not our controlling one needs
		// CAP_SYS_ADMIN: the controls only work as root.
		control := os.Geteuid() == 0
		cases := []seccompCase{
			{name: "ioctl(TIOCSTI)", call: ioctl(unix.TIOCSTI), want: scWant(unix.EPERM), control: control},
			{name: "ioctl(TIOCSTI | 1<<32)", call: ioctl(1<<32 | unix.TIOCSTI), want: scWant(unix.EPERM), control: control},
			{name: "ioctl(0xffffffff00005412)", call: ioctl(0xffffffff_00000000 | unix.TIOCSTI), want: scWant(unix.EPERM), control: control},
			{name: "ioctl(TIOCLINUX)", call: ioctl(unix.TIOCLINUX), want: scWant(unix.EPERM), control: true},
			{name: "ioctl(TIOCLINUX | 1<<32)", call: ioctl(1<<32 | unix.TIOCLINUX), want: scWant(unix.EPERM), control: true},
			{name: "ioctl(TIOCGWINSZ)", call: func() unix.Errno {
				_, err := unix.IoctlGetWinsize(int(pts), unix.TIOCGWINSZ)
				return seccompErrnoFrom(err)
			}, want: scWant(0), control: true},
			{name: "ioctl(TIOCINQ)", call: func() unix.Errno {
				_, err := unix.IoctlGetInt(int(pts), unix.TIOCINQ)
				return seccompErrnoFrom(err)
			}, want: scWant(0), control: true},
		}
		seccompCheckControls(t, cases)
		installSeccomp(t, FilterOptions{AllowInet: true, AllowUnix: true})
		seccompCheckFiltered(t, cases)
	})
}

func seccompErrnoFrom(err error) unix.Errno {
	if err == nil {
		return 0
	}
	var errno unix.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return unix.EIO
}

func TestSeccompPersonality(t *testing.T) {
	runSeccompSubprocess(t, func(t *testing.T) {
		// The persona belongs to the thread.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		personality := func(v uint64) (uintptr, unix.Errno) {
			old, _, errno := unix.Syscall(unix.SYS_PERSONALITY, uintptr(v), 0, 0)
			return old, errno
		}

		// Control: the kernel takes READ_IMPLIES_EXEC and ADDR_NO_RANDOMIZE.
		for _, v := range []uint64{0x400000, 0x40000} {
			if _, errno := personality(v); errno != 0 {
				t.Fatalf("control personality(%#x): %v", v, errno)
			}
			if cur, _ := personality(0xffffffff); cur != uintptr(v) {
				t.Fatalf("control personality(%#x) did not stick: %#x", v, cur)
			}
			personality(0)
		}

		installSeccomp(t, FilterOptions{})
		refused := 0
		for _, v := range personaVectors() {
			_, errno := personality(v)
			switch {
			case personaAllowed(v) && errno != 0:
				t.Errorf("personality(%#x): %v, want success", v, errno)
			case !personaAllowed(v) && errno != unix.EPERM:
				t.Errorf("personality(%#x): %s, want EPERM", v, seccompErrnoString(errno))
			}
			if errno == unix.EPERM {
				refused++
			}
			if cur, errno := personality(0xffffffff); errno != 0 {
				t.Fatalf("personality query: %v", errno)
			} else if cur != 0 {
				if _, errno := personality(0); errno != 0 {
					t.Fatalf("personality(0): %v", errno)
				}
			}
		}
		t.Logf("%d personas tried, %d refused", len(personaVectors()), refused)
	})
}

func TestSeccompEveryThread(t *testing.T) {
	runSeccompSubprocess(t, func(t *testing.T) {
		const n = 8
		type result struct {
			tid   int
			nnp   int
			errno unix.Errno
		}
		probe := func() result {
			nnp, _ := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
			return result{tid: unix.Gettid(), nnp: nnp, errno: scSys(unix.SYS_UNSHARE, unix.CLONE_NEWUSER)}
		}

		// Threads that exist before the filter is loaded, each held by a
		// locked goroutine. The goroutines never unlock: their threads
		// die with them instead of serving other goroutines.
		release := make(chan struct{})
		ready := make(chan int)
		results := make(chan result, 2*n)
		for range n {
			go func() {
				runtime.LockOSThread()
				ready <- unix.Gettid()
				<-release
				results <- probe()
			}()
		}
		old := map[int]bool{}
		for range n {
			old[<-ready] = true
		}
		before := seccompModes(t)
		for tid := range old {
			if before[tid] != "0" {
				t.Fatalf("thread %d: Seccomp %q before the load", tid, before[tid])
			}
		}

		installSeccomp(t, FilterOptions{})
		close(release)

		// Threads created after the load: each goroutine keeps its
		// thread until all have probed, so they are distinct threads.
		hold := make(chan struct{})
		for range n {
			go func() {
				runtime.LockOSThread()
				results <- probe()
				<-hold
			}()
		}
		fresh := 0
		for range 2 * n {
			r := <-results
			if r.errno != unix.EPERM {
				t.Errorf("thread %d (existed before: %v): unshare(CLONE_NEWUSER) = %s, want EPERM",
					r.tid, old[r.tid], seccompErrnoString(r.errno))
			}
			if r.nnp != 1 {
				t.Errorf("thread %d: no_new_privs = %d, want 1 (TSYNC sets it)", r.tid, r.nnp)
			}
			if _, existed := before[r.tid]; !existed {
				fresh++
			}
		}
		if fresh == 0 {
			t.Error("no goroutine ran on a thread created after the load")
		}
		for tid, mode := range seccompModes(t) {
			if mode != "2" {
				t.Errorf("thread %d: Seccomp %q, want 2 (filter)", tid, mode)
			}
		}
		close(hold)
		t.Logf("%d threads before the load, %d fresh threads probed", len(before), fresh)
	})
}

func TestSeccompLoadFilterNeedsNoNewPrivs(t *testing.T) {
	runSeccompSubprocess(t, func(t *testing.T) {
		prog, err := BuildFilter(FilterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		err = jail.LoadFilter(prog) // as root: the kernel alone would accept it
		if err == nil || !errors.Is(err, unix.EACCES) {
			t.Fatalf("LoadFilter without no_new_privs: %v, want an error wrapping EACCES", err)
		}
		t.Logf("LoadFilter: %v", err)
		for tid, mode := range seccompModes(t) {
			if mode != "0" {
				t.Errorf("thread %d: Seccomp %q after the refused load, want 0", tid, mode)
			}
		}
	})
}

func TestSeccompLoadFilterNamesUnsyncableThread(t *testing.T) {
	runSeccompSubprocess(t, func(t *testing.T) {
		prog, err := BuildFilter(FilterOptions{AllowInet: true, AllowUnix: true})
		if err != nil {
			t.Fatal(err)
		}
		insns, err := decodeBPF(prog)
		if err != nil {
			t.Fatal(err)
		}

		// One thread gets a filter of its own, without TSYNC: its filter
		// is no ancestor of the caller's, so TSYNC cannot cover it.
		rogue := make(chan int)
		hold := make(chan struct{})
		defer close(hold)
		go func() {
			runtime.LockOSThread()
			if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
				rogue <- -1
				return
			}
			fprog := unix.SockFprog{Len: uint16(len(insns)), Filter: &insns[0]}
			if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0,
				uintptr(unsafe.Pointer(&fprog))); errno != 0 {
				rogue <- -int(errno)
				return
			}
			rogue <- unix.Gettid()
			<-hold
		}()
		tid := <-rogue
		if tid <= 0 {
			t.Fatalf("could not filter the rogue thread: %d", tid)
		}

		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			t.Fatal(err)
		}
		err = jail.LoadFilter(prog)
		if err == nil {
			t.Fatal("LoadFilter succeeded although a thread cannot be synchronised")
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("thread %d ", tid)) {
			t.Errorf("LoadFilter error does not name thread %d: %v", tid, err)
		}
		t.Logf("LoadFilter: %v", err)
		if mode := seccompModes(t)[unix.Gettid()]; mode != "0" {
			t.Errorf("the calling thread has Seccomp %q after the failed TSYNC, want 0", mode)
		}
	})
}

// buildSeccompProbe compiles testdata/seccomp_probe.c into a static binary.
func buildSeccompProbe(t *testing.T) string {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		t.Skipf("the probe is x86_64 assembly; GOARCH is %s", runtime.GOARCH)
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: cannot build testdata/seccomp_probe.c")
	}
	src, err := filepath.Abs("testdata/seccomp_probe.c")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "seccomp_probe")
	out, err := exec.Command(gcc, "-static", "-nostdlib", "-ffreestanding", "-fno-stack-protector",
		"-no-pie", "-O2", "-o", bin, src).CombinedOutput()
	if err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

func TestSeccompForeignABIsKilled(t *testing.T) {
	probe := os.Getenv(seccompProbeEnv)
	if os.Getenv(seccompSubprocessEnv) == "" {
		probe = buildSeccompProbe(t)
		t.Setenv(seccompProbeEnv, probe)
	}
	runSeccompSubprocess(t, func(t *testing.T) {
		run := func(mode string) (*os.ProcessState, string) {
			out, err := exec.Command(probe, mode).CombinedOutput()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatalf("probe %s: %v", mode, err)
			}
			if exit != nil {
				return exit.ProcessState, string(out)
			}
			return nil, string(out)
		}

		// Controls: without the filter the probe runs every mode to the end.
		usable := map[string]bool{}
		for _, mode := range []string{"i386", "x32", "clone"} {
			ps, out := run(mode)
			if ps != nil {
				t.Logf("control probe %s did not exit 0 (%v, %q): not testing it", mode, ps, out)
				continue
			}
			t.Logf("control probe %s: %s", mode, strings.TrimSpace(out))
			usable[mode] = true
		}

		if !usable["i386"] && !usable["x32"] {
			t.Skip("the probe cannot make i386 or x32 syscalls on this machine even without a filter")
		}

		installSeccomp(t, FilterOptions{AllowInet: true, AllowUnix: true})
		for _, mode := range []string{"i386", "x32"} {
			if !usable[mode] {
				continue
			}
			ps, out := run(mode)
			var ws syscall.WaitStatus
			if ps != nil {
				ws, _ = ps.Sys().(syscall.WaitStatus)
			}
			if ps == nil || !ws.Signaled() || ws.Signal() != unix.SIGSYS {
				t.Errorf("probe %s under the filter: %v %q, want killed by SIGSYS", mode, ps, out)
			}
		}
		if usable["clone"] {
			ps, out := run("clone")
			if ps == nil || ps.ExitCode() != int(unix.EPERM) {
				t.Errorf("probe clone under the filter: %v %q, want exit %d (EPERM)", ps, out, unix.EPERM)
			}
		}
	})
}

func TestSeccompFamilyBlocks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		allowed []uint64
		blocks  int
	}{
		{"none allowed", nil, 1},
		{"unix", []uint64{unix.AF_UNIX}, 6},
		{"inet", []uint64{unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK}, 11},
		{"both", []uint64{unix.AF_UNIX, unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK}, 11},
		{"last", []uint64{maxSocketFamily}, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			allowed := map[uint64]bool{}
			for _, f := range tc.allowed {
				allowed[f] = true
			}
			blocks := familyBlocks(allowed)
			covered := map[uint64]int{}
			for _, b := range blocks {
				if b.size == 0 || b.size&(b.size-1) != 0 || b.base%b.size != 0 {
					t.Fatalf("block %+v is not an aligned power of two", b)
				}
				for f := b.base; f < b.base+b.size; f++ {
					covered[f]++
				}
			}
			for f := uint64(0); f <= maxSocketFamily+1; f++ {
				want := 1
				if allowed[f] || f > maxSocketFamily {
					want = 0
				}
				if covered[f] != want {
					t.Errorf("family %d covered %d times, want %d", f, covered[f], want)
				}
			}
			if len(blocks) != tc.blocks {
				t.Errorf("%d blocks, want %d (the fewest aligned ones)", len(blocks), tc.blocks)
			}
		})
	}
}

// TestSeccompNotifyFilter: the notify filter sends the metadata syscalls to
// its listener (a chmod waits for the answer and returns what the listener
// said, while an unrelated syscall runs untouched), and once the base filter
// is loaded on top, no further filter with a listener can be installed
// (one stacked by the call would take the notifications first), while a
// filter without one still can.
func TestSeccompNotifyFilter(t *testing.T) {
	runSeccompSubprocess(t, func(t *testing.T) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		notify, err := BuildNotifyFilter(NotifyOptions{Truncate: true})
		if err != nil {
			t.Fatal(err)
		}
		lst, err := jail.LoadNotifyFilter(notify)
		if err != nil {
			t.Fatalf("LoadNotifyFilter: %v", err)
		}
		// The listener answers every notification with EROFS and
		// counts them.
		seen := make(chan int32, 16)
		go func() {
			for {
				var n struct {
					ID         uint64
					Pid, Flags uint32
					Nr         int32
					Arch       uint32
					IP         uint64
					Args       [6]uint64
				}
				if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(lst), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&n))); e != 0 {
					return
				}
				seen <- n.Nr
				resp := struct {
					ID    uint64
					Val   int64
					Error int32
					Flags uint32
				}{ID: n.ID, Error: -int32(unix.EROFS)}
				_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(lst), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
			}
		}()
		if err := unix.Fchmodat(unix.AT_FDCWD, file, 0o644, 0); err != unix.EROFS {
			t.Errorf("chmod under the notify filter: %v, want the listener's EROFS", err)
		}
		if nr := <-seen; nr != unix.SYS_FCHMODAT {
			t.Errorf("the listener saw syscall %d, want fchmodat (%d)", nr, unix.SYS_FCHMODAT)
		}
		if err := unix.Truncate(file, 1); err != unix.EROFS {
			t.Errorf("truncate under the notify filter with Truncate: %v, want EROFS", err)
		}
		if _, err := os.ReadFile(file); err != nil {
			t.Errorf("control: an unrelated syscall failed under the notify filter: %v", err)
		}
		base, err := BuildFilter(BaseFilterOptions())
		if err != nil {
			t.Fatal(err)
		}
		if err := jail.LoadFilter(base); err != nil {
			t.Fatalf("the base filter on top of the notify filter: %v", err)
		}
		if _, err := jail.LoadNotifyFilter(notify); !errors.Is(err, unix.EPERM) {
			t.Errorf("a second filter with a listener after the base filter: %v, want EPERM", err)
		}
		narrow, err := BuildNarrowingFilter(FilterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := jail.LoadFilter(narrow); err != nil {
			t.Errorf("control: a filter without a listener after the base filter: %v", err)
		}
	})
}

// bpfMaxInsns is BPF_MAXINSNS, the kernel's limit on a classic BPF program.
const bpfMaxInsns = 4096

// decodeBPF turns a compiled program into its instructions, checked as
// jail.LoadFilter checks them.
func decodeBPF(prog []byte) ([]unix.SockFilter, error) {
	if err := jail.CheckBPF(prog); err != nil {
		return nil, err
	}
	insns := make([]unix.SockFilter, len(prog)/8)
	for i := range insns {
		b := prog[i*8:]
		insns[i] = unix.SockFilter{Code: binary.NativeEndian.Uint16(b[0:2]), Jt: b[2], Jf: b[3], K: binary.NativeEndian.Uint32(b[4:8])}
	}
	return insns, nil
}

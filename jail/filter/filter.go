// Package filter compiles the seccomp programs that package jail loads into
// every jailed call: the base filter, the narrowing filter for one call and
// the notify filter of a call without namespaces. It owns the rules (which
// syscalls and argument patterns are refused) and compiles them with
// libseccomp, through cgo.
//
// Only the supervisor links it. The jail programs load the compiled bytes
// with one seccomp(2) call (jail.LoadFilter, jail.LoadNotifyFilter) and link
// no C at all: a cgo start-up costs every jail process, two per call, about
// 2 ms of CPU on a slow VM. It must not load a filter into the calling
// process itself (tests do, in a subprocess) or decide policy: the
// supervisor chooses the FilterOptions from the call's Spec.
package filter

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	seccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"

	"brig/jail"
)

// The syscall filter.
//
// The filter allows everything by default and refuses a fixed list of
// dangerous syscalls, plus a few argument patterns of otherwise useful ones
// (socket, socketpair, ioctl, clone, personality). It is compiled once by the
// supervisor with libseccomp (BuildFilter) and installed in the jail child
// from raw bytes with one seccomp(2) call (jail.LoadFilter), so the child needs no
// libseccomp at all.
//
// Only the native architecture (x86_64) is in the filter. libseccomp then
// sends every other audit architecture (i386 through int 0x80 or a 32-bit
// code segment) and every syscall number with the x32 bit (0x40000000) set
// to the bad-arch action, KILL_PROCESS, so no explicit x32 rule is needed.
// The exported program starts (libseccomp 2.5.4):
//
//	     ld  [4]                     ; arch
//	     jne #AUDIT_ARCH_X86_64, kill
//	     ld  [0]                     ; nr
//	     jge #0x40000000, x32, rules
//	x32: jne #0xffffffff, kill       ; nr -1 goes on; the kernel answers ENOSYS
//
// TestSeccompForeignABIsKilled checks both with a C probe.

// FilterOptions selects a variant of the jail's syscall filter.
//
// Neither option lets through raw sockets (other than netlink's SOCK_RAW),
// packet sockets (AF_PACKET, or SOCK_PACKET in any family) or MPTCP, and the
// zero value permits no socket(2) family at all.
type FilterOptions struct {
	// AllowInet permits socket(2) for AF_INET, AF_INET6 and AF_NETLINK with protocol NETLINK_ROUTE (0).
	AllowInet bool
	// AllowUnix permits socket(2) for AF_UNIX. socketpair(AF_UNIX) is always permitted.
	AllowUnix bool
	// TCPOnly narrows AllowInet to TCP: AF_INET and AF_INET6 sockets of
	// type SOCK_STREAM with protocol 0 or IPPROTO_TCP (no UDP, so no DNS
	// to any resolver; no SCTP), and no TCP Fast Open (sendto, sendmsg
	// or sendmmsg with MSG_FASTOPEN), whose implicit connect Landlock's
	// TCP rules do not see. For a call on the host's network that may
	// reach only the egress proxy's port.
	TCPOnly bool
}

// deniedSyscalls are refused with EPERM whatever their arguments. A name
// libseccomp does not know on this architecture is skipped silently.
var deniedSyscalls = []string{
	// Reading or writing other processes.
	"ptrace", "process_vm_readv", "process_vm_writev",

	// The mount table, the root directory and namespaces.
	"mount", "umount2", "pivot_root", "chroot", "unshare", "setns",
	"open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
	"mount_setattr",

	// The kernel keyring.
	"keyctl", "add_key", "request_key",

	// Loading code into the kernel, or observing it.
	"bpf", "perf_event_open", "kexec_load", "kexec_file_load",
	"init_module", "finit_module", "delete_module",

	// fanotify reports names and changes in directories the call cannot
	// open (unprivileged since Linux 5.13).
	"fanotify_init", "fanotify_mark",

	// io_uring performs syscalls the filter never sees.
	"io_uring_setup", "io_uring_enter", "io_uring_register",

	// Assorted system administration and known exploitation helpers.
	"userfaultfd", "name_to_handle_at", "open_by_handle_at", "acct",
	"swapon", "swapoff", "reboot", "syslog", "quotactl", "vhangup",
	"iopl", "ioperm", "uselib",
}

// cloneNamespaceFlags are the clone(2) flags that create a namespace.
// CLONE_NEWTIME (0x80) is deliberately absent: for clone(2) that bit lies in
// CSIGNAL (the exit signal byte), and the kernel derives the flags as
// lower_32_bits(flags) & ~CSIGNAL, so clone(2) cannot create a time
// namespace; only clone3 (refused) and unshare (refused) can.
var cloneNamespaceFlags = []struct {
	name string
	bit  uint64
}{
	{"CLONE_NEWNS", unix.CLONE_NEWNS},
	{"CLONE_NEWCGROUP", unix.CLONE_NEWCGROUP},
	{"CLONE_NEWUTS", unix.CLONE_NEWUTS},
	{"CLONE_NEWIPC", unix.CLONE_NEWIPC},
	{"CLONE_NEWUSER", unix.CLONE_NEWUSER},
	{"CLONE_NEWPID", unix.CLONE_NEWPID},
	{"CLONE_NEWNET", unix.CLONE_NEWNET},
}

// deniedIoctls are the ioctl requests refused with EPERM. The kernel reads
// the request as an unsigned int, so only its low 32 bits are compared.
var deniedIoctls = []struct {
	name    string
	request uint64
}{
	{"TIOCSTI", unix.TIOCSTI},     // inject input into a terminal
	{"TIOCLINUX", unix.TIOCLINUX}, // console tricks, including selection paste
}

// allowedPersonaBits are PER_LINUX32 (0x8) and UNAME26 (0x20000).
// personality(2) may set any subset of them, PER_LINUX (0) included, or ask
// for the current persona (0xffffffff); everything else is refused, notably
// READ_IMPLIES_EXEC (0x400000) and ADDR_NO_RANDOMIZE (0x40000).
const allowedPersonaBits = 0x20008

// Socket families are small integers; the kernel refuses anything at or above
// AF_MAX, and this bound leaves room for families newer kernels may add.
// familyBlocks needs maxSocketFamily+1 to be a power of two.
const maxSocketFamily = 63

const (
	socketTypeMask = 0xf // SOCK_TYPE_MASK: the type without SOCK_NONBLOCK and SOCK_CLOEXEC
	lowWord        = 0xffffffff
)

// cond is one comparison on a syscall argument.
type cond struct {
	arg  uint
	op   seccomp.ScmpCompareOp
	a, b uint64 // for CompareMaskedEqual: a is the mask, b the value
}

func (c cond) String() string {
	switch c.op {
	case seccomp.CompareMaskedEqual:
		return fmt.Sprintf("a%d&%#x==%#x", c.arg, c.a, c.b)
	case seccomp.CompareEqual:
		return fmt.Sprintf("a%d==%#x", c.arg, c.a)
	case seccomp.CompareNotEqual:
		return fmt.Sprintf("a%d!=%#x", c.arg, c.a)
	case seccomp.CompareGreater:
		return fmt.Sprintf("a%d>%#x", c.arg, c.a)
	}
	return fmt.Sprintf("a%d %v %#x %#x", c.arg, c.op, c.a, c.b)
}

func argEq(arg uint, v uint64) cond { return cond{arg: arg, op: seccomp.CompareEqual, a: v} }
func argNe(arg uint, v uint64) cond { return cond{arg: arg, op: seccomp.CompareNotEqual, a: v} }
func argGt(arg uint, v uint64) cond { return cond{arg: arg, op: seccomp.CompareGreater, a: v} }
func argMasked(arg uint, mask, v uint64) cond {
	return cond{arg: arg, op: seccomp.CompareMaskedEqual, a: mask, b: v}
}

// rule refuses syscall with errno when all of its conditions hold.
// libseccomp allows at most one condition per argument in a rule; rules on
// the same syscall are alternatives.
type rule struct {
	syscall string
	errno   unix.Errno
	conds   []cond
	// number is the x86_64 syscall number, for syscalls newer than the
	// libseccomp in use (it cannot resolve their names).
	number int
}

func (r rule) String() string {
	parts := make([]string, len(r.conds))
	for i, c := range r.conds {
		parts[i] = c.String()
	}
	return fmt.Sprintf("%s(%s) -> %s", r.syscall, strings.Join(parts, ", "), unix.ErrnoName(r.errno))
}

// filterRules lists every rule of the filter for opts, in a fixed order.
// It is pure data: no libseccomp involved.
func filterRules(opts FilterOptions) []rule {
	var rules []rule
	for _, name := range deniedSyscalls {
		rules = append(rules, rule{syscall: name, errno: unix.EPERM})
	}

	// clone3 passes its flags in memory, which seccomp cannot read. ENOSYS
	// makes glibc (and Go) fall back to clone(2), whose flags it can.
	rules = append(rules, rule{syscall: "clone3", errno: unix.ENOSYS})
	for _, f := range cloneNamespaceFlags {
		// x86_64 clone(flags, stack, parent_tid, child_tid, tls).
		rules = append(rules, rule{syscall: "clone", errno: unix.EPERM,
			conds: []cond{argMasked(0, f.bit, f.bit)}})
	}

	for _, ioc := range deniedIoctls {
		rules = append(rules, rule{syscall: "ioctl", errno: unix.EPERM,
			conds: []cond{argMasked(1, lowWord, ioc.request)}})
	}

	for _, p := range personaDenyPatterns(allowedPersonaBits) {
		rules = append(rules, rule{syscall: "personality", errno: unix.EPERM,
			conds: []cond{argMasked(0, p.mask, p.value)}})
	}

	rules = append(rules, socketRules(opts)...)
	if opts.AllowInet && opts.TCPOnly {
		rules = append(rules, tcpOnlyRules()...)
	}
	rules = append(rules, socketpairRules()...)
	if !opts.AllowUnix {
		rules = append(rules, dgramPairRules()...)
	}
	rules = append(rules, newMountRules()...)
	rules = append(rules, otherProcessRules()...)
	rules = append(rules, setIDModeRules()...)
	rules = append(rules, xattrRules()...)
	rules = append(rules, listenerRule())
	return rules
}

// listenerRule refuses installing a seccomp filter with a notification
// listener (SECCOMP_FILTER_FLAG_NEW_LISTENER). Without namespaces the
// supervisor decides the metadata syscalls through its own listener
// (BuildNotifyFilter); a filter the call stacked on top that also returned
// SECCOMP_RET_USER_NOTIF would take the notification first, and its
// listener (the call itself) could let the syscall through. Filters
// without a listener stay allowed.
func listenerRule() rule {
	return rule{syscall: "seccomp", errno: unix.EPERM, conds: []cond{
		argEq(0, unix.SECCOMP_SET_MODE_FILTER),
		argMasked(1, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER),
	}}
}

// NotifyOptions selects the syscalls of the notify filter.
type NotifyOptions struct {
	// Truncate adds truncate(2), which Landlock governs only from ABI 3.
	Truncate bool
}

// notifySyscalls change a file's metadata, which Landlock (up to ABI 7)
// does not govern: mode, owner, times. Names this architecture lacks
// (arm64 has only the *at forms) are skipped.
var notifySyscalls = []string{
	"chmod", "fchmod", "fchmodat",
	"chown", "lchown", "fchown", "fchownat",
	"utime", "utimes", "futimesat", "utimensat",
}

// BuildNotifyFilter compiles the filter that sends every metadata syscall
// (notifySyscalls; truncate too when asked) to the supervisor through a
// seccomp user notification: without a mount namespace, nothing else stops
// a call from changing the mode, owner or times of a file outside its
// write grant (chmod 666 ~/.config/brig/config.toml). The supervisor
// performs the operation itself when the file lies in a write grant, and
// refuses it otherwise (see supervisor/metadata.go). It is loaded before
// the base filter (LoadNotifyFilter), whose refusals (setuid mode bits)
// take precedence over a notification.
func BuildNotifyFilter(o NotifyOptions) ([]byte, error) {
	names := notifySyscalls
	if o.Truncate {
		names = append(slices.Clone(names), "truncate")
	}
	filter, err := seccomp.NewFilter(seccomp.ActAllow)
	if err != nil {
		return nil, fmt.Errorf("filter: new notify filter: %w", err)
	}
	defer filter.Release()
	if err := filter.SetBadArchAction(seccomp.ActKillProcess); err != nil {
		return nil, fmt.Errorf("filter: set bad-arch action: %w", err)
	}
	for _, name := range names {
		nr, err := seccomp.GetSyscallFromName(name)
		if err != nil || nr < 0 {
			continue
		}
		if err := filter.AddRule(nr, seccomp.ActNotify); err != nil {
			return nil, fmt.Errorf("filter: notify rule %s: %w", name, err)
		}
	}
	return exportBPF(filter)
}

// xattrRules refuse setting or removing extended attributes: Landlock (up
// to ABI 7) does not govern them, so without a mount namespace a call could
// change them on any file it can name. EOPNOTSUPP reads to programs as "this
// filesystem has none", which they handle (cp -a, tar, rsync).
func xattrRules() []rule {
	var rules []rule
	for _, name := range []string{"setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr"} {
		rules = append(rules, rule{syscall: name, errno: unix.EOPNOTSUPP})
	}
	// setxattrat and removexattrat (Linux 6.13) are newer than libseccomp 2.5.
	return append(rules,
		rule{syscall: "setxattrat", errno: unix.EOPNOTSUPP, number: 463},
		rule{syscall: "removexattrat", errno: unix.EOPNOTSUPP, number: 466},
	)
}

// otherProcessRules keep resource and scheduling changes to the caller
// itself: without a PID namespace, prlimit or setpriority could reach the
// supervisor or any process of the same user (Landlock scopes signals, not
// these). A pid/who of 0 means "myself".
func otherProcessRules() []rule {
	return []rule{
		{syscall: "prlimit64", errno: unix.EPERM, conds: []cond{argNe(0, 0)}},
		{syscall: "setpriority", errno: unix.EPERM, conds: []cond{argNe(0, unix.PRIO_PROCESS)}},
		{syscall: "setpriority", errno: unix.EPERM, conds: []cond{argNe(1, 0)}},
		{syscall: "ioprio_set", errno: unix.EPERM, conds: []cond{argNe(1, 0)}},
		{syscall: "sched_setscheduler", errno: unix.EPERM, conds: []cond{argNe(0, 0)}},
		{syscall: "sched_setparam", errno: unix.EPERM, conds: []cond{argNe(0, 0)}},
		{syscall: "sched_setattr", errno: unix.EPERM, conds: []cond{argNe(0, 0)}},
	}
}

// setIDModeRules refuse setuid and setgid mode bits on files: a root call
// could otherwise leave a setuid-root program behind for anyone to run
// later, and Landlock (up to ABI 7) does not govern chmod at all. The mode
// argument's position differs per syscall; openat2 and fchmodat2 carry it
// where seccomp cannot look (a struct) or libseccomp 2.5 cannot name, so
// they are refused with ENOSYS and callers fall back to openat/fchmodat.
func setIDModeRules() []rule {
	var rules []rule
	for _, m := range []struct {
		syscall string
		arg     uint
	}{
		{"chmod", 1}, {"fchmod", 1}, {"fchmodat", 2},
		{"open", 2}, {"openat", 3}, {"creat", 1},
		{"mknod", 1}, {"mknodat", 2},
	} {
		for _, bit := range []uint64{unix.S_ISUID, unix.S_ISGID} {
			rules = append(rules, rule{syscall: m.syscall, errno: unix.EPERM, conds: []cond{argMasked(m.arg, bit, bit)}})
		}
	}
	return append(rules,
		rule{syscall: "openat2", errno: unix.ENOSYS},
		rule{syscall: "fchmodat2", errno: unix.ENOSYS, number: 452},
	)
}

// socketRules restricts socket(domain, type, protocol).
func socketRules(opts FilterOptions) []rule {
	allowed := map[uint64]bool{}
	if opts.AllowUnix {
		allowed[unix.AF_UNIX] = true
	}
	if opts.AllowInet {
		allowed[unix.AF_INET] = true
		allowed[unix.AF_INET6] = true
		allowed[unix.AF_NETLINK] = true
	}
	rules := familyRules("socket", allowed)

	// Raw and packet sockets, whatever the family (socket(AF_INET,
	// SOCK_PACKET) creates an AF_PACKET socket), except SOCK_RAW for
	// netlink: there it is the ordinary type (netlink treats SOCK_RAW and
	// SOCK_DGRAM alike) and the one iproute2, glibc's getaddrinfo and Go's
	// net.Interfaces use; the protocol rule below keeps netlink to
	// NETLINK_ROUTE.
	rules = append(rules,
		rule{syscall: "socket", errno: unix.EPERM,
			conds: []cond{argNe(0, unix.AF_NETLINK), argMasked(1, socketTypeMask, unix.SOCK_RAW)}},
		rule{syscall: "socket", errno: unix.EPERM,
			conds: []cond{argMasked(1, socketTypeMask, unix.SOCK_PACKET)}},
	)
	if opts.AllowInet {
		// Netlink is allowed for NETLINK_ROUTE only (addresses, routes).
		// A 64-bit compare: a protocol with high bits set is refused too.
		rules = append(rules, rule{syscall: "socket", errno: unix.EPERM,
			conds: []cond{argEq(0, unix.AF_NETLINK), argNe(2, unix.NETLINK_ROUTE)}})
		// Landlock's TCP rules do not cover MPTCP. EPROTONOSUPPORT is what a
		// kernel without MPTCP answers; Go (which tries MPTCP first for
		// listeners since 1.24) then stops trying and uses plain TCP.
		for _, fam := range []uint64{unix.AF_INET, unix.AF_INET6} {
			rules = append(rules, rule{syscall: "socket", errno: unix.EPROTONOSUPPORT,
				conds: []cond{argEq(0, fam), argMasked(2, lowWord, unix.IPPROTO_MPTCP)}})
		}
	}
	return rules
}

// tcpOnlyRules refuse, for AF_INET and AF_INET6, every socket type but
// SOCK_STREAM and every protocol above IPPROTO_TCP (protocols 1 to 5 are no
// stream protocol: the kernel refuses them itself), and refuse TCP Fast
// Open in every family: a sendto(MSG_FASTOPEN) connects, and Landlock (up
// to ABI 7 at least) checks connect(2) only, so it would reach any port.
func tcpOnlyRules() []rule {
	var rules []rule
	for _, fam := range []uint64{unix.AF_INET, unix.AF_INET6} {
		// The types other than SOCK_STREAM (1) in the low four bits, as
		// aligned blocks: 0, 2-3, 4-7, 8-15.
		for _, b := range []struct{ mask, value uint64 }{{0xf, 0}, {0xe, 2}, {0xc, 4}, {0x8, 8}} {
			rules = append(rules, rule{syscall: "socket", errno: unix.EPERM,
				conds: []cond{argEq(0, fam), argMasked(1, b.mask, b.value)}})
		}
		// EPROTONOSUPPORT, as for MPTCP (262) in socketRules: Go's
		// listeners try MPTCP first and fall back to TCP.
		rules = append(rules, rule{syscall: "socket", errno: unix.EPROTONOSUPPORT,
			conds: []cond{argEq(0, fam), argGt(2, unix.IPPROTO_TCP)}})
	}
	for _, f := range []struct {
		name string
		arg  uint
	}{{"sendto", 3}, {"sendmsg", 2}, {"sendmmsg", 3}} {
		rules = append(rules, rule{syscall: f.name, errno: unix.EPERM,
			conds: []cond{argMasked(f.arg, unix.MSG_FASTOPEN, unix.MSG_FASTOPEN)}})
	}
	return rules
}

// socketpairRules allows socketpair(AF_UNIX, ...) only.
func socketpairRules() []rule {
	return familyRules("socketpair", map[uint64]bool{unix.AF_UNIX: true})
}

// dgramPairRules refuse a pair of Unix datagram sockets to a call without
// Unix sockets: unlike a stream or seqpacket pair, which stays connected
// to itself, a datagram socket can sendto (or connect to) any socket path
// it can name, such as the host's /dev/log or the journal's socket, which
// Landlock before ABI 9 does not confine.
// AF_UNIX takes SOCK_RAW as SOCK_DGRAM.
func dgramPairRules() []rule {
	var rules []rule
	for _, t := range []uint64{unix.SOCK_DGRAM, unix.SOCK_RAW} {
		rules = append(rules, rule{syscall: "socketpair", errno: unix.EPERM,
			conds: []cond{argEq(0, unix.AF_UNIX), argMasked(1, socketTypeMask, t)}})
	}
	return rules
}

// newMountRules refuse the mount-family syscalls newer than libseccomp
// 2.5, by number (the same on every architecture since Linux 5.1): the
// mount table's listing (statmount, listmount) and open_tree_attr.
func newMountRules() []rule {
	return []rule{
		{syscall: "statmount", errno: unix.EPERM, number: 457},
		{syscall: "listmount", errno: unix.EPERM, number: 458},
		{syscall: "open_tree_attr", errno: unix.EPERM, number: 467},
	}
}

// familyRules refuses, with EAFNOSUPPORT, every address family of syscall
// (argument 0) that is not in allowed. The default action being ALLOW, it
// covers the refused families 0..maxSocketFamily with as few aligned blocks
// as possible (a masked compare each: a short program is cheaper to load and
// to run) and refuses anything above with a 64-bit compare, which also
// catches an allowed family with high bits set (the kernel would ignore
// them: the family is an int). The blocks' 64-bit masks match only values
// whose high bits are clear.
func familyRules(syscall string, allowed map[uint64]bool) []rule {
	var rules []rule
	for _, b := range familyBlocks(allowed) {
		rules = append(rules, rule{syscall: syscall, errno: unix.EAFNOSUPPORT,
			conds: []cond{argMasked(0, ^(b.size - 1), b.base)}})
	}
	return append(rules, rule{syscall: syscall, errno: unix.EAFNOSUPPORT,
		conds: []cond{argGt(0, maxSocketFamily)}})
}

// familyBlock is the aligned range [base, base+size) of families; size is
// a power of two and base a multiple of it.
type familyBlock struct{ base, size uint64 }

// familyBlocks splits the families 0..maxSocketFamily that are not allowed
// into the largest aligned blocks that contain no allowed family.
func familyBlocks(allowed map[uint64]bool) []familyBlock {
	var out []familyBlock
	var split func(base, size uint64)
	split = func(base, size uint64) {
		clean := true
		for f := base; f < base+size; f++ {
			if allowed[f] {
				clean = false
				break
			}
		}
		switch {
		case clean:
			out = append(out, familyBlock{base, size})
		case size > 1:
			split(base, size/2)
			split(base+size/2, size/2)
		}
	}
	split(0, maxSocketFamily+1)
	return out
}

// maskedValue matches a 32-bit value v when v&mask == value.
type maskedValue struct{ mask, value uint64 }

// personaDenyPatterns returns patterns matching exactly the 32-bit personas
// to refuse: those with a bit outside allowedBits, except the query value
// 0xffffffff. (The kernel reads the persona as an unsigned int, so the high
// 32 bits of the argument are ignored here as they are there.)
//
// A rule can test an argument only once (libseccomp 2.5.4 refuses a
// second condition on it with EINVAL), so "has a bit outside allowedBits
// and is not all ones" is spelled as a union of two-bit patterns. Let O be
// the bits outside allowedBits, taken in a cycle o0, o1, ..., o0. A refused
// value either has O bits both set and clear, and then some set O bit is
// followed in the cycle by a clear one (pattern o_i=1, o_i+1=0), or it has
// every O bit set and some allowed bit clear (pattern o0=1, a=0). An allowed
// value has no O bit set, or is all ones, and matches neither kind.
func personaDenyPatterns(allowedBits uint32) []maskedValue {
	var outside, inside []uint64
	for i := 0; i < 32; i++ {
		bit := uint64(1) << i
		if allowedBits&uint32(bit) != 0 {
			inside = append(inside, bit)
		} else {
			outside = append(outside, bit)
		}
	}
	if len(outside) == 0 {
		return nil // every persona allowed
	}
	var pats []maskedValue
	for i, set := range outside {
		next := outside[(i+1)%len(outside)]
		pats = append(pats, maskedValue{mask: set | next, value: set})
	}
	for _, in := range inside {
		pats = append(pats, maskedValue{mask: outside[0] | in, value: outside[0]})
	}
	return pats
}

// BuildFilter compiles the filter with libseccomp and returns the classic BPF
// program as raw bytes (an array of struct sock_filter, 8 bytes each, native endian).
//
// It does not install anything: the result is meant for jail.LoadFilter, usually
// in another process. The same options always give the same bytes.
func BuildFilter(opts FilterOptions) ([]byte, error) {
	return compileRules(filterRules(opts))
}

// BaseFilterOptions are the options of the base filter: the most
// permissive variant, which every jail child loads before its call is known
// (see BuildNarrowingFilter).
func BaseFilterOptions() FilterOptions { return FilterOptions{AllowInet: true, AllowUnix: true} }

// BuildNarrowingFilter compiles what must be stacked on the base filter
// (BuildFilter(BaseFilterOptions())) for the two together to refuse what
// BuildFilter(opts) refuses: socket(2) for the families opts does not
// allow. It returns nil when opts allow as much as the base does.
//
// Why two filters: loading one costs the kernel a pass over every syscall
// number (its per-syscall cache) plus a JIT compilation, about 150 µs for
// the full filter on a workstation. The base filter is loaded while a
// prewarmed child waits; only this short one is loaded on the call's clock.
// The base filter already refuses a family with high bits set (the kernel
// reads the family as an int), so exact compares are enough here.
func BuildNarrowingFilter(opts FilterOptions) ([]byte, error) {
	rules := narrowingRules(opts)
	if len(rules) == 0 {
		return nil, nil
	}
	return compileRules(rules)
}

// narrowingRules refuse the socket families the base filter allows and opts
// do not, with the errno BuildFilter(opts) gives them, and, for TCPOnly,
// what tcpOnlyRules refuse.
func narrowingRules(opts FilterOptions) []rule {
	var families []uint64
	if !opts.AllowUnix {
		families = append(families, unix.AF_UNIX)
	}
	if !opts.AllowInet {
		families = append(families, unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK)
	}
	var rules []rule
	for _, f := range families {
		rules = append(rules, rule{syscall: "socket", errno: unix.EAFNOSUPPORT, conds: []cond{argEq(0, f)}})
	}
	if !opts.AllowUnix {
		rules = append(rules, dgramPairRules()...)
	}
	if opts.AllowInet && opts.TCPOnly {
		rules = append(rules, tcpOnlyRules()...)
	}
	return rules
}

// compileRules compiles rules into a classic BPF program whose default
// action is to allow.
func compileRules(rules []rule) ([]byte, error) {
	filter, err := seccomp.NewFilter(seccomp.ActAllow)
	if err != nil {
		return nil, fmt.Errorf("filter: new filter: %w", err)
	}
	defer filter.Release()

	// NewFilter holds the native architecture only; make anything else fatal.
	if err := filter.SetBadArchAction(seccomp.ActKillProcess); err != nil {
		return nil, fmt.Errorf("filter: set bad-arch action: %w", err)
	}

	// A binary tree of syscall numbers instead of a linear list: the kernel
	// prepares its per-syscall cache by running the program for every
	// syscall number when the filter is loaded, and a tree makes that (and
	// every filtered syscall) logarithmic instead of linear.
	if err := filter.SetOptimize(2); err != nil {
		return nil, fmt.Errorf("filter: binary-tree optimisation: %w", err)
	}
	for _, r := range rules {
		if err := addRule(filter, r); err != nil {
			return nil, err
		}
	}
	return exportBPF(filter)
}

// addRule adds r to filter. A syscall name libseccomp does not know, or
// knows only as a pseudo-syscall (negative number) on this architecture, is
// skipped without error.
func addRule(filter *seccomp.ScmpFilter, r rule) error {
	nr, err := seccomp.GetSyscallFromName(r.syscall)
	if (err != nil || nr < 0) && r.number > 0 {
		nr, err = seccomp.ScmpSyscall(r.number), nil
	}
	if err != nil || nr < 0 {
		return nil
	}
	action := seccomp.ActErrno.SetReturnCode(int16(r.errno))
	if len(r.conds) == 0 {
		err = filter.AddRule(nr, action)
	} else {
		conds := make([]seccomp.ScmpCondition, len(r.conds))
		for i, c := range r.conds {
			values := []uint64{c.a}
			if c.op == seccomp.CompareMaskedEqual {
				values = append(values, c.b)
			}
			conds[i], err = seccomp.MakeCondition(c.arg, c.op, values...)
			if err != nil {
				return fmt.Errorf("filter: rule %v: condition %v: %w", r, c, err)
			}
		}
		err = filter.AddRuleConditional(nr, action, conds)
	}
	if err != nil {
		return fmt.Errorf("filter: rule %v: %w", r, err)
	}
	return nil
}

// exportBPF writes the compiled program into a memfd and reads it back
// (ExportBPFMem needs libseccomp 2.6; Debian 12 ships 2.5.4).
func exportBPF(filter *seccomp.ScmpFilter) ([]byte, error) {
	fd, err := unix.MemfdCreate("brig-seccomp-bpf", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("filter: memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "brig-seccomp-bpf")
	defer f.Close()

	if err := filter.ExportBPF(f); err != nil {
		return nil, fmt.Errorf("filter: export BPF: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("filter: rewind BPF memfd: %w", err)
	}
	prog, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("filter: read BPF memfd: %w", err)
	}
	if err := jail.CheckBPF(prog); err != nil {
		return nil, fmt.Errorf("filter: libseccomp exported a bad program: %w", err)
	}
	return prog, nil
}

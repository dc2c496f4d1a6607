package jail

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Loading the syscall filter. The filter is compiled by the supervisor
// (package jail/filter, with libseccomp) and loaded here from raw bytes with
// one seccomp(2) call, so the jail programs link no libseccomp and no C.

// bpfMaxInsns is BPF_MAXINSNS, the kernel's limit on a classic BPF program.
const bpfMaxInsns = 4096

const sockFilterSize = int(unsafe.Sizeof(unix.SockFilter{}))

// CheckBPF reports whether prog is a classic BPF program the kernel could
// load: whole instructions, at least one, at most BPF_MAXINSNS.
func CheckBPF(prog []byte) error {
	_, err := decodeBPF(prog)
	return err
}

// decodeBPF turns raw bytes into sock_filter instructions.
func decodeBPF(prog []byte) ([]unix.SockFilter, error) {
	if len(prog) == 0 {
		return nil, errors.New("empty BPF program")
	}
	if len(prog)%sockFilterSize != 0 {
		return nil, fmt.Errorf("BPF program is %d bytes, not a multiple of %d", len(prog), sockFilterSize)
	}
	n := len(prog) / sockFilterSize
	if n > bpfMaxInsns {
		return nil, fmt.Errorf("BPF program has %d instructions, more than the kernel's %d", n, bpfMaxInsns)
	}
	insns := make([]unix.SockFilter, n)
	for i := range insns {
		b := prog[i*sockFilterSize:]
		insns[i] = unix.SockFilter{
			Code: binary.NativeEndian.Uint16(b[0:2]),
			Jt:   b[2],
			Jf:   b[3],
			K:    binary.NativeEndian.Uint32(b[4:8]),
		}
	}
	return insns, nil
}

// LoadNotifyFilter installs a notify filter (filter.BuildNotifyFilter, package jail/filter) on every
// thread, like LoadFilter, and returns its listener: the descriptor on
// which the supervisor receives the notifications and answers them.
func LoadNotifyFilter(prog []byte) (int, error) {
	insns, err := decodeBPF(prog)
	if err != nil {
		return -1, fmt.Errorf("jail: seccomp: load the notify filter: %w", err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); err != nil || nnp != 1 {
		return -1, fmt.Errorf("jail: seccomp: refusing to load the notify filter: no_new_privs is not set on the calling thread: %w", unix.EACCES)
	}
	fprog := unix.SockFprog{Len: uint16(len(insns)), Filter: &insns[0]}
	// TSYNC with a listener needs TSYNC_ESRCH (Linux 5.7): the return
	// value is the listener, so a thread that cannot be synchronised is
	// reported as ESRCH instead of by its id.
	flags := unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_TSYNC | unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH
	fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, uintptr(flags), uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(insns)
	if errno != 0 {
		return -1, fmt.Errorf("jail: seccomp(SECCOMP_SET_MODE_FILTER, NEW_LISTENER|TSYNC|TSYNC_ESRCH): %w", errno)
	}
	unix.CloseOnExec(int(fd))
	return int(fd), nil
}

// LoadFilter installs a raw BPF program (as returned by filter.BuildFilter) on every
// thread of the calling process: seccomp(SECCOMP_SET_MODE_FILTER,
// SECCOMP_FILTER_FLAG_TSYNC, &sock_fprog) via golang.org/x/sys/unix raw syscall.
// It must not call libseccomp (the jail child loads bytes compiled elsewhere).
// no_new_privs must already be set; it returns a wrapped error otherwise.
// If TSYNC fails (returns a thread id > 0), return an error naming that thread.
//
// no_new_privs is a per-thread flag: the caller must set it on the thread
// that calls LoadFilter (lock the goroutine with runtime.LockOSThread around
// both); TSYNC then sets it, with the filter, on every other thread. Without
// it LoadFilter installs nothing and its error wraps EACCES, even for a
// caller with CAP_SYS_ADMIN (which the kernel would otherwise let through).
// The filter is permanent: it cannot be removed, only stacked upon.
func LoadFilter(prog []byte) error {
	insns, err := decodeBPF(prog)
	if err != nil {
		return fmt.Errorf("jail: seccomp: load filter: %w", err)
	}

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	if err != nil {
		return fmt.Errorf("jail: seccomp: prctl(PR_GET_NO_NEW_PRIVS): %w", err)
	}
	if nnp != 1 {
		return fmt.Errorf("jail: seccomp: refusing to load filter: no_new_privs is not set on the calling thread: %w", unix.EACCES)
	}

	fprog := unix.SockFprog{Len: uint16(len(insns)), Filter: &insns[0]}
	tid, _, errno := unix.Syscall(unix.SYS_SECCOMP,
		unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(insns)
	if errno != 0 {
		return fmt.Errorf("jail: seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC): %w", errno)
	}
	if tid != 0 {
		// No thread got the filter, the caller included.
		return fmt.Errorf("jail: seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC): thread %d cannot be synchronised (it has a seccomp filter of its own); no filter was installed", tid)
	}
	return nil
}

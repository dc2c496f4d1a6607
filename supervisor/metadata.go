package supervisor

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"brig/jail"
	"brig/jail/filter"
)

// Metadata of files outside a call's write grant, without namespaces.
//
// Landlock (up to ABI 7) governs reading and writing files, not changing
// their mode, owner or times; with namespaces everything outside the write
// grants is a read-only mount, which refuses those too. Without, a call
// could chmod 666 ~/.config/brig/config.toml or chmod 755 ~/.ssh. So the
// jail sends every such syscall (filter.BuildNotifyFilter) to the supervisor
// as a seccomp user notification, and the supervisor, not the call,
// performs it: it resolves the path the way the call would (from the
// call's working directory or directory descriptor), checks that what it
// resolved lies in a write grant of the Spec and is neither protected nor
// hidden nor a device, and then changes that very file through the
// descriptor it resolved, so nothing the call does meanwhile (rewriting
// the path in its memory, swapping a symbolic link) can redirect it. It
// answers the call with the result; outside the grant the answer is
// EPERM. It acts with the call's own credentials: the call's uid and
// groups are the supervisor's, and a root supervisor serves from a thread
// whose effective capabilities are dropped, as the call's are.
//
// Reading the path from the call's memory needs ptrace access to it (Yama
// ptrace_scope 0 or 1, as for any parent); where that is refused, every
// metadata change fails with EPERM (fail closed).

// notifyFilter returns the compiled notify filter for this kernel.
func (s *Supervisor) notifyFilter() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.notify != nil {
		return s.notify, nil
	}
	b, err := filter.BuildNotifyFilter(filter.NotifyOptions{Truncate: s.landlockABI < 3})
	if err != nil {
		return nil, fmt.Errorf("%w: compile the seccomp notify filter: %v", jail.ErrUnenforceable, err)
	}
	s.notify = b
	return b, nil
}

// The kernel's seccomp notification structures (linux/seccomp.h).
type seccompData struct {
	Nr   int32
	Arch uint32
	IP   uint64
	Args [6]uint64
}

type seccompNotif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Data  seccompData
}

type seccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// metadataGuard serves one call's notifications until every process of the
// call is gone (the listener then reports a hang-up) or stop is called.
type metadataGuard struct {
	lst  *os.File
	wake int // eventfd: stop
	done chan struct{}
}

// serveMetadata starts serving the notifications of lst for a call under
// spec.
func (s *Supervisor) serveMetadata(lst *os.File, spec jail.Spec) (*metadataGuard, error) {
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		lst.Close()
		return nil, fmt.Errorf("eventfd for the notify listener: %w", err)
	}
	g := &metadataGuard{lst: lst, wake: wake, done: make(chan struct{})}
	h := &metaHandler{s: s, spec: spec, lst: int(lst.Fd())}
	go func() {
		defer close(g.done)
		// The thread is this goroutine's alone while it serves; a root
		// supervisor drops its effective capabilities on it and raises
		// them again before the thread goes back to the others. It must
		// go back, not end with the goroutine: a thread that forked a
		// jail's init is its parent for the parent-death signal, and
		// ending it would stop that call.
		runtime.LockOSThread()
		restore, ok := dropEffectiveCaps()
		h.asCaller = ok
		h.serve(wake)
		if restore() {
			runtime.UnlockOSThread()
		} else {
			s.log.Error("could not raise the capabilities of a thread that served a call again; the thread is kept out of use")
			select {} // parked for good, with the capabilities it has
		}
	}()
	return g, nil
}

// metadataFor receives the listener of c's notify filter and serves it
// for a call under spec.
func (s *Supervisor) metadataFor(c *child, spec jail.Spec) (*metadataGuard, error) {
	lst, err := c.parent.Listener()
	if err != nil {
		return nil, &jail.StageError{Stage: jail.StageSeccomp, Msg: err.Error()}
	}
	return s.serveMetadata(lst, spec)
}

// stop ends the service (the call's processes are gone) and waits for it.
func (g *metadataGuard) stop() {
	if g == nil {
		return
	}
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	_, _ = unix.Write(g.wake, one[:])
	<-g.done
	unix.Close(g.wake)
	g.lst.Close()
}

// dropEffectiveCaps empties the calling (locked) thread's effective
// capability set; permitted stays, and restore raises them again. Without
// capabilities a root thread is what a jailed root process is: uid 0 with
// no privilege over files it does not own. ok reports whether the thread
// now acts as the call would (false only if capget or capset failed).
func dropEffectiveCaps() (restore func() bool, ok bool) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var saved [2]unix.CapUserData
	if err := unix.Capget(&hdr, &saved[0]); err != nil {
		return func() bool { return true }, false
	}
	if saved[0].Effective == 0 && saved[1].Effective == 0 {
		return func() bool { return true }, true
	}
	data := saved
	data[0].Effective, data[1].Effective = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return func() bool { return true }, false
	}
	return func() bool {
		h := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		return unix.Capset(&h, &saved[0]) == nil
	}, true
}

// metaHandler decides and performs one call's metadata syscalls.
type metaHandler struct {
	s        *Supervisor
	spec     jail.Spec
	lst      int
	asCaller bool // the serving thread has the call's privileges (see dropEffectiveCaps)
}

func (h *metaHandler) serve(wake int) {
	fds := []unix.PollFd{{Fd: int32(h.lst), Events: unix.POLLIN}, {Fd: int32(wake), Events: unix.POLLIN}}
	for {
		fds[0].Revents, fds[1].Revents = 0, 0
		if _, err := unix.Poll(fds, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			h.s.log.Error("poll the seccomp notify listener", "err", err)
			return
		}
		if fds[1].Revents != 0 {
			return
		}
		if fds[0].Revents&unix.POLLIN != 0 {
			h.one()
			continue
		}
		if fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
			return // no process of the call is left
		}
	}
}

// one receives a notification and answers it.
func (h *metaHandler) one() {
	var n seccompNotif
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(h.lst), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&n))); e != 0 {
		return // ENOENT: the caller was killed meanwhile
	}
	errno := unix.EPERM
	if h.asCaller {
		errno = h.decide(&n)
	}
	if errno == errGone {
		return
	}
	resp := seccompNotifResp{ID: n.ID, Error: -int32(errno)}
	_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(h.lst), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
}

// errGone marks a notification whose caller is gone: nothing to answer.
const errGone = unix.Errno(^uintptr(0) >> 1)

// metaOp is one decoded metadata syscall.
type metaOp struct {
	kind     string // "chmod", "chown", "utimes", "truncate"
	dirfd    int32  // AT_FDCWD, or a descriptor of the caller
	path     uint64 // address of the path in the caller, 0 for none
	fdOnly   bool   // operates on dirfd itself (fchmod, futimens)
	nofollow bool
	empty    bool // AT_EMPTY_PATH
	flags    uint64
	mode     uint32
	uid, gid int
	times    uint64 // address of the times, 0: now
	timesFmt string // "timespec", "timeval", "utimbuf"
	length   int64
}

const atFDCWD = int32(unix.AT_FDCWD)

// decode turns a notification into a metaOp; ok false for a syscall the
// filter should not have sent.
func decode(d *seccompData) (op metaOp, ok bool) {
	a := d.Args
	switch int(d.Nr) {
	case unix.SYS_FCHMODAT:
		return metaOp{kind: "chmod", dirfd: int32(a[0]), path: a[1], mode: uint32(a[2])}, true
	case unix.SYS_FCHMOD:
		return metaOp{kind: "chmod", dirfd: int32(a[0]), fdOnly: true, mode: uint32(a[1])}, true
	case unix.SYS_FCHOWNAT:
		return metaOp{kind: "chown", dirfd: int32(a[0]), path: a[1], uid: int(int32(a[2])), gid: int(int32(a[3])),
			flags: a[4], nofollow: a[4]&unix.AT_SYMLINK_NOFOLLOW != 0, empty: a[4]&unix.AT_EMPTY_PATH != 0}, true
	case unix.SYS_FCHOWN:
		return metaOp{kind: "chown", dirfd: int32(a[0]), fdOnly: true, uid: int(int32(a[1])), gid: int(int32(a[2]))}, true
	case unix.SYS_UTIMENSAT:
		op := metaOp{kind: "utimes", dirfd: int32(a[0]), path: a[1], times: a[2], timesFmt: "timespec",
			flags: a[3], nofollow: a[3]&unix.AT_SYMLINK_NOFOLLOW != 0, empty: a[3]&unix.AT_EMPTY_PATH != 0}
		op.fdOnly = op.path == 0 && op.dirfd != atFDCWD
		return op, true
	case unix.SYS_TRUNCATE:
		return metaOp{kind: "truncate", dirfd: atFDCWD, path: a[0], length: int64(a[1])}, true
	}
	return decodeLegacy(d)
}

// decide performs op for the caller if its target lies in a write grant,
// and returns the errno to answer (0: success).
func (h *metaHandler) decide(n *seccompNotif) unix.Errno {
	op, ok := decode(&n.Data)
	if !ok {
		return unix.ENOSYS
	}
	switch op.kind {
	case "chown":
		if op.flags&^uint64(unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) != 0 {
			return unix.EINVAL
		}
	case "utimes":
		if op.flags&^uint64(unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) != 0 {
			return unix.EINVAL
		}
	}
	pid := int(n.Pid)
	var (
		times []unix.Timespec
		path  string
		err   error
	)
	if op.times != 0 {
		if times, err = readTimes(pid, op.times, op.timesFmt); err != nil {
			return errnoOf(err, unix.EFAULT)
		}
	}
	if !op.fdOnly {
		if op.path == 0 {
			return unix.EFAULT
		}
		if path, err = readString(pid, op.path); err != nil {
			return errnoOf(err, unix.EFAULT)
		}
		if path == "" && !op.empty {
			return unix.ENOENT
		}
	}
	f, errno := resolve(pid, op, path)
	if errno != 0 {
		return errno
	}
	defer unix.Close(f)
	// What was read from the caller's memory, and the descriptors of
	// its working directory and fds, are its own only while it waits.
	if !h.valid(n.ID) {
		return errGone
	}
	if errno := h.allowed(f); errno != 0 {
		return errno
	}
	return perform(f, op, times, pid)
}

// valid reports whether the notification's caller still waits for it.
func (h *metaHandler) valid(id uint64) bool {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(h.lst), unix.SECCOMP_IOCTL_NOTIF_ID_VALID, uintptr(unsafe.Pointer(&id)))
	return e == 0
}

// resolve opens (O_PATH) what op names, as the caller would resolve it:
// from its working directory or directory descriptor, following symbolic
// links except a final one when op says not to.
func resolve(pid int, op metaOp, path string) (int, unix.Errno) {
	proc := "/proc/" + strconv.Itoa(pid)
	if op.fdOnly || path == "" {
		// The descriptor itself (fchmod, futimens, AT_EMPTY_PATH).
		target := proc + "/cwd"
		if op.dirfd != atFDCWD {
			if op.dirfd < 0 {
				return -1, unix.EBADF
			}
			target = proc + "/fd/" + strconv.Itoa(int(op.dirfd))
		}
		fd, err := unix.Open(target, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, errnoOf(err, unix.EBADF)
		}
		return fd, 0
	}
	base := unix.AT_FDCWD
	switch {
	case strings.HasPrefix(path, "/"):
		// The caller's /proc/self is the caller, not this process.
		for _, self := range []string{"/proc/self", "/proc/thread-self"} {
			if path == self || strings.HasPrefix(path, self+"/") {
				repl := proc
				if self == "/proc/thread-self" {
					repl = proc + "/task/" + strconv.Itoa(pid)
				}
				path = repl + strings.TrimPrefix(path, self)
			}
		}
	case op.dirfd == atFDCWD:
		fd, err := unix.Open(proc+"/cwd", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, errnoOf(err, unix.EPERM)
		}
		defer unix.Close(fd)
		base = fd
	default:
		if op.dirfd < 0 {
			return -1, unix.EBADF
		}
		fd, err := unix.Open(proc+"/fd/"+strconv.Itoa(int(op.dirfd)), unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, errnoOf(err, unix.EBADF)
		}
		defer unix.Close(fd)
		base = fd
	}
	flags := uint64(unix.O_PATH | unix.O_CLOEXEC)
	if op.nofollow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Openat2(base, path, &unix.OpenHow{Flags: flags})
	if err != nil {
		return -1, errnoOf(err, unix.ENOENT)
	}
	return fd, 0
}

// allowed reports (0) whether the file f names may have its metadata
// changed by the call: it lies in a write grant, is neither protected nor
// hidden, and is not a device. A pipe or socket with no name, and a file
// deleted with no other name left, belong to no one else.
func (h *metaHandler) allowed(f int) unix.Errno {
	var st unix.Stat_t
	if err := unix.Fstat(f, &st); err != nil {
		return unix.EPERM
	}
	kind := st.Mode & unix.S_IFMT
	if kind == unix.S_IFCHR || kind == unix.S_IFBLK {
		return unix.EPERM
	}
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(f), buf)
	if err != nil {
		return unix.EPERM
	}
	name := string(buf[:n])
	switch {
	case !strings.HasPrefix(name, "/"):
		if kind == unix.S_IFIFO || kind == unix.S_IFSOCK {
			return 0
		}
		return unix.EPERM
	case strings.HasSuffix(name, " (deleted)"):
		if st.Nlink == 0 {
			return 0
		}
		return unix.EPERM
	}
	if ok, _ := h.spec.Allows(name, jail.Write); !ok {
		return unix.EPERM
	}
	return 0
}

// perform does op on f and returns its errno.
func perform(f int, op metaOp, times []unix.Timespec, pid int) unix.Errno {
	self := "/proc/self/fd/" + strconv.Itoa(f)
	var err error
	switch op.kind {
	case "chmod":
		err = unix.Fchmodat(unix.AT_FDCWD, self, op.mode&0o7777, 0)
	case "chown":
		err = unix.Fchownat(f, "", op.uid, op.gid, unix.AT_EMPTY_PATH)
	case "utimes":
		var tp unsafe.Pointer
		if times != nil {
			tp = unsafe.Pointer(&times[0])
		}
		empty := []byte{0}
		_, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(f), uintptr(unsafe.Pointer(&empty[0])), uintptr(tp), unix.AT_EMPTY_PATH, 0, 0)
		runtime.KeepAlive(times)
		if e != 0 {
			err = e
		}
	case "truncate":
		// Landlock governs truncate from ABI 3; below it the caller's
		// file size limit still applies.
		var lim unix.Rlimit
		if unix.Prlimit(pid, unix.RLIMIT_FSIZE, nil, &lim) == nil && lim.Cur != unix.RLIM_INFINITY && op.length > 0 && uint64(op.length) > lim.Cur {
			return unix.EFBIG
		}
		err = unix.Truncate(self, op.length)
	default:
		return unix.ENOSYS
	}
	return errnoOf(err, 0)
}

// errnoOf is err's errno, or def when it has none (nil: 0; def 0: EIO).
func errnoOf(err error, def unix.Errno) unix.Errno {
	if err == nil {
		return 0
	}
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	if def == 0 {
		return unix.EIO
	}
	return def
}

// readMem reads n bytes of the caller's memory at addr.
func readMem(pid int, addr uint64, n int) ([]byte, error) {
	buf := make([]byte, n)
	got, err := unix.ProcessVMReadv(pid, []unix.Iovec{{Base: &buf[0], Len: uint64(n)}}, []unix.RemoteIovec{{Base: uintptr(addr), Len: n}}, 0)
	if err != nil {
		return nil, err
	}
	if got != n {
		return nil, unix.EFAULT
	}
	return buf, nil
}

// readString reads a NUL-terminated path from the caller's memory, a page
// at a time (the string may end just before an unmapped page).
func readString(pid int, addr uint64) (string, error) {
	page := uint64(os.Getpagesize())
	var out []byte
	for len(out) < unix.PathMax {
		n := int(page - addr%page)
		buf := make([]byte, n)
		got, err := unix.ProcessVMReadv(pid, []unix.Iovec{{Base: &buf[0], Len: uint64(n)}}, []unix.RemoteIovec{{Base: uintptr(addr), Len: n}}, 0)
		if err != nil {
			return "", err
		}
		if i := bytes.IndexByte(buf[:got], 0); i >= 0 {
			return string(append(out, buf[:i]...)), nil
		}
		if got == 0 {
			return "", unix.EFAULT
		}
		out = append(out, buf[:got]...)
		addr += uint64(got)
	}
	return "", unix.ENAMETOOLONG
}

// readTimes reads the two times of a utimensat (timespec), utimes or
// futimesat (timeval) or utime (utimbuf) call.
func readTimes(pid int, addr uint64, format string) ([]unix.Timespec, error) {
	b, err := readMem(pid, addr, 32)
	if format == "utimbuf" {
		b, err = readMem(pid, addr, 16)
	}
	if err != nil {
		return nil, err
	}
	word := func(i int) int64 { return int64(binary.NativeEndian.Uint64(b[8*i:])) }
	switch format {
	case "timespec":
		return []unix.Timespec{{Sec: word(0), Nsec: word(1)}, {Sec: word(2), Nsec: word(3)}}, nil
	case "timeval":
		for _, us := range []int64{word(1), word(3)} {
			if us < 0 || us >= 1e6 {
				return nil, unix.EINVAL
			}
		}
		return []unix.Timespec{{Sec: word(0), Nsec: word(1) * 1000}, {Sec: word(2), Nsec: word(3) * 1000}}, nil
	default:
		return []unix.Timespec{{Sec: word(0)}, {Sec: word(1)}}, nil
	}
}

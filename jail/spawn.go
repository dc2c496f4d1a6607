package jail

/*
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

// Steps of the command's start-up, reported back when one fails.
enum {
	BRIG_STEP_NONE,
	BRIG_STEP_CLONE,
	BRIG_STEP_PDEATHSIG,
	BRIG_STEP_LANDLOCK,
	BRIG_STEP_SECCOMP,
	BRIG_STEP_FDS,
	BRIG_STEP_EXEC,
};

struct brig_spawn {
	const char *path;
	char *const *argv;
	char *const *envp;
	int ruleset_fd;          // -1: no Landlock layer
	struct sock_fprog *prog; // NULL: no seccomp layer
	int sibling;             // start the command as a child of our parent
	pid_t parent;            // the command's parent, as getppid() sees it
	sigset_t mask;           // the signal mask the command starts with
	int fail_step;           // out: the step that failed
	int fail_errno;          // out: its errno
};

// brig_spawn_child runs in the new process, which shares the worker's
// memory (CLONE_VM) while the worker's calling thread is suspended
// (CLONE_VFORK): raw system calls only, then execve or _exit.
static int brig_spawn_child(void *p) {
	struct brig_spawn *a = p;
	// Every signal is blocked (the worker blocked them before cloning).
	// The handlers are the Go runtime's; a signal must never reach one
	// here, so they go back to the default before anything is unblocked.
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction cur;
		if (sig == SIGKILL || sig == SIGSTOP) continue;
		if (sigaction(sig, NULL, &cur) == 0 && cur.sa_handler != SIG_IGN && cur.sa_handler != SIG_DFL)
			sigaction(sig, &dfl, NULL);
	}
	int step = BRIG_STEP_PDEATHSIG;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) goto fail;
	if (getppid() != a->parent) { errno = ESRCH; goto fail; } // init is gone
	step = BRIG_STEP_LANDLOCK;
	if (a->ruleset_fd >= 0 && syscall(SYS_landlock_restrict_self, a->ruleset_fd, 0) != 0) goto fail;
	step = BRIG_STEP_SECCOMP;
	if (a->prog != NULL) {
		long tid = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, a->prog);
		if (tid != 0) {
			if (tid > 0) errno = EBUSY;
			goto fail;
		}
	}
	step = BRIG_STEP_FDS;
	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) goto fail;
	step = BRIG_STEP_EXEC;
	sigprocmask(SIG_SETMASK, &a->mask, NULL);
	execve(a->path, a->argv, a->envp);
fail:
	a->fail_errno = errno;
	a->fail_step = step;
	_exit(127);
}

// brig_spawn_stack is the new process's stack while it runs
// brig_spawn_child. A worker starts one command, once, so one static stack
// serves (mapping and unmapping a fresh one cost tens of microseconds per
// call).
static char brig_spawn_stack[64 * 1024] __attribute__((aligned(64)));

// brig_spawn starts the command as a sibling of the calling process (a
// child of init, CLONE_PARENT) and returns its pid once it has exec'd, or
// -1 with fail_step and fail_errno set.
static pid_t brig_spawn(struct brig_spawn *a) {
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &a->mask);
	a->fail_step = BRIG_STEP_NONE;
	a->fail_errno = 0;
	int flags = CLONE_VM | CLONE_VFORK | (a->sibling ? CLONE_PARENT : SIGCHLD);
	pid_t pid = clone(brig_spawn_child, brig_spawn_stack + sizeof brig_spawn_stack, flags, a);
	if (pid < 0) {
		a->fail_step = BRIG_STEP_CLONE;
		a->fail_errno = errno;
	}
	pthread_sigmask(SIG_SETMASK, &a->mask, NULL);
	if (a->fail_step != BRIG_STEP_NONE) return -1;
	return pid;
}
*/
import "C"

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// spawnCommand starts the command as a child of init (so init reaps it and
// its parent-death signal follows init, as the worker's does) from a
// single-threaded copy of the worker that applies, on its only thread,
// Landlock (ruleset < 0: none) and then seccomp (prog nil: none), marks
// every descriptor above stdio close-on-exec and executes path. It returns
// the command's pid once the exec has succeeded.
//
// Why not apply the layers to the worker and exec it (as a Go tool runs):
// the worker is a Go process with several threads, so Landlock would need
// an all-thread broadcast (psx: a signal to and a wake-up of every thread),
// and exec would have to stop those threads and tear down the Go heap. The
// copy made here has one thread and borrows the worker's memory until it
// execs, so it restricts itself with two plain system calls and execs
// cheaply. Neither layer ever depends on the worker's other threads: no code
// runs in the command but the command's, and it starts restricted.
func spawnCommand(path string, argv, env []string, ruleset int, prog []unix.SockFilter) (int, *StageError) {
	return spawn(path, argv, env, ruleset, prog, true)
}

// spawn is spawnCommand; sibling false makes the command a child of the
// calling process instead (for tests, which have no init to reap it).
func spawn(path string, argv, env []string, ruleset int, prog []unix.SockFilter, sibling bool) (int, *StageError) {
	a := (*C.struct_brig_spawn)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_brig_spawn{}))))
	defer C.free(unsafe.Pointer(a))
	a.path = C.CString(path)
	defer C.free(unsafe.Pointer(a.path))
	cargv := cStrings(argv)
	defer freeCStrings(cargv)
	cenv := cStrings(env)
	defer freeCStrings(cenv)
	a.argv = &cargv[0]
	a.envp = &cenv[0]
	a.ruleset_fd = C.int(ruleset)
	a.parent = C.pid_t(os.Getppid())
	if sibling {
		a.sibling = 1
	} else {
		a.parent = C.pid_t(os.Getpid())
	}
	if prog != nil {
		n := len(prog)
		filter := (*C.struct_sock_filter)(C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof(C.struct_sock_filter{}))))
		defer C.free(unsafe.Pointer(filter))
		copy(unsafe.Slice((*unix.SockFilter)(unsafe.Pointer(filter)), n), prog)
		fprog := (*C.struct_sock_fprog)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_sock_fprog{}))))
		defer C.free(unsafe.Pointer(fprog))
		fprog.len = C.ushort(n)
		fprog.filter = filter
		a.prog = fprog
	}
	spawnStackMu.Lock()
	pid := C.brig_spawn(a)
	spawnStackMu.Unlock()
	if pid > 0 {
		return int(pid), nil
	}
	errno := syscall.Errno(a.fail_errno)
	se := &StageError{Errno: int(errno)}
	switch a.fail_step {
	case C.BRIG_STEP_CLONE:
		se.Stage, se.Msg = StageExec, fmt.Sprintf("start %s: clone: %v", path, errno)
	case C.BRIG_STEP_PDEATHSIG:
		se.Stage, se.Msg = StageSession, fmt.Sprintf("parent-death signal of the command: %v", errno)
	case C.BRIG_STEP_LANDLOCK:
		se.Stage, se.Msg = StageLandlock, fmt.Sprintf("landlock_restrict_self: %v", errno)
	case C.BRIG_STEP_SECCOMP:
		se.Stage, se.Msg = StageSeccomp, fmt.Sprintf("jail: seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC): %v", errno)
	case C.BRIG_STEP_FDS:
		se.Stage, se.Msg = StageFDs, fmt.Sprintf("close_range: %v", errno)
	default:
		se.Stage, se.Msg = StageExec, fmt.Sprintf("exec %s: %v", path, errno)
	}
	return 0, se
}

// spawnStackMu serialises spawns in one process: they share
// brig_spawn_stack (a worker spawns once; tests spawn many times).
var spawnStackMu sync.Mutex

// cStrings returns a NULL-terminated array of C copies of ss, itself in C
// memory (C memory may not hold Go pointers).
func cStrings(ss []string) []*C.char {
	arr := (**C.char)(C.calloc(C.size_t(len(ss)+1), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	out := unsafe.Slice(arr, len(ss)+1)
	for i, s := range ss {
		out[i] = C.CString(s)
	}
	return out
}

// freeCStrings frees what cStrings allocated.
func freeCStrings(cs []*C.char) {
	for _, c := range cs {
		if c != nil {
			C.free(unsafe.Pointer(c))
		}
	}
	C.free(unsafe.Pointer(&cs[0]))
}

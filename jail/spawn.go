package jail

/*
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>

// The kernel's interfaces used below are spelled out here rather than
// taken from <linux/*.h>, so that this file builds against any C
// library's headers alone: build.sh links the carried programs with musl
// where it can, and musl's toolchain ships no kernel headers.
#define BRIG_CAP_VERSION_3 0x20080522
struct brig_cap_header { unsigned int version; int pid; };
struct brig_cap_data { unsigned int effective, permitted, inheritable; };
struct brig_sock_filter { unsigned short code; unsigned char jt, jf; unsigned int k; };
struct brig_sock_fprog { unsigned short len; struct brig_sock_filter *filter; };
#define BRIG_SECCOMP_SET_MODE_FILTER 1
#define BRIG_SECCOMP_FILTER_FLAG_TSYNC 1UL
// Signals as the kernel has them (64 on amd64 and arm64), through raw
// system calls: a C library keeps some for itself (glibc 32 and 33, musl
// 32 to 34), so that sigfillset would leave them unblocked and sigaction
// would refuse to reset them; here every one is blocked and reset.
#define BRIG_NSIG 64
typedef unsigned long long brig_sigset;
struct brig_ksigaction { void *handler; unsigned long flags; void *restorer; brig_sigset mask; };
static int brig_sigmask(const brig_sigset *set, brig_sigset *old) {
	return syscall(SYS_rt_sigprocmask, SIG_SETMASK, set, old, sizeof(brig_sigset));
}

#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

#define BRIG_MAX_CGROUPS 4
#define BRIG_MAX_LIMITS 8

// Steps of the command's start-up, reported back when one fails.
enum {
	BRIG_STEP_NONE,
	BRIG_STEP_CLONE,
	BRIG_STEP_PDEATHSIG,
	BRIG_STEP_CGROUP,
	BRIG_STEP_RLIMIT,
	BRIG_STEP_CAPS,
	BRIG_STEP_DIR,
	BRIG_STEP_LANDLOCK,
	BRIG_STEP_SECCOMP,
	BRIG_STEP_FDS,
	BRIG_STEP_EXEC,
	BRIG_STEP_OPEN,     // a file tool's open: its errno is the tool's to report
	BRIG_STEP_UNSERVED, // the file is not one init reads for a tool (brig_served_file)
};

struct brig_spawn {
	const char *path;
	char *const *argv;
	char *const *envp;
	int ruleset_fd;          // -1: no Landlock layer
	struct brig_sock_fprog *prog; // NULL: no seccomp layer
	int sibling;             // start the command as a child of our parent
	pid_t parent;            // the command's parent, as getppid() sees it
	brig_sigset mask;        // the signal mask the command starts with
	// A direct start (init starts the command itself, no worker) also
	// does what the worker otherwise did for the command, first of all
	// what the worker's start settled for it: no_new_privs, locked
	// securebits, an empty bounding set and the base seccomp filter
	// (base; NULL: none) — it is cloned from a thread that keeps init's
	// privileges (jail/direct.go) —; then it joins the call's cgroups,
	// sets the limits, gives up every capability and enters the
	// directory.
	int direct;
	// settled says the calling thread has settled no_new_privs, the
	// securebits and the bounding set already (unprivilegeForkThread, once
	// per call, before the call is known): the clone inherits them and
	// skips brig_unprivilege_thread.
	int settled;
	struct brig_sock_fprog *base;
	int ncgroups;
	int cgroup_fds[BRIG_MAX_CGROUPS]; // the call's cgroup files (tasks or cgroup.procs), open for writing
	int nlimits;
	int limit_res[BRIG_MAX_LIMITS];
	unsigned long long limit_val[BRIG_MAX_LIMITS];
	const char *dir;
	// stdio[i] >= 0 becomes descriptor i (the call's own pipes, for a
	// call after a serving init's first); -1 keeps init's.
	int stdio[3];
	// open_path, for a file tool's call (a direct start), is the file the
	// clone opens once every layer is in place, instead of executing
	// anything: it shares init's descriptor table (CLONE_FILES), leaves
	// the file open there (opened_fd) and exits.
	const char *open_path;
	int opened_fd;           // out
	// timer_slack, when not 0, is the command's timer slack (PR_SET_TIMERSLACK,
	// in ns): the user's, which init and the worker do not keep
	// (jail/slack.go).
	unsigned long timer_slack;
	int fail_step;           // out: the step that failed
	int fail_errno;          // out: its errno
};

// brig_unprivilege_thread settles, on the calling thread, what no
// capability may undo: no_new_privs, the securebits that keep uid 0
// from meaning privileges (NOROOT, NO_SETUID_FIXUP, both locked), no
// ambient capability, and an empty bounding set. As
// unprivilegeForkThread (jail/child.go): a thread that may not set
// securebits (EPERM: no CAP_SETPCAP) leaves them and the bounding set to
// brig_drop_privileges' checks.
static int brig_unprivilege_thread(void) {
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) return -1;
	if (prctl(PR_SET_SECUREBITS, 0xf, 0, 0, 0) != 0) return errno == EPERM ? 0 : -1;
	for (int c = 0; c < 64; c++) {
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0) {
			if (errno == EINVAL) break; // beyond the kernel's last capability
			return -1;
		}
	}
	return 0;
}

// brig_drop_privileges gives up, on the calling thread, every capability
// (the bounding and ambient sets and the securebits were settled first:
// brig_unprivilege_thread) and sets no_new_privs, then checks that
// nothing is left. For the clone of a direct start, which begins with
// init's capabilities.
static int brig_drop_privileges(void) {
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) return -1;
	struct brig_cap_header hdr = {BRIG_CAP_VERSION_3, 0};
	struct brig_cap_data data[2];
	memset(data, 0, sizeof data);
	if (syscall(SYS_capset, &hdr, data) != 0) return -1;
	if (syscall(SYS_capget, &hdr, data) != 0) return -1;
	for (int i = 0; i < 2; i++) {
		if (data[i].effective | data[i].permitted | data[i].inheritable) {
			errno = EPERM;
			return -1;
		}
	}
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

// brig_default_signals runs first in a new process made by a clone that
// shares the caller's memory. Every signal is blocked (the caller blocked
// them before cloning). The handlers are the Go runtime's; a signal must
// never reach one here, so they go back to the default before anything is
// unblocked.
static void brig_default_signals(void) {
	struct brig_ksigaction dfl;
	memset(&dfl, 0, sizeof dfl); // SIG_DFL
	for (int sig = 1; sig <= BRIG_NSIG; sig++) {
		struct brig_ksigaction cur;
		if (sig == SIGKILL || sig == SIGSTOP) continue;
		if (syscall(SYS_rt_sigaction, sig, NULL, &cur, sizeof(brig_sigset)) == 0 &&
		    cur.handler != (void *)SIG_IGN && cur.handler != (void *)SIG_DFL)
			syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(brig_sigset));
	}
}

// brig_served_fs reports whether files on a filesystem of this type are
// read by init for a file tool: filesystems that hold data, on which
// reading an open file checks nothing more and has no effect. Files of
// the kernel's own filesystems (proc, sys, cgroup, debugfs …), where a
// read may depend on who reads, and of FUSE, whose server could stall
// init, go to a worker instead; so does any type not listed.
static int brig_served_fs(long type) {
	switch ((unsigned long)type & 0xffffffffUL) {
	case 0xEF53:     // ext2, ext3, ext4
	case 0x58465342: // xfs
	case 0x9123683E: // btrfs
	case 0x01021994: // tmpfs
	case 0x858458f6: // ramfs
	case 0x794c7630: // overlayfs
	case 0xF2F52010: // f2fs
	case 0x2fc12fc1: // zfs
	case 0xca451a4e: // bcachefs
	case 0xE0F5E1E2: // erofs
	case 0x73717368: // squashfs
	case 0x9660:     // iso9660
	case 0x4d44:     // vfat
	case 0x2011BAB0: // exfat
	case 0x7366746e: // ntfs3
	case 0xf15f:     // ecryptfs
	case 0x6969:     // nfs
	case 0xFF534D42: // cifs
	case 0xFE534D42: // smb2
	case 0x01021997: // 9p
	case 0x3153464a: // jfs
	case 0x52654973: // reiserfs
	case 0x482b:     // hfsplus
		return 1;
	}
	return 0;
}

// brig_open_served opens a file tool's file, with every layer of the call
// in place, in a clone that shares init's descriptor table: a directory
// (the tool says it is one), or a regular file on a filesystem init reads
// for tools (brig_served_fs); else the descriptor is closed again and the
// step is BRIG_STEP_UNSERVED. It never returns.
static void brig_open_served(struct brig_spawn *a) {
	int step = BRIG_STEP_OPEN;
	int fd = open(a->open_path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) goto fail;
	struct stat st;
	struct statfs sf;
	step = BRIG_STEP_UNSERVED;
	if (fstat(fd, &st) != 0) goto fail_close;
	if (!S_ISDIR(st.st_mode)) {
		if (!S_ISREG(st.st_mode)) { errno = EINVAL; goto fail_close; }
		if (fstatfs(fd, &sf) != 0) goto fail_close;
		if (!brig_served_fs(sf.f_type)) { errno = EXDEV; goto fail_close; }
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) goto fail_close;
	a->opened_fd = fd;
	_exit(0);
fail_close:;
	int e = errno;
	close(fd);
	errno = e;
fail:
	a->fail_errno = errno;
	a->fail_step = step;
	_exit(127);
}

// brig_spawn_child runs in the new process, which shares the worker's
// memory (CLONE_VM) while the worker's calling thread is suspended
// (CLONE_VFORK): raw system calls only, then execve or _exit.
static int brig_spawn_child(void *p) {
	struct brig_spawn *a = p;
	brig_default_signals();
	int step = BRIG_STEP_PDEATHSIG;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) goto fail;
	if (getppid() != a->parent) { errno = ESRCH; goto fail; } // init is gone
	// Before any filter: a timer slack refused (out of range) leaves
	// brig's, which is timing, not a layer, so the command starts anyway.
	if (a->timer_slack != 0) prctl(PR_SET_TIMERSLACK, a->timer_slack, 0, 0, 0);
	if (a->direct) {
		step = BRIG_STEP_CAPS;
		if (!a->settled && brig_unprivilege_thread() != 0) goto fail;
		step = BRIG_STEP_SECCOMP;
		if (a->base != NULL && syscall(SYS_seccomp, BRIG_SECCOMP_SET_MODE_FILTER, 0, a->base) != 0) goto fail;
		// Into the call's cgroups before anything can fork.
		step = BRIG_STEP_CGROUP;
		for (int i = 0; i < a->ncgroups; i++)
			if (write(a->cgroup_fds[i], "0", 1) != 1) goto fail;
		step = BRIG_STEP_RLIMIT;
		for (int i = 0; i < a->nlimits; i++) {
			struct rlimit rl = {a->limit_val[i], a->limit_val[i]};
			if (setrlimit(a->limit_res[i], &rl) != 0) goto fail;
		}
		step = BRIG_STEP_CAPS;
		if (brig_drop_privileges() != 0) goto fail;
		step = BRIG_STEP_DIR;
		if (a->dir != NULL && chdir(a->dir) != 0) goto fail;
	}
	step = BRIG_STEP_LANDLOCK;
	if (a->ruleset_fd >= 0 && syscall(SYS_landlock_restrict_self, a->ruleset_fd, 0) != 0) goto fail;
	step = BRIG_STEP_SECCOMP;
	if (a->prog != NULL) {
		long tid = syscall(SYS_seccomp, BRIG_SECCOMP_SET_MODE_FILTER, BRIG_SECCOMP_FILTER_FLAG_TSYNC, a->prog);
		if (tid != 0) {
			if (tid > 0) errno = EBUSY;
			goto fail;
		}
	}
	if (a->open_path != NULL) brig_open_served(a); // does not return
	step = BRIG_STEP_FDS;
	// The call's own descriptors lie above stdio (the caller received
	// them), so no dup2 overwrites one still to be placed.
	for (int i = 0; i < 3; i++)
		if (a->stdio[i] >= 0 && dup2(a->stdio[i], i) < 0) goto fail;
	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) goto fail;
	step = BRIG_STEP_EXEC;
	brig_sigmask(&a->mask, NULL);
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
	brig_sigset all = ~0ULL;
	brig_sigmask(&all, &a->mask);
	a->fail_step = BRIG_STEP_NONE;
	a->fail_errno = 0;
	a->opened_fd = -1;
	int flags = CLONE_VM | CLONE_VFORK | (a->sibling ? CLONE_PARENT : SIGCHLD);
	if (a->open_path != NULL) flags |= CLONE_FILES;
	pid_t pid = clone(brig_spawn_child, brig_spawn_stack + sizeof brig_spawn_stack, flags, a);
	if (pid < 0) {
		a->fail_step = BRIG_STEP_CLONE;
		a->fail_errno = errno;
	} else if (a->open_path != NULL) {
		// It has exited (the vfork is over): collect it.
		int st;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
	}
	brig_sigmask(&a->mask, NULL);
	if (a->fail_step != BRIG_STEP_NONE) return -1;
	return pid;
}

// Steps of a start in new namespaces (brig_nsstart), reported back when
// one fails.
enum {
	BRIG_NS_NONE,
	BRIG_NS_CLONE,
	BRIG_NS_UIDMAP,
	BRIG_NS_SETGROUPS,
	BRIG_NS_GIDMAP,
	BRIG_NS_CAPS,
	BRIG_NS_DIR,
	BRIG_NS_FDS,
	BRIG_NS_EXEC,
};

#define BRIG_NS_MAXFDS 16

struct brig_nsstart {
	const char *path;
	char *const *argv;
	char *const *envp;
	int flags;                   // the CLONE_NEW* flags
	const char *uid_map;         // written to the child's own uid_map (NULL: none)
	const char *gid_map;         // the same, after setgroups is denied
	unsigned long long ambient;  // capabilities raised into the ambient set
	const char *dir;             // the working directory
	int nfds;                    // fds[i] becomes descriptor i
	int fds[BRIG_NS_MAXFDS];
	unsigned long timer_slack;   // PR_SET_TIMERSLACK before the exec (0: keep the caller's)
	int fail_step;               // out: the step that failed
	int fail_errno;              // out: its errno
};

// brig_write_all writes s to the file at path (a /proc/self file).
static int brig_write_all(const char *path, const char *s) {
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) return -1;
	size_t n = strlen(s);
	ssize_t w = write(fd, s, n);
	int e = errno;
	close(fd);
	if (w != (ssize_t)n) {
		errno = w < 0 ? e : EIO;
		return -1;
	}
	return 0;
}

// brig_nsstart_child runs in the new process, in its new namespaces,
// sharing the supervisor's memory (CLONE_VM) while the supervisor's
// calling thread is suspended (CLONE_VFORK): raw system calls only, then
// execve or _exit. It writes its own ID maps (a process may map its own
// user and group ids into the namespace it created), carries the asked
// capabilities across the exec as ambient ones, and puts its descriptors
// in place. Without a path (a probe) it exits once the maps are written.
static int brig_nsstart_child(void *p) {
	struct brig_nsstart *a = p;
	brig_default_signals();
	int step = BRIG_NS_UIDMAP;
	if (a->uid_map != NULL && brig_write_all("/proc/self/uid_map", a->uid_map) != 0) goto fail;
	step = BRIG_NS_SETGROUPS;
	if (a->gid_map != NULL && brig_write_all("/proc/self/setgroups", "deny") != 0) goto fail;
	step = BRIG_NS_GIDMAP;
	if (a->gid_map != NULL && brig_write_all("/proc/self/gid_map", a->gid_map) != 0) goto fail;
	if (a->path == NULL) _exit(0); // a probe: the namespaces and the maps are made
	step = BRIG_NS_CAPS;
	if (a->ambient != 0) {
		struct brig_cap_header hdr = {BRIG_CAP_VERSION_3, 0};
		struct brig_cap_data data[2];
		if (syscall(SYS_capget, &hdr, data) != 0) goto fail;
		for (int c = 0; c < 64; c++)
			if (a->ambient & (1ULL << c)) data[c / 32].inheritable |= 1U << (c % 32);
		if (syscall(SYS_capset, &hdr, data) != 0) goto fail;
		for (int c = 0; c < 64; c++)
			if ((a->ambient & (1ULL << c)) && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) != 0) goto fail;
	}
	// Timing, not a layer: a slack refused leaves the caller's.
	if (a->timer_slack != 0) prctl(PR_SET_TIMERSLACK, a->timer_slack, 0, 0, 0);
	step = BRIG_NS_DIR;
	if (a->dir != NULL && chdir(a->dir) != 0) goto fail;
	step = BRIG_NS_FDS;
	// The sources all lie above the targets (the caller duplicated them
	// there), so no dup2 overwrites a source still to be placed.
	for (int i = 0; i < a->nfds; i++)
		if (dup2(a->fds[i], i) < 0) goto fail;
	if (syscall(SYS_close_range, a->nfds, ~0U, CLOSE_RANGE_CLOEXEC) != 0) goto fail;
	step = BRIG_NS_EXEC;
	brig_sigset none = 0;
	brig_sigmask(&none, NULL);
	execve(a->path, a->argv, a->envp);
fail:
	a->fail_errno = errno;
	a->fail_step = step;
	_exit(127);
}

// brig_nsstart starts the program in new namespaces as a child of the
// calling process and returns its pid once it has exec'd, or -1 with
// fail_step and fail_errno set (a child that failed is reaped).
static pid_t brig_nsstart(struct brig_nsstart *a) {
	brig_sigset all = ~0ULL, old;
	brig_sigmask(&all, &old);
	a->fail_step = BRIG_NS_NONE;
	a->fail_errno = 0;
	pid_t pid = clone(brig_nsstart_child, brig_spawn_stack + sizeof brig_spawn_stack, CLONE_VM | CLONE_VFORK | SIGCHLD | a->flags, a);
	if (pid < 0) {
		a->fail_step = BRIG_NS_CLONE;
		a->fail_errno = errno;
	}
	brig_sigmask(&old, NULL);
	if (a->fail_step == BRIG_NS_NONE) return pid;
	if (pid > 0) {
		int st;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
	}
	return -1;
}
*/
import "C"

import (
	"cmp"
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"brig/internal/textbusy"
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
	return spawn(path, argv, env, ruleset, prog, true, nil)
}

// spawnDirect starts the command as init's own child from a
// single-threaded copy of init, which, before the layers spawnCommand's
// copy applies, settles no_new_privs, locked securebits and an empty
// bounding set (unless the calling thread did: d.settled), loads the
// base seccomp filter, writes itself into the
// call's cgroups, sets the limits, gives up every capability (checked)
// and enters the directory. Init calls it on the call's thread
// (jail/direct.go), which keeps init's privileges.
func spawnDirect(path string, argv, env []string, ruleset int, prog []unix.SockFilter, d directSteps) (int, *StageError) {
	return spawn(path, argv, env, ruleset, prog, false, &d)
}

// openServed opens a file tool's file for init (d.open, which must be
// set): a clone of init takes spawnDirect's steps and the layers, opens
// the file in the descriptor table it shares with init, and exits. The
// error is a *StageError: stageOpen for the open's own failure (the
// tool's to report), stageUnserved for a file init does not read
// (brig_served_fs in spawn.go), any other stage for a layer that failed.
func openServed(ruleset int, prog []unix.SockFilter, d directSteps) (*os.File, *StageError) {
	fd, se := spawn("", []string{d.open}, nil, ruleset, prog, false, &d)
	if se != nil {
		return nil, se
	}
	return os.NewFile(uintptr(fd), d.open), nil
}

// spawn is spawnCommand; sibling false makes the command a child of the
// calling process instead (tests, which have no init to reap it, and
// direct starts, where the caller is init). d, when set, asks for a
// direct start's steps (spawnDirect); with d.open set, nothing is
// executed and the int returned is the descriptor opened (openServed).
func spawn(path string, argv, env []string, ruleset int, prog []unix.SockFilter, sibling bool, d *directSteps) (int, *StageError) {
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
		fprog, free := cFilter(prog)
		defer free()
		a.prog = fprog
	}
	a.stdio = [3]C.int{-1, -1, -1}
	if d != nil {
		if len(d.cgroups) > C.BRIG_MAX_CGROUPS || len(d.limits) > C.BRIG_MAX_LIMITS {
			return 0, &StageError{Stage: StageExec, Msg: fmt.Sprintf("start %s: %d cgroups and %d limits, at most %d and %d", path, len(d.cgroups), len(d.limits), C.BRIG_MAX_CGROUPS, C.BRIG_MAX_LIMITS)}
		}
		a.direct = 1
		if d.settled {
			a.settled = 1
		}
		a.ncgroups = C.int(len(d.cgroups))
		for i, fd := range d.cgroups {
			a.cgroup_fds[i] = C.int(fd)
		}
		a.nlimits = C.int(len(d.limits))
		for i, l := range d.limits {
			a.limit_res[i], a.limit_val[i] = C.int(l.res), C.ulonglong(l.v)
		}
		if d.dir != "" {
			a.dir = C.CString(d.dir)
			defer C.free(unsafe.Pointer(a.dir))
		}
		if d.base != nil {
			fbase, free := cFilter(d.base)
			defer free()
			a.base = fbase
		}
		for i, fd := range d.stdio[:min(len(d.stdio), 3)] {
			if fd >= 0 {
				a.stdio[i] = C.int(fd)
			}
		}
	}
	a.timer_slack = C.ulong(commandTimerSlack())
	if d != nil && d.open != "" {
		a.open_path = C.CString(d.open)
		defer C.free(unsafe.Pointer(a.open_path))
	}
	spawnStackMu.Lock()
	pid := C.brig_spawn(a)
	spawnStackMu.Unlock()
	if pid > 0 {
		if a.open_path != nil {
			return int(a.opened_fd), nil
		}
		return int(pid), nil
	}
	errno := syscall.Errno(a.fail_errno)
	se := &StageError{Errno: int(errno)}
	switch a.fail_step {
	case C.BRIG_STEP_OPEN:
		se.Stage, se.Msg = stageOpen, fmt.Sprintf("open %s: %v", d.open, errno)
	case C.BRIG_STEP_UNSERVED:
		se.Stage, se.Msg = stageUnserved, fmt.Sprintf("%s: %v", d.open, errno)
	case C.BRIG_STEP_CLONE:
		se.Stage, se.Msg = StageExec, fmt.Sprintf("start %s: clone: %v", path, errno)
	case C.BRIG_STEP_PDEATHSIG:
		se.Stage, se.Msg = StageSession, fmt.Sprintf("parent-death signal of the command: %v", errno)
	case C.BRIG_STEP_CGROUP:
		se.Stage, se.Msg = StageRlimit, fmt.Sprintf("join the call's cgroup: %v", errno)
	case C.BRIG_STEP_RLIMIT:
		se.Stage, se.Msg = StageRlimit, fmt.Sprintf("set the call's resource limits: %v", errno)
	case C.BRIG_STEP_CAPS:
		se.Stage, se.Msg = StageCaps, fmt.Sprintf("give up every privilege (no_new_privs, capabilities): %v", errno)
	case C.BRIG_STEP_DIR:
		se.Stage, se.Msg = StageDir, fmt.Sprintf("chdir %s: %v", d.dir, errno)
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

// cFilter copies a seccomp program into C memory; free releases it.
func cFilter(prog []unix.SockFilter) (*C.struct_brig_sock_fprog, func()) {
	n := len(prog)
	filter := (*C.struct_brig_sock_filter)(C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof(C.struct_brig_sock_filter{}))))
	copy(unsafe.Slice((*unix.SockFilter)(unsafe.Pointer(filter)), n), prog)
	fprog := (*C.struct_brig_sock_fprog)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_brig_sock_fprog{}))))
	fprog.len = C.ushort(n)
	fprog.filter = filter
	return fprog, func() {
		C.free(unsafe.Pointer(filter))
		C.free(unsafe.Pointer(fprog))
	}
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

// StartInNamespaces starts p as a child of the calling process, in new
// namespaces, and returns it once it has exec'd (without a Path: once it
// has written its maps and exited). An exec refused with ETXTBSY is tried
// again (textbusy.Retry).
//
// Why not os/exec: for a new user namespace Go's runtime forks without
// sharing memory (it must write the ID maps from the parent while the
// child waits), and fork copies the page tables of the whole process and
// makes every writable page copy-on-write. For the supervisor — tens of
// MB, starting a jail child for every call — that cost 4–5 ms of kernel
// time per start and then a write-protect fault on every page it wrote
// afterwards (measured here: a Go process with 25 MB of live heap paid
// 120 ms of CPU per start against 6 ms for a start that shares memory).
// Here the child shares the caller's memory until its exec (CLONE_VM,
// CLONE_VFORK, as os/exec does without a user namespace) and writes its own
// maps, so nothing is copied.
//
// A process's /proc files are root's while its memory is non-dumpable, so
// an ordinary user's child, sharing a non-dumpable caller's memory (the
// supervisor's), could not write its own maps: for the clone the caller is
// made dumpable again, and then restored. Only other unjailed processes of
// the same user could use that instant (README, limits).
func StartInNamespaces(p NSProcess) (*os.Process, error) {
	var proc *os.Process
	err := textbusy.Retry(func() error {
		var err error
		proc, err = startInNamespaces(p)
		return err
	}, nil)
	return proc, err
}

// startInNamespaces is one try of StartInNamespaces.
func startInNamespaces(p NSProcess) (*os.Process, error) {
	what := cmp.Or(p.Path, "a namespace probe")
	if len(p.Files) > C.BRIG_NS_MAXFDS {
		return nil, fmt.Errorf("start %s: %d descriptors, at most %d", what, len(p.Files), C.BRIG_NS_MAXFDS)
	}
	a := (*C.struct_brig_nsstart)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_brig_nsstart{}))))
	defer C.free(unsafe.Pointer(a))
	if p.Path != "" { // else a.path stays NULL: a probe, which runs nothing
		a.path = C.CString(p.Path)
		defer C.free(unsafe.Pointer(a.path))
	}
	cargv := cStrings(p.Args)
	defer freeCStrings(cargv)
	cenv := cStrings(p.Env)
	defer freeCStrings(cenv)
	a.argv, a.envp = &cargv[0], &cenv[0]
	a.flags = C.int(p.Cloneflags)
	for _, m := range []struct {
		s   string
		dst **C.char
	}{{p.UIDMap, &a.uid_map}, {p.GIDMap, &a.gid_map}, {p.Dir, &a.dir}} {
		if m.s != "" {
			*m.dst = C.CString(m.s)
			defer C.free(unsafe.Pointer(*m.dst))
		}
	}
	a.timer_slack = C.ulong(p.TimerSlack)
	for _, c := range p.AmbientCaps {
		if c >= 64 {
			return nil, fmt.Errorf("start %s: capability %d out of range", what, c)
		}
		a.ambient |= 1 << c
	}
	// Every descriptor goes above the targets first, so that placing one
	// never overwrites another still to be placed.
	a.nfds = C.int(len(p.Files))
	for i, f := range p.Files {
		if f == nil {
			null, err := os.Open(os.DevNull)
			if err != nil {
				return nil, fmt.Errorf("start %s: %w", what, err)
			}
			defer null.Close()
			f = null
		}
		fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, len(p.Files))
		if err != nil {
			return nil, fmt.Errorf("start %s: duplicate descriptor %d: %w", what, i, err)
		}
		defer unix.Close(fd)
		a.fds[i] = C.int(fd)
	}
	spawnStackMu.Lock() // also serialises the dumpable window
	restore, err := dumpableForMaps(p)
	if err != nil {
		spawnStackMu.Unlock()
		return nil, fmt.Errorf("start %s: %w", what, err)
	}
	pid := C.brig_nsstart(a)
	err = restore()
	spawnStackMu.Unlock()
	runtime.KeepAlive(p.Files)
	if pid > 0 {
		proc, ferr := os.FindProcess(int(pid))
		if err != nil {
			if ferr == nil {
				_ = proc.Kill()
				_, _ = proc.Wait()
			}
			return nil, fmt.Errorf("start %s: %w", what, err)
		}
		return proc, ferr
	}
	errno := syscall.Errno(a.fail_errno)
	step := map[C.int]string{
		C.BRIG_NS_CLONE: "clone", C.BRIG_NS_UIDMAP: "write its uid_map", C.BRIG_NS_SETGROUPS: "deny setgroups",
		C.BRIG_NS_GIDMAP: "write its gid_map", C.BRIG_NS_CAPS: "raise ambient capabilities", C.BRIG_NS_DIR: "chdir " + p.Dir,
		C.BRIG_NS_FDS: "place descriptors", C.BRIG_NS_EXEC: "exec",
	}[a.fail_step]
	return nil, fmt.Errorf("start %s: %s: %w", what, step, errno)
}

// SetNonDumpable marks the calling process non-dumpable, under the lock
// that serialises StartInNamespaces' dumpable window: a second supervisor
// made in a process while the first starts a child there (tests make
// several) would otherwise close that window under the child, whose
// write of its own ID maps then fails (as an ordinary user), and a
// start-up probe would report no user namespaces.
func SetNonDumpable() error {
	spawnStackMu.Lock()
	defer spawnStackMu.Unlock()
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("PR_SET_DUMPABLE: %w", err)
	}
	return nil
}

// dumpableForMaps makes the calling process dumpable when p's child must
// write its own ID maps and cannot otherwise (an ordinary user's
// non-dumpable process); restore undoes it.
func dumpableForMaps(p NSProcess) (restore func() error, err error) {
	none := func() error { return nil }
	if p.UIDMap == "" && p.GIDMap == "" || os.Geteuid() == 0 {
		return none, nil // root owns its /proc files either way
	}
	was, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("PR_GET_DUMPABLE: %w", err)
	}
	if was == 1 {
		return none, nil
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("PR_SET_DUMPABLE: %w", err)
	}
	return func() error {
		if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
			return fmt.Errorf("PR_SET_DUMPABLE back to 0: %w", err)
		}
		return nil
	}, nil
}

// probe: small hostile actions for the brig escape suite (test/escape).
//
// Each subcommand performs one action and, ONLY when the action really
// worked, prints an observable fact: bytes it read back through the attacked
// interface (a canary), or a marker carrying the canary that can only be
// written by the code that got past the kernel. Failures go to stderr as
// "name: errno text" and never contain the canary. The Go tests decide
// escape/no-escape from stdout contents, never from the exit status.
//
// Built by TestMain with: gcc -O1 -o probe probe.c
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/if_packet.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <arpa/inet.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static void fail(const char *what) { fprintf(stderr, "%s: %s\n", what, strerror(errno)); }

// ---------------------------------------------------------------------------
// hold: the victim. Keeps a secret (from $BRIG_VICTIM_SECRET) in memory, an
// open descriptor on a file, and reports every SIGTERM/SIGUSR1 it receives.

static volatile sig_atomic_t nsig;
static char victim_secret[256];

static void on_sig(int s) {
	(void)s;
	nsig++;
	static const char msg[] = "SIG\n";
	ssize_t r = write(1, msg, sizeof msg - 1);
	(void)r;
}

static int cmd_hold(int argc, char **argv) {
	const char *s = getenv("BRIG_VICTIM_SECRET");
	if (!s) s = "";
	strncpy(victim_secret, s, sizeof victim_secret - 1);
	int fd = argc > 2 ? open(argv[2], O_RDONLY) : -1;
	struct sigaction sa = {0};
	sa.sa_handler = on_sig;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	printf("READY pid=%d addr=%p len=%zu fd=%d\n", getpid(), (void *)victim_secret, strlen(victim_secret), fd);
	fflush(stdout);
	// A victim whose test was killed before it could clean up ends by
	// itself (SIGALRM's default action) rather than stay for good: after
	// the longest a test binary may run (make test's -timeout 35m), not
	// before — on a slow machine the suite reached its last victim case
	// after 10 minutes, and that control waited for a dead victim.
	alarm(2400);
	for (;;) pause();
	return 0;
}

// ---------------------------------------------------------------------------
// Reading another process's memory three ways.

static int parse_target(int argc, char **argv, pid_t *pid, unsigned long *addr, size_t *len) {
	if (argc < 5) {
		fprintf(stderr, "usage: %s PID ADDR LEN\n", argv[1]);
		return -1;
	}
	*pid = atoi(argv[2]);
	*addr = strtoul(argv[3], NULL, 0);
	*len = strtoul(argv[4], NULL, 0);
	if (*len > 4096) *len = 4096;
	return 0;
}

static void print_read(const char *tag, const char *buf, size_t n) {
	printf("%s:", tag);
	fwrite(buf, 1, n, stdout);
	printf("\n");
	fflush(stdout);
}

// peek: PTRACE_SEIZE + PTRACE_INTERRUPT (only the one thread stops, no
// group stop), PEEKDATA, detach.
static int cmd_peek(int argc, char **argv) {
	pid_t pid;
	unsigned long addr;
	size_t len;
	if (parse_target(argc, argv, &pid, &addr, &len)) return 2;
	if (ptrace(PTRACE_SEIZE, pid, 0, 0) < 0) {
		fail("ptrace(PTRACE_SEIZE)");
		return 1;
	}
	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) < 0) {
		fail("ptrace(PTRACE_INTERRUPT)");
		ptrace(PTRACE_DETACH, pid, 0, 0);
		return 1;
	}
	int st;
	if (waitpid(pid, &st, __WALL) < 0) fail("waitpid");
	char buf[4096 + sizeof(long)];
	size_t n = 0;
	for (; n < len; n += sizeof(long)) {
		errno = 0;
		long w = ptrace(PTRACE_PEEKDATA, pid, addr + n, 0);
		if (errno) {
			fail("ptrace(PTRACE_PEEKDATA)");
			break;
		}
		memcpy(buf + n, &w, sizeof w);
	}
	if (n > len) n = len;
	ptrace(PTRACE_DETACH, pid, 0, 0);
	if (n > 0) print_read("PEEK", buf, n);
	return 0;
}

// getfd PID FD MESSAGE: takes a copy of descriptor FD of process PID
// (pidfd_getfd, which needs the right to ptrace it) and writes MESSAGE to
// it: "GOTFD" when the copy was had, "WROTE" when the write went through.
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
static int cmd_getfd(int argc, char **argv) {
	if (argc < 5) {
		fprintf(stderr, "usage: probe getfd PID FD MESSAGE\n");
		return 2;
	}
	int pfd = syscall(SYS_pidfd_open, atoi(argv[2]), 0);
	if (pfd < 0) {
		fail("pidfd_open");
		return 1;
	}
	int fd = syscall(SYS_pidfd_getfd, pfd, atoi(argv[3]), 0);
	if (fd < 0) {
		fail("pidfd_getfd");
		return 1;
	}
	printf("GOTFD\n");
	fflush(stdout);
	if (write(fd, argv[4], strlen(argv[4])) < 0) {
		fail("write");
		return 1;
	}
	printf("WROTE\n");
	return 0;
}

static int cmd_vmread(int argc, char **argv) {
	pid_t pid;
	unsigned long addr;
	size_t len;
	if (parse_target(argc, argv, &pid, &addr, &len)) return 2;
	char buf[4096];
	struct iovec local = {buf, len}, remote = {(void *)addr, len};
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n <= 0) {
		fail("process_vm_readv");
		return 1;
	}
	print_read("VMREAD", buf, n);
	return 0;
}

static int cmd_memread(int argc, char **argv) {
	pid_t pid;
	unsigned long addr;
	size_t len;
	if (parse_target(argc, argv, &pid, &addr, &len)) return 2;
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/mem", pid);
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		fail("open /proc/PID/mem");
		return 1;
	}
	ssize_t n = pread(fd, buf, len, (off_t)addr);
	if (n <= 0) {
		fail("pread /proc/PID/mem");
		return 1;
	}
	print_read("MEMREAD", buf, n);
	return 0;
}

// ---------------------------------------------------------------------------
// Kernel surface.

static int cmd_keyctl(int argc, char **argv) {
	if (argc < 3) return 2;
	const char *c = argv[2];
	long id = syscall(SYS_add_key, "user", "brig-escape", c, strlen(c), KEY_SPEC_PROCESS_KEYRING);
	if (id < 0) {
		fail("add_key");
		return 1;
	}
	char buf[256] = {0};
	long n = syscall(SYS_keyctl, KEYCTL_READ, id, buf, sizeof buf - 1);
	if (n < 0) {
		fail("keyctl(KEYCTL_READ)");
		return 1;
	}
	print_read("KEY", buf, n < (long)sizeof buf ? n : (long)sizeof buf - 1);
	return 0;
}

static long sys_bpf(int cmd, union bpf_attr *a) { return syscall(SYS_bpf, cmd, a, sizeof *a); }

static int cmd_bpf(int argc, char **argv) {
	if (argc < 3) return 2;
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 64;
	a.max_entries = 1;
	int fd = sys_bpf(BPF_MAP_CREATE, &a);
	if (fd < 0) {
		fail("bpf(BPF_MAP_CREATE)");
		return 1;
	}
	uint32_t key = 0;
	char val[64] = {0}, got[64] = {0};
	strncpy(val, argv[2], sizeof val - 1);
	memset(&a, 0, sizeof a);
	a.map_fd = fd;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)val;
	if (sys_bpf(BPF_MAP_UPDATE_ELEM, &a) < 0) {
		fail("bpf(BPF_MAP_UPDATE_ELEM)");
		return 1;
	}
	a.value = (uintptr_t)got;
	if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &a) < 0) {
		fail("bpf(BPF_MAP_LOOKUP_ELEM)");
		return 1;
	}
	print_read("BPF", got, strlen(got));
	return 0;
}

static int cmd_perf(int argc, char **argv) {
	if (argc < 3) return 2;
	struct perf_event_attr pe;
	memset(&pe, 0, sizeof pe);
	pe.type = PERF_TYPE_SOFTWARE;
	pe.size = sizeof pe;
	pe.config = PERF_COUNT_SW_TASK_CLOCK;
	pe.exclude_kernel = 1;
	pe.exclude_hv = 1;
	int fd = syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0);
	if (fd < 0) {
		fail("perf_event_open");
		return 1;
	}
	volatile unsigned long x = 0;
	for (unsigned long i = 0; i < 20000000UL; i++) x += i;
	uint64_t count = 0;
	if (read(fd, &count, sizeof count) != sizeof count) {
		fail("read perf counter");
		return 1;
	}
	if (count > 0) printf("PERF:%s:%llu\n", argv[2], (unsigned long long)count);
	return 0;
}

// iouring: the canary reaches stdout only through an IORING_OP_WRITE.
static int cmd_iouring(int argc, char **argv) {
	if (argc < 3) return 2;
	struct io_uring_params p;
	memset(&p, 0, sizeof p);
	int fd = syscall(SYS_io_uring_setup, 4, &p);
	if (fd < 0) {
		fail("io_uring_setup");
		return 1;
	}
	size_t sqlen = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	size_t cqlen = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	char *sq = mmap(0, sqlen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQ_RING);
	char *cq = mmap(0, cqlen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_CQ_RING);
	struct io_uring_sqe *sqes = mmap(0, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
					 MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) {
		fail("mmap io_uring");
		return 1;
	}
	static char msg[256];
	snprintf(msg, sizeof msg, "IOURING:%s\n", argv[2]);
	unsigned *tail = (unsigned *)(sq + p.sq_off.tail);
	unsigned mask = *(unsigned *)(sq + p.sq_off.ring_mask);
	unsigned *array = (unsigned *)(sq + p.sq_off.array);
	unsigned idx = *tail & mask;
	struct io_uring_sqe *e = &sqes[idx];
	memset(e, 0, sizeof *e);
	e->opcode = IORING_OP_WRITE;
	e->fd = 1;
	e->addr = (uintptr_t)msg;
	e->len = strlen(msg);
	e->off = (uint64_t)-1;
	array[idx] = idx;
	__atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0) {
		fail("io_uring_enter");
		return 1;
	}
	return 0;
}

static int write_file(const char *path, const char *s) {
	int fd = open(path, O_WRONLY);
	if (fd < 0) return -1;
	ssize_t n = write(fd, s, strlen(s));
	close(fd);
	return n < 0 ? -1 : 0;
}

// userns enters a fresh user namespace (plus extra flags) mapping our ids.
static int userns(int extra) {
	uid_t uid = getuid();
	gid_t gid = getgid();
	if (unshare(CLONE_NEWUSER | extra) < 0) {
		fail("unshare(CLONE_NEWUSER)");
		return -1;
	}
	char m[64];
	write_file("/proc/self/setgroups", "deny");
	snprintf(m, sizeof m, "0 %d 1", uid);
	if (write_file("/proc/self/uid_map", m)) fail("write uid_map");
	snprintf(m, sizeof m, "0 %d 1", gid);
	if (write_file("/proc/self/gid_map", m)) fail("write gid_map");
	return 0;
}

static void print_capeff(const char *tag, const char *canary) {
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "CapEff:", 7)) printf("%s:%s:%s", tag, canary, line + 7);
	if (f) fclose(f);
	fflush(stdout);
}

// mount CANARY DIR [direct]: mount a tmpfs whose source name carries the
// canary and show it from /proc/self/mountinfo. "direct" first tries without
// a new namespace (never used outside the jail: it would change the host's
// mount table).
static int cmd_mount(int argc, char **argv) {
	if (argc < 4) return 2;
	char src[128];
	snprintf(src, sizeof src, "brigmnt-%s", argv[2]);
	int ok = 0;
	if (argc > 4 && !strcmp(argv[4], "direct")) {
		if (mount(src, argv[3], "tmpfs", 0, "size=64k") == 0) ok = 1;
		else fail("mount (direct)");
	}
	if (!ok) {
		if (userns(CLONE_NEWNS) < 0) return 1;
		if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) fail("make / private");
		if (mount(src, argv[3], "tmpfs", 0, "size=64k") < 0) {
			fail("mount (in a new namespace)");
			return 1;
		}
	}
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[1024];
	while (f && fgets(line, sizeof line, f))
		if (strstr(line, src)) printf("MOUNTED:%s", line);
	fflush(stdout);
	return 0;
}

static int cmd_unshare(int argc, char **argv) {
	if (argc < 3) return 2;
	if (unshare(CLONE_NEWUSER) < 0) {
		fail("unshare(CLONE_NEWUSER)");
		return 1;
	}
	print_capeff("UNSHARE", argv[2]);
	return 0;
}

// clonens: clone(2) with CLONE_NEWUSER, fork-like (no new stack).
static int cmd_clonens(int argc, char **argv) {
	if (argc < 3) return 2;
	fflush(stdout);
	long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
	if (pid < 0) {
		fail("clone(CLONE_NEWUSER)");
		return 1;
	}
	if (pid == 0) {
		print_capeff("CLONENS", argv[2]);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	return 0;
}

// chroot DIR: read /brig-chroot-canary, which exists only as DIR/brig-chroot-canary.
static int cmd_chroot(int argc, char **argv) {
	if (argc < 3) return 2;
	if (chroot(argv[2]) < 0) {
		fail("chroot (direct)");
		if (userns(0) < 0) return 1;
		if (chroot(argv[2]) < 0) {
			fail("chroot (in a new user namespace)");
			return 1;
		}
	}
	if (chdir("/") < 0) fail("chdir /");
	int fd = open("/brig-chroot-canary", O_RDONLY);
	if (fd < 0) {
		fail("open /brig-chroot-canary");
		return 1;
	}
	char buf[256];
	ssize_t n = read(fd, buf, sizeof buf);
	if (n > 0) print_read("CHROOT", buf, n);
	return 0;
}

// noia32 runs when int $0x80 faults: a kernel without IA32 emulation (or
// booted with ia32_emulation=0) has no i386 entry, so the instruction is a
// general protection fault. Inside the jail the filter kills the process
// with SIGSYS before any fault, so this says only what the kernel lacks.
static void noia32(int sig) {
	(void)sig;
	static const char m[] = "NOIA32: int 0x80 faulted (SIGSEGV): this kernel has no IA32 emulation\n";
	if (write(2, m, sizeof m - 1) < 0) _exit(4);
	_exit(3);
}

// int80: i386 write(2) through int $0x80 from a buffer below 4 GiB.
static int cmd_int80(int argc, char **argv) {
	if (argc < 3) return 2;
	char *buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (buf == MAP_FAILED) {
		fail("mmap MAP_32BIT");
		return 1;
	}
	int n = snprintf(buf, 4096, "INT80:%s\n", argv[2]);
	fflush(stdout);
	struct sigaction sa = {0};
	sa.sa_handler = noia32;
	sigaction(SIGSEGV, &sa, NULL);
	long ret;
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(4), "b"(1), "c"(buf), "d"(n)
			 : "memory");
	signal(SIGSEGV, SIG_DFL);
	if (ret < 0) {
		errno = -ret;
		fail("int 0x80 write");
		return 1;
	}
	return 0;
}

// x32: write(2) with the x32 bit set.
static int cmd_x32(int argc, char **argv) {
	if (argc < 3) return 2;
	char buf[256];
	int n = snprintf(buf, sizeof buf, "X32:%s\n", argv[2]);
	fflush(stdout);
	long r = syscall(0x40000000 | SYS_write, 1, buf, n);
	if (r < 0) {
		fail("x32 write");
		return 1;
	}
	return 0;
}

// personality: READ_IMPLIES_EXEC makes a PROT_READ mapping executable.
static int cmd_personality(int argc, char **argv) {
	if (argc < 3) return 2;
	if (personality(READ_IMPLIES_EXEC) < 0) {
		fail("personality(READ_IMPLIES_EXEC)");
		return 1;
	}
	int cur = personality(0xffffffff);
	void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		fail("mmap");
		return 1;
	}
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	while (f && fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && (unsigned long)p >= lo && (unsigned long)p < hi) {
			if (strchr(perms, 'x')) printf("RIE:%s:persona=%#x:%s", argv[2], cur, line);
			else fprintf(stderr, "mapping is %s (persona %#x)\n", perms, cur);
		}
	}
	fflush(stdout);
	return 0;
}

// ---------------------------------------------------------------------------
// Sockets.

static void lo_up(void) {
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0) return;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0 && !(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	close(s);
}

static void set_timeout(int s, int ms) {
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

// raw CANARY [HOSTPORT]: hand-build a UDP datagram on a raw socket. It is
// delivered to a receiver of our own on loopback (self-contained proof) and,
// if HOSTPORT is given, to that port on 127.0.0.1 as well.
static int cmd_raw(int argc, char **argv) {
	if (argc < 3) return 2;
	lo_up();
	int raw = socket(AF_INET, SOCK_RAW, IPPROTO_UDP);
	if (raw < 0) {
		fail("socket(AF_INET, SOCK_RAW)");
		return 1;
	}
	int rx = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	if (rx < 0 || bind(rx, (struct sockaddr *)&a, sizeof a) < 0 || getsockname(rx, (struct sockaddr *)&a, &al) < 0) {
		fail("udp receiver");
		return 1;
	}
	set_timeout(rx, 1000);
	char pkt[512];
	int plen = snprintf(pkt + sizeof(struct udphdr), sizeof pkt - sizeof(struct udphdr), "RAW:%s", argv[2]);
	struct udphdr *u = (struct udphdr *)pkt;
	u->source = htons(9);
	u->dest = a.sin_port;
	u->len = htons(sizeof *u + plen);
	u->check = 0;
	if (sendto(raw, pkt, sizeof *u + plen, 0, (struct sockaddr *)&a, sizeof a) < 0) fail("sendto raw (self)");
	if (argc > 3) {
		struct sockaddr_in h = a;
		h.sin_port = htons(atoi(argv[3]));
		u->dest = h.sin_port;
		if (sendto(raw, pkt, sizeof *u + plen, 0, (struct sockaddr *)&h, sizeof h) < 0) fail("sendto raw (host)");
	}
	char buf[512];
	ssize_t n = recv(rx, buf, sizeof buf - 1, 0);
	if (n > 0) print_read("RAWRECV", buf, n);
	else fail("recv");
	return 0;
}

// packet CANARY: sniff our own loopback traffic through an AF_PACKET socket.
static int cmd_packet(int argc, char **argv) {
	if (argc < 3) return 2;
	lo_up();
	int ps = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL));
	if (ps < 0) {
		fail("socket(AF_PACKET)");
		return 1;
	}
	struct sockaddr_ll ll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = (int)if_nametoindex("lo")};
	if (bind(ps, (struct sockaddr *)&ll, sizeof ll) < 0) fail("bind packet socket");
	set_timeout(ps, 300);
	int tx = socket(AF_INET, SOCK_DGRAM, 0);
	char msg[256];
	int mlen = snprintf(msg, sizeof msg, "PKT:%s", argv[2]);
	struct sockaddr_in d = {.sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (tx < 0) fail("socket(AF_INET) for traffic");
	for (int round = 0; round < 5; round++) {
		if (tx >= 0) sendto(tx, msg, mlen, 0, (struct sockaddr *)&d, sizeof d);
		char buf[2048];
		for (int i = 0; i < 20; i++) {
			ssize_t n = recv(ps, buf, sizeof buf, 0);
			if (n <= 0) break;
			char *hit = memmem(buf, n, "PKT:", 4);
			if (hit) {
				print_read("SNIFF", hit, n - (hit - buf));
				return 0;
			}
		}
	}
	fprintf(stderr, "packet socket saw nothing\n");
	return 0;
}

// ---------------------------------------------------------------------------
// Terminal injection: become the session leader with the pty slave as the
// controlling terminal, then push the canary into its input queue.
static int cmd_tiocsti(int argc, char **argv) {
	if (argc < 4) return 2;
	int high = argc > 4 && !strcmp(argv[4], "high");
	if (setsid() < 0) fail("setsid");
	int fd = open(argv[2], O_RDWR);
	if (fd < 0) {
		fail("open pty slave");
		return 1;
	}
	if (ioctl(fd, TIOCSCTTY, 0) < 0) fail("TIOCSCTTY");
	int injected = 0;
	for (const char *c = argv[3]; *c; c++) {
		unsigned long req = TIOCSTI;
		if (high) req |= 0x100000000UL;
		if (syscall(SYS_ioctl, fd, req, c) < 0) {
			fail("ioctl(TIOCSTI)");
			break;
		}
		injected++;
	}
	fprintf(stderr, "injected %d bytes\n", injected);
	return 0;
}

// ---------------------------------------------------------------------------
// Exhaustion.

// bomb CAP MARKER [exit]: fork until CAP children exist or forks keep
// failing (20 in a row); every process then pauses. The first process
// reports how many children were created and how many forks failed once no
// process is still forking (an event, not a time: a slow machine only
// takes longer), then with "exit" it exits (the call ends and its init
// kills the rest), or pauses too.
static int cmd_bomb(int argc, char **argv) {
	if (argc < 4) return 2;
	long cap = atol(argv[2]);
	int exit_after = argc > 4 && strcmp(argv[4], "exit") == 0;
	// [0] slots reserved under the cap, [1] failed forks, [2] children
	// created, [3] processes still forking (a child is counted from before
	// its fork until it leaves the loop).
	long *cnt = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (cnt == MAP_FAILED) return 1;
	pid_t top = getpid();
	int fails = 0;
	cnt[3] = 1;
	while (fails < 20) {
		if (__atomic_add_fetch(&cnt[0], 1, __ATOMIC_SEQ_CST) > cap) {
			__atomic_sub_fetch(&cnt[0], 1, __ATOMIC_SEQ_CST);
			break;
		}
		__atomic_add_fetch(&cnt[3], 1, __ATOMIC_SEQ_CST);
		pid_t p = fork();
		if (p < 0) {
			__atomic_sub_fetch(&cnt[0], 1, __ATOMIC_SEQ_CST);
			__atomic_sub_fetch(&cnt[3], 1, __ATOMIC_SEQ_CST);
			__atomic_add_fetch(&cnt[1], 1, __ATOMIC_SEQ_CST);
			fails++;
			usleep(2000);
			continue;
		}
		if (p == 0) {
			fails = 0;
			__atomic_add_fetch(&cnt[2], 1, __ATOMIC_SEQ_CST);
		}
	}
	__atomic_sub_fetch(&cnt[3], 1, __ATOMIC_SEQ_CST);
	if (getpid() == top) {
		while (__atomic_load_n(&cnt[3], __ATOMIC_SEQ_CST) > 0) usleep(5000);
		// The RLIMIT_NPROC it ran under (0: none), said by the bomb
		// itself: a sampler reading /proc may see no bomb process at
		// all on a loaded machine (a CI run saw none of 315).
		struct rlimit rl;
		long nproc = 0;
		if (getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) nproc = (long)rl.rlim_cur;
		printf("BOMB created=%ld failed_forks=%ld cap=%ld nproc=%ld\n", __atomic_load_n(&cnt[2], __ATOMIC_SEQ_CST),
		       __atomic_load_n(&cnt[1], __ATOMIC_SEQ_CST), cap, nproc);
		fflush(stdout);
		if (exit_after) return 0;
	}
	for (;;) pause();
	return 0;
}

// alloc BYTES: allocate and touch up to BYTES in 16 MiB steps; report how far
// it got.
static int cmd_alloc(int argc, char **argv) {
	if (argc < 3) return 2;
	unsigned long want = strtoul(argv[2], NULL, 0), got = 0;
	const unsigned long step = 16UL << 20;
	while (got < want) {
		char *p = malloc(step);
		if (!p) {
			fail("malloc");
			break;
		}
		memset(p, 0xa5, step);
		got += step;
	}
	printf("ALLOC touched=%lu wanted=%lu\n", got, want);
	return 0;
}

int main(int argc, char **argv) {
	if (argc < 2) {
		fprintf(stderr, "usage: probe CMD ...\n");
		return 2;
	}
	struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{"hold", cmd_hold},       {"peek", cmd_peek},       {"vmread", cmd_vmread},
		{"memread", cmd_memread}, {"keyctl", cmd_keyctl},   {"bpf", cmd_bpf},
		{"perf", cmd_perf},       {"iouring", cmd_iouring}, {"mount", cmd_mount},
		{"unshare", cmd_unshare}, {"clonens", cmd_clonens}, {"chroot", cmd_chroot},
		{"int80", cmd_int80},     {"x32", cmd_x32},         {"personality", cmd_personality},
		{"raw", cmd_raw},         {"packet", cmd_packet},   {"tiocsti", cmd_tiocsti},
		{"bomb", cmd_bomb},       {"alloc", cmd_alloc},     {"getfd", cmd_getfd},
	};
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (!strcmp(argv[1], cmds[i].name)) return cmds[i].fn(argc, argv);
	fprintf(stderr, "probe: unknown command %s\n", argv[1]);
	return 2;
}

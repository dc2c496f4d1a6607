/*
 * seccomp_probe: a tiny static program, without libc, that makes one
 * syscall through an ABI the jail's seccomp filter must kill.
 * Built by jail/seccomp_test.go with:
 *
 *   gcc -static -nostdlib -ffreestanding -fno-stack-protector -no-pie -O2
 *
 * Usage: seccomp_probe i386|x32|clone
 *
 *   i386   getpid through int 0x80 (the i386 ABI).
 *   x32    getpid with the x32 bit (0x40000000) in the syscall number.
 *   clone  fork-like raw clone(CLONE_NEWUSER|SIGCHLD); the child exits 0 at
 *          once; the probe exits with 0 if the clone worked, else its errno.
 *
 * For i386 and x32 the probe prints the raw result and exits 0: only the
 * filter (SIGSYS) stops it. The kernel may answer ENOSYS (-38) for x32 if
 * CONFIG_X86_X32_ABI is off; that still counts as "ran".
 */

#define NR_write 1
#define NR_clone 56
#define NR_exit 60
#define NR_wait4 61
#define NR_getpid 39
#define X32_BIT 0x40000000L
#define I386_NR_getpid 20
#define CLONE_NEWUSER 0x10000000L
#define SIGCHLD 17

static long sys6(long nr, long a, long b, long c, long d, long e)
{
	long ret;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	return ret;
}

static long sys1(long nr, long a) { return sys6(nr, a, 0, 0, 0, 0); }

static void __attribute__((noreturn)) quit(int code)
{
	for (;;)
		sys1(NR_exit, code);
}

static int streq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

static void say(const char *what, long v)
{
	char buf[64];
	int n = 0;
	unsigned long u = v < 0 ? -(unsigned long)v : (unsigned long)v;
	char digits[24];
	int d = 0;

	while (*what)
		buf[n++] = *what++;
	buf[n++] = ' ';
	if (v < 0)
		buf[n++] = '-';
	do
		digits[d++] = '0' + u % 10;
	while ((u /= 10) != 0);
	while (d > 0)
		buf[n++] = digits[--d];
	buf[n++] = '\n';
	sys6(NR_write, 1, (long)buf, n, 0, 0);
}

static long i386_getpid(void)
{
	long ret;
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(I386_NR_getpid) : "memory");
	return ret;
}

void probe_main(long *sp)
{
	long argc = sp[0];
	char **argv = (char **)(sp + 1);

	if (argc < 2)
		quit(64);
	if (streq(argv[1], "i386")) {
		say("i386 getpid returned", i386_getpid());
		quit(0);
	}
	if (streq(argv[1], "x32")) {
		say("x32 getpid returned", sys1(X32_BIT | NR_getpid, 0));
		quit(0);
	}
	if (streq(argv[1], "clone")) {
		long pid = sys6(NR_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
		if (pid == 0)
			quit(0);
		say("clone(CLONE_NEWUSER) returned", pid);
		if (pid < 0)
			quit((int)-pid);
		sys6(NR_wait4, pid, 0, 0, 0, 0);
		quit(0);
	}
	quit(64);
}

__asm__(".text\n"
	".global _start\n"
	"_start:\n"
	"	xor %rbp, %rbp\n"
	"	mov %rsp, %rdi\n"
	"	and $-16, %rsp\n"
	"	call probe_main\n"
	"	hlt\n");

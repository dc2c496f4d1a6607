//go:build linux && (amd64 || arm64)

package prefault

// madvise is the madvise(2) system call, made directly (madvise_*.s): the
// syscall package would be initialised first, and with it the packages
// that sort before it. It returns the kernel's answer, 0 or -errno.
//
//go:noescape
func madvise(addr, length, advice uintptr) uintptr

// Package prefault maps the first pages of brig's Go heap in one system
// call when the process starts, before the packages it links initialise
// themselves, so that their allocations do not each take a page fault.
//
// On the virtual machines brig was measured on, a page fault is a trap to
// the hypervisor: a first touch of an anonymous page took 12–25 µs there,
// against 1.5–2 µs a page for the kernel to map the same pages itself
// (madvise MADV_POPULATE_WRITE). brig's start — its Go runtime and some
// 150 packages' initialisation — took about 700 page faults, 320 of them
// on fresh heap pages (`perf record -e page-faults -d`). With the heap's
// first 2 MiB mapped at once, `brig --version` took 510 faults and 3.4 ms less
// CPU (26.3 → 22.9 ms), and 1.5–8 ms less time depending on the page
// cache (test/bench/HISTORY.md, 2026-12-02).
//
// It is imported for its side effect by cmd/brig only, and must stay the
// first package initialised after the runtime: it imports nothing (its
// system call is a few lines of assembly, as golang.org/x/sys makes its
// own), and of the packages whose imports are done Go initialises first
// the one whose import path sorts first ("brig/…" before the standard
// library's; cmd/brig's TestPrefaultInitialisedFirst checks it in a
// binary that links what brig links). It must not fail, log or allocate
// more than the one object that locates the heap: a kernel without
// MADV_POPULATE_WRITE (before 5.14) answers EINVAL, and on another
// architecture than amd64 or arm64 it does nothing; brig then starts as
// it did without it.
//
// The carried programs (init, the workers, the renderer) do not import
// it: their heap faults come mostly from the runtime's own start, before
// any package is initialised, and the populate cost init more than it
// saved (its start alone 8.7 → 9.3 ms; the workers' and the renderer's
// within the noise).
package prefault

import "unsafe"

// size is how much of the heap is mapped at once, from the page of the
// first object this package allocates upward, which is where the runtime
// puts the next spans. brig's start uses about 1.3 MB of heap before it
// reads its arguments; a session grows past it. The kernel stops at the
// end of the heap's mapping, so a smaller heap is mapped only as far as it
// goes.
const size = 2 << 20

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14).
const madvPopulateWrite = 23

// align rounds the heap's address down to a page boundary on every page
// size Linux has (4, 16 and 64 KiB), without asking the kernel which.
const align = 64 << 10

// anchor keeps the allocation that locates the heap reachable, so that it
// is made on the heap and not on the stack.
var anchor *[64]byte

func init() {
	anchor = new([64]byte)
	start := uintptr(unsafe.Pointer(anchor)) &^ (align - 1)
	// Its error is ignored on purpose: the populate is only a head
	// start, and whatever it did not map is faulted in as before.
	_ = madvise(start, size, madvPopulateWrite)
}

package prefault

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resident reports, page by page, whether mem is in memory (mincore).
func resident(t *testing.T, addr, length uintptr) []bool {
	t.Helper()
	page := uintptr(os.Getpagesize())
	vec := make([]byte, (length+page-1)/page)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, addr, length, uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	in := make([]bool, len(vec))
	for i, b := range vec {
		in[i] = b&1 == 1
	}
	return in
}

func skipWithoutPopulate(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skip("the populate is made on Linux's amd64 and arm64 only")
	}
	mem, err := unix.Mmap(-1, 0, os.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	if r := madvise(uintptr(unsafe.Pointer(&mem[0])), uintptr(len(mem)), madvPopulateWrite); r != 0 {
		t.Skipf("this kernel has no MADV_POPULATE_WRITE (madvise answered %d)", int(-int64(r)))
	}
}

// The assembly makes the call it says: a fresh mapping's pages are not in
// memory until it populates them (the control: mincore tells the two
// apart), and an invalid advice is refused with EINVAL, not ignored.
func TestMadvise(t *testing.T) {
	skipWithoutPopulate(t)
	n := 8 * os.Getpagesize()
	mem, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	addr := uintptr(unsafe.Pointer(&mem[0]))
	for i, in := range resident(t, addr, uintptr(n)) {
		if in {
			t.Fatalf("page %d of a fresh mapping is in memory before anything touched it: mincore cannot tell", i)
		}
	}
	if r := madvise(addr, uintptr(n), madvPopulateWrite); r != 0 {
		t.Fatalf("madvise(MADV_POPULATE_WRITE) = %d", int(-int64(r)))
	}
	for i, in := range resident(t, addr, uintptr(n)) {
		if !in {
			t.Errorf("page %d is not in memory after the populate", i)
		}
	}
	if r := madvise(addr, uintptr(n), 9999); int(-int64(r)) != int(unix.EINVAL) {
		t.Errorf("madvise with an unknown advice = %d, want -EINVAL", int(-int64(r)))
	}
}

// After the package's init, the heap's pages from the anchor's on are in
// memory as far as the populate reached (its size, or the end of the
// heap's mapping).
func TestHeapPopulated(t *testing.T) {
	skipWithoutPopulate(t)
	start := uintptr(unsafe.Pointer(anchor)) &^ (align - 1)
	end := start + size
	if mapEnd := mappingEnd(t, start); mapEnd < end {
		end = mapEnd
	}
	in := resident(t, start, end-start)
	missing := 0
	for _, r := range in {
		if !r {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of the %d heap pages from %#x are not in memory", missing, len(in), start)
	}
}

// mappingEnd is the end of the mapping that holds addr (/proc/self/maps).
func mappingEnd(t *testing.T, addr uintptr) uintptr {
	t.Helper()
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var lo, hi uintptr
		if _, err := fmt.Sscanf(strings.Fields(sc.Text())[0], "%x-%x", &lo, &hi); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		if lo <= addr && addr < hi {
			return hi
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return 0
}

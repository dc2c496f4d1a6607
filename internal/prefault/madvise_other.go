//go:build !linux || !(amd64 || arm64)

package prefault

// madvise does nothing here: the head start is only made on Linux's amd64
// and arm64, brig's release architectures.
func madvise(addr, length, advice uintptr) uintptr { return 0 }

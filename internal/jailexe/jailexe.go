// Package jailexe carries the jail child program (cmd/brig-jail) inside
// brig's binary and hands the supervisor a path to execute it: a sealed
// memory file (memfd), so the program cannot be changed or replaced
// between brig's start and a call, and brig stays a single file.
//
// The child is embedded by the build (make, test/brigbin): it compiles
// cmd/brig-jail, places it at bin/brig-jail through go build's -overlay
// and sets Sum to its SHA-256. A build without it (a plain go build) has
// no child and no Sum; then Open returns nil and brig re-executes itself,
// which works the same and starts slower.
//
// It must not decide anything about the jail: it only supplies the
// program.
package jailexe

import (
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

//go:embed all:bin
var embedded embed.FS

// files holds the embedded child (a test gives its own).
var files fs.FS = embedded

// Sum is the SHA-256 (hex) of the embedded child, set at link time by the
// build that embedded it (-X brig/internal/jailexe.Sum=…): a build that
// declares no child does not use one. (It is not recomputed at run time:
// hashing the child cost 20 ms of every start.) It is build metadata,
// like a version string: nothing assigns it at run time.
var Sum string

// childName is the embedded child's path in files.
const childName = "bin/brig-jail"

// Child is the embedded jail child, open for the life of the process.
type Child struct {
	f *os.File
}

// Path executes the child (/proc/self/fd/N). The descriptor is close-on-
// exec and numbered high, above the descriptors a call's child is handed,
// so it still names the child while the new process execs it.
func (c *Child) Path() string { return fmt.Sprintf("/proc/self/fd/%d", c.f.Fd()) }

// Close releases the memory file.
func (c *Child) Close() error { return c.f.Close() }

// highFD is the least descriptor number the memfd takes.
const highFD = 100

// Open writes the embedded child into a sealed memfd. It returns nil and
// no error when this build carries no child it can vouch for (the caller
// then re-executes itself).
func Open() (*Child, error) {
	// Streamed, not read whole: a copy of the child in the heap cost a
	// 10 MB allocation at every start and stayed in brig's peak RSS.
	src, err := files.Open(childName)
	if err == nil {
		defer src.Close()
	}
	if err != nil || Sum == "" {
		// No child, or one no build declared (the file reaches the embed
		// only through build.sh's overlay, which also sets Sum).
		return nil, nil
	}
	fd, err := unix.MemfdCreate("brig-jail", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("a memory file for the jail child: %w", err)
	}
	high, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, highFD)
	unix.Close(fd)
	if err != nil {
		return nil, fmt.Errorf("a memory file for the jail child: %w", err)
	}
	f := os.NewFile(uintptr(high), "brig-jail")
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		return nil, fmt.Errorf("write the jail child: %w", err)
	}
	// Executable by anyone: a jail child starts in a new user namespace,
	// where the exec is checked against its mapped ids. (No one else can
	// reach the file: it has no name, and /proc/PID/fd of this
	// non-dumpable process is closed to others.)
	if err := unix.Fchmod(high, 0o555); err != nil {
		f.Close()
		return nil, fmt.Errorf("make the jail child executable: %w", err)
	}
	seals := unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE
	if _, err := unix.FcntlInt(uintptr(high), unix.F_ADD_SEALS, seals); err != nil {
		f.Close()
		return nil, fmt.Errorf("seal the jail child: %w", err)
	}
	return &Child{f: f}, nil
}

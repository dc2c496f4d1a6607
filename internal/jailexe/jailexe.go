// Package jailexe carries the jail child programs inside brig's binary and
// hands the supervisor what executes them: sealed memory files (memfd), so
// a program cannot be changed or replaced between brig's start and a
// call, and brig stays a single file. There are two: cmd/brig-jail-init,
// each call's init, and cmd/brig-jail, its worker, which links the Go
// tools. Every call starts both, and the tools' packages (the policy, the
// HTML converter, the HTTP client, image decoders) doubled the start-up of
// a process that never runs them.
//
// The programs are embedded by the build (make, test/brigbin): it
// compiles them, places them at bin/ through go build's -overlay and sets
// Sum and InitSum to their SHA-256. A build without them (a plain go
// build) has no programs and no sums; then Open returns nil and brig
// re-executes itself, which works the same and starts slower.
//
// It must not decide anything about the jail: it only supplies the
// program.
package jailexe

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"

	"golang.org/x/sys/unix"
)

//go:embed all:bin
var embedded embed.FS

// files holds the embedded programs (a test gives its own).
var files fs.FS = embedded

// Sum and InitSum are the SHA-256 (hex) of the embedded worker and init
// programs, set at link time by the build that embedded them
// (-X brig/internal/jailexe.Sum=…): a build that declares no programs
// does not use them. (They are not recomputed at run time: hashing the
// programs cost 20 ms of every start.) They are build metadata, like a
// version string: nothing assigns them at run time.
var Sum, InitSum string

// The embedded programs' paths in files.
const (
	workerName = "bin/brig-jail"
	initName   = "bin/brig-jail-init"
)

// Child is the pair of embedded jail programs, open for the life of the
// process.
type Child struct {
	init, worker *os.File
}

// Path executes the init program (/proc/self/fd/N). The descriptor is
// close-on-exec and numbered high, above the descriptors a call's child is
// handed, so it still names the program while the new process execs it.
func (c *Child) Path() string { return fmt.Sprintf("/proc/self/fd/%d", c.init.Fd()) }

// Init and Worker are the two programs, for the supervisor to hand each
// init (jail.InitExeFD, jail.WorkerExeFD).
func (c *Child) Init() *os.File   { return c.init }
func (c *Child) Worker() *os.File { return c.worker }

// Close releases the memory files.
func (c *Child) Close() error { return errors.Join(c.init.Close(), c.worker.Close()) }

// highFD is the least descriptor number the memfds take.
const highFD = 100

// Open writes the embedded programs into sealed memfds. It returns nil
// and no error when this build carries no programs it can vouch for (the
// caller then re-executes itself).
func Open() (*Child, error) {
	if Sum == "" || InitSum == "" {
		// None a build declared (the files reach the embed only through
		// build.sh's overlay, which also sets the sums).
		return nil, nil
	}
	worker, err := carry(workerName)
	if worker == nil || err != nil {
		return nil, err
	}
	initProg, err := carry(initName)
	if initProg == nil || err != nil {
		worker.Close()
		return nil, err
	}
	return &Child{init: initProg, worker: worker}, nil
}

// carry writes the embedded program name into a sealed memfd: nil and no
// error when the build carries no such file.
func carry(name string) (*os.File, error) {
	// Streamed, not read whole: a copy of a program in the heap cost a
	// 10 MB allocation at every start and stayed in brig's peak RSS.
	src, err := files.Open(name)
	if err != nil {
		return nil, nil
	}
	defer src.Close()
	base := path.Base(name)
	fd, err := unix.MemfdCreate(base, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("a memory file for %s: %w", base, err)
	}
	high, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, highFD)
	unix.Close(fd)
	if err != nil {
		return nil, fmt.Errorf("a memory file for %s: %w", base, err)
	}
	f := os.NewFile(uintptr(high), base)
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		return nil, fmt.Errorf("write %s: %w", base, err)
	}
	// Executable by anyone: a jail child starts in a new user namespace,
	// where the exec is checked against its mapped ids. (No one else can
	// reach the file: it has no name, and /proc/PID/fd of this
	// non-dumpable process is closed to others.)
	if err := unix.Fchmod(high, 0o555); err != nil {
		f.Close()
		return nil, fmt.Errorf("make %s executable: %w", base, err)
	}
	seals := unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE
	if _, err := unix.FcntlInt(uintptr(high), unix.F_ADD_SEALS, seals); err != nil {
		f.Close()
		return nil, fmt.Errorf("seal %s: %w", base, err)
	}
	return f, nil
}

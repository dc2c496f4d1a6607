// Package jailexe carries the programs brig runs as its children inside
// brig's binary and hands out what executes them — open descriptors of
// files kept in brig's state directory, or of sealed memory files (memfd)
// — so brig stays a single file to install and nothing a call can write
// decides what a later one executes. There are four:
// cmd/brig-jail-init, each call's init, and cmd/brig-jail, its worker,
// which links the Go tools — every call starts both, and the tools'
// packages (the policy, the HTML converter, the HTTP client, image
// decoders) doubled the start-up of a process that never runs them —,
// built twice: in full, and light, without the tools whose libraries are
// most of its size (internal/jailtools), which serves every other call;
// and cmd/brig-render, the TUI's renderer, whose libraries'
// initialisation slowed every start of brig itself (internal/render).
//
// Each program is kept on disk, in a directory the caller names
// (brig's state directory, which no call can ever write), under a name
// that holds its SHA-256, so that later runs of the same build open it
// instead of copying it again: a file that is there, is brig's user's,
// is writable by no one else, is executable and has the size the build
// declared serves as it is; any other is written anew (an unnamed file,
// synced, then linked in: never a half-written one under that name).
// Where none can be kept (no such directory, one that is not the user's
// alone, a file system mounted noexec) the program goes into a sealed
// memfd, as every run did before: writing the 7.3 MB that every session
// and `brig sandbox` start with cost 4–5 ms of CPU, and a session's first
// init and `brig sandbox -- true` waited 2–4 ms for it.
//
// The programs are embedded by the build (make, test/brigbin): it
// compiles them and adds them to this package through go build's
// -overlay, with a file that embeds them (nothing is written into the
// source tree), and sets Sum and InitSum to their SHA-256. A build
// without them (a plain go build) has no programs and no sums; then Open
// returns nil and brig re-executes itself, which works the same and
// starts slower.
//
// It must not decide anything about the jail: it only supplies the
// programs.
package jailexe

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// embedded holds the carried programs by name (workerName, initName):
// the file build.sh adds to this package (see above) fills it before main
// from its //go:embed strings, which sit in brig's read-only data. It is
// build output, like Sum; a test gives its own.
var embedded = map[string]string{}

// Sum and InitSum are the SHA-256 (hex) of the embedded worker and init
// programs, set at link time by the build that embedded them
// (-X brig/internal/jailexe.Sum=…): a build that declares no programs
// does not use them. (They are not recomputed at run time: hashing the
// programs cost 20 ms of every start.) They are build metadata, like a
// version string: nothing assigns them at run time.
var Sum, InitSum string

// RenderSum and LightSum are the SHA-256 (hex) of the embedded renderer
// and light worker, set like Sum.
var RenderSum, LightSum string

// CarriedC is the C library the carried init and workers are linked
// with, set like Sum: "musl" (build.sh found musl-gcc: they start
// faster), "system" (the machine's own C library), or "" (no carried
// programs). `brig version` reports it.
var CarriedC string

// The embedded programs' names, their paths beside this package in the
// build's overlay.
const (
	workerName = "bin/brig-jail"
	lightName  = "bin/brig-jail-light"
	initName   = "bin/brig-jail-init"
	renderName = "bin/brig-render"
)

// highFD is the least descriptor number the memfds take.
const highFD = 100

// Child is the embedded jail programs, open for the life of the process:
// init, the light worker (written in the background from Open on), and
// the full worker, written on first use.
type Child struct {
	dir  string // where programs are kept ("": none)
	init *os.File
	// light and lightErr are set once lightDone is closed (at once when
	// the build carries no light worker).
	light     *os.File
	lightErr  error
	lightDone chan struct{}
	// mu guards worker: the full worker once written (nil before).
	mu     sync.Mutex
	worker *os.File
}

// Path executes the init program (/proc/self/fd/N). The descriptor is
// close-on-exec and numbered high, above the descriptors a call's child is
// handed, so it still names the program while the new process execs it.
func (c *Child) Path() string { return fmt.Sprintf("/proc/self/fd/%d", c.init.Fd()) }

// Init is init's program, for the supervisor to hand each init
// (jail.InitExeFD).
func (c *Child) Init() *os.File { return c.init }

// Light is the light worker's program (cmd/brig-jail built with the
// brig_light_worker tag), nil when this build carries none. It waits for
// the write Open started.
func (c *Child) Light() (*os.File, error) {
	<-c.lightDone
	return c.light, c.lightErr
}

// HasLight reports whether this build carries a light worker (Light
// then returns one, or the error writing it met).
func HasLight() bool { return LightSum != "" && embedded[lightName] != "" }

// Worker is the full worker's program, written into its memfd at the
// first call (10 MB: milliseconds that a start need not spend when the
// light worker serves its calls); later calls return the same file. A
// failed write is not remembered: the next call tries again.
func (c *Child) Worker() (*os.File, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.worker == nil {
		w, err := carry(workerName, c.dir)
		if err != nil {
			return nil, err
		}
		c.worker = w
	}
	return c.worker, nil
}

// Close releases the memory files.
func (c *Child) Close() error {
	<-c.lightDone
	c.mu.Lock()
	defer c.mu.Unlock()
	errs := []error{c.init.Close()}
	if c.light != nil {
		errs = append(errs, c.light.Close())
	}
	if c.worker != nil {
		errs = append(errs, c.worker.Close())
	}
	return errors.Join(errs...)
}

// Open opens the embedded init program, kept in dir (see the package
// doc; "" keeps none) or written into a sealed memfd, and returns; the
// light worker, when the build carries one, is opened meanwhile in the
// background (Light waits for it), so that a first init can start while
// it is written: init asks for its worker only once it has started. (A
// session's first call and `brig sandbox` waited for both programs, 7.3
// MB, before init could start.) The full worker waits for its first use
// unless there is no light one. It returns nil and no error when this
// build carries no programs it can vouch for (the caller then re-executes
// itself).
func Open(dir string) (*Child, error) {
	if Sum == "" || InitSum == "" || embedded[workerName] == "" {
		// None a build declared (the files reach the embed only through
		// build.sh's overlay, which also sets the sums).
		return nil, nil
	}
	c := &Child{dir: dir, lightDone: make(chan struct{})}
	if HasLight() {
		// Started first: it is the longer write of the two.
		go func() {
			defer close(c.lightDone)
			c.light, c.lightErr = carry(lightName, dir)
		}()
	} else {
		close(c.lightDone)
	}
	initProg, err := carry(initName, dir)
	if initProg == nil || err != nil {
		go c.closeLight() // once written, unused
		return nil, err
	}
	c.init = initProg
	if !HasLight() {
		if _, err := c.Worker(); err != nil {
			initProg.Close()
			return nil, err
		}
	}
	return c, nil
}

// closeLight waits for the light worker's write and closes its file.
func (c *Child) closeLight() {
	<-c.lightDone
	if c.light != nil {
		c.light.Close()
	}
}

// CarriesRenderer reports whether this build carries the renderer
// (cmd/brig-render), without writing it anywhere.
func CarriesRenderer() bool { return RenderSum != "" && embedded[renderName] != "" }

// OpenRenderer opens the embedded renderer, kept in dir like the jail's
// programs or written into a sealed memfd (11 MB: several milliseconds,
// so the TUI does it off its first frame's path). It returns nil and no
// error when this build carries none.
func OpenRenderer(dir string) (*os.File, error) {
	if RenderSum == "" {
		return nil, nil
	}
	return carry(renderName, dir)
}

// sumOf is the SHA-256 the build declared for the embedded program name.
func sumOf(name string) string {
	switch name {
	case workerName:
		return Sum
	case lightName:
		return LightSum
	case initName:
		return InitSum
	case renderName:
		return RenderSum
	}
	return ""
}

// carry opens the embedded program name, kept in dir when it can be
// (keep), otherwise written into a sealed memfd: nil and no error when
// the build carries no such program.
func carry(name, dir string) (*os.File, error) {
	data := embedded[name]
	if data == "" {
		return nil, nil
	}
	if dir != "" {
		f, err := keep(dir, path.Base(name), sumOf(name), data)
		if err == nil {
			return f, nil
		}
		slog.Debug("jailexe: the program is written into memory (it cannot be kept on disk)", "program", path.Base(name), "dir", dir, "err", err)
	}
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
	if err := copyOut(f, data); err != nil {
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

// copyOut writes data into f a MiB at a time. When data sits in a file
// mapping no one writes (brig's read-only data, where the embedded
// programs are), it lets go of the pages each MiB was read through once
// it is written: they were read only to be copied, and otherwise stayed
// in brig's resident memory for the session (14 MB, a third of the
// supervisor's peak). Anything that reads them again gets them back from
// the page cache. Memory of any other kind (a test's strings) is left
// alone: letting go of anonymous pages would lose their contents.
func copyOut(f *os.File, data string) error {
	release := inReadOnlyFileMapping(data)
	page := os.Getpagesize()
	base := uintptr(unsafe.Pointer(unsafe.StringData(data)))
	done := 0 // data[:done] is written, and released up to a page boundary
	const chunk = 1 << 20
	for off := 0; off < len(data); off += chunk {
		end := min(off+chunk, len(data))
		if _, err := f.WriteString(data[off:end]); err != nil {
			return err
		}
		if !release {
			continue
		}
		// Whole pages only, from the first boundary at or after done to
		// the last at or before end.
		from := int(alignUp(base+uintptr(done), page) - base)
		to := int(alignDown(base+uintptr(end), page) - base)
		if to > from {
			b := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.StringData(data)), from)), to-from)
			_ = unix.Madvise(b, unix.MADV_DONTNEED) // only memory, if it fails
			done = to
		}
	}
	return nil
}

func alignUp(p uintptr, page int) uintptr   { return (p + uintptr(page) - 1) &^ (uintptr(page) - 1) }
func alignDown(p uintptr, page int) uintptr { return p &^ (uintptr(page) - 1) }

// inReadOnlyFileMapping reports whether all of data lies in one mapping of
// a file that is not writable (/proc/self/maps).
func inReadOnlyFileMapping(data string) bool {
	if data == "" {
		return false
	}
	start := uint64(uintptr(unsafe.Pointer(unsafe.StringData(data))))
	end := start + uint64(len(data))
	maps, err := os.Open("/proc/self/maps")
	if err != nil {
		return false
	}
	defer maps.Close()
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		// START-END PERMS OFFSET DEV INODE [PATH]
		f := strings.Fields(sc.Text())
		if len(f) < 6 {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		a, err1 := strconv.ParseUint(lo, 16, 64)
		b, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || start < a || end > b {
			continue
		}
		return len(f[1]) == 4 && f[1][1] == '-' && f[1][3] == 'p' && f[4] != "0"
	}
	return false
}

// Command reuse measures the question behind the jail's next step: what
// a call costs when every call gets an init process of its own (brig
// today) against one init that serves calls in turn. It is not brig's
// jail; it keeps the two designs' common parts the same and times what
// differs:
//
//   - fresh: for each call a child is cloned into new user, mount, PID,
//     IPC and UTS namespaces the way brig starts its init
//     (jail.StartInNamespaces: a shared-memory clone that writes its own
//     ID maps) and executes this program, a Go program linking the jail
//     package with cgo, as brig's carried init does; it makes its mounts
//     private, mounts a tmpfs on /tmp, runs the command and exits.
//   - reuse: one such init, started once; for each call a new thread of
//     it unshares a mount, IPC and UTS namespace of its own (which the
//     command inherits and which is gone with the thread and the
//     command), makes its mounts private, mounts a tmpfs on /tmp, runs
//     the command, then kills every other process of its PID namespace
//     and reaps them, as an init whose next call must find nothing left
//     would.
//   - plain: the command started by this program with no namespace.
//
// -net adds a network namespace to both. Modes alternate by round, so
// they share the machine's state; each round prints the wall time per
// call and the machine's busy time per call (/proc/stat: the kernel's
// deferred work, such as a namespace's teardown, counts), and the end
// the medians over rounds. It needs user namespaces (or root).
//
//	go run ./test/bench/reuse -calls 300 -rounds 3
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"brig/jail"
)

const initArg = "__reuse_bench_init"

func main() {
	if len(os.Args) > 2 && os.Args[1] == initArg {
		if err := initMain(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "reuse bench init:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	calls := flag.Int("calls", 300, "calls per mode and round")
	rounds := flag.Int("rounds", 3, "rounds; the modes alternate within each")
	net := flag.Bool("net", false, "a network namespace per call too")
	command := flag.String("command", "/bin/true", "the command each call runs (no arguments)")
	flag.Parse()
	if err := run(*calls, *rounds, *net, *command); err != nil {
		fmt.Fprintln(os.Stderr, "reuse bench:", err)
		os.Exit(1)
	}
}

type figures struct{ wall, busy []float64 } // ms per call, one per round

func run(calls, rounds int, net bool, command string) error {
	modes := []string{"plain", "fresh", "reuse"}
	got := map[string]*figures{}
	for _, m := range modes {
		got[m] = &figures{}
	}
	for r := range rounds {
		for _, m := range modes {
			wall, busy, err := measure(m, calls, net, command)
			if err != nil {
				return fmt.Errorf("%s: %w", m, err)
			}
			fmt.Printf("round %d %-5s net=%v: wall %6.2f ms/call, machine busy %6.2f ms/call (load %s)\n", r+1, m, net, wall, busy, loadavg())
			got[m].wall = append(got[m].wall, wall)
			got[m].busy = append(got[m].busy, busy)
		}
	}
	fmt.Printf("medians over %d rounds of %d calls (%d cores):\n", rounds, calls, runtime.NumCPU())
	for _, m := range modes {
		fmt.Printf("  %-5s wall %6.2f ms/call, machine busy %6.2f ms/call\n", m, median(got[m].wall), median(got[m].busy))
	}
	return nil
}

// measure runs calls calls in one mode and returns the wall time and the
// machine's busy time per call, in ms.
func measure(mode string, calls int, net bool, command string) (wall, busy float64, err error) {
	settle := 300 * time.Millisecond // the kernel's deferred teardown lands in the window
	time.Sleep(settle)
	b0, err := busyTicks()
	if err != nil {
		return 0, 0, err
	}
	t0 := time.Now()
	switch mode {
	case "plain":
		for range calls {
			if err := runCommand(command); err != nil {
				return 0, 0, err
			}
		}
	case "fresh":
		for range calls {
			if err := fresh(net, command); err != nil {
				return 0, 0, err
			}
		}
	case "reuse":
		err = reuse(calls, net, command)
	}
	if err != nil {
		return 0, 0, err
	}
	elapsed := time.Since(t0)
	time.Sleep(settle)
	b1, err := busyTicks()
	if err != nil {
		return 0, 0, err
	}
	const msPerTick = 1000.0 / 100 // USER_HZ
	return float64(elapsed.Microseconds()) / 1000 / float64(calls), float64(b1-b0) * msPerTick / float64(calls), nil
}

func cloneflags(net bool) uintptr {
	f := uintptr(unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS)
	if net {
		f |= unix.CLONE_NEWNET
	}
	return f
}

// startInit starts this program as an init in new namespaces; its
// descriptor 0 and 1 are stdin and stdout, the rest /dev/null.
func startInit(how string, net bool, stdin, stdout *os.File) (*os.Process, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return jail.StartInNamespaces(jail.NSProcess{
		Path:       self,
		Args:       []string{self, initArg, how},
		Env:        []string{"GOMAXPROCS=1", "PATH=/usr/bin:/bin"},
		Files:      []*os.File{stdin, stdout, nil},
		Cloneflags: cloneflags(net),
		UIDMap:     fmt.Sprintf("0 %d 1", os.Getuid()),
		GIDMap:     fmt.Sprintf("0 %d 1", os.Getgid()),
	})
}

func fresh(net bool, command string) error {
	p, err := startInit("once "+command, net, nil, nil)
	if err != nil {
		return err
	}
	st, err := p.Wait()
	if err != nil {
		return err
	}
	if !st.Success() {
		return fmt.Errorf("the init of a call ended with %v", st)
	}
	return nil
}

// reuse serves calls calls from one init: a byte asks for a call, the
// init's byte back says it is over ('k') or failed.
func reuse(calls int, net bool, command string) error {
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return err
	}
	p, err := startInit("serve "+command, net, inR, outW)
	inR.Close()
	outW.Close()
	if err != nil {
		return err
	}
	r := bufio.NewReader(outR)
	for i := range calls {
		if _, err := inW.Write([]byte{'c'}); err != nil {
			return err
		}
		if b, err := r.ReadByte(); err != nil || b != 'k' {
			inW.Close()
			_, _ = p.Wait()
			return fmt.Errorf("call %d: the init answered %q (%v)", i, b, err)
		}
	}
	inW.Close()
	st, err := p.Wait()
	if err == nil && !st.Success() {
		err = fmt.Errorf("the serving init ended with %v", st)
	}
	return err
}

// initMain is the init's side: "once CMD" or "serve CMD".
func initMain(how string) error {
	mode, command, _ := strings.Cut(how, " ")
	switch mode {
	case "once":
		if err := callView(); err != nil {
			return err
		}
		return runCommand(command)
	case "serve":
		var b [1]byte
		for {
			if n, _ := os.Stdin.Read(b[:]); n == 0 {
				return nil
			}
			if err := serveOne(command); err != nil {
				return err
			}
			if _, err := os.Stdout.Write([]byte{'k'}); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("unknown mode %q", mode)
}

// serveOne runs one call on a new thread in namespaces of its own; the
// thread ends with it (its goroutine returns locked).
func serveOne(command string) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread and its namespaces end here
		errc <- func() error {
			if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS); err != nil {
				return fmt.Errorf("unshare: %w", err)
			}
			if err := callView(); err != nil {
				return err
			}
			err := runCommand(command)
			killRest()
			return err
		}()
	}()
	return <-errc
}

// callView is the part of a call's view both designs share here: private
// mounts and a tmpfs of the call's own on /tmp.
func callView() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	if err := unix.Mount("tmpfs", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=1m"); err != nil {
		return fmt.Errorf("mount a tmpfs on /tmp: %w", err)
	}
	return nil
}

// runCommand starts the command and waits for it.
func runCommand(command string) error {
	pid, err := syscall.ForkExec(command, []string{command}, &syscall.ProcAttr{
		Env:   []string{"PATH=/usr/bin:/bin"},
		Files: []uintptr{nullFD(), nullFD(), nullFD()},
		Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		return fmt.Errorf("start %s: %w", command, err)
	}
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil {
		return fmt.Errorf("wait for %s: %w", command, err)
	}
	if ws.ExitStatus() != 0 {
		return fmt.Errorf("%s exited with %d", command, ws.ExitStatus())
	}
	return nil
}

// killRest kills every other process of the init's PID namespace and
// reaps them: what a serving init does before its next call.
func killRest() {
	_ = unix.Kill(-1, unix.SIGKILL)
	for {
		var ws unix.WaitStatus
		if _, err := unix.Wait4(-1, &ws, 0, nil); errors.Is(err, unix.ECHILD) || (err != nil && !errors.Is(err, unix.EINTR)) {
			return
		}
	}
}

var null *os.File

func nullFD() uintptr {
	if null == nil {
		null, _ = os.OpenFile(os.DevNull, os.O_RDWR, 0)
	}
	return null.Fd()
}

func busyTicks() (uint64, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	var busy uint64
	for i, s := range strings.Fields(line)[1:] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat: %w", err)
		}
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, nil
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.Join(strings.Fields(string(b))[:1], "")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

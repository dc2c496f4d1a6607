//go:build cgo

package jail

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestStartInNamespaces starts a shell the way the supervisor starts every
// call's init — new user, mount and PID namespaces, the ID maps written by
// the child itself, ambient capabilities, descriptors at fixed numbers —
// and checks what it started with; then that a failing step is reported
// as an error and leaves no process behind.
func TestStartInNamespaces(t *testing.T) {
	sh := nsShell(t)
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	extraR, extraW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer extraR.Close()
	if _, err := extraW.WriteString("on fd 3\n"); err != nil {
		t.Fatal(err)
	}
	extraW.Close()
	// A descriptor not handed over, open (but close-on-exec cleared) in
	// this process: the program must not have it.
	leak, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer leak.Close()
	if _, err := unix.FcntlInt(leak.Fd(), unix.F_SETFD, 0); err != nil {
		t.Fatal(err)
	}
	uid, gid := os.Getuid(), os.Getgid()
	script := `set -e
cat /proc/self/uid_map /proc/self/gid_map /proc/self/setgroups
echo pid $$
echo dir $(pwd)
echo env $BRIG_NS_TEST
echo slack $(cat /proc/self/timerslack_ns)
grep CapAmb /proc/self/status
cat <&3
for fd in 4 5 6 7 8 9 ` + fmt.Sprint(leak.Fd()) + `; do if [ -e /proc/self/fd/$fd ]; then echo "leaked fd $fd"; fi; done
`
	dir := t.TempDir()
	proc, err := StartInNamespaces(NSProcess{
		Path: sh, Args: []string{"sh", "-c", script},
		Env:        []string{"BRIG_NS_TEST=yes", "PATH=/usr/bin:/bin"},
		Dir:        dir,
		Files:      []*os.File{nil, outW, outW, extraR},
		Cloneflags: unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID,
		UIDMap:     fmt.Sprintf("%d %d 1", uid, uid),
		GIDMap:     fmt.Sprintf("%d %d 1", gid, gid),
		AmbientCaps: []uintptr{
			unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN,
		},
		TimerSlack: 1234567,
	})
	outW.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(outR)
	st, err := proc.Wait()
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	if !st.Success() {
		t.Fatalf("the program failed (%v): %s", st, got)
	}
	want := []string{
		fmt.Sprintf("%d %d 1", uid, uid), fmt.Sprintf("%d %d 1", gid, gid), "deny",
		"pid 1", "dir " + dir, "env yes", "slack 1234567",
		fmt.Sprintf("CapAmb:\t%016x", uint64(1)<<unix.CAP_SYS_ADMIN|uint64(1)<<unix.CAP_NET_ADMIN),
		"on fd 3",
	}
	lines := strings.Split(strings.TrimSpace(got), "\n")
	for i := range lines {
		lines[i] = strings.Join(strings.Fields(lines[i]), " ")
	}
	for _, w := range want {
		w = strings.Join(strings.Fields(w), " ")
		found := false
		for _, l := range lines {
			found = found || l == w
		}
		if !found {
			t.Errorf("missing %q in the program's output:\n%s", w, got)
		}
	}
	if TimerSlack() == 1234567 {
		t.Error("this process's own timer slack is the one asked for the program: the check above proves nothing")
	}
	if strings.Contains(got, "leaked fd") {
		t.Errorf("a descriptor not handed over reached the program:\n%s", got)
	}

	// Failures: the step is named, the errno kept, nothing is left running.
	for _, tc := range []struct {
		name string
		p    NSProcess
		want error
		step string
	}{
		{"no such program", NSProcess{Path: "/nonexistent/brig-test", Args: []string{"x"}}, fs.ErrNotExist, "exec"},
		{"no such directory", NSProcess{Path: sh, Args: []string{"sh"}, Dir: "/nonexistent/dir"}, fs.ErrNotExist, "chdir"},
		{"a map of another user", NSProcess{Path: sh, Args: []string{"sh"}, Cloneflags: unix.CLONE_NEWUSER,
			UIDMap: fmt.Sprintf("0 %d 2", uid+1)}, nil, "uid_map"},
	} {
		proc, err := StartInNamespaces(tc.p)
		if err == nil {
			t.Errorf("%s: started (pid %d), want an error", tc.name, proc.Pid)
			_, _ = proc.Wait()
			continue
		}
		if tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if !strings.Contains(err.Error(), tc.step) {
			t.Errorf("%s: %v does not name the step (%s)", tc.name, err, tc.step)
		}
	}
	// The failed children were reaped by the start itself.
	var ws unix.WaitStatus
	if pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil); !errors.Is(err, unix.ECHILD) {
		t.Errorf("a child remains after the failed starts: pid %d, %v", pid, err)
	}
}

// nsShell is the shell these tests start; it skips the test where there
// is none or this process may not create a user namespace.
func nsShell(t *testing.T) string {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	if !userNamespacesWork(t, sh) {
		t.Skip("user namespaces are not available here")
	}
	return sh
}

// userNamespacesWork reports whether this process may create a user
// namespace (a test host may forbid it).
func userNamespacesWork(t *testing.T, sh string) bool {
	t.Helper()
	cmd := exec.Command(sh, "-c", "true")
	cmd.SysProcAttr = &unix.SysProcAttr{Cloneflags: unix.CLONE_NEWUSER}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Logf("user namespace: %v %s", err, stderr.String())
		return false
	}
	return true
}

// TestStartInNamespacesCopiesNoMemory: starting a program in a new user
// namespace must not fork the caller's memory. With a fork (what os/exec
// does for a new user namespace) every page the caller writes afterwards
// faults once, copy-on-write; sharing the memory until the exec leaves
// none. Counted per thread (RUSAGE_THREAD), on memory without huge pages,
// with os/exec's start as the control that shows the count can see it.
func TestStartInNamespacesCopiesNoMemory(t *testing.T) {
	sh := nsShell(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const size = 16 << 20
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	if err := unix.Madvise(mem, unix.MADV_NOHUGEPAGE); err != nil {
		t.Fatal(err)
	}
	pages := size / os.Getpagesize()
	touch := func() {
		for i := 0; i < size; i += os.Getpagesize() {
			mem[i]++
		}
	}
	faults := func() int64 {
		var ru unix.Rusage
		if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
			t.Fatal(err)
		}
		return ru.Minflt
	}
	uid, gid := os.Getuid(), os.Getgid()
	// faultsAfter starts a program with start, then counts the faults of
	// writing every page again.
	faultsAfter := func(start func() error) int64 {
		touch() // every page present and writable
		if err := start(); err != nil {
			t.Fatal(err)
		}
		before := faults()
		touch()
		return faults() - before
	}
	control := faultsAfter(func() error {
		cmd := exec.Command(sh, "-c", "true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWUSER,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}}
		return cmd.Run()
	})
	if control < int64(pages)/2 {
		t.Skipf("a fork here left only %d faults on %d pages written (the count cannot tell a fork from a shared start)", control, pages)
	}
	got := faultsAfter(func() error {
		proc, err := StartInNamespaces(NSProcess{Path: sh, Args: []string{"sh", "-c", "true"},
			Cloneflags: unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID,
			UIDMap:     fmt.Sprintf("%d %d 1", uid, uid), GIDMap: fmt.Sprintf("%d %d 1", gid, gid)})
		if err != nil {
			return err
		}
		_, err = proc.Wait()
		return err
	})
	t.Logf("faults writing %d pages after a start: os/exec %d, StartInNamespaces %d", pages, control, got)
	if got > int64(pages)/10 {
		t.Errorf("writing %d pages after StartInNamespaces faulted %d times (os/exec's fork: %d): the start copied the caller's memory", pages, got, control)
	}
}

package jailexe

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// keptSetup embeds /bin/echo as init and /bin/cat as the worker with
// their real sums for the test's length, and returns a directory to keep
// them in (not yet made) and the two programs' bytes.
func keptSetup(t *testing.T) (dir string, echo, cat []byte) {
	t.Helper()
	echo, err := os.ReadFile("/bin/echo")
	if err != nil {
		t.Skip("no /bin/echo to carry:", err)
	}
	cat, err = os.ReadFile("/bin/cat")
	if err != nil {
		t.Skip("no /bin/cat to carry:", err)
	}
	saved := []any{embedded, Sum, InitSum, LightSum}
	t.Cleanup(func() {
		embedded, Sum, InitSum, LightSum = saved[0].(map[string]string), saved[1].(string), saved[2].(string), saved[3].(string)
	})
	embedded = map[string]string{workerName: string(cat), initName: string(echo)}
	Sum, InitSum, LightSum = sha(cat), sha(echo), ""
	return filepath.Join(t.TempDir(), "state", "programs"), echo, cat
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// target is what the descriptor of f names (/proc/self/fd).
func target(t *testing.T, f *os.File) string {
	t.Helper()
	l, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// runFD executes the program open at f with args.
func runFD(t *testing.T, f *os.File, args ...string) string {
	t.Helper()
	out, err := exec.Command(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("run the program at fd %d: %v %q", f.Fd(), err, out)
	}
	return string(out)
}

// TestProgramsAreKept: the first Open of a build writes each program into
// the directory, whole, under a name holding its SHA-256, mode 0500, and
// executes it from there; the next Open uses the same files without
// writing them again.
func TestProgramsAreKept(t *testing.T) {
	dir, echo, cat := keptSetup(t)
	initFile := filepath.Join(dir, "brig-jail-init-"+sha(echo))
	workerFile := filepath.Join(dir, "brig-jail-"+sha(cat))

	c, err := Open(dir)
	if err != nil || c == nil {
		t.Fatalf("open: %v %v", c, err)
	}
	w, err := c.Worker()
	if err != nil {
		t.Fatal(err)
	}
	if got := target(t, c.Init()); got != initFile {
		t.Errorf("init runs from %s, want %s", got, initFile)
	}
	if got := target(t, w); got != workerFile {
		t.Errorf("the worker runs from %s, want %s", got, workerFile)
	}
	for file, want := range map[string][]byte{initFile: echo, workerFile: cat} {
		b, err := os.ReadFile(file)
		if err != nil || string(b) != string(want) {
			t.Errorf("%s does not hold the program (%v)", file, err)
		}
		if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o500 {
			t.Errorf("%s: %v %v, want mode 0500", file, fi.Mode(), err)
		}
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the directory: %v %v, want mode 0700", fi.Mode(), err)
	}
	if fd := c.Init().Fd(); fd < highFD {
		t.Errorf("init's program is at fd %d, below %d", fd, highFD)
	}
	if out := runFD(t, c.Init(), "kept", "x"); out != "kept x\n" {
		t.Errorf("init (echo) printed %q", out)
	}
	var before unix.Stat_t
	if err := unix.Stat(initFile, &before); err != nil {
		t.Fatal(err)
	}
	c.Close()

	c, err = Open(dir)
	if err != nil || c == nil {
		t.Fatalf("open again: %v %v", c, err)
	}
	defer c.Close()
	var after unix.Stat_t
	if err := unix.Stat(initFile, &after); err != nil {
		t.Fatal(err)
	}
	if after.Ino != before.Ino || after.Ctim != before.Ctim {
		t.Error("the second Open wrote init's program again")
	}
	if got := target(t, c.Init()); got != initFile {
		t.Errorf("the second Open runs init from %s", got)
	}
}

// TestKeptProgramsAreCheckedAndReplaced: a file under a kept program's
// name that is not that program — the wrong size, writable by others, not
// executable, a symbolic link — is never executed: it is replaced by the
// program (a link's target is left alone). Other builds' copies are
// removed when a program is written; other files are not.
func TestKeptProgramsAreCheckedAndReplaced(t *testing.T) {
	dir, echo, _ := keptSetup(t)
	initFile := filepath.Join(dir, "brig-jail-init-"+sha(echo))
	canary := filepath.Join(t.TempDir(), "canary")
	for _, c := range []struct {
		name  string
		plant func()
	}{
		{"a shorter file", func() { must(t, os.WriteFile(initFile, echo[:len(echo)/2], 0o500)) }},
		{"a longer file", func() { must(t, os.WriteFile(initFile, append(echo, "tail"...), 0o500)) }},
		{"the same size, writable by the group", func() {
			must(t, os.WriteFile(initFile, echo, 0o500))
			must(t, os.Chmod(initFile, 0o520))
		}},
		{"the same size, not executable", func() { must(t, os.WriteFile(initFile, echo, 0o400)) }},
		{"a FIFO (its open must not wait for a writer)", func() { must(t, unix.Mkfifo(initFile, 0o700)) }},
		{"a link to a file of the same size", func() {
			must(t, os.WriteFile(canary, echo, 0o700))
			must(t, os.Symlink(canary, initFile))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			must(t, os.MkdirAll(dir, 0o700))
			_ = os.Remove(initFile)
			c.plant()
			other := filepath.Join(dir, "brig-jail-init-"+strings.Repeat("0", 64))
			unrelated := filepath.Join(dir, "brig-jail-init-notes")
			must(t, os.WriteFile(other, []byte("an older build's init"), 0o500))
			must(t, os.WriteFile(unrelated, []byte("not a program"), 0o600))

			ch, err := Open(dir)
			if err != nil || ch == nil {
				t.Fatalf("open: %v %v", ch, err)
			}
			defer ch.Close()
			if got := target(t, ch.Init()); got != initFile {
				t.Fatalf("init runs from %s, want the rewritten %s", got, initFile)
			}
			fi, err := os.Lstat(initFile)
			if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o500 {
				t.Fatalf("%s after Open: %v %v", initFile, fi.Mode(), err)
			}
			if b, err := os.ReadFile(initFile); err != nil || string(b) != string(echo) {
				t.Fatalf("%s does not hold the program after Open (%v)", initFile, err)
			}
			if out := runFD(t, ch.Init(), "ok"); out != "ok\n" {
				t.Errorf("init printed %q", out)
			}
			if _, err := os.Lstat(other); !os.IsNotExist(err) {
				t.Errorf("an older build's copy is still there (%v)", err)
			}
			if _, err := os.Lstat(unrelated); err != nil {
				t.Errorf("a file that is no program's copy was removed (%v)", err)
			}
		})
	}
	if b, err := os.ReadFile(canary); err == nil && string(b) != string(echo) {
		t.Error("the link's target was written")
	}
}

// TestProgramsNotKeptWhereOthersCanWrite: a directory writable by others,
// or not this user's, or on a noexec mount, keeps nothing; the programs go
// into memfds and the directory is left as it was. The control keeps them
// in a directory of the same kind that is this user's alone.
func TestProgramsNotKeptWhereOthersCanWrite(t *testing.T) {
	dir, echo, _ := keptSetup(t)
	initName := "brig-jail-init-" + sha(echo)
	inMemory := func(t *testing.T, dir string) {
		t.Helper()
		// brig doctor says so, and why, before any start.
		if carried, kept, why := Where(dir); !carried || kept || why == "" {
			t.Errorf("Where(%s) = %v, %v, %q; want carried, not kept, and a reason", dir, carried, kept, why)
		}
		c, err := Open(dir)
		if err != nil || c == nil {
			t.Fatalf("open: %v %v", c, err)
		}
		defer c.Close()
		if got := target(t, c.Init()); !strings.HasPrefix(got, "/memfd:brig-jail-init") {
			t.Errorf("init runs from %s, want a memfd", got)
		}
		if out := runFD(t, c.Init(), "mem"); out != "mem\n" {
			t.Errorf("init printed %q", out)
		}
		if _, err := os.Lstat(filepath.Join(dir, initName)); !os.IsNotExist(err) {
			t.Errorf("a program was written into %s (%v)", dir, err)
		}
	}
	t.Run("writable by others", func(t *testing.T) {
		must(t, os.MkdirAll(dir, 0o700))
		must(t, os.Chmod(dir, 0o777))
		inMemory(t, dir)
	})
	t.Run("a link to a directory", func(t *testing.T) {
		real := t.TempDir()
		link := filepath.Join(t.TempDir(), "programs")
		must(t, os.Symlink(real, link))
		inMemory(t, link)
		if names, err := os.ReadDir(real); err != nil || len(names) != 0 {
			t.Errorf("the link's target holds %v (%v), want nothing", names, err)
		}
	})
	t.Run("another user's", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to give a directory away")
		}
		d := filepath.Join(t.TempDir(), "programs")
		must(t, os.Mkdir(d, 0o700))
		must(t, os.Chown(d, 12345, 12345))
		inMemory(t, d)
	})
	t.Run("mounted noexec", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to mount")
		}
		d := t.TempDir()
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_NOEXEC, "mode=0700"); err != nil {
			t.Skip("cannot mount a tmpfs:", err)
		}
		defer unix.Unmount(d, unix.MNT_DETACH)
		inMemory(t, d)
		// Not made yet, below a noexec mount: the first run could not
		// keep them there either.
		if _, kept, why := Where(filepath.Join(d, "state", "programs")); kept || !strings.Contains(why, "noexec") {
			t.Errorf("Where below a noexec mount: %v %q", kept, why)
		}
	})
	t.Run("control: this user's alone", func(t *testing.T) {
		d := filepath.Join(t.TempDir(), "programs")
		if _, kept, why := Where(d); !kept || !strings.Contains(why, "first run") {
			t.Errorf("Where before the first run: %v %q", kept, why)
		}
		c, err := Open(d)
		if err != nil || c == nil {
			t.Fatalf("open: %v %v", c, err)
		}
		defer c.Close()
		if got := target(t, c.Init()); got != filepath.Join(d, initName) {
			t.Errorf("init runs from %s, want it kept in %s", got, d)
		}
		if _, kept, why := Where(d); !kept || why != "kept in "+d {
			t.Errorf("Where after it: %v %q", kept, why)
		}
	})
	t.Run("a build that carries none", func(t *testing.T) {
		saved := Sum
		Sum = ""
		defer func() { Sum = saved }()
		if carried, _, why := Where(t.TempDir()); carried || !strings.Contains(why, "re-executes brig") {
			t.Errorf("Where without programs: %v %q", carried, why)
		}
	})
}

// TestProgramsKeptByConcurrentStarts: brig processes starting at once
// with an empty directory each get the whole program (whichever links it
// in first).
func TestProgramsKeptByConcurrentStarts(t *testing.T) {
	dir, echo, _ := keptSetup(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := Open(dir)
			if err != nil || c == nil {
				errs <- fmt.Errorf("open: %v %v", c, err)
				return
			}
			defer c.Close()
			b, err := os.ReadFile(fmt.Sprintf("/proc/self/fd/%d", c.Init().Fd()))
			if err != nil || string(b) != string(echo) {
				errs <- fmt.Errorf("init's program is not whole (%d bytes, %v)", len(b), err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestKeptProgramHasNoWriterWhenNamed: when a program is linked in under
// its name, where another brig may exec it at once, no descriptor of
// this process may write it (an exec would be refused with ETXTBSY).
func TestKeptProgramHasNoWriterWhenNamed(t *testing.T) {
	dir, _, _ := keptSetup(t)
	var writers []string
	linked := 0
	beforeLink = func(ro int) {
		linked++
		var want unix.Stat_t
		if err := unix.Fstat(ro, &want); err != nil {
			t.Error(err)
			return
		}
		fds, _ := os.ReadDir("/proc/self/fd")
		for _, e := range fds {
			var st unix.Stat_t
			if unix.Stat("/proc/self/fd/"+e.Name(), &st) != nil || st.Dev != want.Dev || st.Ino != want.Ino {
				continue
			}
			info, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
			if err != nil {
				continue
			}
			for _, l := range strings.Split(string(info), "\n") {
				if v, ok := strings.CutPrefix(l, "flags:"); ok {
					if flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil && flags&unix.O_ACCMODE != unix.O_RDONLY {
						writers = append(writers, e.Name())
					}
				}
			}
		}
	}
	defer func() { beforeLink = func(int) {} }()
	c, err := Open(dir)
	if err != nil || c == nil {
		t.Fatalf("open: %v %v", c, err)
	}
	defer c.Close()
	if linked == 0 {
		t.Fatal("no program was written, so the case proves nothing")
	}
	if len(writers) > 0 {
		t.Fatalf("descriptors %v could write a program as it was named", writers)
	}
}

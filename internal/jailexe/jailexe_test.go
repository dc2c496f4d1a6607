package jailexe

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestOpenRunsTheCarriedChild: programs whose sums the build declared are
// written into sealed memfds that execute, cannot be written, and sit
// above the descriptors a child is handed; without declared sums, or
// without init or the worker, nothing is used. With a light worker, the
// full one is written only when asked for, once.
func TestOpenRunsTheCarriedChild(t *testing.T) {
	// ELF programs (a script would be read by its interpreter after exec,
	// when the close-on-exec descriptor is gone; the programs are ELF).
	echo, err := os.ReadFile("/bin/echo")
	if err != nil {
		t.Skip("no /bin/echo to carry:", err)
	}
	cat, err := os.ReadFile("/bin/cat")
	if err != nil {
		t.Skip("no /bin/cat to carry:", err)
	}
	hexSum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	with := func(m map[string]string, sum, initSum, lightSum string) {
		embedded, Sum, InitSum, LightSum = m, sum, initSum, lightSum
	}
	defer func(e map[string]string, s, i, l string) { embedded, Sum, InitSum, LightSum = e, s, i, l }(embedded, Sum, InitSum, LightSum)
	both := map[string]string{workerName: string(cat), initName: string(echo)}

	for _, c := range []struct {
		name         string
		files        map[string]string
		sum, initSum string
	}{
		{"no declared sums", both, "", ""},
		{"no declared init sum", both, hexSum(cat), ""},
		{"sums but no programs", map[string]string{}, hexSum(cat), hexSum(echo)},
		{"no init program", map[string]string{workerName: string(cat)}, hexSum(cat), hexSum(echo)},
		{"no worker program", map[string]string{initName: string(echo)}, hexSum(cat), hexSum(echo)},
	} {
		with(c.files, c.sum, c.initSum, "")
		if ch, err := Open(""); ch != nil || err != nil {
			t.Fatalf("%s: %v %v", c.name, ch, err)
		}
	}
	memfds := func() int {
		t.Helper()
		entries, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range entries {
			if l, _ := os.Readlink("/proc/self/fd/" + e.Name()); strings.HasPrefix(l, "/memfd:brig-jail") {
				n++
			}
		}
		return n
	}
	sealed := func(f *os.File) {
		t.Helper()
		if fd := f.Fd(); fd < highFD {
			t.Errorf("fd %d is below %d", fd, highFD)
		}
		if w, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), os.O_WRONLY, 0); err == nil {
			_, werr := w.Write([]byte("changed"))
			w.Close()
			if werr == nil {
				t.Errorf("the sealed program at fd %d could be written", f.Fd())
			}
		}
	}

	t.Run("without a light worker", func(t *testing.T) {
		with(both, hexSum(cat), hexSum(echo), "")
		before := memfds()
		c, err := Open("")
		if err != nil || c == nil {
			t.Fatalf("open: %v", err)
		}
		defer c.Close()
		if l, err := c.Light(); l != nil || err != nil {
			t.Errorf("a light worker without one embedded: %v %v", l, err)
		}
		if n := memfds() - before; n != 2 {
			t.Errorf("Open wrote %d programs, want init and the worker", n)
		}
		// Path runs the init program (echo here), Worker is the other.
		if out, err := exec.Command(c.Path(), "carried", "x").CombinedOutput(); err != nil || string(out) != "carried x\n" {
			t.Fatalf("run the init program: %v %q", err, out)
		}
		w, err := c.Worker()
		if err != nil {
			t.Fatal(err)
		}
		if out := runFD(t, w, "/proc/self/comm"); out == "" {
			t.Error("the worker (cat) printed nothing")
		}
		sealed(c.Init())
		sealed(w)
	})
	t.Run("with a light worker", func(t *testing.T) {
		light, err := os.ReadFile("/bin/true")
		if err != nil {
			t.Skip("no /bin/true to carry:", err)
		}
		three := map[string]string{workerName: string(cat), initName: string(echo), lightName: string(light)}
		with(three, hexSum(cat), hexSum(echo), hexSum(light))
		before := memfds()
		c, err := Open("")
		if err != nil || c == nil {
			t.Fatalf("open: %v %v", c, err)
		}
		l, err := c.Light() // written in the background; Light waits for it
		if err != nil || l == nil {
			t.Fatalf("the light worker: %v %v", l, err)
		}
		if n := memfds() - before; n != 2 {
			t.Errorf("Open wrote %d programs, want init and the light worker", n)
		}
		runFD(t, l)
		sealed(l)
		w, err := c.Worker()
		if err != nil {
			t.Fatal(err)
		}
		if w2, _ := c.Worker(); w2 != w {
			t.Error("the full worker was written twice")
		}
		if n := memfds() - before; n != 3 {
			t.Errorf("after Worker, %d programs are open, want 3", n)
		}
		if out := runFD(t, w, "/proc/self/comm"); out == "" {
			t.Error("the worker (cat) printed nothing")
		}
		sealed(w)
		c.Close()
		if n := memfds() - before; n != 0 {
			t.Errorf("Close left %d programs open", n)
		}
	})
}

// TestCopyOutReleasesReadOnlyFilePages: data in a read-only file mapping
// (as brig's embedded programs are) is copied whole, and the pages it was
// read through leave the process's resident memory; the data still reads
// back intact from the page cache. Data in anonymous memory is copied and
// left alone (control: releasing it would zero it).
func TestCopyOutReleasesReadOnlyFilePages(t *testing.T) {
	const size = 3<<20 + 12345 // spans chunks, and ends inside a page
	content := make([]byte, size)
	for i := range content {
		content[i] = byte(i*7 + i/4096)
	}
	src := filepath.Join(t.TempDir(), "program")
	if err := os.WriteFile(src, content, 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(src, unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(fd, 0, size, unix.PROT_READ, unix.MAP_PRIVATE)
	unix.Close(fd)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	data := unsafe.String(&m[0], size)
	if !inReadOnlyFileMapping(data) {
		t.Fatal("a read-only private file mapping was not recognised")
	}
	if !bytes.Equal(m, content) { // every page read, so resident
		t.Fatal("the mapping does not hold the file")
	}
	if kb := mappingRSS(t, &m[0]); kb < 3<<10 {
		t.Fatalf("only %d kB resident after reading the whole mapping", kb)
	}
	out := copyTo(t, data)
	if !bytes.Equal(out, content) {
		t.Fatal("the copy differs from the data")
	}
	if kb := mappingRSS(t, &m[0]); kb > 16 {
		t.Errorf("%d kB of the mapping still resident after the copy", kb)
	}
	if !bytes.Equal(m, content) {
		t.Fatal("the data no longer reads back intact")
	}

	// Control: anonymous memory is copied and keeps its contents.
	heap := string(content)
	if inReadOnlyFileMapping(heap) {
		t.Fatal("a heap string was taken for a read-only file mapping")
	}
	if out := copyTo(t, heap); !bytes.Equal(out, content) || heap != string(content) {
		t.Fatal("copying a heap string changed it or its copy")
	}
}

// copyTo runs copyOut into a fresh memfd and reads the result back.
func copyTo(t *testing.T, data string) []byte {
	t.Helper()
	fd, err := unix.MemfdCreate("copy", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "copy")
	defer f.Close()
	if err := copyOut(f, data); err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mappingRSS is the resident size (kB) of the mapping holding p, from
// /proc/self/smaps.
func mappingRSS(t *testing.T, p *byte) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	addr := uint64(uintptr(unsafe.Pointer(p)))
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			lo, hi, _ := strings.Cut(f[0], "-")
			a, _ := strconv.ParseUint(lo, 16, 64)
			z, _ := strconv.ParseUint(hi, 16, 64)
			in = addr >= a && addr < z
			continue
		}
		if in && len(f) >= 2 && f[0] == "Rss:" {
			kb, _ := strconv.Atoi(f[1])
			return kb
		}
	}
	t.Fatal("the mapping is not in /proc/self/smaps")
	return 0
}

package jailexe

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"testing"
	"testing/fstest"
)

// TestOpenRunsTheCarriedChild: programs whose sums the build declared are
// written into sealed memfds that execute, cannot be written, and sit
// above the descriptors a child is handed; without declared sums, or
// without either file, nothing is used.
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
	with := func(m fstest.MapFS, sum, initSum string) { files, Sum, InitSum = m, sum, initSum }
	defer func(f fs.FS, s, i string) { files, Sum, InitSum = f, s, i }(files, Sum, InitSum)
	both := fstest.MapFS{workerName: {Data: cat}, initName: {Data: echo}}

	for _, c := range []struct {
		name         string
		files        fstest.MapFS
		sum, initSum string
	}{
		{"no declared sums", both, "", ""},
		{"no declared init sum", both, hexSum(cat), ""},
		{"sums but no programs", fstest.MapFS{}, hexSum(cat), hexSum(echo)},
		{"no init program", fstest.MapFS{workerName: {Data: cat}}, hexSum(cat), hexSum(echo)},
		{"no worker program", fstest.MapFS{initName: {Data: echo}}, hexSum(cat), hexSum(echo)},
	} {
		with(c.files, c.sum, c.initSum)
		if ch, err := Open(); ch != nil || err != nil {
			t.Fatalf("%s: %v %v", c.name, ch, err)
		}
	}
	with(both, hexSum(cat), hexSum(echo))
	c, err := Open()
	if err != nil || c == nil {
		t.Fatalf("open: %v", err)
	}
	defer c.Close()
	for _, f := range []*os.File{c.init, c.worker} {
		if fd := f.Fd(); fd < highFD {
			t.Errorf("fd %d is below %d", fd, highFD)
		}
	}
	// Path runs the init program (echo here), Worker is the other.
	out, err := exec.Command(c.Path(), "carried", "x").CombinedOutput()
	if err != nil || string(out) != "carried x\n" {
		t.Fatalf("run the init program: %v %q", err, out)
	}
	worker := fmt.Sprintf("/proc/self/fd/%d", c.Worker().Fd())
	out, err = exec.Command(worker, "/proc/self/comm").CombinedOutput()
	if err != nil || len(out) == 0 {
		t.Fatalf("run the worker program: %v %q", err, out)
	}
	for _, p := range []string{c.Path(), worker} {
		if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			_, werr := f.Write([]byte("changed"))
			f.Close()
			if werr == nil {
				t.Errorf("the sealed program %s could be written", p)
			}
		}
	}
}

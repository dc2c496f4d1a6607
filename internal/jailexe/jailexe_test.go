package jailexe

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"testing"
	"testing/fstest"
)

// TestOpenRunsTheCarriedChild: a child whose sum the build declared is
// written into a sealed memfd that executes, cannot be written, and sits
// above the descriptors a child is handed; without a declared sum, or with
// without the file, nothing is used.
func TestOpenRunsTheCarriedChild(t *testing.T) {
	// An ELF program (a script would be read by its interpreter after
	// exec, when the close-on-exec descriptor is gone; the child is ELF).
	script, err := os.ReadFile("/bin/echo")
	if err != nil {
		t.Skip("no /bin/echo to carry:", err)
	}
	sum := sha256.Sum256(script)
	with := func(data []byte, s string) {
		files, Sum = fstest.MapFS{childName: {Data: data}}, s
	}
	defer func(f fs.FS, s string) { files, Sum = f, s }(files, Sum)

	with(script, "")
	if c, err := Open(); c != nil || err != nil {
		t.Fatalf("no declared sum: %v %v", c, err)
	}
	with(nil, hex.EncodeToString(make([]byte, 32)))
	files = fstest.MapFS{}
	if c, err := Open(); c != nil || err != nil {
		t.Fatalf("a sum but no child: %v %v", c, err)
	}
	with(script, hex.EncodeToString(sum[:]))
	c, err := Open()
	if err != nil || c == nil {
		t.Fatalf("open: %v", err)
	}
	defer c.Close()
	if fd := c.f.Fd(); fd < highFD {
		t.Errorf("fd %d is below %d", fd, highFD)
	}
	out, err := exec.Command(c.Path(), "carried", "x").CombinedOutput()
	if err != nil || string(out) != "carried x\n" {
		t.Fatalf("run: %v %q", err, out)
	}
	if f, err := os.OpenFile(c.Path(), os.O_WRONLY, 0); err == nil {
		_, werr := f.Write([]byte("changed"))
		f.Close()
		if werr == nil {
			t.Error("the sealed child could be written")
		}
	}
}

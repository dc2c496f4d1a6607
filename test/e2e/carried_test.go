package e2e

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCarriedProgramsLinkMusl: where this machine has musl-gcc, build.sh
// links the carried programs that use cgo (init, the workers) with musl,
// whose start asks the CPU nothing, where a static glibc's asks cpuid
// some seventy times (a trap to the hypervisor each on a virtual
// machine) — paid by every call's init. The programs brig wrote for a
// run must hold none of glibc's strings; brig itself, linked with glibc,
// is the control that the check sees them. brig version reports it.
func TestCarriedProgramsLinkMusl(t *testing.T) {
	if _, err := exec.LookPath("musl-gcc"); err != nil {
		t.Skip("no musl-gcc here: build.sh links the carried programs with the system's C library (make installs musl where it can)")
	}
	e := newEnv(t, "anthropic")
	cmd := exec.Command(brig, "sandbox", "--", "true")
	cmd.Dir, cmd.Env = e.ws, e.vars
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("brig sandbox -- true: %v\n%s", err, out)
	}
	dir := filepath.Join(e.home, ".local/state/brig/programs")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, en := range entries {
		if !strings.HasPrefix(en.Name(), "brig-jail") {
			continue // the renderer is pure Go
		}
		b, err := os.ReadFile(filepath.Join(dir, en.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("glibc")) {
			t.Errorf("%s is linked with glibc although this machine has musl-gcc", en.Name())
		}
		seen = append(seen, en.Name())
	}
	if len(seen) < 2 { // init and the light worker, at least
		t.Fatalf("brig sandbox wrote %v into %s, want init and a worker", seen, dir)
	}
	// brig version says so (the stamp build.sh sets).
	out, err := exec.Command(brig, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "jail:    init and the workers carried inside brig, linked with musl\n") {
		t.Errorf("brig version does not say the jail's programs are linked with musl:\n%s", out)
	}
	if !isStatic(t, brig) {
		t.Log("no control: brig itself is linked dynamically")
		return
	}
	b, err := os.ReadFile(brig)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("glibc")) {
		t.Error("brig, statically linked with glibc, holds no \"glibc\": the check above cannot tell")
	}
}

// isStatic reports whether the ELF program at path has no interpreter
// (a static link: make's brig links glibc so where it can).
func isStatic(t *testing.T, path string) bool {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	return true
}

// TestBrigLeavesWebFetchToItsWorker: build.sh builds brig with the
// brig_carrier tag, so brig itself links no HTML converter or character
// sets (their set-up cost every start of brig); web_fetch runs in the
// carried full worker, which does link them: TestFullWorkerCalls's
// web_fetch is the control that a page is still turned into Markdown.
func TestBrigLeavesWebFetchToItsWorker(t *testing.T) {
	out, err := exec.Command("go", "version", "-m", brig).Output()
	if err != nil {
		t.Fatalf("go version -m %s: %v", brig, err)
	}
	info := string(out)
	tags := ""
	for _, l := range strings.Split(info, "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "-tags=") {
			tags = f[1]
		}
	}
	if !strings.Contains(tags, "brig_carrier") {
		t.Errorf("brig was built with %q, without the brig_carrier tag (internal/build/build.sh)", tags)
	}
	for _, mod := range []string{"github.com/JohannesKaufmann/html-to-markdown/v2", "golang.org/x/text"} {
		if strings.Contains(info, "\t"+mod+"\t") {
			t.Errorf("brig links %s, which only the carried worker's web_fetch uses", mod)
		}
	}
	if !strings.Contains(info, "\tgithub.com/spf13/cobra\t") {
		t.Errorf("go version -m lists no cobra for brig: the check reads the wrong thing\n%s", info)
	}
}

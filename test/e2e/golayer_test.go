package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGoLayerWarmsEveryWorkspace is the Go layer as a user meets it: brig
// cache warm builds the standard library in the jail, and a new
// workspace's first jailed go build then compiles its own package and
// nothing of the library (go build -x lists each compile). A hostile
// call appends to the objects its GOCACHE shows and writes the layer by
// its path: the layer's bytes do not change, and another workspace's
// build, which links those objects, runs. Control: once brig cache clean
// --all has removed the layer, a new workspace compiles fmt again.
func TestGoLayerWarmsEveryWorkspace(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	e := newEnv(t, "anthropic")
	for i, v := range e.vars {
		if strings.HasPrefix(v, "PATH=") {
			e.vars[i] = "PATH=" + filepath.Dir(goBin) + ":/usr/bin:/bin"
		}
	}
	r := e.run(t, "cache", "warm")
	if r.code != 0 || !strings.Contains(r.stdout, "the Go layer is ready: go version go") {
		t.Fatalf("brig cache warm: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	layer := filepath.Join(e.home, ".cache", "brig", "go-std")
	before := layerSum(t, layer)
	if r := e.run(t, "doctor"); !strings.Contains(r.stdout, "Go builds  start from "+layer) {
		t.Errorf("brig doctor does not name the layer:\n%s", r.stdout)
	}

	hello := func(name string) string {
		ws := filepath.Join(filepath.Dir(e.ws), name)
		if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
		for f, body := range map[string]string{
			"go.mod":  "module hello\n",
			"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello from\", \"" + name + "\") }\n",
		} {
			if err := os.WriteFile(filepath.Join(ws, f), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return ws
	}
	// build runs a jailed go build -x in a new workspace and the program
	// it made, and returns go's list of what it did.
	build := func(name string) string {
		t.Helper()
		ws := hello(name)
		c := e.cmd("sandbox", "--", "sh", "-c", "go build -x -o hello . && ./hello")
		c.Dir = ws
		out, err := c.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "hello from "+name) {
			t.Fatalf("the build in %s: %v\n%s", name, err, out)
		}
		if !strings.Contains(string(out), "-p main ") {
			t.Fatalf("go build -x listed no compile of the workspace's own package:\n%s", out)
		}
		return string(out)
	}
	if out := build("first"); strings.Contains(out, "-p fmt ") {
		t.Fatalf("a new workspace compiled fmt with the layer in place:\n%s", out)
	}

	hostile := hello("hostile")
	c := e.cmd("sandbox", "--", "sh", "-c", `n=0
for f in "$GOCACHE"/*/*-d; do echo planted >> "$f" && n=$((n+1)); [ $n -ge 200 ] && break; done
echo "appended to $n"
echo planted > "$1/00/planted-d" || echo layer-refused
chmod -R 777 "$1" 2>/dev/null || echo chmod-refused`, "sh", layer)
	c.Dir = hostile
	out, _ := c.CombinedOutput()
	for _, want := range []string{"appended to 200", "layer-refused", "chmod-refused"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the hostile call's output lacks %q:\n%s", want, out)
		}
	}
	if after := layerSum(t, layer); after != before {
		t.Fatal("a call changed the Go layer")
	}
	if out := build("second"); strings.Contains(out, "-p fmt ") {
		t.Fatalf("the layer stopped serving after the hostile call:\n%s", out)
	}

	// Control: without the layer, the standard library is compiled.
	if r := e.run(t, "cache", "clean", "--all"); r.code != 0 || !strings.Contains(r.stdout, "removed the Go layer") {
		t.Fatalf("brig cache clean --all: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if out := build("third"); !strings.Contains(out, "-p fmt ") {
		t.Fatalf("without the layer, fmt was not compiled: is -x output missing?\n%s", out)
	}
}

// layerSum is a digest of every file under dir: its name, mode, time and
// bytes. It also checks every regular file is dated in the future (brig
// dates them so that go neither re-dates nor trims them).
func layerSum(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	future := time.Now().AddDate(100, 0, 0)
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		h.Write([]byte(p + "\x00" + fi.Mode().String() + "\x00" + fi.ModTime().String() + "\x00"))
		if fi.Mode().IsRegular() {
			if fi.ModTime().Before(future) {
				t.Errorf("%s is dated %s, not in the future", p, fi.ModTime())
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("the layer holds %d files: not the standard library", n)
	}
	return hex.EncodeToString(h.Sum(nil))
}

package jail_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brig/internal/unprivtest"
	"brig/jail"
	"brig/policy"
)

// envOverlayUnpriv marks the unprivileged pass of TestGoLayerIsReadOnly.
const envOverlayUnpriv = "BRIG_OVERLAY_UNPRIV"

// TestGoLayerIsReadOnly: a call sees the Go layer beneath its GOCACHE and
// whatever it does there — append to a layer file, chmod it, re-date it,
// remove one, add one, write the layer by its own path — lands in its own
// cache or is refused: the layer's files keep their bytes, mode and time,
// and a call of another workspace still reads them unchanged. Controls: the
// first workspace's next call sees its own changes (the writes were made),
// and without the layer GOCACHE holds none of its files.
func TestGoLayerIsReadOnly(t *testing.T) {
	e := newEnv(t)
	if !e.sup.Namespaces() {
		t.Skip("the Go layer needs a mount namespace for calls")
	}
	layer := filepath.Join(e.outside, "go-std")
	cacheRoot := filepath.Join(e.outside, "jail")
	for _, d := range []string{layer + "/ab", layer + "/cd", cacheRoot} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range map[string]string{"ab/obj-d": "layer-bytes\n", "ab/old-a": "entry\n", "cd/keep-d": "untouched\n"} {
		if err := os.WriteFile(filepath.Join(layer, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := treeState(t, layer)
	withLayer := func(ws string, on bool) jail.Spec {
		return e.spec(t, func(p *policy.Profile) {
			p.Workspace, p.Dir, p.CacheRoot = ws, ws, cacheRoot
			if on {
				p.GoLayer = layer
			}
		})
	}
	spec := withLayer(e.ws, true)
	if len(spec.Overlays) != 1 {
		t.Fatalf("the spec shows no layer: %+v", spec.Overlays)
	}
	res := e.sh(t, spec, `c=$GOCACHE/ab
cat $c/obj-d
echo tampered >> $c/obj-d && echo appended
chmod 777 $c/obj-d && echo chmodded
touch -d 2001-01-01 $c/obj-d && echo redated
rm $c/old-a && echo removed
echo new > $c/new-d && echo added
echo direct > `+layer+`/ab/direct-d || echo direct-refused
chmod 777 `+layer+`/ab/obj-d || echo chmod-refused`)
	out := string(res.Stdout)
	for _, want := range []string{"layer-bytes", "appended", "chmodded", "redated", "removed", "added", "direct-refused", "chmod-refused"} {
		if !strings.Contains(out, want) {
			t.Errorf("the call's output lacks %q:\n%s\n%s", want, out, res.Stderr)
		}
	}
	if after := treeState(t, layer); after != before {
		t.Fatalf("the call changed the layer:\nbefore\n%s\nafter\n%s", before, after)
	}

	// Control: the writes were made, into the workspace's own cache; and
	// the next call (which may be served by the same init) still sees
	// the layer beneath it.
	res = e.sh(t, spec, `cat $GOCACHE/ab/obj-d $GOCACHE/ab/new-d $GOCACHE/cd/keep-d; test -e $GOCACHE/ab/old-a || echo old-gone`)
	if got := string(res.Stdout); got != "layer-bytes\ntampered\nnew\nuntouched\nold-gone\n" {
		t.Fatalf("the workspace's next call sees %q", got)
	}

	// Another workspace reads the layer as it was.
	other := filepath.Join(filepath.Dir(e.ws), "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	res = e.sh(t, withLayer(other, true), `cat $GOCACHE/ab/obj-d $GOCACHE/ab/old-a; ls $GOCACHE/ab`)
	if got := string(res.Stdout); got != "layer-bytes\nentry\nobj-d\nold-a\n" {
		t.Fatalf("another workspace's call sees %q (stderr %s)", got, res.Stderr)
	}
	// Control: without the layer, nothing of it is there.
	bare := filepath.Join(filepath.Dir(e.ws), "bare")
	if err := os.MkdirAll(bare, 0o755); err != nil {
		t.Fatal(err)
	}
	res = e.sh(t, withLayer(bare, false), `ls -A $GOCACHE; test -e $GOCACHE/ab/obj-d && echo layer-seen; true`)
	if strings.Contains(string(res.Stdout), "layer-seen") || strings.Contains(string(res.Stdout), "ab") {
		t.Fatalf("a call without the layer sees it: %q", res.Stdout)
	}
}

// TestGoLayerIsReadOnlyUnprivileged runs TestGoLayerIsReadOnly again as
// uid/gid 65534: an ordinary user's init mounts the overlay with the one
// extra capability the supervisor passes it, and the layer holds all the
// same.
func TestGoLayerIsReadOnlyUnprivileged(t *testing.T) {
	out := unprivtest.Rerun(t, envOverlayUnpriv, "^Test(GoLayer(IsReadOnly|IsNotMountedThroughALink|UnderABroadGrant)|BrigCacheUnderABroadGrant)$")
	for _, name := range []string{"TestGoLayerIsReadOnly", "TestGoLayerIsNotMountedThroughALink", "TestGoLayerUnderABroadGrant", "TestBrigCacheUnderABroadGrant"} {
		if !bytes.Contains(out, []byte("--- PASS: "+name)) {
			t.Fatalf("the unprivileged pass did not pass %s:\n%s", name, out)
		}
	}
}

// TestGoLayerIsNotMountedThroughALink: init opens the overlay's
// directories without following links, so a link put where the cache's
// directory belongs (another call of the workspace can, after the
// supervisor prepared it) gets no overlay mounted on what it names: the
// directory the link names stays without the layer. Control: the same
// spec with the real directory gets the layer.
func TestGoLayerIsNotMountedThroughALink(t *testing.T) {
	e := newEnv(t)
	if !e.sup.Namespaces() {
		t.Skip("the Go layer needs a mount namespace for calls")
	}
	layer := filepath.Join(e.outside, "go-std")
	if err := os.MkdirAll(layer, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(layer, "obj-d"), []byte("layer-bytes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := e.spec(t, func(p *policy.Profile) { p.CacheRoot, p.GoLayer = filepath.Join(e.outside, "jail"), layer })
	if len(spec.Overlays) != 1 {
		t.Fatalf("the spec shows no layer: %+v", spec.Overlays)
	}
	res := e.sh(t, spec, `cat $GOCACHE/obj-d`) // control, and the supervisor makes the cache
	if string(res.Stdout) != "layer-bytes\n" {
		t.Fatalf("the real directory did not get the layer: %q %s", res.Stdout, res.Stderr)
	}
	// What the link names lies in the cache, beside the work directory,
	// as a call could make it: an overlay could be mounted there.
	target := filepath.Join(spec.Cache.Dir(), "elsewhere")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	link := spec.Overlays[0].Dir + ".link"
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	spec.Overlays[0].Dir = link
	res = e.sh(t, spec, `cat `+target+`/obj-d 2>/dev/null && echo mounted-through-link; grep -c ' overlay ' /proc/self/mountinfo; true`)
	if got := string(res.Stdout); got != "0\n" {
		t.Fatalf("an overlay was mounted through the link: %q (stderr %s)", got, res.Stderr)
	}
}

// treeState lists every file under dir with its mode, time and bytes.
func treeState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		data := []byte{}
		if fi.Mode().IsRegular() {
			if data, err = os.ReadFile(p); err != nil {
				return err
			}
		}
		b.WriteString(p + " " + fi.Mode().String() + " " + fi.ModTime().String() + " " + string(data) + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestGoLayerUnderABroadGrant: a call granted a write above the layer
// (--write ~/.cache) gets no overlay, and the layer stays read-only
// whatever it tries; one it makes where there was none is taken out after
// the call, so no session with a broad grant can plant what every
// workspace's builds would link. Control: the rest of the grant is
// writable.
func TestGoLayerUnderABroadGrant(t *testing.T) {
	e := newEnv(t)
	if !e.sup.Namespaces() {
		t.Skip("the Go layer needs a mount namespace for calls")
	}
	cache := filepath.Join(e.outside, "cache")
	layer := filepath.Join(cache, "go-std")
	if err := os.MkdirAll(layer, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(layer, "obj-d"), []byte("layer-bytes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := treeState(t, layer)
	mk := func() jail.Spec {
		return e.spec(t, func(p *policy.Profile) {
			p.CacheRoot, p.GoLayer, p.Write = filepath.Join(cache, "jail"), layer, []string{cache}
		})
	}
	spec := mk()
	if len(spec.Overlays) != 0 {
		t.Fatalf("an overlay of a layer the call may write: %+v", spec.Overlays)
	}
	res := e.sh(t, spec, `echo tampered >> `+layer+`/obj-d || echo append-refused
mkdir `+layer+`/ab || echo mkdir-refused
echo mine > `+cache+`/sibling && echo sibling-written`)
	for _, want := range []string{"append-refused", "mkdir-refused", "sibling-written"} {
		if !strings.Contains(string(res.Stdout), want) {
			t.Errorf("the call's output lacks %q:\n%s\n%s", want, res.Stdout, res.Stderr)
		}
	}
	if after := treeState(t, layer); after != before {
		t.Fatalf("the call changed the layer:\nbefore\n%s\nafter\n%s", before, after)
	}

	// No layer yet: one the call makes is taken out.
	if err := os.RemoveAll(layer); err != nil {
		t.Fatal(err)
	}
	res = e.sh(t, mk(), `mkdir -p `+layer+`/ab && echo planted > `+layer+`/ab/obj-d && echo made`)
	if _, err := os.Lstat(layer); err == nil {
		t.Fatalf("a layer the call made is still there (call said %q)", res.Stdout)
	}
}

// TestBrigCacheUnderABroadGrant: under a grant that covers brig's cache
// (--write ~/.cache, --write ~), the call writes its own workspace's cache
// and nothing else of brig's cache: not the Go layer, not another
// workspace's cache, and no new entry (a `brig cache warm` that starts
// during the call builds in one). With a mount namespace the cache is
// read-only but for the call's own; without one the rest is hidden. The
// control: the rest of the grant stays writable. Run as uid 65534 too
// (TestGoLayerIsReadOnlyUnprivileged).
func TestBrigCacheUnderABroadGrant(t *testing.T) {
	e := newEnv(t)
	modes := []bool{false}
	if e.sup.Namespaces() {
		modes = append(modes, true)
	}
	for _, ns := range modes {
		t.Run(fmt.Sprintf("namespaces=%v", ns), func(t *testing.T) {
			dotCache := filepath.Join(e.outside, fmt.Sprintf("dotcache-%v", ns))
			brigCache := filepath.Join(dotCache, "brig")
			layer, other := filepath.Join(brigCache, "go-std"), filepath.Join(brigCache, "jail", "other-ws")
			// Without a mount namespace the directories on the way to a
			// hidden place take no new entries (Landlock), so the control
			// writes in a tool's existing directory.
			tool := filepath.Join(dotCache, "tool")
			for _, d := range []string{layer, other, tool} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(d, "obj-d"), []byte("trusted\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := treeState(t, brigCache)
			spec := e.spec(t, func(p *policy.Profile) {
				p.CacheRoot, p.GoLayer, p.BrigCache, p.Write = filepath.Join(brigCache, "jail"), layer, brigCache, []string{dotCache}
				if !ns {
					p.Namespaces, p.CallTmp = false, t.TempDir()
				}
			})
			spec.Layers.NoNamespaces = !ns
			// Made after the grant was compiled (another workspace's first
			// call, a brig cache warm), before the call starts.
			late := []string{filepath.Join(brigCache, "go-std.build-late"), filepath.Join(brigCache, "jail", "late-ws")}
			for _, d := range late {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			before = treeState(t, brigCache)
			res := e.sh(t, spec, `echo x > `+late[0]+`/obj-d || echo late-build-refused
echo x > `+late[1]+`/obj-d || echo late-cache-refused
echo tampered >> `+layer+`/obj-d || echo layer-refused
echo tampered >> `+other+`/obj-d || echo other-refused
mkdir `+brigCache+`/go-std.build-1 || echo new-entry-refused
mkdir `+brigCache+`/jail/next-ws || echo new-cache-refused
echo mine > "$GOCACHE/mine" && echo own-written
echo mine > `+tool+`/sibling && echo sibling-written`)
			for _, want := range []string{"late-build-refused", "late-cache-refused", "layer-refused", "other-refused", "new-entry-refused", "new-cache-refused", "own-written", "sibling-written"} {
				if !strings.Contains(string(res.Stdout), want) {
					t.Errorf("the call's output lacks %q:\n%s\n%s", want, res.Stdout, res.Stderr)
				}
			}
			after := treeState(t, brigCache)
			// The call's own cache is the one change there may be.
			own := spec.Cache.Dir()
			keep := func(s string) string {
				var out []string
				for _, l := range strings.Split(s, "\n") {
					if l != "" && !strings.Contains(l, own) && !strings.HasPrefix(l, brigCache+"/jail ") && !strings.HasPrefix(l, brigCache+" ") {
						out = append(out, l)
					}
				}
				return strings.Join(out, "\n")
			}
			if keep(after) != keep(before) {
				t.Fatalf("the call changed brig's cache beyond its own:\nbefore\n%s\nafter\n%s", before, after)
			}
			if b, err := os.ReadFile(filepath.Join(own, "go-build", "mine")); err != nil || string(b) != "mine\n" {
				t.Errorf("the own cache was not written: %q %v", b, err)
			}
		})
	}
}

package policy

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"brig/jail"
)

// listTree is every path under root with its type and mode, for comparing
// a directory tree before and after.
func listTree(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, _ := d.Info()
		if fi != nil {
			b.WriteString(p + " " + fi.Mode().String() + "\n")
		}
		return nil
	})
	return b.String()
}

// TestCompilingHasNoSideEffects: building the grant of a call touches
// nothing, however often: no cache directory is made, and a symbolic link
// a call planted in the cache (npmrc -> a file outside) is not written
// through. The supervisor prepares the cache only when the call runs.
func TestCompilingHasNoSideEffects(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	cacheRoot := filepath.Join(root, "cache", "jail")
	victim := filepath.Join(root, "important.txt")
	for _, d := range []string{ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(victim, []byte("precious\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	p := Profile{Workspace: ws, Dir: ws, Home: root, ParentEnv: []string{"PATH=/usr/bin:/bin"}, Limits: jail.DefaultLimits(), Namespaces: true, CacheRoot: cacheRoot}
	before := listTree(t, root)
	spec, err := p.Spec()
	if err != nil {
		t.Fatal(err)
	}
	if after := listTree(t, root); after != before {
		t.Fatalf("compiling changed the filesystem:\nbefore\n%s\nafter\n%s", before, after)
	}
	if spec.Cache == nil || spec.Cache.Root != cacheRoot {
		t.Fatalf("the spec does not describe the cache: %+v", spec.Cache)
	}
	if !slices.ContainsFunc(spec.Paths, func(r jail.PathRule) bool { return r.Path == spec.Cache.Dir() && r.Access == jail.Write }) {
		t.Fatalf("the cache %s is not granted: %+v", spec.Cache.Dir(), spec.Paths)
	}
	for _, want := range []string{"GOCACHE=" + spec.Cache.Dir() + "/go-build", "GOENV=" + spec.Cache.Dir() + "/go.env", "npm_config_userconfig=" + spec.Cache.Dir() + "/npmrc", "CARGO_HOME=" + spec.Cache.Dir() + "/cargo"} {
		if !slices.Contains(spec.Env, want) {
			t.Errorf("env lacks %s", want)
		}
	}

	// A call planted npmrc -> victim in an existing cache.
	if err := os.MkdirAll(spec.Cache.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(spec.Cache.Dir(), "npmrc")); err != nil {
		t.Fatal(err)
	}
	before = listTree(t, root)
	for range 3 {
		if _, err := p.Spec(); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "precious\n" {
		t.Fatalf("the file the planted link names changed: %q %v", b, err)
	}
	if after := listTree(t, root); after != before {
		t.Fatalf("compiling changed the filesystem:\nbefore\n%s\nafter\n%s", before, after)
	}
}

// TestCacheFollowsTheRepositoryNotThePath: the same repository keeps its
// cache; a repository deleted and cloned again at the same path gets
// another one, and the first is listed as stale (for the supervisor to
// remove); the cache of brig's earlier path-only layout is never used and
// left to `brig cache clean`. Another workspace's caches are never listed.
func TestCacheFollowsTheRepositoryNotThePath(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	ws := filepath.Join(root, "proj")
	cacheRoot := filepath.Join(root, "jail")
	mkrepo := func() {
		t.Helper()
		if err := os.MkdirAll(ws, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
	}
	mkrepo()
	first, _, err := jailCache(cacheRoot, ws, root, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := jailCache(cacheRoot, ws, root, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if first.Name != again.Name {
		t.Fatalf("the same repository got two caches: %s, %s", first.Name, again.Name)
	}
	if !strings.HasPrefix(first.Name, WorkspaceID(ws)+"-") || !IsCacheOf(first.Name, WorkspaceID(ws)) {
		t.Fatalf("cache name %q", first.Name)
	}
	// The cache exists (a call ran), and so do an old-layout cache of this
	// path and caches of other workspaces whose names look alike.
	others := []string{WorkspaceID(ws) + "-x", WorkspaceID(filepath.Join(root, "other")) + "-0123456789abcdef", WorkspaceID(ws) + "-0123456789abcdef-0123456789abcdef"}
	for _, d := range append([]string{first.Name, WorkspaceID(ws)}, others...) {
		if err := os.MkdirAll(filepath.Join(cacheRoot, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// Replacing only .git (a new clone into the same directory) is
	// another repository too.
	if err := os.RemoveAll(filepath.Join(ws, ".git")); err != nil {
		t.Fatal(err)
	}
	mkrepo()
	second, _, err := jailCache(cacheRoot, ws, root, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if second.Name == first.Name {
		t.Fatal("a new .git kept the old repository's cache")
	}
	want := []string{first.Name} // the old layout's is left to brig cache clean
	if !slices.Equal(second.Stale, want) {
		t.Fatalf("stale caches %v, want %v", second.Stale, want)
	}
	// Deleted and made again at the same path.
	if err := os.RemoveAll(ws); err != nil {
		t.Fatal(err)
	}
	mkrepo()
	third, _, err := jailCache(cacheRoot, ws, root, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if third.Name == second.Name || third.Name == first.Name {
		t.Fatalf("a repository made again at the same path kept a cache: %s", third.Name)
	}
}

// TestBashCacheIsTheFirstCallsCache: the cache prepared ahead of the first
// call (BashCache) is the one a bash call's grant names, in each mode.
func TestBashCacheIsTheFirstCallsCache(t *testing.T) {
	for _, mode := range []Mode{ModeAsk, ModeAuto, ModePlan} {
		p, _, _, _ := testPolicy(t, mode, "")
		c, err := p.BashCache()
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		v := p.Decide(Call{Tool: "bash", Effect: EffectExec, Command: "echo hi"})
		if v.Tier == Deny {
			t.Fatalf("%s: the call is denied: %+v", mode, v)
		}
		spec, err := p.Compile(v, "")
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if !reflect.DeepEqual(c, spec.Cache) {
			t.Errorf("%s: BashCache %+v, the call's %+v", mode, c, spec.Cache)
		}
		if c == nil {
			t.Errorf("%s: no cache (the comparison proves nothing)", mode)
		}
	}
}

// TestPlanModeHasACacheOfItsOwn: plan mode's calls (and so a subagent's)
// build with a toolchain cache no call that may write uses, so a call
// that promised to change nothing cannot plant a build artifact that a
// later build with write rights links in (red team, round 5: a plan-mode
// make test wrote $GOCACHE/PLANTED in the cache ask mode's calls use). A
// reading line of a writing mode keeps the mode's cache, and neither
// cache counts the other as stale.
func TestPlanModeHasACacheOfItsOwn(t *testing.T) {
	cacheOf := func(p *Policy, cmd string) *jail.Cache {
		t.Helper()
		v := p.Decide(Call{Tool: "bash", Effect: EffectExec, Command: cmd})
		spec, err := p.Compile(v, "")
		if err != nil || spec.Cache == nil {
			t.Fatalf("%s %q: %v (cache %v)", p.Mode(), cmd, err, spec.Cache)
		}
		return spec.Cache
	}
	p, _, _, _ := testPolicy(t, ModeAsk, "")
	build, reading := cacheOf(p, "make test"), cacheOf(p, "ls")
	if err := p.SetMode(ModePlan); err != nil {
		t.Fatal(err)
	}
	plan := cacheOf(p, "make test")
	if build.Name != reading.Name || plan.Name == build.Name || plan.Name != ReadOnlyCache(build.Name) {
		t.Fatalf("caches: ask's build %s, ask's reading line %s, plan's %s", build.Name, reading.Name, plan.Name)
	}
	if !IsCacheOf(plan.Name, WorkspaceID(p.Places.Workspace)) {
		t.Errorf("brig cache does not list the read-only calls' cache %s", plan.Name)
	}
	// Both exist: neither is the other's stale cache.
	for _, c := range []*jail.Cache{build, plan} {
		if err := os.MkdirAll(c.Dir(), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, mode := range []Mode{ModePlan, ModeAsk} {
		if err := p.SetMode(mode); err != nil {
			t.Fatal(err)
		}
		if c := cacheOf(p, "make test"); len(c.Stale) != 0 {
			t.Errorf("%s: stale %v", mode, c.Stale)
		}
	}
}

// TestGoLayerBeneathTheCache: with a mount namespace and brig cache
// warm's layer in place, a call's GOCACHE is an overlay of its cache over
// the layer, which it may read and never write. No overlay without the
// layer, without a namespace (the cache stays as it was), or when another
// grant lets the call write the layer: a layer one workspace could change
// must not reach another's builds, and the jail refuses such an overlay
// outright.
func TestGoLayerBeneathTheCache(t *testing.T) {
	root := t.TempDir()
	ws, layer := filepath.Join(root, "ws"), filepath.Join(root, "cache", "go-std")
	for _, d := range []string{ws, layer} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	base := Profile{Workspace: ws, Dir: ws, Home: root, ParentEnv: []string{"PATH=/usr/bin:/bin"}, Limits: jail.DefaultLimits(),
		Namespaces: true, CacheRoot: filepath.Join(root, "cache", "jail"), GoLayer: layer}
	spec, err := base.Spec()
	if err != nil {
		t.Fatal(err)
	}
	want := []jail.Overlay{{Dir: spec.Cache.Dir() + "/go-build", Lower: layer, Work: spec.Cache.Dir() + "/go-build.layer-work"}}
	if !reflect.DeepEqual(spec.Overlays, want) {
		t.Fatalf("overlays %+v, want %+v", spec.Overlays, want)
	}
	if !slices.Contains(spec.Cache.Dirs, "go-build.layer-work") {
		t.Errorf("the supervisor is not told to make the work directory: %v", spec.Cache.Dirs)
	}
	if !slices.ContainsFunc(spec.Paths, func(r jail.PathRule) bool { return r.Path == layer && r.Access == jail.Read }) {
		t.Errorf("the layer is not read-granted: %+v", spec.Paths)
	}
	out, err := base.Outside()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(out.Granted, func(g Granted) bool { return g.Path == layer && g.Access == jail.Read }) {
		t.Errorf("brig doctor's list of what calls read outside the workspace lacks the layer: %+v", out.Granted)
	}

	for name, mutate := range map[string]func(*Profile){
		"no layer":        func(p *Profile) { p.GoLayer = filepath.Join(root, "absent") },
		"no namespace":    func(p *Profile) { p.Namespaces, p.CallTmp = false, t.TempDir() },
		"layer writable":  func(p *Profile) { p.Write = []string{filepath.Join(root, "cache")} },
		"no cache at all": func(p *Profile) { p.CacheRoot = "" },
	} {
		p := base
		mutate(&p)
		spec, err := p.Spec()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(spec.Overlays) != 0 {
			t.Errorf("%s: overlays %+v", name, spec.Overlays)
		}
		if slices.ContainsFunc(spec.Paths, func(r jail.PathRule) bool { return r.Path == layer && r.Access == jail.Read }) {
			t.Errorf("%s: the layer is granted without the overlay", name)
		}
	}

	// The jail's own check, for a spec made by other hands.
	spec.Overlays = want
	spec.Paths = append(spec.Paths, jail.PathRule{Path: filepath.Join(root, "cache"), Access: jail.Write})
	if err := spec.Validate(); err == nil || !strings.Contains(err.Error(), "could change it") {
		t.Fatalf("a write-granted layer was accepted: %v", err)
	}
}

// TestBrigCacheIsNeverGrantedForWriting: no grant writes in brig's cache
// (the Go layer and every workspace's toolchain caches, which other
// workspaces' builds link) but the call's own cache. A write grant in it —
// a flag, [sandbox] or an MCP server's — is refused, and the hint of a
// call that would write there offers no --add-dir (which brig would
// refuse); reading it may be granted. A grant that covers it leaves it
// read-only (a protected path; the jail binds the call's own cache
// writable again, OwnCache), or, without a mount namespace, hides it, the
// own cache keeping a rule of its own. The layer is never shown under a
// grant that reaches into it.
func TestBrigCacheIsNeverGrantedForWriting(t *testing.T) {
	root := t.TempDir()
	ws, brigCache := filepath.Join(root, "ws"), filepath.Join(root, "home", ".cache", "brig")
	layer, other := filepath.Join(brigCache, "go-std"), filepath.Join(brigCache, "jail", "other-ws")
	for _, d := range []string{ws, filepath.Join(layer, "00"), other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	base := Profile{Workspace: ws, Dir: ws, Home: filepath.Join(root, "home"), ParentEnv: []string{"PATH=/usr/bin:/bin"}, Limits: jail.DefaultLimits(),
		Namespaces: true, CacheRoot: filepath.Join(brigCache, "jail"), GoLayer: layer, BrigCache: brigCache}
	for _, w := range []string{filepath.Join(layer, "00"), other, brigCache} {
		p := base
		p.Write = []string{w}
		if _, err := p.Spec(); err == nil || !strings.Contains(err.Error(), "brig's cache") {
			t.Errorf("a write grant of %s: %v; want it refused as brig's cache", w, err)
		}
		p.Write, p.Read = nil, []string{w}
		if _, err := p.Spec(); err != nil {
			t.Errorf("a read grant of %s: %v", w, err)
		}
	}

	p := base
	p.Write = []string{filepath.Join(root, "home", ".cache")}
	spec, err := p.Spec()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(spec.Protected, brigCache) || spec.OwnCache != spec.Cache.Dir() || len(spec.Overlays) != 0 {
		t.Errorf("under a grant of ~/.cache: protected %v, own cache %q (want %q), overlays %+v", spec.Protected, spec.OwnCache, spec.Cache.Dir(), spec.Overlays)
	}
	p.Namespaces, p.CallTmp = false, t.TempDir()
	if spec, err = p.Spec(); err != nil {
		t.Fatal(err)
	}
	own := slices.ContainsFunc(spec.Paths, func(r jail.PathRule) bool { return r.Path == spec.Cache.Dir() && r.Access == jail.Write })
	if !slices.Contains(spec.Hidden, brigCache) || !own || slices.Contains(spec.Protected, brigCache) {
		t.Errorf("without a namespace, under a grant of ~/.cache: hidden has brig's cache %v, the own cache a rule of its own %v, protected has it %v",
			slices.Contains(spec.Hidden, brigCache), own, slices.Contains(spec.Protected, brigCache))
	}
	// The control: a grant beside brig's cache changes nothing of it.
	p = base
	p.Write = []string{filepath.Join(root, "home", ".cache", "tool")}
	if err := os.MkdirAll(p.Write[0], 0o755); err != nil {
		t.Fatal(err)
	}
	if spec, err = p.Spec(); err != nil || slices.Contains(spec.Protected, brigCache) || len(spec.Overlays) != 1 {
		t.Errorf("a grant beside brig's cache: protected %v, overlays %+v, %v", spec.Protected, spec.Overlays, err)
	}
}

// TestAddDirInBrigCache: --add-dir of a directory in brig's cache is
// refused for writing and taken read-only, and a call that would write
// there is not told to add it.
func TestAddDirInBrigCache(t *testing.T) {
	f := newModeFixture(t, "")
	brigCache := filepath.Join(f.home, ".cache", "brig")
	layerObj := filepath.Join(brigCache, "go-std", "00")
	if err := os.MkdirAll(layerObj, 0o755); err != nil {
		t.Fatal(err)
	}
	f.machine.BrigCache, f.machine.GoLayer, f.machine.CacheRoot = brigCache, filepath.Join(brigCache, "go-std"), filepath.Join(brigCache, "jail")
	p := f.policy(t, ModeAuto)
	if err := p.AddDirs(ExtraDir{Path: layerObj}); err == nil || !strings.Contains(err.Error(), "brig's cache") || !strings.Contains(err.Error(), layerObj+":ro") {
		t.Errorf("--add-dir into the Go layer: %v; want it refused, offering :ro", err)
	}
	if err := p.AddDirs(ExtraDir{Path: layerObj, ReadOnly: true}); err != nil {
		t.Errorf("control: --add-dir of it read-only: %v", err)
	}
	v := f.policy(t, ModeAuto).Decide(writeCall(layerObj + "/x-d"))
	if v.Tier != Deny || slices.ContainsFunc(v.Beyond, func(b Beyond) bool { return b.Flag != "" }) || len(v.Always) != 0 {
		t.Errorf("a write into the Go layer: %s, beyond %+v, rules %v; want it denied, nothing offered", v.Tier, v.Beyond, v.Always)
	}
	// Not under an added directory that covers the cache, nor under a
	// rule of the user's that allows it: a file tool's write is granted
	// on the file's directory, beside the bash calls' protection.
	// (XDG_CACHE_HOME outside the home directory, which --add-dir takes.)
	xdg := filepath.Join(f.root, "xdgcache")
	other := filepath.Join(xdg, "brig", "jail", "other-ws")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	f.machine.BrigCache, f.machine.GoLayer, f.machine.CacheRoot = filepath.Join(xdg, "brig"), filepath.Join(xdg, "brig", "go-std"), filepath.Join(xdg, "brig", "jail")
	p = f.policy(t, ModeAuto)
	if err := p.AddDirs(ExtraDir{Path: xdg}); err != nil {
		t.Fatal(err)
	}
	ruled := newModeFixture(t, "[permissions]\nallow = [\"Write("+xdg+"/**)\"]\n")
	ruled.machine, ruled.home = f.machine, f.home
	for name, pol := range map[string]*Policy{"--add-dir": p, "a Write rule": ruled.policy(t, ModeAuto)} {
		if v := pol.Decide(writeCall(other + "/x-d")); v.Tier != Deny {
			t.Errorf("%s: a write into another workspace's cache: %s (%s); want it denied", name, v.Tier, v.Reason)
		}
		if v := pol.Decide(writeCall(filepath.Join(xdg, "tool.txt"))); v.Tier != Allow {
			t.Errorf("%s: control: a write beside brig's cache: %s (%s)", name, v.Tier, v.Reason)
		}
	}
}

// TestBeyondOffersAddDirOnlyForADirectory (new user, 2026-12-03): a read
// outside the workspace is offered --add-dir DIR:ro where DIR exists, and
// not where it does not (brig -p refuses --add-dir of a missing path).
func TestBeyondOffersAddDirOnlyForADirectory(t *testing.T) {
	f := newModeFixture(t, "")
	notes := filepath.Join(f.root, "notes")
	if err := os.MkdirAll(notes, 0o755); err != nil {
		t.Fatal(err)
	}
	flags := func(path string) []string {
		var out []string
		for _, b := range f.policy(t, ModeAsk).Decide(Call{Tool: "read_file", Effect: EffectRead, Read: []string{path}}).Beyond {
			out = append(out, b.Flag)
		}
		return out
	}
	if got := flags(filepath.Join(notes, "todo.md")); !slices.Contains(got, "--add-dir "+notes+":ro") {
		t.Errorf("control: a read in an existing directory offers %q", got)
	}
	missing := filepath.Join(f.root, "nonexistent", "x")
	if got := flags(missing); slices.ContainsFunc(got, func(s string) bool { return s != "" }) {
		t.Errorf("a read in a missing directory offers %q", got)
	}
}

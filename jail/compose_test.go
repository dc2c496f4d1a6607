package jail

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/landlock-lsm/go-landlock/landlock"
)

func mkTree(t *testing.T, paths ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, p := range paths {
		full := filepath.Join(root, p)
		if filepath.Ext(p) == "" && p[len(p)-1] == '/' {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func accessOf(gs []grant, path string) (landlock.AccessFSSet, bool) {
	i := slices.IndexFunc(gs, func(g grant) bool { return g.path == path })
	if i < 0 {
		return 0, false
	}
	return gs[i].access, true
}

func TestComposeGrantsSplitsAroundProtectedAndHidden(t *testing.T) {
	ws := mkTree(t, "src/a.go", ".git/hooks/", ".git/config", ".git/objects/x", "README")
	etc := mkTree(t, "passwd", "shadow", "ssl/certs/c", "ssl/private/k")
	spec := Spec{
		Paths:     []PathRule{{Path: ws, Access: Write}, {Path: etc, Access: Read}},
		Protected: []string{filepath.Join(ws, ".git/hooks"), filepath.Join(ws, ".git/config"), filepath.Join(ws, ".envrc")},
		Hidden:    []string{filepath.Join(etc, "shadow"), filepath.Join(etc, "ssl/private")},
	}

	// With a mount namespace the grants are whole.
	gs, err := composeGrants(spec, carving{})
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 2 {
		t.Fatalf("uncarved grants: %+v", gs)
	}

	// Without one, when the supervisor restores protected paths after
	// the call: only hidden paths are carved, and the workspace root and
	// .git keep every right.
	gs, err = composeGrants(spec, carving{hidden: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := accessOf(gs, ws); got != fsWrite {
		t.Errorf("restored composition: the workspace root got %v, want the whole grant %v", got, fsWrite)
	}
	if _, ok := accessOf(gs, filepath.Join(ws, ".git")); ok {
		t.Errorf("restored composition: .git has a rule of its own (the grant was split): %+v", gs)
	}
	if _, ok := accessOf(gs, filepath.Join(etc, "shadow")); ok {
		t.Errorf("restored composition: a hidden path is granted: %+v", gs)
	}
	if got, _ := accessOf(gs, etc); got != landlock.AccessFSSet(1<<3) {
		t.Errorf("restored composition: /etc itself got %v, want listing only", got)
	}

	gs, err = composeGrants(spec, carving{protected: true, hidden: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path    string
		want    landlock.AccessFSSet
		present bool
	}{
		{ws, fsExec, true},                        // root: no new entries (.envrc cannot be created)
		{filepath.Join(ws, "src"), fsWrite, true}, // ordinary subtree: everything
		{filepath.Join(ws, "README"), fsWrite & fsFileOnly, true},
		{filepath.Join(ws, ".git"), fsExec, true},       // on the way to hooks: read+exec
		{filepath.Join(ws, ".git/hooks"), fsExec, true}, // protected: read-only
		{filepath.Join(ws, ".git/config"), fsExec & fsFileOnly, true},
		{filepath.Join(ws, ".git/objects"), fsWrite, true}, // git can still write objects
		{etc, fsRead & landlock.AccessFSSet(1<<3), true},   // /etc itself: listing only (READ_DIR)
		{filepath.Join(etc, "passwd"), fsRead & fsFileOnly, true},
		{filepath.Join(etc, "ssl"), landlock.AccessFSSet(1 << 3), true},
		{filepath.Join(etc, "ssl/certs"), fsRead, true},
		{filepath.Join(etc, "shadow"), 0, false}, // hidden: no rule at all
		{filepath.Join(etc, "ssl/private"), 0, false},
	} {
		got, ok := accessOf(gs, tc.path)
		if ok != tc.present || got != tc.want {
			t.Errorf("%s: got %v (present %v), want %v (present %v)", tc.path, got, ok, tc.want, tc.present)
		}
	}
}

func TestComposeGrantsSkipsSymlinksWhenSplitting(t *testing.T) {
	ws := mkTree(t, ".git/hooks/", "src/a")
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, "escape")); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Paths: []PathRule{{Path: ws, Access: Write}}, Protected: []string{filepath.Join(ws, ".git/hooks")}}
	gs, err := composeGrants(spec, carving{protected: true, hidden: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gs {
		if g.path == filepath.Join(ws, "escape") || g.path == outside {
			t.Fatalf("a symlink's target outside the workspace was granted: %+v", g)
		}
	}
	if _, ok := accessOf(gs, filepath.Join(ws, "src")); !ok {
		t.Fatal("control: the ordinary directory was not granted")
	}
}

// TestComposeGrantsCarvesSymlinkTargets: a protected or hidden path that is a
// symlink carves what it names too, since Landlock judges the file a path
// resolves to; otherwise the target would keep the whole grant.
func TestComposeGrantsCarvesSymlinkTargets(t *testing.T) {
	ws := mkTree(t, "real-hooks/x", "secret-target", "src/a")
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{".git/hooks": "../real-hooks", "hidden-link": "secret-target"} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	spec := Spec{
		Paths:     []PathRule{{Path: ws, Access: Write}},
		Protected: []string{filepath.Join(ws, ".git/hooks")},
		Hidden:    []string{filepath.Join(ws, "hidden-link")},
	}
	gs, err := composeGrants(spec, carving{protected: true, hidden: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := accessOf(gs, filepath.Join(ws, "real-hooks")); got != fsExec {
		t.Errorf("the protected link's target: %v, want read-only %v", got, fsExec)
	}
	if got, ok := accessOf(gs, filepath.Join(ws, "secret-target")); ok {
		t.Errorf("the hidden link's target is granted %v", got)
	}
	if got, _ := accessOf(gs, filepath.Join(ws, "src")); got != fsWrite {
		t.Errorf("control: an ordinary directory got %v, want %v", got, fsWrite)
	}
}

func TestComposeGrantsRequiredPathMissing(t *testing.T) {
	spec := Spec{Paths: []PathRule{{Path: "/nonexistent-brig-test", Access: Read}}}
	if _, err := composeGrants(spec, carving{}); err == nil {
		t.Fatal("a missing required path was accepted")
	}
	spec.Paths[0].Optional = true
	if gs, err := composeGrants(spec, carving{}); err != nil || len(gs) != 0 {
		t.Fatalf("optional missing path: %v %v", gs, err)
	}
}

func TestProtectedPathsFindsNestedRepositoriesAndGitFiles(t *testing.T) {
	ws := mkTree(t, ".git/hooks/", ".git/modules/sub/hooks/", "vendor/x/.git/hooks/", "deep/a/b/.git/config")
	// A worktree-style .git file pointing at a gitdir elsewhere.
	gitdir := mkTree(t, "hooks/", "config")
	if err := os.MkdirAll(filepath.Join(ws, "wt"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "wt", ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ProtectedPaths(ws, "/home/u/.config/brig")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		filepath.Join(ws, ".git/hooks"), filepath.Join(ws, ".git/config"), filepath.Join(ws, ".envrc"), filepath.Join(ws, ".vscode"),
		filepath.Join(ws, ".git/modules/sub/hooks"), filepath.Join(ws, ".git/modules/sub/config"),
		filepath.Join(ws, "vendor/x/.git/hooks"), filepath.Join(ws, "vendor/x/.envrc"),
		filepath.Join(ws, "deep/a/b/.git/hooks"),
		filepath.Join(ws, "wt/.git"), filepath.Join(gitdir, "hooks"), filepath.Join(gitdir, "config"),
		"/home/u/.config/brig",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("missing %s", want)
		}
	}
	// Control: ordinary files are not protected.
	if slices.Contains(got, filepath.Join(ws, "vendor")) || slices.Contains(got, filepath.Join(ws, ".git")) {
		t.Errorf("an ordinary directory is protected: %v", got)
	}
}

// BenchmarkWorkerRuleset: the Landlock ruleset of a usual bash call with
// namespaces — the system's and toolchains' directories (most of them
// optional, some missing), the workspace read-write and opened without
// following links — as init builds it for every call.
func BenchmarkWorkerRuleset(b *testing.B) {
	abi := LandlockABI()
	if abi < 1 {
		b.Skip("no Landlock on this kernel")
	}
	ws := b.TempDir()
	spec := Spec{Workspace: ws, Dir: ws}
	for _, p := range []string{"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/opt", "/snap", "/nix",
		"/usr/local/go/bin", "/usr/local/bin", "/usr/lib/jvm", "/root/go/bin", "/root/.cargo/bin", "/root/.local/bin"} {
		spec.Paths = append(spec.Paths, PathRule{Path: p, Access: Exec, Optional: true})
	}
	for _, p := range []string{"/etc", "/proc/cpuinfo", "/sys/devices/system/cpu", "/dev/null", "/dev/urandom"} {
		spec.Paths = append(spec.Paths, PathRule{Path: p, Access: Read, Optional: true})
	}
	spec.Paths = append(spec.Paths, PathRule{Path: ws, Access: Write})
	b.ReportAllocs()
	for b.Loop() {
		rs, _, err := workerRuleset(spec, true, true, false, abi, 0)
		if err != nil {
			b.Fatal(err)
		}
		rs.close()
	}
}

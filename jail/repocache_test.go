package jail

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// nextTick waits until the coarse clock the kernel stamps inode times
// with has moved on, so that a change made after it carries a change time
// later than anything stamped before.
func nextTick() {
	var a, b unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &a)
	for b = a; b == a; _ = unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &b) {
	}
}

// TestRepoCache: a cached search finds what a fresh one finds, in the same
// order, after every kind of change that can make a repository appear in
// a directory it remembered (a .git made deep in a remembered subtree, a
// directory given a repository's shape, a subtree with a repository moved
// in, a directory replaced by another one from outside the tree, a HEAD
// rewritten into a ref, a .git file written); and it lists only the
// directories that changed.
func TestRepoCache(t *testing.T) {
	t.Run("change times", func(t *testing.T) { testRepoCache(t, false) })
	// With watches, the same changes are found, and an unchanged tree's
	// remembered directories are not even looked at.
	t.Run("watched", func(t *testing.T) { testRepoCache(t, true) })
}

func testRepoCache(t *testing.T, watch bool) {
	var paths []string
	for i := range 20 {
		paths = append(paths, fmt.Sprintf("pkg%d/sub/file.go", i), fmt.Sprintf("pkg%d/other/file.go", i))
	}
	paths = append(paths, ".git/hooks/", "vendor/x/.git/hooks/", "docs/HEAD", "docs/objects/", "docs/refs/", "empty/")
	ws := mkTree(t, paths...)
	writeFile(t, filepath.Join(ws, "docs/HEAD"), "not a ref\n")
	outside := mkTree(t, "moved/.git/hooks/", "moved/src/a.go", "replacement/.git/hooks/")
	dirs := 0
	_ = filepath.WalkDir(ws, func(_ string, d os.DirEntry, _ error) error {
		if d.IsDir() {
			dirs++
		}
		return nil
	})

	c := NewRepoCache()
	if watch {
		c.Watch()
		if c.watch == nil {
			t.Skip("no inotify instance here")
		}
	}
	if c.racy != time.Second {
		t.Fatalf("the racy window is %v, want the second the README states", c.racy)
	}
	check := func(what string) {
		t.Helper()
		got, err := c.Repositories(ws)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		want, err := Repositories(ws)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the cached search found\n%+v\na fresh one\n%+v", what, got, want)
		}
	}
	// Directories changed within the racy window are not remembered: a
	// change in the same clock tick could leave their change time as it
	// was. (An hour here, so that a slow machine cannot age the tree
	// past it between the searches.)
	c.racy = time.Hour
	check("first search")
	check("right after")
	if c.reads < dirs/2 {
		t.Fatalf("a search right after the tree was made listed %d of its %d directories: just-changed ones were remembered", c.reads, dirs)
	}

	c.racy = 0 // every change below comes a clock tick after the search before it
	check("remembering")
	nextTick()
	check("unchanged")
	// Listed every time: the root (it has a .git), docs/ (a HEAD).
	if c.reads > 3 {
		t.Errorf("a search of an unchanged tree listed %d of its %d directories, want only those with a .git or a HEAD", c.reads, dirs)
	}
	// Looked at: every directory, unless watched; then the root and
	// docs/ (listed), vendor/ (opened to reach vendor/x) and vendor/x (a
	// .git).
	switch {
	case !watch && c.looks < dirs-6: // .git, vendor/x/.git and docs/'s objects and refs (with hooks) are not walked
		t.Errorf("without watches, a search looked at %d of %d directories: some were trusted without a look", c.looks, dirs)
	case watch && c.looks > 5:
		t.Errorf("with watches, a search of an unchanged tree looked at %d of its %d directories, want at most 5", c.looks, dirs)
	}

	found := func(gitdir string) {
		t.Helper()
		got, _ := c.Repositories(ws)
		for _, r := range got {
			if r.GitDir == gitdir || r.DotGit == gitdir {
				return
			}
		}
		t.Fatalf("%s not found: %+v", gitdir, got)
	}
	steps := []struct {
		name   string
		change func()
		gitdir string
	}{
		{"a .git made deep in a remembered subtree", func() {
			writeFile(t, filepath.Join(ws, "pkg3/sub/deeper/.git/config"), "")
		}, filepath.Join(ws, "pkg3/sub/deeper/.git")},
		{"a remembered directory given a repository's shape", func() {
			writeFile(t, filepath.Join(ws, "pkg5/other/HEAD"), "ref: refs/heads/main\n")
			for _, d := range []string{"objects", "refs"} {
				if err := os.Mkdir(filepath.Join(ws, "pkg5/other", d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}, filepath.Join(ws, "pkg5/other")},
		{"a subtree with a repository moved in", func() {
			if err := os.Rename(filepath.Join(outside, "moved"), filepath.Join(ws, "pkg7/sub/moved")); err != nil {
				t.Fatal(err)
			}
		}, filepath.Join(ws, "pkg7/sub/moved/.git")},
		{"a remembered directory replaced by one from outside", func() {
			if err := os.Remove(filepath.Join(ws, "empty")); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(outside, "replacement"), filepath.Join(ws, "empty")); err != nil {
				t.Fatal(err)
			}
		}, filepath.Join(ws, "empty/.git")},
		{"a HEAD rewritten into a ref", func() {
			writeFile(t, filepath.Join(ws, "docs/HEAD"), "ref: refs/heads/main\n")
		}, filepath.Join(ws, "docs")},
		{"a .git file written", func() {
			writeFile(t, filepath.Join(ws, "pkg9/other/.git"), "gitdir: "+filepath.Join(ws, ".git")+"\n")
		}, filepath.Join(ws, "pkg9/other/.git")},
	}
	for _, s := range steps {
		nextTick()
		s.change()
		check(s.name)
		found(s.gitdir)
	}
	if watch {
		// Trusted on events alone: the watches must report a change made
		// right after a search (no clock tick waited for), deep below
		// directories trusted without a look, and a subtree renamed
		// within the tree.
		check("settling")
		nextTick()
		check("quiet")
		writeFile(t, filepath.Join(ws, "pkg11/sub/a/b/.git/config"), "")
		check("a .git made right after a search")
		found(filepath.Join(ws, "pkg11/sub/a/b/.git"))
		if err := os.Rename(filepath.Join(ws, "pkg11/sub/a"), filepath.Join(ws, "pkg12/other/a")); err != nil {
			t.Fatal(err)
		}
		check("a subtree renamed right after a search")
		found(filepath.Join(ws, "pkg12/other/a/b/.git"))
	}
	// A root that is a file, and one that vanished, are not remembered.
	if r, err := c.Repositories(filepath.Join(ws, "pkg1/sub/file.go")); err != nil || len(r) != 0 {
		t.Errorf("a file as the root: %v %v", r, err)
	}
	if _, err := c.Repositories(filepath.Join(ws, "missing")); err == nil {
		t.Error("a missing root gave no error")
	}
	if len(c.roots) != 1 {
		t.Errorf("remembered roots: %d, want only the workspace", len(c.roots))
	}
	// Directories of a file system whose change times are not trusted
	// (procfs here; a network or FUSE one in use) are listed every time.
	proc := NewRepoCache()
	proc.racy = 0
	for range 2 {
		if _, err := proc.Repositories("/proc/sys/fs"); err != nil {
			t.Fatal(err)
		}
	}
	if len(proc.roots) != 0 || proc.reads < 2 {
		t.Errorf("a procfs tree was remembered: %d roots, %d directories listed", len(proc.roots), proc.reads)
	}
	// A nil cache searches without remembering.
	var none *RepoCache
	if got, err := none.Repositories(ws); err != nil || len(got) == 0 {
		t.Errorf("a nil cache: %v %v", got, err)
	}
}

// BenchmarkRepositories searches a workspace of 10,000 files (100
// directories of 50 files and a subdirectory of 50 more) afresh, and with
// a cache that remembers the unchanged tree (make bench).
func BenchmarkRepositories(b *testing.B) {
	ws := b.TempDir()
	for i := range 100 {
		for _, d := range []string{fmt.Sprintf("pkg%d", i), fmt.Sprintf("pkg%d/sub", i)} {
			if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
				b.Fatal(err)
			}
			for j := range 50 {
				if err := os.WriteFile(filepath.Join(ws, d, fmt.Sprintf("f%d.go", j)), nil, 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(ws, ".git/hooks"), 0o755); err != nil {
		b.Fatal(err)
	}
	b.Run("fresh", func(b *testing.B) {
		for b.Loop() {
			if _, err := Repositories(ws); err != nil {
				b.Fatal(err)
			}
		}
	})
	// A cache that remembers the unchanged tree; watched: a session's
	// (RepoCache.Watch), whose unchanged directories are trusted on their
	// watches, not looked at.
	for _, watched := range []bool{false, true} {
		b.Run(map[bool]string{false: "cached", true: "watched"}[watched], func(b *testing.B) {
			c := NewRepoCache()
			c.racy = 0
			if watched {
				if c.Watch(); c.watch == nil {
					b.Skip("no inotify instance here")
				}
			}
			_, _ = c.Repositories(ws)
			nextTick()
			_, _ = c.Repositories(ws)
			for b.Loop() {
				if _, err := c.Repositories(ws); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.reads), "dirs-listed")
			b.ReportMetric(float64(c.looks), "dirs-looked-at")
		})
	}
}

// TestRepoCacheSeesMounts: a mount reports nothing to the directory it
// covers, so a watched cache must notice the mount table changing. In a
// mount namespace of its own (a helper process, as root), a directory with
// a .git is bind-mounted over a remembered, quiet one: the next search
// finds the repository; the search before the mount did not.
func TestRepoCacheSeesMounts(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("mounting needs root")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare(1) here")
	}
	ws := mkTree(t, ".git/hooks/", "pkg/sub/file.go", "pkg/other/file.go")
	other := mkTree(t, "a/b/file.go")
	outside := mkTree(t, "planted/.git/hooks/")
	cmd := exec.Command(unshare, "--mount", "--propagation", "private", os.Args[0], "-test.run=^TestRepoCacheMountHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "BRIG_REPOCACHE_MOUNT_HELPER="+strings.Join([]string{ws, other, filepath.Join(outside, "planted")}, "\n"))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestRepoCacheMountHelper") {
		t.Fatalf("the helper failed: %v\n%s", err, out)
	}
}

// TestRepoCacheMountHelper is TestRepoCacheSeesMounts' helper process.
func TestRepoCacheMountHelper(t *testing.T) {
	arg := os.Getenv("BRIG_REPOCACHE_MOUNT_HELPER")
	if arg == "" {
		t.Skip("a helper of TestRepoCacheSeesMounts")
	}
	args := strings.Split(arg, "\n")
	ws, other, planted := args[0], args[1], args[2]
	c := NewRepoCache()
	c.racy = 0
	c.Watch()
	if c.watch == nil {
		t.Fatal("no inotify instance")
	}
	search := func(root string) []Repository {
		t.Helper()
		r, err := c.Repositories(root)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, root := range []string{ws, other} {
		search(root)
		nextTick()
		search(root)
	}
	if r := search(ws); len(r) != 1 || c.looks > 2 {
		t.Fatalf("before the mount: %+v, %d directories looked at (want the root's repository alone, and the rest trusted)", r, c.looks)
	}
	if r := search(other); len(r) != 0 || c.looks > 0 {
		t.Fatalf("before the mount, the other root: %+v, %d directories looked at (want nothing, and everything trusted)", r, c.looks)
	}
	// Mounted over a directory of each root; the workspace's search sees
	// the change first, and the other root's must not miss it for that.
	mount := func(dir string) {
		t.Helper()
		if err := unix.Mount(planted, dir, "", unix.MS_BIND, ""); err != nil {
			t.Fatalf("bind mount: %v", err)
		}
	}
	mount(filepath.Join(ws, "pkg/sub"))
	mount(filepath.Join(other, "a/b"))
	for root, gitdir := range map[string]string{ws: filepath.Join(ws, "pkg/sub/.git"), other: filepath.Join(other, "a/b/.git")} {
		if root == other {
			search(ws) // first, again
		}
		found := false
		for _, r := range search(root) {
			found = found || r.GitDir == gitdir
		}
		if !found {
			t.Errorf("the repository mounted over a remembered directory of %s was not found (%d directories looked at)", root, c.looks)
		}
	}
}

// TestRepoCacheAfterLostEvents: once the kernel's queue of events
// overflows, what comes after is lost, and the next search must look at
// every directory instead of trusting the watches. A flood of entries in
// one remembered directory fills the queue; then a repository is made deep
// in another, quiet one, whose own event is lost: the search still finds
// it. The control: the flood did overflow the queue.
func TestRepoCacheAfterLostEvents(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skip("no inotify limits here")
	}
	limit, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || limit <= 0 || limit > 1<<17 {
		t.Skipf("max_queued_events %q: too many events to flood in a test", b)
	}
	ws := mkTree(t, ".git/hooks/", "flood/keep", "a/b/c/file.go")
	c := NewRepoCache()
	c.racy = 0
	if c.Watch(); c.watch == nil {
		t.Skip("no inotify instance here")
	}
	for range 2 {
		if _, err := c.Repositories(ws); err != nil {
			t.Fatal(err)
		}
		nextTick()
	}
	if _, err := c.Repositories(ws); err != nil || c.looks > 1 {
		t.Fatalf("an unchanged tree: %d directories looked at, %v", c.looks, err)
	}
	before := c.watch.seq
	for i := range limit + 64 {
		f, err := os.Create(filepath.Join(ws, "flood", "f"+strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	writeFile(t, filepath.Join(ws, "a/b/c/.git/config"), "")
	got, err := c.Repositories(ws)
	if err != nil {
		t.Fatal(err)
	}
	if !c.watch.dirs.Lost(before) {
		t.Fatal("the flood did not overflow the queue: the test proves nothing")
	}
	for _, r := range got {
		if r.GitDir == filepath.Join(ws, "a/b/c/.git") {
			return
		}
	}
	t.Fatalf("a repository made after the queue overflowed was not found: %+v", got)
}

package supervisor

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"brig/jail"
)

func testCache(root string) *jail.Cache {
	return &jail.Cache{
		Root:   root,
		Name:   "ws-0123456789ab-0123456789abcdef",
		Dirs:   []string{"go-build", "npm", "cargo"},
		Files:  []jail.CacheFile{{Name: "npmrc"}, {Name: "go.env", Data: "# brig\n"}},
		Remove: []string{"cargo/config.toml", "cargo/credentials"},
	}
}

// snapshot is what must not change about a file outside the cache.
type snapshot struct {
	content string
	size    int64
	mode    os.FileMode
}

func snap(t *testing.T, p string) snapshot {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return snapshot{string(b), fi.Size(), fi.Mode()}
}

// TestPrepareCacheFollowsNoPlantedLink plants, in every place of the cache
// the supervisor touches, each kind of link and file a call (or a hostile
// repository's earlier call) could leave, pointing at files outside; the
// targets stay unchanged (content, size, mode), the cache comes out as
// brig's own, and preparing it again works.
func TestPrepareCacheFollowsNoPlantedLink(t *testing.T) {
	s := &Supervisor{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	// Two rounds: the entries of the cache, then those inside its
	// subdirectories (which the first round replaces).
	rounds := map[string][]string{
		"top":    {"npmrc", "go.env", "go-build", "npm", "cargo"},
		"nested": {"cargo/config.toml", "cargo/credentials"},
	}
	kinds := []string{"symlink to a file", "symlink to a directory", "dangling symlink", "hard link", "fifo", "file", "directory", "unreadable directory"}
	for round, places := range rounds {
		for _, kind := range kinds {
			t.Run(round+"/"+kind, func(t *testing.T) { plantAndPrepare(t, s, places, kind) })
		}
	}
}

func plantAndPrepare(t *testing.T, s *Supervisor, places []string, kind string) {
	outside := t.TempDir()
	victim := filepath.Join(outside, "config.toml")
	must(t, os.WriteFile(victim, []byte("[permissions]\ndeny = [\"Read(~/.ssh/**)\"]\n"), 0o640))
	must(t, os.Chmod(victim, 0o640))
	victimDir := filepath.Join(outside, "dir")
	must(t, os.Mkdir(victimDir, 0o750))
	before, beforeDir := snap(t, victim), entries(t, victimDir)

	root := filepath.Join(t.TempDir(), "jail")
	c := testCache(root)
	must(t, s.prepareCache(c)) // a first call made the cache
	for _, place := range places {
		p := filepath.Join(c.Dir(), place)
		must(t, os.RemoveAll(p))
		must(t, os.MkdirAll(filepath.Dir(p), 0o700))
		switch kind {
		case "symlink to a file":
			must(t, os.Symlink(victim, p))
		case "symlink to a directory":
			must(t, os.Symlink(victimDir, p))
		case "dangling symlink":
			must(t, os.Symlink(filepath.Join(victimDir, "new"), p))
		case "hard link":
			must(t, os.Link(victim, p))
		case "fifo":
			must(t, unix.Mkfifo(p, 0o600))
		case "file":
			must(t, os.WriteFile(p, []byte("rustc-wrapper = \"/tmp/x\"\n"), 0o644))
		case "directory":
			must(t, os.Mkdir(p, 0o755))
			must(t, os.Symlink(victim, filepath.Join(p, "inner")))
		case "unreadable directory":
			must(t, os.Mkdir(p, 0))
		}
	}
	for range 2 {
		if err := s.prepareCache(c); err != nil {
			t.Fatalf("prepare after a planted %s: %v", kind, err)
		}
	}
	if got := snap(t, victim); got != before {
		t.Fatalf("the file outside changed: %+v, was %+v", got, before)
	}
	if got := entries(t, victimDir); got != beforeDir {
		t.Fatalf("the directory outside changed: %q, was %q", got, beforeDir)
	}
	for _, d := range c.Dirs {
		if fi, err := os.Lstat(filepath.Join(c.Dir(), d)); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s is %v (%v), want a directory of mode 0700", d, fi, err)
		}
	}
	for _, f := range c.Files {
		p := filepath.Join(c.Dir(), f.Name)
		fi, err := os.Lstat(p)
		b, _ := os.ReadFile(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 || string(b) != f.Data {
			t.Errorf("%s is %v %q (%v), want brig's regular file", f.Name, fi, b, err)
		}
	}
	for _, r := range c.Remove {
		if _, err := os.Lstat(filepath.Join(c.Dir(), r)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s survived: %v", r, err)
		}
	}
}

// TestPrepareCacheRemovesStaleCaches: the caches of another repository
// that lived at the workspace's path are gone before the call; other
// workspaces' caches stay.
func TestPrepareCacheRemovesStaleCaches(t *testing.T) {
	s := &Supervisor{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	root := t.TempDir()
	c := testCache(root)
	old := filepath.Join(root, "ws-0123456789ab-fedcba9876543210")
	other := filepath.Join(root, "other-0123456789ab-fedcba9876543210")
	for _, d := range []string{old, other} {
		must(t, os.MkdirAll(filepath.Join(d, "cargo"), 0o700))
		must(t, os.WriteFile(filepath.Join(d, "cargo", "config.toml"), []byte("[build]\nrustc-wrapper = \"/tmp/evil\"\n"), 0o600))
	}
	c.Stale = []string{filepath.Base(old)}
	must(t, s.prepareCache(c))
	if _, err := os.Lstat(old); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the stale cache survived: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(other, "cargo", "config.toml")); err != nil {
		t.Fatalf("another workspace's cache was touched: %v", err)
	}
}

// TestPrepareCacheAheadOfTheFirstCall: PrepareCache makes a fresh cache
// ready before any call, and does nothing once a call has prepared one (a
// call may be running with the cache's files).
func TestPrepareCacheAheadOfTheFirstCall(t *testing.T) {
	s := &Supervisor{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	c := testCache(t.TempDir())
	goEnv := filepath.Join(c.Dir(), "go.env")
	must(t, s.PrepareCache(c))
	if b, err := os.ReadFile(goEnv); err != nil || string(b) != "# brig\n" {
		t.Fatalf("the cache was not prepared ahead: %q %v", b, err)
	}
	if got := entries(t, c.Dir()); got != "cargo,go-build,go.env,npm,npmrc," {
		t.Fatalf("the cache holds %s", got)
	}
	// A call prepares it (as run does), then uses it (here: writes its
	// own line into a file): a later PrepareCache must leave what the call
	// sees alone.
	must(t, s.prepareCache(c))
	must(t, os.WriteFile(goEnv, []byte("# the call's\n"), 0o600))
	must(t, s.PrepareCache(c))
	if b, err := os.ReadFile(goEnv); err != nil || string(b) != "# the call's\n" {
		t.Fatalf("PrepareCache rewrote the cache's files after a call had prepared it: %q %v", b, err)
	}
	// The control: the call's own preparation writes them anew.
	must(t, s.prepareCache(c))
	if b, err := os.ReadFile(goEnv); err != nil || string(b) != "# brig\n" {
		t.Fatalf("a call's preparation kept the old file (the check above proves nothing): %q %v", b, err)
	}
}

func entries(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names string
	for _, e := range es {
		names += e.Name() + ","
	}
	return names
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// BenchmarkPrepareCache is what preparing an existing cache adds to a call.
func BenchmarkPrepareCache(b *testing.B) {
	s := &Supervisor{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	c := testCache(b.TempDir())
	if err := s.prepareCache(c); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if err := s.prepareCache(c); err != nil {
			b.Fatal(err)
		}
	}
}

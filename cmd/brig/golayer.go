package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"brig/internal/safefs"
	"brig/internal/userfile"
	"brig/internal/xdg"
	"brig/policy"
)

// The Go layer is the build cache of Go's standard library, built once by
// `brig cache warm` and shown read-only beneath every workspace's GOCACHE
// (policy.Profile.GoLayer, jail.Overlay): without it a workspace's first
// `go test` compiles the standard library into that workspace's empty
// cache (44 s here for a small package, against 0.9 s with the layer).
// The caches stay per workspace, as the security model needs (a Go build
// links what its cache holds, so a repository must not be able to plant
// objects that another's build would link); the layer is the one part they
// share, and no call can write it: it is built in the jail from brig's own
// source file and your toolchain, with no repository present.

// goLayerDir is where the Go layer lives.
func goLayerDir(dirs xdg.Dirs) string { return filepath.Join(dirs.Cache, "go-std") }

// goLayerVersion is the file in the layer that records the `go version`
// it was built with.
const goLayerVersion = "brig-go-version"

// goLayerFuture is the modification time every file of the layer gets:
// the go command re-dates a cache file it uses once it is an hour old
// (which through the overlay would copy each into every workspace's
// cache) and trims files unused for five days; it does neither to a file
// dated in the future.
var goLayerFuture = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)

// goLayerScript builds the layer in the jail, in the directory it is
// started in, with GOCACHE=$1: a package that imports every importable
// standard package, and a test of it, so that `go test` compiles the
// whole library and works out vet's facts about it, as a workspace's
// `go test` needs them; then `go vet` does the same for its fuller set of
// checks (15 s more here, 2 MB, and a workspace's first go vet took 0.5 s
// instead of 9).
const goLayerScript = `set -eu
export GOCACHE="$1"
go version > "$1/` + goLayerVersion + `"
{
	echo 'package all'
	echo 'import ('
	go list std | grep -v -E '(^|/)(internal|vendor)(/|$)|^cmd/' | sed 's/.*/	_ "&"/'
	echo ')'
} > all.go
printf 'package all\n\nimport "testing"\n\nfunc TestBuilt(t *testing.T) {}\n' > all_test.go
go test -count=1 .
go vet .
`

// warmOptions are the inputs of `brig cache warm`.
type warmOptions struct {
	Timeout time.Duration
	procEnv
}

func newCacheWarmCmd(runF func(context.Context, *warmOptions) error) *cobra.Command {
	o := &warmOptions{}
	cmd := &cobra.Command{
		Use:   "warm",
		Short: "Build Go's standard library once, for every workspace's jailed Go builds",
		Long: `Build the Go standard library with the go on your PATH, in the jail, into
~/.cache/brig/go-std, which every workspace's jailed calls then see beneath
their own GOCACHE, read-only: a workspace's first go build or go test no
longer compiles the standard library into its empty cache (44 s against
0.9 s for a small package's first go test, measured on a slow machine).
Run it again after installing another Go version; it replaces the layer.
It takes about a minute and 150 MB. No repository takes part: the build
runs brig's own file against your toolchain, in a scratch workspace.
It needs a mount namespace for calls (brig doctor says whether there is
one); without one the layer is built but not used.`,
		Args: cobra.NoArgs,
		RunE: commandRun(o, &o.procEnv, nil, runF, runCacheWarm),
	}
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 30*time.Minute, "wall-clock limit of the build")
	return cmd
}

func runCacheWarm(ctx context.Context, o *warmOptions) error {
	dirs := dirsFor(o.procEnv)
	if err := makeOwnDirs(dirs); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(dirs.Cache, "go-std.lock"), os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("lock the Go layer: %w", err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return fmt.Errorf("another brig cache warm is building the Go layer (%w); wait for it to end", err)
	}
	build, err := os.MkdirTemp(dirs.Cache, "go-std.build-")
	if err != nil {
		return fmt.Errorf("a directory to build the Go layer in: %w", err)
	}
	defer removeUnfollowed(build)
	ws, cache := filepath.Join(build, "ws"), filepath.Join(build, "cache")
	for _, d := range []string{ws, cache} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return fmt.Errorf("a directory to build the Go layer in: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module brigwarm\n"), 0o600); err != nil {
		return fmt.Errorf("the Go layer's module: %w", err)
	}
	fmt.Fprintf(o.Stderr, "brig: building Go's standard library in the jail into %s (about a minute; once for each Go version)\n", goLayerDir(dirs))
	started := time.Now()
	err = runSandbox(ctx, &sandboxOptions{
		Workspace: ws, Cwd: ws, Home: o.Home, Env: o.Env,
		Write: []string{cache}, Timeout: o.Timeout, MaxOutput: 1 << 20,
		Argv:   []string{"sh", "-c", goLayerScript, "sh", cache},
		Stdout: o.Stdout, Stderr: o.Stderr, buildsGoLayer: true,
	})
	removeWorkspaceCaches(dirs, ws, o)
	var ee exitError
	if errors.As(err, &ee) {
		hint := ""
		if ee.code == exitNotFound {
			hint = " (go was not found: put Go's bin directory on PATH; `brig sandbox -- go version` shows what calls find)"
		}
		fmt.Fprintf(o.Stderr, "brig: the Go layer was not built: the build exited with status %d%s; the old layer, if any, is kept\n", ee.code, hint)
		return ee
	}
	if err != nil {
		return fmt.Errorf("the Go layer was not built (the old one, if any, is kept): %w", err)
	}
	if err := dateInFuture(cache); err != nil {
		return fmt.Errorf("the Go layer was not built (the old one, if any, is kept): %w", err)
	}
	layer := goLayerDir(dirs)
	old := filepath.Join(build, "old")
	if err := os.Rename(layer, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("replace the Go layer %s: %w", layer, err)
	}
	if err := os.Rename(cache, layer); err != nil {
		_ = os.Rename(old, layer) // the old layer back, if there was one
		return fmt.Errorf("put the Go layer in place at %s: %w", layer, err)
	}
	version, _ := os.ReadFile(filepath.Join(layer, goLayerVersion))
	fmt.Fprintf(o.Stdout, "the Go layer is ready: %s, %s, built in %s; every workspace's jailed Go builds start from it\n",
		strings.TrimSpace(string(version)), humanSize(treeSize(layer)), time.Since(started).Round(time.Second))
	return nil
}

// dateInFuture dates every regular file under dir goLayerFuture, without
// following any link.
func dateInFuture(dir string) error {
	ts := []unix.Timespec{unix.NsecToTimespec(goLayerFuture.UnixNano()), unix.NsecToTimespec(goLayerFuture.UnixNano())}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, p, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("date %s: %w", p, err)
		}
		return nil
	})
}

// removeUnfollowed removes dir and everything under it without following
// any link in it (a jailed build wrote there).
func removeUnfollowed(dir string) {
	parent, err := safefs.OpenResolved(filepath.Dir(dir))
	if err != nil {
		return
	}
	defer parent.Close()
	_ = parent.RemoveAll(filepath.Base(dir))
}

// removeWorkspaceCaches removes the toolchain caches the build's scratch
// workspace got (the call was given them like any workspace's).
func removeWorkspaceCaches(dirs xdg.Dirs, ws string, o *warmOptions) {
	root, err := safefs.OpenResolved(filepath.Join(dirs.Cache, "jail"))
	if err != nil {
		return
	}
	defer root.Close()
	name, err := policy.CacheName(ws)
	if err != nil {
		return
	}
	for _, n := range []string{name, policy.ReadOnlyCache(name)} {
		if err := root.RemoveAll(n); err != nil {
			fmt.Fprintf(o.Stderr, "brig: warning: the build's scratch cache %s was not removed: %v\n", n, err)
		}
	}
}

// goLayerStatus is what brig doctor says of the Go layer at dir: what it
// holds and whether calls use it, or how to build it when the go command
// is on env's PATH (looked for, never run); "" when neither.
func goLayerStatus(dir string, env []string, namespaces bool) string {
	goVersion, haveGo := goOnPath(env)
	if !isDir(dir) {
		if !haveGo {
			return ""
		}
		return "each workspace's first build compiles the standard library (tens of seconds); `brig cache warm` builds it once for all"
	}
	built := layerVersion(dir)
	what := fmt.Sprintf("start from %s (%s, %s)", dir, cmp.Or(built, "of an unknown Go version"), humanSize(treeSize(dir)))
	switch {
	case !namespaces:
		return what + ", but not here: calls have no mount namespace, which the layer needs"
	case stale(built, goVersion):
		return what + ", but the go on PATH is " + goVersion + ", whose builds it does not serve: `brig cache warm` rebuilds it"
	}
	return what
}

// goLayerTipOnce is goLayerTip, said once for each Go version and reason:
// what was said is kept in the state directory (tipShown), and brig doctor
// says it whenever asked.
func goLayerTipOnce(ws, layer, state string, env []string) string {
	tip := goLayerTip(ws, layer, env)
	if tip == "" {
		return ""
	}
	goVersion, _ := goOnPath(env)
	if !tipShown(filepath.Join(state, "tip-go-layer"), goVersion+"\n"+tip) {
		return tip + " (said once; brig doctor says it again)"
	}
	return ""
}

// tipShown reports whether the tip key was said already, as recorded in
// file (brig's state: no call writes there), and records it when not.
func tipShown(file, key string) bool {
	if b, err := userfile.ReadRegular(file, 64<<10); err == nil && string(b) == key {
		return true
	}
	if err := os.WriteFile(file, []byte(key), 0o600); err != nil {
		slog.Debug("record a tip", "file", file, "err", err)
	}
	return false
}

// goLayerTip is the start's tip for a Go workspace (a go.mod or go.work at
// its root) when go is on env's PATH and there is no Go layer, or one of
// another Go version: its first build will compile the standard library.
// "" otherwise.
func goLayerTip(ws, layer string, env []string) string {
	goVersion, haveGo := goOnPath(env)
	if !haveGo || isDir(layer) && !stale(layerVersion(layer), goVersion) {
		return ""
	}
	for _, f := range []string{"go.mod", "go.work"} {
		if fi, err := os.Lstat(filepath.Join(ws, f)); err == nil && fi.Mode().IsRegular() {
			if isDir(layer) {
				return "brig's Go layer was built by another Go version than " + goVersion + ", so this workspace's first go build compiles the standard library again; `brig cache warm` rebuilds the layer"
			}
			return "this workspace's first go build or go test compiles Go's standard library (tens of seconds); `brig cache warm` builds it once for every workspace"
		}
	}
	return ""
}

// layerVersion is the `go version` line the layer at dir was built with
// ("" when it says none).
func layerVersion(dir string) string {
	return firstLine(filepath.Join(dir, goLayerVersion))
}

// firstLine is the first line of the regular file at path, read without
// following a link and without waiting on what is not a file (a call
// granted a write above the layer, or a repository on PATH, could put a
// FIFO there); "" when there is none.
func firstLine(path string) string {
	b, err := userfile.ReadRegular(path, 4096)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line)
}

// stale reports whether a layer built by `go version` line built does not
// serve the Go release goVersion ("go1.26.8"; "" when unknown: not stale).
func stale(built, goVersion string) bool {
	return goVersion != "" && built != "" && !slices.Contains(strings.Fields(built), goVersion)
}

// goOnPath reports whether env's PATH names a go program, and its release
// ("go1.26.8") as its GOROOT's VERSION file says ("" when it says none).
// Only files are read: the supervisor never runs a program found on PATH.
func goOnPath(env []string) (string, bool) {
	for _, kv := range env {
		path, ok := strings.CutPrefix(kv, "PATH=")
		if !ok {
			continue
		}
		for _, d := range filepath.SplitList(path) {
			if !filepath.IsAbs(d) {
				continue // relative to the workspace: a repository's own go
			}
			bin := filepath.Join(d, "go")
			if fi, err := os.Stat(bin); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
				continue
			}
			version := ""
			if real, err := filepath.EvalSymlinks(bin); err == nil {
				version = firstLine(filepath.Join(filepath.Dir(filepath.Dir(real)), "VERSION"))
			}
			return version, true
		}
	}
	return "", false
}

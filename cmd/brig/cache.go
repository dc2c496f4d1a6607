package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"brig/internal/safefs"
	"brig/policy"
)

// cacheOptions are the inputs of `brig cache list` and `brig cache clean`.
type cacheOptions struct {
	All       bool
	Workspace string
	procEnv
}

func newCacheCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "List or remove the jail's toolchain caches",
		Long: `Each workspace's jailed calls get their own toolchain cache (GOCACHE, npm,
pip, CARGO_HOME, XDG_CACHE_HOME) under ~/.cache/brig/jail, named after the
workspace's path and the repository's identity: a repository cloned again
at the same path starts with a fresh one. Everything there is disposable;
a call may write it, and before every call brig puts back the toolchains'
configuration files in it (npmrc, go.env) if a call changed them.

brig cache warm builds Go's standard library once, into ~/.cache/brig/go-std,
which every workspace's calls see beneath their GOCACHE, read-only.`,
	}
	cmd.AddCommand(newCacheListCmd(nil), newCacheCleanCmd(nil), newCacheWarmCmd(nil))
	return commandGroup(cmd)
}

func newCacheListCmd(runF func(context.Context, *cacheOptions) error) *cobra.Command {
	o := &cacheOptions{}
	cmd := &cobra.Command{
		Use:        "list",
		SuggestFor: []string{"ls"},
		Short:      "List the caches of this workspace (--all: of every workspace) with their sizes",
		Args:       cobra.NoArgs,
		RunE:       commandRun(o, &o.procEnv, nil, runF, runCacheList),
	}
	cmd.Flags().BoolVar(&o.All, "all", false, "list every workspace's caches")
	cmd.Flags().StringVar(&o.Workspace, "workspace", "", "workspace root (default: the enclosing git root, or the current directory)")
	return cmd
}

func newCacheCleanCmd(runF func(context.Context, *cacheOptions) error) *cobra.Command {
	o := &cacheOptions{}
	cmd := &cobra.Command{
		Use:        "clean",
		SuggestFor: []string{"clear", "rm", "remove", "delete", "purge", "prune"},
		Short:      "Remove the caches of this workspace (--all: of every workspace, and the Go layer)",
		Args:       cobra.NoArgs,
		RunE:       commandRun(o, &o.procEnv, nil, runF, runCacheClean),
	}
	cmd.Flags().BoolVar(&o.All, "all", false, "remove every workspace's caches")
	cmd.Flags().StringVar(&o.Workspace, "workspace", "", "workspace root (default: the enclosing git root, or the current directory)")
	return cmd
}

// cacheEntries returns the jail cache root and the entries o selects, with
// the name of this workspace's current cache ("" with --all or when the
// workspace cannot be identified).
func cacheEntries(o *cacheOptions) (root string, names []string, current string, err error) {
	root = filepath.Join(dirsFor(o.procEnv).Cache, "jail")
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return root, nil, "", nil
	}
	if err != nil {
		return "", nil, "", fmt.Errorf("read %s: %w", root, err)
	}
	base := ""
	if !o.All {
		ws, err := resolveWorkspace(o.Workspace, o.Cwd)
		if err != nil {
			return "", nil, "", err
		}
		base = policy.WorkspaceID(ws)
		current, _ = policy.CacheName(ws)
	}
	for _, e := range entries {
		if o.All || policy.IsCacheOf(e.Name(), base) {
			names = append(names, e.Name())
		}
	}
	return root, names, current, nil
}

func runCacheList(_ context.Context, o *cacheOptions) error {
	root, names, current, err := cacheEntries(o)
	if err != nil {
		return err
	}
	if layer := goLayerDir(dirsFor(o.procEnv)); isDir(layer) {
		defer fmt.Fprintf(o.Stdout, "the Go layer %s (%s) lies beneath every workspace's GOCACHE: brig cache warm rebuilds it, brig cache clean --all removes it\n", layer, humanSize(treeSize(layer)))
	}
	if len(names) == 0 {
		fmt.Fprintf(o.Stdout, "no caches under %s\n", root)
		return nil
	}
	w := tabwriter.NewWriter(o.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "CACHE\tSIZE\t")
	var total int64
	for _, n := range names {
		size := treeSize(filepath.Join(root, n))
		total += size
		note := ""
		if n == current {
			note = "this repository"
		} else if n == policy.ReadOnlyCache(current) && current != "" {
			note = "this repository's read-only calls (plan mode, subagents)"
		} else if !o.All {
			note = "stale: another repository lived here; removed at the next call"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", n, humanSize(size), note)
	}
	fmt.Fprintf(w, "total\t%s\t\n", humanSize(total))
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(o.Stdout, "under %s; `brig cache clean` removes them\n", root)
	return nil
}

func runCacheClean(_ context.Context, o *cacheOptions) error {
	root, names, _, err := cacheEntries(o)
	if err != nil {
		return err
	}
	if layer := goLayerDir(dirsFor(o.procEnv)); o.All && isDir(layer) {
		size := treeSize(layer)
		removeUnfollowed(layer) // brig built it, but nothing in it is followed either
		if isDir(layer) {
			return fmt.Errorf("the Go layer %s could not be removed", layer)
		}
		fmt.Fprintf(o.Stdout, "removed the Go layer %s (%s)\n", layer, humanSize(size))
	}
	if len(names) == 0 {
		fmt.Fprintf(o.Stdout, "no caches to remove under %s\n", root)
		return nil
	}
	dir, err := safefs.OpenResolved(root)
	if err != nil {
		return err
	}
	defer dir.Close()
	var errs []error
	for _, n := range names {
		size := treeSize(filepath.Join(root, n))
		// Calls wrote these trees: nothing in them is followed.
		if err := dir.RemoveAll(n); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(o.Stdout, "removed %s (%s)\n", filepath.Join(root, n), humanSize(size))
	}
	return errors.Join(errs...)
}

// treeSize adds up the sizes of the regular files under dir (links are not
// followed).
func treeSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func humanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// isDir reports whether path is a directory (not a link to one).
func isDir(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.IsDir()
}

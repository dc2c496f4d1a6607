package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brig/policy"
)

// TestCacheListAndClean: list shows this workspace's caches (the current
// one and a stale one) but not another workspace's; clean removes exactly
// those, following none of the links calls planted in them; --all removes
// the rest.
func TestCacheListAndClean(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, home, other := filepath.Join(root, "ws"), filepath.Join(root, "home"), filepath.Join(root, "other")
	for _, d := range []string{ws + "/.git", home, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	victim := filepath.Join(root, "important.txt")
	if err := os.WriteFile(victim, []byte("keep me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cacheRoot := filepath.Join(root, "cache", "brig", "jail")
	current, err := policy.CacheName(ws)
	if err != nil {
		t.Fatal(err)
	}
	stale := policy.WorkspaceID(ws) + "-0123456789abcdef"
	elsewhere := policy.WorkspaceID(other) + "-0123456789abcdef"
	for _, n := range []string{current, stale, elsewhere} {
		d := filepath.Join(cacheRoot, n, "go-build")
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "obj"), bytes.Repeat([]byte("x"), 2048), 0o600); err != nil {
			t.Fatal(err)
		}
		for name, target := range map[string]string{"npmrc": victim, "xdg": root} {
			if err := os.Symlink(target, filepath.Join(cacheRoot, n, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	var out bytes.Buffer
	o := &cacheOptions{procEnv: procEnv{Cwd: ws, Home: home, Env: []string{"HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(root, "cache")}, Stdout: &out, Stderr: &out}}
	if err := runCacheList(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	list := out.String()
	if !strings.Contains(list, current+"  2.0 KiB  this repository") || !strings.Contains(list, stale) || strings.Contains(list, elsewhere) {
		t.Fatalf("list:\n%s", list)
	}
	out.Reset()
	if err := runCacheClean(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{current, stale} {
		if _, err := os.Lstat(filepath.Join(cacheRoot, n)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s survived clean: %v", n, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(cacheRoot, elsewhere)); err != nil {
		t.Fatalf("clean removed another workspace's cache: %v", err)
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "keep me\n" {
		t.Fatalf("a file a planted link names changed: %q %v", b, err)
	}
	if _, err := os.Stat(ws); err != nil {
		t.Fatalf("the workspace a planted link names is gone: %v", err)
	}
	o.All = true
	out.Reset()
	if err := runCacheClean(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(cacheRoot); len(entries) != 0 {
		t.Fatalf("--all left %v", entries)
	}
	out.Reset()
	if err := runCacheList(context.Background(), o); err != nil || !strings.Contains(out.String(), "no caches") {
		t.Fatalf("empty list: %q %v", out.String(), err)
	}
}

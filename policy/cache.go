package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"brig/jail"
)

// cacheIdentityLen is the length of the identity part of a cache's name.
const cacheIdentityLen = 16

// jailCache describes the toolchain cache of workspace under root and the
// environment that points the toolchains at it. It only reads: the
// supervisor prepares the directory when the call runs (jail.Cache).
//
// The cache is named after the workspace's path and its identity (see
// workspaceIdentity): a repository deleted and cloned again at the same
// path, or another one put there, gets a fresh cache, and the older caches
// of that path are listed as stale for the supervisor to remove. The
// toolchains' configuration files in it are brig's, checked before every
// call and rewritten unless they hold exactly brig's content: an empty
// npmrc, an empty Go env file, no cargo config or credentials (pip reads
// none: PIP_CONFIG_FILE=/dev/null).
//
// A read-only call (plan mode, a subagent, a line that only reads) gets a
// cache of its own (ReadOnlyCache), which no call that may write uses: a
// toolchain trusts its cache (a Go build links what GOCACHE holds), so a
// call that promised to change nothing must not be able to plant what a
// later build with write rights would link in.
func jailCache(root, workspace, home string, env []string, readOnly bool) (*jail.Cache, []string, error) {
	name, err := CacheName(workspace)
	if err != nil {
		return nil, nil, err
	}
	sibling := ReadOnlyCache(name)
	if readOnly {
		name, sibling = sibling, name
	}
	base := WorkspaceID(workspace)
	c := &jail.Cache{
		Root:   root,
		Name:   name,
		Dirs:   []string{"go-build", "npm", "pip", "xdg", "cargo"},
		Files:  []jail.CacheFile{{Name: "npmrc"}, {Name: "go.env"}},
		Remove: []string{"cargo/config", "cargo/config.toml", "cargo/credentials", "cargo/credentials.toml"},
	}
	entries, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("read the jail cache root %s: %w", root, err)
	}
	for _, e := range entries {
		// base alone is brig's earlier, path-only layout: never used
		// again, but left to `brig cache clean` (an older brig may still
		// be using it).
		if n := e.Name(); n != c.Name && n != sibling && n != base && IsCacheOf(n, base) {
			c.Stale = append(c.Stale, n)
		}
	}
	dir := c.Dir()
	vars := []string{
		"GOCACHE=" + filepath.Join(dir, "go-build"),
		"GOMODCACHE=" + modCache(env, home),
		"GOENV=" + filepath.Join(dir, "go.env"),
		"npm_config_cache=" + filepath.Join(dir, "npm"),
		"npm_config_userconfig=" + filepath.Join(dir, "npmrc"),
		"npm_config_update_notifier=false",
		"PIP_CACHE_DIR=" + filepath.Join(dir, "pip"),
		"XDG_CACHE_HOME=" + filepath.Join(dir, "xdg"),
		// cargo writes its package-cache lock and registry into
		// CARGO_HOME; the rustup proxies on PATH still find their
		// toolchains in ~/.rustup.
		"CARGO_HOME=" + filepath.Join(dir, "cargo"),
	}
	return c, vars, nil
}

// readOnlySuffix ends the name of a workspace's read-only calls' cache.
const readOnlySuffix = "-ro"

// ReadOnlyCache is the name of the cache of the read-only calls of the
// workspace whose cache is name.
func ReadOnlyCache(name string) string { return name + readOnlySuffix }

// IsCacheOf reports whether name, an entry of the jail cache root, is a
// cache of the workspace whose WorkspaceID is base: base itself (brig's
// earlier layout) or base, a dash and an identity.
func IsCacheOf(name, base string) bool {
	if name == base {
		return true
	}
	id, ok := strings.CutPrefix(strings.TrimSuffix(name, readOnlySuffix), base+"-")
	if !ok || len(id) != cacheIdentityLen {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

// workspaceIdentity tells one repository at a path from the next one there:
// the device, inode number and birth time of the workspace directory and of
// its .git (directory or file), as a short hash. Deleting a repository and
// cloning another at the same path, or replacing its .git, changes it.
// Only a call can change it otherwise (by replacing .git), and then the
// cache merely starts empty. Where the filesystem has no birth time the
// inode numbers still differ unless the filesystem reuses them at once.
func workspaceIdentity(workspace string) (string, error) {
	h := sha256.New()
	for i, p := range []string{workspace, filepath.Join(workspace, ".git")} {
		var st unix.Statx_t
		err := unix.Statx(unix.AT_FDCWD, p, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_INO|unix.STATX_BTIME, &st)
		if err != nil {
			if i > 0 && errors.Is(err, unix.ENOENT) {
				fmt.Fprint(h, "no .git;")
				continue
			}
			return "", fmt.Errorf("identify the workspace %s: %w", workspace, err)
		}
		fmt.Fprintf(h, "%d:%d:%d:%d.%d;", st.Dev_major, st.Dev_minor, st.Ino, st.Btime.Sec, st.Btime.Nsec)
	}
	return hex.EncodeToString(h.Sum(nil))[:cacheIdentityLen], nil
}

// CacheName is the name of workspace's current cache directory under the
// jail cache root (what jail.Cache.Name says for its calls).
func CacheName(workspace string) (string, error) {
	id, err := workspaceIdentity(workspace)
	if err != nil {
		return "", err
	}
	return WorkspaceID(workspace) + "-" + id, nil
}

package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"brig/internal/envguard"
	"brig/jail"
)

// Profile describes a call in the terms a user or the policy layer uses; Spec
// turns it into the exact grant.
type Profile struct {
	Workspace   string   // absolute, resolved
	Dir         string   // working directory, inside or equal to Workspace unless granted
	ReadOnly    bool     // the workspace is read-only (plan mode, --read-only)
	Write       []string // extra writable paths (resolved, must exist)
	Read        []string // extra readable paths (resolved, must exist)
	Network     bool
	UnixSockets bool
	Home        string
	ParentEnv   []string // the supervisor's environment, filtered by envguard
	EnvAllow    []string // user-allowlisted names or NAME* prefixes
	Limits      jail.Limits
	// Namespaces: the call gets a mount namespace (private /tmp, /proc).
	Namespaces bool
	// CacheRoot holds per-workspace toolchain caches (GOCACHE, npm, pip);
	// the call may write there, never into the user's real caches.
	CacheRoot string
	// CallTmp is a per-call TMPDIR used when there is no mount namespace.
	CallTmp string
	// BrigDirs are brig's own config and state directories: never writable.
	BrigDirs []string
}

// etcDenied are /etc entries a jail never reads: password hashes, sudo
// rules, host keys and private TLS keys.
func etcDenied() []string {
	return []string{
		"shadow", "shadow-", "gshadow", "gshadow-", "sudoers", "sudoers.d",
		"ssh", "ssl/private", "security/opasswd", "krb5.keytab", "wireguard",
		"NetworkManager", "ipsec.secrets", "docker", "containers/auth.json",
		"machine-id",
	}
}

// homeToolchains are directories under $HOME where toolchains commonly live.
func homeToolchains() []string {
	return []string{
		".pyenv", ".cargo/bin", ".rustup", ".nvm", ".volta", ".bun", ".deno",
		".sdkman", ".npm-global", ".local/bin", ".local/lib", "go/bin",
		".gitconfig", ".config/git",
	}
}

// Spec builds the least-privilege jail.Spec for a profile.
func (p Profile) Spec() (jail.Spec, error) {
	if !filepath.IsAbs(p.Workspace) {
		return jail.Spec{}, fmt.Errorf("workspace %q is not absolute", p.Workspace)
	}
	if p.Home != "" && within(p.Home, p.Workspace) {
		return jail.Spec{}, fmt.Errorf("the workspace %s contains your home directory %s; run brig inside a project directory", p.Workspace, p.Home)
	}
	var paths []jail.PathRule
	// One rule per path (PATH often repeats a directory, or names one a
	// toolchain root already grants): the stronger access, and required
	// if any of its sources requires it. Every rule costs the jail a few
	// system calls per call.
	index := map[string]int{}
	add := func(path string, a jail.Access, optional bool) {
		if i, ok := index[path]; ok {
			r := &paths[i]
			if a.Includes(r.Access) {
				r.Access = a
			}
			r.Optional = r.Optional && optional
			return
		}
		index[path] = len(paths)
		paths = append(paths, jail.PathRule{Path: path, Access: a, Optional: optional})
	}

	// System: executables and libraries, read and execute.
	for _, d := range []string{"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/opt", "/snap", "/nix"} {
		add(d, jail.Exec, true)
	}
	add("/etc", jail.Read, false)
	var hidden []string
	for _, d := range etcDenied() {
		hidden = append(hidden, filepath.Join("/etc", d))
	}
	for _, d := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"} {
		add(d, jail.Write, true)
	}
	add("/sys/devices/system/cpu", jail.Read, true)
	add("/sys/fs/cgroup", jail.Read, true)
	if p.Network {
		add("/run/systemd/resolve", jail.Read, true) // /etc/resolv.conf often points here
	}

	// Toolchains in $HOME and on PATH, read and execute.
	if p.Home != "" {
		for _, d := range homeToolchains() {
			add(filepath.Join(p.Home, d), jail.Exec, true)
		}
		add(modCache(p.ParentEnv, p.Home), jail.Read, true)
	}
	for _, d := range filepath.SplitList(envValue(p.ParentEnv, "PATH")) {
		if filepath.IsAbs(d) && d != "/" && d != p.Home && !sensitive(d, p.Home) {
			add(filepath.Clean(d), jail.Exec, true)
		}
	}

	// The workspace and the user's extra grants.
	wsAccess := jail.Write
	if p.ReadOnly {
		wsAccess = jail.Exec
	}
	add(p.Workspace, wsAccess, false)
	for _, w := range p.Write {
		add(w, jail.Write, false)
	}
	for _, r := range p.Read {
		add(r, jail.Exec, false)
	}

	// Private temporary space and toolchain caches.
	additions := []string{"GOTOOLCHAIN=local", "PIP_CONFIG_FILE=/dev/null", "PIP_DISABLE_PIP_VERSION_CHECK=1"}
	if p.Namespaces {
		add("/tmp", jail.Write, false)
		add("/dev/shm", jail.Write, false)
		add("/proc", jail.Read, false) // a fresh procfs: the call's own processes only
		additions = append(additions, "TMPDIR=/tmp")
	} else {
		if p.CallTmp == "" {
			return jail.Spec{}, errors.New("no mount namespace and no per-call temporary directory")
		}
		add(p.CallTmp, jail.Write, false)
		add("/proc/self", jail.Read, true)
		for _, f := range []string{"cpuinfo", "meminfo", "stat", "loadavg", "uptime", "version", "filesystems"} {
			add("/proc/"+f, jail.Read, true)
		}
		additions = append(additions, "TMPDIR="+p.CallTmp)
	}
	var cache *jail.Cache
	if p.CacheRoot != "" {
		// Only described here: the supervisor prepares it when the call
		// runs (compiling a grant has no side effect).
		c, vars, err := jailCache(p.CacheRoot, p.Workspace, p.Home, p.ParentEnv)
		if err != nil {
			return jail.Spec{}, err
		}
		cache = c
		add(c.Dir(), jail.Write, false)
		additions = append(additions, vars...)
	}
	if !p.Network {
		additions = append(additions, "GOPROXY=off", "GOFLAGS=-mod=mod", "npm_config_offline=true", "CARGO_NET_OFFLINE=true")
	}

	protected, err := jail.ProtectedPaths(p.Workspace, p.BrigDirs...)
	if err != nil {
		return jail.Spec{}, fmt.Errorf("find protected paths in %s: %w", p.Workspace, err)
	}
	for _, w := range p.Write {
		if !within(w, p.Workspace) {
			more, err := jail.ProtectedPaths(w)
			if err != nil {
				return jail.Spec{}, err
			}
			protected = append(protected, more...)
		}
	}
	slices.Sort(protected)
	protected = slices.Compact(protected)

	spec := jail.Spec{
		Workspace:   p.Workspace,
		Dir:         p.Dir,
		Paths:       paths,
		Protected:   protected,
		Hidden:      hidden,
		PrivateTmp:  p.Namespaces,
		Network:     p.Network,
		UnixSockets: p.UnixSockets,
		Env:         envguard.Build(p.ParentEnv, p.EnvAllow, additions),
		Limits:      p.Limits,
		Cache:       cache,
	}
	return spec, spec.Validate()
}

// sensitive reports whether a PATH entry sits in a directory that holds
// secrets (granting it would expose them).
func sensitive(dir, home string) bool {
	if home == "" {
		return false
	}
	for _, s := range []string{".ssh", ".aws", ".gnupg", ".config", ".kube", ".docker", ".local/share", ".password-store"} {
		if within(dir, filepath.Join(home, s)) {
			return true
		}
	}
	return false
}

func modCache(env []string, home string) string {
	if v := envValue(env, "GOMODCACHE"); v != "" {
		return v
	}
	if v := envValue(env, "GOPATH"); v != "" {
		return filepath.Join(filepath.SplitList(v)[0], "pkg", "mod")
	}
	return filepath.Join(home, "go", "pkg", "mod")
}

func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// WorkspaceID names a workspace in brig's directories: its base name and a
// hash of its path.
func WorkspaceID(ws string) string {
	sum := sha256.Sum256([]byte(ws))
	return filepath.Base(ws) + "-" + hex.EncodeToString(sum[:6])
}

func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

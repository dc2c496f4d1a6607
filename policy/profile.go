package policy

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"brig/internal/envguard"
	"brig/internal/sensitive"
	"brig/jail"
)

// Profile describes a call in the terms a user or the policy layer uses; Spec
// turns it into the exact grant.
type Profile struct {
	Workspace string   // absolute, resolved
	Dir       string   // working directory, inside or equal to Workspace unless granted
	ReadOnly  bool     // the workspace is read-only (plan mode, --read-only)
	Write     []string // extra writable paths (resolved, must exist)
	Read      []string // extra readable paths (resolved, must exist)
	// Network: the egress proxy (hosts decided per connection).
	Network bool
	// GoDownloads: calls may download Go modules without asking (a rule
	// or preset allows the module proxy), so they get a module cache of
	// the workspace's own instead of yours read-only.
	GoDownloads bool
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
	// GoLayer is the Go build cache of the standard library that brig
	// cache warm built ("": none): a call with a mount namespace sees it
	// beneath its workspace's GOCACHE, read-only (jail.Overlay).
	GoLayer string
	// BrigCache is brig's cache directory ("": not known), which holds
	// CacheRoot, GoLayer and the layer's builds: what every workspace's
	// builds link. No grant may write in it but the call's own cache; a
	// grant that covers it (--write ~/.cache) leaves it read-only, or,
	// without a mount namespace, hides it but for the own cache.
	BrigCache string
	// ReadOnlyCache: the call promised to change nothing (plan mode, a
	// subagent, brig sandbox --read-only), so it gets the workspace's
	// read-only calls' cache, which no call that may write uses (jailCache).
	ReadOnlyCache bool
	// CallTmp is a per-call TMPDIR used when there is no mount namespace.
	CallTmp string
	// BrigDirs are brig's own config and state directories: never writable.
	BrigDirs []string
	// Secrets is the index of the secrets under Home when the caller keeps
	// one (a Policy does); nil, or one of another home: made here.
	Secrets *sensitive.Index
	// Repos remembers the workspace's directories between grants (the
	// Policy keeps one for its workspace); nil searches it afresh.
	Repos *jail.RepoCache
	// Denied are the paths your Read deny rules hide (Policy.DeniedReads):
	// masked in every call's view like the secrets, so that a command that
	// reaches them without naming them (grep -r, a glob, a build) reads
	// nothing.
	Denied []string
}

// secrets is the index of the secrets under p.Home.
func (p Profile) secrets() *sensitive.Index {
	if p.Secrets != nil && p.Secrets.Home() == p.Home {
		return p.Secrets
	}
	return sensitive.NewIndex(p.Home)
}

// GrantEntry is one entry of the default grant: a path outside the
// workspace that every bash call (and `brig sandbox`) may read, and why.
// The default grant is handed to the repository's own code (`make` runs
// unasked), so every entry must be safe to show an attacker: toolchains
// are granted at their narrowest (bin and lib directories, single config
// files), and the secrets the sensitive lists name under an entry are
// masked.
type GrantEntry struct {
	// Path is absolute, or starts with "~/" for the home directory; a
	// segment may be a pattern ("*" never crosses "/") for directories
	// that differ per installed version.
	Path   string      `json:"path"`
	Access jail.Access `json:"access"`
	Reason string      `json:"reason"`
	// Optional entries are skipped when missing (the system roots and
	// toolchains; every entry here is).
	Optional bool `json:"-"`
}

// DefaultGrant is the documented list the default grant is built from.
// PATH entries and the Go module cache are added to it at run time, under
// the rules in DefaultGrantDynamic.
func DefaultGrant() []GrantEntry {
	sys := func(path string, a jail.Access, why string) GrantEntry { return GrantEntry{path, a, why, true} }
	return []GrantEntry{
		sys("/usr", jail.Exec, "the system's programs, libraries, headers and data"),
		sys("/bin", jail.Exec, "system programs (often a link into /usr)"),
		sys("/sbin", jail.Exec, "system programs (often a link into /usr)"),
		sys("/lib", jail.Exec, "system libraries and the dynamic loader"),
		sys("/lib64", jail.Exec, "system libraries and the dynamic loader"),
		sys("/lib32", jail.Exec, "32-bit libraries"),
		sys("/libx32", jail.Exec, "x32 libraries"),
		sys("/opt", jail.Exec, "software installed outside the package manager"),
		sys("/snap", jail.Exec, "snap packages"),
		sys("/nix", jail.Exec, "the Nix store"),
		sys("/etc", jail.Read, "system configuration: name resolution, TLS roots, users, locale (its secrets are masked)"),
		sys("/dev/null", jail.Write, "standard device"),
		sys("/dev/zero", jail.Write, "standard device"),
		sys("/dev/full", jail.Write, "standard device"),
		sys("/dev/random", jail.Write, "standard device"),
		sys("/dev/urandom", jail.Write, "standard device"),
		sys("/dev/tty", jail.Write, "standard device (there is no terminal: opening it fails)"),
		sys("/sys/devices/system/cpu", jail.Read, "the CPU count build tools size their parallelism by"),
		sys("/sys/fs/cgroup", jail.Read, "the limits runtimes (Go, Java, Node) size themselves by"),

		sys("~/.gitconfig", jail.Read, "your git identity and settings, so commits work (keep tokens in a credential helper, not in URLs here)"),
		sys("~/.config/git/config", jail.Read, "git's XDG config file"),
		sys("~/.config/git/ignore", jail.Read, "git's global ignore file"),
		sys("~/.config/git/attributes", jail.Read, "git's global attributes file"),
		sys("~/go/bin", jail.Exec, "programs installed with go install"),
		sys("~/.cargo/bin", jail.Exec, "cargo, rustc and the rustup proxies"),
		sys("~/.rustup/toolchains", jail.Exec, "the Rust toolchains the rustup proxies run"),
		sys("~/.rustup/settings.toml", jail.Read, "rustup's default toolchain"),
		sys("~/.pyenv/bin", jail.Exec, "pyenv itself"),
		sys("~/.pyenv/libexec", jail.Exec, "pyenv's commands, which the shims run"),
		sys("~/.pyenv/shims", jail.Exec, "pyenv's shims (python, pip …)"),
		sys("~/.pyenv/versions", jail.Exec, "the Python versions pyenv installed"),
		sys("~/.pyenv/plugins", jail.Exec, "pyenv plugins (virtualenv) the shims consult"),
		sys("~/.pyenv/pyenv.d", jail.Exec, "pyenv's hooks"),
		sys("~/.pyenv/version", jail.Read, "pyenv's global Python version"),
		sys("~/.nvm/versions/node/*/bin", jail.Exec, "node and npm of each nvm-installed version"),
		sys("~/.nvm/versions/node/*/lib", jail.Exec, "npm and global packages of each nvm-installed version"),
		sys("~/.nvm/versions/node/*/include", jail.Read, "node's headers, for native modules"),
		sys("~/.volta/bin", jail.Exec, "Volta's shims"),
		sys("~/.volta/tools", jail.Exec, "the tools Volta installed (their npm config is masked)"),
		sys("~/.bun/bin", jail.Exec, "bun and its global programs"),
		sys("~/.bun/install/global", jail.Exec, "bun's global packages the programs link to"),
		sys("~/.deno/bin", jail.Exec, "deno and its installed programs"),
		sys("~/.sdkman/candidates", jail.Exec, "JDKs and build tools SDKMAN installed"),
		sys("~/.npm-global/bin", jail.Exec, "programs of npm global installs (prefix ~/.npm-global)"),
		sys("~/.npm-global/lib", jail.Exec, "packages of npm global installs (not etc/, which holds npmrc)"),
		sys("~/.local/bin", jail.Exec, "programs of pip --user, pipx and others"),
		sys("~/.local/lib", jail.Exec, "Python packages installed with pip --user"),
	}
}

// DefaultGrantDynamic describes the entries added at run time, for the
// README and `brig doctor`.
func DefaultGrantDynamic() []GrantEntry {
	return []GrantEntry{
		{Path: "each directory on PATH", Access: jail.Exec, Reason: "the programs you run; cleaned and links resolved, and refused when it is /, your home directory or a parent of it, holds or lies in a secret or one of brig's own directories, or leads through a link in the workspace or a directory you granted write (the repository or a call chose its target); one inside the workspace needs no rule of its own; a pyenv shims directory brings the pyenv it belongs to (its bin, libexec, versions, plugins, pyenv.d and version), which the shims run"},
		{Path: "the Go module cache", Access: jail.Read, Reason: "GOMODCACHE, else GOPATH/pkg/mod, else ~/go/pkg/mod, so builds work offline; refused under the same rules as PATH"},
	}
}

// Granted is one path of a call's grant outside the workspace, with where
// it came from.
type Granted struct {
	Path   string      `json:"path"`
	Access jail.Access `json:"access"`
	Reason string      `json:"reason"`
}

// Refused is a path the grant would have included and did not.
type Refused struct {
	Path   string `json:"path"`
	Source string `json:"source"` // "PATH", "GOMODCACHE" …
	Why    string `json:"why"`
}

// Masked is a secret that lies inside a granted path and is hidden from
// the call (an empty, unreadable mount over it, or the Landlock grant
// split around it).
type Masked struct {
	Path   string `json:"path"`
	Under  string `json:"under"` // the grant that covers it
	Reason string `json:"reason"`
}

// Outside is everything a call of this profile can read outside the
// workspace: the default grant (resolved on this machine), the user's
// extra grants, what was refused and what is masked.
type Outside struct {
	Granted []Granted `json:"granted"`
	Refused []Refused `json:"refused,omitempty"`
	Masked  []Masked  `json:"masked,omitempty"`
}

// defaults resolves DefaultGrant and the dynamic entries on this machine.
func (p Profile) defaults(ix *sensitive.Index) (granted []GrantEntry, refused []Refused) {
	for _, e := range DefaultGrant() {
		path := e.Path
		if rest, ok := strings.CutPrefix(path, "~/"); ok {
			if p.Home == "" {
				continue
			}
			path = filepath.Join(p.Home, rest)
		}
		if !strings.ContainsAny(path, "*?[") {
			e.Path = path
			granted = append(granted, e)
			continue
		}
		matches, _ := filepath.Glob(path)
		for _, m := range matches {
			e.Path = m
			granted = append(granted, e)
		}
	}
	dyn := DefaultGrantDynamic()
	for _, d := range filepath.SplitList(envValue(p.ParentEnv, "PATH")) {
		if d == "" {
			continue
		}
		if r, why := p.checkDefault(d, ix); why != "" {
			refused = append(refused, Refused{Path: d, Source: "PATH", Why: why})
		} else if r != "" {
			granted = append(granted, GrantEntry{Path: r, Access: jail.Exec, Reason: "on PATH", Optional: true})
			for _, e := range pyenvBeside(r) {
				if rr, why := p.checkDefault(e.Path, ix); why == "" && rr != "" {
					e.Path = rr
					granted = append(granted, e)
				}
			}
		}
	}
	if p.Home != "" || envValue(p.ParentEnv, "GOMODCACHE") != "" || envValue(p.ParentEnv, "GOPATH") != "" {
		mc := modCache(p.ParentEnv, p.Home)
		if r, why := p.checkDefault(mc, ix); why != "" {
			refused = append(refused, Refused{Path: mc, Source: "GOMODCACHE", Why: why})
		} else if r != "" {
			granted = append(granted, GrantEntry{Path: r, Access: jail.Read, Reason: dyn[1].Reason, Optional: true})
		}
	}
	return granted, refused
}

// pyenvBeside is what pyenv's shims run, when dir (a PATH entry) is the
// shims directory of a pyenv installed outside your home: the shims
// execute libexec/pyenv, which reads the versions and plugins beside it.
// A new user's PATH held /root/.pyenv/shims with HOME elsewhere, and
// every python3 failed with "libexec/pyenv: Permission denied". Under your
// home DefaultGrant lists them already.
func pyenvBeside(dir string) []GrantEntry {
	root := filepath.Dir(dir)
	if filepath.Base(dir) != "shims" {
		return nil
	}
	if _, err := os.Stat(filepath.Join(root, "libexec", "pyenv")); err != nil {
		return nil
	}
	var out []GrantEntry
	for _, e := range DefaultGrant() {
		if rest, ok := strings.CutPrefix(e.Path, "~/.pyenv/"); ok && rest != "shims" {
			e.Path = filepath.Join(root, rest)
			e.Reason += " (the pyenv of a shims directory on PATH)"
			out = append(out, e)
		}
	}
	return out
}

// checkDefault cleans a directory named by the environment (a PATH entry,
// the module cache) and resolves its links; it returns the resolved path,
// "" when it does not exist, or why it is refused.
func (p Profile) checkDefault(d string, ix *sensitive.Index) (resolved, why string) {
	if !filepath.IsAbs(d) {
		return "", "not an absolute path (a relative PATH entry would name a directory of the workspace or wherever a command runs)"
	}
	// A link in a place calls can write (the workspace, a directory you
	// granted write) is the repository's or an earlier call's to choose:
	// bin -> .. in a repository, with its bin on your PATH (direnv's
	// PATH_add), would give every call your other projects.
	r, exists, planted, err := ResolveGrantPath(filepath.Clean(d), "/", p.Home, p.writable())
	if err != nil || !exists {
		return "", "" // missing: nothing to grant
	}
	if p.callWritable(r) {
		return "", "" // the workspace's (or your write grant's) own rule covers it
	}
	if planted != "" {
		target, _ := os.Readlink(planted)
		return "", fmt.Sprintf("it leads through the symbolic link %s -> %s, in a directory calls can write, so the repository or a call chose where it points", planted, target)
	}
	switch {
	case r == "/":
		return "", "the root directory"
	case p.Home != "" && within(p.Home, r):
		return "", "your home directory or a parent of it"
	}
	for _, b := range p.BrigDirs {
		if within(r, b) || within(b, r) {
			return "", "holds or lies in brig's own directory " + b
		}
	}
	if e, ok := ix.Contains(r, sensitive.Secret); ok {
		return "", "holds or lies in a secret (" + e.Path + ": " + e.Reason + ")"
	}
	return r, ""
}

// callWritable reports whether path lies where a call may write: the
// workspace or one of the extra write grants. A symbolic link there may
// have been planted by the repository or by an earlier call.
func (p Profile) callWritable(path string) bool {
	return slices.ContainsFunc(p.writable(), func(w string) bool { return within(path, w) })
}

// writable lists the places a call of this profile may write beyond its
// private temporary space: the workspace and the extra write grants.
func (p Profile) writable() []string {
	w := slices.Clone(p.Write)
	if p.Workspace != "" {
		w = append(w, p.Workspace)
	}
	return slices.DeleteFunc(w, func(d string) bool { return d == "" })
}

// masks lists the secrets inside the granted paths that the call must not
// read: every Secret entry of the sensitive lists, and brig's own
// directories, strictly inside a grant, unless one of the user's extra
// grants names it (or something inside it) individually. Brig's own
// directories are masked whatever names them.
func (p Profile) masks(paths []jail.PathRule, ix *sensitive.Index) []Masked {
	named := func(s string) bool {
		for _, g := range append(slices.Clone(p.Read), p.Write...) {
			if within(g, s) {
				return true
			}
		}
		return false
	}
	seen := map[string]bool{}
	var out []Masked
	add := func(m Masked) {
		if !seen[m.Path] {
			seen[m.Path] = true
			out = append(out, m)
		}
	}
	for _, r := range paths {
		if within(r.Path, "/dev") || within(r.Path, "/proc") || within(r.Path, "/sys") || (p.Namespaces && r.Path == "/tmp") {
			continue // devices, kernel views, and a fresh private /tmp
		}
		for _, f := range ix.Under(r.Path, sensitive.Secret) {
			if !named(f.Path) {
				add(Masked{Path: f.Path, Under: r.Path, Reason: f.Entry.Reason})
			}
		}
		for _, b := range p.BrigDirs {
			if b != r.Path && within(b, r.Path) {
				add(Masked{Path: b, Under: r.Path, Reason: "brig's own configuration, credentials and state"})
			}
		}
		for _, d := range p.Denied {
			if d != r.Path && within(d, r.Path) {
				add(Masked{Path: d, Under: r.Path, Reason: "a Read deny rule of yours"})
			}
		}
	}
	slices.SortFunc(out, func(a, b Masked) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// laterExecUnder lists the later-executed paths (shell startup files, PATH
// directories, git's global config …) strictly inside the user's extra
// write grants that no grant names individually: they stay read-only.
func (p Profile) laterExecUnder(ix *sensitive.Index) []string {
	var out []string
	for _, w := range p.Write {
		for _, f := range ix.Under(w, sensitive.LaterExec) {
			if !slices.ContainsFunc(p.Write, func(g string) bool { return within(g, f.Path) }) {
				out = append(out, f.Path)
			}
		}
	}
	return out
}

// pathDirsUnder lists the directories on the user's PATH that the grant
// would let the call write: an activated virtual environment's .venv/bin,
// a node_modules/.bin or bin that direnv put there. A program planted in
// one runs, outside the jail, the next time the user types its name. The
// policy refuses a call that names one (every mode); the jail keeps them
// read-only for the calls that do not (make, running the repository's
// code). Each is listed as PATH names it and as it resolves: the jail's
// mount lands on the resolved directory, and the sweep puts back a link
// on the way that the call repointed (.venv -> ~/.virtualenvs/proj made
// to point at a directory of the call's; red team, 2026-12-02), which it
// does for the links on the way to every protected path. A directory
// that is or holds the workspace is not listed, as for the policy
// (pathDirs).
func (p Profile) pathDirsUnder(paths []jail.PathRule) []string {
	var out []string
	for _, d := range filepath.SplitList(envValue(p.ParentEnv, "PATH")) {
		if !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		named := []string{d}
		if real, err := filepath.EvalSymlinks(d); err == nil && real != d {
			named = append(named, real)
		}
		for _, n := range named {
			if n != "/" && !within(p.Workspace, n) && p.covers(paths, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// Outside reports what a call of this profile can read outside the
// workspace, what was refused and what is masked (for `brig doctor` and
// `brig sandbox --explain`).
func (p Profile) Outside() (Outside, error) {
	cacheRoot := p.CacheRoot
	p.CacheRoot = "" // describing a grant must not create the cache
	if !p.Namespaces && p.CallTmp == "" {
		p.CallTmp = "/nonexistent-per-call-tmp" // made per call; not listed
	}
	spec, err := p.Spec()
	if err != nil {
		return Outside{}, err
	}
	var o Outside
	if cacheRoot != "" {
		o.Granted = append(o.Granted, Granted{Path: filepath.Join(cacheRoot, WorkspaceID(p.Workspace)), Access: jail.Write,
			Reason: "brig's toolchain cache for this workspace (GOCACHE, npm, pip, CARGO_HOME)"})
		if _, ok := p.goLayer(&jail.Cache{Root: cacheRoot, Name: WorkspaceID(p.Workspace)}, spec.Paths); ok {
			o.Granted = append(o.Granted, Granted{Path: p.GoLayer, Access: jail.Read,
				Reason: "brig's Go layer (brig cache warm): the standard library's build cache, beneath GOCACHE"})
		}
	}
	reasons := map[string]string{}
	ix := p.secrets()
	defaults, refused := p.defaults(ix)
	for _, e := range defaults {
		if _, ok := reasons[e.Path]; !ok {
			reasons[e.Path] = e.Reason
		}
	}
	for _, r := range p.Read {
		// Said by where it can come from: a trusted repository's config
		// as well as the user's own, and a flag (new user, 2026-12-03:
		// a repository's write showed as "granted by you (--write …)").
		reasons[r] = "granted by [sandbox] read (your config, or a repository config you trusted) or by --add-dir DIR:ro (brig sandbox: --read)"
	}
	for _, w := range p.Write {
		reasons[w] = "granted by [sandbox] write (your config, or a repository config you trusted) or by --add-dir (brig sandbox: --write)"
	}
	for _, r := range spec.Paths {
		if within(r.Path, p.Workspace) || r.Path == "/tmp" || r.Path == "/dev/shm" || within(r.Path, "/proc") || r.Path == p.CallTmp {
			continue
		}
		why := reasons[r.Path]
		if _, err := os.Stat(r.Path); err != nil && r.Optional {
			continue
		}
		o.Granted = append(o.Granted, Granted{Path: r.Path, Access: r.Access, Reason: why})
	}
	o.Refused = refused
	o.Masked = p.masks(spec.Paths, ix)
	return o, nil
}

// Spec builds the least-privilege jail.Spec for a profile.
func (p Profile) Spec() (jail.Spec, error) {
	if !filepath.IsAbs(p.Workspace) {
		return jail.Spec{}, fmt.Errorf("workspace %q is not absolute", p.Workspace)
	}
	if p.Home != "" && within(p.Home, p.Workspace) {
		return jail.Spec{}, fmt.Errorf("the workspace %s contains your home directory %s; run brig inside a project directory", p.Workspace, p.Home)
	}
	// The workspace's protected paths (its repositories' control files,
	// read afresh; about a third of the compile) need nothing below:
	// they are found on the other core while the rest is worked out
	// (0.66 → 0.60 ms a compile in a session's calls).
	gitEnv := append(slices.Clone(p.ParentEnv), "HOME="+p.Home)
	type found struct {
		paths []string
		err   error
	}
	protectedOf := make(chan found, 1) // buffered: an early return leaves nothing blocked
	go func() {
		paths, err := p.Repos.ProtectedPathsEnv(p.Workspace, gitEnv, p.BrigDirs...)
		protectedOf <- found{paths, err}
	}()
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

	// The default grant: the system, toolchains, PATH and the module
	// cache (DefaultGrant says why each is there).
	ix := p.secrets()
	defaults, _ := p.defaults(ix)
	for _, e := range defaults {
		add(e.Path, e.Access, e.Optional)
	}
	// The workspace and the user's extra grants.
	wsAccess := jail.Write
	if p.ReadOnly {
		wsAccess = jail.Exec
	}
	add(p.Workspace, wsAccess, false)
	for _, w := range p.Write {
		if err := p.checkExtra("write", w); err != nil {
			return jail.Spec{}, err
		}
		add(w, jail.Write, false)
	}
	for _, r := range p.Read {
		if err := p.checkExtra("read", r); err != nil {
			return jail.Spec{}, err
		}
		add(r, jail.Exec, false)
	}
	// The extra grants were resolved (their callers' ResolvePath), so
	// the jail opens them without following links (jail.PathRule.Exact).
	for i := range paths {
		paths[i].Exact = slices.Contains(p.Write, paths[i].Path) || slices.Contains(p.Read, paths[i].Path)
	}

	// Private temporary space and toolchain caches.
	additions := []string{"PIP_CONFIG_FILE=/dev/null", "PIP_DISABLE_PIP_VERSION_CHECK=1"}
	// GOTOOLCHAIN: yours, else local (no toolchain download in a call).
	additions = append(additions, "GOTOOLCHAIN="+cmp.Or(envValue(p.ParentEnv, "GOTOOLCHAIN"), "local"))
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
	var ownCache string
	var overlays []jail.Overlay
	goLayered := false
	if p.CacheRoot != "" {
		// Only described here: the supervisor prepares it when the call
		// runs (compiling a grant has no side effect).
		c, vars, err := jailCache(p.CacheRoot, p.Workspace, p.Home, p.ParentEnv, p.ReadOnlyCache)
		if err != nil {
			return jail.Spec{}, err
		}
		cache, ownCache = c, c.Dir()
		add(c.Dir(), jail.Write, false)
		additions = append(additions, vars...)
		if o, ok := p.goLayer(c, paths); ok {
			c.Dirs = append(c.Dirs, goLayerWork)
			add(o.Lower, jail.Read, true)
			overlays = append(overlays, o)
		}
		// Go modules. Your module cache is read-only to every call (what a
		// call wrote there, a build of yours outside the jail would run).
		// When calls may download modules (GoDownloads), or once one has,
		// the workspace's calls use a GOPATH of its own (module cache and
		// checksum database state), filled first from your module cache (a
		// file:// proxy, no network) and then from your GOPROXY through
		// brig's proxy.
		gopath := filepath.Join(c.Dir(), "gopath")
		if fi, err := os.Lstat(gopath); p.GoDownloads || (err == nil && fi.IsDir()) {
			c.Dirs = append(c.Dirs, "gopath")
			additions = append(additions, "GOPATH="+gopath, "GOMODCACHE="+filepath.Join(gopath, "pkg", "mod"))
			if v := goProxyVia(modCache(p.ParentEnv, p.Home), envValue(p.ParentEnv, "GOPROXY"), p.GoDownloads); v != "" {
				additions = append(additions, "GOPROXY="+v)
			}
			goLayered = true
		}
	}
	if !p.Network {
		additions = append(additions, "npm_config_offline=true", "CARGO_NET_OFFLINE=true")
	}
	goflags := envValue(p.ParentEnv, "GOFLAGS")
	switch {
	case goLayered:
		goflags = strings.TrimSpace(goflags + " -modcacherw") // so that brig cache clean can remove the modules
	case p.CacheRoot != "" || !p.Network:
		// Your module cache, read-only: Go cannot download into it, so it
		// is told at once (GOPROXY=off) rather than failing to write.
		// GOFLAGS stays yours: -mod=mod (added here until 2026-12-02)
		// let go test rewrite a go.mod it found untidy, which your own
		// go test (-mod=readonly) leaves alone (new user).
		if v := envValue(p.ParentEnv, "GOPROXY"); !strings.HasPrefix(v, "file://") && v != "off" {
			additions = append(additions, "GOPROXY=off") // a local file:// proxy of yours still works offline
		}
	}
	if goflags != "" {
		additions = append(additions, "GOFLAGS="+goflags)
	}

	var hidden []string
	for _, m := range p.masks(paths, ix) {
		hidden = append(hidden, m.Path)
	}

	ws := <-protectedOf
	if ws.err != nil {
		return jail.Spec{}, fmt.Errorf("find protected paths in %s: %w", p.Workspace, ws.err)
	}
	protected := ws.paths
	for _, w := range p.Write {
		if !within(w, p.Workspace) {
			more, err := jail.ProtectedPathsEnv(w, gitEnv)
			if err != nil {
				return jail.Spec{}, err
			}
			protected = append(protected, more...)
		}
	}
	protected = append(protected, p.laterExecUnder(ix)...)
	protected = append(protected, p.pathDirsUnder(paths)...)
	// brig's cache reaches every workspace's builds: under a grant that
	// covers it (--write ~/.cache) it stays read-only but for the call's
	// own cache (the jail binds that writable again, Spec.OwnCache);
	// without a mount namespace it is hidden instead, as the supervisor
	// cannot keep a copy of it all to put back: Landlock then grants
	// nothing in it but the own cache's own rule (no new entry either).
	// A Go layer a call makes where there was none is taken out after it.
	switch {
	case p.BrigCache != "" && p.covers(paths, p.BrigCache) && p.Namespaces:
		protected = append(protected, p.BrigCache)
	case p.BrigCache != "" && p.covers(paths, p.BrigCache):
		hidden = append(hidden, p.BrigCache)
	case p.GoLayer != "" && p.covers(paths, p.GoLayer):
		protected = append(protected, p.GoLayer)
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
		Overlays:    overlays,
		Cache:       cache,
		OwnCache:    ownCache,
		Repos:       p.Repos,
	}
	return spec, spec.Validate()
}

// goLayerWork is the overlay's work directory in a workspace's cache,
// beside its go-build.
const goLayerWork = "go-build.layer-work"

// covers reports whether paths grant writing dir as a whole (a grant of
// dir or of a directory above it). The private /tmp's grant is of a fresh
// tmpfs (what lies under /tmp is carried onto it read-only, as granted).
func (p Profile) covers(paths []jail.PathRule, dir string) bool {
	return slices.ContainsFunc(paths, func(r jail.PathRule) bool {
		fresh := p.Namespaces && (r.Path == "/tmp" || r.Path == "/dev/shm")
		return r.Access == jail.Write && within(dir, r.Path) && !fresh
	})
}

// reaches reports whether paths grant writing dir or anything in it.
func (p Profile) reaches(paths []jail.PathRule, dir string) bool {
	return p.covers(paths, dir) || slices.ContainsFunc(paths, func(r jail.PathRule) bool {
		return r.Access == jail.Write && within(r.Path, dir)
	})
}

// goLayer is the overlay that shows the Go layer (GoLayer) beneath the
// cache c's GOCACHE, when the call gets a mount namespace and the layer
// exists. Not when a grant lets the call write the layer (--write
// ~/.cache, say): a layer the call could change must not reach another
// workspace's builds.
func (p Profile) goLayer(c *jail.Cache, paths []jail.PathRule) (jail.Overlay, bool) {
	if !p.Namespaces || p.GoLayer == "" {
		return jail.Overlay{}, false
	}
	if fi, err := os.Lstat(p.GoLayer); err != nil || !fi.IsDir() {
		return jail.Overlay{}, false
	}
	if p.reaches(paths, p.GoLayer) {
		return jail.Overlay{}, false
	}
	return jail.Overlay{Dir: filepath.Join(c.Dir(), "go-build"), Lower: p.GoLayer, Work: filepath.Join(c.Dir(), goLayerWork)}, true
}

// checkExtra refuses an extra grant of brig's own directories: the agent
// may never read its credentials or change what governs it.
func (p Profile) checkExtra(kind, path string) error {
	for _, b := range p.BrigDirs {
		if within(path, b) {
			return fmt.Errorf("%s grant %s: %s is brig's own directory and is never granted to a call", kind, path, b)
		}
	}
	if kind == "write" && p.BrigCache != "" && within(path, p.BrigCache) {
		return fmt.Errorf("write grant %s: %s is brig's cache (the Go layer and every workspace's toolchain caches, which other workspaces' builds link) and is never granted to a call for writing; a call writes its own workspace's cache already", path, p.BrigCache)
	}
	return nil
}

// goProxyVia is the GOPROXY of a call that uses the workspace's own module
// cache: your module cache's downloads as a file:// proxy first, then, when
// downloads are allowed, your GOPROXY (by default proxy.golang.org, then
// direct), and otherwise nothing more. "" keeps yours when it is off or a file:// proxy.
func goProxyVia(modCache, user string, download bool) string {
	if user == "off" || strings.HasPrefix(user, "file://") {
		return ""
	}
	local := "file://" + filepath.Join(modCache, "cache", "download")
	if !download {
		return local + ",off"
	}
	return local + "," + cmp.Or(withoutPasswords(user), "https://proxy.golang.org,direct")
}

// withoutPasswords is a GOPROXY list with the user information (user:token@)
// taken out of each URL: a call's environment is the model's to read (env),
// and a proxy's password is a credential like any other. A proxy that
// needs one then refuses the call's downloads (Go also takes credentials
// from GOAUTH or ~/.netrc, which calls cannot read either).
func withoutPasswords(list string) string {
	var b strings.Builder
	for list != "" {
		i := strings.IndexAny(list, ",|")
		item, sep := list, ""
		if i >= 0 {
			item, sep, list = list[:i], list[i:i+1], list[i+1:]
		} else {
			list = ""
		}
		if u, err := url.Parse(item); err == nil && u.User != nil {
			u.User = nil
			item = u.String()
		}
		b.WriteString(item + sep)
	}
	return b.String()
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

// DefaultGrantMarkdown renders the default grant as the Markdown table the
// README shows (entries with the same access and reason share a row).
func DefaultGrantMarkdown() string {
	var b strings.Builder
	b.WriteString("| path | access | why |\n| --- | --- | --- |\n")
	access := map[jail.Access]string{jail.Read: "read", jail.Exec: "read, execute", jail.Write: "read, write"}
	entries := append(DefaultGrant(), DefaultGrantDynamic()...)
	for i := 0; i < len(entries); {
		j := i + 1
		for j < len(entries) && entries[j].Access == entries[i].Access && entries[j].Reason == entries[i].Reason {
			j++
		}
		var paths []string
		for _, e := range entries[i:j] {
			if strings.HasPrefix(e.Path, "/") || strings.HasPrefix(e.Path, "~") {
				paths = append(paths, "`"+e.Path+"`")
			} else {
				paths = append(paths, e.Path)
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", strings.Join(paths, ", "), access[entries[i].Access], entries[i].Reason)
		i = j
	}
	return b.String()
}

// CoveredSecrets lists the existing secrets (and brig's own directories)
// strictly inside grant that a call is kept from reading: what a broad
// grant such as --read ~ would otherwise expose. named are the other
// grants of the same call: a secret one of them names is not listed.
func CoveredSecrets(grant, home string, brigDirs, named []string) []string {
	p := Profile{Home: home, BrigDirs: brigDirs, Read: named}
	var out []string
	for _, m := range p.masks([]jail.PathRule{{Path: grant, Access: jail.Read}}, sensitive.NewIndex(home)) {
		if _, err := os.Lstat(m.Path); err == nil {
			out = append(out, m.Path)
		}
	}
	return out
}

// CoveredSecretsWarning says, for a user's grant that covers secrets, that
// they stay masked and how to grant one; "" when it covers none.
func CoveredSecretsWarning(what, grant, home string, brigDirs, named []string) string {
	covered := CoveredSecrets(grant, home, brigDirs, named)
	if len(covered) == 0 {
		return ""
	}
	show := make([]string, len(covered))
	for i, c := range covered {
		show[i] = c
		if rest, ok := strings.CutPrefix(c, home+"/"); ok && home != "" {
			show[i] = "~/" + rest
		}
	}
	const most = 8
	list := strings.Join(show[:min(len(show), most)], ", ")
	if len(show) > most {
		list += fmt.Sprintf(" and %d more", len(show)-most)
	}
	return fmt.Sprintf("%s %s covers secrets that stay unreadable to the call: %s (grant one by naming it; brig's own directories are never granted)", what, grant, list)
}

// SandboxGrantWarnings warns about the workspace's [sandbox] read and write
// grants that cover secrets (they stay masked).
func (p *Policy) SandboxGrantWarnings() []string {
	var out []string
	var resolved []string
	type g struct{ what, given, path string }
	var grants []g
	for _, set := range []struct {
		what  string
		paths []string
	}{{"[sandbox] read", p.Sandbox.Read}, {"[sandbox] write", p.Sandbox.Write}} {
		for _, given := range set.paths {
			r, exists, err := ResolvePath(given, p.Places.Workspace, p.Machine.Home)
			if err != nil || !exists {
				continue // BashProfile reports these
			}
			grants = append(grants, g{set.what, given, r})
			resolved = append(resolved, r)
		}
	}
	for _, gr := range grants {
		if w := CoveredSecretsWarning(gr.what+" "+fmt.Sprintf("%q", gr.given)+" =", gr.path, p.Machine.Home, p.Machine.BrigDirs, resolved); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// SensitiveMarkdown renders, for the README, the secrets masked inside
// every grant (home and system) and the workspace entries kept read-only,
// each with its reason (entries sharing a reason share a row).
func SensitiveMarkdown() string {
	var b strings.Builder
	table := func(head string, es []sensitive.Entry, prefix string) {
		fmt.Fprintf(&b, "| %s | why |\n| --- | --- |\n", head)
		var order []string
		byReason := map[string][]string{}
		for _, e := range es {
			if _, ok := byReason[e.Reason]; !ok {
				order = append(order, e.Reason)
			}
			byReason[e.Reason] = append(byReason[e.Reason], "`"+prefix+e.Path+"`")
		}
		for _, r := range order {
			fmt.Fprintf(&b, "| %s | %s |\n", strings.Join(byReason[r], ", "), r)
		}
	}
	var secrets []sensitive.Entry
	for _, e := range sensitive.Home() {
		if e.Kind == sensitive.Secret {
			e.Path = "~/" + e.Path
			secrets = append(secrets, e)
		}
	}
	for _, e := range sensitive.System() {
		if e.Kind == sensitive.Secret {
			e.Path = "/" + e.Path
			secrets = append(secrets, e)
		}
	}
	table("secret (masked inside any grant unless a grant names it)", secrets, "")
	b.WriteString("\n")
	table("in the workspace and every repository in it (read-only)", sensitive.Workspace(), "")
	return b.String()
}

// SecretMasks lists the secrets (and brig's own directories) strictly
// inside the given grants, for a Spec's Hidden: file tools use it for the
// paths they are granted, so that an approved search of ~ does not read
// ~/.ssh. A grant that is a secret itself, or lies in one, masks nothing
// of it (it was named individually).
func SecretMasks(paths []jail.PathRule, home string, brigDirs []string) []string {
	return secretMasks(paths, Profile{Home: home, BrigDirs: brigDirs})
}

// secretMasks is SecretMasks for p's home and brig directories (p.Secrets
// used when set).
func secretMasks(paths []jail.PathRule, p Profile) []string {
	for _, r := range paths {
		p.Read = append(p.Read, r.Path)
	}
	var out []string
	for _, m := range p.masks(paths, p.secrets()) {
		out = append(out, m.Path)
	}
	return out
}

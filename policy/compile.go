package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"

	"brig/internal/envguard"
	"brig/jail"
)

// Compile turns a verdict into the least-privilege jail.Spec for that one
// call (SPEC §3). File tools get exactly the paths they touch (a written
// file's directory, because an atomic replace creates a sibling and renames
// it); bash gets the workspace (read-only in plan mode), the system and
// toolchain roots, the [sandbox] grants and exactly the outside paths the
// verdict names. Protected paths are never granted for writing: they are
// passed to the jail as Protected whatever the grant. callTmp is the call's
// private TMPDIR when the machine has no mount namespaces.
//
// A Denied verdict does not compile: the caller must not run it.
func (p *Policy) Compile(v Verdict, callTmp string) (jail.Spec, error) {
	if v.Tier == Deny {
		return jail.Spec{}, fmt.Errorf("a denied call has no grant: %s", v.Reason)
	}
	switch v.Call.Effect {
	case EffectRead, EffectWrite:
		return p.fileSpec(v)
	case EffectExec:
		return p.bashSpec(v, callTmp)
	case EffectNetwork:
		return p.networkSpec(v)
	}
	return jail.Spec{}, fmt.Errorf("a %q call does not run in a jail", v.Call.Effect)
}

// BashProfile is the grant every bash call of this workspace starts from:
// the mode's jail profile, the user's [sandbox] grants and the directories
// added for this run (--add-dir). `brig sandbox` runs with it too, so what
// `policy check` shows is what the jail does. The [sandbox] paths are
// resolved against the workspace; a protected or secret one is refused
// with an error naming it.
func (p *Policy) BashProfile(readOnly bool, callTmp string) (Profile, error) {
	return p.bashProfile(readOnly, callTmp, p.Machine.namespaces())
}

// bashProfile is BashProfile for calls that get namespaces (ns) or not:
// what it refuses does not depend on ns, so New checks the [sandbox]
// grants without waiting for the supervisor's probe.
func (p *Policy) bashProfile(readOnly bool, callTmp string, ns bool) (Profile, error) {
	m := p.Machine
	prof := Profile{
		Workspace: p.Places.Workspace, Dir: p.Places.Workspace, ReadOnly: readOnly,
		// Every bash call has the egress proxy; each host it reaches is
		// decided when it connects (DecideNet).
		Network: true, GoDownloads: p.GoDownloads(), UnixSockets: p.Sandbox.UnixSockets,
		Home: m.Home, ParentEnv: m.Env, EnvAllow: p.Sandbox.Env, Limits: m.Limits,
		Namespaces: ns, CacheRoot: m.CacheRoot, GoLayer: m.GoLayer, BrigCache: m.BrigCache, CallTmp: callTmp, BrigDirs: m.BrigDirs,
		Secrets: p.secrets, Repos: p.repos, Denied: p.DeniedReads(),
	}
	for _, d := range p.ExtraDirs() {
		if d.ReadOnly {
			prof.Read = append(prof.Read, d.Path)
		} else {
			prof.Write = append(prof.Write, d.Path)
		}
	}
	// The write grants first: a link in one of them (or in the workspace)
	// is a call's to plant, so no [sandbox] path may be reached through it.
	for _, g := range []struct {
		paths []string
		write bool
		into  *[]string
	}{{p.Sandbox.Write, true, &prof.Write}, {p.Sandbox.Read, false, &prof.Read}} {
		for _, given := range g.paths {
			r, exists, planted, err := ResolveGrantPath(given, p.Places.Workspace, m.Home, prof.writable())
			if err != nil {
				return Profile{}, p.placed(given, fmt.Errorf("[sandbox] path %q: %w", given, err))
			}
			if !exists {
				return Profile{}, p.placed(given, fmt.Errorf("[sandbox] path %q (%s) does not exist; create it or remove it from the config", given, r))
			}
			if planted != "" && !prof.callWritable(r) {
				return Profile{}, p.placed(given, PlantedLinkError("[sandbox] path", given, planted, r))
			}
			c := p.Places.Classify(r)
			if c == ClassSecret || p.brigOwn(r) || (g.write && c == ClassProtected) {
				return Profile{}, p.placed(given, fmt.Errorf("[sandbox] path %q (%s) is %s and is never granted; remove it from the config", given, r, c))
			}
			if c == ClassWorkspace || c == ClassProtected || planted != "" {
				continue // the workspace's own rule covers it (and keeps it read-only where protected)
			}
			*g.into = append(*g.into, r)
		}
	}
	return prof, nil
}

// placedError is a config error that already names its file and line.
type placedError struct{ error }

func (e placedError) Unwrap() error { return e.error }

// placed prefixes err, about the [sandbox] path given, with the FILE:LINE
// of the config in force that grants it (every other config mistake names
// its line), when one is found. Only errors read the files again.
func (p *Policy) placed(given string, err error) error {
	for _, l := range p.Layers {
		if !l.Exists || !l.Trusted {
			continue
		}
		data, rerr := os.ReadFile(l.File)
		if rerr != nil {
			continue
		}
		if n := ruleLine(data, given, map[int]bool{}); n > 0 {
			return placedError{fmt.Errorf("%s:%d: %w", l.File, n, err)}
		}
	}
	return err
}

// BashCache compiles the grant of a plain bash call in the current mode, as
// the session's first call will, and returns its toolchain cache (nil:
// none), for the supervisor to prepare ahead of that call. The compile
// also fills what later compiles reuse (the workspace's repositories).
func (p *Policy) BashCache() (*jail.Cache, error) {
	prof, err := p.BashProfile(p.Mode() == ModePlan, "")
	if err != nil {
		return nil, err
	}
	prof.ReadOnlyCache = p.Mode() == ModePlan
	spec, err := prof.Spec()
	if err != nil {
		return nil, err
	}
	return spec.Cache, nil
}

// bashSpec compiles a bash call.
func (p *Policy) bashSpec(v Verdict, callTmp string) (jail.Spec, error) {
	prof, err := p.BashProfile(v.Mode == ModePlan || v.ReadsOnly, callTmp)
	if err != nil {
		return jail.Spec{}, err
	}
	// Plan mode's calls (and so a subagent's) build with a cache of their
	// own; a reading line of another mode (ls, git log) uses the mode's,
	// whose calls may write it anyway (and the session's first call would
	// otherwise make a second cache on its clock).
	prof.ReadOnlyCache = v.Mode == ModePlan
	if v.ReadsOnly {
		// Every command of the line only reads (ls, cat, grep, git log
		// …): it gets nothing of the user's to write — the workspace and
		// the added directories are read-only, its /tmp is its own — so
		// the kernel holds it to what the analysis found, and the agent
		// takes no undo snapshot of a call that can change nothing.
		prof.Read, prof.Write = append(prof.Read, prof.Write...), nil
	}
	if v.Call.Dir != "" {
		dir, exists, err := p.resolveCallPath(v.Call.Dir, p.Places.Workspace)
		if err != nil || !exists {
			return jail.Spec{}, fmt.Errorf("working directory %q does not exist", v.Call.Dir)
		}
		prof.Dir = dir
	}
	for _, pv := range v.Paths {
		if pv.Tier == Deny {
			return jail.Spec{}, fmt.Errorf("path %s is denied: %s", pv.Given, pv.Reason)
		}
		switch pv.Class {
		case ClassWorkspace, ClassProtected, ClassTemp:
			continue // the workspace grant (and its protection), or the private /tmp, covers it
		case ClassSystem:
			if !pv.Write {
				continue
			}
		case ClassAdded:
			if d, _ := p.extraFor(pv.Resolved); !pv.Write || !d.ReadOnly {
				continue // the added directory's grant covers it
			}
		}
		if pv.Write {
			dir, err := writeRoot(pv, p.Places.Workspace)
			if err != nil {
				return jail.Spec{}, err
			}
			prof.Write = append(prof.Write, dir)
		} else if pv.Exists {
			prof.Read = append(prof.Read, pv.Resolved)
		}
	}
	prof.Read, prof.Write = compact(prof.Read), compact(prof.Write)
	if !within(prof.Dir, prof.Workspace) && !slices.ContainsFunc(append(prof.Read, prof.Write...), func(g string) bool { return within(prof.Dir, g) }) {
		return jail.Spec{}, fmt.Errorf("working directory %s is outside the workspace and not granted", prof.Dir)
	}
	return prof.Spec()
}

// fileSpec compiles a file tool's call: read on each file it reads, write on
// the directory of each file it writes, nothing else.
func (p *Policy) fileSpec(v Verdict) (jail.Spec, error) {
	var paths []jail.PathRule
	var writes []string
	for _, pv := range v.Paths {
		if pv.Tier == Deny {
			return jail.Spec{}, fmt.Errorf("path %s is denied: %s", pv.Given, pv.Reason)
		}
		if pv.Write {
			dir := filepath.Dir(pv.Resolved)
			if within(dir, p.Places.Workspace) {
				dir = existingAncestor(dir) // new directories inside the workspace
			} else if _, err := os.Stat(dir); err != nil {
				return jail.Spec{}, fmt.Errorf("cannot grant writing %s: its directory %s does not exist outside the workspace; create it first", pv.Given, dir)
			}
			writes = append(writes, dir)
			paths = append(paths, jail.PathRule{Path: dir, Access: jail.Write, Exact: true})
			continue
		}
		paths = append(paths, jail.PathRule{Path: pv.Resolved, Access: jail.Read, Optional: true, Exact: true})
	}
	if v.Call.Programs {
		for _, d := range []string{"/usr", "/bin", "/lib", "/lib64"} {
			paths = append(paths, jail.PathRule{Path: d, Access: jail.Exec, Optional: true})
		}
	}
	protected, err := p.protectedUnder(writes)
	if err != nil {
		return jail.Spec{}, err
	}
	spec := jail.Spec{
		Workspace: p.Places.Workspace,
		Dir:       p.Places.Workspace,
		Paths:     paths,
		Protected: protected,
		Hidden:    secretMasks(paths, Profile{Home: p.Machine.Home, BrigDirs: p.Machine.BrigDirs, Secrets: p.secrets, Denied: p.DeniedReads()}),
		Env:       envguard.Build(p.Machine.Env, nil, []string{"LC_ALL=C.UTF-8"}),
		Limits:    p.Machine.Limits,
	}
	return spec, spec.Validate()
}

// networkSpec compiles a web fetch: the egress proxy (names are resolved
// there) and the TLS roots, no other filesystem rights.
func (p *Policy) networkSpec(v Verdict) (jail.Spec, error) {
	var paths []jail.PathRule
	for _, f := range []string{"/etc/ssl/certs", "/etc/ca-certificates", "/usr/share/ca-certificates", "/etc/pki"} {
		paths = append(paths, jail.PathRule{Path: f, Access: jail.Read, Optional: true})
	}
	spec := jail.Spec{
		Workspace: p.Places.Workspace,
		Dir:       "/",
		Paths:     paths,
		Network:   true,
		Env:       envguard.Build(p.Machine.Env, nil, nil),
		Limits:    p.Machine.Limits,
	}
	return spec, spec.Validate()
}

// protectedUnder lists the protected paths that lie under any of the
// written directories (and brig's own directories), for the jail to keep
// read-only.
func (p *Policy) protectedUnder(writes []string) ([]string, error) {
	if len(writes) == 0 {
		return nil, nil
	}
	var out []string
	for _, q := range p.Places.protectedList() {
		if slices.ContainsFunc(writes, func(w string) bool { return within(q, w) || within(w, q) }) {
			out = append(out, q)
		}
	}
	for _, w := range writes {
		if !within(w, p.Places.Workspace) {
			more, err := jail.ProtectedPaths(w)
			if err != nil {
				return nil, fmt.Errorf("find protected paths under %s: %w", w, err)
			}
			out = append(out, more...)
		}
	}
	return compact(out), nil
}

// writeRoot is what a bash call needs rights on to write pv: the path when
// it exists, else its directory. Outside the workspace the directory must
// exist: granting the nearest existing ancestor instead could hand out a
// whole tree (or /) for one file.
func writeRoot(pv PathVerdict, workspace string) (string, error) {
	if pv.Exists {
		return pv.Resolved, nil
	}
	dir := filepath.Dir(pv.Resolved)
	if within(dir, workspace) {
		return existingAncestor(dir), nil
	}
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("cannot grant writing %s: its directory %s does not exist outside the workspace; create it first", pv.Given, dir)
	}
	return dir, nil
}

// existingAncestor is p itself when it exists, else its nearest existing
// ancestor: what the kernel needs rights on to create p.
func existingAncestor(p string) string {
	for {
		if _, err := os.Lstat(p); err == nil || !errors.Is(err, os.ErrNotExist) || p == "/" {
			return p
		}
		p = filepath.Dir(p)
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func compact(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

// Union is one grant for calls run together in one jail child (the
// read-only calls of one answer: see the agent's batch): the union of their
// paths, protected paths and hidden paths, when every other part of their
// grants is the same and none writes, has network or a toolchain cache; ok
// is false otherwise (run them apart). Each call was allowed on its own, and the
// tools that run under the union are brig's own, each reading what its
// arguments name: together, each may read what the others may.
func Union(specs []jail.Spec) (u jail.Spec, ok bool) {
	if len(specs) == 0 {
		return jail.Spec{}, false
	}
	rest := func(s jail.Spec) jail.Spec {
		// Repos is the grants' search memory, not a grant: never compared
		// (a cache is not a value), the first's kept.
		s.Paths, s.Protected, s.Hidden, s.Repos = nil, nil, nil, nil
		return s
	}
	first := rest(specs[0])
	if first.Network || first.Cache != nil {
		return jail.Spec{}, false
	}
	u = first
	u.Repos = specs[0].Repos
	seenRule, seenProt, seenHid := map[jail.PathRule]bool{}, map[string]bool{}, map[string]bool{}
	for _, s := range specs {
		if !reflect.DeepEqual(rest(s), first) {
			return jail.Spec{}, false
		}
		for _, r := range s.Paths {
			if r.Access == jail.Write {
				return jail.Spec{}, false // a read-only call's grant never writes; this one would lend it
			}
			if !seenRule[r] {
				seenRule[r] = true
				u.Paths = append(u.Paths, r)
			}
		}
		for _, p := range s.Protected {
			if !seenProt[p] {
				seenProt[p] = true
				u.Protected = append(u.Protected, p)
			}
		}
		for _, p := range s.Hidden {
			if !seenHid[p] {
				seenHid[p] = true
				u.Hidden = append(u.Hidden, p)
			}
		}
	}
	return u, u.Validate() == nil
}

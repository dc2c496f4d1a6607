package mcp

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"brig/jail"
	"brig/policy"
)

// StdioSpec compiles a stdio server's own jail from its configuration: the
// system and toolchain roots bash gets, the workspace read-only unless the
// server's write grants name it, exactly the extra read and write paths it
// configures, network only when configured, no limit on its lifetime, and
// an environment of the jail's allowlist plus the variables configured for
// this server (nothing else of brig's: no API key crosses). Paths are
// relative to the workspace; a secret, one of brig's own directories, or a
// protected path to write is refused with an error naming it. tmp is the
// server's private TMPDIR where there is no mount namespace.
func StdioSpec(s Server, pol *policy.Policy, tmp string) (jail.Spec, error) {
	if s.Transport != Stdio {
		return jail.Spec{}, fmt.Errorf("MCP server %s is not a stdio server", s.Name)
	}
	pl, m := pol.Places, pol.Machine
	lim := m.Limits
	lim.Timeout = 0 // long-lived: it dies with brig, not on a clock
	prof := policy.Profile{
		Workspace: pl.Workspace, Dir: pl.Workspace, ReadOnly: true, Network: s.Network,
		Home: m.Home, ParentEnv: m.Env, Limits: lim, Namespaces: pol.Namespaces(),
		CacheRoot: m.CacheRoot, GoLayer: m.GoLayer, BrigCache: m.BrigCache, CallTmp: tmp, BrigDirs: m.BrigDirs,
		// The policy's memory holds the programs the servers run from the
		// workspace (ProtectPrograms): read-only in every server's jail
		// too, or one server with write = ["."] rewrote another's, which
		// ran with that one's token and network at its next start (red
		// team, 2026-12-03).
		Repos: pol.Repos(),
	}
	resolve := func(given string, write bool) (string, error) {
		// Calls write the workspace and the directories added for this
		// run; the server's own write grants come first (see below).
		writable := append([]string{pl.Workspace}, prof.Write...)
		for _, d := range pol.ExtraDirs() {
			if !d.ReadOnly {
				writable = append(writable, d.Path)
			}
		}
		r, exists, planted, err := policy.ResolveGrantPath(given, pl.Workspace, m.Home, writable)
		if err != nil {
			return "", fmt.Errorf("MCP server %s: path %q: %w", s.Name, given, err)
		}
		if !exists {
			return "", fmt.Errorf("MCP server %s: path %q (%s) does not exist; create it or remove it from the server's config", s.Name, given, r)
		}
		if planted != "" && !slices.ContainsFunc(writable, func(w string) bool { return within(r, w) }) {
			return "", policy.PlantedLinkError("MCP server "+s.Name+": path", given, planted, r)
		}
		c := pl.Classify(r)
		if c == policy.ClassSecret || slices.ContainsFunc(pl.BrigDirs, func(d string) bool { return within(r, d) }) || (write && c == policy.ClassProtected) {
			return "", fmt.Errorf("MCP server %s: path %q (%s) is %s and is never granted to a server; remove it from the config", s.Name, given, r, c)
		}
		return r, nil
	}
	for _, w := range s.Write {
		r, err := resolve(w, true)
		if err != nil {
			return jail.Spec{}, err
		}
		if r == pl.Workspace {
			prof.ReadOnly = false
			continue
		}
		prof.Write = append(prof.Write, r)
	}
	for _, given := range s.Read {
		r, err := resolve(given, false)
		if err != nil {
			return jail.Spec{}, err
		}
		if !within(r, pl.Workspace) {
			prof.Read = append(prof.Read, r)
		}
	}
	if s.Dir != "" {
		d, err := resolve(s.Dir, false)
		if err != nil {
			return jail.Spec{}, err
		}
		granted := within(d, pl.Workspace) || slices.ContainsFunc(append(slices.Clone(prof.Read), prof.Write...), func(g string) bool { return within(d, g) })
		if !granted {
			return jail.Spec{}, fmt.Errorf("MCP server %s: cwd %s is outside the workspace and not in its read or write grants", s.Name, d)
		}
		prof.Dir = d
	}
	spec, err := prof.Spec()
	if err != nil {
		return jail.Spec{}, fmt.Errorf("MCP server %s: %w", s.Name, err)
	}
	spec.Env = withEnv(spec.Env, s.Env)
	return spec, spec.Validate()
}

// withEnv sets the server's configured variables over the jail's base
// environment. They are the user's explicit choice for this server, so the
// credential filter that guards the allowlist does not apply to them.
func withEnv(base []string, add map[string]string) []string {
	out := slices.DeleteFunc(slices.Clone(base), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		_, overridden := add[name]
		return overridden
	})
	keys := make([]string, 0, len(add))
	for k := range add {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		out = append(out, k+"="+add[k])
	}
	return out
}

func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// Programs are the paths in workspace that the stdio servers of cfg run:
// what their command or arguments name there (relative to the server's
// cwd; an option's value too, --require=./loader.js): a file as its
// directory when that is not the workspace's root (a server's other
// files sit beside it: ./mcp/index.js and ./mcp/lib/…), else the file; a
// directory (node server) whole; a module python -m imports (its top
// package, as a directory, pkg.py and pkg.pyc); and a symbolic link on
// the way as itself, so that it cannot be pointed elsewhere. A call that
// could write them would choose what the server runs, with the server's
// environment and grants, at its next start; the caller protects them
// (policy.ProtectPrograms).
func Programs(cfg Config, workspace string) []string {
	var out []string
	add := func(p string) {
		if p != workspace && within(p, workspace) {
			out = append(out, p)
		}
	}
	for _, s := range cfg.Servers {
		if s.Transport != Stdio {
			continue
		}
		dir := workspace
		if s.Dir != "" {
			dir = s.Dir
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(workspace, dir)
			}
		}
		words := append([]string{s.Command}, s.Args...)
		for i, w := range words {
			if i > 0 && words[i-1] == "-m" && !strings.HasPrefix(w, "-") {
				// python -m pkg.mod: Python imports pkg from the server's
				// cwd, as a directory or as pkg.py, pkg.pyc (a file that
				// does not exist yet included: a namespace package gives
				// way to a pkg.py made beside it; red team, 2026-12-03).
				first, _, _ := strings.Cut(w, ".")
				if first != "" && !strings.ContainsRune(first, '/') {
					for _, name := range []string{first, first + ".py", first + ".pyc"} {
						add(filepath.Join(dir, name))
					}
				}
				continue
			}
			if _, v, ok := strings.Cut(w, "="); ok && strings.HasPrefix(w, "-") {
				w = v // --require=./loader.js
			}
			if w == "" || strings.HasPrefix(w, "-") || i == 0 && !strings.ContainsRune(w, '/') {
				continue // an option, or a command found on PATH
			}
			p := w
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			// Each link on the way inside the workspace is protected as
			// the link it is: re-pointed, it would name other code.
			for q := p; within(q, workspace) && q != workspace; q = filepath.Dir(q) {
				if fi, err := os.Lstat(q); err == nil && fi.Mode()&os.ModeSymlink != 0 {
					add(q)
				}
			}
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				continue
			}
			fi, err := os.Stat(real)
			switch {
			case err != nil:
			case fi.IsDir():
				add(real)
			case fi.Mode().IsRegular():
				if d := filepath.Dir(real); d != workspace {
					add(d)
				} else {
					add(real)
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

package policy

// This file keeps two questions apart, as Codex keeps its sandbox policy
// apart from its approval policy: what runs without asking (the Mode) and
// what the jail may allow (the mode's JailProfile). A mode decides only
// whether a call that fits its profile needs a question; nothing a mode
// does, and no flag like --yes, widens the jail beyond the profile. A grant
// beyond it — a path outside the workspace, a network host — comes only
// from a human's answer, a rule in the user's own files, or a flag that
// names it (--add-dir).

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	sens "brig/internal/sensitive"
	"brig/jail"
)

// JailProfile is what a mode's calls may be granted without anyone
// naming more: the default jail of the mode.
type JailProfile string

// The profiles.
const (
	// ProfileReadOnly reads the workspace, the system and the toolchains.
	ProfileReadOnly JailProfile = "read-only"
	// ProfileWorkspaceWrite is ProfileReadOnly plus writing the workspace
	// and a private temporary directory.
	ProfileWorkspaceWrite JailProfile = "workspace-write"
)

// ProfileOf is mode m's default jail profile.
func ProfileOf(m Mode) JailProfile {
	if m == ModePlan {
		return ProfileReadOnly
	}
	return ProfileWorkspaceWrite
}

// Describe says in words what the profile grants.
func (jp JailProfile) Describe() string {
	if jp == ProfileReadOnly {
		return "read the workspace, the system and the toolchains; no writes; network only through brig's proxy, to hosts your rules or answers allow"
	}
	return "read the workspace, the system and the toolchains; write the workspace and a private temporary directory; network only through brig's proxy, to hosts your rules or answers allow"
}

// Approves says in words what runs in mode m without asking.
func Approves(m Mode) string {
	switch m {
	case ModePlan:
		return "reads and the allow lists; nothing that writes"
	case ModeEdit:
		return "reads, the allow lists, and file edits inside the workspace"
	case ModeAuto:
		return "every call whose grant fits the profile, except deletions"
	}
	return "reads and the allow lists; everything else asks"
}

// The path classes this file adds to those of Classify.
const (
	// ClassLaterExec is a file that a program outside the jail later runs
	// or obeys (a shell startup file, a systemd unit, a directory on
	// PATH): never written unless a rule of the user's names it.
	ClassLaterExec PathClass = "later-exec"
	// ClassAdded is outside the workspace but inside a directory the user
	// added to the profile for this run (--add-dir).
	ClassAdded PathClass = "added"
)

// ExtraDir is a directory the user added to the jail profile for this run
// (--add-dir PATH, or PATH:ro for reading only).
type ExtraDir struct {
	Path     string `json:"path"`
	ReadOnly bool   `json:"read_only,omitempty"`
	// links are the symbolic links ParseAddDir followed to reach Path
	// (checkExtra refuses one in the workspace: the repository's choice).
	links []string
}

func (d ExtraDir) String() string {
	if d.ReadOnly {
		return d.Path + ":ro"
	}
	return d.Path
}

// ParseAddDir reads an --add-dir value: PATH, or PATH:ro for reading only
// (PATH:rw is also accepted). Relative paths are relative to cwd; the path
// is resolved and must exist.
func ParseAddDir(value, cwd, home string) (ExtraDir, error) {
	path, ro := value, false
	if p, ok := strings.CutSuffix(value, ":ro"); ok {
		path, ro = p, true
	} else if p, ok := strings.CutSuffix(value, ":rw"); ok {
		path = p
	}
	if path == "" {
		return ExtraDir{}, fmt.Errorf("--add-dir %q: no path (write --add-dir PATH, or PATH:ro to read only)", value)
	}
	var links []string
	resolved, exists, err := resolvePath(path, cwd, home, false, func(link string) { links = append(links, link) })
	if err != nil {
		return ExtraDir{}, fmt.Errorf("--add-dir %s: %w", value, err)
	}
	if !exists {
		// PATH:RO, PATH: — a suffix brig does not read, on a path that
		// exists without it (new user: told the path did not exist).
		if i := strings.LastIndexByte(value, ':'); i > 0 {
			if r, ok, err := resolvePath(value[:i], cwd, home, false, nil); err == nil && ok && r != "" {
				return ExtraDir{}, fmt.Errorf("--add-dir %s: unknown suffix %q; write %s:ro to read only, or %s alone to read and write", value, value[i:], value[:i], value[:i])
			}
		}
		return ExtraDir{}, fmt.Errorf("--add-dir %s: %s does not exist (create it first)", value, resolved)
	}
	if fi, err := os.Stat(resolved); err == nil && !fi.IsDir() {
		return ExtraDir{}, fmt.Errorf("--add-dir %s: %s is not a directory; add the directory that holds it", value, resolved)
	}
	return ExtraDir{Path: resolved, ReadOnly: ro, links: links}, nil
}

// ThroughWorkspaceLink refuses a path given with flag that reached d
// through a symbolic link in the workspace: the repository or a call chose
// where it leads (vendor-cache -> ~/.ssh). Naming the target is the way.
func (d ExtraDir) ThroughWorkspaceLink(flag, workspace string) error {
	for _, l := range d.links {
		if within(l, workspace) {
			target, _ := os.Readlink(l)
			return fmt.Errorf("%s %s: the path you gave leads there through the symbolic link %s -> %s in the workspace, which the repository or a call chose; if you mean that directory, name it: %s %s", flag, d, l, target, flag, d)
		}
	}
	return nil
}

// AddDirs adds directories to the jail profile of this run: paths under a
// read-write one are treated like the workspace, paths under a read-only
// one are readable, and every bash call gets them. A directory that is, or
// holds, a credential or brig's own files, or (read-write) a file that runs
// later outside the jail, is refused with the rule to write instead; so is
// one inside the workspace, which calls reach already.
func (p *Policy) AddDirs(dirs ...ExtraDir) error {
	for _, d := range dirs {
		if err := p.checkExtra(d); err != nil {
			return err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.extra = append(p.extra, dirs...)
	return nil
}

// ExtraDirs are the directories added with AddDirs.
func (p *Policy) ExtraDirs() []ExtraDir {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.extra)
}

func (p *Policy) checkExtra(d ExtraDir) error {
	home := p.Places.Home
	switch {
	case !filepath.IsAbs(d.Path):
		return fmt.Errorf("--add-dir %s: not an absolute, resolved path", d)
	case d.Path == "/":
		return errors.New("--add-dir /: that is the whole machine; add the directory the task needs")
	case within(d.Path, p.Places.Workspace):
		return fmt.Errorf("--add-dir %s: it is inside the workspace %s, which every call reaches already", d, p.Places.Workspace)
	case home != "" && within(home, d.Path):
		return fmt.Errorf("--add-dir %s: it holds your home directory %s, with your keys and shell startup files; add the directory the task needs", d, home)
	}
	if c := p.Machine.BrigCache; !d.ReadOnly && c != "" && within(d.Path, c) {
		return fmt.Errorf("--add-dir %s: it lies in brig's cache %s (the Go layer and every workspace's toolchain caches, which other workspaces' builds link), which no call writes but its own workspace's cache; add it read-only (%s:ro)", d, c, d.Path)
	}
	if err := d.ThroughWorkspaceLink("--add-dir", p.Places.Workspace); err != nil {
		return err
	}
	use := "a rule such as Read(" + d.Path + "/**) in your own config"
	if !d.ReadOnly {
		use = "a rule such as Write(" + d.Path + "/**) in your own config"
	}
	// The entry named is one that exists when there is one: a new user's
	// --add-dir ~/.config was refused naming ~/.config/gcloud, which
	// that machine did not have.
	var absent string
	for _, s := range append(p.secretPaths(), p.Places.BrigDirs...) {
		if !within(s, d.Path) && !within(d.Path, s) {
			continue
		}
		if d.ReadOnly && within(s, d.Path) && (p.Places.Classify(d.Path) == ClassSystem || p.readByDefault(d.Path)) {
			// --add-dir /etc:ro: refused for /etc/shadow, with advice
			// that led nowhere (new user); it is readable already.
			return fmt.Errorf("--add-dir %s: every call reads %s already (the system's files and toolchains; the secrets in it, such as %s, stay hidden): leave the flag out", d, d.Path, s)
		}
		if _, err := os.Lstat(s); err != nil {
			absent = cmp.Or(absent, s)
			continue
		}
		return fmt.Errorf("--add-dir %s: %s holds credentials or brig's own files and is never granted by a flag; add the directory the task needs, or if a call must reach it, name the exact path in %s", d, s, use)
	}
	if absent != "" {
		return fmt.Errorf("--add-dir %s: it would include %s, where credentials are kept (not there now, but a login would put them there during the session), so it is never granted by a flag; add the directory the task needs, or name the exact path in %s", d, absent, use)
	}
	if d.ReadOnly {
		return nil
	}
	for _, l := range p.laterExecPaths() {
		if within(l.path, d.Path) || within(d.Path, l.path) {
			return fmt.Errorf("--add-dir %s: %s (%s) runs later outside the jail and is never made writable by a flag; add it read-only (%s:ro), or name the exact path in %s", d, l.path, l.reason, d.Path, use)
		}
	}
	return nil
}

// secretPaths are the absolute credential entries of the sensitive list.
func (p *Policy) secretPaths() []string {
	return sens.Abs(p.Places.Home, sens.Secret)
}

// laterExec is one place a program outside the jail runs or obeys later.
type laterExec struct {
	path, reason string
}

// laterExecPaths are the later-executed entries of the sensitive list and
// the directories on the user's PATH (a program planted there shadows a
// real one). A PATH entry that is or holds the workspace is left out (the
// workspace would be unwritable), as are relative entries.
func (p *Policy) laterExecPaths() []laterExec { return p.later }

// laterExecList is the sensitive list's later-executed entries (absolute,
// with their reasons) followed by the PATH directories.
func laterExecList(home string, path []laterExec) []laterExec {
	var out []laterExec
	if home != "" {
		for _, e := range sens.Home() {
			if e.Kind == sens.LaterExec {
				out = append(out, laterExec{filepath.Join(home, e.Path), e.Reason})
			}
		}
	}
	for _, e := range sens.System() {
		if e.Kind == sens.LaterExec {
			out = append(out, laterExec{"/" + e.Path, e.Reason})
		}
	}
	return append(out, path...)
}

// pathDirs lists the directories on PATH (resolved) as later-executed
// places, except relative entries, / and those that are or hold the
// workspace.
func pathDirs(env []string, workspace string) []laterExec {
	var out []laterExec
	for _, d := range filepath.SplitList(envValue(env, "PATH")) {
		if !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		if real, err := filepath.EvalSymlinks(d); err == nil {
			d = real
		}
		if d == "/" || within(workspace, d) || slices.ContainsFunc(out, func(l laterExec) bool { return l.path == d }) {
			continue
		}
		out = append(out, laterExec{d, "a directory on your PATH: a program planted there runs instead of the real one"})
	}
	return out
}

// laterExecEntry finds the later-executed place that covers path, if
// writing it would plant something that runs outside the jail. An entry
// that holds the workspace itself (the user works on ~/.config/nvim) does
// not count: the workspace's own files are protected by their shape.
func (p *Policy) laterExecEntry(path string) (laterExec, bool) {
	for _, l := range p.laterExecPaths() {
		if within(path, l.path) && !within(p.Places.Workspace, l.path) {
			return l, true
		}
	}
	return laterExec{}, false
}

// secretEntry is the credential place that covers path: the sensitive
// entry, or, for what Classify calls secret without one (brig's own
// directories, say), the highest ancestor still classified secret.
func (p *Policy) secretEntry(path string) string {
	if e, ok := sens.Match(path, p.Places.Home, sens.Secret); ok {
		if h := p.Places.Home; h != "" && within(path, filepath.Join(h, e.Path)) {
			return filepath.Join(h, e.Path)
		}
		return "/" + e.Path
	}
	top := path
	for d := filepath.Dir(path); d != "/" && p.Places.Classify(d) == ClassSecret; d = filepath.Dir(d) {
		top = d
	}
	return top
}

// inHome reports whether path lies in the user's home directory.
func (p *Policy) inHome(path string) bool {
	return p.Places.Home != "" && within(path, p.Places.Home)
}

// inExtra reports whether an added directory covers path.
func (p *Policy) inExtra(path string) bool {
	_, ok := p.extraFor(path)
	return ok
}

// extraFor is the added directory that covers path, if any (read-write
// ones first).
func (p *Policy) extraFor(path string) (ExtraDir, bool) {
	var found *ExtraDir
	for _, d := range p.ExtraDirs() {
		if within(path, d.Path) && (found == nil || found.ReadOnly && !d.ReadOnly) {
			found = &d
		}
	}
	if found == nil {
		return ExtraDir{}, false
	}
	return *found, true
}

// classify places a resolved path for a call: Classify, then the private
// /tmp of a bash call, a directory added with --add-dir, and (for a write)
// a place that runs later outside the jail. entry is the sensitive entry
// or PATH directory that decided a secret or later-executed class.
func (p *Policy) classify(resolved string, write, bash bool) (c PathClass, entry, why string) {
	c = p.Places.Classify(resolved)
	if c == ClassOutside && p.Machine.namespaces() {
		switch {
		case bash && (within(resolved, "/tmp") || within(resolved, "/dev/shm")) && !p.inExtra(resolved) && !p.inHome(resolved):
			// A bash call gets a fresh /tmp: what it writes there is its
			// own, and the host's files there are not visible unless
			// granted. A directory added with --add-dir is the host's,
			// carried in as added (read-only when so added): a new
			// user's --yes approved a write into /tmp/x:ro as "the
			// call's private temporary directory". A home directory
			// under /tmp is the user's too: ~/.bashrc there is judged
			// as ~/.bashrc, as write_file judges it.
			c = ClassTemp
		case within(resolved, "/proc"):
			// A call's /proc, a file tool's as a command's, is a fresh
			// procfs of its own PID namespace, which every bash grant
			// lets it read (never write), like the system's files. (Not
			// resolved here, where /proc is the host's: see
			// resolveCallPath; a file tool is refused its own
			// /proc/self, see ownProc.)
			c = ClassSystem
		}
	}
	if c == ClassSecret {
		e := p.secretEntry(resolved)
		if se, ok := sens.Match(resolved, p.Places.Home, sens.Secret); ok {
			why = se.Reason
		}
		return c, e, why
	}
	if write && c != ClassProtected && c != ClassTemp {
		if l, ok := p.laterExecEntry(resolved); ok {
			return ClassLaterExec, l.path, l.reason
		}
	}
	if c == ClassOutside && !write && p.readByDefault(resolved) {
		// Toolchains, PATH and the module cache: the default grant reads
		// them for every bash call (the file tools get the path itself),
		// so naming one asks no more than the system's files do.
		c = ClassSystem
	}
	if c == ClassOutside || c == ClassSystem {
		if _, ok := p.extraFor(resolved); ok {
			c = ClassAdded
		}
	}
	return c, "", ""
}

// readByDefault reports whether resolved lies in what the default grant
// of a bash call reads on this machine (DefaultGrant resolved here: the
// toolchains under your home, the directories on PATH, the Go module
// cache), beyond the system roots Classify knows. Its secrets were
// classified before this is asked.
func (p *Policy) readByDefault(resolved string) bool {
	prof, err := p.BashProfile(true, "")
	if err != nil {
		return false
	}
	defaults, _ := prof.defaults(prof.secrets())
	for _, e := range defaults {
		if within(resolved, e.Path) {
			return true
		}
		if r, err := filepath.EvalSymlinks(e.Path); err == nil && within(resolved, r) {
			return true
		}
	}
	return false
}

// inProfile reports whether touching pv fits the mode's jail profile (plus
// the directories added for this run): what a mode may approve without a
// human.
func (p *Policy) inProfile(pv PathVerdict, mode Mode) bool {
	switch pv.Class {
	case ClassWorkspace, ClassTemp:
		return !pv.Write || ProfileOf(mode) == ProfileWorkspaceWrite
	case ClassProtected:
		return !pv.Write
	case ClassSystem:
		return !pv.Write
	case ClassAdded:
		d, _ := p.extraFor(pv.Resolved)
		return !pv.Write || !d.ReadOnly && ProfileOf(mode) == ProfileWorkspaceWrite
	}
	return false
}

// Beyond is one part of a call's grant that lies beyond the mode's jail
// profile, and how the user can allow it. No mode and no --yes approves
// it: only a human's answer, a rule of the user's, or a flag naming it.
type Beyond struct {
	// What is the part in words: "reads /x/y outside the workspace".
	What string `json:"what"`
	// Rule is the rule that would allow it; Flag the -p flag that would
	// ("" when there is none, as for a host).
	Rule string `json:"rule"`
	Flag string `json:"flag,omitempty"`
	// Config is the user's own config file the rule would go in, as the
	// user writes it (~ for the home directory); "" for the default.
	Config string `json:"config,omitempty"`
}

// Hint says how the user can allow it.
func (b Beyond) Hint() string {
	ways := []string{"answer yes in the interactive UI (brig)"}
	if b.Flag != "" {
		ways = append(ways, "run brig -p with "+b.Flag)
	}
	if b.Rule != "" {
		ways = append(ways, "add "+b.Rule+" to the allow rules of "+cmp.Or(b.Config, "~/.config/brig/config.toml"))
	}
	return strings.Join(ways, ", or ")
}

func (b Beyond) String() string { return b.What + " (to allow it: " + b.Hint() + ")" }

// beyondPath describes a path verdict that lies beyond the profile. It
// offers --add-dir only where brig -p would take that flag: never for a
// directory that holds the home directory, credentials or brig's own
// files (checkExtra refuses those; the rule names the exact path instead).
func (p *Policy) beyondPath(pv PathVerdict) Beyond {
	pl := p.Places
	verb, flag := "reads", ""
	if pv.Write {
		verb = "writes"
	}
	where := "outside the workspace"
	switch pv.Class {
	case ClassSystem:
		where = "a system path"
	case ClassWorkspace, ClassTemp:
		where = "inside the workspace, in a read-only mode"
	case ClassAdded:
		where = "in a directory added read-only"
	case ClassSecret:
		where = "a credential path"
	case ClassLaterExec:
		where = "a file that runs later outside the jail"
	}
	dir := pv.Resolved
	if !pv.Exists || !isDir(pv.Resolved) {
		dir = filepath.Dir(pv.Resolved)
	}
	// --add-dir takes a directory that exists (a new user was offered
	// --add-dir /nonexistent:ro, which brig -p then refused).
	if (pv.Class == ClassOutside || pv.Class == ClassAdded || pv.Class == ClassSystem && !pv.Write) && isDir(dir) {
		if p.checkExtra(ExtraDir{Path: dir, ReadOnly: !pv.Write}) == nil {
			flag = "--add-dir " + dir
			if !pv.Write {
				flag += ":ro"
			}
		}
	}
	return Beyond{What: fmt.Sprintf("%s %s, %s", verb, pv.Resolved, where), Rule: pathRule(pv, pl), Flag: flag}
}

// Exceeds lists what spec grants beyond the jail profile of mode (plus the
// user's [sandbox] grants and the added directories): the profile is the
// grant a bash call of this workspace gets with nothing named, and every
// path rule of spec must lie under one of its rules with at least the same
// access, outside its hidden paths, and (for a write) outside its protected
// paths; network and unix sockets only if it has them. callTmp is the
// per-call temporary directory when there is no mount namespace.
func (p *Policy) Exceeds(spec jail.Spec, mode Mode, callTmp string) ([]string, error) {
	prof, err := p.BashProfile(ProfileOf(mode) == ProfileReadOnly, callTmp)
	if err != nil {
		return nil, err
	}
	prof.ReadOnlyCache = ProfileOf(mode) == ProfileReadOnly
	base, err := prof.Spec()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range spec.Paths {
		covered := slices.ContainsFunc(base.Paths, func(b jail.PathRule) bool {
			return within(r.Path, b.Path) && b.Access.Includes(r.Access)
		})
		hidden := slices.ContainsFunc(base.Hidden, func(h string) bool { return within(r.Path, h) })
		protected := r.Access == jail.Write && slices.ContainsFunc(base.Protected, func(q string) bool { return within(r.Path, q) })
		if !covered || hidden || protected {
			out = append(out, fmt.Sprintf("%s %s", r.Access, r.Path))
		}
	}
	if spec.Network && !base.Network {
		out = append(out, "network")
	}
	if spec.UnixSockets && !base.UnixSockets {
		out = append(out, "unix sockets")
	}
	return out, nil
}

// LaterExecMarkdown renders the later-executed places outside the
// workspace (internal/sensitive's list, and the directories on PATH) as
// the paragraph the README shows. Each entry's reason is shown by `brig
// policy check` when it denies.
func LaterExecMarkdown() string {
	var words []string
	for _, e := range sens.Home() {
		if e.Kind == sens.LaterExec {
			words = append(words, "`~/"+e.Path+"`,")
		}
	}
	for _, e := range sens.System() {
		if e.Kind == sens.LaterExec && !slices.Contains(words, "`/"+e.Path+"`,") {
			words = append(words, "`/"+e.Path+"`,")
		}
	}
	words = append(words, "and", "every", "directory", "on", "your", "`PATH`.")
	var b strings.Builder
	line := 0
	for _, w := range words {
		if line > 0 && line+1+len(w) > 78 {
			b.WriteString("\n")
			line = 0
		} else if line > 0 {
			b.WriteString(" ")
			line++
		}
		b.WriteString(w)
		line += len(w)
	}
	return b.String() + "\n"
}

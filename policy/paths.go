package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"brig/internal/sensitive"
	"brig/jail"
)

// PathClass says where a resolved path lies, which decides the default tier
// for touching it.
type PathClass string

// The classes, from most to least trusted.
const (
	// ClassWorkspace is inside the workspace.
	ClassWorkspace PathClass = "workspace"
	// ClassProtected is inside the workspace but never writable from a jail:
	// .brig/, .git/hooks, .git/config, .envrc, editor tasks … (SPEC §2).
	ClassProtected PathClass = "protected"
	// ClassSystem is a system or toolchain root every bash call may read
	// (/usr, /etc, …): reading it needs no grant, writing it does.
	ClassSystem PathClass = "system"
	// ClassSecret holds credentials (~/.ssh, ~/.aws, …) or brig's own
	// config and state: denied unless a user rule names it explicitly;
	// brig's own directories are never granted.
	ClassSecret PathClass = "secret"
	// ClassTemp is the private /tmp of a bash call (a fresh tmpfs in its
	// mount namespace): nothing of the user's is there.
	ClassTemp PathClass = "temp"
	// ClassOutside is anything else: it needs a Read or Write grant.
	ClassOutside PathClass = "outside"
)

// maxLinks bounds symlink resolution, as the kernel does (ELOOP).
const maxLinks = 40

// ResolvePath turns a path as a command or tool names it into the path the
// kernel will open: `~` and `~/` are the home directory, a relative path is
// relative to dir, and every symlink is followed component by component (so
// `link/..` means the target's parent, as in the kernel). When a component is
// missing, the rest is appended lexically and exists is false.
func ResolvePath(given, dir, home string) (resolved string, exists bool, err error) {
	return resolvePath(given, dir, home, false, nil)
}

// ResolveGrantPath is ResolvePath for a path a configuration grants
// (a [sandbox] or MCP server path, a PATH entry): it also returns the
// first symbolic link followed that lies in one of writable, the places
// calls can write. Such a link is the repository's or an earlier call's to
// point anywhere, so a grant reached through it must be refused unless
// the resolved path stays in writable too (PlantedLinkError says why).
func ResolveGrantPath(given, dir, home string, writable []string) (resolved string, exists bool, planted string, err error) {
	resolved, exists, err = resolvePath(given, dir, home, false, func(link string) {
		if planted == "" && slices.ContainsFunc(writable, func(w string) bool { return w != "" && within(link, w) }) {
			planted = link
		}
	})
	return resolved, exists, planted, err
}

// PlantedLinkError says why a grant reached through planted (see
// ResolveGrantPath) is refused, and what to write instead; what names the
// grant ("[sandbox] path", "MCP server x: path").
func PlantedLinkError(what, given, planted, resolved string) error {
	target, _ := os.Readlink(planted)
	return fmt.Errorf("%s %q leads through the symbolic link %s -> %s, where calls can write, so a call or the repository chooses what it grants; name the directory it should reach (%s) in the config instead", what, given, planted, target, resolved)
}

// lexicalPath is given made absolute (~ and dir) and cleaned, without
// following any link: the name a program outside the jail will use. ""
// when it cannot be made absolute.
func lexicalPath(given, dir, home string) string {
	p, err := absolutePath(given, dir, home)
	if err != nil {
		return ""
	}
	return filepath.Clean(p)
}

// absolutePath is given with ~ expanded and made absolute against dir,
// nothing resolved.
func absolutePath(given, dir, home string) (string, error) {
	p := given
	switch {
	case p == "":
		return "", errors.New("empty path")
	case p == "~":
		p = home
	case strings.HasPrefix(p, "~/"):
		if home == "" {
			return "", fmt.Errorf("path %q: no home directory to expand ~", given)
		}
		p = filepath.Join(home, p[2:])
	}
	if !filepath.IsAbs(p) {
		if !filepath.IsAbs(dir) {
			return "", fmt.Errorf("path %q: working directory %q is not absolute", given, dir)
		}
		p = dir + "/" + p
	}
	return p, nil
}

// resolvePath is ResolvePath, calling onLink with the path of each
// symbolic link it follows (as found, before it is followed).
//
// callProc says that the path is a call's whose /proc is its own: a fresh
// procfs of its PID namespace (Machine.namespaces), unlike this process's.
// Then nothing under /proc is looked at here, where /proc/self is brig and
// /proc/PID/cwd a host process's directory: once the walk reaches /proc
// (lexically or through a link), the rest is returned cleaned as it
// stands, and as existing, so that the answer says nothing about the
// host's processes.
func resolvePath(given, dir, home string, callProc bool, onLink func(link string)) (resolved string, exists bool, err error) {
	p, err := absolutePath(given, dir, home)
	if err != nil {
		return "", false, err
	}
	if (!callProc || !within(filepath.Clean(p), "/proc")) && linkFree(p) {
		return p, true, nil
	}
	comps := strings.Split(p, "/")
	cur, links := "/", 0
	for i := 0; i < len(comps); i++ {
		c := comps[i]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		if callProc && within(next, "/proc") {
			if upThroughProcLink(comps[i+1:]) {
				// /proc/self/cwd/.. is the parent of a directory only the
				// call knows; cleaned as text it read as a /proc file
				// (red team, 2026-12-03).
				return "", false, fmt.Errorf("resolve %q: it goes up (..) from inside /proc, where brig cannot tell what it leads to: name the path itself", given)
			}
			q := filepath.Join(append([]string{next}, comps[i+1:]...)...)
			rest, ok := procRoot(q)
			if !ok {
				return q, true, nil
			}
			// A process's root in the call's /proc is the call's root:
			// /proc/self/root/home/u/.ssh/id_rsa is the key, and is
			// judged as the key.
			if links++; links > maxLinks {
				return "", false, fmt.Errorf("resolve %q: too many levels of symbolic links", given)
			}
			cur, comps, i = "/", strings.Split(rest, "/"), -1
			continue
		}
		fi, err := os.Lstat(next)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
				return "", false, fmt.Errorf("resolve %q: %w", given, err)
			}
			// Missing: the rest can only be created, never followed.
			rest := filepath.Join(append([]string{next}, comps[i+1:]...)...)
			return filepath.Clean(rest), false, nil
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", false, fmt.Errorf("resolve %q: too many levels of symbolic links", given)
		}
		if onLink != nil {
			onLink(next)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", false, fmt.Errorf("resolve %q: %w", given, err)
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		comps = append(strings.Split(target, "/"), comps[i+1:]...)
		i = -1
	}
	return cur, true, nil
}

// linkFree reports whether p, absolute and clean, exists and the kernel
// reaches it without following a symbolic link: then resolvePath's walk
// would end at p itself, having followed nothing. One openat2 instead of
// an lstat per component; every bash call's grant resolves each PATH
// entry and default path again. Anything else (a link on the way, a
// missing component, a kernel without openat2) is left to the walk.
func linkFree(p string) bool {
	if p != filepath.Clean(p) || !filepath.IsAbs(p) {
		return false // "." and ".." are resolvePath's to read
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, p, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

// upThroughProcLink reports whether the components after /proc go up
// (..) from below one of its links to places outside it: a process's cwd,
// root or exe, or an entry of its fd or map_files. (/proc/1/../self is
// plain: /proc/1 is a directory of /proc.)
func upThroughProcLink(comps []string) bool {
	linked := false
	for i, c := range comps {
		switch {
		case c == "..":
			if linked {
				return true
			}
		case c == "cwd" || c == "root" || c == "exe" || i > 0 && (comps[i-1] == "fd" || comps[i-1] == "map_files"):
			linked = true
		}
	}
	return false
}

// procRoot reads q, a clean path under a call's own /proc, for the one
// link whose target is known without looking: /proc/PID/root (and a
// task's) is the call's root, the host's tree as the call sees it (masks
// aside). It returns the rest of q below it.
func procRoot(q string) (rest string, ok bool) {
	parts := strings.Split(strings.TrimPrefix(q, "/proc/"), "/")
	if len(parts) >= 4 && parts[1] == "task" {
		parts = append([]string{parts[0]}, parts[3:]...) // /proc/P/task/T/root: as /proc/P/root
	}
	if len(parts) < 2 || parts[0] == "" || parts[1] != "root" {
		return "", false
	}
	return strings.Join(parts[2:], "/"), true
}

// systemRoots are read by every bash call without a grant.
func systemRoots() []string {
	return []string{"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/opt", "/etc", "/snap", "/nix", "/dev/null"}
}

// Places is what classification needs to know about this machine and
// workspace. Workspace and Home are canonical (symlinks resolved).
type Places struct {
	Workspace string
	Home      string
	// Protected are the workspace's never-writable paths
	// (jail.ProtectedPaths), unless search gives them: a Policy's start-up
	// search, waited for at the first use (protectedList). BrigDirs are
	// brig's config and state.
	Protected []string
	BrigDirs  []string
	search    *protectedSearch
}

// protectedList is Protected, or the start-up search's list once it is
// done. A search that failed (New lists the workspace's root first, so
// only a workspace gone in the meantime) protects the whole workspace.
func (pl Places) protectedList() []string {
	if pl.search == nil {
		return pl.Protected
	}
	<-pl.search.done
	if pl.search.err != nil {
		return []string{pl.Workspace}
	}
	if also := pl.search.repos.Protected(); len(also) > 0 {
		return append(slices.Clone(pl.search.list), also...)
	}
	return pl.search.list
}

// Classify places a resolved path (cleaned lexically first; callers resolve
// symlinks with ResolvePath).
func (pl Places) Classify(p string) PathClass {
	p = filepath.Clean(p)
	for _, d := range pl.BrigDirs {
		if within(p, d) {
			return ClassSecret
		}
	}
	if _, ok := sensitive.Match(p, pl.Home, sensitive.Secret); ok {
		return ClassSecret
	}
	if within(p, pl.Workspace) {
		if pl.protected(p) {
			return ClassProtected
		}
		return ClassWorkspace
	}
	for _, r := range systemRoots() {
		if within(p, r) {
			return ClassSystem
		}
	}
	return ClassOutside
}

// protected reports whether p is, or is inside, a protected path of the
// workspace — the listed ones, or, for repositories that appear later, any
// git control file or root-level entry by its shape.
func (pl Places) protected(p string) bool {
	for _, q := range pl.protectedList() {
		if within(p, q) {
			return true
		}
	}
	rel, err := filepath.Rel(pl.Workspace, p)
	if err != nil || rel == "." {
		return false
	}
	if _, ok := sensitive.MatchWorkspace(rel); ok {
		return true
	}
	segs := strings.Split(rel, "/")
	for i := 0; i+1 < len(segs); i++ {
		if segs[i] == ".git" {
			switch segs[i+1] {
			case "hooks", "config", "commondir", "config.worktree":
				return true
			}
			if !jail.GitOwnEntry(segs[i+1]) {
				return true // another program's file (lazygit.yml): see jail.GitOwnEntry
			}
		}
	}
	return false
}

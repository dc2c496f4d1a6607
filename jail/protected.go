package jail

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// WorkspaceEntries are the names, at the root of a repository, of files and
// directories that a later program outside the jail executes or obeys: brig's
// own config, direnv, editor tasks and settings, git hook managers, and other
// agents' project configs. A jail may never write them.
func WorkspaceEntries() []string {
	return []string{
		".brig", ".envrc", ".mcp.json", ".vscode", ".idea", ".husky",
		".claude", ".codex", ".gemini", ".cursor", ".devcontainer",
	}
}

// ProtectedPaths lists every path under workspace that must stay read-only:
// the WorkspaceEntries and the git control files (hooks, config, and the
// pointers that say where they are) of the workspace and of every repository
// nested in it (vendored repositories, submodules). For a .git file
// (worktree, submodule) the file itself and its resolved gitdir are protected.
// Paths of the workspace root are listed whether or not they exist; nested
// repositories are found by walking the tree. extra paths (brig's own config
// and state directories) are appended.
func ProtectedPaths(workspace string, extra ...string) ([]string, error) {
	var out []string
	addRepo := func(root string) {
		for _, name := range WorkspaceEntries() {
			out = append(out, filepath.Join(root, name))
		}
		out = append(out, gitProtected(filepath.Join(root, ".git"))...)
	}
	addRepo(workspace)
	err := filepath.WalkDir(workspace, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == workspace {
				return err
			}
			return nil // unreadable subtree: nothing in it can be granted either
		}
		if d.Name() == ".git" {
			if path != filepath.Join(workspace, ".git") {
				addRepo(filepath.Dir(path))
			}
			if d.IsDir() {
				return fs.SkipDir
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out = append(out, extra...)
	slices.Sort(out)
	return slices.Compact(out), nil
}

// gitProtected lists the control files of the git directory (or .git file)
// at dotgit, whether or not they exist.
func gitProtected(dotgit string) []string {
	fi, err := os.Lstat(dotgit)
	if err != nil || fi.IsDir() {
		return gitdirProtected(dotgit)
	}
	// A .git file points at the real gitdir: protect the pointer and the
	// directory it names.
	out := []string{dotgit}
	if gitdir := readGitdirFile(dotgit); gitdir != "" {
		out = append(out, gitdirProtected(gitdir)...)
		if common := readCommondir(gitdir); common != "" {
			out = append(out, gitdirProtected(common)...)
		}
	}
	return out
}

// gitdirProtected lists the files of a git directory that decide what runs:
// hooks, config (core.hooksPath, aliases, filters, fsmonitor, sshCommand),
// and the pointers to other git directories; recursively for submodules and
// worktrees kept inside it.
func gitdirProtected(gitdir string) []string {
	out := []string{
		filepath.Join(gitdir, "hooks"),
		filepath.Join(gitdir, "config"),
		filepath.Join(gitdir, "commondir"),
		filepath.Join(gitdir, "config.worktree"),
	}
	modules, _ := filepath.Glob(filepath.Join(gitdir, "modules", "*"))
	for _, m := range modules {
		out = append(out, gitdirProtected(m)...)
	}
	worktrees, _ := filepath.Glob(filepath.Join(gitdir, "worktrees", "*"))
	for _, w := range worktrees {
		out = append(out, filepath.Join(w, "config.worktree"), filepath.Join(w, "commondir"), filepath.Join(w, "gitdir"))
	}
	return out
}

// readGitdirFile parses "gitdir: PATH" from a .git file.
func readGitdirFile(dotgit string) string {
	f, err := os.Open(dotgit)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return ""
	}
	p, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "gitdir:")
	if !ok {
		return ""
	}
	p = strings.TrimSpace(p)
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(dotgit), p)
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return filepath.Clean(p)
}

// readCommondir resolves a gitdir's commondir file, if any.
func readCommondir(gitdir string) string {
	b, err := os.ReadFile(filepath.Join(gitdir, "commondir"))
	if err != nil {
		return ""
	}
	p := strings.TrimSpace(string(b))
	if !filepath.IsAbs(p) {
		p = filepath.Join(gitdir, p)
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return filepath.Clean(p)
}

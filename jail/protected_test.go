package jail

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// isolatedGit points the global and system git config of this process (what
// ProtectedPaths reads) at files of the test.
func isolatedGit(t *testing.T) (home string) {
	t.Helper()
	home = t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("GIT_CONFIG_GLOBAL", "")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	return home
}

func TestIsRepositoryShape(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string // "" content with a trailing / is a directory
		want  bool
	}{
		{"symbolic HEAD, objects, refs", map[string]string{"HEAD": "ref: refs/heads/main\n", "objects/": "", "refs/": ""}, true},
		{"detached HEAD", map[string]string{"HEAD": "0123456789abcdef0123456789abcdef01234567\n", "objects/": "", "refs/": ""}, true},
		{"HEAD and commondir", map[string]string{"HEAD": "ref: refs/heads/x\n", "commondir": "../..\n"}, true},
		{"no refs", map[string]string{"HEAD": "ref: refs/heads/main\n", "objects/": ""}, false},
		// Git reads HEAD more loosely than brig once did (red team,
		// 2026-12-03): any whitespace after "ref:", an object id in
		// upper case or with bytes after it. Any regular HEAD counts now.
		{"ref: and a newline", map[string]string{"HEAD": "ref:\nrefs/heads/main\n", "objects/": "", "refs/": ""}, true},
		{"upper-case id with a tail", map[string]string{"HEAD": "0123456789ABCDEF0123456789ABCDEF01234567junk", "objects/": "", "refs/": ""}, true},
		{"HEAD is not a ref", map[string]string{"HEAD": "hello\n", "objects/": "", "refs/": ""}, true},
		{"HEAD is a directory", map[string]string{"HEAD/": "", "objects/": "", "refs/": ""}, false},
		{"no HEAD", map[string]string{"objects/": "", "refs/": "", "config": ""}, false},
	}
	for _, c := range cases {
		dir := t.TempDir()
		for rel, content := range c.files {
			if rel[len(rel)-1] == '/' {
				os.MkdirAll(filepath.Join(dir, rel), 0o755)
			} else {
				writeFile(t, filepath.Join(dir, rel), content)
			}
		}
		if got := IsRepositoryShape(dir); got != c.want {
			t.Errorf("%s: IsRepositoryShape = %v, want %v", c.name, got, c.want)
		}
	}
	// A symbolic link HEAD into refs/ counts, one elsewhere does not; a
	// FIFO named HEAD neither counts nor blocks the check.
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "objects"), 0o755)
	os.MkdirAll(filepath.Join(dir, "refs"), 0o755)
	os.Symlink("refs/heads/main", filepath.Join(dir, "HEAD"))
	if !IsRepositoryShape(dir) {
		t.Error("a HEAD link into refs/ is not a repository shape")
	}
	os.Remove(filepath.Join(dir, "HEAD"))
	os.Symlink("/etc/passwd", filepath.Join(dir, "HEAD"))
	if IsRepositoryShape(dir) {
		t.Error("a HEAD link elsewhere is a repository shape")
	}
	os.Remove(filepath.Join(dir, "HEAD"))
	if err := exec.Command("mkfifo", filepath.Join(dir, "HEAD")).Run(); err == nil && IsRepositoryShape(dir) {
		t.Error("a FIFO HEAD is a repository shape")
	}
}

// TestGitTakesTheLooseHeads: the HEADs a red team planted are ones git
// itself takes as a repository's (so brig must too): git run in such a
// directory uses its config. The control: without objects/ git does not.
func TestGitTakesTheLooseHeads(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	isolatedGit(t)
	for _, head := range []string{"ref:\nrefs/heads/main\n", "ref:\t\r\n refs/heads/main", "0123456789ABCDEF0123456789ABCDEF01234567junk"} {
		for _, withObjects := range []bool{true, false} {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "HEAD"), head)
			writeFile(t, filepath.Join(dir, "config"), "[core]\n\tbare = true\n[brig]\n\tcanary = planted\n")
			os.MkdirAll(filepath.Join(dir, "refs"), 0o755)
			if withObjects {
				os.MkdirAll(filepath.Join(dir, "objects"), 0o755)
			}
			cmd := exec.Command("git", "config", "brig.canary")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
			out, _ := cmd.Output()
			usedByGit := strings.TrimSpace(string(out)) == "planted"
			if usedByGit != withObjects {
				t.Errorf("HEAD %q, objects/ %v: git used the config: %v", head, withObjects, usedByGit)
			}
			if IsRepositoryShape(dir) != withObjects {
				t.Errorf("HEAD %q, objects/ %v: IsRepositoryShape = %v", head, withObjects, !withObjects)
			}
		}
	}
}

// TestProtectedPathsByShape: a bare repository and a directory that only
// looks like one by its content are protected whatever their names; a
// directory that lacks part of the shape is not.
func TestProtectedPathsByShape(t *testing.T) {
	isolatedGit(t)
	ws := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", "--bare", filepath.Join(ws, "fixtures/remote.git")).CombinedOutput(); err != nil {
		t.Skipf("git init --bare: %v %s", err, out)
	}
	writeFile(t, filepath.Join(ws, "src/HEAD"), "ref: refs/heads/main\n")
	os.MkdirAll(filepath.Join(ws, "src/objects"), 0o755)
	os.MkdirAll(filepath.Join(ws, "src/refs"), 0o755)
	writeFile(t, filepath.Join(ws, "half/HEAD"), "ref: refs/heads/main\n")
	os.MkdirAll(filepath.Join(ws, "half/objects"), 0o755)
	writeFile(t, filepath.Join(ws, ".git/modules/a/b/HEAD"), "ref: refs/heads/main\n")
	os.MkdirAll(filepath.Join(ws, ".git/modules/a/b/objects"), 0o755)
	os.MkdirAll(filepath.Join(ws, ".git/modules/a/b/refs"), 0o755)
	got, err := ProtectedPaths(ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"fixtures/remote.git/config", "fixtures/remote.git/hooks",
		"src/config", "src/hooks", "src/commondir",
		".git/modules/a/b/config", ".git/modules/a/b/hooks",
	} {
		if !slices.Contains(got, filepath.Join(ws, want)) {
			t.Errorf("missing %s", want)
		}
	}
	if slices.Contains(got, filepath.Join(ws, "half/config")) {
		t.Error("control: a directory without refs/ is protected")
	}
}

// TestProtectedPathsFromGitConfig: the directory core.hooksPath names (in
// the repository's config and in the global one, relative or absolute),
// files the config includes, and scripts its program settings run are
// protected; hooks straight in the working tree's root are protected file
// by file, not the whole tree.
func TestProtectedPathsFromGitConfig(t *testing.T) {
	home := isolatedGit(t)
	ws := t.TempDir()
	writeFile(t, filepath.Join(home, ".gitconfig"), "[core]\n\thooksPath = .hooks-everywhere\n")
	writeFile(t, filepath.Join(ws, ".git/config"), "[core]\n\thooksPath = tools/hooks\n\tfsmonitor = ./scripts/fsmon.sh --fast\n[include]\n\tpath = ../shared/git.inc\n[alias]\n\tlint = !sh scripts/lint.sh\n")
	writeFile(t, filepath.Join(ws, "shared/git.inc"), "[core]\n\tpager = less\n")
	writeFile(t, filepath.Join(ws, "vendor/lib/.git/config"), "[core]\n\thooksPath = .\n")
	writeFile(t, filepath.Join(ws, "vendor/lib/README"), "")
	got, err := ProtectedPaths(ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"tools/hooks", ".hooks-everywhere", "vendor/lib/.hooks-everywhere", "shared/git.inc",
		"scripts/fsmon.sh", "scripts/lint.sh", "vendor/lib/pre-commit", "vendor/lib/post-checkout",
	} {
		if !slices.Contains(got, filepath.Join(ws, want)) {
			t.Errorf("missing %s", want)
		}
	}
	for _, not := range []string{"vendor/lib", "tools", "scripts", "shared", "vendor/lib/README"} {
		if slices.Contains(got, filepath.Join(ws, not)) {
			t.Errorf("control: %s is protected", not)
		}
	}
}

// TestProtectedPathsFromAnOversizedGitConfig: a repository whose config
// goes on, through its includes, beyond what brig reads (red team, round
// 5: a committed bare-repository-shaped directory whose config included
// 63 files of 1 MiB of `a=b` lines held the supervisor at 11 GB for
// every call) is protected as a whole, since a program it names could
// be anywhere in it; the settings brig reads are kept, the rest is not.
func TestProtectedPathsFromAnOversizedGitConfig(t *testing.T) {
	isolatedGit(t)
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "src/main.go"), "package main\n")
	bare := filepath.Join(ws, "fixtures/bare")
	writeFile(t, filepath.Join(bare, "HEAD"), "ref: refs/heads/main\n")
	for _, d := range []string{"objects", "refs"} {
		if err := os.MkdirAll(filepath.Join(bare, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	filler := strings.Repeat("a = b\n", (1<<20)/6-10)
	var cfg strings.Builder
	cfg.WriteString("[core]\n\tfsmonitor = ./hook.sh\n")
	for i := range 8 {
		name := fmt.Sprintf("inc%d.cfg", i)
		writeFile(t, filepath.Join(bare, name), "[x]\n"+filler)
		fmt.Fprintf(&cfg, "[include]\n\tpath = %s\n", name)
	}
	writeFile(t, filepath.Join(bare, "config"), cfg.String())
	got, err := ProtectedPaths(ws)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, bare) || !slices.Contains(got, filepath.Join(bare, "hook.sh")) {
		t.Errorf("the oversized repository is not protected as a whole: %v", got)
	}
	if slices.Contains(got, ws) || slices.Contains(got, filepath.Join(ws, "src")) {
		t.Errorf("control: the workspace is protected: %v", got)
	}
	// Control: the same repository with three includes (3 MiB) is read
	// in full, and only what its config names is protected.
	writeFile(t, filepath.Join(bare, "config"), strings.Join(strings.SplitAfter(cfg.String(), "\n")[:8], ""))
	got, err = ProtectedPaths(ws)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(got, bare) || !slices.Contains(got, filepath.Join(bare, "hook.sh")) {
		t.Errorf("control: a config read in full protects %v", got)
	}
}

// TestRepositorySearchDepthIsBounded: the search does not go into a
// directory whose path is longer than maxWalkPath (each level held its
// path while the levels below were read: 3,000 levels of 250-character
// names, made by a call in a second, held the supervisor at gigabytes;
// red team, round 5). Control: a repository just above the bound is found.
func TestRepositorySearchDepthIsBounded(t *testing.T) {
	isolatedGit(t)
	ws := t.TempDir()
	name := strings.Repeat("n", 200)
	shallow := filepath.Join(ws, name, name)
	writeFile(t, filepath.Join(shallow, ".git/config"), "[core]\n\thooksPath = hooks\n")
	// The deep chain, made by descriptor (its path is past PATH_MAX), with
	// a repository at the bottom.
	fd, err := unix.Open(ws, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range append(slices.Repeat([]string{"deep" + name}, maxWalkPath/len(name)+4), ".git") {
		if err := unix.Mkdirat(fd, d, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, d, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	unix.Close(fd)
	t.Cleanup(func() { exec.Command("rm", "-rf", filepath.Join(ws, "deep"+name)).Run() })
	got, err := ProtectedPaths(ws)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, filepath.Join(shallow, "hooks")) {
		t.Errorf("control: the repository above the bound is not found: %d paths", len(got))
	}
	for _, p := range got {
		if len(p) > maxWalkPath+len(name)+64 {
			t.Fatalf("the search went below the bound: a protected path of %d bytes", len(p))
		}
	}
}

// TestProtectedPathsOfMercurialAndJJRepositories: a Mercurial or jj
// repository in the workspace (a .hg or .jj, or a link named .hg, which
// Mercurial follows) is found, and the Workspace entries are protected at
// its root (.hg/hgrc-not-shared, .jj/workspace-config.toml, .envrc …), as
// at a git working tree's; nothing of a git directory is made of it. A
// search that remembers the tree still finds them. Control: a plain
// directory gets no entries.
func TestProtectedPathsOfMercurialAndJJRepositories(t *testing.T) {
	isolatedGit(t)
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "lib/.hg/requires"), "store\n")
	writeFile(t, filepath.Join(ws, "tools/.jj/repo/store/type"), "git\n")
	writeFile(t, filepath.Join(ws, "elsewhere/hgrc"), "")
	if err := os.MkdirAll(filepath.Join(ws, "linked"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../elsewhere", filepath.Join(ws, "linked/.hg")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(ws, "plain/file.go"), "package x\n")

	repos, err := Repositories(ws)
	if err != nil {
		t.Fatal(err)
	}
	foreign := map[string]string{}
	for _, r := range repos {
		if r.Foreign != "" {
			foreign[r.GitDir] = r.Foreign
			if r.Worktree != filepath.Dir(r.GitDir) {
				t.Errorf("%s: root %s, want its parent", r.GitDir, r.Worktree)
			}
		}
	}
	if want := map[string]string{filepath.Join(ws, "lib/.hg"): "hg", filepath.Join(ws, "tools/.jj"): "jj", filepath.Join(ws, "linked/.hg"): "hg"}; !reflect.DeepEqual(foreign, want) {
		t.Fatalf("found %v, want %v", foreign, want)
	}

	got, err := ProtectedPaths(ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"lib/.hg/hgrc", "lib/.hg/hgrc-not-shared", "lib/.hg/sharedpath", "lib/.envrc",
		"tools/.jj/repo/config.toml", "tools/.jj/workspace-config.toml", "linked/.hg/hgrc",
	} {
		if !slices.Contains(got, filepath.Join(ws, want)) {
			t.Errorf("missing %s", want)
		}
	}
	for _, not := range []string{"plain/.envrc", "lib/.hg/config", "lib/.hg/hooks", "tools/.jj/hooks"} {
		if slices.Contains(got, filepath.Join(ws, not)) {
			t.Errorf("control: %s is protected", not)
		}
	}

	// A search that remembers the tree lists lib/ again (it holds a
	// .hg), so it finds what a fresh one does.
	c := NewRepoCache()
	c.racy = 0
	for range 2 {
		if _, err := c.Repositories(ws); err != nil {
			t.Fatal(err)
		}
		nextTick()
	}
	cached, err := c.Repositories(ws)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cached, repos) {
		t.Fatalf("the remembering search found\n%+v\na fresh one\n%+v", cached, repos)
	}
}

// TestProtectedPathsOfWhatAnEnvrcLoads: the files the workspace's .envrc
// and mise config load (sensitive.EnvrcLoads, MiseLoads) are protected,
// and what a sourced script sources in turn, at a nested working tree's
// root too; a loaded file outside the workspace is left to the grant.
// Controls: an .envrc that is a link is not read (a repository's link to
// another file of the user's names nothing), and nothing else is added.
func TestProtectedPathsOfWhatAnEnvrcLoads(t *testing.T) {
	isolatedGit(t)
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, ".envrc"), "source_env_if_exists .envrc.local\ndotenv\nsource scripts/a.sh\nsource_env ../outside\nsource_env config\nPATH_add bin\n")
	writeFile(t, filepath.Join(ws, "scripts/a.sh"), ". scripts/b.sh\nsource \"$(dirname \"${BASH_SOURCE[0]}\")/common.sh\"\n")
	// direnv runs a source_env'd file in its own directory (red team,
	// 2026-12-03: config/local.env stayed writable, ./local.env was
	// protected instead).
	writeFile(t, filepath.Join(ws, "config/.envrc"), "dotenv_if_exists local.env\nsource_env_if_exists local.sh\n")
	// An .envrc below the root, in a directory of its own (a monorepo's
	// service the user allowed): what it loads is protected too.
	writeFile(t, filepath.Join(ws, "services/api/.envrc"), "dotenv\nsource_env_if_exists .envrc.local\n")
	writeFile(t, filepath.Join(ws, "services/web/index.js"), "")
	writeFile(t, filepath.Join(ws, "mise.toml"), "[env]\n_.source = \"mise-env.sh\"\n")
	writeFile(t, filepath.Join(ws, "sub/.git/HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(ws, "sub/.git/config"), "")
	if err := os.MkdirAll(filepath.Join(ws, "sub/.git/objects"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, "sub/.git/refs"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(ws, "sub/.envrc"), "dotenv .env.sub\n")
	got, err := ProtectedPaths(ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".envrc.local", ".env", "scripts/a.sh", "scripts/b.sh", "scripts/common.sh", "mise-env.sh", "sub/.env.sub", "config/.envrc", "config/local.env", "config/local.sh", "bin", "services/api/.env", "services/api/.envrc.local", "services/api/.envrc"} {
		if !slices.Contains(got, filepath.Join(ws, want)) {
			t.Errorf("missing %s", want)
		}
	}
	for _, not := range []string{"scripts", "sub/.env", "local.env", "local.sh", "common.sh", "services/web/.env", "services/.env"} {
		if slices.Contains(got, filepath.Join(ws, not)) {
			t.Errorf("control: %s is protected", not)
		}
	}
	for _, p := range got {
		if !strings.HasPrefix(p, ws+"/") {
			t.Errorf("outside the workspace: %s", p)
		}
	}

	// An .envrc that is a link is not followed.
	ws2 := t.TempDir()
	writeFile(t, filepath.Join(ws2, "target"), "dotenv .env.linked\n")
	if err := os.Symlink("target", filepath.Join(ws2, ".envrc")); err != nil {
		t.Fatal(err)
	}
	if got, err = ProtectedPaths(ws2); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(got, filepath.Join(ws2, ".env.linked")) {
		t.Error("an .envrc link was followed")
	}
	if err := os.Remove(filepath.Join(ws2, ".envrc")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(ws2, "target"), filepath.Join(ws2, ".envrc")); err != nil {
		t.Fatal(err)
	}
	if got, err = ProtectedPaths(ws2); err != nil || !slices.Contains(got, filepath.Join(ws2, ".env.linked")) {
		t.Errorf("control: the same .envrc as a file: %v %v", err, got)
	}
}

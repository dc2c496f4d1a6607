package jail

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"golang.org/x/sys/unix"
)

// repositoriesWalkDir is Repositories as it was written on filepath.WalkDir
// before the walk moved to getdents: the reference the new walk must agree
// with, name for name and in the same order.
func repositoriesWalkDir(root string) ([]Repository, error) {
	w := &repoWalk{shapes: map[string]bool{}}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return err
			}
			return nil
		}
		if w.consider(path, d.Name(), d.Type()&fs.ModeType) {
			return fs.SkipDir
		}
		return nil
	})
	return w.out, err
}

// TestRepositoriesWalk: the getdents walk finds what a filepath.WalkDir
// walk finds, in the same order, over a tree with every kind of
// repository Repositories knows and the entries that look like one but are
// not: .git directories (with modules/ and worktrees/), .git files naming
// a gitdir inside and outside the tree, a .git link, a .git FIFO (never
// opened for reading), bare repositories found by their shape (whose
// internals are not walked, a repository planted in objects/ included),
// a HEAD that is not a repository's, and a link to a directory (not
// followed).
func TestRepositoriesWalk(t *testing.T) {
	outside := mkTree(t, "HEAD", "objects/", "refs/", "hooks/")
	writeFile(t, filepath.Join(outside, "HEAD"), "ref: refs/heads/main\n")
	ws := mkTree(t,
		".git/hooks/", ".git/modules/sub/hooks/", ".git/modules/sub/HEAD", ".git/modules/a/b/HEAD", ".git/worktrees/wt1/",
		"vendor/x/.git/hooks/", "deep/a/b/c/.git/config", "src/main.go", "src/pkg/util.go",
		"bare.git/objects/", "bare.git/refs/heads/", "bare.git/hooks/", "bare.git/objects/planted/.git/config",
		"docs/HEAD", "wt/", "wt2/", "linked/", "fifo/", "z/last.txt",
	)
	writeFile(t, filepath.Join(ws, "bare.git/HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(ws, "docs/HEAD"), "not a ref\n")
	writeFile(t, filepath.Join(ws, "wt/.git"), "gitdir: "+outside+"\n")
	writeFile(t, filepath.Join(ws, "wt2/.git"), "gitdir: ../.git/worktrees/wt1\n")
	if err := os.Symlink(outside, filepath.Join(ws, "linked/.git")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ws, "deep"), filepath.Join(ws, "deeplink")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(ws, "fifo/.git"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Repositories(ws)
	if err != nil {
		t.Fatal(err)
	}
	want, err := repositoriesWalkDir(ws)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the getdents walk found\n%+v\nfilepath.WalkDir's\n%+v", got, want)
	}
	// Control: the tree holds what it should, so agreeing means something.
	byDir := map[string]Repository{}
	for _, r := range got {
		byDir[r.GitDir] = r
	}
	for _, gd := range []string{
		filepath.Join(ws, ".git"), filepath.Join(ws, ".git/modules/sub"), filepath.Join(ws, ".git/modules/a/b"), filepath.Join(ws, ".git/worktrees/wt1"),
		filepath.Join(ws, "vendor/x/.git"), filepath.Join(ws, "deep/a/b/c/.git"), filepath.Join(ws, "bare.git"),
		outside, filepath.Join(ws, "fifo/.git"),
	} {
		if _, ok := byDir[gd]; !ok {
			t.Errorf("%s not found: %+v", gd, got)
		}
	}
	if _, ok := byDir[filepath.Join(ws, "bare.git/objects/planted/.git")]; ok {
		t.Error("a bare repository's objects/ was walked")
	}
	if _, ok := byDir[filepath.Join(ws, "docs")]; ok {
		t.Error("a directory with a HEAD that is not a ref was taken for a repository")
	}
	if _, ok := byDir[filepath.Join(ws, "deeplink/a/b/c/.git")]; ok {
		t.Error("a link to a directory was followed")
	}

	// The root itself: missing, a file, a .git directory.
	if _, err := Repositories(filepath.Join(ws, "missing")); err == nil {
		t.Error("a missing root gave no error")
	}
	if r, err := Repositories(filepath.Join(ws, "src/main.go")); err != nil || len(r) != 0 {
		t.Errorf("a file as the root: %v %v", r, err)
	}
	got, _ = Repositories(filepath.Join(ws, ".git"))
	want, _ = repositoriesWalkDir(filepath.Join(ws, ".git"))
	if !reflect.DeepEqual(got, want) || len(got) == 0 {
		t.Errorf("a .git directory as the root: %+v, want %+v", got, want)
	}
}

// Package treetest reads a directory tree as tests of undo compare it:
// each path's type, mode and exact content, links not followed. It is for
// tests only (internal/checkpoint and the undo scenarios) and changes
// nothing on disk.
package treetest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// File is one path of a tree: byte-exact.
type File struct {
	Type    string // "file", "dir" or "link"
	Mode    fs.FileMode
	Content string // a file's bytes, a link's target
}

// Read reads everything under dir without following links, except the
// directories skip names (paths relative to dir).
func Read(t testing.TB, dir string, skip ...string) map[string]File {
	t.Helper()
	out := map[string]File{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if slices.Contains(skip, rel) {
			return fs.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st := File{Mode: fi.Mode()}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			st.Type = "link"
			st.Content, _ = os.Readlink(p)
		case fi.IsDir():
			st.Type = "dir"
		default:
			st.Type = "file"
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			st.Content = string(b)
		}
		out[rel] = st
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Diff lists, sorted, the paths where got differs from want: missing,
// extra or changed (with both versions, content cut at 40 bytes); "" when
// they are the same.
func Diff(want, got map[string]File) string {
	var d []string
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			d = append(d, "missing "+k)
		case g != w:
			d = append(d, fmt.Sprintf("%s: want %s %v %q, got %s %v %q", k, w.Type, w.Mode, trunc(w.Content), g.Type, g.Mode, trunc(g.Content)))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			d = append(d, "extra "+k)
		}
	}
	slices.Sort(d)
	return strings.Join(d, "\n")
}

func trunc(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"brig/policy/toolcall"
)

// skippedDirs are directories glob and search_code do not enter unless
// include_ignored is set: version control data and build or dependency
// output, which is large and rarely what the model looks for.
func skippedDirs() []string {
	return []string{".git", ".hg", ".svn", "node_modules", "vendor", "target", "dist", "build"}
}

type globArgs struct {
	Pattern        string `json:"pattern"`
	Path           string `json:"path,omitempty"`
	IncludeIgnored bool   `json:"include_ignored,omitempty"`
}

func (a *globArgs) validate() error {
	if a.Pattern == "" {
		return errors.New("pattern is required")
	}
	if !doublestar.ValidatePattern(filepath.ToSlash(a.Pattern)) {
		return fmt.Errorf("pattern %q is not a valid glob", a.Pattern)
	}
	if filepath.IsAbs(a.Pattern) && a.Path != "" {
		return errors.New("give either an absolute pattern or a path, not both")
	}
	if a.Path == "" {
		a.Path = "."
	}
	return nil
}

func (a *globArgs) pathFields() []*string { return []*string{&a.Path} }

// root is the directory the walk starts from: path joined with the
// pattern's literal leading directories.
func (a globArgs) root() (string, string) {
	base, rest := doublestar.SplitPattern(filepath.ToSlash(a.Pattern))
	if filepath.IsAbs(a.Pattern) {
		return filepath.Clean(base), rest
	}
	if base == "." {
		return a.Path, rest
	}
	return filepath.Join(a.Path, base), rest
}

func globDef() Definition {
	return define(Glob, toolcall.EffectRead,
		fmt.Sprintf("Find files and directories by name pattern: * matches within one path segment, ** across directories, {a,b} alternatives, [abc] classes (e.g. **/*.go, src/**/test_*.py). Results are sorted paths, at most %d; directories end with /. %s are skipped unless include_ignored is set.", MaxGlobResults, strings.Join(skippedDirs(), ", ")),
		`{"type":"object","properties":{`+
			`"pattern":{"type":"string","description":"Glob pattern, relative to path"},`+
			`"path":{"type":"string","description":"Directory to search from; default the workspace root"},`+
			`"include_ignored":{"type":"boolean","description":"Also look inside the normally skipped directories"}`+
			`},"required":["pattern"],"additionalProperties":false}`,
		func(a globArgs) toolcall.Call {
			root, _ := a.root()
			return toolcall.Call{Read: []string{root}}
		},
		runGlob)
}

func runGlob(ctx context.Context, a globArgs) Result {
	root, rest := a.root()
	skip := skippedDirs()
	var matches []string
	more := false
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // an unreadable subtree (or one the jail refuses)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() && p != root && !a.IncludeIgnored && slices.Contains(skip, d.Name()) {
			return fs.SkipDir
		}
		if rel == "." {
			if rest != "" {
				return nil
			}
		} else if ok, _ := doublestar.Match(rest, filepath.ToSlash(rel)); !ok {
			return nil
		}
		if len(matches) == MaxGlobResults {
			more = true
			return fs.SkipAll
		}
		if d.IsDir() {
			p += "/"
		}
		matches = append(matches, p)
		return nil
	})
	if err != nil {
		return fsError("glob in", root, err)
	}
	text := strings.Join(matches, "\n")
	switch {
	case len(matches) == 0:
		text = "no matches"
	case more:
		text += fmt.Sprintf("\n[more than %d matches; narrow the pattern]", MaxGlobResults)
	}
	return Result{Text: text, Meta: Meta{Path: root, Matches: len(matches), Truncated: more}}
}

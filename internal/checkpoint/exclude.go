package checkpoint

import (
	"path"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Rule excludes directories from snapshots, gitignore-style: Pattern is a
// name pattern (path.Match syntax) matched against a directory's name at
// any depth, or, when it contains a slash, against its path from the
// snapshot root (a leading slash anchors it there). When Beside is set the
// rule applies only if a file of that name sits next to the directory
// (target/ beside Cargo.toml is Rust's build output; target/ elsewhere may
// be anything); when Inside is set, only if the directory holds a file of
// that name (a virtualenv holds pyvenv.cfg).
type Rule struct {
	Pattern string
	Beside  []string
	Inside  string
	// Why is what the user is told about it.
	Why string
}

// Exclusions are the rules a snapshot applies.
type Exclusions struct {
	Rules []Rule

	once    sync.Once
	byName  map[string][]int // rules whose pattern is a plain name
	globbed []int            // the others
}

// compile sorts the rules into those matched by a map lookup and the rest
// (every directory of every snapshot is matched against them).
func (x *Exclusions) compile() {
	x.byName = map[string][]int{}
	for i, r := range x.Rules {
		if strings.ContainsAny(r.Pattern, "/*?[\\") {
			x.globbed = append(x.globbed, i)
		} else {
			x.byName[r.Pattern] = append(x.byName[r.Pattern], i)
		}
	}
}

// DefaultExclusions are the trees every snapshot leaves out: git's own
// state, and dependency and build trees that tools regenerate and that
// would make checkpoints slow and large. A repository cannot add to them
// (its .gitignore is the repository author's word, and a hostile one could
// exclude everything).
func DefaultExclusions() *Exclusions {
	return &Exclusions{Rules: []Rule{
		{Pattern: ".git", Why: "git's own state (history, index, refs, hooks, config): git's to undo (git reflog), never touched by brig"},
		{Pattern: "node_modules", Why: "installed npm packages (npm ci reinstalls them)"},
		{Pattern: "bower_components", Why: "installed bower packages"},
		{Pattern: ".venv", Why: "a Python virtual environment"},
		{Pattern: "venv", Inside: "pyvenv.cfg", Why: "a Python virtual environment"},
		{Pattern: "env", Inside: "pyvenv.cfg", Why: "a Python virtual environment"},
		{Pattern: "__pycache__", Why: "Python bytecode caches"},
		{Pattern: ".pytest_cache", Why: "a pytest cache"},
		{Pattern: ".mypy_cache", Why: "a mypy cache"},
		{Pattern: ".ruff_cache", Why: "a ruff cache"},
		{Pattern: ".tox", Why: "tox environments"},
		{Pattern: ".nox", Why: "nox environments"},
		{Pattern: "target", Beside: []string{"Cargo.toml"}, Why: "Rust build output (cargo build recreates it)"},
		{Pattern: "target", Beside: []string{"pom.xml"}, Why: "Maven build output"},
		{Pattern: ".gradle", Why: "a Gradle cache"},
		{Pattern: "build", Beside: []string{"build.gradle", "build.gradle.kts"}, Why: "Gradle build output"},
		{Pattern: ".next", Why: "Next.js build output"},
		{Pattern: ".nuxt", Why: "Nuxt build output"},
		{Pattern: ".svelte-kit", Why: "SvelteKit build output"},
		{Pattern: ".turbo", Why: "a Turborepo cache"},
		{Pattern: ".parcel-cache", Why: "a Parcel cache"},
		{Pattern: ".angular", Why: "an Angular cache"},
		{Pattern: ".terraform", Why: "Terraform providers and modules"},
		{Pattern: ".zig-cache", Why: "a Zig cache"},
		{Pattern: "zig-cache", Why: "a Zig cache"},
		{Pattern: "dist-newstyle", Why: "cabal build output"},
		{Pattern: ".stack-work", Why: "Stack build output"},
		{Pattern: ".direnv", Why: "a direnv cache"},
	}}
}

// match returns why the directory name (at rel, relative to the snapshot
// root, in the directory dirfd; its own descriptor is sub when it could be
// opened, else -1) is excluded, or "", and whether a rule with a condition
// (Beside, Inside) matched its name: then what excludes it is a file a
// call can make (Store.covers).
func (x *Exclusions) match(dirfd int, rel, name string, sub int) (why string, conditional bool, marker *unix.Stat_t) {
	if x == nil {
		return "", false, nil
	}
	x.once.Do(x.compile)
	for _, set := range [][]int{x.byName[name], x.globbed} {
		for _, i := range set {
			r := x.Rules[i]
			if !r.matches(rel, name) {
				continue
			}
			cond := len(r.Beside) > 0 || r.Inside != ""
			conditional = conditional || cond
			if why, marker := r.applies(dirfd, rel, name, sub); why != "" {
				return why, cond, marker
			}
		}
	}
	return "", conditional, nil
}

// applies returns the rule's reason when it excludes the directory, and
// the file that made its condition hold (nil for a rule without one).
func (r Rule) applies(dirfd int, rel, name string, sub int) (string, *unix.Stat_t) {
	if !r.matches(rel, name) {
		return "", nil
	}
	var marker *unix.Stat_t
	if len(r.Beside) > 0 {
		if marker = anyRegular(dirfd, r.Beside); marker == nil {
			return "", nil
		}
	}
	if r.Inside != "" {
		if sub < 0 {
			return "", nil
		}
		if marker = anyRegular(sub, []string{r.Inside}); marker == nil {
			return "", nil
		}
	}
	return r.Why, marker
}

func (r Rule) matches(rel, name string) bool {
	p := r.Pattern
	if !strings.Contains(p, "/") {
		ok, _ := path.Match(p, name)
		return ok
	}
	p = strings.TrimPrefix(p, "/")
	ok, _ := path.Match(strings.TrimSuffix(p, "/"), rel)
	return ok
}

// anyRegular returns the status of the first of names that is a regular
// file in dirfd, or nil.
func anyRegular(dirfd int, names []string) *unix.Stat_t {
	for _, n := range names {
		if st, err := lstatAt(dirfd, n); err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
			return &st
		}
	}
	return nil
}

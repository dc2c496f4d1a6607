// Package lazyre compiles a package-level regular expression on first use
// instead of in the package's initialisation. Go initialises every package
// a program links before main, and the jail's programs link packages
// (the tools, the policy, the audit) whose expressions they almost never
// use: compiling them all cost each jail process, two per tool call, about
// 2 ms. It owns nothing else.
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that compiles expr the first time it is called
// (and panics then if expr is invalid, as regexp.MustCompile does) and
// returns the same *regexp.Regexp every time.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// Package audit owns `brig audit`: a review of a repository by a model that
// is offered no tools. It collects the workspace's text files inside a
// read-only jail with no network (the collector, package collect, is a Go
// tool of the jail worker), applies the skip rules (vendored, generated,
// binary, lock files, huge files, secret-looking files) and redacts secret-looking values before
// anything leaves the jail, builds a manifest of what the repository runs
// on checkout, build or install, sends the files in one prompt or in chunks
// by token budget (map, then a reduce that merges and de-duplicates), parses
// the model's JSON answer (one retry when it is not valid), and renders the
// report as Markdown and SARIF 2.1.0.
//
// It must not offer tools to the model, read the workspace outside the
// jail, write files (the caller writes the report through the policy and
// the jail), or decide grants (the caller compiles the collector's Spec
// with the policy).
package audit

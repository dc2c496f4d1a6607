package policy

import (
	"go/ast"
	goparser "go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPrepareBuildsEveryLazyTable: each package-level table built at its
// first use (wordSet, sync.OnceValue) is one Prepare builds, so that a
// table added later is not left to a session's first call. It reads the
// package's own source: a table Prepare forgets fails here, naming it.
func TestPrepareBuildsEveryLazyTable(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var lazy, prepared []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := goparser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					vs, ok := s.(*ast.ValueSpec)
					if !ok || len(vs.Values) != 1 {
						continue
					}
					if call, ok := vs.Values[0].(*ast.CallExpr); ok && isLazyCall(call) {
						lazy = append(lazy, vs.Names[0].Name)
					}
				}
			case *ast.FuncDecl:
				if d.Name.Name != "Prepare" || d.Recv != nil {
					continue
				}
				ast.Inspect(d.Body, func(n ast.Node) bool {
					if id, ok := n.(*ast.Ident); ok {
						prepared = append(prepared, id.Name)
					}
					return true
				})
			}
		}
	}
	// The control: the parse found the tables this file was written
	// against, and Prepare itself.
	for _, want := range []string{"readOnlyTools", "tools", "gitSubSpecs", "riskyEnv"} {
		if !slices.Contains(lazy, want) {
			t.Fatalf("the source scan did not find the lazy table %s (found %v)", want, lazy)
		}
	}
	if len(prepared) == 0 {
		t.Fatal("no Prepare function found in the package")
	}
	for _, name := range lazy {
		if !slices.Contains(prepared, name) {
			t.Errorf("%s is built at its first use but Prepare does not build it: add it to Prepare", name)
		}
	}
	Prepare() // and it runs (a table that panics when built would here)
}

// isLazyCall reports whether call is wordSet(…) or sync.OnceValue(…).
func isLazyCall(call *ast.CallExpr) bool {
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		return fn.Name == "wordSet"
	case *ast.SelectorExpr:
		x, ok := fn.X.(*ast.Ident)
		return ok && x.Name == "sync" && fn.Sel.Name == "OnceValue"
	}
	return false
}

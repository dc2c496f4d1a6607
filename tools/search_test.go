package tools

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func rgPath(tb testing.TB) string {
	tb.Helper()
	rg := findRipgrep()
	if rg == "" {
		tb.Skip("ripgrep is not installed")
	}
	return rg
}

func goroot(tb testing.TB) string {
	tb.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		tb.Skipf("go env GOROOT: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "src")
}

// searchBoth runs both engines; limit > 0 overrides the model-facing cap.
func searchBoth(t *testing.T, a searchArgs, limit int) (rg, gof searchOutcome) {
	t.Helper()
	if err := a.validate(); err != nil {
		t.Fatal(err)
	}
	if limit > 0 {
		a.MaxResults = limit
	}
	var err error
	if rg, err = searchRipgrep(context.Background(), a, rgPath(t)); err != nil {
		t.Fatalf("ripgrep: %v", err)
	}
	if gof, err = searchGo(context.Background(), a); err != nil {
		t.Fatalf("go: %v", err)
	}
	return rg, gof
}

func TestSearchEnginesAgreeOnATree(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.go":                "package a\nfunc Foo() {}\n// foo bar\n",
		"b/c.txt":             "FOO\r\nnothing\r\nfoo at end",
		"b/build":             "foo in a file named build\n",
		"node_modules/x/y.js": "foo\n",
		"vendor/v.go":         "foo\n",
		".hidden/h.txt":       "foo\n",
		".env":                "foo=1\n",
		"bin.dat":             "foo\x00bar\n",
		"empty.txt":           "",
		"multi.txt":           "foo\n\nfoo foo\n  \n",
		"src/deep/z_test.go":  "func TestFoo(t *testing.T) {}\n",
		"src/deep/z.go":       "var foo = 1\n",
		"weird name: x.txt":   "foo: bar\n",
		"utf8.txt":            "naïve foo café\n",
	}
	for name, c := range files {
		writeFile(t, filepath.Join(dir, name), c)
	}
	t.Chdir(dir)
	tests := []searchArgs{
		{Pattern: "foo"},
		{Pattern: "foo", IgnoreCase: true},
		{Pattern: "foo", IncludeIgnored: true},
		{Pattern: "^$"},
		{Pattern: `\s+$`},
		{Pattern: `foo\s+foo`},
		{Pattern: "foo$"},
		{Pattern: "f.o", Literal: true},
		{Pattern: "foo", Glob: "*.go"},
		{Pattern: "foo", Glob: "src/**/*_test.go", IgnoreCase: true},
		{Pattern: "foo", Path: "src"},
		{Pattern: "foo", Path: "a.go"},
		{Pattern: "foo", MaxResults: 2},
	}
	for _, a := range tests {
		t.Run(fmt.Sprintf("%+v", a), func(t *testing.T) {
			rg, gof := searchBoth(t, a, 0)
			r, g := formatSearch(a, rg), formatSearch(a, gof)
			if r.Text != g.Text {
				t.Fatalf("ripgrep:\n%s\n\ngo:\n%s", r.Text, g.Text)
			}
		})
	}
	// What the default skips, it skips.
	rg, _ := searchBoth(t, searchArgs{Pattern: "foo"}, 0)
	for _, m := range rg.matches {
		if strings.HasPrefix(m.Path, "node_modules") || strings.HasPrefix(m.Path, "vendor") || strings.HasPrefix(m.Path, ".") || m.Path == "bin.dat" || m.Path == "b/build" {
			t.Errorf("matched a skipped file: %s", m.Path)
		}
	}
	if len(rg.matches) < 5 {
		t.Errorf("only %d matches", len(rg.matches))
	}
}

// The Go engine must find what ripgrep finds on a large real tree.
func TestSearchEnginesAgreeOnGoroot(t *testing.T) {
	if testing.Short() {
		t.Skip("walks GOROOT")
	}
	root := goroot(t)
	for _, p := range []searchArgs{
		{Pattern: `func \(s \*State\)`},
		{Pattern: `^// Deprecated:`},
		{Pattern: `errors\.New\("[a-z]+ [a-z]+"\)`},
		{Pattern: "goroutine leak", IgnoreCase: true},
		{Pattern: "TODO(", Literal: true, Glob: "*.go"},
	} {
		p.Path = root
		t.Run(p.Pattern, func(t *testing.T) {
			rg, gof := searchBoth(t, p, 1<<30) // every match, not a first page
			key := func(m match) string { return fmt.Sprintf("%s:%d:%s", m.Path, m.Line, m.Text) }
			var r, g []string
			for _, m := range rg.matches {
				r = append(r, key(m))
			}
			for _, m := range gof.matches {
				g = append(g, key(m))
			}
			if len(r) == 0 {
				t.Fatal("ripgrep found nothing; the pattern proves nothing")
			}
			if !slices.Equal(r, g) {
				onlyR, onlyG := diffSets(r, g), diffSets(g, r)
				t.Fatalf("%d vs %d matches; only ripgrep: %q; only go: %q", len(r), len(g), first(onlyR, 5), first(onlyG, 5))
			}
			t.Logf("%d matches, same order", len(r))
		})
	}
}

func diffSets(a, b []string) []string {
	in := map[string]bool{}
	for _, s := range b {
		in[s] = true
	}
	var out []string
	for _, s := range a {
		if !in[s] {
			out = append(out, s)
		}
	}
	return out
}

func first(s []string, n int) []string { return s[:min(n, len(s))] }

func benchSearch(b *testing.B, engine func(context.Context, searchArgs) (searchOutcome, error)) {
	root := goroot(b)
	patterns := []searchArgs{
		{Pattern: `func \(s \*State\)`, Path: root},
		{Pattern: "goroutine leak", IgnoreCase: true, Path: root},
		{Pattern: `errors\.New\("[a-z]+ [a-z]+"\)`, Path: root},
	}
	for i := range patterns {
		if err := patterns[i].validate(); err != nil {
			b.Fatal(err)
		}
		patterns[i].MaxResults = 1 << 30
	}
	b.ResetTimer()
	for b.Loop() {
		for _, p := range patterns {
			if _, err := engine(context.Background(), p); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkSearchRipgrep and BenchmarkSearchGo search GOROOT/src for three
// patterns with no result cap (the worst case: every file is read).
func BenchmarkSearchRipgrep(b *testing.B) {
	rg := rgPath(b)
	benchSearch(b, func(ctx context.Context, a searchArgs) (searchOutcome, error) { return searchRipgrep(ctx, a, rg) })
}

func BenchmarkSearchGo(b *testing.B) {
	b.Logf("GOMAXPROCS=%d", runtime.GOMAXPROCS(0))
	benchSearch(b, searchGo)
}

func TestFindRipgrepNeedsNoPath(t *testing.T) {
	t.Setenv("PATH", "")
	if _, err := os.Stat("/usr/bin/rg"); err != nil {
		t.Skip("no /usr/bin/rg")
	}
	if got := findRipgrep(); got != "/usr/bin/rg" {
		t.Fatalf("findRipgrep() = %q", got)
	}
}

// TestSearchNoMatchesSaysWhatItSkipped (new user, 2026-12-02): the only
// match was in a file over the size bound, and "no matches" read as
// "nowhere". An empty result names what was not searched; control: a
// match in a file within the bound is found.
func TestSearchNoMatchesSaysWhatItSkipped(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("filler line\n"), MaxSearchFileBytes/12+1)
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), append(big, "NEEDLE\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "small.txt"), []byte("a FOUND line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := call(t, SearchCode, obj{"pattern": "NEEDLE", "path": dir})
	if !strings.HasPrefix(res.Text, "no matches [not searched: hidden files,") || !strings.Contains(res.Text, "files over 4 MiB") {
		t.Errorf("empty search: %q", res.Text)
	}
	res = call(t, SearchCode, obj{"pattern": "NEEDLE", "path": dir, "include_ignored": true})
	if !strings.HasPrefix(res.Text, "no matches [not searched: binary files and files over 4 MiB") {
		t.Errorf("empty search with include_ignored: %q", res.Text)
	}
	if res := call(t, SearchCode, obj{"pattern": "NEEDLE|FOUND", "path": dir}); !strings.Contains(res.Text, "small.txt:1:a FOUND line") || strings.Contains(res.Text, "not searched") {
		t.Errorf("control: %q", res.Text)
	}
}

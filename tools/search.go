package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"

	"brig/policy/toolcall"
	"brig/tools/textfile"
)

type searchArgs struct {
	Pattern        string `json:"pattern"`
	Path           string `json:"path,omitempty"`
	Glob           string `json:"glob,omitempty"`
	IgnoreCase     bool   `json:"ignore_case,omitempty"`
	Literal        bool   `json:"literal,omitempty"`
	IncludeIgnored bool   `json:"include_ignored,omitempty"`
	MaxResults     int    `json:"max_results,omitempty"`
}

func (a *searchArgs) validate() error {
	if a.Pattern == "" {
		return errors.New("pattern is required")
	}
	if _, err := a.regexp(); err != nil {
		return fmt.Errorf("pattern is not a valid regular expression (set literal to search for the text as is): %v", err)
	}
	if a.Glob != "" && !doublestar.ValidatePattern(a.Glob) {
		return fmt.Errorf("glob %q is not a valid pattern", a.Glob)
	}
	if a.MaxResults < 0 {
		return errors.New("max_results must not be negative")
	}
	if a.MaxResults == 0 || a.MaxResults > MaxSearchMatches {
		a.MaxResults = MaxSearchMatches
	}
	if a.Path == "" {
		a.Path = "."
	}
	return nil
}

func (a *searchArgs) pathFields() []*string { return []*string{&a.Path} }

// regexp compiles the pattern the way both engines read it: one line at a
// time (^ and $ at line ends), RE2 syntax.
func (a searchArgs) regexp() (*regexp.Regexp, error) {
	p := a.Pattern
	if a.Literal {
		p = regexp.QuoteMeta(p)
	}
	flags := "(?m)"
	if a.IgnoreCase {
		flags = "(?mi)"
	}
	return regexp.Compile(flags + p)
}

func searchCodeDef() Definition {
	return define(SearchCode, toolcall.EffectRead,
		fmt.Sprintf("Search file contents with a regular expression (RE2/ripgrep syntax, one line at a time). Output lines are path:line:text, in path order, at most max_results (default and maximum %d) and %d KiB. Hidden files and %s are skipped unless include_ignored is set; binary files and files over %d MiB are skipped. .gitignore is not consulted.",
			MaxSearchMatches, MaxSearchBytes>>10, strings.Join(skippedDirs()[3:], ", "), MaxSearchFileBytes>>20),
		`{"type":"object","properties":{`+
			`"pattern":{"type":"string","description":"Regular expression (or text, with literal)"},`+
			`"path":{"type":"string","description":"File or directory to search; default the workspace root"},`+
			`"glob":{"type":"string","description":"Only files matching this glob, e.g. *.go or src/**/*.ts (without / it matches the file name)"},`+
			`"ignore_case":{"type":"boolean"},`+
			`"literal":{"type":"boolean","description":"Treat pattern as plain text"},`+
			`"include_ignored":{"type":"boolean","description":"Also search hidden files and the normally skipped directories"},`+
			`"max_results":{"type":"integer","minimum":1,"maximum":`+fmt.Sprint(MaxSearchMatches)+`}`+
			`},"required":["pattern"],"additionalProperties":false}`,
		func(a searchArgs) toolcall.Call { return toolcall.Call{Read: []string{a.Path}, Programs: true} },
		runSearchCode)
}

// match is one matching line.
type match struct {
	Path string
	Line int
	Text string
}

// searchOutcome is what an engine found: matches in path order, at most
// the requested number, and whether there were more.
type searchOutcome struct {
	matches []match
	more    bool
	engine  string
}

func runSearchCode(ctx context.Context, a searchArgs) Result {
	if _, err := os.Stat(a.Path); err != nil {
		return fsError("search", a.Path, err)
	}
	out, err := search(ctx, a, findRipgrep())
	if err != nil {
		return fsError("search", a.Path, err)
	}
	return formatSearch(a, out)
}

// search runs ripgrep when rg is a usable path, and the Go engine otherwise
// or when ripgrep could not run.
func search(ctx context.Context, a searchArgs, rg string) (searchOutcome, error) {
	if rg != "" {
		out, err := searchRipgrep(ctx, a, rg)
		if err == nil {
			return out, nil
		}
		if ctx.Err() != nil {
			return searchOutcome{}, ctx.Err()
		}
	}
	// The jail worker runs with one P; searching is worth every core.
	if n := runtime.NumCPU(); runtime.GOMAXPROCS(0) < n {
		runtime.GOMAXPROCS(n)
	}
	return searchGo(ctx, a)
}

// findRipgrep looks for rg where it is usually installed (the jail worker
// has no PATH of its own).
func findRipgrep() string {
	dirs := append(filepath.SplitList(os.Getenv("PATH")), "/usr/bin", "/usr/local/bin", "/bin")
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, "rg")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

func formatSearch(a searchArgs, out searchOutcome) Result {
	var b strings.Builder
	files := map[string]bool{}
	shown := 0
	cut := false
	for _, m := range out.matches {
		text := m.Text
		if len(text) > MaxSearchLineChars {
			text = text[:textfile.TrimPartialRune([]byte(text[:MaxSearchLineChars]))] + "…"
		}
		line := fmt.Sprintf("%s:%d:%s\n", m.Path, m.Line, text)
		if b.Len()+len(line) > MaxSearchBytes {
			cut = true
			break
		}
		b.WriteString(line)
		files[m.Path] = true
		shown++
	}
	switch {
	case len(out.matches) == 0:
		b.WriteString("no matches")
		// What it did not look in, so that "no matches" is not read as
		// "nowhere" (new user: the only match was in a 40 MB file).
		skipped := "hidden files, " + strings.Join(skippedDirs()[3:5], ", ") + " and the like, "
		if a.IncludeIgnored {
			skipped = ""
		}
		fmt.Fprintf(&b, " [not searched: %sbinary files and files over %d MiB; grep in bash reads those]", skipped, MaxSearchFileBytes>>20)
	case out.more || cut:
		fmt.Fprintf(&b, "[showing the first %s in %s; there are more: narrow the pattern, path or glob]", plural(shown, "match", "matches"), plural(len(files), "file", "files"))
	default:
		fmt.Fprintf(&b, "[%s in %s]", plural(shown, "match", "matches"), plural(len(files), "file", "files"))
	}
	return Result{Text: b.String(), Meta: Meta{Path: a.Path, Matches: shown, Truncated: out.more || cut, Engine: out.engine}}
}

// globFilter returns the test a file path must pass for the glob argument:
// a glob without / matches the file name, one with / the path below the
// search root.
func globFilter(a searchArgs) func(root, path string) bool {
	if a.Glob == "" {
		return func(string, string) bool { return true }
	}
	if !strings.Contains(a.Glob, "/") {
		return func(_, p string) bool {
			ok, _ := doublestar.Match(a.Glob, filepath.Base(p))
			return ok
		}
	}
	return func(root, p string) bool {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return false
		}
		ok, _ := doublestar.Match(a.Glob, filepath.ToSlash(rel))
		return ok
	}
}

// searchRipgrep runs rg with the options that make it agree with the Go
// engine: no ignore files, hidden files and the skipped directories left out
// unless asked, size cap, results sorted by path, NUL after each path.
func searchRipgrep(ctx context.Context, a searchArgs, rg string) (searchOutcome, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	args := []string{"--no-config", "--no-ignore", "--no-heading", "--with-filename", "--line-number",
		"--color", "never", "--null", "--sort", "path", "--max-filesize", searchFileSizeRgArg, "--no-messages"}
	if a.IgnoreCase {
		args = append(args, "--ignore-case")
	} else {
		args = append(args, "--case-sensitive")
	}
	if a.Literal {
		args = append(args, "--fixed-strings")
	}
	if a.Glob != "" && !strings.Contains(a.Glob, "/") {
		args = append(args, "--glob", a.Glob)
	}
	if a.IncludeIgnored {
		args = append(args, "--hidden")
	} else {
		for _, d := range skippedDirs()[3:] {
			args = append(args, "--glob", "!"+d)
		}
	}
	args = append(args, "--regexp", a.Pattern, "--", a.Path)
	cmd := exec.CommandContext(ctx, rg, args...)
	cmd.Env = []string{}
	// Not /dev/null: a jail need not grant it.
	cmd.Stdin = strings.NewReader("")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return searchOutcome{}, err
	}
	if err := cmd.Start(); err != nil {
		return searchOutcome{}, fmt.Errorf("start ripgrep: %w", err)
	}
	keep := globFilter(a)
	out := searchOutcome{engine: "ripgrep"}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		path, rest, ok := bytes.Cut(sc.Bytes(), []byte{0})
		if !ok {
			continue
		}
		num, text, ok := bytes.Cut(rest, []byte{':'})
		if !ok {
			continue
		}
		n, err := strconv.Atoi(string(num))
		if err != nil {
			continue
		}
		p := filepath.Clean(string(path))
		if !keep(a.Path, p) {
			continue
		}
		if len(out.matches) == a.MaxResults {
			out.more = true
			cancel() // enough: stop rg
			break
		}
		out.matches = append(out.matches, match{Path: p, Line: n, Text: string(bytes.TrimSuffix(text, []byte{'\r'}))})
	}
	scanErr := sc.Err()
	waitErr := cmd.Wait()
	if out.more {
		return out, nil
	}
	if scanErr != nil {
		return searchOutcome{}, fmt.Errorf("read ripgrep output: %w", scanErr)
	}
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) && ee.ExitCode() == 1 {
		return out, nil // no match
	}
	if waitErr != nil && len(out.matches) == 0 {
		// A pattern rg's regex dialect rejects, or rg could not run in
		// this jail: let the Go engine answer.
		return searchOutcome{}, fmt.Errorf("ripgrep: %v: %s", waitErr, strings.TrimSpace(stderr.String()))
	}
	return out, nil // exit 2 with matches: some files were unreadable
}

// searchGo is the engine used without ripgrep. It walks in the same order
// rg --sort path does and searches files in parallel, in batches, keeping
// the order.
func searchGo(ctx context.Context, a searchArgs) (searchOutcome, error) {
	re, err := a.regexp()
	if err != nil {
		return searchOutcome{}, err
	}
	pf := newPrefilter(re.String())
	keep := globFilter(a)
	skip := skippedDirs()[3:]
	root := filepath.Clean(a.Path)
	var files []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil
		}
		if p != root && !a.IncludeIgnored && (strings.HasPrefix(d.Name(), ".") || slices.Contains(skip, d.Name())) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && keep(root, p) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return searchOutcome{}, err
	}

	out := searchOutcome{engine: "go"}
	workers := runtime.GOMAXPROCS(0)
	const batch = 64
	results := make([][]match, batch)
	for start := 0; start < len(files); start += batch {
		if err := ctx.Err(); err != nil {
			return searchOutcome{}, err
		}
		chunk := files[start:min(start+batch, len(files))]
		clear(results)
		var wg sync.WaitGroup
		next := make(chan int)
		for range min(workers, len(chunk)) {
			wg.Go(func() {
				for i := range next {
					results[i] = searchFile(re, pf, chunk[i], a.MaxResults+1)
				}
			})
		}
		for i := range chunk {
			next <- i
		}
		close(next)
		wg.Wait()
		for _, ms := range results[:len(chunk)] {
			for _, m := range ms {
				if len(out.matches) == a.MaxResults {
					out.more = true
					return out, nil
				}
				out.matches = append(out.matches, m)
			}
		}
	}
	return out, nil
}

// searchFile returns up to limit matching lines of one file. Files that
// cannot be read, are too large, or hold a NUL byte are skipped.
func searchFile(re *regexp.Regexp, pf *prefilter, path string, limit int) []match {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() > MaxSearchFileBytes {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil || bytes.IndexByte(data, 0) >= 0 {
		return nil
	}
	var hay []byte
	if pf != nil {
		hay = pf.haystack(data)
	}
	var out []match
	line, counted := 1, 0 // line number of data[counted]
	for pos := 0; pos < len(data); {
		// A candidate: where the required literal occurs, or where the
		// expression matches in the whole buffer.
		var s int
		if pf != nil {
			if s = pf.next(hay, pos); s < 0 {
				break
			}
		} else {
			loc := re.FindIndex(data[pos:])
			if loc == nil {
				break
			}
			s = pos + loc[0]
		}
		ls := bytes.LastIndexByte(data[:s], '\n') + 1
		if ls == len(data) && len(data) > 0 {
			break // the empty "line" after the final newline is not a line
		}
		le := len(data)
		if i := bytes.IndexByte(data[s:], '\n'); i >= 0 {
			le = s + i
		}
		text := data[ls:le]
		// The whole-buffer match may span lines; the line must match alone.
		if re.Match(text) {
			line += bytes.Count(data[counted:ls], []byte{'\n'})
			counted = ls
			out = append(out, match{Path: path, Line: line, Text: string(bytes.TrimSuffix(text, []byte{'\r'}))})
			if len(out) == limit {
				break
			}
		}
		pos = le + 1
	}
	return out
}

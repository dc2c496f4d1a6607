package collect

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"unicode/utf8"

	"brig/jail"
)

// CollectTool is the name of the jail's Go tool that collects the
// workspace. It is never offered to a model: only `brig audit` invokes it.
const CollectTool = "audit_collect"

// JailTools are the Go tools this package runs inside the jail worker, for
// the jail entry point.
func JailTools() map[string]jail.ToolFunc {
	return map[string]jail.ToolFunc{CollectTool: collectTool}
}

// Limits bound a collection.
type Limits struct {
	// MaxFileBytes: larger files are skipped.
	MaxFileBytes int64 `json:"max_file_bytes"`
	// MaxTotalBytes: the text sent in all; files past it are skipped
	// (build, CI and install files are taken first).
	MaxTotalBytes int64 `json:"max_total_bytes"`
	// MaxSkipped: skipped entries listed one by one; the rest are counted.
	MaxSkipped int `json:"max_skipped"`
}

// DefaultLimits are the collection limits without flags.
func DefaultLimits() Limits {
	return Limits{MaxFileBytes: 256 << 10, MaxTotalBytes: 4 << 20, MaxSkipped: 5000}
}

// OutputBytes is the most a collection with these limits writes to its
// output: the supervisor's cap on the collector's stream is set from it.
func (l Limits) OutputBytes() int64 {
	// JSON escapes at most 6 bytes per byte of text; text is mostly
	// plain, and the collector stops before this in any case.
	return 2*l.MaxTotalBytes + int64(l.MaxSkipped)*512 + 1<<20
}

// File is a file whose (redacted) text is sent.
type File struct {
	Path       string      `json:"path"` // workspace-relative, slash-separated
	Bytes      int64       `json:"bytes"`
	Lines      int         `json:"lines"`
	Text       string      `json:"text"`
	Redactions []Redaction `json:"redactions,omitempty"`
}

// Skip is a file or directory that is not sent, and why.
type Skip struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	Bytes  int64  `json:"bytes,omitempty"`
	Dir    bool   `json:"dir,omitempty"`
	// Exec: the file has an execute bit (a binary that may be run).
	Exec bool `json:"exec,omitempty"`
	// Detail: a symbolic link's target, an error.
	Detail string `json:"detail,omitempty"`
}

// Why a file is not sent.
const (
	ReasonVendored   = "vendored dependencies"
	ReasonOutput     = "build output or cache"
	ReasonVCS        = "version control internals (git's config and hooks are reviewed)"
	ReasonLock       = "lock file"
	ReasonBinary     = "binary"
	ReasonGenerated  = "generated (says so in its first lines)"
	ReasonMinified   = "minified code or a source map"
	ReasonLarge      = "larger than the per-file cap (--max-file-bytes)"
	ReasonBudget     = "over the total budget (--max-bytes)"
	ReasonSecret     = "holds secrets by its name (never sent)"
	ReasonSymlink    = "symbolic link (not followed)"
	ReasonSpecial    = "not a regular file"
	ReasonUnreadable = "unreadable"
	ReasonEmpty      = "empty"
	ReasonDenied     = "denied by your permission rules"
	ReasonOwnReport  = "brig audit's own report (an earlier run's, or where --out or --sarif writes)"
	ReasonMore       = "more skipped entries (not listed one by one)"
)

// Collection is what the collector gathered.
type Collection struct {
	Files   []File `json:"files"`
	Skipped []Skip `json:"skipped"`
}

// Bytes is the size of the text sent.
func (c *Collection) Bytes() int64 {
	var n int64
	for _, f := range c.Files {
		n += int64(len(f.Text))
	}
	return n
}

// Redactions counts the values redacted and the files they were in.
func (c *Collection) Redactions() (values, files int) {
	for _, f := range c.Files {
		if len(f.Redactions) > 0 {
			values += len(f.Redactions)
			files++
		}
	}
	return values, files
}

// record is one line of the collector's output.
type record struct {
	File *File `json:"file,omitempty"`
	Skip *Skip `json:"skip,omitempty"`
}

// Summary is the collector's result message: what Write wrote.
type Summary struct {
	Files   int   `json:"files"`
	Skipped int   `json:"skipped"`
	Bytes   int64 `json:"bytes"`
}

// collectTool runs in the jail worker, whose working directory is the
// workspace: it writes one JSON record per line to standard output.
func collectTool(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	var lim Limits
	if err := json.Unmarshal(raw, &lim); err != nil {
		return nil, fmt.Errorf("audit collector arguments: %w", err)
	}
	w := bufio.NewWriterSize(os.Stdout, 256<<10)
	sum, err := Write(ctx, ".", lim, w)
	if ferr := w.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("write the collection: %w", ferr)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(sum)
}

// ReadCollection decodes the collector's output.
func ReadCollection(out []byte) (*Collection, error) {
	c := &Collection{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var r record
		err := dec.Decode(&r)
		if errors.Is(err, io.EOF) {
			return c, nil
		}
		if err != nil {
			return nil, fmt.Errorf("the collector's output is damaged after %d files: %w", len(c.Files), err)
		}
		switch {
		case r.File != nil:
			c.Files = append(c.Files, *r.File)
		case r.Skip != nil:
			c.Skipped = append(c.Skipped, *r.Skip)
		}
	}
}

// Directories not descended into, by name.
var (
	vendoredDirs = []string{"node_modules", "vendor", "third_party", "third-party", "bower_components", "jspm_packages", "Pods", "Carthage", ".venv", "venv", "site-packages"}
	outputDirs   = []string{"dist", "target", ".next", ".nuxt", ".svelte-kit", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox", ".nox", "coverage", ".gradle", ".terraform", ".cache", ".parcel-cache", ".turbo", ".zig-cache", "zig-cache", "_build", ".dart_tool", ".angular"}
	vcsDirs      = []string{".git", ".hg", ".svn", ".bzr", ".jj"}
	lockFiles    = []string{"package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb", "bun.lock", "Cargo.lock", "go.sum", "poetry.lock", "Pipfile.lock", "uv.lock", "pdm.lock", "composer.lock", "Gemfile.lock", "mix.lock", "flake.lock", "packages.lock.json", "gradle.lockfile", "Podfile.lock", "pubspec.lock", "Package.resolved", "deno.lock"}
	binaryExts   = []string{".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".icns", ".webp", ".tif", ".tiff", ".psd", ".pdf", ".zip", ".gz", ".tgz", ".bz2", ".xz", ".zst", ".7z", ".rar", ".tar", ".jar", ".war", ".ear", ".class", ".so", ".dylib", ".dll", ".exe", ".o", ".a", ".lib", ".obj", ".bin", ".dat", ".db", ".sqlite", ".sqlite3", ".woff", ".woff2", ".ttf", ".otf", ".eot", ".mp3", ".mp4", ".mov", ".avi", ".mkv", ".wav", ".flac", ".ogg", ".webm", ".wasm", ".pyc", ".pyo", ".whl", ".egg", ".deb", ".rpm", ".dmg", ".iso", ".img", ".apk", ".ipa", ".npy", ".npz", ".pkl", ".pickle", ".pt", ".onnx", ".h5", ".parquet", ".avro", ".node"}
	secretExts   = []string{".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx", ".gpg", ".asc", ".ovpn", ".ppk"}
	secretNames  = []string{"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".netrc", ".pgpass", ".htpasswd", ".git-credentials", "credentials", ".vault-token"}
)

// secretName reports whether a file holds secrets by its name alone.
func secretName(base string) bool {
	lower := strings.ToLower(base)
	if lower == ".env" || strings.HasPrefix(lower, ".env.") {
		for _, s := range []string{".example", ".sample", ".template", ".dist", ".defaults", ".default", ".tmpl", ".schema"} {
			if strings.HasSuffix(lower, s) {
				return false
			}
		}
		return true
	}
	return slices.Contains(secretExts, path.Ext(lower)) || slices.Contains(secretNames, lower)
}

// candidate is a regular file found by the walk, not yet read.
type candidate struct {
	path string
	size int64
	exec bool
	role Role
}

// collector writes the records of one collection.
type collector struct {
	lim     Limits
	w       io.Writer
	written int64
	sum     Summary
	listed  int
	more    int64 // skipped entries not listed
}

// encode is one record as a line of JSON (<, > and & as they are: code
// is full of them).
func encode(r record) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (c *collector) emit(r record) error {
	b, err := encode(r)
	if err != nil {
		return err
	}
	return c.write(b)
}

func (c *collector) write(b []byte) error {
	c.written += int64(len(b))
	_, err := c.w.Write(b)
	return err
}

func (c *collector) skip(s Skip) error {
	c.sum.Skipped++
	if c.listed >= c.lim.MaxSkipped {
		c.more++
		return nil
	}
	c.listed++
	if len(s.Detail) > 200 {
		s.Detail = s.Detail[:200]
	}
	return c.emit(record{Skip: &s})
}

// Write walks root and writes the collection to w, one JSON record per
// line (ReadCollection reads it back): first every skipped entry found by
// the walk, then the files in priority order (what runs on checkout,
// install or build first), each read, checked and redacted. The jail's
// collector tool runs it on the workspace.
func Write(ctx context.Context, root string, lim Limits, w io.Writer) (Summary, error) {
	if lim.MaxFileBytes <= 0 || lim.MaxTotalBytes <= 0 {
		return Summary{}, errors.New("audit collector: the limits must be positive")
	}
	if lim.MaxSkipped <= 0 {
		lim.MaxSkipped = DefaultLimits().MaxSkipped
	}
	c := &collector{lim: lim, w: w}
	dir, err := os.OpenRoot(root)
	if err != nil {
		return Summary{}, fmt.Errorf("open the workspace: %w", err)
	}
	defer dir.Close()
	var cands []candidate
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil {
			return rerr
		}
		rel = filepath.ToSlash(rel)
		if err != nil {
			if rel == "." {
				return err
			}
			if serr := c.skip(Skip{Path: rel, Reason: ReasonUnreadable, Dir: d != nil && d.IsDir(), Detail: errText(err)}); serr != nil {
				return serr
			}
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if rel == "." {
			return nil
		}
		name := d.Name()
		switch {
		case d.IsDir():
			reason := ""
			switch {
			case slices.Contains(vcsDirs, name):
				reason = ReasonVCS
				if name == ".git" {
					cands = append(cands, gitFiles(p, rel)...)
				}
			case slices.Contains(vendoredDirs, name):
				reason = ReasonVendored
			case slices.Contains(outputDirs, name):
				reason = ReasonOutput
			}
			if reason != "" {
				if err := c.skip(Skip{Path: rel, Reason: reason, Dir: true}); err != nil {
					return err
				}
				return fs.SkipDir
			}
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			return c.skip(Skip{Path: rel, Reason: ReasonSymlink, Detail: target})
		case !d.Type().IsRegular():
			return c.skip(Skip{Path: rel, Reason: ReasonSpecial, Detail: d.Type().String()})
		}
		info, err := d.Info()
		if err != nil {
			return c.skip(Skip{Path: rel, Reason: ReasonUnreadable, Detail: errText(err)})
		}
		cand := candidate{path: rel, size: info.Size(), exec: info.Mode()&0o111 != 0}
		cand.role, _ = RoleOf(rel)
		lower := strings.ToLower(name)
		switch {
		case secretName(name):
			return c.skip(Skip{Path: rel, Reason: ReasonSecret, Bytes: cand.size})
		case slices.Contains(lockFiles, name):
			return c.skip(Skip{Path: rel, Reason: ReasonLock, Bytes: cand.size})
		case slices.Contains(binaryExts, path.Ext(lower)):
			return c.skip(Skip{Path: rel, Reason: ReasonBinary, Bytes: cand.size, Exec: cand.exec})
		case strings.HasSuffix(lower, ".min.js") || strings.HasSuffix(lower, ".min.css") || strings.HasSuffix(lower, ".map"):
			return c.skip(Skip{Path: rel, Reason: ReasonMinified, Bytes: cand.size})
		case cand.size == 0:
			return c.skip(Skip{Path: rel, Reason: ReasonEmpty})
		case cand.size > lim.MaxFileBytes:
			return c.skip(Skip{Path: rel, Reason: ReasonLarge, Bytes: cand.size, Exec: cand.exec})
		}
		cands = append(cands, cand)
		return nil
	})
	if err != nil {
		return Summary{}, fmt.Errorf("walk the workspace: %w", err)
	}
	// What runs on checkout, install or build goes first, then the rest in
	// path order; a file that does not fit the budget is skipped and the
	// next ones are still tried.
	rank := map[Role]int{RoleRuns: 0, RoleCI: 1, RoleBuild: 2, RoleEntry: 3, "": 4}
	sort.SliceStable(cands, func(i, j int) bool {
		if rank[cands[i].role] != rank[cands[j].role] {
			return rank[cands[i].role] < rank[cands[j].role]
		}
		return cands[i].path < cands[j].path
	})
	var total int64
	fileRoom := lim.OutputBytes() - int64(lim.MaxSkipped)*512
	for _, cand := range cands {
		if err := ctx.Err(); err != nil {
			return Summary{}, err
		}
		f, skip := readCandidate(dir, cand, lim)
		if skip == nil && total+int64(len(f.Text)) > lim.MaxTotalBytes {
			skip = &Skip{Path: cand.path, Reason: ReasonBudget, Bytes: cand.size}
		}
		if skip != nil {
			if err := c.skip(*skip); err != nil {
				return Summary{}, err
			}
			continue
		}
		line, err := encode(record{File: f})
		if err != nil {
			return Summary{}, err
		}
		if c.written+int64(len(line)) > fileRoom {
			// Text that escapes badly (control characters) can outgrow
			// the stream's cap before the text budget: stop short of it.
			if err := c.skip(Skip{Path: cand.path, Reason: ReasonBudget, Bytes: cand.size}); err != nil {
				return Summary{}, err
			}
			continue
		}
		total += int64(len(f.Text))
		c.sum.Files++
		c.sum.Bytes += int64(len(f.Text))
		if err := c.write(line); err != nil {
			return Summary{}, err
		}
	}
	if c.more > 0 {
		if err := c.emit(record{Skip: &Skip{Path: fmt.Sprintf("(%d entries)", c.more), Reason: ReasonMore}}); err != nil {
			return Summary{}, err
		}
	}
	return c.sum, nil
}

// gitFiles are the files of a .git directory that run or govern programs
// later: its config and the hooks that are not samples.
func gitFiles(dir, rel string) []candidate {
	var out []candidate
	if fi, err := os.Lstat(filepath.Join(dir, "config")); err == nil && fi.Mode().IsRegular() {
		out = append(out, candidate{path: rel + "/config", size: fi.Size(), role: RoleRuns})
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "hooks"))
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasSuffix(e.Name(), ".sample") {
			continue
		}
		if fi, err := e.Info(); err == nil {
			out = append(out, candidate{path: rel + "/hooks/" + e.Name(), size: fi.Size(), exec: fi.Mode()&0o111 != 0, role: RoleRuns})
		}
	}
	return out
}

// readCandidate reads one file (never following a link, never blocking on
// a FIFO swapped in since the walk) and decides whether its text is sent.
func readCandidate(dir *os.Root, cand candidate, lim Limits) (*File, *Skip) {
	skip := func(reason, detail string) (*File, *Skip) {
		return nil, &Skip{Path: cand.path, Reason: reason, Bytes: cand.size, Exec: cand.exec, Detail: detail}
	}
	fh, err := dir.OpenFile(filepath.FromSlash(cand.path), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return skip(ReasonUnreadable, errText(err))
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return skip(ReasonSpecial, "changed since the walk")
	}
	data, err := io.ReadAll(io.LimitReader(fh, lim.MaxFileBytes+1))
	if err != nil {
		return skip(ReasonUnreadable, errText(err))
	}
	if int64(len(data)) > lim.MaxFileBytes {
		return skip(ReasonLarge, "")
	}
	if len(data) == 0 {
		return skip(ReasonEmpty, "")
	}
	if isBinary(data) {
		// A file that runs (a hook, a Makefile, package.json) and is
		// text but for a few bytes still runs: npm, make and sh do not
		// mind a stray byte, and one must not hide it from the review.
		// It is sent with those bytes shown (U+FFFD, ␀).
		if cand.role == "" || !mostlyText(data) {
			return skip(ReasonBinary, "")
		}
		data = []byte(strings.ReplaceAll(strings.ToValidUTF8(string(data), "\uFFFD"), "\x00", "␀"))
	}
	if cand.role == "" && len(data) > 16<<10 && generated(data) {
		// Small generated files cost little to send, and a "generated"
		// header is easy to fake: only large ones are left out.
		return skip(ReasonGenerated, "")
	}
	text, reds := Redact(cand.path, string(data))
	lines := strings.Count(text, "\n")
	if !strings.HasSuffix(text, "\n") {
		lines++
	}
	return &File{Path: cand.path, Bytes: int64(len(data)), Lines: lines, Text: text, Redactions: reds}, nil
}

// isBinary: a NUL byte in the first 8 KiB, or text that is not UTF-8.
func isBinary(data []byte) bool {
	head := data[:min(len(data), 8<<10)]
	return bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(data)
}

// mostlyText reports whether fewer than one byte in twenty of data is a
// NUL or part of an invalid UTF-8 sequence.
func mostlyText(data []byte) bool {
	bad := bytes.Count(data, []byte{0})
	for rest := data; len(rest) > 0; {
		r, n := utf8.DecodeRune(rest)
		if r == utf8.RuneError && n == 1 {
			bad++
		}
		rest = rest[n:]
	}
	return bad*20 < len(data)
}

// generated reports whether a file says in its first lines that a tool
// wrote it.
func generated(data []byte) bool {
	head := strings.ToLower(string(data[:min(len(data), 1024)]))
	return (strings.Contains(head, "code generated") && strings.Contains(head, "do not edit")) ||
		strings.Contains(head, "@generated") || strings.Contains(head, "<auto-generated") ||
		strings.Contains(head, "automatically generated") || strings.Contains(head, "autogenerated")
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

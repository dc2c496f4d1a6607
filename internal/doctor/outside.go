package doctor

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"brig/internal/lazyre"
	"brig/internal/sensitive"
)

// Outside is what every tool call can read outside the workspace: the
// default grant as resolved on this machine plus the workspace's [sandbox]
// grants, what is masked inside them, what the environment asked for and
// was refused, and files inside the grants that look like credentials.
type Outside struct {
	Granted []OutsideGrant   `json:"granted"`
	Masked  []OutsideMasked  `json:"masked,omitempty"`
	Refused []OutsideRefused `json:"refused,omitempty"`
	// Flagged are files a call can read that look like credentials
	// (by name or content); their values are never shown.
	Flagged []Flagged `json:"flagged,omitempty"`
	// Unscanned are grants whose scan stopped at its bound.
	Unscanned []string `json:"unscanned,omitempty"`
	Error     string   `json:"error,omitempty"`
}

// OutsideGrant is one granted path.
type OutsideGrant struct {
	Path   string `json:"path"`
	Access string `json:"access"`
	Reason string `json:"reason"`
}

// OutsideMasked is a secret inside a grant that calls cannot read.
type OutsideMasked struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// OutsideRefused is a path the environment named (PATH, GOMODCACHE) that
// is not granted.
type OutsideRefused struct {
	Path   string `json:"path"`
	Source string `json:"source"`
	Why    string `json:"why"`
}

// Flagged is a readable file that looks like a credential.
type Flagged struct {
	Path string `json:"path"`
	Why  string `json:"why"`
}

// SetOutside records what calls can read outside the workspace.
func (r *Report) SetOutside(o Outside) { r.Outside = &o }

// systemTrees are package-managed, world-readable trees: not scanned (a
// file there is readable by every user of the machine anyway).
var systemTrees = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/snap", "/nix", "/dev", "/sys", "/proc"}

// scanBudget bounds the entries walked per granted path.
const scanBudget = 200_000

// ScanForCredentials walks each granted path (except the system trees and
// the masked paths) and flags files that look like credentials: by name
// (sensitive.LooksLikeCredential; key files only when they hold a private
// key) or, for small configuration-like files, by content (registry auth
// tokens, private keys, well-known token prefixes, passwords in URLs). It
// reads at most 64 KiB of a file, never follows a symbolic link and never
// reports a value.
func ScanForCredentials(granted []string, masked []string) (flagged []Flagged, unscanned []string) {
	isMasked := func(p string) bool {
		for _, m := range masked {
			if within(p, m) {
				return true
			}
		}
		return false
	}
	var roots []string
	for _, root := range granted {
		if !slices.Contains(roots, root) && !isMasked(root) && !underAny(root, systemTrees) {
			roots = append(roots, root)
		}
	}
	// Each root on its own goroutine (the walk waits on the disk); a root
	// inside another is skipped by the outer one's walk.
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, root := range roots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var found []Flagged
			n, cut := 0, false
			_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return nil
				}
				if n++; n > scanBudget {
					cut = true
					return fs.SkipAll
				}
				if isMasked(p) || (p != root && slices.Contains(roots, p)) {
					if d.IsDir() {
						return fs.SkipDir
					}
					return nil
				}
				if !d.Type().IsRegular() {
					return nil
				}
				if why := credentialWhy(p, d.Name()); why != "" {
					found = append(found, Flagged{Path: p, Why: why})
				}
				return nil
			})
			mu.Lock()
			defer mu.Unlock()
			flagged = append(flagged, found...)
			if cut {
				unscanned = append(unscanned, root)
			}
		}()
	}
	wg.Wait()
	slices.SortFunc(flagged, func(a, b Flagged) int { return strings.Compare(a.Path, b.Path) })
	slices.Sort(unscanned)
	return flagged, unscanned
}

// keyFileSuffixes name files that are credentials only when they hold a
// private key (public certificates share them).
var keyFileSuffixes = []string{".pem", ".key", ".crt"}

// tokenPatterns are contents that are credentials wherever they are
// (compiled at their first use: only brig doctor needs them).
var tokenPatterns = []struct {
	re  func() *regexp.Regexp
	why string
}{
	{lazyre.New(`(?im)^\s*[^#;\s]*_auth(token)?\s*=\s*\S`), "holds a package registry auth token"},
	{lazyre.New(`-----BEGIN [A-Z ]*PRIVATE KEY-----`), "holds a private key"},
	{lazyre.New(`\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}`), "holds a GitHub token"},
	{lazyre.New(`\bglpat-[A-Za-z0-9_-]{20,}`), "holds a GitLab token"},
	{lazyre.New(`\bxox[abposr]-[0-9]{6,}-[A-Za-z0-9-]{10,}`), "holds a Slack token"},
	{lazyre.New(`\bsk-(ant-|proj-)?[A-Za-z0-9_-]{32,}`), "holds an API key"},
	{lazyre.New(`\bAKIA[0-9A-Z]{16}\b`), "holds an AWS access key"},
	{lazyre.New(`https?://[^/\s:@'"]+:[^/\s@'"]{6,}@[a-z0-9.-]+\.[a-z]{2,}`), "holds a password in a URL"},
}

// testDirs hold fixtures (toolchains ship test keys): not flagged.
var testDirs = map[string]bool{"test": true, "tests": true, "testdata": true, "test-data": true, "fixtures": true, "__tests__": true, "testing": true}

// configLike reports whether a file name looks like a configuration file
// credentials are put in (worth reading for its content): dotfiles, rc
// files, ini-style and TOML files, and a few well-known names. Data
// formats in general (.json, .yml) are not read: toolchains ship
// thousands of them.
func configLike(name string) bool {
	n := strings.ToLower(name)
	if strings.HasPrefix(n, ".") || strings.HasSuffix(n, "rc") {
		return true
	}
	for _, ext := range []string{".conf", ".cfg", ".ini", ".toml", ".env", ".properties"} {
		if strings.HasSuffix(n, ext) {
			return true
		}
	}
	switch n {
	case "config", "config.json", "auth.json", "hosts.yml", "settings.xml", "gradle.properties":
		return true
	}
	return false
}

// credentialWhy says why a file looks like a credential, or "".
func credentialWhy(p, name string) string {
	for _, seg := range strings.Split(filepath.Dir(p), "/") {
		if testDirs[strings.ToLower(seg)] {
			return ""
		}
	}
	lower := strings.ToLower(name)
	keyFile := false
	for _, s := range keyFileSuffixes {
		keyFile = keyFile || strings.HasSuffix(lower, s)
	}
	named := !keyFile && sensitive.LooksLikeCredential(name)
	if !named && !keyFile && !configLike(name) {
		return ""
	}
	b := head(p)
	if keyFile {
		if bytes.Contains(b, []byte("PRIVATE KEY-----")) {
			return "holds a private key"
		}
		return ""
	}
	for _, t := range tokenPatterns {
		if t.re().Match(b) {
			return t.why
		}
	}
	if named && len(b) > 0 {
		return "named like a credential file"
	}
	return ""
}

// head reads the first 64 KiB of a regular file without following a link
// or blocking on a FIFO.
func head(p string) []byte {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	b := make([]byte, 64<<10)
	n, _ := f.Read(b)
	return b[:max(n, 0)]
}

func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if within(p, d) {
			return true
		}
	}
	return false
}

// writeOutside prints the Outside section.
func (r Report) writeOutside(p func(string, ...any)) {
	o := r.Outside
	if o == nil {
		return
	}
	p("\nOutside the workspace, every call can read (the default grant and your [sandbox] grants)\n")
	if o.Error != "" {
		p("  ERROR\t%s\n", o.Error)
		return
	}
	for _, g := range o.Granted {
		p("  %s\t%s\t%s\n", g.Path, describeAccess(g.Access), g.Reason)
	}
	if len(o.Masked) > 0 {
		p("Masked inside those grants (never readable by a call)\n")
		for _, m := range o.Masked {
			p("  %s\t%s\n", m.Path, m.Reason)
		}
	}
	if len(o.Refused) > 0 {
		p("Not granted although your environment names them\n")
		for _, rf := range o.Refused {
			p("  %s %s\t%s\n", rf.Source, rf.Path, rf.Why)
		}
	}
	if len(o.Flagged) > 0 {
		p("WARNING: readable by every call, and looks like a credential (values not shown)\n")
		for _, f := range o.Flagged {
			p("  %s\t%s\n", f.Path, f.Why)
		}
		p("  fix: move the secret out of the granted path, or keep it in a credential helper or keyring\n")
	}
	for _, u := range o.Unscanned {
		p("  note\t%s has more than %d entries; only the first were scanned for credentials\n", u, scanBudget)
	}
}

// describeAccess is a grant's access in words.
func describeAccess(a string) string {
	switch a {
	case "read":
		return "read"
	case "exec":
		return "read, execute"
	case "write":
		return "read, write"
	}
	return a
}

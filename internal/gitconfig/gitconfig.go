// Package gitconfig reads git's configuration files with git's syntax, so
// that brig knows which files and directories a later git run outside the
// jail obeys or executes (core.hooksPath, included files, programs named
// by settings) without ever running git itself.
//
// It owns parsing only: it never writes a file, never runs a program and
// does not decide what is protected (jail.ProtectedPaths does). It is
// deliberately generous where git is conditional: every include and
// includeIf is followed, whatever its condition, because a file git might
// read must be treated as one it will read.
package gitconfig

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Value is one variable assignment in a config file.
type Value struct {
	Section    string // lower-case
	Subsection string // as written (case-sensitive), "" when absent
	Name       string // lower-case
	Value      string // unquoted and unescaped; "true" for a bare name
	File       string
	Line       int
}

// Key is section[.subsection].name, section and name lower-case.
func (v Value) Key() string {
	if v.Subsection != "" {
		return v.Section + "." + v.Subsection + "." + v.Name
	}
	return v.Section + "." + v.Name
}

// maxFileSize bounds what is read of one file: configs are small, and a
// file a call planted must not make brig read gigabytes.
const maxFileSize = 1 << 20

// maxDepth is git's own include depth limit.
const maxDepth = 10

// Parse reads config syntax from r; file names the source in values.
func Parse(r io.Reader, file string) ([]Value, error) {
	p := parser{r: bufio.NewReader(io.LimitReader(r, maxFileSize)), file: file, line: 1}
	return p.parse()
}

// ParseFile parses one file. A missing file is no values and no error.
// It is opened without blocking (a FIFO planted where a config is expected
// must not stall the caller) and must be a regular file.
func ParseFile(path string) ([]Value, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	return Parse(f, path)
}

// Load parses path and every file it includes, recursively (include.path
// and includeIf.<condition>.path, whatever the condition), the way git
// resolves them: "~/" is home, a relative path is relative to the
// including file's directory. It returns the values in order and every
// file that was read or named by an include (whether or not it exists).
// Unreadable files are skipped; what was read is still returned.
func Load(path, home string) (vals []Value, files []string) {
	var walk func(path string, depth int)
	walk = func(path string, depth int) {
		files = append(files, path)
		vs, err := ParseFile(path)
		if err != nil {
			return
		}
		for _, v := range vs {
			vals = append(vals, v)
			if depth >= maxDepth || v.Name != "path" || (v.Section != "include" && v.Section != "includeif") {
				continue
			}
			if inc := ExpandPath(v.Value, home, filepath.Dir(path)); inc != "" {
				walk(inc, depth+1)
			}
		}
	}
	walk(path, 0)
	return vals, files
}

// ExpandPath resolves a pathname value: "~/" is home, "~user/" and
// "%(prefix)/" are not resolved ("" is returned), a relative path is
// relative to base (when base is "", it is returned as given).
func ExpandPath(v, home, base string) string {
	switch {
	case v == "":
		return ""
	case v == "~" || strings.HasPrefix(v, "~/"):
		if home == "" {
			return ""
		}
		return filepath.Join(home, strings.TrimPrefix(v[1:], "/"))
	case strings.HasPrefix(v, "~"), strings.HasPrefix(v, "%("):
		return ""
	case filepath.IsAbs(v):
		return filepath.Clean(v)
	case base == "":
		return v
	}
	return filepath.Join(base, v)
}

// Files are the configuration files git reads for every repository of a
// user, in git's order: the system file, then the global ones. env is the
// environment git would run with (GIT_CONFIG_SYSTEM, GIT_CONFIG_NOSYSTEM,
// GIT_CONFIG_GLOBAL, XDG_CONFIG_HOME, HOME).
func Files(env []string) []string {
	get := func(name string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], name+"="); ok {
				return v
			}
		}
		return ""
	}
	home := get("HOME")
	var out []string
	if get("GIT_CONFIG_NOSYSTEM") == "" {
		if s := get("GIT_CONFIG_SYSTEM"); s != "" {
			out = append(out, s)
		} else {
			out = append(out, "/etc/gitconfig")
		}
	}
	if g := get("GIT_CONFIG_GLOBAL"); g != "" {
		return append(out, g)
	}
	xdg := get("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	if xdg != "" {
		out = append(out, filepath.Join(xdg, "git", "config"))
	}
	if home != "" {
		out = append(out, filepath.Join(home, ".gitconfig"))
	}
	return out
}

type parser struct {
	r          *bufio.Reader
	file       string
	line       int
	section    string
	subsection string
	out        []Value
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", p.file, p.line, fmt.Sprintf(format, args...))
}

// next returns the next byte, or 0 and false at the end.
func (p *parser) next() (byte, bool) {
	c, err := p.r.ReadByte()
	if err != nil {
		return 0, false
	}
	if c == '\n' {
		p.line++
	}
	return c, true
}

func (p *parser) skipLine() {
	for {
		c, ok := p.next()
		if !ok || c == '\n' {
			return
		}
	}
}

func (p *parser) parse() ([]Value, error) {
	// A UTF-8 byte order mark is allowed at the start.
	if b, err := p.r.Peek(3); err == nil && string(b) == "\xef\xbb\xbf" {
		_, _ = p.r.Discard(3)
	}
	for {
		c, ok := p.next()
		switch {
		case !ok:
			return p.out, nil
		case c == '\n' || c == ' ' || c == '\t' || c == '\r':
		case c == '#' || c == ';':
			p.skipLine()
		case c == '[':
			if err := p.header(); err != nil {
				return p.out, err
			}
		case isAlpha(c):
			if p.section == "" {
				return p.out, p.errorf("variable outside a section")
			}
			if err := p.variable(c); err != nil {
				return p.out, err
			}
		default:
			return p.out, p.errorf("unexpected %q", c)
		}
	}
}

// header parses a section header after its '['.
func (p *parser) header() error {
	var name strings.Builder
	for {
		c, ok := p.next()
		switch {
		case !ok || c == '\n':
			return p.errorf("unterminated section header")
		case c == ']':
			s := strings.ToLower(name.String())
			if s == "" {
				return p.errorf("empty section name")
			}
			// [section.subsection] is the deprecated form; its
			// subsection is lower-cased.
			p.section, p.subsection, _ = strings.Cut(s, ".")
			return nil
		case c == ' ' || c == '\t':
			return p.quotedSubsection(strings.ToLower(name.String()))
		case isAlnum(c) || c == '-' || c == '.':
			name.WriteByte(c)
		default:
			return p.errorf("bad character %q in a section name", c)
		}
	}
}

// quotedSubsection parses ` "subsection"]` after the section name.
func (p *parser) quotedSubsection(section string) error {
	c, ok := p.next()
	for ok && (c == ' ' || c == '\t') {
		c, ok = p.next()
	}
	if !ok || c != '"' {
		return p.errorf("expected a quoted subsection name")
	}
	var sub strings.Builder
	for {
		c, ok = p.next()
		switch {
		case !ok || c == '\n':
			return p.errorf("unterminated subsection name")
		case c == '\\':
			if c, ok = p.next(); !ok || c == '\n' {
				return p.errorf("unterminated subsection name")
			}
			sub.WriteByte(c)
		case c == '"':
			if c, ok = p.next(); !ok || c != ']' {
				return p.errorf("expected ] after the subsection name")
			}
			p.section, p.subsection = section, sub.String()
			return nil
		default:
			sub.WriteByte(c)
		}
	}
}

// variable parses `name [= value]` starting at its first character.
func (p *parser) variable(first byte) error {
	line := p.line
	name := []byte{first}
	var c byte
	ok := true
	for {
		c, ok = p.next()
		if !ok || !(isAlnum(c) || c == '-') {
			break
		}
		name = append(name, c)
	}
	for ok && (c == ' ' || c == '\t') {
		c, ok = p.next()
	}
	v := Value{Section: p.section, Subsection: p.subsection, Name: strings.ToLower(string(name)), File: p.file, Line: line}
	switch {
	case !ok || c == '\n':
		v.Value = "true"
	case c == '#' || c == ';':
		p.skipLine()
		v.Value = "true"
	case c == '\r':
		p.skipLine()
		v.Value = "true"
	case c == '=':
		val, err := p.value()
		if err != nil {
			return err
		}
		v.Value = val
	default:
		return p.errorf("bad character %q after variable %s", c, name)
	}
	p.out = append(p.out, v)
	return nil
}

// value parses a value after '=' up to the end of its line.
func (p *parser) value() (string, error) {
	var b strings.Builder
	quoted := false
	pending := 0 // whitespace seen outside quotes, kept only if more follows
	started := false
	for {
		c, ok := p.next()
		if !ok || c == '\n' {
			if quoted {
				return "", p.errorf("unterminated quoted value")
			}
			return b.String(), nil
		}
		if !quoted && (c == ' ' || c == '\t' || c == '\r') {
			if started {
				pending++
			}
			continue
		}
		if !quoted && (c == '#' || c == ';') {
			p.skipLine()
			return b.String(), nil
		}
		for ; pending > 0; pending-- {
			b.WriteByte(' ')
		}
		started = true
		switch c {
		case '"':
			quoted = !quoted
		case '\\':
			e, ok := p.next()
			switch {
			case !ok:
				return "", p.errorf("backslash at the end of the file")
			case e == '\n':
				// line continuation
			case e == 'n':
				b.WriteByte('\n')
			case e == 't':
				b.WriteByte('\t')
			case e == 'b':
				s := b.String()
				if s != "" {
					b.Reset()
					b.WriteString(s[:len(s)-1])
				}
			case e == '\\' || e == '"':
				b.WriteByte(e)
			default:
				return "", p.errorf("bad escape \\%c", e)
			}
		default:
			b.WriteByte(c)
		}
	}
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' }

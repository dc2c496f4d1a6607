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
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
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

// maxFileSize bounds one file: configs are small, and a file a call
// planted must not make brig read gigabytes. A larger file is not read at
// all (it is skipped as an unreadable one is).
const maxFileSize = 1 << 20

// maxDepth is git's own include depth limit.
const maxDepth = 10

// maxFiles bounds the files one Load considers (read, or named by an
// include and found missing or unreadable). A user's configs include a
// handful; a config in a hostile repository's tree may name thousands, or
// itself eight times per level.
const maxFiles = 64

// maxLoadBytes bounds what one Load reads in all: a user's configs are a
// few KiB, and 64 planted files of 1 MiB of `a=b` lines, parsed for every
// call, held a supervisor at 11 GB (red team, round 5). A file that would
// go beyond it is listed and not read, and LoadSelected says so.
const maxLoadBytes = 4 << 20

// Parse reads config syntax from r; file names the source in values.
func Parse(r io.Reader, file string) ([]Value, error) {
	p := parser{r: bufio.NewReader(io.LimitReader(r, maxFileSize)), file: file, line: 1}
	return p.parse()
}

// ParseFile parses one file. A missing file is no values and no error.
// Only a regular file of at most 1 MiB is read: anything else (a FIFO, a
// device, a directory) is an error, and is never opened, or opened in a
// way that cannot block or take a controlling terminal.
func ParseFile(path string) ([]Value, error) {
	vals, _, err := parseFile(path)
	if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	return vals, err
}

// fileID names a file by device and inode, whatever the path it was
// reached by.
type fileID struct{ dev, ino uint64 }

// parseFile reads and parses the file at path (following links, as git
// does) and returns its identity.
func parseFile(path string) ([]Value, fileID, error) {
	data, id, err := readRegular(path)
	if err != nil {
		return nil, id, err
	}
	vals, err := Parse(bytes.NewReader(data), path)
	return vals, id, err
}

// readRegular reads the file at path if it is a regular file of at most
// maxFileSize bytes outside /proc and /sys. It looks before it opens (a
// device or FIFO is not opened at all), opens without blocking and without
// taking a controlling terminal, and checks on the descriptor that what it
// opened is the regular file it looked at.
func readRegular(path string) ([]byte, fileID, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return nil, fileID{}, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	id := fileID{dev: uint64(st.Dev), ino: st.Ino}
	if err := regularAndSmall(path, &st); err != nil {
		return nil, id, err
	}
	var fd int
	var err error
	for {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, id, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var fst unix.Stat_t
	if err := unix.Fstat(fd, &fst); err != nil {
		return nil, id, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if fst.Dev != st.Dev || fst.Ino != st.Ino {
		return nil, id, fmt.Errorf("%s: changed while it was opened", path)
	}
	if err := regularAndSmall(path, &fst); err != nil {
		return nil, id, err
	}
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err != nil {
		return nil, id, &os.PathError{Op: "fstatfs", Path: path, Err: err}
	}
	switch sfs.Type {
	case unix.PROC_SUPER_MAGIC, unix.SYSFS_MAGIC, unix.DEBUGFS_MAGIC, unix.TRACEFS_MAGIC, unix.SECURITYFS_MAGIC:
		return nil, id, fmt.Errorf("%s: a kernel file, not a config file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, id, &os.PathError{Op: "read", Path: path, Err: err}
	}
	if len(data) > maxFileSize {
		return nil, id, fmt.Errorf("%s: larger than %d bytes", path, maxFileSize)
	}
	return data, id, nil
}

func regularAndSmall(path string, st *unix.Stat_t) error {
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("%s: not a regular file", path)
	}
	if st.Size > maxFileSize {
		return fmt.Errorf("%s: larger than %d bytes", path, maxFileSize)
	}
	return nil
}

// Load parses path and every file it includes, recursively (include.path
// and includeIf.<condition>.path, whatever the condition), the way git
// resolves them: "~/" is home, a relative path is relative to the
// including file's directory. It returns the values in order and every
// file that was read or named by an include (whether or not it exists),
// path first, each once. Unreadable files are skipped; what was read is
// still returned.
//
// Each file is read at most once (by device and inode, so a loop, a file
// including itself, or two links to one file add its values once), at
// most maxFiles paths are considered, and only regular files of at most
// 1 MiB are read (see ParseFile): a hostile config cannot make Load
// explode, block, or read a device.
func Load(path, home string) (vals []Value, files []string) {
	l := LoadSelected(path, home, nil)
	return l.Vals, l.Files
}

// Loaded is what LoadSelected found.
type Loaded struct {
	Vals  []Value  // the values kept, in order
	Files []string // every file read or named by an include, path first
	// Truncated: a file was not read because it would have taken the
	// load beyond maxLoadBytes, or an include beyond maxFiles was not
	// followed; what those say is unknown.
	Truncated bool
}

// LoadSelected is Load keeping only the values keep accepts (all when keep
// is nil; includes are followed whatever keep says), and reading at most
// maxLoadBytes in all.
func LoadSelected(path, home string, keep func(Value) bool) Loaded {
	var l Loaded
	listed := map[string]bool{}
	read := map[fileID]bool{}
	budget := maxLoadBytes
	var walk func(path string, depth int)
	walk = func(path string, depth int) {
		if listed[path] {
			return
		}
		if len(listed) >= maxFiles {
			l.Truncated = true
			return
		}
		listed[path] = true
		l.Files = append(l.Files, path)
		data, id, err := readRegular(path)
		if err != nil || read[id] {
			return
		}
		read[id] = true
		if len(data) > budget {
			l.Truncated = true
			return
		}
		budget -= len(data)
		vs, err := Parse(bytes.NewReader(data), path)
		if err != nil {
			return
		}
		for _, v := range vs {
			if keep == nil || keep(v) {
				l.Vals = append(l.Vals, v)
			}
			if depth >= maxDepth || v.Name != "path" || (v.Section != "include" && v.Section != "includeif") {
				continue
			}
			if inc := ExpandPath(v.Value, home, filepath.Dir(path)); inc != "" {
				walk(inc, depth+1)
			}
		}
	}
	walk(path, 0)
	return l
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

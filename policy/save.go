package policy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"brig/internal/fsutil"
	"brig/internal/lazyre"
)

// SaveAllow adds allow rules ("always allow" answers) to the user's rules
// file for a workspace (Files.User), atomically and under a file lock, so two
// brig processes never lose each other's answers. The file is edited as text:
// comments, order and formatting stay as the user wrote them; the new rules
// go at the end of the [permissions] allow array (created when missing).
// Each rule is validated first; one already present is not added twice. The
// result is parsed back before it replaces the file, so a save can never
// leave a policy that does not load.
func SaveAllow(ctx context.Context, file string, rules ...string) error {
	for _, text := range rules {
		if _, err := ParseRule(text, Source{File: file}); err != nil {
			return fmt.Errorf("not saved: %w", err)
		}
	}
	return fsutil.WithLock(ctx, file, func() error {
		data, err := os.ReadFile(file)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("read %s: %w", file, err)
		}
		before, _, err := ParseConfig(file, data)
		if err != nil {
			return fmt.Errorf("not saved: %w (fix the file first)", err)
		}
		for _, text := range rules {
			r, _ := ParseRule(text, Source{})
			if slices.ContainsFunc(before.Rules.Allow, func(o Rule) bool { return o.String() == r.String() }) {
				continue
			}
			if data, err = insertAllow(data, r.String()); err != nil {
				return fmt.Errorf("save %s in %s: %w", text, file, err)
			}
		}
		after, _, err := ParseConfig(file, data)
		if err != nil {
			return fmt.Errorf("save in %s: the edited file would not load (%v); nothing was changed", file, err)
		}
		if len(after.Rules.Allow) < len(before.Rules.Allow) {
			return fmt.Errorf("save in %s: the edit lost rules; nothing was changed", file)
		}
		return fsutil.WriteFileAtomic(file, data, 0o600)
	})
}

var (
	tableHeader = lazyre.New(`^\s*\[`)
	permHeader  = lazyre.New(`^\s*\[\s*permissions\s*\]\s*(#.*)?$`)
	allowKey    = lazyre.New(`^(\s*)allow\s*=\s*`)
)

// insertAllow adds one rule to the allow array of the [permissions] table.
func insertAllow(data []byte, rule string) ([]byte, error) {
	quoted := tomlString(rule)
	lines := strings.SplitAfter(string(data), "\n")
	header := -1
	for i, l := range lines {
		if permHeader().MatchString(strings.TrimRight(l, "\r\n")) {
			header = i
			break
		}
	}
	if header < 0 {
		var b bytes.Buffer
		b.Write(data)
		if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
			b.WriteByte('\n')
		}
		if len(data) > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[permissions]\nallow = [%s]\n", quoted)
		return b.Bytes(), nil
	}
	offset := 0
	for _, l := range lines[:header+1] {
		offset += len(l)
	}
	for i := header + 1; i < len(lines); i++ {
		l := lines[i]
		if tableHeader().MatchString(l) {
			break
		}
		if m := allowKey().FindStringIndex(l); m != nil {
			return insertInArray(data, offset+m[1], quoted)
		}
		offset += len(l)
	}
	// No allow key yet: put one right under the header.
	at := 0
	for _, l := range lines[:header+1] {
		at += len(l)
	}
	ins := fmt.Sprintf("allow = [%s]\n", quoted)
	if at > 0 && data[at-1] != '\n' {
		ins = "\n" + ins
	}
	return slices.Concat(data[:at], []byte(ins), data[at:]), nil
}

// insertInArray appends quoted to the TOML array starting at data[at] ('[').
// It scans strings and comments so a ']' inside them is not taken for the
// end.
func insertInArray(data []byte, at int, quoted string) ([]byte, error) {
	if at >= len(data) || data[at] != '[' {
		return nil, errors.New("the allow key is not an array")
	}
	lastEnd, closing := -1, -1
	for i := at + 1; i < len(data) && closing < 0; i++ {
		switch c := data[i]; c {
		case '#':
			for i < len(data) && data[i] != '\n' {
				i++
			}
		case '"', '\'':
			end, err := stringEnd(data, i)
			if err != nil {
				return nil, err
			}
			i, lastEnd = end, end+1
		case ']':
			closing = i
		case '[', '{':
			return nil, errors.New("the allow array holds nested values")
		}
	}
	if closing < 0 {
		return nil, errors.New("the allow array is not closed")
	}
	if lastEnd < 0 {
		return slices.Concat(data[:closing], []byte(quoted), data[closing:]), nil
	}
	sep := ", "
	if nl := bytes.LastIndexByte(data[:lastEnd], '\n'); bytes.IndexByte(data[at:closing], '\n') >= 0 {
		line := data[nl+1 : lastEnd]
		indent := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
		sep = ",\n" + string(indent)
	}
	return slices.Concat(data[:lastEnd], []byte(sep+quoted), data[lastEnd:]), nil
}

// stringEnd returns the index of the quote closing the TOML string that
// opens at data[i] (basic or literal, single-line or multi-line).
func stringEnd(data []byte, i int) (int, error) {
	q := data[i]
	if bytes.HasPrefix(data[i:], []byte{q, q, q}) {
		end := bytes.Index(data[i+3:], []byte{q, q, q})
		if end < 0 {
			return 0, errors.New("unterminated string")
		}
		return i + 3 + end + 2, nil
	}
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			if q == '"' {
				j++
			}
		case q:
			return j, nil
		case '\n':
			return 0, errors.New("unterminated string")
		}
	}
	return 0, errors.New("unterminated string")
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

package termsafe

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// ConfigError is a configuration file that holds a value brig refuses: a
// character Check refuses, in the value at Key, written on Line of File.
type ConfigError struct {
	File  string
	Line  int    // 0 when it could not be found
	Key   string // dotted path to the value ("permissions.allow[2]")
	Value string
	Err   *CharError
}

func (e *ConfigError) Error() string {
	at := e.File
	if e.Line > 0 {
		at = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	return fmt.Sprintf("%s: %s %s %s: brig refuses control characters and invisible or direction-changing characters in configuration, because the value would not read on the screen the way it acts; write it without them",
		at, e.Key, quote(e.Value), e.Err)
}

// quote shows a refused value in one line, every unsafe character as a
// symbol, and cut if it is long.
func quote(s string) string {
	s = Line(Strict(s))
	if utf8.RuneCountInString(s) > 80 {
		s = string([]rune(s)[:80]) + "…"
	}
	return `"` + s + `"`
}

// CheckTree walks a decoded configuration file (maps, arrays and strings,
// as a TOML or JSON decoder gives them into an `any`) and refuses the
// first key or string value Check refuses, in key order. data is the
// file's text, to find the line it is written on.
func CheckTree(file string, data []byte, tree any) error {
	return walk(file, data, "", tree)
}

func walk(file string, data []byte, key string, v any) error {
	fail := func(k, s string, err error) error {
		ce := err.(*CharError)
		return &ConfigError{File: file, Line: SourceLine(data, ce.Rune, s), Key: k, Value: s, Err: ce}
	}
	join := func(k string) string {
		show := k
		if Check(k) != nil || strings.ContainsAny(k, ". \"") {
			show = quote(k)
		}
		if key == "" {
			return show
		}
		return key + "." + show
	}
	switch t := v.(type) {
	case string:
		if err := Check(t); err != nil {
			return fail(key, t, err)
		}
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := Check(k); err != nil {
				return fail(join(k)+" (a key)", k, err)
			}
			if err := walk(file, data, join(k), t[k]); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range t {
			if err := walk(file, data, fmt.Sprintf("%s[%d]", key, i), e); err != nil {
				return err
			}
		}
	case []map[string]any:
		for i, e := range t {
			if err := walk(file, data, fmt.Sprintf("%s[%d]", key, i), e); err != nil {
				return err
			}
		}
	}
	return nil
}

// SourceLine finds the line (1-based) of data on which the character r of
// value is written: as an escape in a TOML or JSON string (\u001b,
// \U0000001B, \x1b, \e, \r …) or as itself. It is 0 when neither is found.
func SourceLine(data []byte, r rune, value string) int {
	best := -1
	consider := func(i int) {
		if i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	lower := asciiLower(data)
	var spellings []string
	if r != utf8.RuneError {
		spellings = append(spellings, fmt.Sprintf(`\u%04x`, r), fmt.Sprintf(`\U%08x`, r))
		if r <= 0xff {
			spellings = append(spellings, fmt.Sprintf(`\x%02x`, r))
		}
		if r > 0xffff {
			r1, r2 := utf16Pair(r)
			spellings = append(spellings, fmt.Sprintf(`\u%04x\u%04x`, r1, r2))
		}
		for _, sp := range spellings {
			consider(bytes.Index(lower, asciiLower([]byte(sp))))
		}
		if short, ok := map[rune]string{0x1b: `\e`, '\b': `\b`, '\f': `\f`, '\r': `\r`, '\n': `\n`}[r]; ok {
			consider(escapeIndex(data, short))
		}
	}
	if best < 0 && value != "" && r != '\n' {
		consider(bytes.Index(data, []byte(value)))
	}
	if best < 0 && r != '\n' && r != utf8.RuneError {
		consider(bytes.IndexRune(data, r))
	}
	if best < 0 {
		return 0
	}
	return bytes.Count(data[:best], []byte("\n")) + 1
}

// escapeIndex finds a backslash escape such as \n that is not itself the
// second half of an escaped backslash (\\n).
func escapeIndex(data []byte, esc string) int {
	for off := 0; ; {
		i := bytes.Index(data[off:], []byte(esc))
		if i < 0 {
			return -1
		}
		at := off + i
		slashes := 0
		for j := at - 1; j >= 0 && data[j] == '\\'; j-- {
			slashes++
		}
		if slashes%2 == 0 {
			return at
		}
		off = at + 1
	}
}

// asciiLower lowers A–Z only, so offsets into the result are offsets into b.
func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

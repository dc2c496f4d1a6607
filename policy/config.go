package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/BurntSushi/toml"
)

// Warning is a problem in a config file that does not stop it from loading
// (an unknown key, say).
type Warning struct {
	Source Source
	Msg    string
}

func (w Warning) String() string { return fmt.Sprintf("%s: %s", w.Source, w.Msg) }

// permissionsFile is the part of a config file this package reads.
type permissionsFile struct {
	Permissions struct {
		Allow []string `toml:"allow"`
		Ask   []string `toml:"ask"`
		Deny  []string `toml:"deny"`
	} `toml:"permissions"`
}

// LoadRules reads the [permissions] table of the TOML file at path:
//
//	[permissions]
//	allow = ["Bash(go test:*)", "Read(~/notes/**)"]
//	deny  = ["Bash(git push:*)"]
//	ask   = ["Bash(npm install:*)"]
//
// A file that does not exist is an empty rule set (a fresh machine). A file
// that exists but cannot be read or parsed, or holds one malformed rule, is
// an error naming the file and line, and none of it is used: a half-read
// policy is worse than none.
func LoadRules(path string) (RuleSet, []Warning, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return RuleSet{}, nil, nil
	}
	if err != nil {
		return RuleSet{}, nil, fmt.Errorf("read the rules in %s: %w", path, err)
	}
	return ParseRules(path, data)
}

// ParseRules parses the [permissions] table of a config file's contents;
// file names it in errors and in each rule's Source. Keys of other tables
// belong to other parts of brig and are ignored here.
func ParseRules(file string, data []byte) (RuleSet, []Warning, error) {
	var pf permissionsFile
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&pf)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return RuleSet{}, nil, fmt.Errorf("%s:%d: %s", file, pe.Position.Line, pe.Message)
		}
		return RuleSet{}, nil, fmt.Errorf("%s: %w", file, err)
	}
	var warnings []Warning
	for _, k := range md.Undecoded() {
		if len(k) > 0 && k[0] == "permissions" {
			warnings = append(warnings, Warning{
				Source: Source{File: file, Line: lineOf(data, k[len(k)-1])},
				Msg:    fmt.Sprintf("unknown key %q ignored (the [permissions] table takes allow, ask and deny)", k.String()),
			})
		}
	}
	used := map[int]bool{}
	parse := func(texts []string) ([]Rule, error) {
		var out []Rule
		for _, text := range texts {
			src := Source{File: file, Line: ruleLine(data, text, used)}
			r, err := ParseRule(text, src)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, nil
	}
	var rs RuleSet
	if rs.Allow, err = parse(pf.Permissions.Allow); err != nil {
		return RuleSet{}, nil, err
	}
	if rs.Ask, err = parse(pf.Permissions.Ask); err != nil {
		return RuleSet{}, nil, err
	}
	if rs.Deny, err = parse(pf.Permissions.Deny); err != nil {
		return RuleSet{}, nil, err
	}
	return rs, warnings, nil
}

// ruleLine finds the line on which a rule's string is written (the decoder
// does not report positions of array elements). Each occurrence is used
// once, so a rule written twice gets both of its lines.
func ruleLine(data []byte, text string, used map[int]bool) int {
	for _, q := range []string{`"` + text + `"`, `'` + text + `'`} {
		for off := 0; ; {
			i := bytes.Index(data[off:], []byte(q))
			if i < 0 {
				break
			}
			at := off + i
			if !used[at] {
				used[at] = true
				return bytes.Count(data[:at], []byte("\n")) + 1
			}
			off = at + 1
		}
	}
	return 0
}

// lineOf returns the first line (1-based) containing s, or 0.
func lineOf(data []byte, s string) int {
	for i, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, s) {
			return i + 1
		}
	}
	return 0
}

package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/BurntSushi/toml"

	"brig/internal/pin"
)

// Warning is a problem in a config file that does not stop it from loading
// (an unknown key, say).
type Warning struct {
	Source Source
	Msg    string
}

func (w Warning) String() string { return fmt.Sprintf("%s: %s", w.Source, w.Msg) }

// configFile is the part of a config file this package reads.
type configFile struct {
	Permissions struct {
		Allow []string `toml:"allow"`
		Ask   []string `toml:"ask"`
		Deny  []string `toml:"deny"`
	} `toml:"permissions"`
	Sandbox Sandbox      `toml:"sandbox"`
	Agent   Agent        `toml:"agent"`
	Limits  LimitsConfig `toml:"limits"`
}

// Agent is the [agent] table: defaults for the agent that a flag overrides.
//
//	[agent]
//	model = "claude-sonnet-4-5"
//	web_search = true   # the provider's own server-side web search
type Agent struct {
	Model     string `toml:"model" json:"model,omitempty"`
	WebSearch bool   `toml:"web_search" json:"web_search,omitempty"`
}

// merge lets o's settings override s's.
func (a Agent) merge(o Agent) Agent {
	if o.Model != "" {
		a.Model = o.Model
	}
	a.WebSearch = a.WebSearch || o.WebSearch
	return a
}

// Sandbox is the [sandbox] table: what every bash call of the workspace is
// granted beyond the defaults.
//
//	[sandbox]
//	network = true          # the host network for bash calls
//	unix_sockets = false    # AF_UNIX sockets (reach host sockets: see README)
//	read  = ["~/notes"]     # extra read roots
//	write = ["../build-out"] # extra writable roots
//	env   = ["CC", "CFLAGS_*"] # environment names passed through (never credentials)
//
// Relative paths are relative to the workspace; `~/` is the home directory.
type Sandbox struct {
	Network     bool     `toml:"network" json:"network"`
	UnixSockets bool     `toml:"unix_sockets" json:"unix_sockets"`
	Read        []string `toml:"read" json:"read,omitempty"`
	Write       []string `toml:"write" json:"write,omitempty"`
	Env         []string `toml:"env" json:"env,omitempty"`
}

// merge adds o's grants to s.
func (s Sandbox) merge(o Sandbox) Sandbox {
	return Sandbox{
		Network:     s.Network || o.Network,
		UnixSockets: s.UnixSockets || o.UnixSockets,
		Read:        append(append([]string(nil), s.Read...), o.Read...),
		Write:       append(append([]string(nil), s.Write...), o.Write...),
		Env:         append(append([]string(nil), s.Env...), o.Env...),
	}
}

// empty reports whether the table grants nothing.
func (s Sandbox) empty() bool {
	return !s.Network && !s.UnixSockets && len(s.Read)+len(s.Write)+len(s.Env) == 0
}

// Config is what one file says: its rules and its sandbox grants.
type Config struct {
	Rules   RuleSet
	Sandbox Sandbox
	Agent   Agent
	Limits  LimitsConfig
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
	c, _, w, err := LoadConfig(path)
	return c.Rules, w, err
}

// LoadConfig reads the [permissions] and [sandbox] tables of the file at
// path, and returns its contents' SHA-256 (hex; empty when the file does not
// exist) for trust pinning. The rules of LoadRules apply.
func LoadConfig(path string) (Config, string, []Warning, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Config{}, "", nil, nil
	}
	if err != nil {
		return Config{}, "", nil, fmt.Errorf("read the config %s: %w (fix its permissions or remove it; brig does not start with a half-read policy)", path, err)
	}
	c, w, err := ParseConfig(path, data)
	return c, contentHash(data), w, err
}

// ParseRules parses the [permissions] table of a config file's contents;
// file names it in errors and in each rule's Source. Keys of other tables
// belong to other parts of brig and are ignored here.
func ParseRules(file string, data []byte) (RuleSet, []Warning, error) {
	c, w, err := ParseConfig(file, data)
	return c.Rules, w, err
}

// ParseConfig parses the [permissions] and [sandbox] tables of a config
// file's contents; file names it in errors and in each rule's Source.
func ParseConfig(file string, data []byte) (Config, []Warning, error) {
	var pf configFile
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&pf)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return Config{}, nil, fmt.Errorf("%s:%d: %s", file, pe.Position.Line, pe.Message)
		}
		return Config{}, nil, fmt.Errorf("%s: %w", file, err)
	}
	var warnings []Warning
	for _, k := range md.Undecoded() {
		if len(k) == 0 {
			continue
		}
		takes := map[string]string{"permissions": "allow, ask and deny", "sandbox": "network, unix_sockets, read, write and env", "agent": "model and web_search", "limits": "memory, processes, disk, tmp, file_size and timeout"}[k[0]]
		if takes != "" {
			warnings = append(warnings, Warning{
				Source: Source{File: file, Line: lineOf(data, k[len(k)-1])},
				Msg:    fmt.Sprintf("unknown key %q ignored (the [%s] table takes %s)", k.String(), k[0], takes),
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
		return Config{}, nil, err
	}
	if rs.Ask, err = parse(pf.Permissions.Ask); err != nil {
		return Config{}, nil, err
	}
	if rs.Deny, err = parse(pf.Permissions.Deny); err != nil {
		return Config{}, nil, err
	}
	return Config{Rules: rs, Sandbox: pf.Sandbox, Agent: pf.Agent, Limits: pf.Limits}, warnings, nil
}

// contentHash is the hex SHA-256 that trust is pinned to.
func contentHash(data []byte) string { return pin.Hash(data) }

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

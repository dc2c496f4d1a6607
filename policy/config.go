package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"brig/internal/envguard"
	"brig/internal/lazyre"
	"brig/internal/pin"
	"brig/internal/suggest"
	"brig/internal/termsafe"
	"brig/internal/tomldepth"
	"brig/internal/userfile"
	"brig/jail"
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
//	max_tool_calls = 64 # tool calls run per model answer
//	subagents = 3       # read-only subagents (the task tool) running at once
//	mode = "edit"       # the mode a run starts in without --mode (your own files only)
type Agent struct {
	Model     string `toml:"model" json:"model,omitempty"`
	WebSearch bool   `toml:"web_search" json:"web_search,omitempty"`
	// MaxToolCalls bounds the tool calls run for one model answer (0: the
	// agent's default).
	MaxToolCalls int `toml:"max_tool_calls" json:"max_tool_calls,omitempty"`
	Subagents    int `toml:"subagents" json:"subagents,omitempty"`
	// Mode is the mode a run starts in when --mode is not given (""
	// ask). Only the user's own files set it: a repository's config,
	// trusted or not, does not choose how much runs without asking.
	Mode Mode `toml:"mode" json:"mode,omitempty"`
}

// merge lets o's settings override s's.
func (a Agent) merge(o Agent) Agent {
	if o.Model != "" {
		a.Model = o.Model
	}
	if o.Subagents > 0 {
		a.Subagents = o.Subagents
	}
	a.WebSearch = a.WebSearch || o.WebSearch
	if o.MaxToolCalls > 0 {
		a.MaxToolCalls = o.MaxToolCalls
	}
	if o.Mode != "" {
		a.Mode = o.Mode
	}
	return a
}

// Sandbox is the [sandbox] table: what every bash call of the workspace is
// granted beyond the defaults.
//
//	[sandbox]
//	net_presets = ["npm", "go"] # hosts of package registries (NetPresets)
//	network = true          # every public host, through brig's proxy
//	unix_sockets = false    # AF_UNIX sockets (reach host sockets: see README)
//	read  = ["~/notes"]     # extra read roots
//	write = ["../build-out"] # extra writable roots
//	env   = ["CC", "CFLAGS_*"] # environment names passed through (never credentials)
//
// Relative paths are relative to the workspace; `~/` is the home directory.
type Sandbox struct {
	// NetPresets are named host lists every call may reach (NetPresets).
	NetPresets []string `toml:"net_presets" json:"net_presets,omitempty"`
	// Network lets every call reach every public host through the proxy
	// (as a bare Net allow rule would); hosts are otherwise decided by
	// Net rules and the user's answers.
	Network     bool     `toml:"network" json:"network"`
	UnixSockets bool     `toml:"unix_sockets" json:"unix_sockets"`
	Read        []string `toml:"read" json:"read,omitempty"`
	Write       []string `toml:"write" json:"write,omitempty"`
	Env         []string `toml:"env" json:"env,omitempty"`
}

// merge adds o's grants to s.
func (s Sandbox) merge(o Sandbox) Sandbox {
	return Sandbox{
		NetPresets:  append(append([]string(nil), s.NetPresets...), o.NetPresets...),
		Network:     s.Network || o.Network,
		UnixSockets: s.UnixSockets || o.UnixSockets,
		Read:        append(append([]string(nil), s.Read...), o.Read...),
		Write:       append(append([]string(nil), s.Write...), o.Write...),
		Env:         append(append([]string(nil), s.Env...), o.Env...),
	}
}

// empty reports whether the table grants nothing.
func (s Sandbox) empty() bool {
	return !s.Network && !s.UnixSockets && len(s.Read)+len(s.Write)+len(s.Env)+len(s.NetPresets) == 0
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
	return loadConfig(path, false)
}

// loadConfig is LoadConfig; own says the file is one of the user's own
// (the global config, the user's rules for a workspace), which is read
// only when no one else can have written it (userfile). A repository's
// file is untrusted anyway (what it may do is decided by trust pins), but
// it is read only when it is a regular file itself, not a link, of at
// most 4 MiB: a committed link to /dev/zero or a FIFO must not exhaust
// memory or hang brig's start.
func loadConfig(path string, own bool) (Config, string, []Warning, error) {
	var data []byte
	var err error
	if own {
		data, err = userfile.ReadFile(path, maxConfigSize)
	} else {
		data, err = userfile.ReadRegular(path, maxRepoConfigSize)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return Config{}, "", nil, nil
	}
	var ue *userfile.Error
	var re *userfile.RefusedError
	if errors.As(err, &ue) {
		// It names the file and says what to do.
		return Config{}, "", nil, fmt.Errorf("the config %w", err)
	}
	if errors.As(err, &re) {
		// A directory, a FIFO, a device: not something permissions fix.
		return Config{}, "", nil, fmt.Errorf("the config %w: put a TOML file there or remove it (brig does not start with a half-read policy)", err)
	}
	if err != nil {
		return Config{}, "", nil, fmt.Errorf("read the config %s: %w (fix its permissions or remove it; brig does not start with a half-read policy)", path, err)
	}
	c, w, err := ParseConfig(path, data)
	return c, contentHash(data), w, err
}

// maxConfigSize bounds the user's own config files.
const maxConfigSize = 16 << 20

// maxRepoConfigSize bounds a repository's .brig/config.toml.
const maxRepoConfigSize = 4 << 20

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
	if err := tomldepth.Check(data); err != nil {
		return Config{}, nil, fmt.Errorf("%s:%w", file, err)
	}
	var pf configFile
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&pf)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			// The line of the byte the error is at: the parser counts a
			// newline it did not expect ("[permissions" left open) as
			// the start of the next line.
			line := pe.Position.Line
			if s := pe.Position.Start; s >= 0 && s < len(data) {
				line = 1 + bytes.Count(data[:s], []byte{'\n'})
			}
			if pe.LastKey != "" && !strings.Contains(pe.Message, pe.LastKey) {
				// A value the key's own parser refused ([limits] memory
				// = "lots"): the line alone left the key to be looked up.
				return Config{}, nil, fmt.Errorf("%s:%d: %s: %s", file, line, pe.LastKey, pe.Message)
			}
			return Config{}, nil, fmt.Errorf("%s:%d: %s", file, line, pe.Message)
		}
		if msg := typeMistake(err.Error()); msg != "" {
			return Config{}, nil, fmt.Errorf("%s:%s", file, msg)
		}
		return Config{}, nil, fmt.Errorf("%s: %w", file, err)
	}
	// Every key and string in the file must read on the screen the way it
	// acts (a rule, a sandbox path, an MCP server's command): refused with
	// the line it is written on.
	var tree map[string]any
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&tree); err != nil {
		return Config{}, nil, fmt.Errorf("%s: %w", file, err)
	}
	if err := termsafe.CheckTree(file, data, tree); err != nil {
		return Config{}, nil, err
	}
	var warnings []Warning
	for _, k := range md.Undecoded() {
		if len(k) == 0 {
			continue
		}
		line := lineOf(data, k[len(k)-1])
		if k[0] == "mcp" {
			continue // internal/mcp reads and checks it
		}
		takes := tableKeys[k[0]]
		if takes == nil && len(k) == 1 && md.Type(k...) != "Hash" {
			// A key above every table (allow = […] with no [permissions]
			// line): it is not a table, and the table it belongs to is
			// what to name.
			return Config{}, nil, fmt.Errorf("%s:%d: %q is not in a table; %s — fix it (brig does not start with part of a config ignored)", file, line, k[0], whereKeyBelongs(k[0]))
		}
		if takes == nil {
			// A misspelled table ([permisions]) would leave its rules —
			// deny rules too — silently out of force.
			return Config{}, nil, fmt.Errorf("%s:%d: unknown table [%s]%s; brig reads [permissions], [sandbox], [agent], [limits] and [mcp] — fix the name (brig does not start with part of a config ignored)",
				file, line, k[0], didYouMean(k[0], tableNames()))
		}
		if len(k) == 1 {
			return Config{}, nil, fmt.Errorf("%s:%d: %s must be a table ([%s])", file, line, k[0], k[0])
		}
		msg := fmt.Sprintf("unknown key %q%s (the [%s] table takes %s)", k.String(), didYouMean(k[1], takes), k[0], strings.Join(takes, ", "))
		if k[0] == "permissions" {
			// A misspelled deny or ask would loosen the policy.
			return Config{}, nil, fmt.Errorf("%s:%d: %s; fix it (brig does not start with a rule list ignored)", file, line, msg)
		}
		warnings = append(warnings, Warning{Source: Source{File: file, Line: line}, Msg: msg + "; ignored"})
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
	for _, name := range pf.Sandbox.NetPresets {
		if _, ok := netPresets()[name]; !ok {
			return Config{}, nil, fmt.Errorf("%s:%d: unknown net preset %q%s; the presets are %s", file, lineOf(data, `"`+name+`"`), name, didYouMean(name, NetPresetNames()), strings.Join(NetPresetNames(), ", "))
		}
	}
	// A credential named in [sandbox] env is still kept out (envguard):
	// said at once, not left to a call that finds it empty (new user).
	for _, name := range pf.Sandbox.Env {
		if envguard.IsCredential(strings.TrimSuffix(name, "*")) {
			warnings = append(warnings, Warning{Source: Source{File: file, Line: lineOf(data, `"`+name+`"`)},
				Msg: fmt.Sprintf("[sandbox] env lists %s, whose name looks like a credential: brig never passes one into a call, whatever the config says; ignored (run the command that needs it yourself, outside brig)", name)})
		}
	}
	// Counts of the [agent] table: 0 or less would be read as "the
	// default" and the setting silently ignored.
	for _, n := range []struct {
		key string
		v   int
	}{{"subagents", pf.Agent.Subagents}, {"max_tool_calls", pf.Agent.MaxToolCalls}} {
		if md.IsDefined("agent", n.key) && n.v < 1 {
			return Config{}, nil, fmt.Errorf("%s:%d: [agent] %s is %d; write 1 or more, or leave it out for the default", file, lineOf(data, n.key), n.key, n.v)
		}
	}
	if md.IsDefined("agent", "mode") {
		m, err := ParseMode(string(pf.Agent.Mode))
		if err != nil {
			return Config{}, nil, fmt.Errorf("%s:%d: [agent] mode: %w", file, lineOf(data, "mode"), err)
		}
		pf.Agent.Mode = m // "Edit" is edit, as --mode reads it
	}
	// Floors below which calls fail in ways that do not name the limit
	// (a new user's memory = "2M": Go crashed with a segmentation fault,
	// pyenv's shim could not start; processes = 1: every call failed).
	if m := uint64(pf.Limits.Memory); m != 0 && m < minConfigMemory {
		return Config{}, nil, fmt.Errorf("%s:%d: [limits] memory is %s, below the %s a call's programs need (under it Go, node and python fail to start, often with a bare segmentation fault); write a size such as \"2G\", or leave it out for half the machine's memory", file, lineOf(data, "memory"), jail.Bytes(m), jail.Bytes(minConfigMemory))
	}
	if n := pf.Limits.Processes; n != 0 && n < minConfigProcesses {
		return Config{}, nil, fmt.Errorf("%s:%d: [limits] processes is %d, below the %d a call needs (bash, its command, and the threads Go, cargo or node start for each core); write 256 or more, or leave it out for the default", file, lineOf(data, "processes"), n, minConfigProcesses)
	}
	return Config{Rules: rs, Sandbox: pf.Sandbox, Agent: pf.Agent, Limits: pf.Limits}, warnings, nil
}

// The least [limits] memory and processes a config may set. brig sandbox
// --memory may go lower (down to jail.MinMemory), for a test of one
// small command.
const (
	minConfigMemory    = 128 << 20
	minConfigProcesses = 16
)

// tableKeys are the keys of each table this package reads.
var tableKeys = map[string][]string{
	"permissions": {"allow", "ask", "deny"},
	"sandbox":     {"net_presets", "network", "unix_sockets", "read", "write", "env"},
	"agent":       {"model", "web_search", "max_tool_calls", "subagents", "mode"},
	"mcp":         {"servers"},
	"limits":      {"memory", "processes", "disk", "tmp", "file_size", "timeout"},
}

// whereKeyBelongs says which table takes a key written at the top level,
// or that none does.
func whereKeyBelongs(key string) string {
	for _, t := range tableNames() {
		if slices.Contains(tableKeys[t], key) {
			return fmt.Sprintf("it belongs to [%s]: put a [%s] line above it", t, t)
		}
	}
	return "brig reads keys only inside [permissions], [sandbox], [agent], [limits] and [mcp]"
}

func tableNames() []string { return []string{"permissions", "sandbox", "agent", "limits", "mcp"} }

// didYouMean suggests the known names closest to a misspelled one: every
// one as close as the closest ("modee" is as near "mode" as "model").
func didYouMean(got string, known []string) string {
	best := suggest.Closest(got, known, 2)
	if best == "" {
		return ""
	}
	d := suggest.Distance(got, best)
	var near []string
	for _, k := range known {
		if suggest.Distance(got, k) == d {
			near = append(near, fmt.Sprintf("%q", k))
		}
	}
	return fmt.Sprintf(" (did you mean %s?)", strings.Join(near, " or "))
}

// typeMistake turns the TOML decoder's type error into what the user wrote
// wrong and what is wanted ("LINE: KEY must be …"), or "".
func typeMistake(msg string) string {
	if m := reTableError().FindStringSubmatch(msg); m != nil {
		if g := TOMLValueKind(m[3]); g != "" {
			return fmt.Sprintf("%s: %s must be a table ([%s]), not %s", m[1], m[2], m[2], g)
		}
		return ""
	}
	m := reTypeError().FindStringSubmatch(msg)
	if m == nil {
		return ""
	}
	line, key, got, want := m[1], m[2], m[3], m[4]
	wants := map[string]string{"slice": "a list", "boolean": "true or false", "integer": "a whole number", "string": "a string"}
	w, g := wants[want], TOMLValueKind(got)
	if w == "" || g == "" {
		return ""
	}
	if example := keyExamples[key]; example != "" {
		w += ", e.g. " + example
	}
	if want == "string" && listKeys[key] {
		return fmt.Sprintf("%s: every entry of %s must be a string (one entry is %s); e.g. %s", line, key, g, keyExamples[key])
	}
	return fmt.Sprintf("%s: %s must be %s, not %s", line, key, w, g)
}

// TOMLValueKind names, in the user's words ("a string", "a list"), the
// type the TOML decoder says a value in a file has; "" for one it does
// not name. The config files' messages (here and internal/mcp) use it.
func TOMLValueKind(t string) string {
	switch t {
	case "string":
		return "a string"
	case "int64", "float64":
		return "a number"
	case "bool":
		return "true or false"
	case "slice", "[]any":
		return "a list"
	case "map", "map[string]any":
		return "a table"
	}
	return ""
}

var (
	reTypeError  = lazyre.New(`line (\d+) \(last key "([^"]+)"\): incompatible types: TOML value has type (\S+); destination has type (\w+)`)
	reTableError = lazyre.New(`line (\d+) \(last key "([^"]+)"\): type mismatch for .*: expected table but found (\S+)$`)
)

// listKeys are the keys whose value is a list of strings.
var listKeys = map[string]bool{"permissions.allow": true, "permissions.ask": true, "permissions.deny": true, "sandbox.read": true, "sandbox.write": true, "sandbox.env": true, "sandbox.net_presets": true}

var keyExamples = map[string]string{
	"permissions.allow":    `allow = ["Bash(go test:*)", "Read(~/notes/**)"]`,
	"permissions.ask":      `ask = ["Bash(npm install:*)"]`,
	"permissions.deny":     `deny = ["Bash(git push:*)"]`,
	"sandbox.network":      `network = true`,
	"sandbox.net_presets":  `net_presets = ["npm", "go"]`,
	"sandbox.unix_sockets": `unix_sockets = false`,
	"sandbox.read":         `read = ["~/notes"]`,
	"sandbox.write":        `write = ["../build-out"]`,
	"sandbox.env":          `env = ["CC", "CFLAGS_*"]`,
	"agent.model":          `model = "claude-sonnet-4-5"`,
	"agent.web_search":     `web_search = true`,
	"agent.max_tool_calls": `max_tool_calls = 64`,
	"agent.subagents":      `subagents = 3`,
	"agent.mode":           `mode = "edit"`,
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

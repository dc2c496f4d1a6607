package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"brig/internal/lazyre"
	"brig/internal/pin"
	"brig/internal/termsafe"
	"brig/internal/tomldepth"
	"brig/internal/userfile"
	"brig/policy"
)

// Mode is a server's mode policy.
type Mode string

// The modes.
const (
	// ModeDisabled: the server is not started.
	ModeDisabled Mode = "disabled"
	// ModeReadOnly: the user vouches that the server's tools change
	// nothing; they are offered in plan mode too.
	ModeReadOnly Mode = "read_only"
	// ModeAllow: the server's tools are offered outside plan mode.
	ModeAllow Mode = "allow"
)

// Transport is how brig talks to a server.
type Transport string

// The transports.
const (
	// Stdio servers are long-lived jailed children speaking JSON-RPC on
	// their standard input and output.
	Stdio Transport = "stdio"
	// HTTP servers speak the streamable HTTP transport; brig calls them
	// from the supervisor.
	HTTP Transport = "http"
)

// Default timeouts.
const (
	DefaultStartupTimeout = 30 * time.Second
	DefaultToolTimeout    = 2 * time.Minute
)

// Server is one configured MCP server, validated.
type Server struct {
	Name      string    `json:"name"`
	Source    string    `json:"source"` // the file it came from
	Transport Transport `json:"transport"`
	Mode      Mode      `json:"mode"`

	// Stdio.
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Env is the server's own environment on top of the jail's allowlisted
	// one (values are never printed).
	Env     map[string]string `json:"-"`
	EnvKeys []string          `json:"env,omitempty"`
	Dir     string            `json:"cwd,omitempty"`
	Read    []string          `json:"read,omitempty"`
	Write   []string          `json:"write,omitempty"`
	Network bool              `json:"network"`

	// HTTP.
	URL        string            `json:"url,omitempty"`
	Headers    map[string]string `json:"-"`
	HeaderKeys []string          `json:"headers,omitempty"`

	StartupTimeout time.Duration `json:"startup_timeout"`
	ToolTimeout    time.Duration `json:"tool_timeout"`
}

// serverTable is one [mcp.servers.NAME] table as written.
type serverTable struct {
	Command               string            `toml:"command" json:"command"`
	Args                  []string          `toml:"args" json:"args"`
	Env                   map[string]string `toml:"env" json:"env"`
	Cwd                   string            `toml:"cwd" json:"cwd"`
	Read                  []string          `toml:"read" json:"read"`
	Write                 []string          `toml:"write" json:"write"`
	Network               bool              `toml:"network" json:"network"`
	Mode                  string            `toml:"mode" json:"mode"`
	URL                   string            `toml:"url" json:"url"`
	Headers               map[string]string `toml:"headers" json:"headers"`
	Type                  string            `toml:"type" json:"type"`
	StartupTimeoutSeconds int               `toml:"startup_timeout_seconds" json:"startup_timeout_seconds"`
	ToolTimeoutSeconds    int               `toml:"tool_timeout_seconds" json:"tool_timeout_seconds"`
}

type configFile struct {
	MCP struct {
		Servers map[string]serverTable `toml:"servers"`
	} `toml:"mcp"`
}

// Sources are the places MCP servers are configured for one workspace.
type Sources struct {
	// Files are the policy's config files: Global and User (the user's
	// own), Repo (the repository's .brig/config.toml).
	Files policy.Files
	// RepoTrusted: the user trusted the repository config (its layer is
	// Trusted); only then are its [mcp] servers used.
	RepoTrusted bool
	// TrustStore pins the workspace's .mcp.json (see TrustMCPJSON).
	TrustStore string
	// Env is brig's own environment: ${NAME} in the env and headers of the
	// user's own files is taken from it (never in repository files).
	Env []string
}

// JSONState is what was found of the workspace's .mcp.json.
type JSONState struct {
	Path    string `json:"path"`
	Exists  bool   `json:"exists"`
	Trusted bool   `json:"trusted"`
	SHA256  string `json:"sha256,omitempty"`
}

// Config is every server of a workspace, with what was refused.
type Config struct {
	Servers  []Server  `json:"servers"`
	Warnings []string  `json:"warnings,omitempty"`
	MCPJSON  JSONState `json:"mcp_json"`
}

// MCPJSONPath is the workspace's .mcp.json.
func MCPJSONPath(workspace string) string { return filepath.Join(workspace, ".mcp.json") }

// Load reads the servers of a workspace, in priority order: the user's rules
// file for this workspace, the global config, the repository's
// .brig/config.toml (only when trusted), the workspace's .mcp.json (only
// when its exact content was pinned with `brig mcp trust`). A name defined
// by a higher-priority file hides the same name further down (with a
// warning). Invalid entries are dropped with a warning that says how to fix
// them; a file that does not parse is an error (it was already one for the
// policy).
func Load(src Sources) (Config, error) {
	var cfg Config
	seen := map[string]string{}
	add := func(servers []Server, warnings []string) {
		cfg.Warnings = append(cfg.Warnings, warnings...)
		for _, s := range servers {
			if prev, ok := seen[s.Name]; ok {
				cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s: MCP server %q is also defined in %s, which takes precedence; this one is ignored", s.Source, s.Name, prev))
				continue
			}
			seen[s.Name] = s.Source
			cfg.Servers = append(cfg.Servers, s)
		}
	}
	for _, f := range []struct {
		path string
		own  bool
	}{{src.Files.User, true}, {src.Files.Global, true}, {src.Files.Repo, false}} {
		if f.path == "" {
			continue
		}
		if !f.own && !src.RepoTrusted {
			if servers, _, err := loadTOML(f.path, false, nil); err == nil && len(servers) > 0 {
				cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s defines MCP servers, ignored until you trust it (`brig trust`)", f.path))
			}
			continue
		}
		servers, w, err := loadTOML(f.path, f.own, src.Env)
		if err != nil {
			return Config{}, err
		}
		add(servers, w)
	}
	if src.Files.Workspace != "" {
		st, servers, w, err := loadMCPJSON(src.Files.Workspace, src.TrustStore)
		if err != nil {
			return Config{}, err
		}
		cfg.MCPJSON = st
		switch {
		case st.Exists && !st.Trusted:
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s is not trusted, so its servers are not started; review it and run `brig mcp trust`", st.Path))
		case st.Trusted:
			add(servers, w)
		}
	}
	return cfg, nil
}

// loadTOML reads the [mcp.servers] tables of one TOML file.
func loadTOML(path string, own bool, env []string) ([]Server, []string, error) {
	var data []byte
	var err error
	if own {
		// The user's own config starts programs: only the user may be
		// able to have written it (userfile).
		data, err = userfile.ReadFile(path, 16<<20)
	} else {
		data, err = readRepoFile(path)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, readError(path, err)
	}
	if err := tomldepth.Check(data); err != nil {
		return nil, nil, fmt.Errorf("%s:%w", path, err)
	}
	var cf configFile
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&cf)
	if err != nil {
		if msg := shapeMistake(err.Error()); msg != "" {
			return nil, nil, fmt.Errorf("%s:%s", path, msg)
		}
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	var tree map[string]any
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&tree); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := tablesWhereWanted(tree); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := termsafe.CheckTree(path, data, tree["mcp"]); err != nil {
		return nil, nil, err
	}
	var warnings []string
	for _, k := range md.Undecoded() {
		if len(k) >= 4 && k[0] == "mcp" && k[1] == "servers" {
			warnings = append(warnings, fmt.Sprintf("%s: unknown key %q ignored (an MCP server takes command, args, env, cwd, read, write, network, mode, url, headers, startup_timeout_seconds, tool_timeout_seconds)", path, k.String()))
		} else if len(k) >= 2 && k[0] == "mcp" && k[1] != "servers" {
			warnings = append(warnings, fmt.Sprintf("%s: unknown key %q ignored (MCP servers go in [mcp.servers.NAME] tables)", path, k.String()))
		}
	}
	servers, w := build(path, cf.MCP.Servers, own, env)
	return servers, append(warnings, w...), nil
}

// tablesWhereWanted refuses a value that is not a table where [mcp] wants
// one (mcp.servers, a server's env and headers): the decoder lets it pass
// for an empty table, and the servers, or a server's variables, would be
// silently missing.
func tablesWhereWanted(tree map[string]any) error {
	m, ok := tree["mcp"].(map[string]any)
	if !ok {
		return nil // no [mcp], or the typed decode refused it already
	}
	s, ok := m["servers"]
	if !ok {
		return nil
	}
	servers, ok := s.(map[string]any)
	if !ok {
		return fmt.Errorf("mcp.servers must be tables, one per server: %s", serverExample)
	}
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		srv, _ := servers[name].(map[string]any)
		for _, k := range []string{"env", "headers"} {
			if v, ok := srv[k]; ok {
				if _, ok := v.(map[string]any); !ok {
					return fmt.Errorf("mcp.servers.%s.%s must be a table of strings, e.g. %s = { NAME = \"value\" }", name, k, k)
				}
			}
		}
	}
	return nil
}

// serverExample is how a server is written, for messages.
const serverExample = `[mcp.servers.NAME] with command = "…" (and args, env …) or url = "…"`

// shapeMistake turns the TOML decoder's type error in an [mcp] table into
// what is written wrong and what is wanted ("LINE: KEY must be …"), or ""
// when err is not one (the decoder's own words name Go types).
func shapeMistake(msg string) string {
	m := reShapeError().FindStringSubmatch(msg)
	if m == nil {
		return ""
	}
	line, key, rest := m[1], m[2], m[3]
	k := strings.Split(key, ".")
	switch {
	case k[0] != "mcp":
		return ""
	case len(k) <= 3:
		what := map[int]string{1: "mcp must be a table", 2: "mcp.servers must be tables, one per server", 3: key + " must be a table"}[len(k)]
		return fmt.Sprintf("%s: %s: %s", line, what, serverExample)
	}
	t := reIncompatible().FindStringSubmatch(rest)
	if t == nil {
		return ""
	}
	wants := map[string]string{"slice": `a list of strings, e.g. ["."]`, "string": "a string", "bool": "true or false", "boolean": "true or false", "map": `a table of strings, e.g. { NAME = "value" }`, "int": "a whole number", "integer": "a whole number", "int64": "a whole number"}
	w, g := wants[t[2]], policy.TOMLValueKind(t[1])
	if w == "" || g == "" {
		return ""
	}
	return fmt.Sprintf("%s: %s must be %s, not %s", line, key, w, g)
}

var (
	reShapeError   = lazyre.New(`line (\d+) \(last key "([^"]+)"\): (.*)`)
	reIncompatible = lazyre.New(`incompatible types: TOML value has type (\w+); destination has type (\w+)`)
)

// ServersIn reads the [mcp.servers] tables of a repository's config file
// (no ${NAME} expansion), for `brig trust` to show what trusting it would
// start: the servers, and the entries that would be ignored.
func ServersIn(path string) ([]Server, []string, error) {
	return loadTOML(path, false, nil)
}

// maxRepoFileSize bounds a repository's .brig/config.toml and .mcp.json.
const maxRepoFileSize = 4 << 20

// readRepoFile reads a file that comes with the repository: only a regular
// file itself (not a link, which a repository can point at /dev/zero or a
// FIFO), of at most 4 MiB, opened without blocking.
func readRepoFile(path string) ([]byte, error) {
	return userfile.ReadRegular(path, maxRepoFileSize)
}

// readError is the error for a config file that could not be read: one
// brig refused already names the file and says why.
func readError(path string, err error) error {
	var re *userfile.RefusedError
	if errors.As(err, &re) {
		return err
	}
	return fmt.Errorf("read %s: %w", path, err)
}

// jsonFile is the .mcp.json format other agents use.
type jsonFile struct {
	MCPServers map[string]serverTable `json:"mcpServers"`
}

// loadMCPJSON reads the workspace's .mcp.json when its content is pinned.
func loadMCPJSON(workspace, store string) (JSONState, []Server, []string, error) {
	st := JSONState{Path: MCPJSONPath(workspace)}
	data, err := readRepoFile(st.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil, nil, nil
	}
	if err != nil {
		return st, nil, nil, readError(st.Path, err)
	}
	st.Exists, st.SHA256 = true, pin.Hash(data)
	if st.Trusted, err = pinned(store, workspace, st.SHA256); err != nil || !st.Trusted {
		return st, nil, nil, err
	}
	servers, w, err := parseMCPJSON(st.Path, data)
	return st, servers, w, err
}

func parseMCPJSON(path string, data []byte) ([]Server, []string, error) {
	var jf jsonFile
	if err := json.Unmarshal(data, &jf); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	// A server entry must read on the screen the way it runs: a command
	// holding "\u001b[2K\r" would show as something else.
	var tree any
	if err := json.Unmarshal(data, &tree); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := termsafe.CheckTree(path, data, tree); err != nil {
		return nil, nil, err
	}
	servers, w := build(path, jf.MCPServers, false, nil)
	return servers, w, nil
}

// invalidMark is in the warning of a server entry dropped as invalid.
const invalidMark = " ignored: "

// InvalidServers counts the warnings that say a configured server was
// dropped as invalid (a misspelled key, a bad mode): `brig mcp list` must
// not call such a config "no servers configured" and exit 0.
func InvalidServers(warnings []string) int {
	n := 0
	for _, w := range warnings {
		if strings.Contains(w, ": MCP server \"") && strings.Contains(w, "\""+invalidMark) {
			n++
		}
	}
	return n
}

// serverName is what a server may be called: it prefixes its tools, and a
// tool name must stay unambiguous (no "__", no leading or trailing "_").
var serverName = lazyre.New(`^[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9-])?$`)

// build validates the tables of one file. own says the file is the user's
// (${NAME} references are expanded from env); in a repository's file they
// stay literal, so a repository can never route the user's secrets.
func build(path string, tables map[string]serverTable, own bool, env []string) ([]Server, []string) {
	names := make([]string, 0, len(tables))
	for n := range tables {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Server
	var warnings []string
	for _, name := range names {
		t := tables[name]
		s, err := validate(path, name, t, own, env)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s: MCP server %q"+invalidMark+"%v", path, name, err))
			continue
		}
		out = append(out, s)
	}
	return out, warnings
}

func validate(path, name string, t serverTable, own bool, env []string) (Server, error) {
	s := Server{Name: name, Source: path, Command: t.Command, Args: t.Args, Dir: t.Cwd, Read: t.Read, Write: t.Write, Network: t.Network, URL: t.URL}
	switch {
	case strings.Contains(name, "__"):
		return s, errors.New(`its name contains "__", the separator of server and tool names; rename it`)
	case !serverName().MatchString(name):
		return s, errors.New("a server name is letters, digits, - and _ (not at either end)")
	}
	switch {
	case t.Command != "" && t.URL != "":
		return s, errors.New("give either command (a stdio server) or url (an HTTP server), not both")
	case t.Command != "":
		s.Transport = Stdio
		if t.Type != "" && t.Type != "stdio" {
			return s, fmt.Errorf("type %q does not fit a command", t.Type)
		}
		if len(t.Headers) > 0 {
			return s, errors.New("headers are for HTTP servers")
		}
	case t.URL != "":
		s.Transport = HTTP
		if t.Type != "" && t.Type != "http" && t.Type != "streamable-http" && t.Type != "streamable_http" {
			return s, fmt.Errorf("type %q is not supported (brig speaks streamable HTTP; SSE-only servers are not supported)", t.Type)
		}
		if !strings.HasPrefix(t.URL, "http://") && !strings.HasPrefix(t.URL, "https://") {
			return s, fmt.Errorf("url %q is not http:// or https://", t.URL)
		}
		if len(t.Args)+len(t.Env)+len(t.Read)+len(t.Write) > 0 || t.Cwd != "" || t.Network {
			return s, errors.New("args, env, cwd, read, write and network are for stdio servers (an HTTP server runs elsewhere)")
		}
	default:
		return s, errors.New("give command (a stdio server) or url (an HTTP server)")
	}
	switch Mode(t.Mode) {
	case "":
		s.Mode = ModeAllow
	case ModeDisabled, ModeReadOnly, ModeAllow:
		s.Mode = Mode(t.Mode)
	default:
		return s, fmt.Errorf("mode %q is not disabled, read_only or allow", t.Mode)
	}
	s.StartupTimeout, s.ToolTimeout = DefaultStartupTimeout, DefaultToolTimeout
	if t.StartupTimeoutSeconds > 0 {
		s.StartupTimeout = time.Duration(t.StartupTimeoutSeconds) * time.Second
	}
	if t.ToolTimeoutSeconds > 0 {
		s.ToolTimeout = time.Duration(t.ToolTimeoutSeconds) * time.Second
	}
	var err error
	if s.Env, err = expandAll(t.Env, own, env); err != nil {
		return s, fmt.Errorf("env: %w", err)
	}
	if s.Headers, err = expandAll(t.Headers, own, env); err != nil {
		return s, fmt.Errorf("headers: %w", err)
	}
	for k := range s.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return s, fmt.Errorf("env name %q is not valid", k)
		}
		s.EnvKeys = append(s.EnvKeys, k)
	}
	for k := range s.Headers {
		s.HeaderKeys = append(s.HeaderKeys, k)
	}
	slices.Sort(s.EnvKeys)
	slices.Sort(s.HeaderKeys)
	return s, nil
}

var envRef = lazyre.New(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expandAll expands ${NAME} in values from env when the file is the
// user's own; a reference to an unset variable is an error (a server
// started without its token fails in confusing ways).
func expandAll(m map[string]string, own bool, env []string) (map[string]string, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if !own {
			out[k] = v
			continue
		}
		var missing []string
		out[k] = envRef().ReplaceAllStringFunc(v, func(ref string) string {
			name := envRef().FindStringSubmatch(ref)[1]
			val, ok := lookupEnv(env, name)
			if !ok {
				missing = append(missing, name)
			}
			return val
		})
		if len(missing) > 0 {
			return nil, fmt.Errorf("%s refers to %s, which is not set in brig's environment", k, strings.Join(missing, ", "))
		}
	}
	return out, nil
}

func lookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v, true
		}
	}
	return "", false
}

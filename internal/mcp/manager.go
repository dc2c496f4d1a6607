package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"brig/internal/egress"
	"brig/internal/lazyre"
	"brig/internal/safefs"
	"brig/jail"
	"brig/policy"
	"brig/supervisor"
	"brig/tools"
)

// Separator joins a server's name and its tool's name: server__tool.
const Separator = "__"

// maxLine bounds one JSON-RPC message from a stdio server: a server that
// floods its output breaks its own connection, never brig's memory.
const maxLine = 8 << 20

// maxDescription bounds a tool description put in front of the model.
const maxDescription = 4 << 10

// Starter starts long-lived jailed processes; *supervisor.Supervisor is one.
type Starter interface {
	Start(ctx context.Context, spec jail.Spec, inv jail.Invocation, net egress.Decider) (*supervisor.Process, error)
}

// Options are what the manager needs from the rest of brig.
type Options struct {
	Starter Starter
	// Policy gives the workspace, the machine and the mode; stdio servers'
	// jails are compiled from its places.
	Policy *policy.Policy
	// Native are the native tool names; an MCP tool may not take one.
	Native []string
	// HTTPClient calls HTTP servers (default: a client without timeout;
	// each request is bounded by its context).
	HTTPClient *http.Client
	Logger     *slog.Logger
	// Version is brig's version, sent in the MCP handshake.
	Version string
	// Wait is how long Start waits for the servers before it returns with
	// the ones that are ready; the rest keep starting, and their tools are
	// offered from the first request after they are ready. Zero waits for
	// all of them (each bounded by its startup timeout).
	Wait time.Duration
	// Late is told about each server that was not ready when Start
	// returned, once it is (its error is "" then) or has failed.
	Late func(server string, err string)
}

// State is where a server is in its life.
type State string

// The states.
const (
	StateDisabled State = "disabled" // mode disabled: not started
	StateStarting State = "starting" // started, not yet connected and listed
	StateRunning  State = "running"
	StateFailed   State = "failed" // could not start, connect or list its tools
	StateExited   State = "exited" // was running and ended (crashed, or killed)
	StateStopped  State = "stopped"
)

// ToolInfo is one tool a server offered.
type ToolInfo struct {
	Name        string `json:"name"` // server__tool, as the model sees it
	Tool        string `json:"tool"` // the server's own name
	Description string `json:"description,omitempty"`
	// Refused says why the tool is not offered (a bad or colliding name,
	// an input schema too large).
	Refused string `json:"refused,omitempty"`
	// oversized is why the server's listing was not kept whole (its
	// schema over maxSchema), decided once, when it was listed.
	oversized string
}

// ServerStatus is what `brig mcp list` shows of one server.
type ServerStatus struct {
	Server
	State State      `json:"state"`
	Error string     `json:"error,omitempty"`
	Tools []ToolInfo `json:"tools"`
	// Grant is a stdio server's jail (environment names only).
	Grant *jail.Spec `json:"grant,omitempty"`
}

// Manager owns the configured servers of one session: it starts them,
// lists and names their tools, calls them, and stops them. It is a
// tools.Source.
type Manager struct {
	log     *slog.Logger
	servers []*server
	cancel  context.CancelFunc

	mu      sync.Mutex
	defs    []tools.Definition
	closing bool
}

type server struct {
	cfg    Server
	ctx    context.Context
	cancel context.CancelFunc
	log    *slog.Logger

	mu      sync.Mutex
	state   State
	err     string
	session *sdk.ClientSession
	proc    *supervisor.Process
	grant   *jail.Spec
	tmp     string
	tools   []ToolInfo
	listed  []*sdk.Tool // as the server described them, by the index of tools
}

// Start starts every server that is not disabled, concurrently, each
// bounded by its startup timeout, and returns when all have connected and
// listed their tools or failed. A failure is a state of that server (and a
// warning), never an error: the session goes on without it. ctx bounds the
// servers' lives as Close does.
func Start(ctx context.Context, cfg Config, o Options) *Manager {
	life, cancel := context.WithCancel(ctx)
	m := &Manager{log: o.Logger, cancel: cancel}
	if m.log == nil {
		m.log = slog.Default()
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "brig", Version: orDefault(o.Version, "dev")}, &sdk.ClientOptions{Logger: slog.New(slog.DiscardHandler)})
	var wg sync.WaitGroup
	var started sync.Mutex // Start has returned: later servers are late
	returned := false
	for _, c := range cfg.Servers {
		sctx, scancel := context.WithCancel(life)
		s := &server{cfg: c, ctx: sctx, cancel: scancel, log: m.log.With("mcp_server", c.Name), state: StateStarting}
		m.servers = append(m.servers, s)
		if c.Mode == ModeDisabled {
			s.state = StateDisabled
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.start(client, o)
			if err != nil {
				s.fail(err)
			}
			started.Lock()
			late := returned
			if late {
				m.register(o.Native)
			}
			started.Unlock()
			if late && o.Late != nil {
				msg := ""
				if err != nil {
					msg = err.Error()
				}
				o.Late(c.Name, msg)
			}
		}()
	}
	all := make(chan struct{})
	go func() { wg.Wait(); close(all) }()
	if o.Wait > 0 {
		t := time.NewTimer(o.Wait)
		defer t.Stop()
		select {
		case <-all:
		case <-t.C:
		case <-ctx.Done():
		}
	} else {
		<-all
	}
	started.Lock()
	returned = true
	m.register(o.Native)
	started.Unlock()
	return m
}

// Starting lists the servers still starting.
func (m *Manager) Starting() []string {
	var out []string
	for _, s := range m.servers {
		s.mu.Lock()
		if s.state == StateStarting {
			out = append(out, s.cfg.Name)
		}
		s.mu.Unlock()
	}
	return out
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// start connects to the server and lists its tools.
func (s *server) start(client *sdk.Client, o Options) error {
	var transport sdk.Transport
	switch s.cfg.Transport {
	case Stdio:
		t, err := s.startProcess(o)
		if err != nil {
			return err
		}
		transport = t
	case HTTP:
		transport = &sdk.StreamableClientTransport{
			Endpoint:             s.cfg.URL,
			HTTPClient:           serverClient(o.HTTPClient, s.cfg.URL, s.cfg.Headers),
			MaxRetries:           -1,
			DisableStandaloneSSE: true,
		}
	default:
		return fmt.Errorf("unknown transport %q", s.cfg.Transport)
	}
	// The startup timeout covers the handshake and the tool listing; when
	// it fires the server's context ends, which kills a stdio server's
	// jail and aborts an HTTP request.
	timedOut := make(chan struct{})
	timer := time.AfterFunc(s.cfg.StartupTimeout, func() { close(timedOut); s.cancel() })
	defer timer.Stop()
	describe := func(what string, err error) error {
		if s.proc != nil {
			// A server that died during the handshake: give its exit a
			// moment to be reported, for the message.
			select {
			case <-s.proc.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
		select {
		case <-timedOut:
			return fmt.Errorf("%s: no answer within %s (startup_timeout_seconds)%s", what, s.cfg.StartupTimeout, s.stderrNote())
		default:
		}
		if s.proc != nil && (errors.Is(err, io.EOF) || strings.Contains(err.Error(), "connection closed")) {
			select {
			case <-s.proc.Done():
				// Its exit and stderr say why; the SDK's "connection
				// closed: … client is closing: EOF" only that it went.
				return fmt.Errorf("%s: the server ended before answering%s", what, s.stderrNote())
			default:
			}
		}
		return fmt.Errorf("%s: %v%s", what, err, s.stderrNote())
	}
	session, err := client.Connect(s.ctx, transport, nil)
	if err != nil {
		return describe("connect", err)
	}
	var listed []*sdk.Tool
	var oversized []string
	var kept int
	for t, err := range session.Tools(s.ctx, nil) {
		if err != nil {
			session.Close()
			return describe("list tools", err)
		}
		if len(listed) == maxServerTools {
			// A server that pages on without end would grow the
			// supervisor's memory until its startup timeout.
			session.Close()
			return describe("list tools", fmt.Errorf("more than %d tools: brig takes none of a server that lists so many", maxServerTools))
		}
		// Every request carries every schema: one too large is not
		// kept (it would cost every turn, and the model's text it holds
		// is not bound as a description is), and a server whose schemas
		// add up past maxSchemas is not taken.
		why := ""
		if b, err := json.Marshal(t.InputSchema); err == nil && len(b) > maxSchema {
			why = fmt.Sprintf("its input schema is %d KiB, more than the %d KiB brig sends for a tool", len(b)>>10, maxSchema>>10)
			t.InputSchema = nil
		} else {
			kept += len(b)
		}
		if kept > maxSchemas {
			session.Close()
			return describe("list tools", fmt.Errorf("its tools' input schemas add up to more than %d KiB: brig takes none of a server whose tools would cost every request so much", maxSchemas>>10))
		}
		if len(t.Description) > maxDescription {
			t.Description = tools.CapText(t.Description, maxDescription) // kept as shown, not as sent
		}
		listed, oversized = append(listed, t), append(oversized, why)
	}
	if !timer.Stop() {
		session.Close()
		return describe("list tools", errors.New("timed out"))
	}
	s.mu.Lock()
	s.session, s.state = session, StateRunning
	for i, t := range listed {
		s.tools = append(s.tools, ToolInfo{Name: s.cfg.Name + Separator + t.Name, Tool: t.Name, Description: t.Description, oversized: oversized[i]})
	}
	s.listed = listed
	s.mu.Unlock()
	if s.proc != nil {
		go s.watch()
	}
	return nil
}

// startProcess starts a stdio server in its own jail.
func (s *server) startProcess(o Options) (sdk.Transport, error) {
	tmp := ""
	if !o.Policy.Namespaces() {
		d, err := os.MkdirTemp("", "brig-mcp-"+s.cfg.Name+"-")
		if err != nil {
			return nil, fmt.Errorf("private temporary directory: %w", err)
		}
		tmp, s.tmp = d, d
	}
	spec, err := StdioSpec(s.cfg, o.Policy, tmp)
	if err != nil {
		return nil, err
	}
	shown := spec
	shown.Env = envNames(spec.Env)
	s.grant = &shown
	proc, err := o.Starter.Start(s.ctx, spec, jail.Invocation{Argv: append([]string{s.cfg.Command}, s.cfg.Args...)}, serverNet(o.Policy, s.cfg.Name, o.Logger))
	if err != nil {
		return nil, fmt.Errorf("start %s in the jail: %w", s.cfg.Command, err)
	}
	s.mu.Lock()
	s.proc = proc
	s.mu.Unlock()
	return &sdk.IOTransport{Reader: proc.Stdout, Writer: proc.Stdin, MaxLineLength: maxLine}, nil
}

// watch notices a stdio server that ends by itself.
func (s *server) watch() {
	<-s.proc.Done()
	res, err := s.proc.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != StateRunning {
		return
	}
	s.state = StateExited
	switch {
	case err != nil:
		s.err = err.Error()
	case res.Canceled:
		s.err = "killed"
	case res.Signal != "":
		s.err = "killed by " + res.Signal
	default:
		s.err = fmt.Sprintf("exited with status %d", res.ExitCode)
	}
	if tail := strings.TrimSpace(s.proc.StderrTail()); tail != "" {
		if len(tail) > 1024 {
			tail = "…" + tail[len(tail)-1024:]
		}
		s.err += "; its stderr ends with: " + tail
	}
	s.err += s.unreadableNoteLocked()
	if len(res.Violations) > 0 {
		s.err += fmt.Sprintf(" (it created or changed protected paths, which brig undid: %s)", strings.Join(res.Violations, ", "))
	}
	s.log.Warn("MCP server ended", "reason", s.err)
}

func (s *server) stderrNote() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderrNoteLocked()
}

func (s *server) stderrNoteLocked() string {
	if s.proc == nil {
		return ""
	}
	exit := ""
	select {
	case <-s.proc.Done():
		if res, err := s.proc.Wait(); err != nil {
			exit = "; the jail reported: " + err.Error()
		} else if !res.Canceled {
			exit = fmt.Sprintf("; the server exited with status %d", res.ExitCode)
		}
	default:
	}
	tail := strings.TrimSpace(s.proc.StderrTail())
	if tail == "" {
		return exit + s.unreadableNoteLocked()
	}
	if len(tail) > 1024 {
		tail = "…" + tail[len(tail)-1024:]
	}
	return exit + "; its stderr ends with: " + tail + s.unreadableNoteLocked()
}

// unreadableNoteLocked names a file the server's command line gives by
// absolute path that exists but that its jail may not read: the server
// then says only "No such file or directory" (new user: a script in a
// directory of their own, outside the workspace).
func (s *server) unreadableNoteLocked() string {
	if s.grant == nil {
		return ""
	}
	for _, a := range append([]string{s.cfg.Command}, s.cfg.Args...) {
		_, v, _ := strings.Cut(a, "=") // --require=/path as well
		for _, p := range []string{a, v} {
			if !filepath.IsAbs(p) {
				continue
			}
			p = filepath.Clean(p)
			if _, err := os.Stat(p); err != nil {
				continue
			}
			if ok, _ := s.grant.Allows(p, jail.Read); !ok || !s.grant.HostVisible(p) {
				return fmt.Sprintf(" (brig: %s is outside what this server's jail may read; add read = [%q] to [mcp.servers.%s])", p, filepath.Dir(p), s.cfg.Name)
			}
		}
	}
	return ""
}

func (s *server) fail(err error) {
	s.cancel()
	s.mu.Lock()
	s.state, s.err = StateFailed, err.Error()
	s.mu.Unlock()
	s.log.Warn("MCP server not available", "err", err)
}

// register names every listed tool server__tool and refuses, with a
// warning, names that contain the separator, that providers would reject,
// or that collide with a native tool or an earlier one.
func (m *Manager) register(native []string) {
	// Keyed in lower case: Probe and probe are one name to a person
	// reading an approval, and to some providers (red team, 2026-12-03).
	taken := map[string]string{}
	for _, n := range native {
		taken[strings.ToLower(n)] = "a native tool"
	}
	var defs []tools.Definition
	for _, s := range m.servers {
		s.mu.Lock()
		for i := range s.tools {
			ti := &s.tools[i]
			ti.Refused = "" // decided anew: a server that came later may have taken a name
			switch {
			case ti.oversized != "":
				ti.Refused = ti.oversized
			case ti.Tool == "":
				ti.Refused = "it has no name"
			case strings.Contains(ti.Tool, Separator):
				ti.Refused = fmt.Sprintf("its name contains %q, the separator of server and tool names", Separator)
			case !toolName().MatchString(ti.Name):
				ti.Refused = "the prefixed name is not 1-64 letters, digits, _ and - (what model providers accept)"
			case taken[strings.ToLower(ti.Name)] != "":
				ti.Refused = "its name collides with " + taken[strings.ToLower(ti.Name)]
			}
			if ti.Refused != "" {
				m.log.Warn("MCP tool refused", "server", s.cfg.Name, "tool", ti.Tool, "why", ti.Refused)
				continue
			}
			taken[strings.ToLower(ti.Name)] = "a tool of MCP server " + s.cfg.Name
			defs = append(defs, m.definition(s, *ti, s.listed[i]))
		}
		s.mu.Unlock()
	}
	m.mu.Lock()
	m.defs = defs
	m.mu.Unlock()
}

var toolName = lazyre.New(`^[A-Za-z0-9_-]{1,64}$`)

// definition is one MCP tool as brig offers it.
func (m *Manager) definition(s *server, ti ToolInfo, t *sdk.Tool) tools.Definition {
	schema, required := toolSchema(t.InputSchema)
	desc := ti.Description
	if len(desc) > maxDescription {
		desc = tools.CapText(desc, maxDescription)
	}
	desc = fmt.Sprintf("[MCP server %s] %s", s.cfg.Name, desc)
	check := func(raw json.RawMessage) error { return checkArgs(raw, required) }
	run := func(ctx context.Context, raw json.RawMessage) tools.Result { return s.call(ctx, ti.Tool, raw) }
	return tools.NewExternal(ti.Name, desc, schema, s.cfg.Mode == ModeReadOnly, check, run).WithGrant(s.grant)
}

// toolSchema makes a server's input schema acceptable to providers (an
// object schema) and returns its required properties.
func toolSchema(in any) (json.RawMessage, []string) {
	var m map[string]any
	if b, err := json.Marshal(in); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	if m == nil {
		m = map[string]any{}
	}
	m["type"] = "object"
	if _, ok := m["properties"]; !ok {
		m["properties"] = map[string]any{}
	}
	var required []string
	if r, ok := m["required"].([]any); ok {
		for _, v := range r {
			if s, ok := v.(string); ok {
				required = append(required, s)
			}
		}
	}
	b, _ := json.Marshal(m)
	return b, required
}

// checkArgs refuses what no server could accept: arguments that are not a
// JSON object, too large, or missing a required property. The server
// validates the rest and says so in its result.
func checkArgs(raw json.RawMessage, required []string) error {
	if len(raw) > tools.MaxMCPArgsBytes {
		return fmt.Errorf("invalid arguments: %d bytes, more than the %d an MCP call may send", len(raw), tools.MaxMCPArgsBytes)
	}
	raw = emptyToObject(raw)
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return errors.New("invalid arguments: they must be a JSON object")
	}
	var missing []string
	for _, r := range required {
		if _, ok := obj[r]; !ok {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("invalid arguments: missing required %s", strings.Join(missing, ", "))
	}
	return nil
}

// emptyToObject reads no arguments (nothing, or null) as an empty object.
func emptyToObject(raw json.RawMessage) json.RawMessage {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return json.RawMessage("{}")
	}
	return raw
}

// call runs one tool of the server. Every failure is a model-facing error
// result naming the server.
func (s *server) call(ctx context.Context, tool string, raw json.RawMessage) tools.Result {
	s.mu.Lock()
	session, state, why, proc := s.session, s.state, s.err, s.proc
	s.mu.Unlock()
	if state != StateRunning || session == nil {
		return tools.Result{Text: fmt.Sprintf("MCP server %s is not running (%s: %s); its tools cannot be called in this session", s.cfg.Name, state, why), IsError: true}
	}
	raw = emptyToObject(raw)
	cctx, cancel := context.WithTimeout(ctx, s.cfg.ToolTimeout)
	defer cancel()
	res, err := session.CallTool(cctx, &sdk.CallToolParams{Name: tool, Arguments: raw})
	if err != nil {
		var msg string
		switch {
		case ctx.Err() != nil:
			msg = "cancelled"
		case errors.Is(cctx.Err(), context.DeadlineExceeded):
			msg = fmt.Sprintf("no answer within %s (tool_timeout_seconds)", s.cfg.ToolTimeout)
		default:
			msg = err.Error()
			s.mu.Lock()
			if s.state != StateRunning {
				msg += " (the server " + s.err + ")"
			}
			s.mu.Unlock()
		}
		return tools.Result{Text: fmt.Sprintf("MCP %s%s%s failed: %s", s.cfg.Name, Separator, tool, msg), IsError: true}
	}
	out := convertResult(res)
	// A server that may write the workspace is swept after each of its
	// calls, as a command is after its own: what it planted in a
	// protected path (an .envrc) does not wait for the session's end.
	if proc != nil {
		if undone := proc.Sweep(); len(undone) > 0 {
			out.Text += fmt.Sprintf("\n[the server created or changed protected paths; brig undid it: %s]", strings.Join(undone, ", "))
			out.Meta.Violations = append(out.Meta.Violations, undone...)
		}
	}
	return out
}

// stop ends the server: closes the session and kills its jail.
func (s *server) stop() {
	s.mu.Lock()
	session, proc := s.session, s.proc
	if s.state == StateRunning {
		s.state = StateStopped
	}
	s.mu.Unlock()
	if session != nil {
		done := make(chan struct{})
		go func() { session.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
		}
	}
	s.cancel()
	if proc != nil {
		proc.Kill()
	}
	if s.tmp != "" {
		_ = safefs.RemoveAllUnder(s.tmp) // the server could write it: nothing in it is followed
	}
}

// Tools returns the MCP tools offered (tools.Source). Plan-mode filtering
// is the definitions' own: only read_only servers' tools are offered there.
func (m *Manager) Tools() []tools.Definition {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.defs)
}

// Status reports every configured server, in configuration order.
func (m *Manager) Status() []ServerStatus {
	out := make([]ServerStatus, 0, len(m.servers))
	for _, s := range m.servers {
		s.mu.Lock()
		st := ServerStatus{Server: s.cfg, State: s.state, Error: s.err, Tools: slices.Clone(s.tools), Grant: s.grant}
		s.mu.Unlock()
		if st.Tools == nil {
			st.Tools = []ToolInfo{}
		}
		out = append(out, st)
	}
	return out
}

// Warnings lists the servers that are not available and the tools refused,
// one line each, for the front end to show at start.
func (m *Manager) Warnings() []string {
	var out []string
	for _, st := range m.Status() {
		if st.State == StateFailed || st.State == StateExited {
			out = append(out, fmt.Sprintf("MCP server %s %s: %s", st.Name, st.State, st.Error))
		}
		for _, t := range st.Tools {
			if t.Refused != "" {
				out = append(out, fmt.Sprintf("MCP tool %q of server %s refused: %s", t.Tool, st.Name, t.Refused))
			}
		}
	}
	return out
}

// Close stops every server and waits until their jails are gone.
func (m *Manager) Close() {
	m.mu.Lock()
	if m.closing {
		m.mu.Unlock()
		return
	}
	m.closing = true
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Add(1)
		go func() { defer wg.Done(); s.stop() }()
	}
	wg.Wait()
	m.cancel()
}

// maxServerTools bounds the tools one server may list (its tools/list
// pages, which the server could continue without end).
const maxServerTools = 1000

// maxSchema bounds one tool's input schema (its JSON), and maxSchemas a
// server's together: every request to the model carries them all.
const (
	maxSchema  = 64 << 10
	maxSchemas = 1 << 20
)

// serverClient returns the client for an HTTP server at endpoint: it
// follows a redirect only within the endpoint's origin (scheme, host and
// port) and adds the server's configured headers (its tokens) only to
// requests for that origin. The supervisor makes these requests outside
// any jail and the egress proxy: a redirect elsewhere (another host,
// loopback, a cloud metadata address) is refused, and Go's own removal of
// Authorization on such a redirect does not cover headers a transport
// adds.
func serverClient(c *http.Client, endpoint string, headers map[string]string) *http.Client {
	origin, _ := url.Parse(endpoint)
	cc := *c
	cc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if origin == nil || !sameOrigin(req.URL, origin) {
			return fmt.Errorf("the MCP server at %s redirected to %s, another origin: not followed", endpoint, req.URL.Redacted())
		}
		if len(via) >= 5 {
			return fmt.Errorf("the MCP server at %s redirected more than 5 times", endpoint)
		}
		return nil
	}
	if len(headers) > 0 && origin != nil {
		base := c.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		cc.Transport = headerTransport{base: base, headers: headers, origin: origin}
	}
	return &cc
}

// sameOrigin reports whether u has o's scheme, host and port.
func sameOrigin(u, o *url.URL) bool {
	return strings.EqualFold(u.Scheme, o.Scheme) && strings.EqualFold(u.Hostname(), o.Hostname()) && portOf(u) == portOf(o)
}

// portOf is u's port, or its scheme's default.
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
	origin  *url.URL
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !sameOrigin(r.URL, h.origin) {
		return h.base.RoundTrip(r) // never: CheckRedirect stops first
	}
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// envNames keeps the names of an environment (values may be secrets).
func envNames(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		out = append(out, name)
	}
	return out
}

// serverNet decides the connections of a stdio server granted network, by
// the workspace's Net rules and presets alone: a server runs on its own,
// with no call for the user to be asked about, so a host no rule allows is
// refused (and logged).
func serverNet(p *policy.Policy, name string, log *slog.Logger) egress.Decider {
	return egress.DeciderFunc(func(_ context.Context, r egress.Request) egress.Verdict {
		nd := p.DecideNet(r.Host)
		if nd.Tier == policy.Allow {
			return egress.Verdict{Allow: true, Named: nd.Named, Rule: nd.Rule}
		}
		why := nd.Reason
		if nd.Tier == policy.Ask {
			why += " (an MCP server's hosts are decided by Net rules alone: add " + policy.NetRule(r.Host) + ")"
		}
		if log != nil {
			log.Warn("mcp: a server's connection was refused", "server", name, "host", r.Host, "port", r.Port, "why", why)
		}
		return egress.Verdict{Reason: why, Rule: nd.Rule}
	})
}

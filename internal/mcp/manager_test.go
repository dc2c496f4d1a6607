package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"brig/jail"
	"brig/policy"
	"brig/supervisor"
	"brig/tools"
)

func TestMain(m *testing.M) {
	if jail.IsChild() {
		jail.ChildMain(nil)
	}
	if len(os.Args) > 1 && os.Args[1] == fakeServerArg {
		os.Exit(fakeServerMain())
	}
	if len(os.Args) > 1 && os.Args[1] == miniBrigArg {
		os.Exit(miniBrigMain())
	}
	os.Exit(m.Run())
}

// kenv is a real supervisor and policy over a workspace off /tmp, with a
// copy of the test binary (the fake server) in a directory of its own.
type kenv struct {
	sup     *supervisor.Supervisor
	pol     *policy.Policy
	ws      string
	binDir  string
	fake    string
	outside string
}

// secretEnv is in the supervisor's environment; no server may see it.
const secretEnv = "ANTHROPIC_API_KEY=sk-ant-fake-secret"

func newKernelEnv(t *testing.T, mode policy.Mode) kenv {
	t.Helper()
	if jail.LandlockABI() < 1 {
		t.Skip("Landlock unavailable on this kernel")
	}
	sup, err := supervisor.New(context.Background(), supervisor.Options{Executable: os.Args[0]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sup.Close)
	root, err := os.MkdirTemp("/var/tmp", "brig-mcp-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	root, _ = filepath.EvalSymlinks(root)
	e := kenv{sup: sup, ws: root + "/ws", binDir: root + "/bin", outside: root + "/outside"}
	for _, d := range []string{e.ws + "/.git", e.binDir, e.outside, root + "/home"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.fake = e.binDir + "/fake-mcp"
	copyFile(t, os.Args[0], e.fake)
	write(t, e.ws+"/notes.txt", "WORKSPACE-CONTROL")
	write(t, e.outside+"/canary", "CANARY-SECRET")
	loaded, err := policy.Load(policy.FilesFor(root+"/config", e.ws))
	if err != nil {
		t.Fatal(err)
	}
	e.pol, err = policy.New(e.ws, loaded, mode, policy.Machine{
		Home: root + "/home", Env: []string{"PATH=/usr/bin:/bin", "HOME=" + root + "/home", secretEnv, "GITHUB_TOKEN=ghp-fake"},
		Namespaces: sup.Namespaces(), CacheRoot: root + "/cache", BrigDirs: []string{root + "/config"}, Limits: jail.DefaultLimits(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fakeServer is the config of a fake stdio server; token marks its
// command line so the test can find its process.
func (e kenv) fakeServer(name, token string) Server {
	return Server{
		Name: name, Transport: Stdio, Mode: ModeAllow, Command: e.fake, Args: []string{fakeServerArg, token},
		Read: []string{e.binDir}, StartupTimeout: 20 * time.Second, ToolTimeout: 3 * time.Second,
	}
}

func (e kenv) start(t *testing.T, servers ...Server) *Manager {
	t.Helper()
	m := Start(context.Background(), Config{Servers: servers}, Options{Starter: e.sup, Policy: e.pol, Native: nativeNames()})
	t.Cleanup(m.Close)
	return m
}

func nativeNames() []string {
	var out []string
	for _, d := range tools.NewRegistry().Definitions() {
		out = append(out, string(d.Name))
	}
	return out
}

func call(t *testing.T, m *Manager, name string, args any) tools.Result {
	t.Helper()
	for _, d := range m.Tools() {
		if string(d.Name) == name {
			raw, _ := json.Marshal(args)
			if _, err := d.Call(raw); err != nil {
				return tools.Result{Text: err.Error(), IsError: true}
			}
			return d.RunExternal(context.Background(), raw)
		}
	}
	t.Fatalf("no tool %s among %v", name, toolNames(m))
	return tools.Result{}
}

func toolNames(m *Manager) []string {
	var out []string
	for _, d := range m.Tools() {
		out = append(out, string(d.Name))
	}
	return out
}

func processesWith(token string) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.Contains(string(b), token) {
			n++
		}
	}
	return n
}

func waitGone(t *testing.T, token string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if processesWith(token) == 0 {
			return
		}
	}
	t.Fatalf("the server (%s) outlived brig", token)
}

// listener counts TCP connections that reach it.
func listener(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return ln.Addr().String(), &n
}

// TestStdioServerJailed runs the fake server through the real jail: its
// tools list and work; it reads the workspace but not a canary outside its
// grant; it reaches no network unless configured; it gets exactly the
// environment configured for it and never the supervisor's secrets; and it
// is gone when the manager closes.
func TestStdioServerJailed(t *testing.T) {
	e := newKernelEnv(t, policy.ModeAsk)
	addr, hits := listener(t)
	token := fmt.Sprintf("tok%d", time.Now().UnixNano())
	closed := e.fakeServer("closed", token)
	closed.Env = map[string]string{"FAKE_CONFIGURED": "yes", "SERVER_TOKEN": "for-this-server-only"}
	open := e.fakeServer("open", token+"net")
	open.Network = true
	m := e.start(t, closed, open)
	for _, st := range m.Status() {
		if st.State != StateRunning {
			t.Fatalf("server %s: %s %s", st.Name, st.State, st.Error)
		}
	}

	if r := call(t, m, "closed__echo", map[string]string{"text": "hi"}); r.IsError || r.Text != "echo: hi" {
		t.Fatalf("echo: %+v", r)
	}
	// The control: the workspace is readable.
	if r := call(t, m, "closed__read", map[string]string{"path": e.ws + "/notes.txt"}); r.IsError || r.Text != "WORKSPACE-CONTROL" {
		t.Fatalf("workspace read: %+v", r)
	}
	// The canary outside the grant is not, and writing the workspace is
	// refused (read-only by default).
	if r := call(t, m, "closed__read", map[string]string{"path": e.outside + "/canary"}); !r.IsError || strings.Contains(r.Text, "CANARY") || !strings.Contains(r.Text, "permission denied") {
		t.Fatalf("canary: %+v", r)
	}
	// Network: only the configured server reaches the listener.
	if r := call(t, m, "closed__dial", map[string]string{"addr": addr}); !r.IsError {
		t.Fatalf("a server without network connected: %+v", r)
	}
	if hits.Load() != 0 {
		t.Fatal("a connection from the server without network reached the listener")
	}
	// The configured server reaches hosts through brig's proxy, decided
	// by the Net rules alone: refused until a rule names the host.
	if r := call(t, m, "open__dial", map[string]string{"addr": addr}); !r.IsError || !strings.Contains(r.Text, "decided by Net rules alone") {
		t.Fatalf("a server reached a host no rule allows: %+v", r)
	}
	if hits.Load() != 0 {
		t.Fatal("a connection no rule allows reached the listener")
	}
	if err := e.pol.AllowHosts("127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if r := call(t, m, "open__dial", map[string]string{"addr": addr}); r.IsError {
		t.Fatalf("the server with network could not connect: %+v", r)
	}
	for deadline := time.Now().Add(3 * time.Second); hits.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond) // the accept loop counts after the dial returned
	}
	if hits.Load() != 1 {
		t.Fatalf("listener saw %d connections, want 1", hits.Load())
	}
	// Environment: the configured variables, the allowlist, no secret.
	env := call(t, m, "closed__env", nil).Text
	for _, want := range []string{"FAKE_CONFIGURED=yes", "SERVER_TOKEN=for-this-server-only", "PATH=/usr/bin:/bin"} {
		if !strings.Contains(env, want) {
			t.Errorf("env lacks %s:\n%s", want, env)
		}
	}
	for _, bad := range []string{"sk-ant-fake-secret", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "ghp-fake"} {
		if strings.Contains(env, bad) {
			t.Errorf("env has %s:\n%s", bad, env)
		}
	}
	if env2 := call(t, m, "open__env", nil).Text; strings.Contains(env2, "SERVER_TOKEN") {
		t.Errorf("another server's env leaked: %s", env2)
	}
	if processesWith(token) == 0 {
		t.Fatal("the server process is not visible (the next check would prove nothing)")
	}
	m.Close()
	waitGone(t, token)
	waitGone(t, token+"net")
}

// TestServerFailures: a refused tool name, an image capped like
// view_image, schema-invalid arguments, a hang, a flood and a crash each
// give a clear tool error, and the manager goes on.
func TestServerFailures(t *testing.T) {
	e := newKernelEnv(t, policy.ModeAsk)
	token := fmt.Sprintf("tok%d", time.Now().UnixNano())
	m := e.start(t, e.fakeServer("fake", token), e.fakeServer("flooder", token+"f"), e.fakeServer("crasher", token+"c"))
	names := toolNames(m)
	for _, n := range names {
		if strings.Contains(strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(n, "fake__"), "flooder__"), "crasher__"), "__") {
			t.Fatalf("a tool with the separator was offered: %v", names)
		}
	}
	var refused bool
	for _, w := range m.Warnings() {
		refused = refused || strings.Contains(w, `"bad__name"`) && strings.Contains(w, "separator")
	}
	if !refused {
		t.Fatalf("no warning for bad__name: %v", m.Warnings())
	}

	r := call(t, m, "fake__image", nil)
	if r.IsError || len(r.Images) != 1 || r.Images[0].Width != tools.MaxImageSide || !strings.Contains(r.Text, "scaled down from 4000×20") {
		t.Fatalf("image: %+v", r.Text)
	}
	if r := call(t, m, "fake__echo", "not an object"); !r.IsError || !strings.Contains(r.Text, "JSON object") {
		t.Fatalf("bad args: %+v", r)
	}
	if r := call(t, m, "fake__hang", nil); !r.IsError || !strings.Contains(r.Text, "no answer within 3s") {
		t.Fatalf("hang: %+v", r)
	}
	if r := call(t, m, "fake__echo", map[string]string{"text": "still here"}); r.IsError {
		t.Fatalf("after a hang: %+v", r)
	}
	if r := call(t, m, "flooder__flood", nil); !r.IsError {
		t.Fatalf("flood: %+v", r)
	}
	if r := call(t, m, "crasher__crash", nil); !r.IsError {
		t.Fatalf("crash: %+v", r)
	}
	waitGone(t, token+"c")
	// The crashed server says so on the next call, with its stderr.
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := call(t, m, "crasher__echo", map[string]string{"text": "x"})
		if r.IsError && strings.Contains(r.Text, "not running") && strings.Contains(r.Text, "crashing on purpose") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a crash: %+v", r)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := call(t, m, "fake__echo", map[string]string{"text": "others go on"}); r.IsError {
		t.Fatalf("the other server: %+v", r)
	}
}

// TestWritingServerIsSweptAfterEachCall: a server given the workspace to
// write that plants an .envrc (direnv runs it) has it taken out after the
// call that planted it, and the result says so, while the server runs
// on; control: the ordinary file it writes stays.
func TestWritingServerIsSweptAfterEachCall(t *testing.T) {
	e := newKernelEnv(t, policy.ModeAsk)
	srv := e.fakeServer("writer", fmt.Sprintf("tok%d", time.Now().UnixNano()))
	srv.Write = []string{"."}
	m := e.start(t, srv)
	r := call(t, m, "writer__plant", map[string]string{"path": e.ws + "/.envrc", "text": "echo pwned\n"})
	if r.IsError || !strings.Contains(r.Text, "brig undid it") || !strings.Contains(r.Text, ".envrc") {
		t.Fatalf("the planting call's result: %+v", r)
	}
	if _, err := os.Lstat(e.ws + "/.envrc"); err == nil {
		t.Error("the .envrc the server planted is still there")
	}
	if r := call(t, m, "writer__plant", map[string]string{"path": e.ws + "/ordinary.txt", "text": "fine\n"}); r.IsError || strings.Contains(r.Text, "undid") {
		t.Fatalf("control: %+v", r)
	}
	if b, err := os.ReadFile(e.ws + "/ordinary.txt"); err != nil || string(b) != "fine\n" {
		t.Errorf("control: ordinary.txt %q %v", b, err)
	}
	if r := call(t, m, "writer__echo", map[string]string{"text": "still here"}); r.IsError {
		t.Errorf("the server did not run on: %+v", r)
	}
}

// TestOversizedSchemas: a tool whose input schema is over maxSchema is
// not offered (a warning says why) while the server's other tools are; a
// description of 100 KiB is cut to maxDescription; a server whose kept
// schemas add up past maxSchemas is not taken, with the reason.
func TestOversizedSchemas(t *testing.T) {
	e := newKernelEnv(t, policy.ModeAsk)
	token := fmt.Sprintf("tok%d", time.Now().UnixNano())
	bloat, many := e.fakeServer("bloat", token+"b"), e.fakeServer("many", token+"m")
	bloat.Args = append(bloat.Args, "bloat")
	many.Args = append(many.Args, "many")
	m := e.start(t, bloat, many)
	names := toolNames(m)
	if slices.Contains(names, "bloat__bloated") || !slices.Contains(names, "bloat__echo") || !slices.Contains(names, "bloat__longdesc") {
		t.Fatalf("offered %v; want bloat__echo and bloat__longdesc, not bloat__bloated", names)
	}
	warned := false
	for _, w := range m.Warnings() {
		warned = warned || strings.Contains(w, `"bloated"`) && strings.Contains(w, "input schema is 100 KiB")
	}
	if !warned {
		t.Errorf("no warning names the oversized schema: %v", m.Warnings())
	}
	for _, d := range m.Tools() {
		if d.Name == "bloat__longdesc" && len(d.Description) > maxDescription+100 {
			t.Errorf("a description of %d bytes was offered", len(d.Description))
		}
	}
	for _, n := range names {
		if strings.HasPrefix(n, "many__") {
			t.Fatalf("a server with 1.2 MiB of schemas was taken: %v", names)
		}
	}
	var why string
	for _, st := range m.Status() {
		if st.Name == "many" {
			why = st.Error
		}
	}
	if !strings.Contains(why, "input schemas add up to more than 1024 KiB") {
		t.Errorf("the many server's state: %q", why)
	}
}

// TestModeFiltering: disabled servers are not started; in plan mode only
// read_only servers' tools are offered, and refused again at run time.
func TestModeFiltering(t *testing.T) {
	e := newKernelEnv(t, policy.ModeAsk)
	token := fmt.Sprintf("tok%d", time.Now().UnixNano())
	ro := e.fakeServer("ro", token+"ro")
	ro.Mode = ModeReadOnly
	rw := e.fakeServer("rw", token+"rw")
	off := e.fakeServer("off", token+"off")
	off.Mode = ModeDisabled
	m := e.start(t, ro, rw, off)
	if processesWith(token+"off") != 0 {
		t.Fatal("a disabled server was started")
	}
	reg := tools.NewRegistry()
	reg.AddSource(m)
	offered := func(mode policy.Mode) (ro, rw, off bool) {
		for _, d := range reg.Advertised(mode) {
			ro = ro || strings.HasPrefix(string(d.Name), "ro__")
			rw = rw || strings.HasPrefix(string(d.Name), "rw__")
			off = off || strings.HasPrefix(string(d.Name), "off__")
		}
		return
	}
	if a, b, c := offered(policy.ModeAsk); !a || !b || c {
		t.Fatalf("ask mode offers ro=%v rw=%v off=%v", a, b, c)
	}
	if a, b, c := offered(policy.ModePlan); !a || b || c {
		t.Fatalf("plan mode offers ro=%v rw=%v off=%v", a, b, c)
	}
	if _, refused := reg.Prepare(policy.ModePlan, "rw__echo", json.RawMessage(`{}`)); refused == nil || !strings.Contains(refused.Text, "not available in plan mode") {
		t.Fatalf("plan mode ran rw__echo: %+v", refused)
	}
	p, refused := reg.Prepare(policy.ModePlan, "ro__echo", json.RawMessage(`{"text":"x"}`))
	if refused != nil || p.Call.Effect != policy.EffectMCP || p.Call.Tool != "ro__echo" {
		t.Fatalf("plan mode ro__echo: %+v %+v", p, refused)
	}
	// The policy asks for MCP tools unless a rule allows them.
	if v := e.pol.Decide(p.Call); v.Tier != policy.Ask {
		t.Fatalf("verdict %+v", v)
	}
	for _, st := range m.Status() {
		if st.Name == "off" && (st.State != StateDisabled || len(st.Tools) != 0) {
			t.Fatalf("disabled server status %+v", st)
		}
	}
}

// TestHTTPServer talks to a streamable HTTP server on loopback, from the
// supervisor process, with the configured header.
func TestHTTPServer(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "remote", Version: "1"}, nil)
	fakeTool(srv, "echo", "Echo", func(a fakeArgs) *sdk.CallToolResult { return text("remote echo: %s", a.Text) })
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	var unauthorized atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer fake-token" {
			unauthorized.Add(1)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	cfg := Server{Name: "remote", Transport: HTTP, Mode: ModeAllow, URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer fake-token"}, StartupTimeout: 10 * time.Second, ToolTimeout: 10 * time.Second}
	bad := cfg
	bad.Name, bad.Headers = "nokey", nil
	m := Start(context.Background(), Config{Servers: []Server{cfg, bad}}, Options{})
	defer m.Close()
	if r := call(t, m, "remote__echo", map[string]string{"text": "over http"}); r.IsError || r.Text != "remote echo: over http" {
		t.Fatalf("http call: %+v (status %+v)", r, m.Status())
	}
	st := m.Status()
	if st[1].State != StateFailed || unauthorized.Load() == 0 {
		t.Fatalf("a server without its header: %+v", st[1])
	}
}

// TestToolNaming: names with the separator, invalid or too long names and
// collisions are refused with a reason; the rest are offered.
func TestToolNaming(t *testing.T) {
	mk := func(name string, names ...string) *server {
		s := &server{cfg: Server{Name: name, Mode: ModeAllow}, state: StateRunning}
		for _, n := range names {
			s.tools = append(s.tools, ToolInfo{Name: name + Separator + n, Tool: n})
			s.listed = append(s.listed, &sdk.Tool{Name: n, InputSchema: map[string]any{"type": "object"}})
		}
		return s
	}
	m := &Manager{log: discardLogger(), servers: []*server{
		mk("a", "ok", "x__y", "dup", "dup", "has space", strings.Repeat("n", 70), "", "Probe", "probe"),
		mk("b", "ok"),
		mk("read", "file"),
	}}
	m.register([]string{"read_file"})
	got := map[string]string{}
	for _, s := range m.servers {
		for _, ti := range s.tools {
			got[ti.Name] += ti.Refused + ";"
		}
	}
	want := map[string]string{
		"a__ok": ";", "b__ok": ";", "read__file": ";",
		"a__x__y":                       "separator",
		"a__dup":                        ";its name collides with a tool of MCP server a;",
		"a__has space":                  "letters, digits",
		"a__" + strings.Repeat("n", 70): "1-64",
		"a__":                           "it has no name",
		"a__probe":                      "its name collides with a tool of MCP server a",
	}
	for name, w := range want {
		if !strings.Contains(got[name], w) {
			t.Errorf("%s: refusal %q, want %q", name, got[name], w)
		}
	}
	if names := toolNames(m); strings.Join(names, ",") != "a__ok,a__dup,a__Probe,b__ok,read__file" {
		t.Fatalf("offered %v", names)
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// miniBrigArg makes the test binary a stand-in for brig: it starts the
// fake server through a supervisor and the manager, says "ready", and
// waits to be killed.
const miniBrigArg = "__brig_mini"

func miniBrigMain() int {
	ws, fake, bin, token := os.Args[2], os.Args[3], os.Args[4], os.Args[5]
	ctx := context.Background()
	sup, err := supervisor.New(ctx, supervisor.Options{})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	loaded, _ := policy.Load(policy.FilesFor(ws+"-config", ws))
	pol, err := policy.New(ws, loaded, policy.ModeAsk, policy.Machine{Env: []string{"PATH=/usr/bin:/bin"}, Namespaces: sup.Namespaces(), Limits: jail.DefaultLimits()})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	m := Start(ctx, Config{Servers: []Server{{Name: "fake", Transport: Stdio, Mode: ModeAllow, Command: fake, Args: []string{fakeServerArg, token}, Read: []string{bin}, StartupTimeout: 20 * time.Second}}}, Options{Starter: sup, Policy: pol})
	if st := m.Status()[0]; st.State != StateRunning {
		fmt.Println("error:", st.Error)
		return 1
	}
	fmt.Println("ready")
	select {}
}

// TestServerDiesWithBrig kills a brig stand-in with SIGKILL (no clean-up
// runs in it) and checks that its jailed server is gone too.
func TestServerDiesWithBrig(t *testing.T) {
	e := newKernelEnv(t, policy.ModeAsk)
	token := fmt.Sprintf("tok%d", time.Now().UnixNano())
	cmd := exec.Command(os.Args[0], miniBrigArg, e.ws, e.fake, e.binDir, token)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("stand-in: %q", line)
	}
	if processesWith(token) == 0 {
		t.Fatal("the server is not running (the check would prove nothing)")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	waitGone(t, token)
}

// npmServerDir is where `make test-deps` installs the reference MCP
// servers (BRIG_TEST_NPM_PREFIX overrides it).
func npmServerDir() string {
	if d := os.Getenv("BRIG_TEST_NPM_PREFIX"); d != "" {
		return d
	}
	return "/var/tmp/brig-test-npm"
}

// TestThirdPartyServer runs the official filesystem server from npm,
// jailed, and tells it that a directory outside the workspace is its to
// read: its tools list and work on the workspace, and the kernel still
// refuses the canary and any write.
func TestThirdPartyServer(t *testing.T) {
	prefix := npmServerDir()
	bin := filepath.Join(prefix, "node_modules", ".bin", "mcp-server-filesystem")
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("the npm reference server is not installed (make test-deps): %v", err)
	}
	e := newKernelEnv(t, policy.ModeAsk)
	m := e.start(t, Server{
		Name: "fs", Transport: Stdio, Mode: ModeReadOnly, Command: bin, Args: []string{e.ws, e.outside},
		Read: []string{prefix}, StartupTimeout: 30 * time.Second, ToolTimeout: 10 * time.Second,
	})
	if st := m.Status()[0]; st.State != StateRunning || len(st.Tools) < 5 {
		t.Fatalf("status %+v", st)
	}
	if r := call(t, m, "fs__read_text_file", map[string]string{"path": e.ws + "/notes.txt"}); r.IsError || !strings.Contains(r.Text, "WORKSPACE-CONTROL") {
		t.Fatalf("workspace read: %+v", r)
	}
	if r := call(t, m, "fs__read_text_file", map[string]string{"path": e.outside + "/canary"}); !r.IsError || strings.Contains(r.Text, "CANARY") {
		t.Fatalf("canary: %+v", r)
	}
	if r := call(t, m, "fs__write_file", map[string]string{"path": e.ws + "/planted.txt", "content": "x"}); !r.IsError {
		t.Fatalf("write: %+v", r)
	}
	if _, err := os.Stat(e.ws + "/planted.txt"); err == nil {
		t.Fatal("the read-only server wrote into the workspace")
	}
}

// TestSlowServerDoesNotHoldTheSessionUp: Start returns after its Wait with
// a server that never answers the handshake still starting; that server
// fails later at its own startup timeout (Late says so), and a good
// server's tools are offered once it is ready.
func TestSlowServerDoesNotHoldTheSessionUp(t *testing.T) {
	e := newKernelEnv(t, policy.ModeAsk)
	token := fmt.Sprintf("tok%d", time.Now().UnixNano())
	mute := Server{Name: "mute", Transport: Stdio, Mode: ModeAllow, Command: "/bin/sleep", Args: []string{"600"}, StartupTimeout: 2 * time.Second, ToolTimeout: time.Second}
	late := make(chan [2]string, 2)
	start := time.Now()
	m := Start(context.Background(), Config{Servers: []Server{mute, e.fakeServer("fake", token)}}, Options{
		Starter: e.sup, Policy: e.pol, Native: nativeNames(), Wait: 100 * time.Millisecond,
		Late: func(name, err string) { late <- [2]string{name, err} },
	})
	t.Cleanup(m.Close)
	if !slices.Contains(m.Starting(), "mute") {
		t.Fatalf("Start waited for the mute server (%s; starting: %v)", time.Since(start), m.Starting())
	}
	for got := map[string]bool{}; !got["mute"]; {
		select {
		case l := <-late:
			got[l[0]] = true
			if l[0] == "mute" && !strings.Contains(l[1], "start") {
				t.Errorf("the mute server's failure: %q", l[1])
			}
			if l[0] == "fake" && l[1] != "" {
				t.Errorf("the good server failed: %q", l[1])
			}
		case <-time.After(time.Minute):
			t.Fatal("the mute server never failed")
		}
	}
	for deadline := time.Now().Add(time.Minute); !slices.Contains(toolNames(m), "fake__echo"); {
		if time.Now().After(deadline) {
			t.Fatalf("the good server's tools were never offered: %v", toolNames(m))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(m.Starting()) != 0 {
		t.Errorf("still starting: %v", m.Starting())
	}
}

// TestServerThatDiesSaysWhy: a stdio server that exits before answering
// the handshake is reported by its exit and stderr, not by the SDK's
// "connection closed: … client is closing: EOF" in front of them (a new
// user read that first).
func TestServerThatDiesSaysWhy(t *testing.T) {
	e := newKernelEnv(t, policy.ModeAsk)
	dies := Server{Name: "dies", Transport: Stdio, Mode: ModeAllow, Command: "/bin/sh", Args: []string{"-c", "echo 'mcp-thing: command not found' >&2; exit 127"}, StartupTimeout: time.Minute, ToolTimeout: time.Second}
	m := Start(context.Background(), Config{Servers: []Server{dies}}, Options{Starter: e.sup, Policy: e.pol, Native: nativeNames()})
	t.Cleanup(m.Close)
	var why string
	for _, st := range m.Status() {
		if st.Name == "dies" {
			why = st.Error
		}
	}
	if !strings.Contains(why, "the server ended before answering; the server exited with status 127; its stderr ends with: mcp-thing: command not found") || strings.Contains(why, "client is closing") {
		t.Errorf("the failure: %q", why)
	}
}

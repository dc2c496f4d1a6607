package policy

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"brig/jail"
)

// testPolicy builds a policy over the tree() fixture with the given rules.
func testPolicy(t testing.TB, mode Mode, rules string) (*Policy, string, string, string) {
	t.Helper()
	root, ws, home := tree(t)
	var loaded Loaded
	if rules != "" {
		c, _, err := ParseConfig("rules.toml", []byte(rules))
		if err != nil {
			t.Fatal(err)
		}
		loaded.Rules, loaded.Sandbox = c.Rules, c.Sandbox
	}
	p, err := New(ws, loaded, mode, Machine{
		Home: home, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + home, "OPENAI_API_KEY=sk-secret"},
		Namespaces: true, CacheRoot: filepath.Join(root, "cache"),
		BrigDirs: []string{filepath.Join(home, ".config", "brig")}, Limits: jail.DefaultLimits(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return p, root, ws, home
}

func TestDecideFileTools(t *testing.T) {
	rules := `[permissions]
allow = ["Read(~/notes/**)", "Write(./gen/**)"]
deny  = ["Read(./secrets/**)"]
`
	read := func(paths ...string) Call { return Call{Tool: "read_file", Effect: EffectRead, Read: paths} }
	write := func(paths ...string) Call { return Call{Tool: "write_file", Effect: EffectWrite, Write: paths} }
	cases := []struct {
		name   string
		mode   Mode
		call   Call
		want   Tier
		reason string
	}{
		{"workspace read", ModeAsk, read("src/a.go"), Allow, "inside the workspace"},
		{"system read", ModeAsk, read("/usr/include"), Allow, "system"},
		{"outside read asks", ModeAsk, read("../out/deep/x"), Ask, "outside the workspace — beyond the workspace-write"},
		{"outside read by rule", ModeAsk, read("~/notes/n.md"), Allow, "Read(~/notes/**)"},
		{"rule covers the dir itself", ModeAsk, read("~/notes"), Allow, "Read(~/notes/**)"},
		{"symlink out to a key", ModeAsk, read("tokey"), Deny, "credentials"},
		{"ssh key", ModeAuto, read("~/.ssh/id_ed25519"), Deny, "credentials"},
		{"brig config", ModeAuto, read("~/.config/brig/credentials.toml"), Deny, "brig's own"},
		{"deny rule", ModeAuto, read("secrets/db.txt"), Deny, "Read(./secrets/**)"},
		{"workspace write asks", ModeAsk, write("src/a.go"), Ask, "writes inside"},
		{"workspace write in edit", ModeEdit, write("src/a.go"), Allow, "edit mode"},
		{"outside write in edit still asks", ModeEdit, write("../out/new.txt"), Ask, "outside the workspace — beyond"},
		{"write by rule", ModeAsk, write("gen/x.go"), Allow, "Write(./gen/**)"},
		{"hook write", ModeAuto, write(".git/hooks/pre-commit"), Deny, "protected"},
		{"hook write through a symlink", ModeAuto, write("src/hooks/post-checkout"), Deny, "protected"},
		{"brig dir write", ModeAuto, write(".brig/config.toml"), Deny, "protected"},
		{"plan refuses writes", ModePlan, write("src/b.go"), Deny, "plan mode"},
		{"plan reads", ModePlan, read("src/a.go"), Allow, "inside"},
		{"auto never approves an outside write", ModeAuto, write("../out/new.txt"), Ask, "beyond the workspace-write jail profile of auto mode"},
		{"auto never approves an outside read", ModeAuto, read("../out/deep/x"), Ask, "only the user can allow it"},
		{"auto approves an outside read a rule names", ModeAuto, read("~/notes/n.md"), Allow, "Read(~/notes/**)"},
		{"auto never approves a web fetch", ModeAuto, Call{Tool: "web_fetch", Effect: EffectNetwork, Host: "go.dev"}, Ask, "reaches the host go.dev"},
		{"delete confirms in auto", ModeAuto, Call{Tool: "delete_path", Effect: EffectWrite, Write: []string{"src/a.go"}, Confirm: true}, Ask, "confirmation"},
		{"mixed: one denied path denies", ModeAuto, read("src/a.go", "tokey"), Deny, "tokey"},
		{"no path", ModeAsk, read(), Deny, "no path"},
		{"update_plan", ModePlan, Call{Tool: "update_plan", Effect: EffectNone}, Allow, "nothing"},
		{"web fetch asks", ModeAsk, Call{Tool: "web_fetch", Effect: EffectNetwork, Host: "go.dev"}, Ask, "go.dev"},
		{"mcp asks", ModeAsk, Call{Tool: "gh__list_issues", Effect: EffectNone}, Ask, "MCP"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, _, _, _ := testPolicy(t, c.mode, rules)
			v := p.Decide(c.call)
			if v.Tier != c.want || !strings.Contains(v.Reason, c.reason) {
				t.Fatalf("%+v → %s (%s); want %s containing %q", c.call, v.Tier, v.Reason, c.want, c.reason)
			}
		})
	}
}

func TestAlwaysRules(t *testing.T) {
	p, _, _, _ := testPolicy(t, ModeAsk, "")
	v := p.Decide(Call{Tool: "read_file", Effect: EffectRead, Read: []string{"../out/deep", "~/notes/n.md"}})
	want := []string{"Read(" + filepath.Dir(p.Places.Workspace) + "/out/deep/**)", "Read(~/notes/n.md)"}
	if !slices.Equal(v.Always, want) {
		t.Fatalf("always = %v, want %v", v.Always, want)
	}
	// The saved rule, parsed back, allows the same call.
	for _, text := range v.Always {
		r, err := ParseRule(text, Source{File: "ws.toml"})
		if err != nil {
			t.Fatal(err)
		}
		p.AllowForSession(r)
	}
	if v := p.Decide(Call{Tool: "read_file", Effect: EffectRead, Read: []string{"../out/deep/x", "~/notes/n.md"}}); v.Tier != Allow {
		t.Fatalf("after the always answers: %s (%s)", v.Tier, v.Reason)
	}
}

func TestCompileFileTools(t *testing.T) {
	p, root, ws, _ := testPolicy(t, ModeAsk, "")
	v := p.Decide(Call{Tool: "read_file", Effect: EffectRead, Read: []string{"src/a.go"}})
	spec, err := p.Compile(v, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Paths) != 1 || spec.Paths[0] != (jail.PathRule{Path: ws + "/src/a.go", Access: jail.Read, Optional: true, Exact: true}) {
		t.Fatalf("read_file a.go must get read on a.go only, opened without following links: %+v", spec.Paths)
	}
	if spec.Network || slices.ContainsFunc(spec.Env, func(kv string) bool { return strings.Contains(kv, "sk-secret") }) {
		t.Fatalf("no network, no credentials: %+v", spec)
	}

	v = p.Decide(Call{Tool: "write_file", Effect: EffectWrite, Write: []string{"newdir/deeper/f.txt"}})
	spec, err = p.Compile(v, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Paths) != 1 || spec.Paths[0].Path != ws || spec.Paths[0].Access != jail.Write {
		t.Fatalf("a new file's nearest existing ancestor gets write: %+v", spec.Paths)
	}
	if !slices.Contains(spec.Protected, ws+"/.git/hooks") {
		t.Fatalf("a write grant over the workspace must carry its protected paths: %v", spec.Protected)
	}

	v = p.Decide(Call{Tool: "search_code", Effect: EffectRead, Read: []string{"."}, Programs: true})
	spec, err = p.Compile(v, "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(spec.Paths, func(r jail.PathRule) bool { return r.Path == "/usr" && r.Access == jail.Exec }) {
		t.Fatalf("a tool that runs programs gets the system roots: %+v", spec.Paths)
	}

	if _, err := p.Compile(p.Decide(Call{Tool: "read_file", Effect: EffectRead, Read: []string{"tokey"}}), ""); err == nil {
		t.Fatal("a denied verdict compiled")
	}
	_ = root
}

// TestNoGrantWritesProtected: whatever the rules, no compiled Spec has a
// write rule at or under a protected path, and every protected path under a
// write rule is listed for the jail to keep read-only.
func TestNoGrantWritesProtected(t *testing.T) {
	p, _, ws, home := testPolicy(t, ModeAuto, `[permissions]
allow = ["Write(**)", "Write(/**)", "Write(./.git/**)", "Write(./.brig/**)"]
`)
	calls := []Call{
		{Tool: "write_file", Effect: EffectWrite, Write: []string{".git/hooks/pre-commit"}},
		{Tool: "write_file", Effect: EffectWrite, Write: []string{".git/config"}},
		{Tool: "write_file", Effect: EffectWrite, Write: []string{".brig/config.toml"}},
		{Tool: "write_file", Effect: EffectWrite, Write: []string{"src/hooks/x"}},
		{Tool: "write_file", Effect: EffectWrite, Write: []string{".git/objects/x"}},
		{Tool: "write_file", Effect: EffectWrite, Write: []string{"src/a.go"}},
		{Tool: "write_file", Effect: EffectWrite, Write: []string{home + "/.config/brig/config.toml"}},
	}
	for _, c := range calls {
		v := p.Decide(c)
		if v.Tier == Deny {
			continue
		}
		spec, err := p.Compile(v, "")
		if err != nil {
			t.Fatalf("%v: %v", c.Write, err)
		}
		checkProtected(t, p, spec, ws)
	}
}

func checkProtected(t testing.TB, p *Policy, spec jail.Spec, ws string) {
	t.Helper()
	for _, r := range spec.Paths {
		if r.Access != jail.Write {
			continue
		}
		if c := p.Places.Classify(r.Path); c == ClassProtected || c == ClassSecret {
			t.Fatalf("write grant on %s (%s)", r.Path, c)
		}
		for _, q := range p.Places.Protected {
			if within(q, r.Path) && !slices.Contains(spec.Protected, q) {
				t.Fatalf("write grant %s covers protected %s, which the Spec does not protect", r.Path, q)
			}
		}
	}
}

func TestDecideBashWithPaths(t *testing.T) {
	bash := func(cmd string) Call { return Call{Tool: "bash", Effect: EffectExec, Command: cmd} }
	cases := []struct {
		mode   Mode
		cmd    string
		want   Tier
		reason string
	}{
		{ModeAsk, "go test ./...", Allow, ""},
		{ModeAsk, "cat src/a.go | wc -l", Allow, ""},
		{ModeAsk, "cat ~/.ssh/id_ed25519", Deny, "credentials"},
		{ModeAuto, "cat tokey", Deny, "credentials"},                 // a symlink in the workspace to a key
		{ModeAsk, "cat ../out/deep/x", Ask, "outside the workspace"}, // a relative path out of the workspace
		{ModeAsk, "cd src && cat up/out/deep/x", Ask, "outside"},     // through a symlink after cd
		{ModeAsk, "cd src && cat a.go", Allow, ""},
		{ModeAuto, "echo x > .git/hooks/pre-commit", Deny, "hooks"},
		{ModeAuto, "cp /etc/hosts src/hooks/post-merge", Deny, "protected"},
		{ModeAuto, "echo x > ~/.config/brig/config.toml", Deny, ""},
		{ModeAuto, "git push origin main", Deny, "publishes"},
		{ModeAuto, "cat ../out/deep/x", Ask, "beyond the workspace-write jail profile"},
		{ModeAuto, "cat src/a.go | sort -u | uniq -c", Allow, ""},
		{ModeAuto, "curl -s https://example.com", Allow, "auto mode approves"}, // fits the profile: no network
		{ModeAuto, "rm -rf build", Ask, "deletions ask in every mode"},
		{ModeAuto, "rm -f /tmp/x", Allow, "auto mode"},   // the call's own private /tmp
		{ModeAsk, "echo hi > /tmp/scratch.txt", Ask, ""}, // a write: the read-only allow does not apply; /tmp itself is private
		{ModePlan, "go build -o bin/app .", Deny, "plan mode"},
		{ModePlan, "go vet ./...", Allow, ""},
		{ModeAsk, "f=~/.ssh/id_ed25519; cat \"$f\"", Ask, ""}, // dynamic: never Allow, and the jail has the last word
		// The call's /proc is its own PID namespace's, read by every grant.
		{ModeAuto, "cat /proc/cpuinfo", Allow, ""},
		{ModePlan, "cat /proc/self/status", Allow, ""},
		{ModeAsk, "ls /proc/self/fd", Allow, ""},
		{ModeAuto, "echo 1000 > /proc/self/oom_score_adj", Ask, "a system path"}, // the grant reads /proc only
	}
	for _, c := range cases {
		t.Run(c.cmd, func(t *testing.T) {
			p, _, _, _ := testPolicy(t, c.mode, "")
			v := p.Decide(bash(c.cmd))
			if v.Tier != c.want || !strings.Contains(v.Reason, c.reason) {
				t.Fatalf("%s (%s): %s — %s; want %s containing %q\n%+v", c.cmd, c.mode, v.Tier, v.Reason, c.want, c.reason, v.Paths)
			}
			if len(v.Commands) == 0 {
				t.Fatal("no commands reported")
			}
		})
	}
}

// TestProcWithoutNamespaces: without a PID namespace a call's /proc is
// the host's, of which its grant reads only a few files: a /proc path
// still asks.
func TestProcWithoutNamespaces(t *testing.T) {
	p, _, _, _ := testPolicy(t, ModeAuto, "")
	p.Machine.Namespaces = false
	for _, cmd := range []string{"cat /proc/cpuinfo", "cat /proc/1/environ"} {
		if v := p.Decide(Call{Tool: "bash", Effect: EffectExec, Command: cmd}); v.Tier != Ask || !strings.Contains(v.Reason, "outside the workspace") {
			t.Errorf("%s without namespaces: %s — %s; want ask (outside the workspace)", cmd, v.Tier, v.Reason)
		}
	}
	// The control: with namespaces the same reads are allowed.
	p.Machine.Namespaces = true
	if v := p.Decide(Call{Tool: "bash", Effect: EffectExec, Command: "cat /proc/1/environ"}); v.Tier != Allow {
		t.Errorf("with namespaces: %s — %s; want allow", v.Tier, v.Reason)
	}
}

// TestNamespacesAskedAtTheFirstDecision: a policy whose Machine answers
// Namespaces by a function (the supervisor's probe, still running while
// brig -p starts) is built without asking it, a [sandbox] grant included;
// the first decision and grant ask, and get what it answers: the same
// /proc read is allowed with namespaces and asks without.
func TestNamespacesAskedAtTheFirstDecision(t *testing.T) {
	for _, ns := range []bool{true, false} {
		root, ws, home := tree(t)
		c, _, err := ParseConfig("rules.toml", []byte("[sandbox]\nread = [\"/usr/share\"]\n"))
		if err != nil {
			t.Fatal(err)
		}
		var asked atomic.Int32
		p, err := New(ws, Loaded{Rules: c.Rules, Sandbox: c.Sandbox}, ModeAuto, Machine{
			Home: home, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + home},
			NamespacesFrom: func() bool { asked.Add(1); return ns },
			CacheRoot:      filepath.Join(root, "cache"), Limits: jail.DefaultLimits(),
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := asked.Load(); n != 0 {
			t.Fatalf("building the policy asked for the namespaces %d times: it would wait for the probe", n)
		}
		want := map[bool]Tier{true: Allow, false: Ask}[ns]
		if v := p.Decide(Call{Tool: "bash", Effect: EffectExec, Command: "cat /proc/1/environ"}); v.Tier != want {
			t.Errorf("namespaces %v: %s — %s; want %s", ns, v.Tier, v.Reason, want)
		}
		prof, err := p.BashProfile(false, "")
		if err != nil || prof.Namespaces != ns {
			t.Fatalf("namespaces %v: the bash profile says %v (%v)", ns, prof.Namespaces, err)
		}
		if asked.Load() == 0 {
			t.Fatal("the decision did not ask for the namespaces")
		}
		if p.Namespaces() != ns {
			t.Fatalf("Namespaces() = %v, the function answers %v", p.Namespaces(), ns)
		}
	}
}

// TestFileToolsReadTheCallsProc: a file tool's call has the same fresh
// procfs as a command's, so reading /proc asks nothing more than the
// system's files (the compiled grant stays within every mode's profile);
// without namespaces it asks, as a command does. /proc/self names the
// tool's own process, never anything of the user's: that is refused with
// what to do instead, while a command's /proc/self (its own) is allowed.
// Without namespaces brig's own /proc/PID, where /proc/self leads here,
// is refused too.
func TestFileToolsReadTheCallsProc(t *testing.T) {
	for _, mode := range []Mode{ModeAsk, ModeAuto, ModePlan} {
		p, _, _, _ := testPolicy(t, mode, "")
		for _, path := range []string{"/proc/cpuinfo", "/proc/meminfo", "/proc/1/status"} {
			v := p.Decide(readCall(path))
			if v.Tier != Allow {
				t.Errorf("%s: read_file %s: %s — %s; want allow", mode, path, v.Tier, v.Reason)
				continue
			}
			spec, err := p.Compile(v, "")
			if err != nil {
				t.Fatalf("%s: compile read_file %s: %v", mode, path, err)
			}
			if ex, err := p.Exceeds(spec, mode, ""); err != nil || len(ex) != 0 {
				t.Errorf("%s: read_file %s exceeds the profile: %v %v", mode, path, ex, err)
			}
		}
		for _, path := range []string{"/proc/self/status", "/proc/thread-self/status", "/proc/self", "/proc/./self/environ", "/proc/1/../self/fd"} {
			v := p.Decide(readCall(path))
			if v.Tier != Deny || !strings.Contains(v.Reason, "run a command") {
				t.Errorf("%s: read_file %s: %s — %s; want deny, saying to run a command", mode, path, v.Tier, v.Reason)
			}
		}
		if v := p.Decide(Call{Tool: "list_directory", Effect: EffectRead, Read: []string{"/proc/self/fd"}}); v.Tier != Deny {
			t.Errorf("%s: list_directory /proc/self/fd: %s — %s; want deny", mode, v.Tier, v.Reason)
		}
		// The control: a command's /proc/self is its own.
		if v := p.Decide(Call{Tool: "bash", Effect: EffectExec, Command: "cat /proc/self/status"}); v.Tier != Allow {
			t.Errorf("%s: cat /proc/self/status: %s — %s; want allow", mode, v.Tier, v.Reason)
		}
		if v := p.Decide(Call{Tool: "write_file", Effect: EffectWrite, Write: []string{"/proc/sys/kernel/hostname"}}); v.Tier == Allow {
			t.Errorf("%s: write_file under /proc allowed: %s", mode, v.Reason)
		}
	}
	p, _, _, _ := testPolicy(t, ModeAuto, "")
	p.Machine.Namespaces = false
	if v := p.Decide(readCall("/proc/cpuinfo")); v.Tier != Ask || !strings.Contains(v.Reason, "outside the workspace") {
		t.Errorf("read_file /proc/cpuinfo without namespaces: %s — %s; want ask (outside the workspace)", v.Tier, v.Reason)
	}
	for _, path := range []string{"/proc/self/status", fmt.Sprintf("/proc/%d/environ", os.Getpid())} {
		if v := p.Decide(readCall(path)); v.Tier != Deny || !strings.Contains(v.Reason, "run a command") {
			t.Errorf("read_file %s without namespaces: %s — %s; want deny, saying to run a command", path, v.Tier, v.Reason)
		}
	}
}

// TestCallProcNotResolvedHere: with namespaces a call's /proc is a fresh
// procfs of its own PID namespace, so a path under it (named, or reached
// through a link in the workspace) is not followed in brig's /proc: a
// host process's working directory does not show in the verdict, a host
// link brig may not read is no error, and a missing host pid is no
// different from a present one. Without namespaces /proc is the host's
// and such a path still leads where it leads here, and asks.
func TestCallProcNotResolvedHere(t *testing.T) {
	p, root, ws, _ := testPolicy(t, ModeAsk, "")
	hostDir := filepath.Join(root, "hostproj")
	if err := os.MkdirAll(hostDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hostDir, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	host := exec.Command("sleep", "60")
	host.Dir = hostDir
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Process.Kill(); host.Wait() })
	if err := os.Symlink("/proc/self/cwd", filepath.Join(ws, "here")); err != nil {
		t.Fatal(err)
	}
	hostPath := fmt.Sprintf("/proc/%d/cwd/notes.txt", host.Process.Pid)
	for cmd, want := range map[string]string{
		"cat " + hostPath:            hostPath,
		"ls -l /proc/1/exe":          "/proc/1/exe",
		"cat /proc/999999999/status": "/proc/999999999/status",
		"cat here/notes.txt":         "/proc/self/cwd/notes.txt",
		"cat src/../here/sub/x":      "/proc/self/cwd/sub/x",
	} {
		v := p.Decide(bashCall(cmd))
		if v.Tier != Allow || len(v.Paths) != 1 {
			t.Errorf("%s: %s — %s (%d paths); want allow, one path", cmd, v.Tier, v.Reason, len(v.Paths))
			continue
		}
		pv := v.Paths[0]
		if pv.Resolved != want || !pv.Exists || pv.Class != ClassSystem {
			t.Errorf("%s: resolved %q (exists %v, %s); want %q as it stands, existing, system", cmd, pv.Resolved, pv.Exists, pv.Class, want)
		}
		if strings.Contains(fmt.Sprintf("%+v", v), hostDir) {
			t.Errorf("%s: the verdict shows the host process's directory %s: %+v", cmd, hostDir, v)
		}
	}
	// A process's root in the call's /proc is the call's root, the host's
	// tree as the call sees it: judged as the path below it (a secret
	// there is denied, as named directly), not passed as a /proc file.
	key := filepath.Join(p.Places.Home, ".ssh", "id_rsa")
	for _, cmd := range []string{"cat /proc/self/root" + key, "cat /proc/1/task/1/root" + key, "cat /proc/1/root/proc/self/root" + key} {
		if v := p.Decide(bashCall(cmd)); v.Tier != Deny || len(v.Paths) != 1 || v.Paths[0].Resolved != key {
			t.Errorf("%s: %s — %s %+v; want deny, resolved to %s", cmd, v.Tier, v.Reason, v.Paths, key)
		}
	}
	if v := p.Decide(bashCall("cat /proc/self/root/etc/hostname")); v.Tier != Allow || v.Paths[0].Resolved != "/etc/hostname" {
		t.Errorf("/proc/self/root/etc/hostname: %s — %s %+v; want allow as /etc/hostname", v.Tier, v.Reason, v.Paths)
	}
	// Up (..) from below one of /proc's links leads where only the call
	// knows: cleaned as text, /proc/self/cwd/../x read as a /proc file.
	for _, cmd := range []string{"cat /proc/self/cwd/../other/secret.txt", "cat /proc/1/root/../cwd/x", "ls /proc/self/fd/3/..", "cd /proc/thread-self/cwd/.. && ls"} {
		if v := p.Decide(bashCall(cmd)); v.Tier != Deny || !strings.Contains(v.Reason, "goes up (..) from inside /proc") {
			t.Errorf("%s: %s — %s; want deny, saying it goes up from inside /proc", cmd, v.Tier, v.Reason)
		}
	}
	// A file tool's /proc/self through the workspace's link is still its own.
	if v := p.Decide(readCall("here/notes.txt")); v.Tier != Deny || !strings.Contains(v.Reason, "run a command") {
		t.Errorf("read_file here/notes.txt: %s — %s; want deny, saying to run a command", v.Tier, v.Reason)
	}
	// Without namespaces the host's /proc is the call's: followed here.
	p.Machine.Namespaces = false
	v := p.Decide(bashCall("cat " + hostPath))
	if v.Tier != Ask || len(v.Paths) != 1 || v.Paths[0].Resolved != filepath.Join(hostDir, "notes.txt") {
		t.Errorf("without namespaces: %s — %s %+v; want ask, resolved to %s", v.Tier, v.Reason, v.Paths, hostDir)
	}
}

// TestDefaultGrantReadsNeedNoGrant: a command or read_file naming a path
// that every bash call's grant already reads — the Go module cache, a
// toolchain under the home directory, a directory on PATH — is allowed as
// the system's files are, in every mode; a write there, a path beside
// them, and a secret inside one are decided as before.
func TestDefaultGrantReadsNeedNoGrant(t *testing.T) {
	for _, mode := range []Mode{ModeAsk, ModeAuto, ModePlan} {
		p, root, _, home := testPolicy(t, mode, "")
		tools := filepath.Join(root, "tools", "bin")
		for _, d := range []string{home + "/go/pkg/mod/example.com/dep@v1", home + "/.cargo/bin", tools, home + "/.kube/bin"} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(home+"/go/pkg/mod/example.com/dep@v1/dep.go", []byte("package dep"), 0o644); err != nil {
			t.Fatal(err)
		}
		// A directory on PATH inside a secret is never in the grant.
		p.Machine.Env = append(p.Machine.Env, "PATH=/usr/bin:/bin:"+tools+":"+home+"/.kube/bin")
		bash := func(cmd string) Verdict { return p.Decide(Call{Tool: "bash", Effect: EffectExec, Command: cmd}) }
		for _, cmd := range []string{"cat ~/go/pkg/mod/example.com/dep@v1/dep.go", "ls ~/.cargo/bin", "ls " + tools} {
			if v := bash(cmd); v.Tier != Allow {
				t.Errorf("%s: %s: %s — %s; want allow", mode, cmd, v.Tier, v.Reason)
			}
		}
		if v := p.Decide(Call{Tool: "read_file", Effect: EffectRead, Read: []string{home + "/go/pkg/mod/example.com/dep@v1/dep.go"}}); v.Tier != Allow {
			t.Errorf("%s: read_file in the module cache: %s — %s; want allow", mode, v.Tier, v.Reason)
		}
		// The controls: a path beside them asks, a write there asks (or
		// is refused in plan mode), a PATH directory inside a secret is denied.
		if v := bash("cat ~/notes/n.md"); v.Tier != Ask {
			t.Errorf("%s: a path outside the default grant: %s — %s; want ask", mode, v.Tier, v.Reason)
		}
		if v := bash("echo x > ~/go/pkg/mod/example.com/dep@v1/dep.go"); v.Tier == Allow {
			t.Errorf("%s: a write into the module cache: %s — %s; want it not allowed", mode, v.Tier, v.Reason)
		}
		if v := bash("ls ~/.kube/bin"); v.Tier != Deny {
			t.Errorf("%s: a directory on PATH inside a secret: %s — %s; want deny", mode, v.Tier, v.Reason)
		}
	}
}

func TestBashGrantFollowsTheVerdict(t *testing.T) {
	p, root, ws, _ := testPolicy(t, ModeAuto, "")
	v := p.Decide(Call{Tool: "bash", Effect: EffectExec, Command: "cat ../out/deep/x && make test > ../out/log.txt"})
	if v.Tier != Ask || len(v.Beyond) != 2 {
		t.Fatalf("auto mode must leave outside paths to the user: %s: %s %+v", v.Tier, v.Reason, v.Beyond)
	}
	v.Tier = Allow // as the user answered
	spec, err := p.Compile(v, "")
	if err != nil {
		t.Fatal(err)
	}
	has := func(path string, a jail.Access) bool {
		return slices.ContainsFunc(spec.Paths, func(r jail.PathRule) bool { return r.Path == path && r.Access == a })
	}
	if !has(root+"/out/deep/x", jail.Exec) || !has(root+"/out", jail.Write) || !has(ws, jail.Write) {
		t.Fatalf("the named outside read and write must be granted, with the workspace: %+v", spec.Paths)
	}
	if has(root+"/out/deep", jail.Exec) || has(root, jail.Exec) {
		t.Fatalf("more than the named paths was granted: %+v", spec.Paths)
	}
	checkProtected(t, p, spec, ws)

	// Plan mode: the workspace is read-only in the grant.
	p.SetMode(ModePlan)
	v = p.Decide(Call{Tool: "bash", Effect: EffectExec, Command: "go vet ./..."})
	spec, err = p.Compile(v, "")
	if err != nil {
		t.Fatal(err)
	}
	if has(ws, jail.Write) || !has(ws, jail.Exec) {
		t.Fatalf("plan mode: the workspace must be read-only: %+v", spec.Paths)
	}
}

func TestAlwaysForBashIsFromTheParsedCommand(t *testing.T) {
	p, _, _, _ := testPolicy(t, ModeAsk, "")
	for cmd, want := range map[string]string{
		"LANG=C go run ./cmd/x": "Bash(go run:*)",
		"npm install left-pad":  "Bash(npm install:*)",
		"python3 -c 'print(1)'": "",
		"sed -i s/a/b/ x":       "",
		"awk '{print $1}' x":    "",
	} {
		v := p.Decide(Call{Tool: "bash", Effect: EffectExec, Command: cmd})
		if v.Tier != Ask {
			t.Fatalf("%s: %s", cmd, v.Tier)
		}
		got := strings.Join(v.Always, ",")
		if want == "" {
			if strings.Contains(got, ":*") {
				t.Fatalf("%s: a prefix rule was offered for an interpreter: %v", cmd, v.Always)
			}
			continue
		}
		if got != want {
			t.Fatalf("%s: always = %v, want %s", cmd, v.Always, want)
		}
	}
}

// FuzzCompileNeverWritesProtected: whatever the command line and however it
// is decided, a compiled grant never holds a protected path or brig's own
// files with write rights (the user may approve anything; protection holds).
func FuzzCompileNeverWritesProtected(f *testing.F) {
	for _, s := range []string{
		"echo x > .git/hooks/pre-commit", "cp a src/hooks/x", "cd .git && echo > config",
		"touch .brig/config.toml", "mv x ~/.config/brig/config.toml", "tee .envrc < x",
		"cd src/up/ws && echo > .vscode/tasks.json", "ln -s /x .git/hooks/post-merge", "go build -o ../out/bin",
	} {
		f.Add(s)
	}
	p, _, ws, _ := testPolicy(f, ModeAuto, "[permissions]\nallow = [\"Bash(*)\", \"Write(/**)\", \"Read(/**)\"]\n")
	f.Fuzz(func(t *testing.T, line string) {
		v := p.Decide(Call{Tool: "bash", Effect: EffectExec, Command: line})
		if v.Tier == Deny {
			return
		}
		v.Tier = Allow // as if the user approved
		spec, err := p.Compile(v, "")
		if err != nil {
			return
		}
		checkProtected(t, p, spec, ws)
	})
}

func TestWriteGrantNeverWidensToAnAncestor(t *testing.T) {
	p, root, _, _ := testPolicy(t, ModeAuto, "")
	for _, c := range []Call{
		{Tool: "bash", Effect: EffectExec, Command: "echo x > " + root + "/nonexistent/deeper/f"},
		{Tool: "write_file", Effect: EffectWrite, Write: []string{root + "/nonexistent/f"}},
	} {
		v := p.Decide(c)
		v.Tier = Allow
		if spec, err := p.Compile(v, ""); err == nil {
			t.Fatalf("%+v compiled to %+v: a missing outside directory must not widen the grant to %s", c, spec.Paths, root)
		}
	}
	v := p.Decide(Call{Tool: "write_file", Effect: EffectWrite, Write: []string{root + "/out/new.txt"}})
	spec, err := p.Compile(v, "")
	if err != nil || !slices.ContainsFunc(spec.Paths, func(r jail.PathRule) bool { return r.Path == root+"/out" && r.Access == jail.Write }) {
		t.Fatalf("control: a new file in an existing outside directory: %+v, %v", spec.Paths, err)
	}
}

// TestAlwaysIsExactlyWhatWouldAllow: "always" proposes the rules that
// would have allowed this very call, or nothing: not for a deletion (it
// asks in every mode), not for a command line with a part decided only at
// run time, not for a path no rule can name.
func TestAlwaysIsExactlyWhatWouldAllow(t *testing.T) {
	for _, tc := range []struct {
		name  string
		call  Call
		offer bool
	}{
		{"write in the workspace", Call{Tool: "write_file", Effect: EffectWrite, Write: []string{"src/new.go"}}, true},
		{"an install", Call{Tool: "bash", Effect: EffectExec, Command: "npm install left-pad"}, true},
		{"an install and an outside write", Call{Tool: "bash", Effect: EffectExec, Command: "npm install x > ../out/log"}, true},
		{"delete asks every time", Call{Tool: "delete_path", Effect: EffectWrite, Write: []string{"src/a.go"}, Confirm: true}, false},
		{"a part known only at run time", Call{Tool: "bash", Effect: EffectExec, Command: "npm install x && $(cat cmd)"}, false},
		{"a path with a control character", Call{Tool: "write_file", Effect: EffectWrite, Write: []string{"src/a\x1b[2J.go"}}, false},
		{"web fetch", Call{Tool: "web_fetch", Effect: EffectNetwork, Host: "go.dev"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, _, _ := testPolicy(t, ModeAsk, "")
			v := p.Decide(tc.call)
			if v.Tier != Ask {
				t.Fatalf("tier %s (%s), want ask", v.Tier, v.Reason)
			}
			if !tc.offer {
				if len(v.Always) > 0 {
					t.Fatalf("always = %v, want nothing offered", v.Always)
				}
				return
			}
			if len(v.Always) == 0 {
				t.Fatal("nothing offered")
			}
			// What is offered, saved, allows the same call.
			if err := p.Remember(context.Background(), false, v.Always...); err != nil {
				t.Fatal(err)
			}
			if w := p.Decide(tc.call); w.Tier != Allow {
				t.Fatalf("after saving %v: %s (%s)", v.Always, w.Tier, w.Reason)
			}
		})
	}
}

// TestDerive: a derived policy has the same rules and places in its own
// mode, and the session answers of the first stay the first's.
func TestDerive(t *testing.T) {
	ws := t.TempDir()
	p, err := New(ws, Loaded{}, ModeAuto, Machine{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	p.AllowForSession(Rule{})
	plan, err := p.Derive(ModePlan)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Mode() != ModePlan || p.Mode() != ModeAuto || plan.Places.Workspace != ws || len(plan.SessionRules()) != 0 {
		t.Fatalf("derived %v/%v %+v", plan.Mode(), p.Mode(), plan.Places)
	}
	if v := plan.Decide(Call{Tool: "write_file", Effect: EffectWrite, Write: []string{"a.txt"}}); v.Tier != Deny {
		t.Fatalf("a write in the derived plan policy: %s", v.Tier)
	}
	// The derived policy places paths as its parent does: a write to a
	// file run later outside the jail is that, not merely "outside".
	bashrc := filepath.Join(p.Machine.Home, ".bashrc")
	if c, _, _ := plan.classify(bashrc, true, true); c != ClassLaterExec {
		t.Errorf("the derived policy classifies a write to %s as %s, want %s", bashrc, c, ClassLaterExec)
	}
	if c, _, _ := p.classify(bashrc, true, true); c != ClassLaterExec {
		t.Errorf("the policy classifies a write to %s as %s, want %s", bashrc, c, ClassLaterExec)
	}
	if _, err := p.Derive("yolo"); err == nil {
		t.Fatal("an unknown mode was accepted")
	}
}

// TestSpecCarriesTheGrantsMemory: a bash call's spec carries the search
// memory its grant used (jail.RepoCache), the policy's own, so the
// supervisor's sweep after the call searches with it; every call's spec
// carries the same one.
func TestSpecCarriesTheGrantsMemory(t *testing.T) {
	p, _, _, _ := testPolicy(t, ModeAuto, "")
	var got []*jail.RepoCache
	for range 2 {
		prof, err := p.BashProfile(false, "")
		if err != nil {
			t.Fatal(err)
		}
		spec, err := prof.Spec()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, spec.Repos)
	}
	if got[0] == nil || got[0] != p.repos || got[1] != p.repos {
		t.Fatalf("the specs carry %p and %p, want the policy's memory %p", got[0], got[1], p.repos)
	}
}

// TestWriteThroughALinkKeepsTheNamesGuard: a name that is protected, or
// run later outside the jail, stays so when a symbolic link on its way
// leads elsewhere — .git/hooks linked out of the workspace, ~/.bashrc
// linked into a dotfiles checkout (as stow makes it): a write through it
// is denied like a write to the name; a credential's name
// (~/.aws/credentials linked elsewhere) is denied for reading too.
// Controls: the same targets by their own names ask as anything outside
// the workspace does, and a read through the hooks link only asks.
func TestWriteThroughALinkKeepsTheNamesGuard(t *testing.T) {
	p, root, ws, home := testPolicy(t, ModeAuto, "")
	hooks, dotfiles := filepath.Join(root, "out", "hooks"), filepath.Join(root, "out", "dotfiles")
	for _, d := range []string{hooks, dotfiles} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dotfiles, "bashrc"), []byte("# rc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(ws, ".git", "hooks")); err != nil {
		t.Fatal(err)
	}
	creds := filepath.Join(root, "out", "aws-credentials")
	if err := os.WriteFile(creds, []byte("[default]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".aws"), 0o755); err != nil {
		t.Fatal(err)
	}
	for l, target := range map[string]string{filepath.Join(ws, ".git", "hooks"): hooks, filepath.Join(home, ".bashrc"): filepath.Join(dotfiles, "bashrc"), filepath.Join(home, ".aws", "credentials"): creds} {
		if err := os.Symlink(target, l); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path string) Call { return Call{Tool: "write_file", Effect: EffectWrite, Write: []string{path}} }
	bash := func(cmd string) Call { return Call{Tool: "bash", Effect: EffectExec, Command: cmd} }
	for _, c := range []struct {
		call   Call
		want   Tier
		reason string
	}{
		{write(".git/hooks/pre-commit"), Deny, "protected"},
		{bash("echo x > .git/hooks/pre-commit"), Deny, "outside the jail"},
		{write("~/.bashrc"), Deny, "runs later outside the jail"},
		{bash("echo evil >> ~/.bashrc"), Deny, "runs later outside the jail"},
		{Call{Tool: "read_file", Effect: EffectRead, Read: []string{"~/.aws/credentials"}}, Deny, "credentials"},
		{bash("cat ~/.aws/credentials"), Deny, "credentials"},
		// Controls.
		{Call{Tool: "read_file", Effect: EffectRead, Read: []string{creds}}, Ask, "outside the workspace"},
		{write(filepath.Join(hooks, "pre-commit")), Ask, "outside the workspace"},
		{write(filepath.Join(dotfiles, "notes")), Ask, "outside the workspace"},
		{Call{Tool: "read_file", Effect: EffectRead, Read: []string{".git/hooks/pre-commit.sample"}}, Ask, "outside the workspace"},
		{write("src/new.go"), Allow, ""},
	} {
		v := p.Decide(c.call)
		if v.Tier != c.want || !strings.Contains(v.Reason, c.reason) {
			t.Errorf("%+v → %s (%s); want %s containing %q", c.call, v.Tier, v.Reason, c.want, c.reason)
		}
	}
}

// The rule an "always" answer saves for a path names that path literally:
// a file named ** in the home directory saved Write(~/**), which then
// allowed writing anything in the home directory unasked (red team,
// round 5). A name no rule can hold gets no rule, so only "once" is
// offered.
func TestSavedPathRuleIsLiteral(t *testing.T) {
	p, root, ws, home := testPolicy(t, ModeAsk, "")
	write := func(path string) Verdict {
		return p.Decide(Call{Tool: "write_file", Effect: EffectWrite, Write: []string{path}})
	}
	for _, tc := range []struct{ path, rule, other string }{
		{home + "/**", `Write(~/\*\*)`, home + "/Documents/planted.txt"},
		{home + "/*.txt", `Write(~/\*.txt)`, home + "/a.txt"},
		{home + "/x?", `Write(~/x\?)`, home + "/xy"},
		{home + "/[ab]", `Write(~/\[ab])`, home + "/a"},
		{home + `/back\slash`, `Write(~/back\\slash)`, home + "/backslash"},
		{root + "/out/*", `Write(` + root + `/out/\*)`, root + "/out/deep"},
		{ws + "/src/**", `Write(./src/\*\*)`, ""},
	} {
		v := write(tc.path)
		if v.Tier != Ask || !slices.Equal(v.Always, []string{tc.rule}) {
			t.Errorf("%s: %s, always %q; want ask, always %q", tc.path, v.Tier, v.Always, tc.rule)
			continue
		}
		r, err := ParseRule(tc.rule, Source{File: "rules.toml"})
		if err != nil {
			t.Fatal(err)
		}
		// Rules of earlier cases stay: each is literal, so none allows
		// a later case's paths.
		p.AllowForSession(r)
		if tc.other != "" {
			if v := p.Decide(Call{Tool: "write_file", Effect: EffectWrite, Write: []string{tc.other}}); v.Tier == Allow {
				t.Errorf("the rule saved for %s, %s, also allows writing %s (%s)", tc.path, tc.rule, tc.other, v.Reason)
			}
		}
		if v := p.Decide(Call{Tool: "write_file", Effect: EffectWrite, Write: []string{tc.path}}); v.Tier != Allow {
			t.Errorf("the rule saved for %s, %s, does not allow it again: %s (%s)", tc.path, tc.rule, v.Tier, v.Reason)
		}
	}
	// A name a rule cannot hold: no rule, so "always" is not offered.
	if v := write(home + "/a(b)"); v.Tier != Ask || len(v.Always) != 0 {
		t.Errorf("a(b): %s, always %q; want ask with no rule", v.Tier, v.Always)
	}
}

// TestWorkingDirectoryIsRead: a command that runs in another directory
// than the call's (a static cd before it, git -C, go -C, env -C) reads
// that directory, decided as a path it names: outside the workspace it
// asks, as make -C does, and the approved call's grant reads it (the jail
// used to refuse what nobody was asked about). Inside the workspace, the
// call's private /tmp, and a cd that only moves on (cd .. && cd ws) are
// allowed as before; a credential directory is denied.
func TestWorkingDirectoryIsRead(t *testing.T) {
	p, root, ws, home := testPolicy(t, ModeAsk, "")
	out := filepath.Join(root, "out")
	for _, cmd := range []string{
		"cd ../out && ls", "cd ../out && git status", "git -C ../out status",
		"go -C ../out test", "env -C ../out ls", "make -C ../out",
		"cd src && cd ../../out && ls", "(cd ../out && ls)", "bash -c 'cd ../out && ls'",
		"cd ../out && timeout 5 ls && cat deep/x",
		"builtin cd ../out && ls", "command cd ../out && ls", "builtin pushd ../out && ls",
	} {
		v := p.Decide(bashCall(cmd))
		dirs := 0
		for _, pv := range v.Paths {
			if pv.Resolved == out {
				dirs++
			}
		}
		if v.Tier != Ask || !strings.Contains(v.Reason, "reads "+out+", outside the workspace") || dirs != 1 {
			t.Errorf("%s: %s — %s (%d verdicts for %s); want ask, reading it once", cmd, v.Tier, v.Reason, dirs, out)
			continue
		}
		if !slices.Contains(v.Always, "Read("+out+"/**)") {
			t.Errorf("%s: always would save %v; want Read(%s/**)", cmd, v.Always, out)
		}
		v.Tier = Allow // approved
		spec, err := p.Compile(v, "")
		if err != nil {
			t.Fatalf("%s: compile: %v", cmd, err)
		}
		if !slices.ContainsFunc(spec.Paths, func(r jail.PathRule) bool { return r.Path == out }) {
			t.Errorf("%s: the approved grant does not include %s: %+v", cmd, out, spec.Paths)
		}
	}
	for _, cmd := range []string{
		"cd src && go test ./...", "cd /tmp && ls", "git -C src log", "cd .. && cd ws && ls",
		"cd src && cd .. && ls", "cd ../out", "cd " + ws + "/src && ls", "cd ~ && cd " + ws + " && ls",
		"env -C src ls", "go -C src vet ./...", "builtin cd src && ls", "command cd src && go test ./...",
	} {
		if v := p.Decide(bashCall(cmd)); v.Tier != Allow {
			t.Errorf("%s: %s — %s; want allow", cmd, v.Tier, v.Reason)
		}
	}
	if v := p.Decide(bashCall("cd && ls")); v.Tier != Ask || !strings.Contains(v.Reason, "reads "+home) {
		t.Errorf("cd && ls: %s — %s; want ask, reading the home directory", v.Tier, v.Reason)
	}
	if v := p.Decide(bashCall("cd ~/.ssh && ls")); v.Tier != Deny {
		t.Errorf("cd ~/.ssh && ls: %s — %s; want deny", v.Tier, v.Reason)
	}
	// A directory only known at run time stays risky, with no path of it.
	if v := p.Decide(bashCall(`cd "$D" && ls`)); v.Tier != Ask || len(v.Paths) != 0 {
		t.Errorf(`cd "$D" && ls: %s — %s %+v; want ask (risky), no path`, v.Tier, v.Reason, v.Paths)
	}
}

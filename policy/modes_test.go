package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sens "brig/internal/sensitive"
	"brig/jail"
)

// modeFixture is the tree() fixture with the home's startup files, a
// directory of its own on PATH, and rules (TOML; "" for none).
type modeFixture struct {
	root, ws, home, pathDir string
	loaded                  Loaded
	machine                 Machine
}

func newModeFixture(t testing.TB, rules string) *modeFixture {
	t.Helper()
	root, ws, home := tree(t)
	f := &modeFixture{root: root, ws: ws, home: home, pathDir: filepath.Join(root, "tools", "bin")}
	for _, d := range []string{f.pathDir, home + "/.config/systemd/user", home + "/.local/bin"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, file := range []string{home + "/.bashrc", home + "/.profile", f.pathDir + "/git"} {
		if err := os.WriteFile(file, []byte("# original\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if rules != "" {
		c, _, err := ParseConfig("rules.toml", []byte(rules))
		if err != nil {
			t.Fatal(err)
		}
		f.loaded.Rules, f.loaded.Sandbox = c.Rules, c.Sandbox
	}
	f.machine = Machine{
		Home: home, Env: []string{"PATH=" + f.pathDir + ":/usr/bin:/bin", "HOME=" + home},
		Namespaces: true, CacheRoot: filepath.Join(root, "cache"),
		BrigDirs: []string{filepath.Join(home, ".config", "brig")}, Limits: jail.DefaultLimits(),
	}
	return f
}

func (f *modeFixture) policy(t testing.TB, mode Mode) *Policy {
	t.Helper()
	p, err := New(f.ws, f.loaded, mode, f.machine)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func readCall(p string) Call { return Call{Tool: "read_file", Effect: EffectRead, Read: []string{p}} }
func writeCall(p string) Call {
	return Call{Tool: "write_file", Effect: EffectWrite, Write: []string{p}}
}
func bashCall(cmd string) Call {
	return Call{Tool: "bash", Effect: EffectExec, Command: cmd}
}

// laterExecTargets is one path under every later-executed place of the
// sensitive lists, and the fixture's own PATH directory.
func laterExecTargets(f *modeFixture) map[string]string {
	out := map[string]string{f.pathDir + "/git": "PATH"}
	for _, e := range sens.Home() {
		if e.Kind == sens.LaterExec && !slices.ContainsFunc(sens.Home(), func(o sens.Entry) bool {
			return o.Kind == sens.Secret && within(filepath.Join(f.home, e.Path), filepath.Join(f.home, o.Path))
		}) {
			out[filepath.Join(f.home, e.Path, "planted")] = e.Reason
		}
	}
	for _, e := range sens.System() {
		if e.Kind == sens.LaterExec && !slices.ContainsFunc(sens.System(), func(o sens.Entry) bool {
			return o.Kind == sens.Secret && within(e.Path, o.Path)
		}) {
			out["/"+e.Path+"/planted"] = e.Reason
		}
	}
	return out
}

// TestModeDecisionTable: every mode against outside reads and writes,
// every later-executed place, a workspace write, a protected workspace
// path and the network, asserting the tier, whether the call is beyond the
// mode's profile, and the grant it compiles to (what the user's "yes"
// would run).
func TestModeDecisionTable(t *testing.T) {
	f := newModeFixture(t, "")
	outside := f.root + "/out/deep/x"
	type want struct {
		tier   Tier
		beyond bool
	}
	// Tiers in the order plan, ask, edit, auto.
	all := func(t Tier, beyond bool) [4]want { return [4]want{{t, beyond}, {t, beyond}, {t, beyond}, {t, beyond}} }
	cases := []struct {
		name  string
		call  Call
		want  [4]want
		grant func(t *testing.T, spec jail.Spec, exceeds []string)
	}{
		{"outside read", readCall(outside), all(Ask, true), func(t *testing.T, spec jail.Spec, ex []string) {
			if len(spec.Paths) != 1 || spec.Paths[0].Path != outside || spec.Paths[0].Access != jail.Read || len(ex) != 1 {
				t.Fatalf("the user's yes grants that one file, which is beyond the profile: %+v, exceeds %v", spec.Paths, ex)
			}
		}},
		{"outside read through bash", bashCall("cat " + outside), all(Ask, true), func(t *testing.T, spec jail.Spec, ex []string) {
			if !slices.Contains(ex, "exec "+outside) {
				t.Fatalf("the grant must name the outside file and only it beyond the profile: exceeds %v", ex)
			}
		}},
		{"outside write", writeCall("../out/new.txt"), [4]want{{Deny, false}, {Ask, true}, {Ask, true}, {Ask, true}}, func(t *testing.T, spec jail.Spec, ex []string) {
			if !slices.Contains(ex, "write "+f.root+"/out") {
				t.Fatalf("exceeds %v, spec %+v", ex, spec.Paths)
			}
		}},
		{"outside write through bash", bashCall("echo x > ../out/new.txt"), [4]want{{Deny, false}, {Ask, true}, {Ask, true}, {Ask, true}}, func(t *testing.T, spec jail.Spec, ex []string) {
			if !slices.Contains(ex, "write "+f.root+"/out") {
				t.Fatalf("exceeds %v", ex)
			}
		}},
		{"workspace write", writeCall("src/new.go"), [4]want{{Deny, false}, {Ask, false}, {Allow, false}, {Allow, false}}, func(t *testing.T, spec jail.Spec, ex []string) {
			if len(ex) != 0 || len(spec.Paths) != 1 || spec.Paths[0].Path != f.ws+"/src" || spec.Paths[0].Access != jail.Write {
				t.Fatalf("write on the file's directory, within the profile: %+v, exceeds %v", spec.Paths, ex)
			}
		}},
		{"workspace write through bash", bashCall("go build -o bin/app ."), [4]want{{Deny, false}, {Allow, false}, {Allow, false}, {Allow, false}}, func(t *testing.T, spec jail.Spec, ex []string) {
			if len(ex) != 0 || !slices.ContainsFunc(spec.Paths, func(r jail.PathRule) bool { return r.Path == f.ws && r.Access == jail.Write }) {
				t.Fatalf("the workspace profile: %+v, exceeds %v", spec.Paths, ex)
			}
		}},
		{"unknown command in the workspace", bashCall("./configure"), [4]want{{Ask, false}, {Ask, false}, {Ask, false}, {Allow, false}}, func(t *testing.T, spec jail.Spec, ex []string) {
			if len(ex) != 0 || !spec.Network {
				t.Fatalf("the profile and nothing more (its network is the proxy, each host decided as it connects): exceeds %v, network %v", ex, spec.Network)
			}
		}},
		{"deletion through bash", bashCall("rm -rf build"), [4]want{{Deny, false}, {Ask, false}, {Ask, false}, {Ask, false}}, func(t *testing.T, spec jail.Spec, ex []string) {
			if len(ex) != 0 {
				t.Fatalf("exceeds %v", ex)
			}
		}},
		{"protected workspace path", writeCall(".git/hooks/pre-commit"), all(Deny, false), nil},
		{"protected workspace path through bash", bashCall("cp /etc/hosts .git/hooks/post-merge"), all(Deny, false), nil},
		// Another program's settings in a git directory (lazygit runs the
		// pager .git/lazygit.yml names); git's own files there ask in
		// every mode, as bash's writes there do: .git/packed-refs or
		// .git/logs/HEAD emptied is history undo does not hold (red team,
		// 2026-12-03: auto and edit mode approved them). The control: the
		// same write outside .git is approved.
		{"another program's file in .git", writeCall(".git/lazygit.yml"), all(Deny, false), nil},
		{"git's own file in .git", writeCall(".git/SQUASH_MSG"), [4]want{{Deny, false}, {Ask, false}, {Ask, false}, {Ask, false}}, nil},
		{"git's history in .git", writeCall(".git/packed-refs"), [4]want{{Deny, false}, {Ask, false}, {Ask, false}, {Ask, false}}, nil},
		{"git's reflog in .git", writeCall(".git/logs/HEAD"), [4]want{{Deny, false}, {Ask, false}, {Ask, false}, {Ask, false}}, nil},
		// A command the built-in lists allow, its option aimed at .git
		// (red team, 2026-12-03: ask mode ran it unasked); the control,
		// the same option aimed elsewhere, runs unasked in every mode
		// but plan.
		{"a built-in allowed command writing .git", bashCall("go test -coverprofile=.git/packed-refs ."), [4]want{{Deny, false}, {Ask, false}, {Ask, false}, {Ask, false}}, nil},
		{"a built-in allowed command writing elsewhere", bashCall("go test -coverprofile=c.out ."), [4]want{{Deny, false}, {Allow, false}, {Allow, false}, {Allow, false}}, nil},
		{"a file named like git's outside .git", writeCall("packed-refs"), [4]want{{Deny, false}, {Ask, false}, {Allow, false}, {Allow, false}}, nil},
		{"protected workspace path read", readCall(".git/hooks"), all(Allow, false), func(t *testing.T, spec jail.Spec, ex []string) {
			if len(ex) != 0 {
				t.Fatalf("exceeds %v", ex)
			}
		}},
		{"credential read", readCall("~/.ssh/id_ed25519"), all(Deny, false), nil},
		// The host is what lies beyond the profile (the proxy lets the
		// fetch reach that host alone); the jail itself is the profile's.
		{"network host", Call{Tool: "web_fetch", Effect: EffectNetwork, Host: "go.dev"}, all(Ask, true), nil},
		{"network through bash", bashCall("curl -s https://example.com"), [4]want{{Ask, false}, {Ask, false}, {Ask, false}, {Allow, false}}, func(t *testing.T, spec jail.Spec, ex []string) {
			if !spec.Network || len(ex) != 0 {
				t.Fatalf("a command approved by the mode reaches hosts only through the proxy, each decided as it connects: network %v, exceeds %v", spec.Network, ex)
			}
		}},
	}
	for target, reason := range laterExecTargets(f) {
		cases = append(cases,
			struct {
				name  string
				call  Call
				want  [4]want
				grant func(t *testing.T, spec jail.Spec, exceeds []string)
			}{"later-executed " + target + " (" + reason + ")", writeCall(target), all(Deny, false), nil},
			struct {
				name  string
				call  Call
				want  [4]want
				grant func(t *testing.T, spec jail.Spec, exceeds []string)
			}{"later-executed through bash " + target, bashCall("echo evil >> " + target), all(Deny, false), nil},
		)
	}
	for i, mode := range Modes() {
		p := f.policy(t, mode)
		for _, c := range cases {
			t.Run(string(mode)+"/"+c.name, func(t *testing.T) {
				v := p.Decide(c.call)
				w := c.want[i]
				if v.Tier != w.tier || (len(v.Beyond) > 0) != w.beyond {
					t.Fatalf("%s, beyond %v (%s); want %s, beyond %v", v.Tier, v.Beyond, v.Reason, w.tier, w.beyond)
				}
				if v.Profile != ProfileOf(mode) {
					t.Fatalf("profile %s", v.Profile)
				}
				if v.Tier == Deny {
					if _, err := p.Compile(v, ""); err == nil {
						t.Fatal("a denied call compiled")
					}
					if strings.HasPrefix(c.name, "later-executed") && mode != ModePlan && !strings.Contains(v.Reason, "runs later outside the jail") {
						t.Fatalf("the reason does not say why: %s", v.Reason)
					}
					return
				}
				spec, err := p.Compile(v, "")
				if err != nil {
					t.Fatal(err)
				}
				ex, err := p.Exceeds(spec, mode, "")
				if err != nil {
					t.Fatal(err)
				}
				if c.call.Effect == EffectNetwork {
					// What is beyond is the host, which the proxy decides.
					if len(ex) != 0 || !spec.Network || !slices.ContainsFunc(v.Beyond, func(b Beyond) bool {
						return strings.Contains(b.What, c.call.Host) && b.Flag == "--allow-host "+c.call.Host
					}) {
						t.Fatalf("the host is beyond the profile, the jail is not: exceeds %v, network %v, beyond %+v", ex, spec.Network, v.Beyond)
					}
				} else if (len(ex) > 0) != w.beyond {
					t.Fatalf("the grant exceeds the profile by %v, but the verdict says beyond=%v", ex, w.beyond)
				}
				if c.grant != nil {
					c.grant(t, spec, ex)
				}
			})
		}
	}
}

// TestLaterExecNamedByAUserRule: a rule of the user's that names a
// later-executed file (or a credential) opens it; one that only covers it
// (Write(~/**), Read(/**)) does not, nor does any rule of an untrusted
// repository config.
func TestLaterExecNamedByAUserRule(t *testing.T) {
	f := newModeFixture(t, `[permissions]
allow = ["Write(~/**)", "Read(/**)", "Write(/**)", "Write(~/.profile)", "Read(~/.ssh/id_ed25519.pub)"]
`)
	p := f.policy(t, ModeAuto)
	for _, c := range []struct {
		call Call
		want Tier
	}{
		{writeCall("~/.bashrc"), Deny},
		{writeCall(f.pathDir + "/git"), Deny},
		{readCall("~/.ssh/id_ed25519"), Deny},
		{writeCall("~/.profile"), Allow},
		{readCall("~/.ssh/id_ed25519.pub"), Allow},
		{readCall("~/.bashrc"), Allow}, // reading a startup file is not writing it; Read(/**) covers it
	} {
		if v := p.Decide(c.call); v.Tier != c.want {
			t.Errorf("%v: %s (%s), want %s", append(c.call.Read, c.call.Write...), v.Tier, v.Reason, c.want)
		}
	}
	v := p.Decide(writeCall("~/.profile"))
	spec, err := p.Compile(v, "")
	if err != nil || !slices.ContainsFunc(spec.Paths, func(r jail.PathRule) bool { return r.Path == f.home && r.Access == jail.Write }) {
		t.Fatalf("the named file's grant: %+v %v", spec.Paths, err)
	}
}

// TestLaterExecWithHomeAsWorkspace: a workspace that is the home directory
// is refused; and were a policy built over it anyway, its startup files
// and systemd units would still be denied: the list holds wherever the
// workspace is.
func TestLaterExecWithHomeAsWorkspace(t *testing.T) {
	f := newModeFixture(t, "")
	if _, err := New(f.home, f.loaded, ModeEdit, f.machine); err == nil || !strings.Contains(err.Error(), "is your home directory") {
		t.Fatalf("a workspace that is HOME: %v", err)
	}
	if _, err := New(f.root, f.loaded, ModeEdit, f.machine); err == nil || !strings.Contains(err.Error(), "holds your home directory") {
		t.Fatalf("a workspace that holds HOME: %v", err)
	}
	p := f.policy(t, ModeEdit)
	p.Places.Workspace = f.home // as if the check were bypassed
	for _, path := range []string{".bashrc", ".config/systemd/user/x.service", ".local/bin/git"} {
		if v := p.Decide(writeCall(path)); v.Tier != Deny || !strings.Contains(v.Reason, "runs later outside the jail") {
			t.Errorf("%s in a HOME workspace: %s (%s)", path, v.Tier, v.Reason)
		}
	}
	if v := p.Decide(writeCall("src/main.go")); v.Tier != Allow {
		t.Errorf("control: an ordinary file of that workspace: %s (%s)", v.Tier, v.Reason)
	}
}

// TestWorkspaceInBrigsOwnDirectory: a workspace that is, or lies in, one
// of brig's own directories (config, state; also when named through a
// link) is refused, since calls may write the workspace and brig trusts
// what it keeps there; a workspace that holds one is not (its calls have
// it masked), nor is a sibling of one (the control).
func TestWorkspaceInBrigsOwnDirectory(t *testing.T) {
	f := newModeFixture(t, "")
	state := filepath.Join(f.home, ".local", "state", "brig")
	programs := filepath.Join(state, "programs")
	sibling := filepath.Join(f.home, ".local", "state", "other")
	for _, d := range []string{programs, sibling} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(f.root, "state-link")
	if err := os.Symlink(state, link); err != nil {
		t.Fatal(err)
	}
	m := f.machine
	m.BrigDirs = append(slices.Clone(m.BrigDirs), link) // named through the link: the check resolves it
	for _, ws := range []string{state, programs, filepath.Join(f.home, ".config", "brig")} {
		if err := os.MkdirAll(ws, 0o700); err != nil {
			t.Fatal(err)
		}
		if _, err := New(ws, f.loaded, ModeAuto, m); err == nil || !strings.Contains(err.Error(), "lies in brig's own directory") {
			t.Errorf("a workspace at %s: %v", ws, err)
		}
	}
	for _, ws := range []string{filepath.Join(f.home, ".local"), sibling, f.ws} {
		if _, err := New(ws, f.loaded, ModeAuto, m); err != nil {
			t.Errorf("control: a workspace at %s: %v", ws, err)
		}
	}
}

// TestUntrustedRulesOnlyTighten: an untrusted repository's ask and allow
// rules never loosen a built-in denial or a credential denial; its deny
// and ask rules do tighten; the same rules in the user's own file do
// loosen (the control).
func TestUntrustedRulesOnlyTighten(t *testing.T) {
	f := newModeFixture(t, "")
	repo := `[permissions]
ask = ["Read(~/.ssh/**)", "Bash(cat:*)", "Bash(git push:*)", "Bash(sudo:*)", "Bash(git config:*)", "Bash(rm -rf ~:*)", "Write(~/.bashrc)", "Bash(go test:*)"]
deny = ["Read(./src/**)"]
`
	c, _, err := ParseConfig(filepath.Join(f.ws, ".brig/config.toml"), []byte(repo))
	if err != nil {
		t.Fatal(err)
	}
	loosening := []Call{
		readCall("~/.ssh/id_ed25519"), bashCall("cat ~/.ssh/id_ed25519"), bashCall("git push origin main"),
		bashCall("sudo id"), bashCall("git config core.fsmonitor 'touch /tmp/x'"), bashCall("rm -rf ~"),
		writeCall("~/.bashrc"),
	}
	for _, tc := range []struct {
		name    string
		rules   RuleSet
		loosens bool
	}{
		{"untrusted repository", RuleSet{Ask: tightening(c.Rules.Ask), Deny: tightening(c.Rules.Deny)}, false},
		{"the user's own file", c.Rules, true},
	} {
		f.loaded.Rules = tc.rules
		p := f.policy(t, ModeAuto)
		for _, call := range loosening {
			v := p.Decide(call)
			if (v.Tier != Deny) != tc.loosens {
				t.Errorf("%s: %s%v: %s (%s)", tc.name, call.Command, call.Read, v.Tier, v.Reason)
			}
		}
		if v := p.Decide(readCall("src/a.go")); v.Tier != Deny {
			t.Errorf("%s: a deny rule tightens: %s (%s)", tc.name, v.Tier, v.Reason)
		}
		f.loaded.Rules = RuleSet{}
	}
	// An untrusted ask makes a built-in allow ask (stricter), and says so.
	f.loaded.Rules = RuleSet{Ask: tightening(c.Rules.Ask)}
	p := f.policy(t, ModeAsk)
	if v := p.Decide(bashCall("go test ./...")); v.Tier != Ask || !strings.Contains(v.Reason, "untrusted repository config") {
		t.Errorf("an untrusted ask on an allowed command: %s (%s)", v.Tier, v.Reason)
	}
}

// TestAddDirs: an added directory widens the profile for this run —
// readable, or writable unless :ro — and directories that hold
// credentials, brig's files, later-executed files or the home directory
// are refused.
func TestAddDirs(t *testing.T) {
	f := newModeFixture(t, "")
	p := f.policy(t, ModeAuto)
	for _, bad := range []ExtraDir{
		{Path: f.home}, {Path: f.root}, {Path: f.home + "/.ssh", ReadOnly: true}, {Path: f.home + "/.config/systemd"},
		{Path: f.pathDir}, {Path: "/"}, {Path: f.ws + "/src"}, {Path: f.home + "/.config/brig", ReadOnly: true},
	} {
		if err := p.AddDirs(bad); err == nil {
			t.Errorf("--add-dir %s was accepted", bad)
		}
	}
	if err := p.AddDirs(ExtraDir{Path: f.pathDir, ReadOnly: true}); err != nil {
		t.Errorf("a PATH directory read-only: %v", err)
	}
	// A path given through a link in the workspace (the repository's
	// choice of target) is refused, naming the link; the same directory
	// named as itself is accepted (the control, below).
	if err := os.Symlink(f.home+"/notes", f.ws+"/notes-link"); err != nil {
		t.Fatal(err)
	}
	d, err := ParseAddDir("notes-link", f.ws, f.home)
	if err != nil || d.Path != f.home+"/notes" {
		t.Fatalf("ParseAddDir through a link: %+v %v", d, err)
	}
	if err := p.AddDirs(d); err == nil || !strings.Contains(err.Error(), "symbolic link "+f.ws+"/notes-link") || !strings.Contains(err.Error(), "--add-dir "+f.home+"/notes") {
		t.Errorf("--add-dir through a link in the workspace: %v; want it refused, naming the link and the directory to name", err)
	}
	if d, err := ParseAddDir(f.home+"/notes", f.ws, f.home); err != nil || p.AddDirs(d) != nil {
		t.Fatalf("control: --add-dir of the directory itself: %v", err)
	}
	if err := p.AddDirs(ExtraDir{Path: f.root + "/out/deep", ReadOnly: true}, ExtraDir{Path: f.home + "/notes"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		call   Call
		tier   Tier
		beyond bool
	}{
		{readCall(f.root + "/out/deep/x"), Allow, false},
		{writeCall(f.root + "/out/deep/y"), Ask, true}, // added read-only
		{writeCall("~/notes/n2.md"), Allow, false},
		{bashCall("cp ~/notes/n.md ~/notes/n3.md"), Allow, false}, // cp asks as a command, but its grant fits the profile
		{readCall(f.root + "/out/other"), Ask, true},
		{writeCall("~/notes"), Deny, false}, // the added root itself
	} {
		v := p.Decide(c.call)
		if v.Tier != c.tier || (len(v.Beyond) > 0) != c.beyond {
			t.Errorf("%+v: %s, beyond %v (%s)", c.call, v.Tier, v.Beyond, v.Reason)
		}
	}
	v := p.Decide(bashCall("cat ~/notes/n.md " + f.root + "/out/deep/x && touch ~/notes/t"))
	spec, err := p.Compile(v, "")
	if err != nil {
		t.Fatal(err)
	}
	has := func(path string, a jail.Access) bool {
		return slices.ContainsFunc(spec.Paths, func(r jail.PathRule) bool { return r.Path == path && r.Access == a })
	}
	if v.Tier != Allow || !has(f.home+"/notes", jail.Write) || !has(f.root+"/out/deep", jail.Exec) {
		t.Fatalf("a bash call gets the added directories: %s %+v", v.Tier, spec.Paths)
	}
	if ex, _ := p.Exceeds(spec, ModeAuto, ""); len(ex) != 0 {
		t.Fatalf("the added directories are part of the profile: %v", ex)
	}
}

var profileFuzzPaths = []string{
	"src/a.go", "src/new.go", "newdir/deeper/f", ".", "..", "../out/deep/x", "../out/new", "/", "~", "~/.bashrc",
	"~/.ssh/id_ed25519", "~/notes/n.md", "~/.config/systemd/user/x.service", "~/.local/bin/git", "/etc/passwd",
	"/etc/shadow", "/etc/cron.d/x", "/usr/bin/git", "/var/tmp/x", "/tmp/x", "/dev/shm/x", "tokey", "src/up/out/deep/x",
	"inner/a.go", "dangling", "src/hooks/pre-commit", ".git/hooks/x", ".git/config", ".brig/config.toml", ".envrc",
	"~/.config/brig/config.toml", "/proc/1/environ", "/sys/kernel", "/home", "/root/.bashrc", "/usr/local/bin/x",
}

// FuzzNoGrantBeyondTheProfile: with no rule of the user's and no human
// answer, whatever the call, no mode approves (and --yes, which approves
// only asks within the profile, would not run) a call whose compiled grant
// exceeds the mode's jail profile.
func FuzzNoGrantBeyondTheProfile(f *testing.F) {
	f.Add(uint8(0), uint8(0), "go test ./...")
	f.Add(uint8(6), uint8(5), "cat ../out/deep/x > src/copy")
	f.Add(uint8(7), uint8(9), "echo x >> ~/.bashrc; cp /etc/hosts /var/tmp/x")
	f.Add(uint8(3), uint8(3), "make test")
	f.Add(uint8(8), uint8(1), "tar xf a.tar -C ../out")
	fx := newModeFixture(f, "")
	policies := map[Mode]*Policy{}
	for _, m := range Modes() {
		policies[m] = fx.policy(f, m)
	}
	f.Fuzz(func(t *testing.T, kind, pathIdx uint8, line string) {
		path := profileFuzzPaths[int(pathIdx)%len(profileFuzzPaths)]
		var call Call
		switch kind % 10 {
		case 0:
			call = readCall(path)
		case 1:
			call = writeCall(path)
		case 2:
			call = Call{Tool: "list_directory", Effect: EffectRead, Read: []string{path}}
		case 3:
			call = Call{Tool: "search_code", Effect: EffectRead, Read: []string{path}, Programs: true}
		case 4:
			call = Call{Tool: "move_path", Effect: EffectWrite, Write: []string{path, "src/moved"}}
		case 5:
			call = Call{Tool: "delete_path", Effect: EffectWrite, Write: []string{path}, Confirm: true}
		case 6:
			call = bashCall("cat " + path + " && " + line)
		case 7:
			call = bashCall(line)
		case 8:
			call = bashCall("echo x > " + path + "; " + line)
		case 9:
			call = Call{Tool: "web_fetch", Effect: EffectNetwork, Host: strings.Trim(line, " /:")}
		}
		for _, mode := range Modes() {
			p := policies[mode]
			var v Verdict
			inTime(t, line, func() { v = p.Decide(call) })
			unasked := v.Tier == Allow || v.Tier == Ask && len(v.Beyond) == 0
			if !unasked {
				continue
			}
			spec, err := p.Compile(v, "")
			if err != nil {
				continue // nothing runs
			}
			ex, err := p.Exceeds(spec, mode, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(ex) > 0 {
				t.Fatalf("%s mode, %+v: %s without a human (%s), yet its grant exceeds the profile by %v", mode, call, v.Tier, v.Reason, ex)
			}
		}
	})
}

// TestREADMEListsLaterExec keeps the README's table of later-executed
// places identical to internal/sensitive's list.
func TestREADMEListsLaterExec(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), LaterExecMarkdown()) {
		t.Fatal("README.md's table of later-executed places differs from policy.LaterExecMarkdown(); paste the new table into the README")
	}
}

// TestDeletionsAskInAutoMode: a deletion asks in auto mode too, also
// when its path is only known at run time (it can name any path in the
// workspace, .git included) and when it deletes git history that undo
// does not hold; controls: auto mode approves the same lines without the
// deletion, and a deletion of /tmp's scratch.
func TestDeletionsAskInAutoMode(t *testing.T) {
	f := newModeFixture(t, "")
	p := f.policy(t, ModeAuto)
	for _, cmd := range []string{
		`rm -rf build`,
		`rm a.txt b.txt`,
		`d=src; rm -rf "$d"`,
		`g=.git/objects; rm -rf "$g"`,
		`set -- src; rm -rf "$@"`,
		`x=src; find "$x" -delete`,
		`f=a.txt; unlink "$f"`,
		`d=src; rmdir "$d"`,
		`f=a.txt; shred -u "$f"`,
		`x=build; git clean -fdx "$x"`,
		`git reflog expire --expire=now --all`,
		`git reflog delete HEAD@{1}`,
		`git gc --prune=now`,
		`git prune`,
		`git stash drop`,
		`git stash clear`,
		`git -c gc.pruneExpire=now -c gc.reflogExpire=now gc -q`,
		`git branch -D feature`,
		`git tag -d v1`,
		`git update-ref -d refs/heads/x`,
		`printf 'delete refs/heads/x\n' | git update-ref --stdin`,
		`git branch -d merged`,
		`git update-ref refs/heads/x 0000000000000000000000000000000000000000`,
		`git send-pack . :refs/heads/feature`,
		`cd .; rm -rf src`,
		`cd sub; git reflog expire --expire=now --all`,
		`cd .git/logs; truncate -s0 HEAD`,
		`x=rm; $x -rf src`,
		`x='rm -rf src'; eval "$x"`,
		`x='rm -rf src'; trap "$x" EXIT`,
		`echo 'rm -rf src' | bash`,
		`git branch -M master keep`,
		`git branch -C master keep`,
		`git branch --force -m master keep`,
		`git tag -f v1`,
		`git symbolic-ref -d HEAD`,
		`git reflog drop`,
		`git fetch --prune . 'refs/tags/*:refs/heads/*'`,
		`git fetch -p origin main:main`,
		`tar -xC .git -f a.tar`,
		`tar -xC.git -f a.tar`,
		`tar xCf .git a.tar`,
		`tar -x -C . -C .git -f a.tar`,
		`patch -E -d .git -p0 < p.diff`,
		`patch --directory=.git -p0 < p.diff`,
		`mv .git/objects /tmp/o`,
		`: > .git/packed-refs`,
		`sed -i d .git/packed-refs`,
		`truncate -s0 .git/packed-refs`,
		// Red team, 2026-12-03: a line that does not parse (bash runs
		// what comes before the error) …
		"rm notes.txt; git branch -D old\n{",
		// … long options shortened, as git takes them …
		`git branch --del old`,
		`git branch --d old`,
		`git branch --del --forc feat`,
		`git branch --mov --forc a b`,
		`git tag --del v1`,
		`git tag --forc v1`,
		`printf 'delete refs/heads/x\n' | git update-ref --stdi`,
		`git gc --prun=now`,
		`git clean --forc -d`,
		`git clean --fo`,
		`git symbolic-ref --del HEAD`,
		`git fetch --pru . 'refs/heads/*:refs/heads/*'`,
		// … other tools that delete what they name …
		`gzip .git/logs/HEAD`,
		`xz notes.txt`,
		`bzip2 -9 notes.txt`,
		`tar --remove-files -cf /tmp/x.tar .git/refs/heads/feat`,
		`zip -m /tmp/a.zip notes.txt`,
		`rsync --remove-source-files .git/refs/heads/x /tmp/`,
		`rsync -a --delete src/ dst/`,
		`rsync -a --del src/ dst/`,
		`rsync -a --delete-after src/ dst/`,
		`git rm notes.txt`,
		`zstd --rm notes.txt`,
		// … and git running a command line of the caller's choosing.
		`git -c alias.x='!git branch -D feat; rm notes.txt' x`,
		`git rebase --autostash -x 'git branch -D feat' HEAD~1`,
		`git bisect run sh -c 'rm notes.txt'`,
		`git submodule foreach 'rm -rf .'`,
		`git difftool -x 'rm -rf src' HEAD`,
		// … or in a variable a program runs as one.
		`GIT_PAGER='rm notes.txt' git log`,
		`GIT_EXTERNAL_DIFF='rm notes.txt' git diff`,
		`GIT_SEQUENCE_EDITOR='rm notes.txt' git rebase -i HEAD`,
		`GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!rm notes.txt' git x`,
		`env GIT_CONFIG_PARAMETERS="'alias.x=!rm notes.txt'" git x`,
		// Red team, 2026-12-03 (second pass): a pattern bash expands to
		// .git, and tools that rewrite what they name in place.
		`: > .gi?/packed-refs`,
		`cp /dev/null .gi[t]/packed-refs`,
		`echo > {.git,x}/logs/HEAD`,
		`dd of=.gi?/packed-refs`,
		`tar -xf a.tar --directory=.gi?`,
		`shopt -s dotglob; : > ?git/packed-refs`,
		`perl -i -ne '' .git/logs/HEAD`,
		`perl -pi.bak -e 's/^/#/' .git/packed-refs`,
		`awk -i inplace 1 .git/packed-refs`,
		`ed -s .git/packed-refs`,
		`sponge .git/packed-refs`,
		`find .git/logs -type f -exec cp /dev/null {} \;`,
		`git bundle create .git/packed-refs HEAD`,
		`git repack -a -d`,
		`git repack -adq`,
		// Red team, 2026-12-03 (third pass): bash's negated and named
		// classes, nested and repeated braces, a link to .git made on
		// the line, and the paths find and xargs give at run time.
		`go test -coverprofile .gi[!x]/packed-refs .`,
		`: > .gi[[:alpha:]]/COMMIT_EDITMSG`,
		`tee {.g,y}{i,z}t/packed-refs </dev/null`,
		`tee {{.git,a},b}/x`,
		`echo > .gi{s..u}/x`,
		`ln -s .git gg; : > gg/logs/HEAD`,
		`find . -name packed-refs -exec cp /dev/null {} \;`,
		`echo .git/logs/HEAD | xargs truncate -s0`,
		`git ls-files | xargs sed -i s/a/b/`,
		// … (fourth pass): tools brig does not know the files of, a
		// script's own writes, and nocaseglob.
		`iconv -f utf8 -t utf8 -o .git/refs/heads/master z.txt`,
		`split -l1 a.txt .git/refs/heads/q1`,
		`sed -n 'w .git/index' /dev/null`,
		`awk '{print > ".git/x"}' a.txt`,
		`perl -e 'open(F, ">.git/packed-refs")'`,
		`shopt -s nocaseglob; cp a.txt .GI[T]/x`,
	} {
		v := p.Decide(bashCall(cmd))
		if v.Tier != Ask || !strings.Contains(v.Reason, "deletions ask in every mode") {
			t.Errorf("%s: %s (%s), want a deletion's question", cmd, v.Tier, v.Reason)
		}
		// Asked every time: no rule is offered to remember the answer.
		if len(v.Always) != 0 {
			t.Errorf("%s: offers %v to remember", cmd, v.Always)
		}
	}
	// The reason says whose files: the workspace's, or git's own.
	for cmd, want := range map[string]string{`git clean -fdx`: "deletes files:", `rm -rf build`: "deletes files:", `git reflog expire --all`: "git's own files", `: > .git/packed-refs`: "git's own files"} {
		if v := p.Decide(bashCall(cmd)); !strings.Contains(v.Reason, want) {
			t.Errorf("%s: %q, want %q", cmd, v.Reason, want)
		}
	}
	for _, cmd := range []string{`d=src; ls "$d"`, `git gc`, `git stash list`, `git reflog`, `d=src; touch "$d/x"`, `git tag v1`, `echo x > notes.txt`, `cat .git/HEAD`,
		`git branch -m old new`, `git branch -c main copy`, `cd sub; ls`, `cd sub && go build ./...`, `eval 'ls -la'`, `git fetch -p origin`, `git update-ref refs/heads/x HEAD`, `tar -xf a.tar`, `tar -xzf a.tgz -C out`, `patch -p1 < p.diff`,
		// Controls of the above: a line that parses, long options that
		// delete nothing, compressors that keep their input, git rm of
		// the index only.
		"git status\ngit log -1", `git branch --list`, `git branch --format='%(refname)' -a`, `git tag --list`, `git clean --dry-run`, `gzip -k notes.txt`, `gzip -c notes.txt > /tmp/n.gz`, `tar -cf /tmp/x.tar src`, `zip /tmp/a.zip notes.txt`, `rsync -a src/ dst/`, `git rm --cached notes.txt`, `zstd notes.txt`, `GIT_PAGER=cat git log`, `GIT_EDITOR=true git commit --amend`, `rsync -a --delay-updates src/ dst/`,
		// … and of the second pass: patterns that cannot expand to
		// .git, reads, in-place edits elsewhere, repacks that keep
		// unreachable objects.
		`: > ?git.txt`, `cp a.txt */b.txt`, `echo > {a,b}/x`, `sed -i s/a/b/ *.go`, `perl -ne print .git/logs/HEAD`, `perl -pi -e 's/a/b/' notes.txt`,
		`awk 1 .git/packed-refs`, `awk -i inplace 1 notes.txt`, `find . -name '*.go' -exec gofmt -l {} +`, `git bundle create /tmp/b.bundle HEAD`, `git repack -Ad`, `git repack -d`,
		`find . -name '*.go' -exec grep -l x {} +`, `ls | xargs wc -l`, `ln -s src/a b`, `echo x > file{1..3}.txt`, `xargs -a list.txt cat`, `: > x[!a].txt`,
		`cat .git/HEAD`, `ls .git`, `sed -n p .git/HEAD`, `diff .git/HEAD notes.txt`, `iconv -f utf8 -t utf8 -o out.txt notes.txt`, `perl -ne print .git/HEAD`} {
		if v := p.Decide(bashCall(cmd)); v.Tier != Allow {
			t.Errorf("control %s: %s (%s), want auto mode's approval", cmd, v.Tier, v.Reason)
		}
	}
}

// TestReadDenyRulesHideTheirPaths: the paths your Read deny rules name
// (a directory with /**, a file, a one-level pattern) are hidden in every
// bash call's view, so grep -r or a glob reaches nothing there; a rule
// with ** before its end, a rule over the whole workspace and one over
// the system's files hide nothing; an ordinary file stays readable.
func TestReadDenyRulesHideTheirPaths(t *testing.T) {
	f := newModeFixture(t, `[permissions]
deny = ["Read(./secrets/**)", "Read(./secret.txt)", "Read(./keys/*.key)", "Read(**/*.env)", "Read(/usr/**)", "Read(./missing/**)"]
`)
	for _, p := range []string{"secrets/db.env", "secret.txt", "keys/a.key", "keys/readme", "app.env"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(f.ws, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(f.ws, p), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := f.policy(t, ModeAuto)
	v := p.Decide(bashCall("grep -r hunter2 ."))
	if v.Tier != Allow {
		t.Fatalf("grep -r: %s (%s)", v.Tier, v.Reason)
	}
	spec, err := p.Compile(v, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"secrets", "secret.txt", "keys/a.key"} {
		if !slices.Contains(spec.Hidden, filepath.Join(f.ws, h)) {
			t.Errorf("%s is not hidden: %v", h, spec.Hidden)
		}
	}
	for _, h := range []string{"keys/readme", "app.env", "missing", "", "keys"} {
		if slices.Contains(spec.Hidden, filepath.Join(f.ws, h)) {
			t.Errorf("%s is hidden: %v", h, spec.Hidden)
		}
	}
	if slices.ContainsFunc(spec.Hidden, func(h string) bool { return within(h, "/usr") }) {
		t.Errorf("a system path is hidden: %v", spec.Hidden)
	}
	for _, text := range []string{"Read(./**)", "Read(~/**)", "Read(/**)", "Read"} {
		r, err := ParseRule(text, Source{})
		if err != nil {
			t.Fatal(err)
		}
		if h := r.hides(p.ctx()); len(h) != 0 {
			t.Errorf("%s hides %v", text, h)
		}
	}
}

// TestAllowListedVariablesNeedPlainValues: an allow-listed variable
// given a value with shell syntax, or one only known at run time, asks:
// a Makefile line such as go build -o bin/app-$(GOOS) runs it; controls:
// plain values stay allowed.
func TestAllowListedVariablesNeedPlainValues(t *testing.T) {
	f := newModeFixture(t, "")
	p := f.policy(t, ModeAsk)
	for _, cmd := range []string{
		`GOOS="linux; echo INJECTED > injected.txt; true" make test`,
		`make test GOOS='linux;id'`,
		`export LANG='C $(id)'; go test ./...`,
		`t=linux; GOOS=$t go build ./...`,
		`env GOOS='a|b' go build ./...`,
	} {
		if v := p.Decide(bashCall(cmd)); v.Tier == Allow {
			t.Errorf("%s: allowed (%s)", cmd, v.Reason)
		}
	}
	for _, cmd := range []string{`GOOS=linux GOARCH=arm64 go build ./...`, `LANG=C.UTF-8 go test ./...`, `make test GOOS=linux`, `export CI=true; go test ./...`} {
		if v := p.Decide(bashCall(cmd)); v.Tier != Allow {
			t.Errorf("control %s: %s (%s)", cmd, v.Tier, v.Reason)
		}
	}
}

// TestBeyondOffersOnlyFlagsBrigTakes: the "to allow it" hint the user and
// the model read offers --add-dir only where brig -p would take it. A file
// directly in the home directory would need --add-dir ~, which brig
// refuses, so the hint names the rule alone; a file elsewhere outside the
// workspace gets the flag, and the flag it names is accepted (the control).
func TestBeyondOffersOnlyFlagsBrigTakes(t *testing.T) {
	f := newModeFixture(t, "")
	p := f.policy(t, ModeAuto)
	for _, c := range []struct {
		call Call
		flag string
	}{
		{readCall("~/.bashrc"), ""},
		{writeCall("~/todo.txt"), ""},
		{readCall(f.root + "/out/deep/x"), "--add-dir " + f.root + "/out/deep:ro"},
		{writeCall("~/notes/n2.md"), "--add-dir " + f.home + "/notes"},
	} {
		v := p.Decide(c.call)
		if v.Tier != Ask || len(v.Beyond) != 1 {
			t.Fatalf("%+v: %s, beyond %+v; want ask, beyond the profile", c.call, v.Tier, v.Beyond)
		}
		b := v.Beyond[0]
		if b.Flag != c.flag || b.Rule == "" {
			t.Errorf("%+v: flag %q, rule %q; want flag %q and a rule", c.call, b.Flag, b.Rule, c.flag)
		}
		if b.Flag == "" {
			if strings.Contains(b.Hint(), "--add-dir") {
				t.Errorf("%+v: the hint offers a flag brig refuses: %s", c.call, b.Hint())
			}
			continue
		}
		d, err := ParseAddDir(strings.TrimPrefix(b.Flag, "--add-dir "), f.ws, f.home)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.policy(t, ModeAuto).AddDirs(d); err != nil {
			t.Errorf("%+v: the flag the hint offers is refused: %v", c.call, err)
		}
	}
}

// TestAliasExpansionAsksInEveryMode: with alias expansion turned on, a
// later command of the line runs an alias's text the analysis never sees
// (cat README.md after alias cat='rm -rf src; cat'), so turning it on, or
// defining an alias, asks in every mode as a hidden command does, and no
// rule is offered that would spare the question; the control: set -e.
func TestAliasExpansionAsksInEveryMode(t *testing.T) {
	f := newModeFixture(t, "")
	for _, mode := range []Mode{ModeAsk, ModeEdit, ModeAuto} {
		p := f.policy(t, mode)
		for _, line := range []string{"set -o posix\nalias cat='rm -rf src; cat'\ncat README.md", "shopt -s expand_aliases; ls", "alias ll='ls -la'"} {
			if v := p.Decide(bashCall(line)); v.Tier != Ask || len(v.Always) != 0 {
				t.Errorf("%s: %q: %s, rules %v (%s); want ask, nothing to save", mode, line, v.Tier, v.Always, v.Reason)
			}
		}
		if v := p.Decide(bashCall("set -e; cat README.md")); v.Tier != Allow {
			t.Errorf("%s: control: %s (%s)", mode, v.Tier, v.Reason)
		}
	}
}

// TestNoRuleForAReaderThatWrites: echo x > ok.txt asks only because it
// writes a file, which the built-in entry for echo does not cover; a rule
// names the command, not the file, so Bash(echo:*) saved from that
// question would let every later echo write every file of the workspace
// (a Makefile) unasked. No rule is offered for it; the control: mkdir,
// which asks as a command, gets its rule.
func TestNoRuleForAReaderThatWrites(t *testing.T) {
	f := newModeFixture(t, "")
	p := f.policy(t, ModeAsk)
	for _, line := range []string{"echo hi > ok.txt", "printf x > main.go", "cat > Makefile <<'EOF'\nall: ; curl x | sh\nEOF"} {
		if v := p.Decide(bashCall(line)); v.Tier != Ask || len(v.Always) != 0 {
			t.Errorf("%q: %s, rules %v; want ask with no rule offered", line, v.Tier, v.Always)
		}
	}
	if v := p.Decide(bashCall("mkdir build")); v.Tier != Ask || !slices.Equal(v.Always, []string{"Bash(mkdir:*)"}) {
		t.Errorf("control: mkdir build: %s, rules %v", v.Tier, v.Always)
	}
}

// TestAddDirUnderTmp (new user, 2026-12-02): a directory under /tmp added
// read-only is the host's, carried into the call's private /tmp
// read-only: a bash write into it is beyond the profile (--yes never
// approves it), not a write to "the call's private temporary directory".
// Control: the rest of /tmp stays the call's own.
func TestAddDirUnderTmp(t *testing.T) {
	f := newModeFixture(t, "")
	p := f.policy(t, ModeAuto)
	p.Machine.Namespaces = true
	dir, err := os.MkdirTemp("/tmp", "brig-adddir-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := p.AddDirs(ExtraDir{Path: dir, ReadOnly: true}); err != nil {
		t.Fatal(err)
	}
	v := p.Decide(bashCall("echo x > " + dir + "/f.txt"))
	if v.Tier == Allow || len(v.Beyond) == 0 || strings.Contains(v.Reason, "private temporary") {
		t.Errorf("a write into a read-only added dir under /tmp: %s, beyond %v (%s)", v.Tier, v.Beyond, v.Reason)
	}
	if v := p.Decide(bashCall("echo x > /tmp/brig-own-scratch.txt")); v.Tier != Allow || len(v.Beyond) != 0 {
		t.Errorf("control: the call's own /tmp: %s, beyond %v (%s)", v.Tier, v.Beyond, v.Reason)
	}
}

// TestAddDirNamesAnEntryThatExists (new user, 2026-12-02): --add-dir
// ~/.config was refused naming ~/.config/gcloud, which the machine did
// not have. The refusal names a credential entry that exists when one
// does, and otherwise says the one it names is not there yet.
func TestAddDirNamesAnEntryThatExists(t *testing.T) {
	f := newModeFixture(t, "")
	p := f.policy(t, ModeAuto)
	cfg := filepath.Join(f.home, ".config")
	err := p.AddDirs(ExtraDir{Path: cfg, ReadOnly: true})
	if err == nil {
		t.Fatal("--add-dir ~/.config was accepted")
	}
	if !strings.Contains(err.Error(), "not there now") {
		// The fixture's home may hold an entry: then that one is named.
		named := strings.Fields(strings.TrimPrefix(err.Error(), "--add-dir "+cfg+":ro: "))[0]
		if _, serr := os.Lstat(named); serr != nil {
			t.Fatalf("the refusal names %s, which does not exist: %v", named, err)
		}
	}
	if err := os.MkdirAll(filepath.Join(cfg, "gh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := p.AddDirs(ExtraDir{Path: cfg, ReadOnly: true}); err == nil || !strings.Contains(err.Error(), ": "+filepath.Join(cfg, "gh")+" holds credentials") {
		t.Fatalf("with ~/.config/gh there: %v", err)
	}
}

// TestAskRulesAskInEveryMode (new user, 2026-12-03): edit and auto mode
// approved calls that the user's own ask rules matched — Bash(python3:*)
// and Write(./calc.py) — and an untrusted repository's ask rule, which
// can only tighten, tightened nothing there. A rule that says ask asks in
// every mode; controls: the same calls without the rules are approved,
// and a built-in list's ask is still the mode's to approve.
func TestAskRulesAskInEveryMode(t *testing.T) {
	rules := "[permissions]\nask = [\"Bash(python3:*)\", \"Write(./calc.py)\", \"Mcp(srv__drop)\"]\n"
	mcp := Call{Tool: "srv__drop", Effect: EffectMCP}
	for _, mode := range []Mode{ModeEdit, ModeAuto} {
		p := newModeFixture(t, rules).policy(t, mode)
		for _, c := range []Call{bashCall("python3 -m pytest"), writeCall("calc.py"), mcp} {
			if c.Effect == EffectMCP && mode != ModeAuto {
				continue // edit mode asks for MCP tools anyway
			}
			v := p.Decide(c)
			if v.Tier != Ask || !strings.Contains(v.Reason, "an ask rule asks in every mode") || len(v.Always) != 0 {
				t.Errorf("%s mode, %s: %s (%s), always %v; want it asked", mode, c.Tool, v.Tier, v.Reason, v.Always)
			}
		}
		// An untrusted repository's ask rule counts the same.
		f := newModeFixture(t, "")
		f.loaded.Rules.Ask = tightening(newModeFixture(t, rules).loaded.Rules.Ask)
		if v := f.policy(t, mode).Decide(bashCall("python3 -m pytest")); v.Tier != Ask {
			t.Errorf("%s mode, the repository's ask rule: %s (%s)", mode, v.Tier, v.Reason)
		}
		// Controls.
		p = newModeFixture(t, "").policy(t, mode)
		if v := p.Decide(writeCall("calc.py")); v.Tier != Allow {
			t.Errorf("%s mode without the rule, write calc.py: %s (%s)", mode, v.Tier, v.Reason)
		}
		if mode == ModeAuto {
			for _, c := range []Call{bashCall("python3 -m pytest"), bashCall("git reset --hard HEAD")} {
				if v := p.Decide(c); v.Tier != Allow {
					t.Errorf("auto mode without the rule, %q: %s (%s)", c.Command, v.Tier, v.Reason)
				}
			}
		}
	}
}

// TestHomeUnderTmp (new user, 2026-12-03): with HOME under /tmp, bash's
// `echo X >> ~/.bashrc` was allowed as a write to "the call's private
// temporary directory" (and reached only the call's tmpfs), while
// write_file ~/.bashrc was denied as a later-executed file. Both are now
// judged as ~/.bashrc. Control: elsewhere in /tmp is the call's own.
func TestHomeUnderTmp(t *testing.T) {
	f := newModeFixture(t, "")
	home, err := os.MkdirTemp("/tmp", "brig-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	if err := os.WriteFile(home+"/.bashrc", []byte("# original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.machine.Home = home
	f.machine.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home}
	p := f.policy(t, ModeAuto)
	for _, c := range []Call{bashCall("echo X >> ~/.bashrc"), writeCall("~/.bashrc")} {
		if v := p.Decide(c); v.Tier != Deny || strings.Contains(v.Reason, "private temporary") {
			t.Errorf("%s %v%q: %s (%s); want it denied as ~/.bashrc", c.Tool, c.Write, c.Command, v.Tier, v.Reason)
		}
	}
	if v := p.Decide(bashCall("echo X > /tmp/brig-own-scratch.txt")); v.Tier != Allow {
		t.Errorf("control: the call's own /tmp: %s (%s)", v.Tier, v.Reason)
	}
}

// TestAddDirMistakes (new user, 2026-12-03): PATH:RO was said not to
// exist, a device was accepted as a directory, and /etc:ro was refused
// for /etc/shadow with advice that led nowhere.
func TestAddDirMistakes(t *testing.T) {
	f := newModeFixture(t, "")
	dir := t.TempDir()
	for in, want := range map[string]string{
		dir + ":RO": `unknown suffix ":RO"; write ` + dir + `:ro`,
		dir + ":":   `unknown suffix ":"`,
		"/dev/null": "is not a directory",
		dir + "/no": "does not exist",
	} {
		if _, err := ParseAddDir(in, f.ws, f.home); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--add-dir %s: %v; want %q", in, err, want)
		}
	}
	if d, err := ParseAddDir(dir+":ro", f.ws, f.home); err != nil || !d.ReadOnly {
		t.Errorf("control: %s:ro: %+v %v", dir, d, err)
	}
	p := f.policy(t, ModeAuto)
	if err := p.AddDirs(ExtraDir{Path: "/etc", ReadOnly: true}); err == nil || !strings.Contains(err.Error(), "every call reads /etc already") {
		t.Errorf("--add-dir /etc:ro: %v", err)
	}
	if err := p.AddDirs(ExtraDir{Path: "/etc"}); err == nil || strings.Contains(err.Error(), "already") {
		t.Errorf("--add-dir /etc (writable): %v; want it refused for its secrets", err)
	}
}

// TestSandboxPathErrorNamesItsLine (new user, 2026-12-03): a [sandbox]
// path that cannot be granted names the file and line that grant it, as
// every other config mistake does; a path no file in effect holds keeps
// the list of files instead.
func TestSandboxPathErrorNamesItsLine(t *testing.T) {
	f := newModeFixture(t, "")
	cfg := filepath.Join(f.root, "config.toml")
	body := "[sandbox]\nnetwork = false\nread = [\n  \"/usr/share\",\n  \"~/nope\",\n]\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _, err := ParseConfig(cfg, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	f.loaded.Sandbox = c.Sandbox
	f.loaded.Layers = []Layer{{Kind: "global", File: cfg, Exists: true, Trusted: true}}
	_, err = New(f.ws, f.loaded, ModeAuto, f.machine)
	if err == nil || !strings.HasPrefix(err.Error(), cfg+`:5: [sandbox] path "~/nope"`) || strings.Contains(err.Error(), "[sandbox] of") {
		t.Errorf("error: %v", err)
	}
	// The control: a grant from no file in effect is said with the files.
	f.loaded.Layers = []Layer{{Kind: "global", File: cfg, Exists: true, Trusted: false}}
	if _, err = New(f.ws, f.loaded, ModeAuto, f.machine); err == nil || !strings.Contains(err.Error(), "(no config file)") {
		t.Errorf("without a file in effect: %v", err)
	}
}

// TestJqRawfileReadsItsFile (red team, 2026-12-03): jq --rawfile NAME
// FILE reads FILE; the analysis took the filter after it for the file and
// allowed reading a key in plan mode (the jail refused it). Control: the
// same of a workspace file is allowed.
func TestJqRawfileReadsItsFile(t *testing.T) {
	f := newModeFixture(t, "")
	p := f.policy(t, ModePlan)
	for _, cmd := range []string{`jq -n --rawfile a ~/.ssh/id_rsa '$a'`, `jq -n --slurpfile a ~/.aws/credentials '$a'`} {
		if v := p.Decide(bashCall(cmd)); v.Tier != Deny {
			t.Errorf("%s: %s (%s), want denied", cmd, v.Tier, v.Reason)
		}
	}
	if v := p.Decide(bashCall(`jq -n --rawfile a notes.txt '$a'`)); v.Tier != Allow {
		t.Errorf("control: %s (%s)", v.Tier, v.Reason)
	}
}

// TestBraceExpand: bash's brace expressions, nested and repeated, as
// mayNameGit reads them; a sequence is a pattern; too many alternatives
// say so.
func TestBraceExpand(t *testing.T) {
	for _, c := range []struct {
		in    string
		want  []string
		whole bool
	}{
		{"a{b,c}d", []string{"abd", "acd"}, true},
		{"{.g,y}{i,z}t", []string{".git", ".gzt", "yit", "yzt"}, true},
		{"{{.git,a},b}/x", []string{".git/x", "a/x", "b/x"}, true},
		{"f{1..3}", []string{"f*"}, true},
		{"{x}y{a,b}", []string{"{x}ya", "{x}yb"}, true},
		{"no{brace", []string{"no{brace"}, true},
		{"{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}", nil, false},
	} {
		got, whole := braceExpand(c.in, 64)
		if whole != c.whole || whole && !slices.Equal(got, c.want) {
			t.Errorf("braceExpand(%q) = %q, %v; want %q, %v", c.in, got, whole, c.want, c.whole)
		}
	}
}

package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"brig/internal/sensitive"
	"brig/jail"
)

func testProfile(t *testing.T) Profile {
	t.Helper()
	root := t.TempDir()
	p := Profile{
		Workspace: filepath.Join(root, "ws"), Home: filepath.Join(root, "home"),
		ParentEnv: []string{"PATH=/usr/bin:/bin:" + filepath.Join(root, "home", ".ssh"), "GITHUB_TOKEN=x", "LANG=C"},
		Limits:    jail.DefaultLimits(), Namespaces: true, CacheRoot: filepath.Join(root, "cache"),
	}
	p.Dir = p.Workspace
	for _, d := range []string{filepath.Join(p.Workspace, ".git", "hooks"), p.Home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func rule(s jail.Spec, path string) (jail.PathRule, bool) {
	i := slices.IndexFunc(s.Paths, func(r jail.PathRule) bool { return r.Path == path })
	if i < 0 {
		return jail.PathRule{}, false
	}
	return s.Paths[i], true
}

func TestProfileSpec(t *testing.T) {
	p := testProfile(t)
	s, err := p.Spec()
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := rule(s, p.Workspace); !ok || r.Access != jail.Write {
		t.Errorf("workspace rule %+v", r)
	}
	if r, ok := rule(s, "/etc"); !ok || r.Access != jail.Read {
		t.Errorf("/etc rule %+v", r)
	}
	if !slices.Contains(s.Hidden, "/etc/shadow") || !slices.Contains(s.Hidden, "/etc/ssh") {
		t.Errorf("hidden: %v", s.Hidden)
	}
	if !slices.Contains(s.Protected, filepath.Join(p.Workspace, ".git", "hooks")) || !slices.Contains(s.Protected, filepath.Join(p.Workspace, ".envrc")) {
		t.Errorf("protected: %v", s.Protected)
	}
	if _, ok := rule(s, filepath.Join(p.Home, ".ssh")); ok {
		t.Error("a PATH entry inside ~/.ssh was granted")
	}
	if _, ok := rule(s, p.Home); ok {
		t.Error("the home directory was granted")
	}
	env := strings.Join(s.Env, "\n")
	for _, want := range []string{"TMPDIR=/tmp", "GOPROXY=off", "LANG=C", "GOCACHE=" + p.CacheRoot} {
		if !strings.Contains(env, want) {
			t.Errorf("env lacks %q:\n%s", want, env)
		}
	}
	if strings.Contains(env, "GITHUB_TOKEN") {
		t.Error("a credential crossed")
	}
	if !s.PrivateTmp {
		t.Error("no private /tmp with namespaces")
	}

	// Read-only workspace, network, no namespaces.
	p.ReadOnly, p.Network, p.Namespaces = true, true, false
	if _, err := p.Spec(); err == nil {
		t.Error("no namespaces and no per-call TMPDIR was accepted")
	}
	p.CallTmp = t.TempDir()
	s, err = p.Spec()
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := rule(s, p.Workspace); r.Access != jail.Exec {
		t.Errorf("read-only workspace rule %+v", r)
	}
	if _, ok := rule(s, "/tmp"); ok || s.PrivateTmp {
		t.Error("the host /tmp was granted without a mount namespace")
	}
	if r, ok := rule(s, p.CallTmp); !ok || r.Access != jail.Write {
		t.Errorf("per-call TMPDIR rule %+v", r)
	}
	if !strings.Contains(strings.Join(s.Env, "\n"), "GOPROXY=off") {
		t.Error("Go may try to download into your read-only module cache: no GOPROXY=off without GoDownloads")
	}

	// Go downloads allowed: a GOPATH of the workspace's own, filled from
	// your module cache first, then from the module proxy.
	p.GoDownloads = true
	if s, err = p.Spec(); err != nil {
		t.Fatal(err)
	}
	env = strings.Join(s.Env, "\n")
	gopath := s.Cache.Dir() + "/gopath"
	for _, want := range []string{"GOPATH=" + gopath + "\n", "GOMODCACHE=" + gopath + "/pkg/mod\n",
		"GOPROXY=file://" + p.Home + "/go/pkg/mod/cache/download,https://proxy.golang.org,direct", "-modcacherw"} {
		if !strings.Contains(env+"\n", want) {
			t.Errorf("with Go downloads, env lacks %q:\n%s", want, env)
		}
	}
	if !slices.Contains(s.Cache.Dirs, "gopath") {
		t.Errorf("the cache does not make gopath: %v", s.Cache.Dirs)
	}
	// Once the workspace has its own module cache, every call uses it
	// (what a download put there stays usable), offline past your cache.
	if err := os.MkdirAll(gopath, 0o755); err != nil {
		t.Fatal(err)
	}
	p.GoDownloads = false
	if s, err = p.Spec(); err != nil {
		t.Fatal(err)
	}
	env = strings.Join(s.Env, "\n")
	if !strings.Contains(env, "GOMODCACHE="+gopath+"/pkg/mod") || !strings.Contains(env, "GOPROXY=file://"+p.Home+"/go/pkg/mod/cache/download,off") {
		t.Errorf("after a download, a call without downloads:\n%s", env)
	}
}

func TestProfileRefusesHomeAsWorkspace(t *testing.T) {
	p := testProfile(t)
	p.Workspace = filepath.Dir(p.Home)
	if _, err := p.Spec(); err == nil || !strings.Contains(err.Error(), "home directory") {
		t.Fatalf("got %v", err)
	}
}

// TestProfileOneRulePerPath: a directory named twice (PATH repeats, a
// system root on PATH, a --read of the workspace) gets one rule with the
// stronger access, required when any source requires it.
func TestProfileOneRulePerPath(t *testing.T) {
	p := testProfile(t)
	p.ParentEnv = []string{"PATH=/usr/bin:/bin:/usr/bin:/opt"}
	p.Read = []string{p.Workspace, "/opt"}
	s, err := p.Spec()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range s.Paths {
		seen[r.Path]++
	}
	for path, n := range seen {
		if n > 1 {
			t.Errorf("%s has %d rules", path, n)
		}
	}
	if r, _ := rule(s, p.Workspace); r.Access != jail.Write {
		t.Errorf("workspace (write, and read by --read): %+v", r)
	}
	if r, _ := rule(s, "/opt"); r.Access != jail.Exec || r.Optional {
		t.Errorf("/opt (an optional system root and a required --read): %+v", r)
	}
	if r, ok := rule(s, "/usr/bin"); !ok || r.Access != jail.Exec {
		t.Errorf("control: /usr/bin from PATH: %+v %v", r, ok)
	}
}

// fakeHome fills a home directory with toolchains whose roots also hold
// secrets, the way real ones do.
func fakeHome(t *testing.T, home string) {
	t.Helper()
	files := map[string]string{
		".config/git/config":                      "[user]\n\tname = u\n",
		".config/git/credentials":                 "https://u:ghp_CANARY@github.com\n",
		".gitconfig":                              "[user]\n\tname = u\n",
		".npm-global/bin/tool":                    "#!/bin/sh\n",
		".npm-global/lib/node_modules/x/index.js": "",
		".npm-global/etc/npmrc":                   "//registry.npmjs.org/:_authToken=CANARY\n",
		".nvm/versions/node/v20.0.0/bin/node":     "",
		".nvm/versions/node/v20.0.0/etc/npmrc":    "_authToken=CANARY\n",
		".ssh/id_rsa":                             "CANARY",
		".config/brig/credentials.toml":           "CANARY",
		".local/bin/x":                            "",
		"go/pkg/mod/cache/x":                      "",
		"tools/bin/t":                             "",
	}
	for rel, content := range files {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDefaultGrantIsNarrow: toolchains are granted at their bin/lib
// directories and single git config files, never at roots holding secrets.
func TestDefaultGrantIsNarrow(t *testing.T) {
	p := testProfile(t)
	fakeHome(t, p.Home)
	p.ParentEnv = []string{"PATH=/usr/bin:/bin:" + p.Home + "/.npm-global/bin:" + p.Home + "/.nvm/versions/node/v20.0.0/bin"}
	s, err := p.Spec()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".config/git/config", ".gitconfig", ".npm-global/bin", ".npm-global/lib", ".nvm/versions/node/v20.0.0/bin", ".local/bin", "go/pkg/mod"} {
		if _, ok := rule(s, filepath.Join(p.Home, want)); !ok {
			t.Errorf("control: ~/%s is not granted", want)
		}
	}
	for _, r := range s.Paths {
		if r.Path == "/tmp" || r.Path == "/dev/shm" {
			continue // a fresh tmpfs in the call's mount namespace
		}
		for _, secret := range []string{".config/git/credentials", ".npm-global/etc/npmrc", ".nvm/versions/node/v20.0.0/etc/npmrc", ".ssh/id_rsa", ".config/brig/credentials.toml"} {
			if within(filepath.Join(p.Home, secret), r.Path) {
				t.Errorf("the grant %s (%s) covers ~/%s", r.Path, r.Access, secret)
			}
		}
	}
}

// TestPathEntriesChecked: PATH entries are cleaned and resolved, and
// refused when they are HOME (with a trailing slash too), a parent of it,
// hold a secret or brig's directory, or are relative.
func TestPathEntriesChecked(t *testing.T) {
	p := testProfile(t)
	fakeHome(t, p.Home)
	p.BrigDirs = []string{filepath.Join(p.Home, ".config/brig")}
	link := filepath.Join(filepath.Dir(p.Home), "homelink")
	if err := os.Symlink(p.Home, link); err != nil {
		t.Fatal(err)
	}
	refused := []string{p.Home + "/", p.Home + "/.", p.Home + "/tools/..", link, filepath.Dir(p.Home), "/", p.Home + "/.config",
		p.Home + "/.npm-global", p.Home + "/.ssh", "bin", "./node_modules/.bin"}
	p.ParentEnv = []string{"PATH=" + strings.Join(append(refused, p.Home+"/tools/bin", p.Home+"/.local/bin/"), ":")}
	s, err := p.Spec()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Paths {
		if r.Path == "/tmp" || r.Path == "/dev/shm" {
			continue // a fresh tmpfs in the call's mount namespace
		}
		if within(p.Home, r.Path) || within(filepath.Join(p.Home, ".ssh"), r.Path) || within(filepath.Join(p.Home, ".config/git/credentials"), r.Path) {
			t.Errorf("%s (%s) covers the home directory or a secret", r.Path, r.Access)
		}
	}
	for _, want := range []string{"tools/bin", ".local/bin"} {
		if r, ok := rule(s, filepath.Join(p.Home, want)); !ok || r.Access != jail.Exec {
			t.Errorf("control: PATH entry ~/%s not granted: %+v", want, r)
		}
	}
	_, ref := p.defaults(sensitive.NewIndex(p.Home))
	got := map[string]bool{}
	for _, r := range ref {
		got[r.Path] = true
		if r.Why == "" {
			t.Errorf("%s refused without a reason", r.Path)
		}
	}
	for _, d := range refused {
		if !got[d] {
			t.Errorf("PATH entry %s was not reported refused", d)
		}
	}
	// The module cache follows the same rules.
	p.ParentEnv = []string{"PATH=/usr/bin", "GOMODCACHE=" + p.Home + "/"}
	s, err = p.Spec()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rule(s, p.Home); ok {
		t.Error("GOMODCACHE=$HOME/ granted the home directory")
	}
}

// TestPathEntriesThroughPlantedLinks: a PATH entry or module cache that
// leads through a symbolic link in the workspace, or in a directory you
// granted write, is refused: the repository (bin -> .. shipped in it) or
// an earlier call chose the link's target, and following it would give
// every call the workspace's parent — your other projects. A directory of
// the workspace itself gets no rule of its own (the workspace's covers
// it); a link elsewhere is still followed (the control).
func TestPathEntriesThroughPlantedLinks(t *testing.T) {
	p := testProfile(t)
	root := filepath.Dir(p.Workspace)
	other := filepath.Join(root, "otherproj")
	added := filepath.Join(root, "added")
	plain := filepath.Join(p.Workspace, "tools")
	elsewhere := filepath.Join(root, "opt", "bin")
	for _, d := range []string{other, added, plain, elsewhere} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		filepath.Join(p.Workspace, "bin"):    "..",                                 // the workspace's parent
		filepath.Join(p.Workspace, "vendor"): other,                                // another project, absolute
		filepath.Join(added, "bin"):          other,                                // in a write grant
		filepath.Join(root, "optlink"):       filepath.Join(root, "opt"),           // outside: yours
		filepath.Join(root, "wslink"):        filepath.Join(p.Workspace, "vendor"), // yours, then the workspace's
		filepath.Join(p.Workspace, "deep"):   filepath.Join(p.Workspace, "tools"),  // inside, to inside
	}
	for l, target := range links {
		if err := os.Symlink(target, l); err != nil {
			t.Fatal(err)
		}
	}
	p.Write = []string{added}
	refused := []string{filepath.Join(p.Workspace, "bin"), filepath.Join(p.Workspace, "vendor", "x", ".."),
		filepath.Join(added, "bin"), filepath.Join(root, "wslink")}
	deep := filepath.Join(p.Workspace, "deep")
	p.ParentEnv = []string{"PATH=" + strings.Join(append(refused, plain, deep, filepath.Join(root, "optlink", "bin")), ":"),
		"GOMODCACHE=" + filepath.Join(p.Workspace, "bin", "otherproj")}
	s, err := p.Spec()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Paths {
		if r.Path == "/tmp" || r.Path == "/dev/shm" || within(r.Path, p.CacheRoot) || within(r.Path, p.Home) {
			continue // a fresh tmpfs in the call's mount namespace; the toolchains and their caches
		}
		if within(other, r.Path) || within(r.Path, root) && !within(r.Path, p.Workspace) && !within(r.Path, added) && r.Path != elsewhere {
			t.Errorf("%s (%s) is granted: it reaches the workspace's parent or another project", r.Path, r.Access)
		}
	}
	if r, ok := rule(s, elsewhere); !ok || r.Access != jail.Exec {
		t.Errorf("control: a PATH entry through a link outside the places calls write was not followed: %+v %v", r, ok)
	}
	if _, ok := rule(s, plain); ok {
		t.Errorf("a PATH entry inside the workspace got a rule of its own: %+v", s.Paths)
	}
	if _, ok := rule(s, filepath.Join(p.Workspace, "tools")); ok {
		t.Errorf("a PATH entry through a link that stays in the workspace got a rule of its own: %+v", s.Paths)
	}
	_, ref := p.defaults(sensitive.NewIndex(p.Home))
	why := map[string]string{}
	for _, r := range ref {
		why[r.Path] = r.Why
	}
	for _, d := range append(refused, filepath.Join(p.Workspace, "bin", "otherproj")) {
		if !strings.Contains(why[d], "symbolic link") {
			t.Errorf("%s: refused for %q; want the planted link named", d, why[d])
		}
	}
	if w, ok := why[deep]; ok {
		t.Errorf("%s, a link from the workspace into it, was refused: %s", deep, w)
	}
}

// TestExtraGrantsMaskSecrets: a grant of the whole home directory (or /)
// masks every secret and brig's own directories inside it; a grant that
// names a secret itself is not masked; brig's directories are never
// granted; later-executed files under a write grant stay read-only.
func TestExtraGrantsMaskSecrets(t *testing.T) {
	p := testProfile(t)
	fakeHome(t, p.Home)
	p.BrigDirs = []string{filepath.Join(p.Home, ".config/brig"), filepath.Join(p.Home, ".local/state/brig")}
	p.Read = []string{p.Home}
	s, err := p.Spec()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".ssh", ".config/git/credentials", ".npm-global/etc", ".nvm/versions/node/v20.0.0/etc", ".config/brig", ".local/state/brig", ".aws"} {
		if !slices.Contains(s.Hidden, filepath.Join(p.Home, want)) {
			t.Errorf("--read ~ does not mask ~/%s", want)
		}
	}
	if slices.Contains(s.Hidden, filepath.Join(p.Home, ".config/git/config")) || slices.Contains(s.Hidden, filepath.Join(p.Home, "tools")) {
		t.Errorf("control: an ordinary file is masked: %v", s.Hidden)
	}
	// Naming a secret grants it.
	p.Read = []string{p.Home, filepath.Join(p.Home, ".ssh")}
	if s, err = p.Spec(); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(s.Hidden, filepath.Join(p.Home, ".ssh")) {
		t.Error("--read ~/.ssh named it, yet it is masked")
	}
	if !slices.Contains(s.Hidden, filepath.Join(p.Home, ".config/brig")) {
		t.Error("brig's directory is not masked")
	}
	// Brig's own directory is never granted, even by name.
	p.Read = []string{filepath.Join(p.Home, ".config/brig")}
	if _, err := p.Spec(); err == nil || !strings.Contains(err.Error(), "brig's own directory") {
		t.Errorf("--read ~/.config/brig: %v", err)
	}
	// A write grant of home keeps the later-executed files read-only.
	p.Read, p.Write = nil, []string{p.Home}
	if s, err = p.Spec(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".bashrc", ".gitconfig", ".local/bin"} {
		if !slices.Contains(s.Protected, filepath.Join(p.Home, want)) {
			t.Errorf("--write ~ leaves ~/%s writable", want)
		}
	}
}

// TestDefaultGrantDocumented: every entry has a reason, and the README's
// table is the generated one.
func TestDefaultGrantDocumented(t *testing.T) {
	for _, e := range append(DefaultGrant(), DefaultGrantDynamic()...) {
		if strings.TrimSpace(e.Reason) == "" {
			t.Errorf("%s has no reason", e.Path)
		}
		if strings.HasPrefix(e.Path, "~/") {
			if _, ok := sensitive.Contains(filepath.Join("/home/u", e.Path[2:]), "/home/u", sensitive.Secret); ok {
				t.Errorf("default entry %s holds or lies in a secret", e.Path)
			}
		}
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), DefaultGrantMarkdown()) {
		t.Fatalf("README.md's default grant table differs from policy.DefaultGrantMarkdown(); paste the new table into the README:\n%s", DefaultGrantMarkdown())
	}
}

// TestSensitiveMarkdownInREADME: the README's lists of masked secrets and
// protected workspace files are generated from internal/sensitive.
func TestSensitiveMarkdownInREADME(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), SensitiveMarkdown()) {
		t.Fatalf("README.md's sensitive tables differ from policy.SensitiveMarkdown(); paste them into the README:\n%s", SensitiveMarkdown())
	}
}

// TestFileToolGrantsMaskSecrets: an approved file tool over the home
// directory (search_code, list_directory of ~) is granted it without the
// secrets in it; one that names a secret's own path keeps it.
func TestFileToolGrantsMaskSecrets(t *testing.T) {
	p, _, _, home := testPolicy(t, ModeAsk, `[permissions]
allow = ["Read(~/**)"]
`)
	for _, d := range []string{".ssh", ".config/brig"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	v := p.Decide(Call{Tool: "search_code", Effect: EffectRead, Read: []string{"~"}, Programs: true})
	if v.Tier == Deny {
		t.Fatalf("a search of ~ allowed by a rule was denied: %s", v.Reason)
	}
	spec, err := p.Compile(v, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".ssh", ".config/brig", ".aws"} {
		if !slices.Contains(spec.Hidden, filepath.Join(home, want)) {
			t.Errorf("the search of ~ does not mask ~/%s: %v", want, spec.Hidden)
		}
	}
	if slices.Contains(spec.Hidden, home) {
		t.Error("control: the granted directory itself is masked")
	}
}

// TestToolchainEnvKeepsTheUsers: the variables brig sets for offline
// toolchains keep the user's own choices: GOFLAGS stays as it is (no
// -mod=mod: go test rewrote an untidy go.mod with it, new user
// 2026-12-02), GOTOOLCHAIN and a file:// GOPROXY stay.
func TestToolchainEnvKeepsTheUsers(t *testing.T) {
	ws := t.TempDir()
	for _, c := range []struct {
		parent []string
		want   []string
		absent []string
	}{
		{nil, []string{"GOTOOLCHAIN=local", "GOPROXY=off"}, []string{"GOFLAGS=-mod=mod"}},
		{[]string{"GOFLAGS=-mod=vendor"}, []string{"GOFLAGS=-mod=vendor"}, []string{"GOFLAGS=-mod=mod"}},
		{[]string{"GOFLAGS=-trimpath"}, []string{"GOFLAGS=-trimpath"}, []string{"GOFLAGS=-trimpath -mod=mod"}},
		{[]string{"GOTOOLCHAIN=go1.25.0"}, []string{"GOTOOLCHAIN=go1.25.0"}, []string{"GOTOOLCHAIN=local"}},
		{[]string{"GOPROXY=file:///srv/goproxy"}, nil, []string{"GOPROXY=off"}},
	} {
		p := Profile{Workspace: ws, Dir: ws, ParentEnv: append([]string{"PATH=/usr/bin:/bin"}, c.parent...), Limits: jail.DefaultLimits(), Namespaces: true}
		spec, err := p.Spec()
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !slices.Contains(spec.Env, w) {
				t.Errorf("parent %v: %s missing from %v", c.parent, w, spec.Env)
			}
		}
		for _, a := range c.absent {
			if slices.Contains(spec.Env, a) {
				t.Errorf("parent %v: %s set over the user's value", c.parent, a)
			}
		}
	}
}

// TestProfileSecretsIndex: a kept index is used only for the home it was
// made for, and masks exactly what one made per call does.
func TestProfileSecretsIndex(t *testing.T) {
	p := testProfile(t)
	if err := os.MkdirAll(filepath.Join(p.Home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	kept := sensitive.NewIndex(p.Home)
	p.Secrets = kept
	if p.secrets() != kept {
		t.Error("the kept index of the profile's home was not used")
	}
	other := p
	other.Secrets = sensitive.NewIndex(filepath.Join(p.Home, "elsewhere"))
	if got := other.secrets(); got.Home() != p.Home {
		t.Errorf("an index of %s was used for the home %s", got.Home(), p.Home)
	}
	grant := []jail.PathRule{{Path: p.Home, Access: jail.Read}}
	want := SecretMasks(grant, p.Home, p.BrigDirs)
	if !slices.Contains(want, filepath.Join(p.Home, ".ssh")) {
		t.Fatalf("a grant of the home does not mask ~/.ssh: %v", want)
	}
	for _, q := range []Profile{p, other} {
		if got := secretMasks(grant, q); !slices.Equal(got, want) {
			t.Errorf("masks with the index of %s: %v, want %v", q.Secrets.Home(), got, want)
		}
	}
}

// TestExtraGrantsAreExact: the grants the policy resolved — the
// workspace, extra read and write paths — are opened by the jail without
// following links (jail.PathRule.Exact); the default grant's system and
// toolchain paths, links on many machines, are not.
func TestExtraGrantsAreExact(t *testing.T) {
	p := testProfile(t)
	extra := filepath.Join(filepath.Dir(p.Workspace), "extra")
	if err := os.MkdirAll(extra+"/w", 0o755); err != nil {
		t.Fatal(err)
	}
	p.Read, p.Write = []string{extra}, []string{extra + "/w"}
	s, err := p.Spec()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{extra, extra + "/w"} {
		if r, ok := rule(s, want); !ok || !r.Exact {
			t.Errorf("the extra grant %s is not exact: %+v %v", want, r, ok)
		}
	}
	for _, sys := range []string{"/usr", "/bin", "/etc"} {
		if r, ok := rule(s, sys); ok && r.Exact {
			t.Errorf("the default grant %s is exact (it may be a link): %+v", sys, r)
		}
	}
}

// TestSandboxPathsThroughPlantedLinks: a [sandbox] read or write path
// reached through a symbolic link in the workspace is refused with an
// error naming the link (a call can re-point it before the next call, and
// the grant would follow); the same directory named without the link is
// granted (the control); a link that stays inside the workspace grants
// nothing of its own.
func TestSandboxPathsThroughPlantedLinks(t *testing.T) {
	for _, key := range []string{"read", "write"} {
		root, ws, home := tree(t)
		c, _, err := ParseConfig("config.toml", []byte("[sandbox]\n"+key+" = [\"src/up/out\"]\n"))
		if err != nil {
			t.Fatal(err)
		}
		p, err := New(ws, Loaded{Rules: c.Rules, Sandbox: c.Sandbox}, ModeAuto, Machine{Home: home, Env: []string{"PATH=/usr/bin:/bin"},
			Namespaces: true, CacheRoot: filepath.Join(root, "cache"), Limits: jail.DefaultLimits()})
		if err == nil {
			_, err = p.BashProfile(false, "")
		}
		if err == nil || !strings.Contains(err.Error(), "symbolic link "+ws+"/src/up -> ../..") || !strings.Contains(err.Error(), root+"/out") {
			t.Errorf("[sandbox] %s through a link in the workspace: %v; want an error naming the link and the directory to name instead", key, err)
		}
		p, root, _, _ = testPolicy(t, ModeAuto, "[sandbox]\n"+key+" = [\"../out\", \"inner\"]\n")
		prof, err := p.BashProfile(false, "")
		if err != nil {
			t.Fatalf("control: [sandbox] %s = ../out: %v", key, err)
		}
		granted := append(slices.Clone(prof.Read), prof.Write...)
		if !slices.Contains(granted, root+"/out") {
			t.Errorf("control: [sandbox] %s = ../out not granted: %v", key, granted)
		}
		if slices.ContainsFunc(granted, func(g string) bool { return strings.HasSuffix(g, "/src") }) {
			t.Errorf("[sandbox] %s = inner (a link inside the workspace) got a rule of its own: %v", key, granted)
		}
	}
}

// TestGoProxyPasswordStaysOut: a GOPROXY holding a password (user:token@)
// reaches a call's environment without it, with Go downloads (the list
// the call's GOPROXY ends with) and without; with downloads, the host and
// the rest of the list stay (the control).
func TestGoProxyPasswordStaysOut(t *testing.T) {
	for _, downloads := range []bool{true, false} {
		p := testProfile(t)
		p.Network, p.GoDownloads = true, downloads
		p.ParentEnv = append(p.ParentEnv, "GOPROXY=https://me:CANARY_TOKEN@goproxy.corp.example/x,direct|https://proxy.golang.org")
		s, err := p.Spec()
		if err != nil {
			t.Fatal(err)
		}
		env := strings.Join(s.Env, "\n")
		if strings.Contains(env, "CANARY_TOKEN") {
			t.Errorf("downloads %v: the proxy's password is in the call's environment:\n%s", downloads, env)
		}
		if downloads && !strings.Contains(env, "https://goproxy.corp.example/x,direct|https://proxy.golang.org") {
			t.Errorf("downloads %v: the proxy list lost more than its password:\n%s", downloads, env)
		}
	}
}

// A directory on the user's PATH that the grant covers (an activated
// venv's .venv/bin in the workspace) stays read-only: a script the call
// runs (make) could otherwise plant an ls there that the user's shell
// runs later, outside the jail (red team 2026-12-02). Controls: PATH
// directories the grant does not reach are not listed, nor one that holds
// the workspace, and a reading call lists none.
func TestPathDirsInTheGrantStayReadOnly(t *testing.T) {
	p := testProfile(t)
	venv := filepath.Join(p.Workspace, ".venv", "bin")
	if err := os.MkdirAll(venv, 0o755); err != nil {
		t.Fatal(err)
	}
	binLink := filepath.Join(p.Home, "wsbin") // a PATH entry that links into the workspace
	if err := os.Symlink(filepath.Join(p.Workspace, "bin"), binLink); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(p.Workspace, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	p.ParentEnv = []string{"PATH=" + strings.Join([]string{venv, "/usr/bin", binLink, filepath.Dir(p.Workspace), "rel/bin"}, ":")}
	s, err := p.Spec()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{venv, filepath.Join(p.Workspace, "bin")} {
		if !slices.Contains(s.Protected, want) {
			t.Errorf("%s is not protected: %v", want, s.Protected)
		}
	}
	for _, not := range []string{"/usr/bin", filepath.Dir(p.Workspace), "rel/bin"} {
		if slices.Contains(s.Protected, not) {
			t.Errorf("%s is protected: %v", not, s.Protected)
		}
	}
	p.ReadOnly = true
	if s, err = p.Spec(); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(s.Protected, venv) {
		t.Errorf("a reading call lists %s (the grant does not reach it)", venv)
	}
	p.ReadOnly = false

	// A PATH entry through a link in the workspace (virtualenvwrapper's
	// .venv -> ~/.virtualenvs/proj): the entry as named is listed, so that
	// the sweep puts back the link a call repointed, though what it
	// resolves to is outside the grant.
	outside := filepath.Join(p.Home, ".virtualenvs", "proj")
	if err := os.MkdirAll(filepath.Join(outside, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(p.Workspace, "env2")); err != nil {
		t.Fatal(err)
	}
	p.ParentEnv = []string{"PATH=" + filepath.Join(p.Workspace, "env2", "bin") + ":/usr/bin"}
	if s, err = p.Spec(); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(s.Protected, filepath.Join(p.Workspace, "env2", "bin")) {
		t.Errorf("the PATH entry through a link is not protected as named: %v", s.Protected)
	}
	if slices.Contains(s.Protected, filepath.Join(outside, "bin")) {
		t.Errorf("the target outside the grant is listed: %v", s.Protected)
	}
}

// TestPyenvShimsOnPathBringTheirPyenv (new user, 2026-12-03): a pyenv
// outside the home, its shims on PATH, failed every python3 with
// "libexec/pyenv: Permission denied". The shims directory brings the pyenv
// it belongs to. Control: a shims directory of anything else brings
// nothing.
func TestPyenvShimsOnPathBringTheirPyenv(t *testing.T) {
	root := t.TempDir()
	pyenv, other := filepath.Join(root, "pyenv"), filepath.Join(root, "other")
	for _, d := range []string{pyenv + "/shims", pyenv + "/libexec", pyenv + "/versions", other + "/shims"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(pyenv+"/libexec/pyenv", []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	got := map[string]jail.Access{}
	for _, e := range pyenvBeside(pyenv + "/shims") {
		got[e.Path] = e.Access
	}
	if got[pyenv+"/libexec"] != jail.Exec || got[pyenv+"/versions"] != jail.Exec || got[pyenv+"/version"] != jail.Read {
		t.Fatalf("pyenv beside its shims: %v", got)
	}
	if _, ok := got[pyenv+"/shims"]; ok {
		t.Fatalf("the shims directory itself is listed again: %v", got)
	}
	if e := pyenvBeside(other + "/shims"); len(e) != 0 {
		t.Fatalf("a shims directory that is not pyenv's: %v", e)
	}
}

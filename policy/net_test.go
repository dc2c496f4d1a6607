package policy

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestNetRuleParsing(t *testing.T) {
	for _, ok := range []string{
		"Net(domain:pkg.example.org)", "Net(domain:*.github.com)", "Net", "Net(domain:127.0.0.1)",
		"Net(domain:[::1])", "Net(domain:LOCALHOST)", "WebFetch(domain:go.dev)",
	} {
		if _, err := ParseRule(ok, Source{}); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{
		"Net(pkg.example.org)", "Net(domain:)", "Net(domain:a/b)", "Net(domain:ex*ample.com)", "Net(domain:*.*.x)",
		"Net(domain:::1)", "Net(domain:[10.0.0.1])", "Net(domain:host:443)", "Net(domain:a b)",
	} {
		if _, err := ParseRule(bad, Source{}); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
	// A port or a URL says what to write instead.
	for bad, want := range map[string]string{
		"Net(domain:pkg.go.dev:443)":       "has a port: give the host alone (domain:pkg.go.dev); a Net rule covers every port",
		"Net(domain:https://pkg.go.dev/x)": "is a URL: give its host alone (domain:pkg.go.dev)",
		"WebFetch(domain:http://go.dev)":   "is a URL: give its host alone (domain:go.dev)",
	} {
		if _, err := ParseRule(bad, Source{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", bad, err, want)
		}
	}
}

func TestNetRuleMatching(t *testing.T) {
	rule := func(s string) Rule {
		r, err := ParseRule(s, Source{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, tc := range []struct {
		rule, host   string
		match, named bool
	}{
		{"Net(domain:pkg.example.org)", "pkg.example.org", true, true},
		{"Net(domain:pkg.example.org)", "PKG.Example.org.", true, true},
		{"Net(domain:pkg.example.org)", "evil.pkg.example.org", false, false},
		{"Net(domain:*.github.com)", "api.github.com", true, false},
		{"Net(domain:*.github.com)", "github.com", false, false},
		{"Net(domain:*.github.com)", "evilgithub.com", false, false},
		{"Net", "example.com", true, false},
		{"Net", "10.0.0.1", false, false}, // a bare rule never matches an address
		{"Net(domain:*.0.0.1)", "127.0.0.1", false, false},
		{"Net(domain:127.0.0.1)", "127.0.0.1", true, true},
		{"Net(domain:[::1])", "::1", true, true},
		{"Net(domain:[::1])", "[::1]", true, true},
		{"WebFetch(domain:go.dev)", "go.dev", true, true}, // the older name means the same
		{"Bash(curl:*)", "go.dev", false, false},
	} {
		r := rule(tc.rule)
		if got := r.MatchHost(tc.host); got != tc.match {
			t.Errorf("%s matches %s = %v, want %v", tc.rule, tc.host, got, tc.match)
		}
		if got := r.NamesHost(tc.host); got != tc.named {
			t.Errorf("%s names %s = %v, want %v", tc.rule, tc.host, got, tc.named)
		}
	}
}

func TestDecideNet(t *testing.T) {
	f := newModeFixture(t, `[permissions]
allow = ["Net(domain:pkg.example.org)", "Net(domain:*.corp.example)", "Net(domain:10.1.2.3)", "Net(domain:registry.npmjs.org)"]
deny = ["Net(domain:evil.corp.example)", "Net(domain:registry.yarnpkg.com)"]
ask = ["Net(domain:sum.golang.org)"]
[sandbox]
net_presets = ["npm", "go"]
`)
	p := f.policy(t, ModeAuto)
	for _, tc := range []struct {
		host  string
		tier  Tier
		named bool
		rule  string
	}{
		{"pkg.example.org", Allow, true, "Net(domain:pkg.example.org) (rules.toml:2)"},
		{"git.corp.example", Allow, false, "Net(domain:*.corp.example)"},
		{"evil.corp.example", Deny, false, "Net(domain:evil.corp.example)"},       // deny beats allow
		{"10.1.2.3", Allow, true, "Net(domain:10.1.2.3)"},                         // an address, named
		{"10.1.2.4", Ask, false, ""},                                              // an address no rule names
		{"proxy.golang.org", Allow, false, "net preset go (proxy.golang.org)"},    // presets never name
		{"sum.golang.org", Ask, false, "Net(domain:sum.golang.org)"},              // the user's ask beats a preset
		{"registry.yarnpkg.com", Deny, false, "Net(domain:registry.yarnpkg.com)"}, // the user's deny beats a preset
		{"registry.npmjs.org", Allow, true, "Net(domain:registry.npmjs.org)"},     // the user's rule, which names it
		{"example.com", Ask, false, ""},
	} {
		nd := p.DecideNet(tc.host)
		if nd.Tier != tc.tier || nd.Named != tc.named || !strings.Contains(nd.Rule, tc.rule) || tc.rule == "" && nd.Rule != "" {
			t.Errorf("DecideNet(%s) = %+v; want %s named=%v by %q", tc.host, nd, tc.tier, tc.named, tc.rule)
		}
	}
	if nd := p.DecideNet("example.com"); !strings.Contains(nd.Reason, "no rule allows example.com") {
		t.Errorf("reason %q", nd.Reason)
	}
	// web_fetch is decided the same way: one decision path. Auto mode
	// does not approve a host no rule allows (it is beyond the profile).
	for host, want := range map[string]Tier{"pkg.example.org": Allow, "evil.corp.example": Deny, "example.com": Ask, "proxy.golang.org": Allow} {
		v := p.Decide(Call{Tool: "web_fetch", Effect: EffectNetwork, Host: host})
		if v.Tier != want || v.Net == nil || v.Net.Tier != want {
			t.Errorf("web_fetch %s: %s (%s); want %s", host, v.Tier, v.Reason, want)
		}
	}
	allowed := p.AllowedHosts()
	for _, h := range []string{"pkg.example.org", "*.corp.example", "registry.npmjs.org", "proxy.golang.org", "sum.golang.org"} {
		if !slices.Contains(allowed, h) {
			t.Errorf("AllowedHosts() = %v lacks %s", allowed, h)
		}
	}
}

func TestSandboxNetworkAllowsPublicNames(t *testing.T) {
	p := newModeFixture(t, "[sandbox]\nnetwork = true\n[permissions]\ndeny = [\"Net(domain:evil.example)\"]\n").policy(t, ModeAsk)
	if nd := p.DecideNet("anything.example"); nd.Tier != Allow || nd.Named {
		t.Errorf("[sandbox] network: %+v; want allowed, not named", nd)
	}
	if nd := p.DecideNet("evil.example"); nd.Tier != Deny {
		t.Errorf("a deny rule under [sandbox] network: %+v", nd)
	}
	if nd := p.DecideNet("192.168.1.1"); nd.Tier != Ask {
		t.Errorf("an address under [sandbox] network: %+v; want Ask (only a rule naming it allows it)", nd)
	}
}

func TestAllowHosts(t *testing.T) {
	p := newModeFixture(t, "").policy(t, ModeAsk)
	if err := p.AllowHosts("localhost", "*.pkg.example", "[::1]"); err != nil {
		t.Fatal(err)
	}
	if nd := p.DecideNet("localhost"); nd.Tier != Allow || !nd.Named || !strings.Contains(nd.Rule, "--allow-host") {
		t.Errorf("--allow-host localhost: %+v", nd)
	}
	if nd := p.DecideNet("a.pkg.example"); nd.Tier != Allow || nd.Named {
		t.Errorf("--allow-host *.pkg.example: %+v", nd)
	}
	if nd := p.DecideNet("::1"); nd.Tier != Allow || !nd.Named {
		t.Errorf("--allow-host [::1]: %+v", nd)
	}
	if err := p.AllowHosts("bad host"); err == nil {
		t.Error("--allow-host 'bad host' accepted")
	}
	// A port or a URL is refused with the host to give instead.
	for in, want := range map[string]string{
		"127.0.0.1:8080":          "--allow-host 127.0.0.1",
		"[::1]:8080":              "--allow-host [::1]",
		"example.com:443":         "--allow-host example.com",
		"https://example.com/a/b": "--allow-host example.com",
	} {
		err := p.AllowHosts(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--allow-host %s: %v; want a refusal that suggests %q", in, err, want)
		}
	}
	// The flag's rules hold for derived policies (subagents) too.
	d, err := p.Derive(ModePlan)
	if err != nil {
		t.Fatal(err)
	}
	if nd := d.DecideNet("localhost"); nd.Tier != Allow {
		t.Errorf("a derived policy lost --allow-host: %+v", nd)
	}
}

func TestUnknownNetPreset(t *testing.T) {
	_, _, err := ParseConfig("c.toml", []byte("[sandbox]\nnet_presets = [\"npn\"]\n"))
	if err == nil || !strings.Contains(err.Error(), `unknown net preset "npn" (did you mean "npm"?)`) || !strings.Contains(err.Error(), "c.toml:2") {
		t.Errorf("err = %v", err)
	}
}

// A repository's own config cannot add hosts until the user trusts it:
// its allow rules and its presets are ignored; its deny and ask rules
// tighten.
func TestRepositoryConfigCannotAddHosts(t *testing.T) {
	root := t.TempDir()
	ws, cfg := filepath.Join(root, "ws"), filepath.Join(root, "cfg")
	for _, d := range []string{filepath.Join(ws, ".brig"), cfg} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	repo := `[permissions]
allow = ["Net(domain:exfil.example)", "Net"]
deny = ["Net(domain:registry.npmjs.org)"]
[sandbox]
net_presets = ["pypi"]
network = true
`
	if err := os.WriteFile(filepath.Join(ws, ".brig", "config.toml"), []byte(repo), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "config.toml"), []byte("[sandbox]\nnet_presets = [\"npm\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := FilesFor(cfg, ws)
	load := func() *Policy {
		l, err := Load(files)
		if err != nil {
			t.Fatal(err)
		}
		p, err := New(ws, l, ModeAuto, Machine{Home: filepath.Join(root, "home"), Namespaces: true})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := load()
	for host, want := range map[string]Tier{
		"exfil.example":      Ask,  // its allow rule is ignored
		"pypi.org":           Ask,  // its preset is ignored
		"other.example":      Ask,  // its bare Net and network = true are ignored
		"registry.npmjs.org": Deny, // its deny tightens the user's preset
	} {
		if nd := p.DecideNet(host); nd.Tier != want {
			t.Errorf("untrusted: %s = %+v; want %s", host, nd, want)
		}
	}
	if _, err := Trust(context.Background(), files); err != nil {
		t.Fatal(err)
	}
	p = load()
	for host, want := range map[string]Tier{"exfil.example": Allow, "pypi.org": Allow, "other.example": Allow} {
		if nd := p.DecideNet(host); nd.Tier != want {
			t.Errorf("trusted: %s = %+v; want %s", host, nd, want)
		}
	}
}

// The hint for a host beyond the profile names the user's own config file
// as loaded (XDG_CONFIG_HOME moves it), the home directory written as ~;
// without one known, the default.
func TestBeyondHintNamesTheUsersConfig(t *testing.T) {
	f := newModeFixture(t, "")
	call := Call{Tool: "bash", Effect: EffectNetwork, Host: "pkg.example"}
	hint := func(p *Policy) string {
		v := p.Decide(call)
		if len(v.Beyond) != 1 {
			t.Fatalf("beyond %+v (%s)", v.Beyond, v.Reason)
		}
		return v.Beyond[0].Hint()
	}
	if h := hint(f.policy(t, ModeAsk)); !strings.HasSuffix(h, "Net(domain:pkg.example) to the allow rules of ~/.config/brig/config.toml") {
		t.Errorf("default: %s", h)
	}
	f.loaded.Files.Global = f.home + "/xdg/brig/config.toml"
	if h := hint(f.policy(t, ModeAsk)); !strings.HasSuffix(h, "to the allow rules of ~/xdg/brig/config.toml") {
		t.Errorf("XDG_CONFIG_HOME under home: %s", h)
	}
	f.loaded.Files.Global = "/etc/brig-user/config.toml"
	if h := hint(f.policy(t, ModeAsk)); !strings.HasSuffix(h, "to the allow rules of /etc/brig-user/config.toml") {
		t.Errorf("elsewhere: %s", h)
	}
}

// TestAnsweredHostNamesReachPublicAddressesOnly: a host name allowed by an
// answer (for the session, or always: kept in the workspace rules file)
// is allowed but not named, so the proxy connects it to public addresses
// only (a name the user saw can later resolve to 127.0.0.1: DNS
// rebinding); an address or localhost answered is named, as the user saw
// where it leads; the same name in the user's own config is named.
func TestAnsweredHostNamesReachPublicAddressesOnly(t *testing.T) {
	p, root, _, _ := testPolicy(t, ModeAsk, "[permissions]\nallow = [\"Net(domain:mine.example)\"]\n")
	p.Files.User = filepath.Join(root, "cfg", "workspaces", "ws.toml")
	if err := p.Remember(context.Background(), false, NetRule("docs.example"), NetRule("10.1.2.3"), NetRule("localhost")); err != nil {
		t.Fatal(err)
	}
	if err := p.Remember(context.Background(), true, NetRule("always.example")); err != nil {
		t.Fatal(err)
	}
	for host, named := range map[string]bool{"docs.example": false, "always.example": false, "10.1.2.3": true, "localhost": true, "mine.example": true} {
		if nd := p.DecideNet(host); nd.Tier != Allow || nd.Named != named {
			t.Errorf("%s: %+v, want allowed, named %v", host, nd, named)
		}
	}
}

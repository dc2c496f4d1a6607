package policy

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// Network by host: every connection a call makes goes through brig's egress
// proxy, which asks the policy about its host (DecideNet), as web_fetch
// does before it runs. One decision path: the same rules, presets and
// answers decide both.

// NetPreset is a named list of hosts, for a package registry or a forge,
// that a user enables by name ([sandbox] net_presets).
type NetPreset struct {
	Name  string   `json:"name"`
	What  string   `json:"what"`
	Hosts []string `json:"hosts"` // Net rule hosts: a name or *.name
}

var netPresets = sync.OnceValue(func() map[string]NetPreset {
	return map[string]NetPreset{
		"npm":      {Name: "npm", What: "the npm registry (npm, yarn, pnpm)", Hosts: []string{"registry.npmjs.org", "registry.yarnpkg.com"}},
		"go":       {Name: "go", What: "the Go module proxy and checksum database", Hosts: []string{"proxy.golang.org", "sum.golang.org"}},
		"pypi":     {Name: "pypi", What: "the Python Package Index (pip, uv, poetry)", Hosts: []string{"pypi.org", "files.pythonhosted.org"}},
		"crates":   {Name: "crates", What: "crates.io (cargo)", Hosts: []string{"crates.io", "index.crates.io", "static.crates.io"}},
		"rubygems": {Name: "rubygems", What: "RubyGems (gem, bundler)", Hosts: []string{"rubygems.org", "index.rubygems.org"}},
		"maven": {Name: "maven", What: "Maven Central and the Gradle plugin portal", Hosts: []string{
			"repo.maven.apache.org", "repo1.maven.org", "plugins.gradle.org", "plugins-artifacts.gradle.org", "services.gradle.org", "downloads.gradle.org"}},
		"github": {Name: "github", What: "GitHub: git over https, archives, release assets, raw files", Hosts: []string{"github.com", "*.github.com", "*.githubusercontent.com"}},
		"gitlab": {Name: "gitlab", What: "GitLab.com: git over https, archives", Hosts: []string{"gitlab.com"}},
	}
})

// NetPresets lists the presets by name.
func NetPresets() []NetPreset {
	var out []NetPreset
	for _, n := range NetPresetNames() {
		out = append(out, netPresets()[n])
	}
	return out
}

// NetPresetNames lists the presets' names, sorted.
func NetPresetNames() []string {
	var names []string
	for n := range netPresets() {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// NetDecision is the decision on one connection to a host.
type NetDecision struct {
	Host string `json:"host"`
	Tier Tier   `json:"tier"`
	// Rule says what decided: a rule and where it is written, a preset,
	// [sandbox] network; empty when nothing did (Ask).
	Rule string `json:"rule,omitempty"`
	// Named: an allow rule of the user's names this exact host, so the
	// proxy may connect it to a loopback, private or other non-public
	// address. Presets, wildcards and answers never do for a host name
	// (an answer "for the session" or "always" is kept as a rule in the
	// workspace rules file, or in memory, and the user saw only the name,
	// which can later resolve anywhere); they do for an address or
	// localhost, which the user saw.
	Named  bool   `json:"named"`
	Reason string `json:"reason"`
}

// DecideNet decides a connection to host (a name or an IP address, any
// port). The user's rules and this session's answers come first (deny
// beats ask beats allow), then the enabled presets and [sandbox] network;
// an untrusted repository config may only make the decision stricter. With
// nothing deciding, the tier is Ask: the user is asked, and a run that
// cannot ask refuses.
func (p *Policy) DecideNet(host string) NetDecision { return p.decideNet(host, p.rules()) }

func (p *Policy) decideNet(host string, rs RuleSet) NetDecision {
	host = NormalHost(host)
	nd := NetDecision{Host: host}
	own, tighten := rs.split()
	if d := own.DecideHost(host, ""); d.Rule != nil {
		nd.Tier = d.Tier
		nd.Rule = fmt.Sprintf("%s (%s)", d.Rule, d.Rule.Source)
		nd.Named = d.Tier == Allow && d.Rule.NamesHost(host) && (!p.answered(*d.Rule) || NamesAddress(host))
	} else if name, pat := p.presetFor(host); name != "" {
		nd.Tier, nd.Rule = Allow, fmt.Sprintf("net preset %s (%s)", name, pat)
	} else if p.Sandbox.Network && !isIP(host) {
		nd.Tier, nd.Rule = Allow, "[sandbox] network = true (every public host)"
	} else {
		nd.Tier = Ask
	}
	if t := tighten.DecideHost(host, ""); t.Rule != nil && stricter(t.Tier, nd.Tier) {
		nd.Tier, nd.Named = t.Tier, false
		nd.Rule = fmt.Sprintf("%s (%s, an untrusted repository config: it can only tighten)", t.Rule, t.Rule.Source)
	}
	switch {
	case nd.Tier == Ask && nd.Rule == "" && isIP(host):
		nd.Reason = "no rule names the address " + host + " (an address is allowed only by a rule naming it: Net(domain:" + bracketed(host) + "))"
	case nd.Rule == "":
		nd.Reason = "no rule allows " + host
	default:
		nd.Reason = fmt.Sprintf("%s by %s", nd.Tier, nd.Rule)
	}
	return nd
}

// bracketed writes an IPv6 address as a rule's host does.
func bracketed(host string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}

// answered reports whether r is kept from an answer to a question (this
// session's, or saved in the workspace rules file by "always") rather
// than written by the user in their config or given as a flag.
func (p *Policy) answered(r Rule) bool {
	return p.Files.User != "" && r.Source.File == p.Files.User
}

// NamesAddress reports whether host names where it leads: an IP address,
// or localhost. An answer about such a host lets it reach loopback and
// private addresses (an answer about a name never does), and holds for the
// port the question showed only, for that call: a Net rule, which holds
// for every port, is not offered for it (red team: "once" for
// localhost:3000, a dev server, let the same call read localhost:9876).
func NamesAddress(host string) bool {
	host = NormalHost(host)
	return isIP(host) || host == "localhost"
}

// NetRule is the rule that allows host, as an "always" answer saves it.
func NetRule(host string) string { return "Net(domain:" + bracketed(NormalHost(host)) + ")" }

// presetFor names the enabled preset, and its host pattern, that covers
// host.
func (p *Policy) presetFor(host string) (string, string) {
	for _, name := range p.Sandbox.NetPresets {
		for _, h := range netPresets()[name].Hosts {
			r := Rule{Scope: ScopeNet, Pattern: "domain:" + h}
			if r.MatchHost(host) {
				return name, h
			}
		}
	}
	return "", ""
}

// AllowedHosts lists what the policy lets calls reach without asking, for
// a model told that a host was refused: the host patterns of the user's
// allow rules, of the enabled presets, and "every public host" for
// [sandbox] network.
func (p *Policy) AllowedHosts() []string {
	var out []string
	add := func(h string) {
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	own, _ := p.rules().split()
	for _, r := range own.Allow {
		if !hostScope(r.Scope) {
			continue
		}
		if r.Pattern == "" {
			add("every public host (a bare Net rule)")
			continue
		}
		add(strings.TrimPrefix(r.Pattern, "domain:"))
	}
	for _, name := range p.Sandbox.NetPresets {
		for _, h := range netPresets()[name].Hosts {
			add(h)
		}
	}
	if p.Sandbox.Network {
		add("every public host ([sandbox] network)")
	}
	return out
}

// AllowHosts allows connections to hosts for the rest of this run, as the
// --allow-host flag does: each host becomes a Net rule naming it exactly
// (so it may reach a loopback or private address too). A host that is no
// host name or address is refused, and nothing is added.
func (p *Policy) AllowHosts(hosts ...string) error {
	var rules []Rule
	for _, h := range hosts {
		if bare, why := hostOnly(h); why != "" {
			return fmt.Errorf("--allow-host %s: %s; give the host alone: --allow-host %s", h, why, bare)
		}
		r, err := ParseRule("Net(domain:"+bracketed(NormalHost(h))+")", Source{File: "--allow-host"})
		if err != nil {
			return fmt.Errorf("--allow-host %s: %w", h, err)
		}
		rules = append(rules, r)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.flagRules.Allow = append(p.flagRules.Allow, rules...)
	return nil
}

// hostOnly says why h, given where a host is expected, is more than one —
// a URL, or a host with a port — and the host it names; why is "" when
// it is not.
func hostOnly(h string) (host, why string) {
	h = strings.TrimSpace(h)
	if u, err := url.Parse(h); err == nil && u.Scheme != "" && u.Host != "" {
		return u.Hostname(), "that is a URL, and a rule names a host (every port and path of it)"
	}
	if host, port, err := net.SplitHostPort(h); err == nil && host != "" && port != "" {
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		return host, "a rule names a host, and allows every port of it"
	}
	return "", ""
}

// GoDownloads reports whether calls may download Go modules without
// asking: a rule, a preset or [sandbox] network allows the host of the
// module proxy (the first in the user's GOPROXY, else proxy.golang.org).
// Such calls get a module cache of the workspace's own (Profile.GoDownloads).
func (p *Policy) GoDownloads() bool {
	host := "proxy.golang.org"
	for _, e := range strings.FieldsFunc(envValue(p.Machine.Env, "GOPROXY"), func(r rune) bool { return r == ',' || r == '|' }) {
		if u, err := url.Parse(e); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Hostname() != "" {
			host = u.Hostname()
		}
		break
	}
	return p.DecideNet(host).Tier == Allow
}

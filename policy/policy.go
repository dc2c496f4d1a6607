package policy

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"brig/jail"
)

// Machine is what compiling a grant needs to know about the host and the
// running brig; it does not change during a session.
type Machine struct {
	Home       string   // canonical home directory
	Env        []string // the supervisor's environment (filtered by envguard when compiled)
	Namespaces bool     // the jail gets a mount namespace (private /tmp, /proc)
	CacheRoot  string   // per-workspace toolchain caches live under it
	BrigDirs   []string // brig's config and state directories: never granted
	Limits     jail.Limits
}

// Policy decides the calls of one workspace: the merged rules, the mode,
// the workspace's places and the grants answered during the session. It is
// safe for concurrent use.
type Policy struct {
	Loaded
	Places  Places
	Machine Machine

	mu      sync.Mutex
	mode    Mode
	session RuleSet // "allow for this session" answers
}

// New builds the policy of a workspace from its loaded config. workspace and
// m.Home must be canonical.
func New(workspace string, loaded Loaded, mode Mode, m Machine) (*Policy, error) {
	if !filepath.IsAbs(workspace) {
		return nil, fmt.Errorf("workspace %q is not absolute", workspace)
	}
	if _, err := ParseMode(string(mode)); err != nil {
		return nil, err
	}
	protected, err := jail.ProtectedPaths(workspace, m.BrigDirs...)
	if err != nil {
		return nil, fmt.Errorf("find the protected paths of %s: %w", workspace, err)
	}
	return &Policy{
		Loaded:  loaded,
		Places:  Places{Workspace: workspace, Home: m.Home, Protected: protected, BrigDirs: m.BrigDirs},
		Machine: m,
		mode:    mode,
	}, nil
}

// Derive is a policy with the same rules, places and machine in mode m,
// and no session answers of its own (a subagent's: plan mode whatever the
// session's).
func (p *Policy) Derive(m Mode) (*Policy, error) {
	if _, err := ParseMode(string(m)); err != nil {
		return nil, err
	}
	return &Policy{Loaded: p.Loaded, Places: p.Places, Machine: p.Machine, mode: m}, nil
}

// Mode is the current mode.
func (p *Policy) Mode() Mode {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

// SetMode changes the mode at run time (`/mode`).
func (p *Policy) SetMode(m Mode) error {
	if _, err := ParseMode(string(m)); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode = m
	return nil
}

// AllowForSession adds rules answered "allow for this session".
func (p *Policy) AllowForSession(rules ...Rule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.session.Allow = append(p.session.Allow, rules...)
}

// SessionRules are the rules answered "allow for this session" so far.
func (p *Policy) SessionRules() []Rule {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.session.Allow)
}

// rules is the rule set in effect: the config files plus session answers.
func (p *Policy) rules() RuleSet {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.Rules.Merge(p.session)
}

func (p *Policy) ctx() Context {
	return Context{Home: p.Places.Home, Workspace: p.Places.Workspace}
}

// PathVerdict is the decision on one path a call touches.
type PathVerdict struct {
	Given    string    `json:"given"`
	Resolved string    `json:"resolved"`
	Exists   bool      `json:"exists"`
	Class    PathClass `json:"class"`
	Write    bool      `json:"write"`
	Tier     Tier      `json:"tier"`
	Reason   string    `json:"reason"`
}

// Verdict is the decision on one call: its tier and why, the simple
// commands and paths it was made from, and the rules an "always allow"
// answer would save.
type Verdict struct {
	Call     Call              `json:"call"`
	Mode     Mode              `json:"mode"`
	Tier     Tier              `json:"tier"`
	Reason   string            `json:"reason"`
	Commands []CommandVerdict  `json:"commands"`
	Paths    []PathVerdict     `json:"paths"`
	Always   []string          `json:"always,omitempty"`
	Network  bool              `json:"network"`
	Risky    []string          `json:"risky,omitempty"`
	notes    map[string]string // reasons by tier, first one wins
}

// CommandVerdict is the decision on one simple command of a bash call.
type CommandVerdict struct {
	Words  []string `json:"words"`
	Dir    string   `json:"dir,omitempty"`
	Via    []string `json:"via,omitempty"`
	Tier   Tier     `json:"tier"`
	Reason string   `json:"reason"`
	Risky  []string `json:"risky,omitempty"`
}

// note records a part's tier and keeps the first reason given for each tier,
// so the verdict can say why it is what it is.
func (v *Verdict) note(t Tier, reason string) {
	if v.notes == nil {
		v.notes = map[string]string{}
	}
	if _, ok := v.notes[string(t)]; !ok {
		v.notes[string(t)] = reason
	}
	v.Tier = CombineTiers(v.Tier, t)
}

// finish sets the verdict's reason from the deciding part.
func (v *Verdict) finish(fallback string) {
	if r, ok := v.notes[string(v.Tier)]; ok {
		v.Reason = r
	} else if v.Reason == "" {
		v.Reason = fallback
	}
}

// Decide gives a call its tier in the current mode.
func (p *Policy) Decide(call Call) Verdict {
	mode := p.Mode()
	v := Verdict{Call: call, Mode: mode, Tier: Allow, Commands: []CommandVerdict{}, Paths: []PathVerdict{}}
	rs := p.rules()
	switch call.Effect {
	case EffectNone:
		v.note(Allow, "touches nothing outside brig")
	case EffectRead, EffectWrite:
		if call.Effect == EffectWrite && mode == ModePlan {
			v.note(Deny, "plan mode is read-only: write tools are refused")
			break
		}
		for _, given := range call.Read {
			p.decidePath(&v, rs, given, p.Places.Workspace, false)
		}
		for _, given := range call.Write {
			p.decidePath(&v, rs, given, p.Places.Workspace, true)
		}
		if len(call.Read)+len(call.Write) == 0 {
			v.note(Deny, "the call names no path")
		}
	case EffectExec:
		p.decideBash(&v, rs, mode)
	case EffectMCP:
		if !strings.Contains(call.Tool, "__") {
			v.note(Deny, fmt.Sprintf("%q is not an MCP tool name (SERVER__TOOL)", call.Tool))
		}
		// Decided by the Mcp rules below.
	case EffectNetwork:
		d := rs.DecideHost(call.Host, Ask)
		v.note(d.Tier, ruleReason(d, "no rule for host "+call.Host))
		v.Network = d.Tier != Deny
		v.Always = []string{fmt.Sprintf("WebFetch(domain:%s)", call.Host)}
	default:
		v.note(Deny, fmt.Sprintf("unknown effect %q", call.Effect))
	}
	if strings.Contains(call.Tool, "__") {
		d := rs.DecideTool(call.Tool, Ask)
		v.note(d.Tier, ruleReason(d, "MCP tool "+call.Tool))
		v.Always = append(v.Always, fmt.Sprintf("Mcp(%s)", call.Tool))
	}
	v.finish("allowed")
	p.applyMode(&v, mode)
	return v
}

// applyMode turns Ask into Allow where the mode auto-approves, and keeps
// confirmations.
func (p *Policy) applyMode(v *Verdict, mode Mode) {
	switch {
	case v.Tier == Deny:
		return
	case v.Call.Confirm:
		v.Tier, v.Reason = Ask, "asks for confirmation in every mode: "+v.Reason
		return
	case v.Tier != Ask:
		return
	}
	switch mode {
	case ModeAuto:
		v.Tier, v.Reason = Allow, "auto mode approves it (the jail still applies): "+v.Reason
	case ModeEdit:
		if v.Call.Effect == EffectWrite && !slices.ContainsFunc(v.Paths, func(pv PathVerdict) bool {
			return pv.Tier == Ask && pv.Class != ClassWorkspace
		}) {
			v.Tier, v.Reason = Allow, "edit mode approves edits inside the workspace"
		}
	}
}

func ruleReason(d Decision, fallback string) string {
	if d.Rule != nil {
		return fmt.Sprintf("%s by %s (%s)", d.Tier, d.Rule, d.Rule.Source)
	}
	return fallback
}

// pathDefault is the tier for touching a path of a class when no rule
// matches, and whether a rule may change it.
func pathDefault(c PathClass, write, bash bool) (t Tier, reason string, final bool) {
	switch c {
	case ClassTemp:
		return Allow, "the call's private temporary directory", false
	case ClassProtected:
		if write {
			return Deny, "protected: never writable from a jail (it governs brig or runs outside it later)", true
		}
		return Allow, "inside the workspace", false
	case ClassSecret:
		return Deny, "holds credentials (denied unless one of your rules names it)", false
	case ClassWorkspace:
		if write && !bash {
			return Ask, "writes inside the workspace", false
		}
		if write {
			return Allow, "inside the workspace (the command's own tier decides)", false
		}
		return Allow, "inside the workspace", false
	case ClassSystem:
		if write {
			return Ask, "writes a system path", false
		}
		return Allow, "system and toolchain files are readable by every call", false
	}
	if write {
		return Ask, "writes outside the workspace", false
	}
	return Ask, "reads outside the workspace", false
}

// decidePath resolves one path and records its verdict.
func (p *Policy) decidePath(v *Verdict, rs RuleSet, given, dir string, write bool) PathVerdict {
	pv := PathVerdict{Given: given, Write: write}
	resolved, exists, err := ResolvePath(given, dir, p.Places.Home)
	if err != nil {
		pv.Tier, pv.Reason = Deny, err.Error()
		v.Paths = append(v.Paths, pv)
		v.note(Deny, fmt.Sprintf("%s: %s", given, err))
		return pv
	}
	pv.Resolved, pv.Exists = resolved, exists
	bash := v.Call.Effect == EffectExec
	pv.Class = p.Places.Classify(resolved)
	if bash && p.Machine.Namespaces && pv.Class == ClassOutside && (within(resolved, "/tmp") || within(resolved, "/dev/shm")) {
		// A bash call gets a fresh /tmp: what it writes there is its own,
		// and the host's files there are not visible unless granted.
		pv.Class = ClassTemp
	}
	def, reason, final := pathDefault(pv.Class, write, bash)
	if p.brigOwn(resolved) {
		def, reason, final = Deny, "brig's own config and state: never granted to a jail", true
	}
	pv.Tier, pv.Reason = def, reason
	if !final {
		if d := rs.DecidePath(resolved, write, p.ctx(), def); d.Rule != nil {
			pv.Tier, pv.Reason = d.Tier, fmt.Sprintf("%s by %s (%s)", d.Tier, d.Rule, d.Rule.Source)
		}
	}
	v.Paths = append(v.Paths, pv)
	v.note(pv.Tier, fmt.Sprintf("%s: %s", given, pv.Reason))
	if pv.Tier == Ask {
		v.Always = append(v.Always, pathRule(pv, p.Places))
	}
	return pv
}

func (p *Policy) brigOwn(path string) bool {
	return slices.ContainsFunc(p.Places.BrigDirs, func(d string) bool { return within(path, d) })
}

// pathRule is the rule an "always allow" answer saves for a path: the
// exact path, written workspace-relative or home-relative where it can be.
func pathRule(pv PathVerdict, pl Places) string {
	scope := ScopeRead
	if pv.Write {
		scope = ScopeWrite
	}
	p := pv.Resolved
	switch {
	case within(p, pl.Workspace):
		rel, _ := filepath.Rel(pl.Workspace, p)
		p = "./" + rel
	case pl.Home != "" && within(p, pl.Home):
		rel, _ := filepath.Rel(pl.Home, p)
		p = "~/" + rel
	}
	if pv.Exists && !pv.Write && isDir(pv.Resolved) {
		p += "/**"
	}
	return fmt.Sprintf("%s(%s)", scope, p)
}

// decideBash decides a command line: every simple command by the rules
// and the built-in lists (DecideBash), and every path it names by where the
// path really leads (resolved against the directory the command runs in).
func (p *Policy) decideBash(v *Verdict, rs RuleSet, mode Mode) {
	bd := DecideBash(rs, v.Call.Command)
	v.Risky = bd.Risky
	v.note(bd.Tier, bd.Reason)
	base := p.Places.Workspace
	if v.Call.Dir != "" {
		dir, _, err := ResolvePath(v.Call.Dir, base, p.Places.Home)
		if err != nil {
			v.note(Deny, fmt.Sprintf("working directory %q: %v", v.Call.Dir, err))
			return
		}
		base = dir
	}
	for _, cd := range bd.Commands {
		c := cd.Command
		v.Commands = append(v.Commands, CommandVerdict{Words: c.Words, Dir: c.Dir, Via: c.Via, Tier: cd.Tier, Reason: cd.Reason, Risky: c.Risky})
		if cd.Tier == Ask && len(c.Risky) == 0 {
			if rule, _ := SuggestRule(c); rule != "" && !slices.Contains(v.Always, rule) {
				v.Always = append(v.Always, rule)
			}
		}
		if c.DirUnknown {
			continue // already Risky: its paths cannot be placed
		}
		dir := base
		if c.Dir != "" {
			d, _, err := ResolvePath(c.Dir, base, p.Places.Home)
			if err != nil {
				v.note(Deny, fmt.Sprintf("cd %s: %v", c.Dir, err))
				continue
			}
			dir = d
		}
		for _, pa := range c.Paths {
			if pa.Dynamic {
				continue // already Risky
			}
			pv := p.decidePath(v, rs, pa.Text, dir, pa.Write)
			if mode == ModePlan && pa.Write && pv.Tier != Deny && pv.Class != ClassTemp {
				v.note(Deny, fmt.Sprintf("plan mode is read-only: %s writes %s", c.Name(), pa.Text))
			}
		}
	}
}

// ProtectedRuleWarnings reports the allow rules that try to grant writing a
// protected path or brig's own files. They never take effect (protection
// wins); `brig doctor` and `brig policy check` say so.
func (p *Policy) ProtectedRuleWarnings() []string {
	var out []string
	targets := append(slices.Clone(p.Places.Protected), p.Places.BrigDirs...)
	for _, r := range p.rules().Allow {
		if r.Scope != ScopeWrite {
			continue
		}
		for _, q := range targets {
			if r.MatchPath(q, p.ctx()) || r.MatchPath(q+"/x", p.ctx()) {
				out = append(out, fmt.Sprintf("%s (%s) would grant writing the protected path %s; protected paths are never writable from a jail, so it does not apply there", r, r.Source, q))
				break
			}
		}
	}
	return out
}

// Remember records approval answers: for the rest of the session, and, when
// persist is set ("always"), in the user's rules file for this workspace
// (outside the workspace, atomically, under a lock). Rules that do not parse
// are refused and nothing is recorded.
func (p *Policy) Remember(ctx context.Context, persist bool, texts ...string) error {
	var rules []Rule
	for _, text := range texts {
		r, err := ParseRule(text, Source{File: p.Files.User})
		if err != nil {
			return err
		}
		rules = append(rules, r)
	}
	if persist {
		if p.Files.User == "" {
			return errors.New("no workspace rules file to save to")
		}
		if err := SaveAllow(ctx, p.Files.User, texts...); err != nil {
			return err
		}
	}
	p.AllowForSession(rules...)
	return nil
}

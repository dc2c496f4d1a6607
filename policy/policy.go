package policy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"brig/internal/sensitive"
	"brig/jail"
)

// Machine is what compiling a grant needs to know about the host and the
// running brig; it does not change during a session.
type Machine struct {
	Home       string   // canonical home directory
	Env        []string // the supervisor's environment (filtered by envguard when compiled)
	Namespaces bool     // the jail gets a mount namespace (private /tmp, /proc); read it through Policy.Namespaces
	CacheRoot  string   // per-workspace toolchain caches live under it
	GoLayer    string   // the Go standard library's build cache (brig cache warm): beneath every GOCACHE
	BrigCache  string   // brig's cache directory (CacheRoot and GoLayer are in it): no call writes it but its own cache
	BrigDirs   []string // brig's config and state directories: never granted
	Limits     jail.Limits
	// NamespacesFrom, when set, answers Namespaces instead, when a call
	// is first decided: the supervisor's start-up probe, which building
	// the policy need not wait for (brig -p sends its first request
	// while the probe runs).
	NamespacesFrom func() bool
	// WatchRepositories: the grants' searches of the workspace for
	// repositories learn from inotify what changed (jail.RepoCache.Watch),
	// for a session's many calls.
	WatchRepositories bool
}

// namespaces is Namespaces, or NamespacesFrom's answer when it is set.
func (m Machine) namespaces() bool {
	if m.NamespacesFrom != nil {
		return m.NamespacesFrom()
	}
	return m.Namespaces
}

// Namespaces reports whether calls get fresh namespaces (a private /tmp
// and /proc): Machine.Namespaces, or NamespacesFrom's answer when set,
// which may wait for the supervisor's start-up probe.
func (p *Policy) Namespaces() bool { return p.Machine.namespaces() }

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
	saved   []Rule  // those of them also saved to Files.User ("always")
	// flagRules are rules given for this run by flags (--allow-host);
	// they carry over to derived policies.
	flagRules RuleSet
	extra     []ExtraDir // added to the jail profile for this run (--add-dir)
	// later are the places a program outside the jail runs or obeys
	// later: the sensitive list's and the directories on the user's PATH.
	later []laterExec
	// secrets is the index of the secrets under Machine.Home (immutable;
	// every call's grant is checked against it).
	secrets *sensitive.Index
	// repos remembers the workspace's directories between the grants'
	// searches for repositories (jail.RepoCache).
	repos *jail.RepoCache
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
	if err := CheckWorkspace(workspace, m.Home, m.BrigDirs...); err != nil {
		return nil, err
	}
	// The workspace's protected paths come from a search of it for
	// repositories, which lists every directory (a tenth of a second in a
	// tree of 5,000): it runs in the background, and the first use of its
	// list waits for it (a session sends its first request meanwhile). The
	// root is listed now, so that a workspace brig cannot read is refused
	// at once, as the search would.
	if err := listable(workspace); err != nil {
		return nil, fmt.Errorf("find the protected paths of %s: %w", workspace, err)
	}
	repos := jail.NewRepoCache() // this search's memory serves the first call's grant
	p := &Policy{
		Loaded:  loaded,
		Places:  Places{Workspace: workspace, Home: m.Home, BrigDirs: m.BrigDirs, search: searchProtected(repos, workspace, m)},
		Machine: m,
		mode:    mode,
		later:   laterExecList(m.Home, pathDirs(m.Env, workspace)),
		secrets: sensitive.NewIndex(m.Home),
		repos:   repos,
	}
	// A [sandbox] grant that cannot be given would fail every bash call:
	// refused now, not at the first call (nothing is created by this).
	if _, err := p.bashProfile(false, "", false); err != nil {
		if errors.As(err, new(placedError)) {
			return nil, err
		}
		return nil, fmt.Errorf("%w (%s)", err, loaded.sandboxFiles())
	}
	return p, nil
}

// protectedSearch is a policy's start-up search of its workspace for the
// paths no call may write (Places.protectedList waits for it).
type protectedSearch struct {
	done  chan struct{}
	list  []string
	err   error
	repos *jail.RepoCache // what it searched with: its Protected paths join the list
}

// searchProtected starts the search of workspace for its protected paths,
// with repos (whose memory then serves the first call's grant); a
// session's cache puts its watches in place as it goes
// (WatchRepositories).
func searchProtected(repos *jail.RepoCache, workspace string, m Machine) *protectedSearch {
	s := &protectedSearch{done: make(chan struct{}), repos: repos}
	env := os.Environ()
	if m.WatchRepositories {
		repos.Watch()
	}
	go func() {
		defer close(s.done)
		if s.list, s.err = repos.ProtectedPathsEnv(workspace, env, m.BrigDirs...); s.err != nil {
			slog.Error("the search of the workspace for its protected paths failed; every path in it is treated as protected", "workspace", workspace, "err", s.err)
		}
	}()
	return s
}

// listable reports why dir cannot be listed (nil when it can).
func listable(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Readdirnames(1); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// CheckWorkspace refuses a workspace that is, or holds, the home directory
// (canonical paths): every file there — shell startup files, keys, brig's
// own config — would be the workspace's to read and write. It also
// refuses one that is, or lies in, one of brig's own directories
// (brigDirs: its configuration and state): calls may write the workspace,
// and brig trusts what it keeps there — its configuration, the sessions
// and undo history, the jail's programs that later runs execute (a
// workspace that merely holds them is fine: they are masked from every
// call).
func CheckWorkspace(workspace, home string, brigDirs ...string) error {
	if home != "" && within(home, workspace) {
		what := "is your home directory"
		if home != workspace {
			what = "holds your home directory " + home
		}
		return fmt.Errorf("the workspace %s %s, where your shell startup files and keys live; run brig in a project directory (cd ~/src/project && brig), or pass --workspace DIR", workspace, what)
	}
	for _, d := range brigDirs {
		forms := []string{d}
		if real, err := filepath.EvalSymlinks(d); err == nil && real != d {
			forms = append(forms, real)
		}
		for _, f := range forms {
			if within(workspace, f) {
				return fmt.Errorf("the workspace %s lies in brig's own directory %s, whose files brig trusts (its configuration, sessions, undo history and the jail's programs) and no call may write; run brig in a project directory (cd ~/src/project && brig), or pass --workspace DIR", workspace, d)
			}
		}
	}
	return nil
}

// Derive is a policy with the same rules, places and machine in mode m,
// and no session answers of its own (a subagent's: plan mode whatever the
// session's).
func (p *Policy) Derive(m Mode) (*Policy, error) {
	if _, err := ParseMode(string(m)); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return &Policy{Loaded: p.Loaded, Places: p.Places, Machine: p.Machine, mode: m, flagRules: p.flagRules, later: p.later, secrets: p.secrets, repos: p.repos}, nil
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
	return p.Rules.Merge(p.flagRules).Merge(p.session)
}

// DeniedReads are the paths the Read deny rules in force hide from every
// jailed call (Rule.hides), sorted.
func (p *Policy) DeniedReads() []string {
	var out []string
	for _, r := range p.rules().Deny {
		out = append(out, r.hides(p.ctx())...)
	}
	slices.Sort(out)
	return slices.Compact(out)
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
	// Entry is the credential or later-executed place that decided a
	// secret or later-exec class (from internal/sensitive, or a PATH
	// directory); EntryReason why it is on the list.
	Entry       string `json:"entry,omitempty"`
	EntryReason string `json:"entry_reason,omitempty"`
	Write       bool   `json:"write"`
	Tier        Tier   `json:"tier"`
	Reason      string `json:"reason"`
	// ByRule: a rule of the user's (or an untrusted repository's, which
	// only tightens) decided the tier, not the default.
	ByRule bool `json:"by_rule,omitempty"`
}

// Verdict is the decision on one call: its tier and why, the simple
// commands and paths it was made from, and the rules an "always allow"
// answer would save.
type Verdict struct {
	Call     Call             `json:"call"`
	Mode     Mode             `json:"mode"`
	Tier     Tier             `json:"tier"`
	Reason   string           `json:"reason"`
	Commands []CommandVerdict `json:"commands"`
	Paths    []PathVerdict    `json:"paths"`
	Always   []string         `json:"always,omitempty"`
	Network  bool             `json:"network"`
	// Net is the decision on the host of a network call (web_fetch, or a
	// connection through the egress proxy).
	Net   *NetDecision `json:"net,omitempty"`
	Risky []string     `json:"risky,omitempty"`
	// Profile is the mode's jail profile; Beyond the parts of the call's
	// grant that lie beyond it (each needs a human's answer, a rule of
	// the user's or a flag naming it: no mode and no --yes approves them).
	Profile     JailProfile       `json:"profile"`
	Beyond      []Beyond          `json:"beyond,omitempty"`
	notes       map[string]string // reasons by tier, first one wins
	deletes     string            // a bash command that deletes files (or git's own), asked in every mode
	deletesWhat string            // what it deletes, for the reason (one of the deletes* texts)
	// ruleAsks is the first part an ask rule (the user's, or an untrusted
	// repository's) decided: asked in every mode, since a rule that says
	// ask is a wish to be asked (new user: auto and edit mode approved
	// calls the user's own ask rules matched).
	ruleAsks string
	// ReadsOnly: a bash line whose every command only reads
	// (CommandDecision.Reads), names no file it writes and carries no
	// risk. It runs with nothing of the user's writable (bashSpec), and
	// the agent takes no undo snapshot of it.
	ReadsOnly bool `json:"reads_only,omitempty"`
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

// Decide gives a call its tier in the current mode. A verdict that asks
// proposes, in Always, exactly the rules that would have allowed this call;
// it proposes none when no saved rule would (a part decided only at run
// time, a deletion, which asks every time).
func (p *Policy) Decide(call Call) Verdict {
	rs := p.rules()
	v := p.decide(call, rs)
	if v.Tier == Ask && len(v.Always) > 0 && !p.allowedBy(call, rs, v.Always) {
		v.Always = nil
	}
	return v
}

// allowedBy reports whether the call would be allowed with the rules texts
// added to rs.
func (p *Policy) allowedBy(call Call, rs RuleSet, texts []string) bool {
	var add RuleSet
	for _, t := range texts {
		r, err := ParseRule(t, Source{File: "(proposed)"})
		if err != nil {
			return false
		}
		add.Allow = append(add.Allow, r)
	}
	return p.decide(call, rs.Merge(add)).Tier == Allow
}

func (p *Policy) decide(call Call, rs RuleSet) Verdict {
	mode := p.Mode()
	v := Verdict{Call: call, Mode: mode, Tier: Allow, Commands: []CommandVerdict{}, Paths: []PathVerdict{}, Profile: ProfileOf(mode)}
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
			pv := p.decidePath(&v, rs, given, p.Places.Workspace, true)
			if v.deletes == "" && !(pv.ByRule && pv.Tier == Allow) && inGitDir(pv.Resolved, p.Places.Workspace) {
				// .git/packed-refs, .git/logs/HEAD: git's history, which
				// undo does not hold. Auto and edit mode approved such a
				// write_file (red team, 2026-12-03); it asks as bash's
				// writes there do.
				v.deletes, v.deletesWhat = call.Tool+" "+given, deletesGitFiles
			}
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
		nd := p.decideNet(call.Host, rs)
		v.Net = &nd
		v.note(nd.Tier, nd.Reason)
		v.Network = nd.Tier != Deny
		rule := NetRule(call.Host)
		if !NamesAddress(call.Host) {
			v.Always = []string{rule}
		}
		if nd.Tier == Ask {
			v.Beyond = append(v.Beyond, Beyond{What: "reaches the host " + nd.Host + " over the network", Rule: rule, Flag: "--allow-host " + bracketed(nd.Host)})
		}
	default:
		v.note(Deny, fmt.Sprintf("unknown effect %q", call.Effect))
	}
	if strings.Contains(call.Tool, "__") {
		d := rs.DecideTool(call.Tool, Ask)
		v.note(d.Tier, ruleReason(d, "MCP tool "+call.Tool))
		if d.Rule != nil && d.Tier == Ask && v.ruleAsks == "" {
			v.ruleAsks = ruleReason(d, "")
		}
		v.Always = append(v.Always, fmt.Sprintf("Mcp(%s)", call.Tool))
	}
	v.finish("allowed")
	p.applyMode(&v, mode)
	return v
}

// Deletes is the bash command of the call that deletes files ("" for
// none): such a call asks every time, so no answer is remembered for it.
func (v Verdict) Deletes() string { return v.deletes }

// RuleAsks is the part of the call an ask rule decided ("" for none):
// such a call asks every time, in every mode.
func (v Verdict) RuleAsks() string { return v.ruleAsks }

// applyMode turns Ask into Allow where the mode approves without asking:
// never for a call whose grant goes beyond the mode's jail profile (a
// human, a rule of the user's or a flag must name that), nor for a
// confirmation (delete_path) or a bash command that deletes files.
func (p *Policy) applyMode(v *Verdict, mode Mode) {
	switch {
	case v.Tier == Deny:
		v.Beyond = nil // nothing to allow: it does not run
		return
	case len(v.Beyond) > 0:
		var what []string
		for i, b := range v.Beyond {
			what = append(what, b.What)
			v.Beyond[i].Config = p.userConfig()
		}
		v.Tier = Ask
		v.Reason = fmt.Sprintf("%s — beyond the %s jail profile of %s mode, so only the user can allow it", strings.Join(what, "; "), ProfileOf(mode), mode)
		return
	case v.Call.Confirm:
		// No rule can spare the question, so none is proposed.
		v.Tier, v.Reason, v.Always = Ask, "asks for confirmation in every mode: "+v.Reason, nil
		return
	case v.Tier != Ask && v.deletes == "":
		return
	case v.ruleAsks != "" && mode != ModeAsk && mode != ModePlan:
		// No answer can be remembered against the rule (ask beats
		// allow), so none is proposed.
		v.Reason, v.Always = v.ruleAsks+"; an ask rule asks in every mode", nil
		return
	case v.deletes != "":
		// Asked every time: no answer is remembered for it (only "once"
		// is offered), as for a confirmation. A command the built-in
		// lists allow asks too (a user's rule sets no deletion).
		v.Tier = Ask
		v.Reason = fmt.Sprintf("%s %s: deletions ask in every mode unless a rule of yours allows the command", v.deletes, v.deletesWhat)
		v.Always = nil
		return
	}
	switch mode {
	case ModeAuto:
		v.Tier, v.Reason = Allow, "auto mode approves it (its grant fits the workspace-write jail profile): "+v.Reason
	case ModeEdit:
		if v.Call.Effect == EffectWrite && !slices.ContainsFunc(v.Paths, func(pv PathVerdict) bool {
			return pv.Tier == Ask && pv.Class != ClassWorkspace && pv.Class != ClassAdded
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

// guarded reports whether a class is one no call may write by default:
// a protected path, a secret, a file run later outside the jail.
func guarded(c PathClass) bool {
	return c == ClassProtected || c == ClassSecret || c == ClassLaterExec
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
		return Deny, "holds credentials (denied in every mode unless a rule of yours names it)", false
	case ClassLaterExec:
		return Deny, "runs later outside the jail (denied in every mode unless a rule of yours names it)", false
	case ClassWorkspace, ClassAdded:
		where := "inside the workspace"
		if c == ClassAdded {
			where = "inside a directory added with --add-dir"
		}
		if write && !bash {
			return Ask, "writes " + where, false
		}
		if write {
			return Allow, where + " (the command's own tier decides)", false
		}
		return Allow, where, false
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

// resolveCallPath resolves a path a call names, as the call will: with
// namespaces, its /proc is its own, so nothing under /proc is followed
// here (resolvePath's callProc).
func (p *Policy) resolveCallPath(given, dir string) (resolved string, exists bool, err error) {
	return resolvePath(given, dir, p.Places.Home, p.Machine.namespaces(), nil)
}

// ownProc reports whether resolved names the process that opens it:
// /proc/self or /proc/thread-self, which resolveCallPath leaves as they
// stand when calls have a /proc of their own, or (without namespaces,
// where they were resolved here) this process's /proc directory.
func (p *Policy) ownProc(resolved string) bool {
	if within(resolved, "/proc/self") || within(resolved, "/proc/thread-self") {
		return true
	}
	return !p.Machine.namespaces() && within(resolved, "/proc/"+strconv.Itoa(os.Getpid()))
}

// decidePath resolves one path and records its verdict. The user's own
// rules (and this session's answers) may change the default, except for a
// protected path or brig's own files; a credential or later-executed place
// only by a rule that names it (its literal part lies within the entry, so
// Read(/**) does not count); a rule of an untrusted repository config only
// makes the decision stricter.
func (p *Policy) decidePath(v *Verdict, rs RuleSet, given, dir string, write bool) PathVerdict {
	pv := PathVerdict{Given: given, Write: write}
	resolved, exists, err := p.resolveCallPath(given, dir)
	if err != nil {
		pv.Tier, pv.Reason = Deny, err.Error()
		v.Paths = append(v.Paths, pv)
		v.note(Deny, fmt.Sprintf("%s: %s", given, err))
		return pv
	}
	pv.Resolved, pv.Exists = resolved, exists
	bash := v.Call.Effect == EffectExec
	pv.Class, pv.Entry, pv.EntryReason = p.classify(resolved, write, bash)
	if !guarded(pv.Class) {
		// The name counts as well as where it leads: .git/hooks (or
		// ~/.bashrc) a symbolic link to elsewhere is still what git (or
		// bash) runs, and a write through it is a write there; what
		// ~/.aws/credentials leads to is a credential wherever it lies.
		if lex := lexicalPath(given, dir, p.Places.Home); lex != "" && lex != resolved {
			if c, e, why := p.classify(lex, write, bash); c == ClassSecret || write && guarded(c) {
				pv.Class, pv.Entry, pv.EntryReason = c, e, why
			}
		}
	}
	def, reason, final := pathDefault(pv.Class, write, bash)
	switch pv.Class {
	case ClassSecret, ClassLaterExec:
		what := p.display(pv.Entry)
		if pv.EntryReason != "" {
			what += " — " + pv.EntryReason
		}
		if rule := pathRule(pv, p.Places); rule != "" {
			reason = what + ": " + strings.TrimSuffix(reason, ")") + ", such as " + rule + " in ~/.config/brig/config.toml)"
		} else {
			reason = what + ": " + reason
		}
	case ClassAdded:
		if d, _ := p.extraFor(resolved); write && d.ReadOnly {
			def, reason = Ask, "writes "+d.Path+", which was added read-only"
		}
	}
	if p.brigOwn(resolved) {
		def, reason, final = Deny, "brig's own config and state: never granted to a jail", true
	}
	if c := p.Machine.BrigCache; write && c != "" && within(resolved, c) {
		def, reason, final = Deny, "brig's cache (the Go layer and every workspace's toolchain caches, which other workspaces' builds link): no call writes it by name; a call's builds write its own workspace's cache through GOCACHE and the like", true
	}
	if !bash && p.ownProc(resolved) {
		// In the call /proc/self names the tool's own process, never
		// one of the user's.
		def, reason, final = Deny, "/proc/self (or thread-self) names the process of the tool that reads it, not anything of yours: to look at a process of a call, run a command (bash: `cat /proc/self/status` shows that command's own)", true
	}
	if write && !bash && (resolved == p.Places.Workspace || slices.ContainsFunc(p.ExtraDirs(), func(d ExtraDir) bool { return resolved == d.Path })) {
		// A file tool's grant would be write on the directory above it.
		def, reason, final = Deny, "the root of the workspace (or of an added directory) itself: a call may change what is in it, not replace, move or remove it", true
	}
	pv.Tier, pv.Reason = def, reason
	if !final {
		own, tighten := rs.split()
		if pv.Class == ClassSecret || pv.Class == ClassLaterExec {
			own = own.naming(pv.Entry, p.ctx())
		}
		var byRule bool
		if d := own.DecidePath(resolved, write, p.ctx(), def); d.Rule != nil {
			pv.Tier, pv.Reason, byRule = d.Tier, fmt.Sprintf("%s by %s (%s)", d.Tier, d.Rule, d.Rule.Source), true
		}
		if d := tighten.DecidePath(resolved, write, p.ctx(), ""); d.Rule != nil && stricter(d.Tier, pv.Tier) {
			pv.Tier, pv.Reason, byRule = d.Tier, fmt.Sprintf("%s by %s (%s, an untrusted repository config: it can only tighten)", d.Tier, d.Rule, d.Rule.Source), true
		}
		pv.ByRule = byRule
		if byRule && pv.Tier == Ask && v.ruleAsks == "" {
			v.ruleAsks = fmt.Sprintf("%s: %s", given, pv.Reason)
		}
	}
	v.Paths = append(v.Paths, pv)
	v.note(pv.Tier, fmt.Sprintf("%s: %s", given, pv.Reason))
	if pv.Tier == Ask {
		if rule := pathRule(pv, p.Places); rule != "" {
			v.Always = append(v.Always, rule)
		}
		if !p.inProfile(pv, v.Mode) {
			v.Beyond = append(v.Beyond, p.beyondPath(pv))
		}
	}
	return pv
}

// display writes a path home-relative where it can be.
func (p *Policy) display(path string) string {
	if h := p.Places.Home; h != "" && within(path, h) && path != h {
		return "~/" + strings.TrimPrefix(path, h+"/")
	}
	return path
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
		p = "./" + globEscape(rel)
	case pl.Home != "" && within(p, pl.Home):
		rel, _ := filepath.Rel(pl.Home, p)
		p = "~/" + globEscape(rel)
	default:
		p = globEscape(p)
	}
	if pv.Exists && !pv.Write && isDir(pv.Resolved) {
		p += "/**"
	}
	text := fmt.Sprintf("%s(%s)", scope, p)
	// The rule must match the path again, and only as a literal: a name
	// a rule cannot hold (parentheses, spaces at an end) gets none.
	r, err := ParseRule(text, Source{})
	if err != nil || !r.MatchPath(pv.Resolved, Context{Home: pl.Home, Workspace: pl.Workspace}) {
		return ""
	}
	return text
}

// globEscape writes a path literally in a rule's glob: \, *, ? and [
// escaped (path.Match honours \), so that a file named ** saves a rule
// for that file, not for everything under its directory.
func globEscape(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`\*?[`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// decideBash decides a command line: every simple command by the rules
// and the built-in lists (DecideBash), and every path it names by where the
// path really leads (resolved against the directory the command runs in).
func (p *Policy) decideBash(v *Verdict, rs RuleSet, mode Mode) {
	bd := DecideBash(rs, v.Call.Command)
	v.Risky = bd.Risky
	v.note(bd.Tier, bd.Reason)
	if bd.Unparsed {
		// Nothing of it is known, and bash runs the lines before the one
		// it cannot parse: `rm x; git branch -D old` then a lone `{` was
		// approved by auto mode (red team, 2026-12-03). It asks in every
		// mode, as a hidden command does.
		v.deletes, v.deletesWhat = strings.TrimSpace(firstLine(v.Call.Command)), deletesUnparsed
	}
	v.ReadsOnly = len(bd.Commands) > 0 && len(bd.Risky) == 0
	base := p.Places.Workspace
	if v.Call.Dir != "" {
		dir, _, err := p.resolveCallPath(v.Call.Dir, base)
		if err != nil {
			v.note(Deny, fmt.Sprintf("working directory %q: %v", v.Call.Dir, err))
			return
		}
		base = dir
	}
	var runDirs []string // the directories commands run in, decided once each
	for _, cd := range bd.Commands {
		c := cd.Command
		v.Commands = append(v.Commands, CommandVerdict{Words: c.Words, Dir: c.Dir, Via: c.Via, Tier: cd.Tier, Reason: cd.Reason, Risky: c.Risky})
		// A rule of the user's that allows the command is the only thing
		// that keeps a deletion from asking: the built-in lists allow a
		// command for what it usually does (go test, a linter), and its
		// options can still aim a write at .git (go test
		// -coverprofile=.git/packed-refs: red team, 2026-12-03).
		userAllows := cd.Tier == Allow && cd.Rule != nil
		if cd.RuleAsks && v.ruleAsks == "" {
			v.ruleAsks = fmt.Sprintf("%s: %s", c.Quoted(), cd.Reason)
		}
		v.ReadsOnly = v.ReadsOnly && cd.Reads && len(c.Risky) == 0 && !c.DirUnknown && !writes(c)
		if cd.Tier == Ask && len(c.Risky) == 0 && !cd.WritesAsReader {
			if rule, _ := SuggestRule(c); rule != "" && !slices.Contains(v.Always, rule) {
				v.Always = append(v.Always, rule)
			}
		}
		if !userAllows && v.deletes == "" && hidesCommand(c) {
			// rm -rf "$d" asks: so does $x -rf src, eval "$x".
			v.deletes, v.deletesWhat = c.Quoted(), deletesHidden
		}
		if c.DirUnknown {
			// Already Risky: its paths cannot be placed, so a deletion,
			// or a write that may land in .git, asks as a deletion does
			// (cd x; rm -rf src; cd .git/logs; truncate -s0 HEAD).
			if !userAllows && v.deletes == "" && (deletesGit(c) || deletes(c) || writes(c)) {
				v.deletes, v.deletesWhat = c.Quoted(), deletesFiles
				switch {
				case deletesGit(c):
					v.deletesWhat = deletesGitFiles
				case !deletes(c):
					v.deletesWhat = deletesUnplaced
				}
			}
			continue
		}
		dir := base
		if c.Dir != "" {
			d, _, err := p.resolveCallPath(c.Dir, base)
			if err != nil {
				v.note(Deny, fmt.Sprintf("cd %s: %v", c.Dir, err))
				continue
			}
			dir = d
			// The directory it runs in (a static cd before it, git -C,
			// env -C …) is read like a path it names: outside the
			// workspace it asks, and the answer grants it, instead of
			// the jail refusing what nobody was asked about. A cd only
			// changes the directory (cd .. && cd ws stays inside).
			if !changesDir(c) && !slices.Contains(runDirs, d) {
				runDirs = append(runDirs, d)
				p.decidePath(v, rs, c.Dir, base, false)
			}
		}
		// A deletion asks in every mode when it deletes a path of its
		// own, one only known at run time (rm -rf "$d": any path in the
		// workspace, .git included), or what it names without a path
		// (git clean -f, git reflog expire).
		deletesOwn, writesGit := false, false
		dotglob := strings.Contains(v.Call.Command, "dotglob") || strings.Contains(v.Call.Command, "GLOBIGNORE")
		nocase := strings.Contains(v.Call.Command, "nocaseglob")
		namesGit := func(t string) bool {
			if nocase {
				t = strings.ToLower(t) // shopt -s nocaseglob: .GI[T] is .git
			}
			return mayNameGit(t, dotglob)
		}
		// A command brig does not know the files of may write any it
		// names (iconv -o, split, csplit: red team, 2026-12-03): one in
		// .git counts as written there. Readers known to write nothing
		// (cat, ls, diff …) and git itself do not count.
		unknownWriter := !knownFiles(c)
		for _, pa := range c.Paths {
			// A pattern bash expands to a git directory (: > .gi?/packed-refs,
			// echo > {.git,x}/logs/HEAD: red team, 2026-12-03) writes there.
			writesGit = writesGit || (pa.Write || unknownWriter) && namesGit(pa.Text)
			if pa.Dynamic {
				deletesOwn = deletesOwn || pa.Write
				continue // already Risky
			}
			pv := p.decidePath(v, rs, pa.Text, dir, pa.Write)
			if mode == ModePlan && pa.Write && pv.Tier != Deny && pv.Class != ClassTemp {
				v.note(Deny, fmt.Sprintf("plan mode is read-only: %s writes %s", c.Name(), pa.Text))
			}
			deletesOwn = deletesOwn || pa.Write && pv.Class != ClassTemp
			// A path it writes in a git directory (> .git/packed-refs,
			// mv .git/objects /tmp/o, sed -i … .git/…): git's history,
			// which undo does not hold, whatever the command.
			writesGit = writesGit || (pa.Write || unknownWriter) && inGitDir(pv.Resolved, p.Places.Workspace)
			// A link made to a git directory is a way into it that the
			// rest of the line writes through (ln -s .git g; : > g/…),
			// before any decision sees the link.
			writesGit = writesGit || denyName(c) == "ln" && !pa.Write && (inGitDir(pv.Resolved, p.Places.Workspace) || namesGit(pa.Text))
		}
		// A script names what it writes in its own text: sed's w and
		// s///w, awk's print > "f", perl's open(F, ">f").
		writesGit = writesGit || scriptNamesGit(c, namesGit)
		if !userAllows && v.deletes == "" && writesRunTimeArgs(c) {
			// find … -exec cp /dev/null {} ;, … | xargs truncate -s0: the
			// paths it writes are found at run time, .git's among them
			// (red team, 2026-12-03).
			v.deletes, v.deletesWhat = c.Quoted(), deletesRunTime
		}
		if !userAllows && v.deletes == "" && (deletesGit(c) || writesGit || deletes(c) && (deletesOwn || len(c.Paths) == 0) || movesAway(c)) {
			_, clean := isGit(c, denyName, "clean") // untracked files, not git's own
			v.deletes, v.deletesWhat = c.Quoted(), deletesFiles
			namesGit := movesAway(c) && slices.ContainsFunc(c.Words, func(w string) bool { return w == ".git" || strings.Contains(w, ".git/") })
			if writesGit || namesGit || deletesGit(c) && !clean {
				v.deletesWhat = deletesGitFiles
			}
		}
	}
}

// changesDir reports whether c is a builtin that changes the shell's
// directory (the analysis follows it) rather than working in it.
func changesDir(c Command) bool {
	switch c.Name() {
	case "cd", "pushd", "popd":
		return true
	}
	return false
}

// What a deletion's question says it deletes (Verdict.deletesWhat).
const (
	deletesFiles    = "deletes files"
	deletesGitFiles = "deletes or rewrites git's own files (.git), which undo does not hold"
	deletesUnplaced = "writes or deletes paths in a directory only known at run time (a cd before it whose success is not known), which may be git's own files (.git) that undo does not hold"
	deletesHidden   = "runs a command only known at run time, which may delete files or git's own files (.git) that undo does not hold"
	deletesRunTime  = "writes paths that find or xargs give it at run time, which may be git's own files (.git) that undo does not hold"
	deletesUnparsed = "is a command line brig could not analyse, so what it runs is unknown: it may delete files or git's own files (.git) that undo does not hold"
)

// firstLine is s up to its first newline, with "…" when more follows.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// hidesCommand reports whether c's own text hides the command it runs:
// a command name known only at run time, a script string known only at
// run time (eval "$x", bash -c "$x", trap "$x" EXIT), a shell reading
// its script from stdin. (A script file or a Makefile is the
// repository's program, as python3 -c is: not read here.)
//
// So do the options that run a command line of the caller's choosing
// (git rebase -x, git bisect run, git submodule foreach, tar
// --to-command …) and git -c, which can make an alias of one
// (`git -c alias.x='!rm -rf src' x`: red team, 2026-12-03): the line
// they run is another shell's, which this analysis does not read.
func hidesCommand(c Command) bool {
	return slices.ContainsFunc(c.Risky, func(r string) bool {
		return r == riskDynName || r == riskDynScript || r == riskStdin || r == riskAlias || r == riskAliasExpansion ||
			r == riskGitConfig || strings.HasPrefix(r, execOptionPrefix) || strings.HasPrefix(r, riskCommandVar)
	})
}

// deletes reports whether c is a command whose purpose is deleting files:
// rm, rmdir, unlink, shred, find … -delete.
func deletes(c Command) bool {
	switch denyName(c) {
	case "rm", "rmdir", "unlink", "shred":
		return true
	case "find":
		return slices.Contains(c.Words, "-delete")
	}
	return false
}

// movesAway reports whether c deletes the files it names on its way to
// something else: a compressor replacing a file by its archive (gzip,
// xz … without -k or -c), tar --remove-files, zip -m, rsync
// --remove-source-files or --delete, git rm (red team, 2026-12-03:
// `gzip .git/logs/HEAD` and `tar --remove-files … .git/refs/heads/x` lost
// a branch's commits in auto mode). Where its operands are is not placed:
// it asks as a deletion, wherever they are.
func movesAway(c Command) bool {
	switch name := denyName(c); name {
	case "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "lzma", "unlzma", "lzip", "compress", "uncompress":
		return !hasShort(c, "kctl") && !hasLong(c, "keep", "stdout", "to-stdout", "test", "list")
	case "zstd", "unzstd", "lz4":
		return hasLong(c, "rm")
	case "tar":
		return hasLong(c, "remove-files")
	case "zip":
		return hasShort(c, "m") || hasLong(c, "move")
	case "rsync":
		// --del and every --delete-…, not --delay-updates.
		return hasLong(c, "remove-source-files") || slices.ContainsFunc(c.Words[1:], func(w string) bool { return w == "--del" || strings.HasPrefix(w, "--delete") })
	case "git":
		return isGitSub(c, "rm") && !hasLong(c, "cached")
	}
	return false
}

// isGitSub reports whether c is git running the subcommand sub.
func isGitSub(c Command, sub string) bool {
	_, ok := isGit(c, denyName, sub)
	return ok
}

// inGitDir reports whether p lies in a .git directory inside workspace.
func inGitDir(p, workspace string) bool {
	rel, err := filepath.Rel(workspace, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return false
	}
	return slices.Contains(strings.Split(filepath.ToSlash(rel), "/"), ".git")
}

// mayNameGit reports whether a path written as text may lead into a git
// directory once bash expands it: a component that is .git, or a brace
// expansion or a glob that gives it. Bash matches a name's leading dot
// only with a pattern that starts with one, unless dotglob (or
// GLOBIGNORE) is set. A pattern this cannot read (a character class, an
// extended glob) is taken to match, and so is a brace expression with
// more alternatives than it expands.
func mayNameGit(text string, dotglob bool) bool {
	alts, whole := braceExpand(text, 64)
	if !whole {
		return strings.Contains(text, "{")
	}
	for _, alt := range alts {
		for _, comp := range strings.Split(alt, "/") {
			if comp == ".git" {
				return true
			}
			if !strings.ContainsAny(comp, "*?[(") || !dotglob && !strings.HasPrefix(comp, ".") {
				continue
			}
			if strings.Contains(comp, "[:") || strings.Contains(comp, "(") {
				return true // [[:alpha:]], @(…): beyond path.Match
			}
			// Bash negates a class with ! as well as ^; path.Match with
			// ^ only (red team, 2026-12-03: .gi[!x] was read as ! or x).
			pat := strings.ReplaceAll(comp, "[!", "[^")
			if ok, err := path.Match(pat, ".git"); ok || err != nil {
				return true
			}
		}
	}
	return false
}

// braceExpand expands bash's brace expressions in s, nested and repeated
// ({a,{b,c}}x{1,2}), into at most limit words; a sequence ({a..z}) is
// left as a * pattern, which matches what it would give. whole is false
// when there were more.
func braceExpand(s string, limit int) (out []string, whole bool) {
	open := strings.IndexByte(s, '{')
	if open < 0 {
		return []string{s}, true
	}
	depth, end := 0, -1
	var commas []int
	for i := open; i < len(s) && end < 0; i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				end = i
			}
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		}
	}
	if end < 0 {
		return []string{s}, true // unmatched: bash leaves it as it is
	}
	var alts []string
	switch inner := s[open+1 : end]; {
	case len(commas) > 0:
		prev := open + 1
		for _, c := range append(commas, end) {
			alts = append(alts, s[prev:c])
			prev = c + 1
		}
	case strings.Contains(inner, ".."):
		alts = []string{"*"}
	default:
		// {x} is no expansion: the braces stay; what follows may hold one.
		rest, ok := braceExpand(s[end+1:], limit)
		for i := range rest {
			rest[i] = s[:end+1] + rest[i]
		}
		return rest, ok
	}
	for _, a := range alts {
		more, ok := braceExpand(s[:open]+a+s[end+1:], limit-len(out))
		out = append(out, more...)
		if !ok || len(out) > limit {
			return out, false
		}
	}
	return out, true
}

// deletesGit reports whether c is a git command that deletes what git
// cannot bring back, wherever it runs: git clean -f (untracked files),
// and history the undo store does not hold (.git is not in it): git
// reflog expire and delete, git prune, git gc --prune (or any git gc
// with -c: gc.pruneExpire=now), git stash drop and clear, git branch -D,
// git tag -d, git update-ref -d.
func deletesGit(c Command) bool {
	i, ok := isGit(c, denyName, strings.Fields(gitDeleting)...)
	if !ok {
		return false
	}
	configured := slices.ContainsFunc(c.Words[1:i], func(w string) bool {
		return w == "-c" || strings.HasPrefix(w, "--config-env")
	})
	rest := Command{Words: append([]string{"git"}, c.Words[i+1:]...)}
	sub := ""
	if len(rest.Words) > 1 {
		sub = rest.Words[1]
	}
	switch c.Words[i] {
	case "clean":
		return hasShort(rest, "f") || hasLong(rest, "force")
	case "reflog":
		return sub == "expire" || sub == "delete" || sub == "drop"
	case "prune":
		return true
	case "repack":
		// -a -d packs only what is reachable and deletes the old packs:
		// unreachable objects in them are gone (-A and --cruft keep them).
		return hasShort(rest, "a") && hasShort(rest, "d") && !hasShort(rest, "A") && !hasLong(rest, "cruft", "keep-unreachable")
	case "gc":
		return configured || hasLong(rest, "prune")
	case "stash":
		return sub == "drop" || sub == "clear"
	case "branch":
		// -D deletes; -M and -C (or -m, -c with --force) replace the
		// branch they rename or copy onto, reflog and all.
		force := hasShort(rest, "f") || hasLong(rest, "force")
		// -d deletes a merged branch's reflog with it.
		return hasShort(rest, "dD") || hasLong(rest, "delete") || hasShort(rest, "M") || hasShort(rest, "C") ||
			force && (hasShort(rest, "m") || hasShort(rest, "c") || hasLong(rest, "move", "copy"))
	case "tag":
		// -f replaces a tag, which keeps no reflog.
		return hasShort(rest, "df") || hasLong(rest, "delete", "force")
	case "update-ref":
		// --stdin reads its updates, deletions among them, from stdin;
		// a new value of all zeros deletes the ref.
		return hasShort(rest, "d") || hasLong(rest, "stdin") || slices.ContainsFunc(rest.Words[1:], func(w string) bool {
			return len(w) >= 40 && strings.Trim(w, "0") == ""
		})
	case "send-pack":
		return true // a push by other means: it deletes refs (:refs/heads/x) and rewrites them (+)
	case "symbolic-ref":
		return hasShort(rest, "d") || hasLong(rest, "delete")
	case "fetch", "pull":
		// --prune with a refspec into the branches or tags deletes the
		// local ones the remote does not have.
		return (hasShort(rest, "p") || hasShort(rest, "P") || hasLong(rest, "prune", "prune-tags")) &&
			slices.ContainsFunc(rest.Words[1:], func(w string) bool {
				_, dst, ok := strings.Cut(w, ":")
				return ok && (strings.HasPrefix(dst, "refs/heads/") || strings.HasPrefix(dst, "refs/tags/") || !strings.HasPrefix(dst, "refs/"))
			})
	}
	return false
}

// ProtectPrograms makes paths (the programs configured MCP servers run
// from the workspace) protected for the rest of the policy's life: no
// call may write them, so none can change what a server runs with its
// own environment and grants at the next start.
func (p *Policy) ProtectPrograms(paths []string) { p.repos.Protect(paths...) }

// Repos is the policy's memory of the workspace's repositories, which
// also holds the paths ProtectPrograms added: a jail composed outside
// Compile (an MCP server's, internal/mcp) protects through it what every
// call's jail protects.
func (p *Policy) Repos() *jail.RepoCache { return p.repos }

// ProtectedRuleWarnings reports the allow rules that try to grant writing a
// protected path or brig's own files. They never take effect (protection
// wins); `brig doctor` and `brig policy check` say so.
func (p *Policy) ProtectedRuleWarnings() []string {
	var writes []Rule
	for _, r := range p.rules().Allow {
		if r.Scope == ScopeWrite {
			writes = append(writes, r)
		}
	}
	if len(writes) == 0 {
		return nil // without waiting for the start-up search (the TUI's first frame asks)
	}
	var out []string
	targets := append(slices.Clone(p.Places.protectedList()), p.Places.BrigDirs...)
	for _, r := range writes {
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
		p.mu.Lock()
		p.saved = append(p.saved, rules...)
		p.mu.Unlock()
	}
	p.AllowForSession(rules...)
	return nil
}

// SavedRules are the session's answers that were also saved to the
// workspace's rules file (Files.User), which the loaded layers predate.
func (p *Policy) SavedRules() []Rule {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.saved)
}

// userConfig is the user's global config file as the user writes it (~
// for the home directory), for hints; "" when unknown.
func (p *Policy) userConfig() string {
	f := p.Loaded.Files.Global
	if rel, ok := strings.CutPrefix(f, p.Machine.Home+"/"); ok && p.Machine.Home != "" {
		return "~/" + rel
	}
	return f
}

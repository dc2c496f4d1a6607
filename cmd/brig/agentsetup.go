package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"brig/agent"
	"brig/agent/provider"
	"brig/agent/provider/anthropic"
	"brig/agent/provider/connect"
	"brig/agent/provider/openai"
	"brig/internal/credentials"
	"brig/internal/instructions"
	"brig/internal/mcp"
	"brig/internal/session"
	"brig/internal/termsafe"
	"brig/policy"
	"brig/supervisor"
	"brig/tools"
)

// agentRun is everything a front end (one-shot or the TUI) drives: the
// agent and what it stands on.
type agentRun struct {
	Agent        *agent.Agent
	Executor     *agent.Executor
	Policy       *policy.Policy
	Workspace    string
	Client       *connect.Client
	Model        string
	Session      *session.Session
	Supervisor   *supervisor.Supervisor
	Instructions *instructions.Set
	// MCP is the session's MCP servers (nil when none is configured).
	MCP *mcp.Manager
	// Resumed is the saved state when a session was resumed (nil for a new
	// one): a front end shows its display history.
	Resumed *session.State
	// Tips are lines for the user at the start (not for the model): what
	// would make this workspace's calls faster.
	Tips []string
	// ModeNote says, for a resumed session, which mode it goes on in when
	// that is not the mode it was saved in or the one the run started in
	// (resumedModeNote); "" otherwise.
	ModeNote string
	// ModeFromConfig says the run started in the mode [agent] mode of the
	// user's config names (no --mode, /mode or resumed session chose it).
	ModeFromConfig bool
	// Undoer undoes this session's calls (/undo).
	Undoer *agent.Undoer
	// Warm gets the first calls ready: the carried jail programs written,
	// the workspace's first snapshot, the pool of jail children, the
	// provider's connection. setupAgent has done it unless the run is
	// interactive; the TUI calls it once its banner is up. Calls work
	// without it, only their start is slower.
	Warm func()
	// Connect opens the provider's connection ahead of a request, in the
	// background (the TUI calls it as the user starts typing a prompt;
	// the client does nothing while its connection is fresh).
	Connect func()
	closers []func()
	// discard reports whether Close removes the (new) session; nil for a
	// resumed one.
	discard func() bool
}

// Kept reports whether the session outlives Close (see setupAgent).
func (r *agentRun) Kept() bool { return r.discard == nil || !r.discard() }

// Close stops the MCP servers and releases the session file and the
// supervisor's warm child.
func (r *agentRun) Close() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
}

// setupAgent resolves the provider, starts the supervisor, loads the policy
// and the instructions, opens or resumes the session, and builds the agent.
// Its events go to emit (after the session recorder has seen them).
func setupAgent(ctx context.Context, o *agentOptions, approver agent.Approver, emit func(agent.Event)) (_ *agentRun, err error) {
	run := &agentRun{}
	defer func() {
		if err != nil {
			run.Close() // what was started before the failure
		}
	}()
	if o.Executable == "" && !o.Interactive {
		go carriedChild() // written while the session starts; the first spawn waits for it
	}
	dirs := dirsFor(o.procEnv)
	if err := makeOwnDirs(dirs); err != nil {
		return nil, err
	}
	creds, err := credentials.Load(o.Env, dirs)
	if err != nil {
		return nil, err
	}
	wc, err := loadWorkspaceConfig(o.procEnv, o.Workspace)
	if err != nil {
		return nil, err
	}
	modeFromConfig := false
	if m := wc.Loaded.Agent.Mode; m != "" && !o.ModeSet && !o.ModeCurrent {
		o.Mode = string(m) // the user's own default: the mode this run starts in
		modeFromConfig = true
	}
	model, fromConfig := o.Model, false
	if model == "" {
		model, fromConfig = wc.Loaded.Agent.Model, wc.Loaded.Agent.Model != ""
	}
	if model == "" && o.Provider == "" {
		// A resumed session goes on with its own model and provider,
		// not the default of whichever key is set now.
		if m, p := resumedModel(ctx, o, dirs.State, wc.Workspace); m != "" {
			model, o.Provider = m, string(p)
		}
	}
	if model == "" {
		if model, err = defaultModel(creds, o.BaseURL); err != nil {
			return nil, err
		}
		if model == "" {
			return nil, credentials.None(dirs, o.Env)
		}
	}
	wire, err := wireOf(o.Provider)
	if err != nil {
		return nil, err
	}
	client, err := connect.New(connect.Config{Model: model, BaseURL: o.BaseURL, Wire: wire, Env: o.Env, Credentials: creds})
	if err != nil {
		if fromConfig {
			// Not typed: say where it was set, and that --model overrides it.
			return nil, fmt.Errorf("[agent] model = %q in %s (--model overrides it): %w", model, configFilesOf(wc.Loaded), err)
		}
		return nil, err
	}
	connectAhead := func() { go openConnection(ctx, client) }
	if !o.Interactive {
		connectAhead() // the prompt is known: its request follows the set-up
	}
	sup, err := supervisor.New(ctx, supervisor.Options{Executable: o.Executable, ExecutableFunc: carriedPath, Programs: carriedPrograms, Prewarm: true, QuarantineDir: dirs.State + "/quarantine", PendingDir: dirs.State + "/pending",
		NeverReach: providerEndpoint(client), WarmAnswersProbe: !o.Interactive})
	if err != nil {
		return nil, err
	}
	run.closers = append(run.closers, sup.Close)
	if !o.Interactive {
		// brig -p's first child starts now, beside the session's set-up
		// (see the TUI's below): it is an init alone, started on the
		// other core, and with an instant model the first call found it
		// still starting when it started with the first request. Its
		// start answers the supervisor's probe (WarmAnswersProbe).
		sup.Warm()
	}
	// The session is opened, the policy built and the first request sent
	// while the supervisor's probe runs (the first call's decision waits
	// for its answer).
	sess, st, err := openSession(ctx, o, dirs.State, wc.Workspace, client)
	if err != nil {
		return nil, err
	}
	rec := &agent.Recorder{Session: sess, Model: model}
	if st == nil {
		// A new session that never got an answer is not kept (it would
		// be what --continue picks): one never used at all, and in
		// one-shot mode one whose first request failed (the prompt is
		// still in the user's shell).
		run.discard = func() bool {
			return rec.Saved(provider.Assistant) == 0 && (rec.Saved(provider.User) == 0 || !o.Interactive)
		}
		run.closers = append(run.closers, func() {
			if run.discard() {
				_ = session.NewStore(dirs.State).Remove(context.WithoutCancel(ctx), sess.ID())
			}
		})
	}
	run.closers = append(run.closers, func() { sess.Close() })
	mode, _ := policy.ParseMode(o.Mode)
	wp, err := wc.policy(o.procEnv, mode, sup.Namespaces, true)
	if err != nil {
		return nil, err
	}
	if err := addDirs(wp.Policy, o.AddDirs, o.procEnv); err != nil {
		return nil, err
	}
	recoverSweeps(sup, wp.Workspace, dirs.State, o.procEnv.Stderr)
	if tip := goLayerTipOnce(wp.Workspace, goLayerDir(dirs), dirs.State, o.Env); tip != "" {
		run.Tips = append(run.Tips, tip)
	}
	if err := wp.Policy.AllowHosts(o.AllowHosts...); err != nil {
		return nil, err
	}
	instr, err := loadInstructions(o.procEnv, wp) // trust.go: framed as the user's only as brig trust pinned them
	if err != nil {
		return nil, err
	}
	if st != nil && !o.ModeSet {
		how := "--mode"
		if o.Interactive {
			how = "/mode"
		}
		started := mode
		mode = resumedMode(st.Mode, started)
		run.ModeNote = resumedModeNote(st.Mode, started, mode, how)
		if mode != wp.Policy.Mode() {
			if err := wp.Policy.SetMode(mode); err != nil {
				return nil, err
			}
		}
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	facts := agent.PromptFacts{
		Mode: mode, Workspace: wp.Workspace, Network: wp.Policy.Sandbox.Network,
		Instructions: instr.Render(), Date: now().Format("2006-01-02"),
	}
	sys := agent.SystemPrompt(facts)
	var history []provider.Message
	if st != nil {
		history = st.Messages
		rec.Stage(sessionChanges(st, client, mode, sys)...)
	} else {
		rec.Stage(session.SystemRecord(sys))
	}
	store, audit, err := openUndo(dirs.State, wp.Workspace)
	if err != nil {
		return nil, err
	}
	if err := store.Announce(); err != nil {
		// Only the note on calls that another session in this workspace
		// may have written beside depends on it.
		slog.Warn("could not mark the workspace as open for this session", "err", err)
	}
	// The workspace is snapshotted in the background while the session
	// starts (not in plan mode, where nothing is written), so the first
	// call's checkpoint is quick; in the TUI once its banner is up (Warm).
	warmCtx, stopWarm := context.WithCancel(context.Background())
	warmed := make(chan struct{})
	var warmOnce sync.Once
	warmStore := func() {
		warmOnce.Do(func() {
			go func() {
				defer close(warmed)
				if mode == policy.ModePlan {
					return
				}
				if err := store.Warm(warmCtx, []string{wp.Workspace}); err != nil && warmCtx.Err() == nil {
					slog.Warn("could not snapshot the workspace ahead of the first call", "err", err)
				}
			}()
		})
	}
	run.closers = append(run.closers, func() {
		stopWarm()
		warmOnce.Do(func() { close(warmed) }) // never started
		<-warmed
		store.Close()
		audit.Close()
	})
	switch {
	case st != nil && st.Mode != mode:
		auditMode(ctx, audit, sess.ID(), wp.Workspace, st.Mode, mode)
	case st == nil && o.ModeFrom != "" && o.ModeFrom != mode:
		auditMode(ctx, audit, sess.ID(), wp.Workspace, o.ModeFrom, mode)
	}
	reg, subReg := tools.NewRegistry(), tools.NewRegistry()
	mcpServers, err := startMCP(ctx, o.procEnv, wp, sup)
	if err != nil {
		return nil, err
	}
	if mcpServers != nil {
		run.closers = append(run.closers, mcpServers.Close) // before the supervisor's
		reg.AddSource(mcpServers)
		subReg.AddSource(mcpServers) // in plan mode: only read-only servers' tools
	}
	reg.Add(tools.TaskDefinition())
	ex := &agent.Executor{Registry: reg, Policy: wp.Policy, Runner: sup, Approver: approver, Checkpoints: store, Audit: audit, Session: sess.ID()}
	run.closers = append(run.closers, func() { // before the audit log closes
		if err := ex.FlushAudit(context.WithoutCancel(ctx)); err != nil {
			slog.Error("the audit records of calls that could not be written are lost", "err", err)
		}
	})
	run.closers = append(run.closers, func() { rec.Flush(context.Background()) }) // runs before the session closes
	emitAll := func(ev agent.Event) {
		rec.Event(ev)
		if emit != nil {
			emit(ev)
		}
	}
	a := agent.New(agent.Config{
		Client: client, Model: client.Model, System: sys, Executor: ex,
		MaxIterations: o.MaxIterations, MaxToolCalls: maxToolCalls(o.MaxToolCalls, wc.Loaded.Agent.MaxToolCalls), Effort: provider.Effort(o.Effort), WebSearch: o.WebSearch || wc.Loaded.Agent.WebSearch,
		CacheKey: sess.ID(), Persist: rec.Persist, Compacted: rec.Compacted, Inbox: o.Inbox, Emit: emitAll,
	}, history)
	if ex.Delegate, err = subagents(wp, facts, client, subReg, sup, wc.Loaded.Agent, o, sess.ID(), emitAll, a, ex); err != nil {
		return nil, err
	}
	if st != nil {
		a.Restore(st.Usage, st.Cost, st.Last)
		for _, n := range st.Notes {
			a.Note(n) // undone while the session was closed: the model hears it first
		}
	}
	// brig -p's undo snapshot and toolchain cache are made now, while the
	// first request goes out and the model answers; its first jail child
	// was started with the supervisor. With a worker beside every init,
	// that start took the cores from the session's start (the first
	// request 2–3 ms later, for a first call 3 ms sooner with an instant
	// model); an init alone, it does not (eight rounds of five sessions
	// alternating: the first request 13.6 ms either way, the first call
	// 12.5 → 11.0 ms). The TUI's first call waits for the user and the
	// model: it starts its children, with the carried programs and the
	// snapshot, once its banner is up (started beside its first frame
	// they made that frame 5 ms later).
	warm := func() {
		connectAhead()
		if o.Executable == "" {
			go carriedChild()
		}
		warmStore()
		sup.Warm()
		sup.PrepareWorkspace(wp.Workspace)
		go warmBashCache(wp.Policy, sup)
	}
	if !o.Interactive {
		warmStore()
		sup.PrepareWorkspace(wp.Workspace)
		go warmBashCache(wp.Policy, sup)
	}
	*run = agentRun{
		Agent: a, Executor: ex, Policy: wp.Policy, Workspace: wp.Workspace, Client: client, Model: model,
		Session: sess, Supervisor: sup, Instructions: instr, MCP: mcpServers, Resumed: st, Tips: run.Tips, ModeNote: run.ModeNote, ModeFromConfig: modeFromConfig, Warm: warm, Connect: connectAhead, closers: run.closers, discard: run.discard,
		Undoer: &agent.Undoer{Store: store, Audit: audit, Session: sess, SessionID: sess.ID(), Workspace: wp.Workspace, By: "/undo"},
	}
	return run, nil
}

// recoverSweeps takes out what a brig killed during a call (kill -9, a
// crash) left in workspace's protected paths, from the record that call
// left (supervisor.RecoverSweeps), before anything runs, and says so.
func recoverSweeps(sup *supervisor.Supervisor, workspace, stateDir string, stderr io.Writer) {
	undone, err := sup.RecoverSweeps(workspace)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "brig: warning: %v\n", err)
	case len(undone) > 0:
		fmt.Fprintf(stderr, "brig: warning: a brig that was stopped during a call in this workspace left protected paths changed; brig undid it now: %s (what a call left is kept under %s)\n",
			termsafe.Line(strings.Join(undone, ", ")), filepath.Join(stateDir, "quarantine"))
	}
}

// resumedModel is the model and provider of the session --resume or
// --continue names ("" when neither is given or it cannot be read: opening
// the session says why).
func resumedModel(ctx context.Context, o *agentOptions, stateDir, ws string) (string, provider.Name) {
	store := session.NewStore(stateDir)
	switch {
	case o.Continue:
		if latest, err := store.Latest(ctx, ws); err == nil {
			return latest.Model, latest.Provider
		}
	case o.Resume != "" && session.ValidateID(o.Resume) == nil:
		if st, err := store.Load(ctx, o.Resume); err == nil {
			return st.Model, st.Provider
		}
	}
	return "", ""
}

// openConnection opens the provider's connection ahead of the request
// (provider.Connector). A failure is left to the request, which opens its
// own and says what went wrong if that fails too.
func openConnection(ctx context.Context, c *connect.Client) {
	if err := c.Connect(ctx); err != nil {
		slog.Debug("could not open the provider's connection ahead of the request", "err", err)
	}
}

// warmBashCache prepares the toolchain cache of the session's bash calls
// ahead of the first one, which otherwise made it on its clock (1–2.5 ms:
// a dozen directories and files), and compiles a bash grant once, which
// fills what the first call's compile would (the workspace's
// repositories). Not in plan mode, where nothing is written before a call
// is approved (like the workspace's first snapshot). A failure only leaves
// both to the first call.
func warmBashCache(p *policy.Policy, sup *supervisor.Supervisor) {
	if p.Mode() == policy.ModePlan {
		return
	}
	c, err := p.BashCache()
	if err != nil || c == nil {
		return // the first call says why, if it is a reason to refuse it
	}
	if err := sup.PrepareCache(c); err != nil {
		slog.Debug("could not prepare the toolchain cache ahead of the first call", "err", err)
	}
}

// addDirs adds the --add-dir directories (relative to the working
// directory) to the run's jail profile.
func addDirs(p *policy.Policy, values []string, pe procEnv) error {
	var dirs []policy.ExtraDir
	for _, v := range values {
		d, err := policy.ParseAddDir(v, pe.Cwd, canonicalHome(pe.Home))
		if err != nil {
			return err
		}
		dirs = append(dirs, d)
	}
	return p.AddDirs(dirs...)
}

// maxToolCalls is the flag's value, else the config's, else the agent's
// default.
func maxToolCalls(flag, config int) int {
	if flag > 0 {
		return flag
	}
	return config
}

// subagents builds the runner of the task tool: read-only subagents with
// a plan-mode copy of the policy and the registry without task.
func subagents(wp *workspacePolicy, facts agent.PromptFacts, client *connect.Client, reg *tools.Registry, sup *supervisor.Supervisor, cfg policy.Agent, o *agentOptions, cacheKey string, emit func(agent.Event), parent *agent.Agent, main *agent.Executor) (func(context.Context, string, json.RawMessage) tools.Result, error) {
	plan, err := wp.Policy.Derive(policy.ModePlan)
	if err != nil {
		return nil, fmt.Errorf("the subagents' policy: %w", err)
	}
	subs, err := agent.NewSubagents(agent.SubagentConfig{
		Client: client, Model: client.Model, Facts: facts, Registry: reg, Policy: plan, Runner: sup,
		Parallel: cfg.Subagents, Effort: provider.Effort(o.Effort), CacheKey: cacheKey, Emit: emit, Parent: parent,
		Audit: main.Audit, Session: main.Session, Held: main,
	})
	if err != nil {
		return nil, err
	}
	return subs.Run, nil
}

// providerEndpoint is the model provider's host:port, which no call may
// reach through the egress proxy: brig talks to it with the user's key.
func providerEndpoint(c *connect.Client) []string {
	base := c.BaseURL
	if base == "" {
		base = openai.DefaultBaseURL
		if c.Model.Provider == provider.Anthropic {
			base = anthropic.DefaultBaseURL
		}
	}
	u, err := url.Parse(base)
	if err != nil || u.Hostname() == "" {
		return nil
	}
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return []string{net.JoinHostPort(u.Hostname(), port)}
}

// configFilesOf names the config files that count in full (where an
// [agent] setting can come from): "a or b".
func configFilesOf(l policy.Loaded) string {
	if files := l.InForce(); len(files) > 0 {
		return strings.Join(files, " or ")
	}
	return "your config"
}

// resumedMode is the mode a session resumed without --mode goes on in: its
// own, unless that is wider than the mode this run started in. A mode
// widens only when the user picks it in this run: `brig -c -p "go on"`
// after an edit-mode session ran a write unasked in ask mode, the mode
// --help promised (new user, 2026-12-03). A saved mode brig does not know
// counts as wider.
func resumedMode(saved, started policy.Mode) policy.Mode {
	if modeRank(saved) <= modeRank(started) {
		return saved
	}
	return started
}

// modeRank is m's place among the modes from the narrowest, plan; one past
// the widest for a mode brig does not know.
func modeRank(m policy.Mode) int {
	i := slices.Index(policy.Modes(), m)
	if i < 0 {
		return len(policy.Modes())
	}
	return i
}

// resumedModeNote says which mode a resumed session goes on in (now) when
// that is not both the mode it was saved in and the one this run started
// in; how names the way to pick a mode ("--mode", "/mode").
func resumedModeNote(saved, started, now policy.Mode, how string) string {
	// The TUI's mode may be one /mode chose since the start (new user:
	// "plan, the mode this run started in" when it started in edit).
	current := "the mode this run started in"
	if how == "/mode" {
		current = "the mode in use"
	}
	switch {
	case saved == started:
		return ""
	case saved != now:
		return fmt.Sprintf("the session ran in %s mode; it goes on in %s, %s (%s %s to go on as before)", saved, now, current, how, saved)
	case how == "/mode":
		return fmt.Sprintf("the session goes on in %s mode, its own (the mode in use was %s; %s to change)", now, started, how)
	default:
		return fmt.Sprintf("the session goes on in %s mode, its own (this run started in %s; %s to change)", now, started, how)
	}
}

package main

import (
	"context"
	"log/slog"
	"time"

	"brig/agent"
	"brig/agent/provider"
	"brig/agent/provider/connect"
	"brig/internal/credentials"
	"brig/internal/instructions"
	"brig/internal/mcp"
	"brig/internal/session"
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
	// Undoer undoes this session's calls (/undo).
	Undoer  *agent.Undoer
	closers []func()
}

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
	dirs := dirsFor(o.procEnv)
	creds, err := credentials.Load(o.Env, dirs)
	if err != nil {
		return nil, err
	}
	wc, err := loadWorkspaceConfig(o.procEnv, o.Workspace)
	if err != nil {
		return nil, err
	}
	model := o.Model
	if model == "" {
		model = wc.Loaded.Agent.Model
	}
	if model == "" {
		if model, err = defaultModel(creds, o.BaseURL); err != nil {
			return nil, err
		}
		if model == "" {
			return nil, credentials.None(dirs)
		}
	}
	client, err := connect.New(connect.Config{Model: model, BaseURL: o.BaseURL, Env: o.Env, Credentials: creds})
	if err != nil {
		return nil, err
	}
	sup, err := supervisor.New(ctx, supervisor.Options{Executable: o.Executable, Prewarm: true, QuarantineDir: dirs.State + "/quarantine"})
	if err != nil {
		return nil, err
	}
	run.closers = append(run.closers, sup.Close)
	mode, _ := policy.ParseMode(o.Mode)
	wp, err := wc.policy(o.procEnv, mode, sup.Namespaces())
	if err != nil {
		return nil, err
	}
	trusted := len(wp.Policy.Layers) == 3 && wp.Policy.Layers[2].Exists && wp.Policy.Layers[2].Trusted
	instr, err := instructions.Load(wp.Workspace, trusted)
	if err != nil {
		return nil, err
	}
	sess, st, err := openSession(ctx, o, dirs.State, wp.Workspace, client)
	if err != nil {
		return nil, err
	}
	run.closers = append(run.closers, func() { sess.Close() })
	if st != nil && !o.ModeSet {
		mode = st.Mode
		if err := wp.Policy.SetMode(mode); err != nil {
			return nil, err
		}
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	sys := agent.SystemPrompt(agent.PromptFacts{
		Mode: mode, Workspace: wp.Workspace, Network: wp.Policy.Sandbox.Network,
		Instructions: instr.Render(), Date: now().Format("2006-01-02"),
	})
	var history []provider.Message
	if st != nil {
		history = st.Messages
		err = recordChanges(ctx, sess, st, client, mode, sys)
	} else {
		err = sess.Append(ctx, session.SystemRecord(sys))
	}
	if err != nil {
		return nil, err
	}
	store, audit, err := openUndo(dirs.State, wp.Workspace)
	if err != nil {
		return nil, err
	}
	// The workspace is snapshotted in the background while the session
	// starts (not in plan mode, where nothing is written), so the first
	// call's checkpoint is quick.
	warmCtx, stopWarm := context.WithCancel(context.Background())
	warmed := make(chan struct{})
	go func() {
		defer close(warmed)
		if mode == policy.ModePlan {
			return
		}
		if err := store.Warm(warmCtx, []string{wp.Workspace}); err != nil && warmCtx.Err() == nil {
			slog.Warn("could not snapshot the workspace ahead of the first call", "err", err)
		}
	}()
	run.closers = append(run.closers, func() {
		stopWarm()
		<-warmed
		store.Close()
		audit.Close()
	})
	if st != nil && st.Mode != mode {
		auditMode(ctx, audit, sess.ID(), wp.Workspace, st.Mode, mode)
	}
	reg := tools.NewRegistry()
	mcpServers, err := startMCP(ctx, o.procEnv, wp, sup)
	if err != nil {
		return nil, err
	}
	if mcpServers != nil {
		run.closers = append(run.closers, mcpServers.Close) // before the supervisor's
		reg.AddSource(mcpServers)
	}
	ex := &agent.Executor{Registry: reg, Policy: wp.Policy, Runner: sup, Approver: approver, Checkpoints: store, Audit: audit, Session: sess.ID()}
	rec := &agent.Recorder{Session: sess, Model: model}
	run.closers = append(run.closers, func() { rec.Flush(context.Background()) }) // runs before the session closes
	a := agent.New(agent.Config{
		Client: client, Model: client.Model, System: sys, Executor: ex,
		MaxIterations: o.MaxIterations, Effort: provider.Effort(o.Effort), WebSearch: o.WebSearch || wc.Loaded.Agent.WebSearch,
		CacheKey: sess.ID(), Persist: rec.Persist, Compacted: rec.Compacted, Inbox: o.Inbox,
		Emit: func(ev agent.Event) {
			rec.Event(ev)
			if emit != nil {
				emit(ev)
			}
		},
	}, history)
	if st != nil {
		a.Restore(st.Usage, st.Cost, st.Last)
		for _, n := range st.Notes {
			a.Note(n) // undone while the session was closed: the model hears it first
		}
	}
	*run = agentRun{
		Agent: a, Executor: ex, Policy: wp.Policy, Workspace: wp.Workspace, Client: client, Model: model,
		Session: sess, Supervisor: sup, Instructions: instr, MCP: mcpServers, Resumed: st, closers: run.closers,
		Undoer: &agent.Undoer{Store: store, Audit: audit, Session: sess, SessionID: sess.ID(), Workspace: wp.Workspace, By: "/undo"},
	}
	return run, nil
}

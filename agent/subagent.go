package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"brig/agent/provider"
	"brig/internal/auditlog"
	"brig/policy"
	"brig/tools"
)

// Defaults of a session's subagents.
const (
	DefaultSubagents          = 3       // running at once
	DefaultSubagentIterations = 40      // tool iterations of one subagent
	DefaultSubagentTokens     = 600_000 // tokens (input and output, every request) of one subagent
)

// SubagentConfig is what a session's subagents share.
type SubagentConfig struct {
	Client provider.Client
	Model  provider.Model
	// Facts are the main agent's prompt facts; subagents run in plan mode.
	Facts PromptFacts
	// Registry is the subagents' tools: the native set (and read-only MCP
	// tools), without task, so a subagent cannot start subagents.
	Registry *tools.Registry
	// Policy decides the subagents' calls; it must be in plan mode (read
	// only: write tools refused, bash in a read-only jail).
	Policy *policy.Policy
	Runner Runner
	// Parallel bounds the subagents running at once (default 3); the
	// others wait for a slot.
	Parallel int
	// MaxIterations and TokenBudget bound one subagent (defaults above).
	MaxIterations int
	TokenBudget   int
	MaxTokens     int
	Effort        provider.Effort
	CacheKey      string
	// Emit receives the subagents' events, each with Parent set to the
	// task call that started it (the session's event sink).
	Emit func(Event)
	// Parent is the main agent: what the subagents spend joins its totals.
	Parent *Agent
	// Audit, with Session, gets one record per subagent call, as the main
	// agent's calls do; Held is the main agent's executor, whose calls
	// and the subagents' hold each other while a record is unwritten.
	Audit   *auditlog.Log
	Session string
	Held    *Executor
	Logger  *slog.Logger
}

// Subagents runs the task calls of one session. It is the main Executor's
// Delegate.
type Subagents struct {
	cfg   SubagentConfig
	slots chan struct{}
}

// NewSubagents checks the configuration: the policy must be in plan mode
// and the registry must not offer task.
func NewSubagents(cfg SubagentConfig) (*Subagents, error) {
	if cfg.Policy == nil || cfg.Policy.Mode() != policy.ModePlan {
		return nil, errors.New("subagents need a policy in plan mode")
	}
	if _, ok := cfg.Registry.Lookup(string(tools.Task)); ok {
		return nil, errors.New("the subagents' registry must not hold the task tool")
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = DefaultSubagents
	}
	if cfg.MaxIterations <= 0 {
		cfg.MaxIterations = DefaultSubagentIterations
	}
	if cfg.TokenBudget <= 0 {
		cfg.TokenBudget = DefaultSubagentTokens
	}
	cfg.Facts.Mode = policy.ModePlan
	return &Subagents{cfg: cfg, slots: make(chan struct{}, cfg.Parallel)}, nil
}

// subagentText tells a subagent what it is for.
func subagentText(kind tools.TaskKind) string {
	what := "Explore: find what the task asks for and explain it, with file:line references."
	if kind == tools.TaskReview {
		what = "Review: look for bugs, security problems and risky changes in what the task names; for each, give file:line, what is wrong and how sure you are."
	}
	return `
You are a read-only subagent started by the main agent for one task. You have your own context: you see only the task below, not the main conversation. You cannot write files, change anything, ask the user, or start subagents; calls that need approval are refused. Where a tool result tells you to ask or tell the user something, put it in your summary instead: the main agent reads it and decides what to ask.
` + what + `
Work efficiently (search before reading whole files). End with a concise, self-contained summary for the main agent: what you found, with paths and line numbers, and what you could not find out. The summary is all it will see of your work.
`
}

// Run is the Executor's Delegate: it runs one subagent to the end of its
// turn and returns its summary as the task call's result. ctx is the main
// turn's: Esc stops every subagent with it.
func (s *Subagents) Run(ctx context.Context, id string, raw json.RawMessage) tools.Result {
	args, err := tools.ParseTaskArgs(raw)
	if err != nil {
		return tools.Result{Text: "task: " + err.Error(), IsError: true}
	}
	emit := func(ev Event) {
		if s.cfg.Emit != nil {
			ev.Parent = id
			s.cfg.Emit(ev)
		}
	}
	select {
	case s.slots <- struct{}{}:
	default:
		emit(Event{Kind: EventNotice, Text: fmt.Sprintf("waiting: %d subagents are already running", cap(s.slots))})
		select {
		case s.slots <- struct{}{}:
		case <-ctx.Done():
			return tools.Result{Text: "not run: interrupted by " + StoppedBy(ctx) + " before the subagent started", IsError: true}
		}
	}
	defer func() { <-s.slots }()

	ex := &Executor{
		Registry: s.cfg.Registry, Policy: s.cfg.Policy, Runner: s.cfg.Runner, Logger: s.cfg.Logger,
		Audit: s.cfg.Audit, Session: s.cfg.Session, held: s.cfg.Held,
		Approver: ApproverFunc(func(context.Context, ApprovalRequest) (Approval, error) {
			return Approval{Answer: AnswerDeny, Message: "a subagent cannot ask the user; do without this call, or say in your summary what the main agent should ask for"}, nil
		}),
	}
	cacheKey := s.cfg.CacheKey
	if cacheKey != "" {
		cacheKey += "/" + id
	}
	sub := New(Config{
		Client: s.cfg.Client, Model: s.cfg.Model, System: SystemPrompt(s.cfg.Facts) + subagentText(args.Kind), Executor: ex,
		MaxIterations: s.cfg.MaxIterations, TokenBudget: s.cfg.TokenBudget, MaxTokens: s.cfg.MaxTokens,
		Effort: s.cfg.Effort, CacheKey: cacheKey, Emit: emit,
	}, nil)
	tr, err := sub.Run(ctx, []provider.Block{provider.Text(args.Prompt)})
	if s.cfg.Parent != nil {
		s.cfg.Parent.AddSpend(tr.Usage, tr.Cost)
	}
	stats := fmt.Sprintf("[subagent: %s, %s, %s]", counted(tr.Iterations, "request"), counted(tr.ToolCalls, "tool call"), counted(tr.Usage.Total(), "token"))
	summary := strings.TrimSpace(tr.Text)
	switch tr.Stop {
	case StopInterrupted:
		return tools.Result{Text: "interrupted by " + StoppedBy(ctx) + "; the subagent stopped " + stats, IsError: true}
	case StopFailed:
		return tools.Result{Text: fmt.Sprintf("the subagent failed: %v %s", err, stats), IsError: true}
	}
	if err != nil {
		return tools.Result{Text: fmt.Sprintf("the subagent failed: %v %s", err, stats), IsError: true}
	}
	if summary == "" {
		summary = "(the subagent ended without a summary)"
	}
	switch tr.Stop {
	case StopBound:
		summary = "The subagent reached its limit and was asked to sum up:\n\n" + summary
	case StopCut:
		summary += "\n\n(the subagent's answer was cut by the output limit)"
	case StopRefused:
		summary += "\n\n(the subagent's model refused)"
	}
	return tools.Result{Text: summary + "\n\n" + stats}
}

// AddSpend adds what another agent spent for this one (its subagents) to
// the session's totals.
func (a *Agent) AddSpend(u provider.Usage, cost float64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.usage, a.cost = a.usage.Add(u), a.cost+cost
}

// counted is "1 tool call", "2 tool calls".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

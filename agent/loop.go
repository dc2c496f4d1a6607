package agent

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"brig/agent/provider"
	"brig/supervisor"
	"brig/tools"
)

// DefaultMaxIterations bounds the tool iterations of one user turn.
const DefaultMaxIterations = 200

// DefaultMaxToolCalls bounds the tool calls run for one model answer; the
// calls beyond it are answered as not run.
const DefaultMaxToolCalls = 64

// maxParallel bounds how many read-only calls of one answer run at once.
const maxParallel = 8

// EventKind is the kind of an agent event.
type EventKind string

// The events a front end drains, in the order they happen.
const (
	EventText       EventKind = "text"        // Text: a delta of the answer
	EventThinking   EventKind = "thinking"    // Text: a delta of the model's reasoning
	EventServerTool EventKind = "server_tool" // Text: a provider-side tool ran (web search)
	EventToolStart  EventKind = "tool_start"  // Tool: a call is about to be decided and run
	EventToolOutput EventKind = "tool_output" // Tool.ID, Text: live output of a command
	EventToolEnd    EventKind = "tool_end"    // Tool: how it ended (Outcome set)
	EventUsage      EventKind = "usage"       // Usage, Cost: one response's tokens
	EventNotice     EventKind = "notice"      // Text: something the user should know (retry, cut, bound)
	EventMessage    EventKind = "message"     // Message: a complete message was added to history
)

// ToolEvent describes a tool call in an event.
type ToolEvent struct {
	ID      string          `json:"id"`
	Name    string          `json:"name"`
	Args    json.RawMessage `json:"args"`
	Outcome *Outcome        `json:"-"`
}

// Event is one thing that happened in a turn.
type Event struct {
	Kind    EventKind         `json:"kind"`
	Text    string            `json:"text,omitempty"`
	Tool    *ToolEvent        `json:"tool,omitempty"`
	Usage   *provider.Usage   `json:"usage,omitempty"`
	Cost    float64           `json:"cost,omitempty"`
	Message *provider.Message `json:"message,omitempty"`
	// Parent is set on a subagent's events: the id of the task call that
	// started it.
	Parent string `json:"parent,omitempty"`
}

// Stop says how a turn ended.
type Stop string

// The ways a turn ends.
const (
	StopDone        Stop = "done"            // the model ended its turn
	StopBound       Stop = "iteration_limit" // the tool iteration bound was hit; a recovery summary was asked for
	StopInterrupted Stop = "interrupted"     // the user interrupted (ctx cancelled)
	StopFailed      Stop = "failed"          // a provider error ended the turn; the user's message is kept
	StopCut         Stop = "max_tokens"      // the answer was cut by the output limit and had nothing to run
	StopRefused     Stop = "refusal"         // the model refused
)

// StoppedBy is who or what ended a run whose ctx is done, as the model's
// tool results say it: "the user" (Ctrl-C, the TUI's interrupt), unless
// ctx's cause names another with a StoppedBy method (brig's signal
// handler: a SIGTERM comes from a timeout wrapper or a service manager as
// often as from a person).
func StoppedBy(ctx context.Context) string {
	var s interface{ StoppedBy() string }
	if errors.As(context.Cause(ctx), &s) {
		return s.StoppedBy()
	}
	return "the user"
}

// TurnResult sums up one user turn.
type TurnResult struct {
	Stop       Stop           `json:"stop"`
	Iterations int            `json:"iterations"` // model requests made
	ToolCalls  int            `json:"tool_calls"`
	Usage      provider.Usage `json:"usage"`
	Cost       float64        `json:"cost"`
	Text       string         `json:"text"` // the last assistant message's text
}

// Config is what an Agent needs.
type Config struct {
	Client   provider.Client
	Model    provider.Model
	System   string
	Executor *Executor
	// MaxIterations bounds tool iterations per user turn (default 200).
	MaxIterations int
	// MaxToolCalls bounds the tool calls run for one model answer
	// (default 64); each call beyond it is answered as not run, saying
	// the limit.
	MaxToolCalls int
	MaxTokens    int
	Effort       provider.Effort
	WebSearch    bool
	CacheKey     string
	// Emit receives events; it must not block for long (a front end queues
	// them). Nil drops them.
	Emit func(Event)
	// Inbox, when set, is drained at each tool boundary: messages the user
	// typed while the agent worked join the tool results' user turn, so
	// the model reads them before its next step. What is still queued when
	// a turn ends is the front end's to send as the next turn.
	Inbox func() []provider.Block
	// CompactAt is the share of the model's context window at which the
	// history is compacted before the next request (default 0.8; negative
	// turns automatic compaction off).
	CompactAt float64
	// Compacted is called, before the history changes, with each
	// compaction (the session saves it); an error leaves history as it was.
	Compacted func(ctx context.Context, c Compaction) error
	// Persist is called with each message as it joins the history, before
	// the next request leaves; an error ends the turn (nothing completed is
	// ever only in memory). It returns once the message is written (a
	// kill -9 of brig keeps it); synced waits until it is on disk and
	// reports a failure to get it there, and the loop calls it before
	// anything else is saved and before the turn ends.
	Persist func(ctx context.Context, m provider.Message) (synced func() error, err error)

	// TokenBudget, when positive, bounds the tokens (input and output) a
	// turn's requests may use: past it, as at the iteration bound, the
	// model is asked to sum up.
	TokenBudget int
}

// Agent is one conversation. Run is not safe to call concurrently with
// itself; History may be read from another goroutine.
type Agent struct {
	cfg Config

	mu      sync.Mutex
	history []provider.Message
	usage   provider.Usage
	cost    float64
	// lastContext is the context the last response reported (input and
	// output tokens); lastLen the history length it covers.
	lastContext, lastLen int
	compactions          int
	notes                []string // for the model, sent with the next user turn (see Note)
	// ends is closed once the EventToolEnd of the last call started so
	// far has been emitted (endLater); nil before any.
	ends chan struct{}
	// recordsChecked: the history this agent started from was checked for
	// calls a crash left without an audit record (recordsAfterCrash).
	recordsChecked bool
	// unsynced waits for the sync of the last message saved (addLater);
	// used by Run and by Compact, which never run at the same time (Run
	// waits for it before it returns).
	unsynced func() error
}

// New starts an agent with a history (empty for a new session, the saved
// messages for a resumed one).
func New(cfg Config, history []provider.Message) *Agent {
	if cfg.MaxIterations <= 0 {
		cfg.MaxIterations = DefaultMaxIterations
	}
	if cfg.MaxToolCalls <= 0 {
		cfg.MaxToolCalls = DefaultMaxToolCalls
	}
	return &Agent{cfg: cfg, history: append([]provider.Message(nil), history...)}
}

// History returns a copy of the provider-facing conversation.
func (a *Agent) History() []provider.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]provider.Message(nil), a.history...)
}

// Unanswered reports whether the history ends with a message of the
// user's side (a prompt, or a call's results) that no answer follows:
// Run(ctx, nil) then sends it again, as a retry after a failed request.
func (a *Agent) Unanswered() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := len(a.history)
	return n > 0 && a.history[n-1].Role == provider.User
}

// Restore sets the counters of a resumed session: its usage and cost so
// far, and the context the model last saw (last is that response's usage).
func (a *Agent) Restore(total provider.Usage, cost float64, last provider.Usage) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.usage, a.cost = total, cost
	if n := last.Input + last.CacheRead + last.CacheWrite + last.Output; n > 0 {
		a.lastContext, a.lastLen = n, len(a.history)
	}
}

// Totals returns the session's usage and cost so far.
func (a *Agent) Totals() (provider.Usage, float64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.usage, a.cost
}

func (a *Agent) emit(ev Event) {
	if a.cfg.Emit == nil {
		return
	}
	if ev.afterCalls() {
		a.settle() // the calls' ends first, in the order the calls came
	}
	a.cfg.Emit(ev)
}

// afterCalls reports whether ev tells of something that follows the calls
// run so far — the model's next answer, a notice, usage — rather than of a
// call (its start, output, end) or of the results going back.
func (ev Event) afterCalls() bool {
	switch ev.Kind {
	case EventToolStart, EventToolOutput, EventToolEnd:
		return false
	case EventMessage:
		return ev.Message == nil || ev.Message.Role != provider.User
	}
	return true
}

// endLater emits a call's EventToolEnd once complete has returned it,
// after the ends of the calls before it. A call's change set and audit
// record (Executor.ExecuteLater) are made while its result goes back to
// the model; the end, which carries them, follows.
func (a *Agent) endLater(u provider.ToolUse, complete func() Outcome) {
	done := make(chan struct{})
	a.mu.Lock()
	prev := a.ends
	a.ends = done
	a.mu.Unlock()
	go func() {
		defer close(done)
		o := complete()
		if prev != nil {
			<-prev
		}
		a.emit(Event{Kind: EventToolEnd, Tool: &ToolEvent{ID: u.ID, Name: u.Name, Args: u.Input, Outcome: &o}})
	}()
}

// settle waits until the EventToolEnd of every call started so far has
// been emitted.
func (a *Agent) settle() {
	a.mu.Lock()
	ends := a.ends
	a.mu.Unlock()
	if ends != nil {
		<-ends
	}
}

// add appends a message to history and saves it, waiting until it is on
// disk. History keeps one entry per saved message (consecutive user
// messages, as after an interrupt, are merged only when a request is
// built), so it and the session file always count messages alike.
func (a *Agent) add(ctx context.Context, m provider.Message) error {
	if err := a.addLater(ctx, m); err != nil {
		return err
	}
	return a.synced()
}

// addLater is add that returns once the message is written to the session
// (a kill -9 keeps it), leaving its sync to run meanwhile: the next save
// (add, addLater, a compaction) or synced waits for it and reports its
// failure first, since a failed sync cuts the message off the file and
// nothing may follow it there.
func (a *Agent) addLater(ctx context.Context, m provider.Message) error {
	if err := a.synced(); err != nil {
		return err
	}
	a.mu.Lock()
	a.history = append(a.history, m)
	a.mu.Unlock()
	a.emit(Event{Kind: EventMessage, Message: &m})
	if a.cfg.Persist == nil {
		return nil
	}
	synced, err := a.cfg.Persist(ctx, m)
	if err != nil {
		return fmt.Errorf("save the session: %w", err)
	}
	a.unsynced = synced
	return nil
}

// synced waits until the last message saved is on disk.
func (a *Agent) synced() error {
	wait := a.unsynced
	a.unsynced = nil
	if wait == nil {
		return nil
	}
	if err := wait(); err != nil {
		return fmt.Errorf("save the session: %w", err)
	}
	return nil
}

// Run sends the user's message (nil continues from the history as it is,
// e.g. to retry after a failed request) and runs the turn to its end: the
// model answers, its tool calls run, their results go back, until the
// model ends its turn, the iteration bound is hit, the user interrupts
// (ctx), or a provider error stops it. Whatever happens, the history stays
// provider-valid: every tool_use has exactly one tool_result, and the
// user's message is never lost.
func (a *Agent) Run(ctx context.Context, user []provider.Block) (tr TurnResult, err error) {
	defer a.settle() // every call's end is out when the turn is
	defer func() {
		// What the turn saved is on disk when it returns (a failed
		// request leaves after the results were written, not synced).
		if serr := a.synced(); serr != nil && err == nil {
			tr.Stop, err = StopFailed, serr
		}
	}()
	a.recordsAfterCrash(ctx)
	if err := a.answerDangling(ctx); err != nil {
		return tr, err
	}
	if len(user) > 0 {
		if err := a.fits(user); err != nil {
			tr.Stop = StopFailed
			return tr, err
		}
		user = append(a.takeNotes(), user...)
		// Written before the request leaves and synced while it is under
		// way, as a call's results are (the answer waits for the sync).
		if err := a.addLater(context.WithoutCancel(ctx), provider.Message{Role: provider.User, Content: user}); err != nil {
			return tr, err
		}
	}
	overflowRetried := false
	for {
		if tr.Iterations >= a.cfg.MaxIterations || (a.cfg.TokenBudget > 0 && tr.Usage.Total() >= a.cfg.TokenBudget) {
			return a.recover(ctx, tr)
		}
		if a.cfg.CompactAt >= 0 && a.needsCompaction() {
			if err := a.synced(); err != nil {
				return tr, err
			}
			if err := a.compact(ctx, "auto", false); err != nil {
				a.emit(Event{Kind: EventNotice, Text: "could not compact the conversation: " + err.Error()})
			}
		}
		sent := len(a.History())
		resp, err := a.request(ctx, &tr, true)
		// The last results were synced while the request was under way;
		// nothing is done with its answer before they are on disk.
		if serr := a.synced(); serr != nil {
			tr.Stop = StopFailed
			return tr, serr
		}
		if err != nil && provider.IsKind(err, provider.ErrContextOverflow) && !overflowRetried && ctx.Err() == nil {
			// The estimate was short: compact now and try once more.
			overflowRetried = true
			if cerr := a.compact(ctx, "auto", true); cerr == nil {
				continue
			}
		}
		if err != nil {
			return a.failed(ctx, tr, resp, err)
		}
		msg := resp.Message
		distinctToolIDs(msg)
		// The answer is written before its calls start and synced while
		// they run; it is on disk before their results are written.
		if err := a.addLater(context.WithoutCancel(ctx), msg); err != nil {
			return tr, err
		}
		a.mu.Lock()
		a.lastContext = resp.Usage.Input + resp.Usage.CacheRead + resp.Usage.CacheWrite + resp.Usage.Output
		a.lastLen = sent + 1
		a.mu.Unlock()
		tr.Text = msg.PlainText()
		uses := msg.ToolUses()
		if len(uses) == 0 {
			if err := a.synced(); err != nil {
				return tr, err
			}
		}
		switch {
		case resp.StopReason == provider.StopPause:
			continue // a paused server-side tool turn: send it back as is
		case len(uses) == 0 && resp.StopReason == provider.StopMaxTokens:
			a.emit(Event{Kind: EventNotice, Text: "the answer was cut by the output limit (max_tokens)"})
			tr.Stop = StopCut
			return tr, nil
		case len(uses) == 0 && resp.StopReason == provider.StopRefusal:
			tr.Stop = StopRefused
			return tr, nil
		case len(uses) == 0:
			tr.Stop = StopDone
			return tr, nil
		}
		results := a.runTools(ctx, uses, resp.StopReason == provider.StopMaxTokens)
		tr.ToolCalls += min(len(uses), a.cfg.MaxToolCalls)
		if a.cfg.Inbox != nil && ctx.Err() == nil {
			results = append(results, a.cfg.Inbox()...)
		}
		// The results always go in, interrupted or not: history stays
		// valid. They are written before the next request leaves and
		// synced while it is under way; the next save waits for that.
		if err := a.addLater(context.WithoutCancel(ctx), provider.Message{Role: provider.User, Content: results}); err != nil {
			return tr, err
		}
		if ctx.Err() != nil {
			if err := a.synced(); err != nil {
				return tr, err
			}
			tr.Stop = StopInterrupted
			return tr, ctx.Err()
		}
	}
}

// fits refuses a message that cannot fit the model's context window with
// the system prompt, whatever is compacted: sending it would only earn a
// provider error after paying for the upload (or a silent cut by servers
// that truncate).
func (a *Agent) fits(user []provider.Block) error {
	window := a.cfg.Model.ContextWindow
	if window <= 0 {
		return nil
	}
	need := EstimateTokens([]provider.Message{{Role: provider.User, Content: user}}) + len(a.cfg.System)/4
	if need <= window {
		return nil
	}
	return fmt.Errorf("the message is about %d tokens (with brig's instructions), more than the %d-token context window of %s; nothing was sent. Send less (one file, or a narrower diff), or use a model with a larger window", need, window, a.cfg.Model.ID)
}

// recordsAfterCrash, once per agent, looks at a history that ends with
// the saved results of the last answer's calls (a resumed session whose
// turn was cut short): each call that ran must have an audit record, and
// a crash between a result being saved and its record (written once the
// snapshot after the call is taken: ExecuteLater) leaves one out, which
// Executor.auditUnrecorded writes now. Calls answered "not run: …" never
// reached the executor and have none.
func (a *Agent) recordsAfterCrash(ctx context.Context) {
	a.mu.Lock()
	checked := a.recordsChecked
	a.recordsChecked = true
	n := len(a.history)
	var answer, results provider.Message
	ended := n >= 2 && a.history[n-2].Role == provider.Assistant && a.history[n-1].Role == provider.User
	if ended {
		answer, results = a.history[n-2], a.history[n-1]
	}
	a.mu.Unlock()
	if checked || !ended || a.cfg.Executor == nil {
		return
	}
	ran := map[string]bool{}
	for _, b := range results.Content {
		if r := b.ToolResult; b.Type == provider.BlockToolResult && r != nil && !notRun(r) {
			ran[r.ToolUseID] = true
		}
	}
	var uses []provider.ToolUse
	for _, u := range answer.ToolUses() {
		if ran[u.ID] {
			uses = append(uses, u)
		}
	}
	a.cfg.Executor.auditUnrecorded(context.WithoutCancel(ctx), uses)
}

// notRunPrefix begins the result of every call the loop answers without
// running it (cut off, interrupted, over the limit per answer).
const notRunPrefix = "not run: "

// notRun reports whether r is the loop's answer to a call it did not run
// (an error whose text, its first block, starts with notRunPrefix).
func notRun(r *provider.ToolResult) bool {
	return r.IsError && len(r.Content) > 0 && r.Content[0].Type == provider.BlockText && strings.HasPrefix(r.Content[0].Text, notRunPrefix)
}

// answerDangling answers the tool calls of a last assistant message that
// has no results (brig was killed while they ran), so a resumed history is
// provider-valid.
func (a *Agent) answerDangling(ctx context.Context) error {
	a.mu.Lock()
	var uses []provider.ToolUse
	if n := len(a.history); n > 0 && a.history[n-1].Role == provider.Assistant {
		uses = a.history[n-1].ToolUses()
	}
	a.mu.Unlock()
	if len(uses) == 0 {
		return nil
	}
	results := make([]provider.Block, len(uses))
	for i, u := range uses {
		results[i] = provider.ToolResultBlock(u.ID, "no result: brig stopped before this call finished (it may or may not have had an effect; check before repeating it)", true)
		if a.cfg.Executor != nil {
			a.cfg.Executor.auditUnfinished(context.WithoutCancel(ctx), u.ID, u.Name, u.Input)
		}
	}
	return a.add(context.WithoutCancel(ctx), provider.Message{Role: provider.User, Content: results})
}

// request streams one model response.
func (a *Agent) request(ctx context.Context, tr *TurnResult, withTools bool) (provider.Response, error) {
	req := provider.Request{
		Model:     a.cfg.Model.ID,
		System:    a.cfg.System,
		Messages:  provider.ForProvider(a.History(), a.cfg.Client.Provider()),
		MaxTokens: a.cfg.MaxTokens,
		Effort:    a.cfg.Effort,
		WebSearch: a.cfg.WebSearch,
		CacheKey:  a.cfg.CacheKey,
	}
	if withTools {
		req.Tools = a.toolSpecs()
	}
	tr.Iterations++
	if a.cfg.Executor != nil {
		a.cfg.Executor.modelAsked()
	}
	resp, err := a.cfg.Client.Stream(ctx, req, func(ev provider.Event) error {
		switch ev.Type {
		case provider.EventText:
			a.emit(Event{Kind: EventText, Text: ev.Text})
		case provider.EventThinking:
			a.emit(Event{Kind: EventThinking, Text: ev.Text})
		case provider.EventServerTool:
			a.emit(Event{Kind: EventServerTool, Text: ev.Text})
		case provider.EventRetry:
			a.emit(Event{Kind: EventNotice, Text: ev.Text})
		}
		return nil
	})
	if a.cfg.Executor != nil {
		a.cfg.Executor.modelAnswered()
	}
	resp.Usage = resp.Usage.Sane()
	cost := a.account(resp.Usage)
	tr.Usage, tr.Cost = tr.Usage.Add(resp.Usage), tr.Cost+cost
	return resp, err
}

// account adds a response's usage to the session's totals and reports it.
func (a *Agent) account(u provider.Usage) float64 {
	u = u.Sane()
	if u.Total() == 0 {
		return 0
	}
	cost := a.cfg.Model.Cost(u)
	a.mu.Lock()
	a.usage, a.cost = a.usage.Add(u), a.cost+cost
	a.mu.Unlock()
	a.emit(Event{Kind: EventUsage, Usage: &u, Cost: cost})
	return cost
}

// toolSpecs advertises the tools of the current mode.
func (a *Agent) toolSpecs() []provider.ToolSpec {
	ex := a.cfg.Executor
	if ex == nil {
		return nil
	}
	var specs []provider.ToolSpec
	for _, d := range ex.Registry.Advertised(ex.Policy.Mode()) {
		specs = append(specs, provider.ToolSpec{Name: string(d.Name), Description: d.Description, InputSchema: d.Schema})
	}
	return specs
}

// failed ends a turn whose request failed. An interrupted stream keeps the
// text that had arrived (never a half-formed tool call or thinking block)
// so the user still sees it in the history.
func (a *Agent) failed(ctx context.Context, tr TurnResult, partial provider.Response, err error) (TurnResult, error) {
	if ctx.Err() == nil {
		tr.Stop = StopFailed
		return tr, err
	}
	tr.Stop = StopInterrupted
	var kept []provider.Block
	for _, b := range partial.Message.Content {
		if b.Type == provider.BlockText && b.Text != "" {
			kept = append(kept, b)
		}
	}
	if len(kept) > 0 {
		tr.Text = provider.Message{Content: kept}.PlainText()
		// The model reads its own words back next turn: it must know
		// they stop where the user cut them, not where it meant to.
		kept = append(kept, provider.Text(interruptedAnswer))
		if perr := a.add(context.WithoutCancel(ctx), provider.Message{Role: provider.Assistant, Content: kept}); perr != nil {
			return tr, perr
		}
	}
	return tr, err
}

// interruptedAnswer ends the text an interrupted answer kept.
const interruptedAnswer = "[brig: the user interrupted this answer here]"

// recover is what happens at the iteration or token bound: one last request without
// tools asks the model to sum up, so the user gets an answer, not silence.
func (a *Agent) recover(ctx context.Context, tr TurnResult) (TurnResult, error) {
	bound := fmt.Sprintf("the limit of %d tool iterations", a.cfg.MaxIterations)
	if a.cfg.MaxIterations == 1 {
		bound = "the limit of 1 tool iteration"
	}
	if tr.Iterations < a.cfg.MaxIterations {
		bound = fmt.Sprintf("the budget of %d tokens", a.cfg.TokenBudget)
	}
	requests := "1 model request"
	if tr.Iterations != 1 {
		requests = fmt.Sprintf("%d model requests", tr.Iterations)
	}
	a.emit(Event{Kind: EventNotice, Text: fmt.Sprintf("stopped after %s (%s); asking for a summary", requests, bound)})
	note := provider.Text(fmt.Sprintf("[brig] You have reached %s for this turn. Do not call tools. Summarise what you did, what is left to do, and stop.", bound))
	if err := a.add(context.WithoutCancel(ctx), provider.Message{Role: provider.User, Content: []provider.Block{note}}); err != nil {
		return tr, err
	}
	resp, err := a.request(ctx, &tr, false)
	if err != nil {
		return a.failed(ctx, tr, resp, err)
	}
	if err := a.add(ctx, resp.Message); err != nil {
		return tr, err
	}
	tr.Text = resp.Message.PlainText()
	tr.Stop = StopBound
	// A model that asks for tools anyway gets them answered as not run,
	// so the history stays valid, and the user is told there is no
	// summary rather than shown nothing.
	if uses := resp.Message.ToolUses(); len(uses) > 0 {
		results := make([]provider.Block, len(uses))
		for i, u := range uses {
			results[i] = a.notRun(ctx, u, "brig asked for a summary without tools at "+bound)
		}
		if err := a.add(context.WithoutCancel(ctx), provider.Message{Role: provider.User, Content: results}); err != nil {
			return tr, err
		}
		what := "gave no summary"
		if strings.TrimSpace(tr.Text) != "" {
			what = "summed up"
		}
		calls := "another tool call, which was not run"
		if len(uses) > 1 {
			calls = fmt.Sprintf("%d more tool calls, which were not run", len(uses))
		}
		a.emit(Event{Kind: EventNotice, Text: fmt.Sprintf("the model %s and asked for %s (%s); send another message to go on", what, calls, bound)})
	}
	return tr, nil
}

// runTools answers every tool call of one message, in order. Consecutive
// calls of tools that only read run concurrently (a few at a time); the
// rest one at a time. A message cut by max_tokens runs nothing; the calls
// beyond MaxToolCalls are answered as not run. After an interrupt, the
// calls not yet run are answered as interrupted.
func (a *Agent) runTools(ctx context.Context, uses []provider.ToolUse, cut bool) []provider.Block {
	results := make([]provider.Block, len(uses))
	if cut {
		for i, u := range uses {
			results[i] = a.notRun(ctx, u, "your response was cut off by the output limit (max_tokens) before it was complete. Make smaller tool calls (write large files in parts).")
		}
		a.emit(Event{Kind: EventNotice, Text: "the answer was cut by the output limit; its tool calls were not run"})
		return results
	}
	if limit := a.cfg.MaxToolCalls; len(uses) > limit {
		for i := limit; i < len(uses); i++ {
			results[i] = a.notRun(ctx, uses[i], fmt.Sprintf("brig runs at most %d tool calls per answer and this one had %d (the first %d ran); ask again, fewer at a time, for the calls still needed", limit, len(uses), limit))
		}
		rest := fmt.Sprintf("the other %d were answered as not run", len(uses)-limit)
		if len(uses)-limit == 1 {
			rest = "the last was answered as not run"
		}
		first := fmt.Sprintf("the first %d ran", limit)
		if limit == 1 {
			first = "the first ran"
		}
		a.emit(Event{Kind: EventNotice, Text: fmt.Sprintf("the model asked for %d tool calls in one answer; %s (the limit per answer), %s", len(uses), first, rest)})
		uses = uses[:limit]
	}
	sem := make(chan struct{}, maxParallel)
	for i := 0; i < len(uses); {
		j := i + 1
		if a.readOnly(uses[i]) {
			for j < len(uses) && a.readOnly(uses[j]) {
				j++
			}
		}
		var wg sync.WaitGroup
		gctx := ctx
		for k := i; k < j; k++ {
			if (k-i)%maxParallel == 0 && j-i > 1 && a.cfg.Executor != nil && a.cfg.Executor.Runner != nil {
				// The jailed Go tools of the calls that run at once
				// (maxParallel at most: a batch waits for all of its
				// calls) run in one child.
				gctx = withBatch(ctx, newBatch(a.cfg.Executor.Runner, min(maxParallel, j-k)))
			}
			wg.Add(1)
			sem <- struct{}{}
			kctx := gctx // this call's batch: gctx moves on to the next one
			go func() {
				defer func() { <-sem; wg.Done() }()
				results[k] = a.runTool(a.burst(kctx, uses[k], j-i), uses[k])
			}()
		}
		wg.Wait()
		i = j
	}
	return results
}

// burst marks ctx for a jailed call run beside n-1 others: for the
// supervisor they are a burst, whose jail children are replaced after
// them, not beside them (supervisor.Burst). A subagent (task) is not
// marked: its own calls come one at a time, however long it runs.
func (a *Agent) burst(ctx context.Context, u provider.ToolUse, n int) context.Context {
	if n < 2 || a.cfg.Executor == nil {
		return ctx
	}
	if d, ok := a.cfg.Executor.Registry.Lookup(u.Name); !ok || d.Runs == tools.Delegated {
		return ctx
	}
	return supervisor.Burst(ctx)
}

// readOnly reports whether a call may run alongside its neighbours.
func (a *Agent) readOnly(u provider.ToolUse) bool {
	if a.cfg.Executor == nil || u.Incomplete {
		return false
	}
	d, ok := a.cfg.Executor.Registry.Lookup(u.Name)
	return ok && d.ReadOnly()
}

// notRun answers a call the loop does not run, and records it in the
// audit log, so that brig log shows every call the model made.
func (a *Agent) notRun(ctx context.Context, u provider.ToolUse, why string) provider.Block {
	a.auditNotRun(ctx, u, notRunPrefix+why)
	return provider.ToolResultBlock(u.ID, notRunPrefix+why, true)
}

func (a *Agent) auditNotRun(ctx context.Context, u provider.ToolUse, why string) {
	if a.cfg.Executor == nil {
		return
	}
	args := u.Input
	if u.Incomplete {
		args = json.RawMessage(u.PartialInput)
	}
	a.cfg.Executor.auditNotRun(context.WithoutCancel(ctx), u.ID, u.Name, args, why)
}

// runTool runs one call and turns its outcome into a tool_result block.
func (a *Agent) runTool(ctx context.Context, u provider.ToolUse) provider.Block {
	te := &ToolEvent{ID: u.ID, Name: u.Name, Args: u.Input}
	a.emit(Event{Kind: EventToolStart, Tool: te})
	var o Outcome
	complete := func() Outcome { return o }
	switch {
	case u.Incomplete:
		o.Result = tools.Result{Text: notRunPrefix + "the call's arguments were cut off or were not a JSON object; send the call again, whole", IsError: true}
		a.auditNotRun(ctx, u, o.Result.Text)
	case ctx.Err() != nil:
		o.Result = tools.Result{Text: notRunPrefix + "interrupted by " + StoppedBy(ctx), IsError: true}
	case a.cfg.Executor == nil:
		o.Result = tools.Result{Text: "no tools are available in this session", IsError: true}
	default:
		o, complete = a.cfg.Executor.ExecuteLater(ctx, u.ID, u.Name, u.Input, a.outputTo(u.ID))
	}
	a.endLater(u, complete)
	return resultBlock(u.ID, o.Result)
}

// outputTo streams a command's live output as events.
func (a *Agent) outputTo(id string) io.Writer {
	if a.cfg.Emit == nil {
		return nil
	}
	return writerFunc(func(p []byte) (int, error) {
		a.emit(Event{Kind: EventToolOutput, Tool: &ToolEvent{ID: id}, Text: string(p)})
		return len(p), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// ModelText is the text of a tool result as the model receives it.
func ModelText(r tools.Result) string {
	if r.Text == "" && len(r.Images) == 0 {
		return tools.NoOutput
	}
	return r.Text
}

// resultBlock is a tool result as the model sees it: its text and images.
func resultBlock(id string, r tools.Result) provider.Block {
	var content []provider.Block
	if text := ModelText(r); text != "" {
		content = append(content, provider.Text(text))
	}
	for _, img := range r.Images {
		data, err := base64.StdEncoding.DecodeString(img.Data)
		if err != nil {
			content = append(content, provider.Text("(an image could not be decoded)"))
			continue
		}
		content = append(content, provider.Block{Type: provider.BlockImage, Image: &provider.Image{MediaType: img.MediaType, Data: data}})
	}
	return provider.Block{Type: provider.BlockToolResult, ToolResult: &provider.ToolResult{ToolUseID: id, IsError: r.IsError, Content: content}}
}

// distinctToolIDs gives each tool call of an answer an id of its own,
// in the answer as it is kept: results are matched to calls by id (by
// the provider, the front ends, the audit log), so two calls under one id
// could have one's result or approval taken for the other's (the TUI
// crashed on it). A provider's API never sends that; a local server
// might. A repeated or missing id gets a suffix or a name of brig's
// (letters, digits, _ and -, as the APIs accept), and the answer's
// history and the results carry the new one.
func distinctToolIDs(msg provider.Message) {
	seen := map[string]bool{}
	for i, b := range msg.Content {
		if b.Type != provider.BlockToolUse || b.ToolUse == nil {
			continue
		}
		id := b.ToolUse.ID
		for n := 2; id == "" || seen[id]; n++ {
			id = fmt.Sprintf("%s_brig%d", cmp.Or(b.ToolUse.ID, "call"), n)
		}
		if id != b.ToolUse.ID {
			u := *b.ToolUse
			u.ID = id
			msg.Content[i].ToolUse = &u
		}
		seen[id] = true
	}
}

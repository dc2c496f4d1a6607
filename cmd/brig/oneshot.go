package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"brig/agent"
	"brig/agent/provider"
	"brig/agent/provider/connect"
	"brig/internal/checkpoint"
	"brig/internal/credentials"
	"brig/internal/session"
	"brig/internal/termsafe"
	"brig/policy"
	"brig/tools"
	"brig/tools/textfile"
)

// Exit statuses of `brig -p`.
const (
	exitOK           = 0
	exitFailed       = 1 // a provider or setup error ended the task
	exitBound        = 3 // the iteration bound was hit (a summary was printed)
	exitIncomplete   = 4 // the answer was cut by max_tokens or refused
	outputText       = "text"
	outputJSON       = "json"
	outputStreamJSON = "stream-json"
)

// agentOptions are the inputs of one-shot mode (`brig -p`), and later of the
// TUI: model, endpoint, mode and how Ask is answered without a human.
type agentOptions struct {
	Prompt        string
	Output        string
	Model         string
	BaseURL       string
	Provider      string // --provider: the wire format for a model the registry does not list
	Mode          string
	Yes, No       bool
	MaxIterations int
	MaxToolCalls  int      // per model answer; 0: [agent] max_tool_calls, else the default
	AddDirs       []string // --add-dir: directories added to the jail profile
	AllowHosts    []string // --allow-host: hosts calls reach without asking
	Workspace     string
	Effort        string
	WebSearch     bool
	Compact       bool // compact the (resumed) conversation before the prompt
	Interactive   bool // the TUI: a session whose first request failed is kept
	ModeSet       bool // --mode was given (else a resumed session keeps its own)
	// ModeCurrent: Mode is the TUI's mode when it resumes a session, not
	// --mode's default, which [agent] mode of the user's config replaces.
	ModeCurrent bool
	Continue    bool // resume the latest session of this workspace
	// latestVia is the flag that asked for the latest session, for its
	// errors: --continue, or --resume with no id in one-shot mode.
	latestVia string
	Resume    string    // resume this session id
	Stdin     io.Reader // piped input, appended to the prompt; nil when a terminal
	// ModeFrom is the mode of the TUI's run a new session replaces (a
	// /mode before anything was said, whose session is not kept): the
	// change is audited as one of the session's.
	ModeFrom policy.Mode
	// Inbox is the agent's Config.Inbox: messages queued while it works
	// (the TUI's), taken at each tool boundary; nil for one-shot runs.
	Inbox func() []provider.Block
	procEnv
	// Executable is the brig binary the jail re-executes (tests use the
	// test binary); empty means /proc/self/exe.
	Executable string
	Now        func() time.Time
}

// oneShotSummary is the --output json object.
type oneShotSummary struct {
	Result     string         `json:"result"`
	Stop       agent.Stop     `json:"stop"`
	Session    string         `json:"session,omitempty"`
	Error      string         `json:"error,omitempty"`
	Model      string         `json:"model"`
	Mode       policy.Mode    `json:"mode"`
	Iterations int            `json:"iterations"`
	ToolCalls  int            `json:"tool_calls"`
	Usage      provider.Usage `json:"usage"`
	CostUSD    usd            `json:"cost_usd"`
	// SessionCostUSD is the whole session's cost, resumed turns included.
	SessionCostUSD usd   `json:"session_cost_usd"`
	DurationMS     int64 `json:"duration_ms"`
	// Calls are this run's tool calls, each with the result as the model
	// received it (a subagent's with its parent).
	Calls []callRecord `json:"calls"`
	// Subagents are what each subagent (task call) of this run spent;
	// Usage and CostUSD include it.
	Subagents []subagentSpend `json:"subagents,omitempty"`
	// Notices are what text mode says on stderr as "brig: …" (retries,
	// cuts, bounds, an unlisted model's price, the mode a resumed session
	// goes on in): --output json dropped them (new user, 2026-12-03).
	Notices []string `json:"notices,omitempty"`
}

// usd is a cost in US dollars, written in JSON to a millionth of a cent
// (0.040086, not the sum's 0.040086000000000004).
type usd float64

func (u usd) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, math.Round(float64(u)*1e8)/1e8, 'f', -1, 64), nil
}

// subagentSpend is one subagent's requests and tokens.
type subagentSpend struct {
	Parent    string         `json:"parent"` // the task call's id
	Requests  int            `json:"requests"`
	ToolCalls int            `json:"tool_calls"`
	Usage     provider.Usage `json:"usage"`
	CostUSD   usd            `json:"cost_usd"`
}

// callRecord is one tool call in --output json, and the tool_end line of
// stream-json.
type callRecord struct {
	ID      string          `json:"id"`
	Name    string          `json:"name"`
	Args    json.RawMessage `json:"args"`
	Tier    policy.Tier     `json:"tier,omitempty"`
	Answer  agent.Answer    `json:"answer,omitempty"` // how an Ask was answered
	IsError bool            `json:"is_error"`
	// Result is the text the model received; Images how many images
	// came with it.
	Result     string `json:"result"`
	Images     int    `json:"images,omitempty"`
	ExitCode   *int   `json:"exit_code,omitempty"`
	DurationUS int64  `json:"duration_us"`

	// Parent is the task call whose subagent made this call.
	Parent string `json:"parent,omitempty"`

	// Changes is what the call changed in the paths it could write (brig
	// undo puts it back).
	Changes *checkpoint.ChangeSet `json:"changes,omitempty"`
}

func newCallRecord(te agent.ToolEvent) callRecord {
	c := callRecord{ID: te.ID, Name: te.Name, Args: te.Args}
	if o := te.Outcome; o != nil {
		c.IsError, c.Result, c.Images = o.Result.IsError, agent.ModelText(o.Result), len(o.Result.Images)
		c.ExitCode, c.DurationUS, c.Changes = o.Result.Meta.ExitCode, o.Duration.Microseconds(), o.Changes
		if o.Verdict != nil {
			c.Tier = o.Verdict.Tier
		}
		if o.Approval != nil {
			c.Answer = o.Approval.Answer
		}
	}
	return c
}

func (o *agentOptions) validate() error {
	switch o.Output {
	case outputText, outputJSON, outputStreamJSON:
	default:
		return fmt.Errorf("--output %q: want text, json or stream-json", o.Output)
	}
	if o.Continue && o.Resume != "" {
		return errors.New("--continue and --resume name two sessions; give one")
	}
	if o.MaxToolCalls < 0 {
		return fmt.Errorf("--max-tool-calls %d: want a positive number", o.MaxToolCalls)
	}
	if o.Yes && o.No {
		return errors.New("--yes and --no contradict each other; give one")
	}
	if _, err := policy.ParseMode(o.Mode); err != nil {
		return err
	}
	if _, err := wireOf(o.Provider); err != nil {
		return err
	}
	if o.MaxIterations < 1 {
		return fmt.Errorf("--max-iterations %d: want at least 1 (tool iterations per task before brig asks the model to sum up)", o.MaxIterations)
	}
	switch provider.Effort(o.Effort) {
	case provider.EffortNone, provider.EffortMinimal, provider.EffortLow, provider.EffortMedium, provider.EffortHigh:
	default:
		return fmt.Errorf("--effort %q: want minimal, low, medium or high", o.Effort)
	}
	return nil
}

// wireOf reads --provider.
func wireOf(s string) (provider.Name, error) {
	switch s {
	case "":
		return "", nil
	case "anthropic":
		return provider.Anthropic, nil
	case "openai":
		return provider.OpenAI, nil
	case "openai-chat", "openaichat":
		return provider.OpenAIChat, nil
	}
	return "", fmt.Errorf("--provider %q: want anthropic (Anthropic Messages), openai (OpenAI Responses) or openai-chat (Chat Completions)", s)
}

// defaultModel picks a model for the keys that are configured.
func defaultModel(creds credentials.Set, baseURL string) (string, error) {
	for _, d := range provider.Defaults {
		if _, ok := creds.Lookup(string(d.Provider)); ok {
			return d.ID, nil
		}
	}
	if baseURL != "" {
		return "", errors.New("--base-url needs --model (the name the server knows the model by)")
	}
	return "", nil
}

// nonInteractive answers Ask without a human: --yes allows once a call
// whose grant fits the mode's jail profile, --no (and the default) denies
// with a message telling the model why. A call whose grant goes beyond the
// profile is denied either way: --yes never widens the jail; the message
// says what was outside and how the user can allow it.
//
// asked, if not nil, counts the calls denied that --yes would have run.
func nonInteractive(yes bool, stderr io.Writer, asked *deniedCalls) agent.Approver {
	return agent.ApproverFunc(func(_ context.Context, req agent.ApprovalRequest) (agent.Approval, error) {
		v := req.Verdict
		if n := req.Net; n != nil {
			// A connection of a running call: only a rule or --allow-host
			// lets a host through without a human.
			fmt.Fprintf(stderr, "brig: refused %s's connection to %s (%s; no one to ask — --allow-host %s or a rule %s allows it)\n",
				req.Tool, net.JoinHostPort(n.Host, strconv.Itoa(n.Port)), v.Reason, n.Host, policy.NetRule(n.Host))
			return agent.Approval{Answer: agent.AnswerDeny, By: agent.ByNoOne}, nil
		}
		if len(v.Beyond) > 0 {
			var parts []string
			for _, b := range v.Beyond {
				parts = append(parts, b.String())
			}
			fmt.Fprintf(stderr, "brig: denied (beyond the %s jail profile, which --yes does not widen: --add-dir or a rule of yours does): %s — %s\n", v.Profile, termsafe.Line(req.Tool), termsafe.Line(strings.Join(parts, "; ")))
			return agent.Approval{Answer: agent.AnswerDeny, By: agent.ByNoOne, Message: fmt.Sprintf(
				"this call needs a grant beyond the %s jail profile of %s mode (%s), which only the user can give, and a non-interactive run cannot ask them: %s. Do without it, or tell the user what you need and why",
				v.Profile, v.Mode, v.Profile.Describe(), strings.Join(parts, "; "))}, nil
		}
		if yes {
			fmt.Fprintf(stderr, "brig: approved (--yes): %s — %s\n", termsafe.Line(req.Tool), termsafe.Line(v.Reason))
			return agent.Approval{Answer: agent.AnswerOnce, By: "--yes"}, nil
		}
		// --yes is what approves it: a --mode can leave it asking (an ask
		// rule asks in every mode).
		fmt.Fprintf(stderr, "brig: denied (no one to ask; --yes approves such a call): %s — %s\n", termsafe.Line(req.Tool), termsafe.Line(v.Reason))
		if asked != nil {
			asked.add(v)
		}
		return agent.Approval{Answer: agent.AnswerDeny, By: agent.ByNoOne, Message: "the call needs approval (" + v.Reason + ") and a non-interactive run cannot ask the user; do without it or explain what you need"}, nil
	})
}

func runOneShot(ctx context.Context, o *agentOptions) error {
	stdout := o.Stdout
	err := oneShot(ctx, o)
	var done exitError
	if err != nil && !errors.As(err, &done) && (o.Output == outputJSON || o.Output == outputStreamJSON) {
		// The run did not start (bad usage, no provider, a session that
		// cannot be resumed): a script reading stdout still gets its one
		// result object, with the error stderr shows.
		writeFailure(stdout, o, err)
	}
	return err
}

// writeFailure writes the result of a run that never started, in the
// --output format's shape.
func writeFailure(w io.Writer, o *agentOptions, err error) {
	mode, _ := policy.ParseMode(o.Mode)
	s := oneShotSummary{Stop: agent.StopFailed, Error: err.Error(), Model: o.Model, Mode: mode, Calls: []callRecord{}}
	enc := json.NewEncoder(w)
	if o.Output == outputStreamJSON {
		_ = enc.Encode(struct {
			Type string `json:"type"`
			oneShotSummary
		}{"result", s})
		return
	}
	enc.SetIndent("", "  ")
	_ = enc.Encode(s)
}

func oneShot(ctx context.Context, o *agentOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	start := time.Now()
	user, err := promptBlocks(ctx, o.Prompt, o.Stdin)
	if err != nil {
		if ctx.Err() != nil {
			// Stopped while the input was still being piped in (a
			// Ctrl-C waited for the writer to close it: new user,
			// 2026-12-03): nothing was sent, nothing kept.
			_, why := interruptStatus(ctx)
			fmt.Fprintf(o.Stderr, "brig: %s while reading standard input; nothing was sent\n", why)
			return exitError{interruptCode(ctx)}
		}
		return err
	}
	if len(user) == 0 && !o.Compact {
		return errors.New("-p needs a prompt (or input on stdin)")
	}
	// Everything a one-shot run prints passes the terminal sanitiser: the
	// model's answer, tool results, notices and errors that quote them. In
	// json and stream-json the text stays exact (JSON-escaped).
	stdout, stderr := termsafe.NewWriter(o.Stdout), termsafe.NewWriter(o.Stderr)
	defer stdout.Flush()
	defer stderr.Flush()
	shared := onTerminal(o.Stdout) && onTerminal(o.Stderr)
	o.Stdout, o.Stderr = stdout, stderr
	pr := newPrinter(o.Output, o.Stdout, o.Stderr)
	if shared && o.Output == outputText {
		pr.guard = &lineGuard{w: o.Stdout}
	}
	var asked deniedCalls // calls denied that --yes would have run
	run, err := setupAgent(ctx, o, nonInteractive(o.Yes, pr.errLines(), &asked), pr.event)
	if err != nil {
		return err
	}
	defer run.Close()
	a, model, mode, sess := run.Agent, run.Model, run.Policy.Mode(), run.Session
	for _, note := range []string{run.Client.Model.Note(), run.ModeNote} {
		switch {
		case note == "":
		case o.Output == outputText:
			fmt.Fprintf(o.Stderr, "brig: %s\n", note)
		default:
			pr.note(note)
		}
	}
	for _, tip := range run.Tips {
		if o.Output == outputText {
			fmt.Fprintf(o.Stderr, "brig: tip: %s\n", tip)
		}
	}
	pr.start(sess.ID(), model, string(mode), run.Workspace)
	for _, l := range run.Policy.Layers {
		// A repository may lower limits without being trusted: every
		// call is bound by them, so the run says so up front.
		if n := l.LimitsNote(); n != "" && !l.Trusted {
			fmt.Fprintf(o.Stderr, "brig: %s (untrusted) %s for every call (brig policy check shows the config)\n", l.File, n)
		}
	}
	if o.Compact {
		before := a.ContextUsed()
		switch err := a.Compact(ctx); {
		case errors.Is(err, agent.ErrNothingToCompact):
			// Not a failure: the session stays as it was, and a prompt
			// given with it goes on.
			fmt.Fprintf(o.Stderr, "brig: --compact: session %s is left as it was: %v\n", sess.ID(), err)
		case err != nil:
			return fmt.Errorf("--compact: %w", err)
		default:
			fmt.Fprintf(o.Stderr, "brig: compacted session %s: about %d → %d tokens of context\n", sess.ID(), before, a.ContextUsed())
		}
		if len(user) == 0 {
			return nil
		}
	}
	tr, runErr := a.Run(ctx, user)
	sum := oneShotSummary{
		Result: tr.Text, Stop: tr.Stop, Session: sess.ID(), Model: model, Mode: mode, Iterations: tr.Iterations,
		ToolCalls: tr.ToolCalls, Usage: tr.Usage, CostUSD: usd(tr.Cost), DurationMS: time.Since(start).Milliseconds(),
	}
	if runErr != nil {
		sum.Error = oneShotError(runErr, run.Kept(), sess.ID())
	}
	_, total := a.Totals()
	sum.SessionCostUSD = usd(total)
	sum.Calls = pr.calls
	if sum.Calls == nil {
		sum.Calls = []callRecord{} // "calls": [], not null, for a run without tool calls
	}
	if !run.Kept() {
		sum.Session = "" // nothing was answered: the session is not kept
	}
	for _, sub := range pr.subs {
		sum.Subagents = append(sum.Subagents, *sub)
		sum.Usage, sum.CostUSD = sum.Usage.Add(sub.Usage), sum.CostUSD+sub.CostUSD
	}
	code, why := interruptStatus(ctx)
	if tr.Stop == agent.StopInterrupted {
		// What stopped it, as text mode says it: not the Go context's
		// "context canceled".
		sum.Error = why + "; the running call's processes were killed and the session stays resumable (brig -c)"
	}
	if o.Output == outputText && (tr.Stop == agent.StopInterrupted || runErr != nil) {
		// Why it failed, then the summary line, which stays the last
		// (a new user read "brig: failed · 1 request" before the reason).
		w := pr.errLines()
		fmt.Fprintln(w, "brig:", sum.Error)
		switch {
		case tr.Stop == agent.StopInterrupted:
		case sum.Session != "" && transient(runErr):
			fmt.Fprintf(w, "brig: the session is kept: brig -c -p \"…\" goes on from where it failed\n")
		case transient(runErr):
			// Nothing was answered, so nothing was kept: the command
			// itself is what to run again.
			again := "run the same command again"
			if o.Stdin != nil {
				again += " (with the same input piped in)"
			}
			fmt.Fprintf(w, "brig: nothing was answered, so no session was kept: %s once it passes\n", again)
		}
	}
	if note := asked.note(mode); note != "" && o.Output == outputText && sum.Session != "" {
		// The model was told it could not have them; the user is told
		// how to let them run (a new user found only the per-call note).
		fmt.Fprintln(pr.errLines(), "brig: "+note)
	}
	pr.finish(sum)
	switch {
	case tr.Stop == agent.StopInterrupted:
		return exitError{code}
	case runErr != nil:
		return exitError{exitFailed}
	case tr.Stop == agent.StopBound:
		return exitError{exitBound}
	case tr.Stop == agent.StopCut || tr.Stop == agent.StopRefused:
		return exitError{exitIncomplete}
	}
	return nil
}

// transient reports whether err is a provider failure that may pass
// (an overload, a rate limit, a server error, the network, a broken
// stream), after which going on from the kept session is the advice.
func transient(err error) bool {
	for _, k := range []provider.ErrorKind{provider.ErrServer, provider.ErrOverloaded, provider.ErrRateLimit, provider.ErrNetwork, provider.ErrStream} {
		if provider.IsKind(err, k) {
			return true
		}
	}
	return false
}

// oneShotError is err's text with -p's own advice where the default
// names the TUI's commands: a conversation that no longer fits the
// model's context window is compacted from the command line (the session
// named: -c could pick another one), not with /compact; when no session
// was kept, the first request alone was too large and there is nothing
// to compact. (A wrapping error holds its text already: the provider
// error's part of it is replaced.)
func oneShotError(err error, kept bool, id string) string {
	msg := err.Error()
	var pe *provider.Error
	if errors.As(err, &pe) && pe.Kind == provider.ErrContextOverflow && pe.Fix == "" {
		before := pe.Error()
		if kept {
			pe.Fix = fmt.Sprintf(`run brig --resume %s --compact to summarise the session's older part (then go on with brig --resume %s -p "…"), or start a new session`, id, id)
		} else {
			pe.Fix = "the first request alone is too large (your prompt and what was piped in, with brig's instructions and the project's): send less, or choose a model with a larger window (--model)"
		}
		msg = strings.Replace(msg, before, pe.Error(), 1)
	}
	return msg
}

// openSession creates the run's session (st nil), or reopens the one
// --continue or --resume names, refusing a session of another workspace or
// a history the chosen provider cannot take back.
func openSession(ctx context.Context, o *agentOptions, stateDir, ws string, client *connect.Client) (*session.Session, *session.State, error) {
	store := session.NewStore(stateDir)
	id := o.Resume
	if o.Continue {
		latest, err := store.Latest(ctx, ws)
		switch {
		case errors.Is(err, session.ErrNotFound) && o.latestVia == "":
			return nil, nil, fmt.Errorf("%w to continue: run without -c to start one", err)
		case errors.Is(err, session.ErrNotFound):
			return nil, nil, fmt.Errorf("%s: %w to continue: leave out --resume to start one", o.latestVia, err)
		case err != nil:
			return nil, nil, fmt.Errorf("%s: %w", cmp.Or(o.latestVia, "--continue"), err)
		}
		id = latest.ID
	}
	if id == "" {
		mode, _ := policy.ParseMode(o.Mode)
		create := store.Create
		if !o.Interactive {
			// Its first message follows at once, and that save's sync
			// (beside the request) makes the header durable too.
			create = store.CreateLater
		}
		s, err := create(ctx, session.Header{Workspace: ws, Provider: client.Provider(), Model: client.Model.ID, Mode: mode})
		return s, nil, err
	}
	if err := session.ValidateID(id); err != nil {
		return nil, nil, err
	}
	s, st, err := store.Open(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if st.Header.Workspace != ws {
		s.Close()
		return nil, nil, fmt.Errorf("session %s belongs to %s, not this workspace (%s); run brig there, or pass --workspace", id, st.Header.Workspace, ws)
	}
	if err := session.CheckResume(st, client.Provider()); err != nil {
		s.Close()
		return nil, nil, err
	}
	return s, st, nil
}

// sessionChanges is what differs, on resume, from the session as it was:
// the model, the mode, the system prompt. The recorder saves them with the
// next message.
func sessionChanges(st *session.State, client *connect.Client, mode policy.Mode, sys string) []session.Record {
	var recs []session.Record
	if st.Model != client.Model.ID {
		recs = append(recs, session.ModelRecord(client.Provider(), client.Model.ID))
	}
	if st.Mode != mode {
		recs = append(recs, session.ModeRecord(mode))
	}
	if st.System != sys {
		recs = append(recs, session.SystemRecord(sys))
	}
	return recs
}

// onTerminal reports whether w is a terminal.
func onTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}

// printer writes a one-shot run's events in the chosen output format.
type printer struct {
	mu       sync.Mutex
	format   string
	out, err io.Writer
	enc      *json.Encoder
	midLine  bool
	// guard holds back a line of the model's text that starts as brig's
	// own lines do, where both share a terminal (lineGuard); nil: none.
	guard   *lineGuard
	calls   []callRecord // every finished call (for --output json)
	subs    []*subagentSpend
	notices []string // the run's notices (for --output json)
}

// note keeps a notice that text mode writes to stderr itself, for the
// JSON result.
func (p *printer) note(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notices = append(p.notices, text)
}

func newPrinter(format string, out, errw io.Writer) *printer {
	return &printer{format: format, out: out, err: errw, enc: json.NewEncoder(out)}
}

// streamRecord is one line of --output stream-json (tool_end lines are
// callRecords).
type streamRecord struct {
	Type  string          `json:"type"`
	Text  string          `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Args  json.RawMessage `json:"args,omitempty"`
	Usage *provider.Usage `json:"usage,omitempty"`
	Cost  usd             `json:"cost_usd,omitempty"`

	// Parent is set on a subagent's events: the task call's id.
	Parent string `json:"parent,omitempty"`
}

func (p *printer) event(ev agent.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Kind == agent.EventToolEnd {
		c := newCallRecord(*ev.Tool)
		c.Parent = ev.Parent
		p.calls = append(p.calls, c)
		if ev.Parent != "" {
			p.spendOf(ev.Parent).ToolCalls++
		}
	}
	if ev.Parent != "" && ev.Kind == agent.EventUsage {
		p.subagent(ev.Parent, *ev.Usage, ev.Cost)
	}
	if ev.Parent == "" && ev.Kind == agent.EventNotice {
		p.notices = append(p.notices, ev.Text)
	}
	if p.format == outputStreamJSON {
		if ev.Kind == agent.EventMessage {
			return // the deltas already carried it
		}
		if ev.Kind == agent.EventToolEnd {
			_ = p.enc.Encode(struct {
				Type string `json:"type"`
				callRecord
			}{string(ev.Kind), p.calls[len(p.calls)-1]})
			return
		}
		rec := streamRecord{Type: string(ev.Kind), Parent: ev.Parent, Text: ev.Text, Usage: ev.Usage, Cost: usd(ev.Cost)}
		if ev.Tool != nil {
			rec.ID, rec.Name, rec.Args = ev.Tool.ID, ev.Tool.Name, ev.Tool.Args
		}
		_ = p.enc.Encode(rec)
		return
	}
	if p.format != outputText {
		return
	}
	if ev.Parent != "" {
		// A subagent's work: its calls and notices on stderr, marked;
		// its text is its summary, which the main agent receives.
		switch ev.Kind {
		case agent.EventToolEnd:
			p.endLine()
			p.toolEnd(*ev.Tool, "  ↳ ")
		case agent.EventNotice:
			p.endLine()
			fmt.Fprintf(p.err, "brig: subagent %s: %s\n", ev.Parent, ev.Text)
		}
		return
	}
	switch ev.Kind {
	case agent.EventText:
		if p.guard != nil {
			_, _ = p.guard.Write([]byte(ev.Text))
		} else {
			fmt.Fprint(p.out, ev.Text)
		}
		p.midLine = !strings.HasSuffix(ev.Text, "\n")
	case agent.EventToolEnd:
		p.endLine()
		p.toolEnd(*ev.Tool, "")
	case agent.EventNotice:
		p.endLine()
		fmt.Fprintf(p.err, "brig: %s\n", ev.Text)
	}
}

// endLine ends the answer's line on stdout when it was left open, before
// a line on stderr: on a terminal both go to the same screen, and the
// notice would otherwise run on from the answer's last word.
func (p *printer) endLine() {
	if p.guard != nil {
		_ = p.guard.Flush()
	}
	if p.midLine {
		fmt.Fprintln(p.out)
		p.midLine = false
	}
}

// errLines is stderr for lines written outside the printer's events (the
// approver's): each starts on a line of its own, as a notice does.
func (p *printer) errLines() io.Writer {
	return writerFunc(func(b []byte) (int, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.format == outputText {
			p.endLine()
		}
		return p.err.Write(b)
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// toolEnd shows a finished call on stderr: the call, then the last lines
// of a command's output or the first line of another tool's result.
func (p *printer) toolEnd(te agent.ToolEvent, indent string) {
	o := te.Outcome
	status := "ok"
	if o.Result.IsError {
		status = "error"
	}
	if c := o.Result.Meta.ExitCode; c != nil {
		status = fmt.Sprintf("exit %d", *c)
	}
	if !o.Changes.Empty() {
		status += " · " + o.Changes.Summary()
	}
	fmt.Fprintf(p.err, "%s▸ %s %s — %s\n", indent, te.Name, capString(tools.Describe(te.Name, te.Args), 160), status)
	text := strings.TrimRight(o.Result.Text, "\n")
	if text == "" {
		return
	}
	lines := strings.Split(text, "\n")
	if te.Name != "bash" {
		// The first line, with how many follow (a read's preview read
		// as the whole file).
		lines = []string{agent.OneLine(text, 300)}
	} else if n := len(lines); n > maxShownLines {
		fmt.Fprintf(p.err, "%s  │ … %d earlier lines (the model received them; --output json has what it received)\n", indent, n-maxShownLines)
		if i := slices.IndexFunc(lines[:n-maxShownLines], tools.IsCutNote); o.Result.Meta.Truncated && i >= 0 {
			// The model's copy was cut in the middle: say so, as it was
			// told (a new user read only the tail and thought it whole).
			fmt.Fprintf(p.err, "%s  │ %s\n", indent, capString(lines[i], 300))
		}
		lines = lines[n-maxShownLines:]
	}
	// A blank line is shown as one: the output reads as the model got it.
	for _, l := range lines {
		if l == "" {
			fmt.Fprintf(p.err, "%s  │\n", indent)
			continue
		}
		n := 300
		if strings.HasPrefix(l, "[brig: ") {
			// brig's own note ends with what to do about it (a new user
			// saw the loopback note cut before its fix).
			n = 2000
		}
		fmt.Fprintf(p.err, "%s  │ %s\n", indent, capString(l, n))
	}
}

// subagent adds a subagent's response to its spend. The caller holds p.mu.
func (p *printer) subagent(parent string, u provider.Usage, cost float64) {
	s := p.spendOf(parent)
	s.Requests++
	s.Usage, s.CostUSD = s.Usage.Add(u), s.CostUSD+usd(cost)
}

// spendOf is the spend of the subagent a task call started, made at its
// first event. The caller holds p.mu.
func (p *printer) spendOf(parent string) *subagentSpend {
	for _, s := range p.subs {
		if s.Parent == parent {
			return s
		}
	}
	s := &subagentSpend{Parent: parent}
	p.subs = append(p.subs, s)
	return s
}

// maxShownLines is how much of a command's output -p shows on stderr.
const maxShownLines = 12

// start opens a stream-json run with the session it writes to, so that a
// script knows it before the run ends (a new user found the id only in
// the last line).
func (p *printer) start(session, model, mode, workspace string) {
	if p.format != outputStreamJSON {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.enc.Encode(struct {
		Type      string `json:"type"`
		Session   string `json:"session"`
		Model     string `json:"model"`
		Mode      string `json:"mode"`
		Workspace string `json:"workspace"`
	}{"start", session, model, mode, workspace})
}

func (p *printer) finish(s oneShotSummary) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s.Notices = p.notices
	switch p.format {
	case outputJSON:
		enc := json.NewEncoder(p.out)
		enc.SetIndent("", "  ")
		_ = enc.Encode(s)
	case outputStreamJSON:
		_ = p.enc.Encode(struct {
			Type string `json:"type"`
			oneShotSummary
		}{"result", s})
	default:
		p.endLine()
		sess := "no session kept: nothing was answered"
		if s.Session != "" {
			sess = fmt.Sprintf("session %s: $%.4f", s.Session, s.SessionCostUSD)
		}
		work := count(s.Iterations, "request") + ", " + count(s.ToolCalls, "tool call")
		if len(s.Subagents) > 0 {
			// The tokens and the cost below include the subagents': so
			// does this count (a new user read the parent's alone
			// beside the whole spend).
			var reqs, calls int
			for _, sub := range s.Subagents {
				reqs, calls = reqs+sub.Requests, calls+sub.ToolCalls
			}
			work += fmt.Sprintf(" (and %s, %s by %s)", count(reqs, "request"), count(calls, "tool call"), count(len(s.Subagents), "subagent"))
		}
		fmt.Fprintf(p.err, "brig: %s · %s · %d in / %d out tokens · $%.4f (%s) · %s\n",
			s.Stop, work, s.Usage.Input+s.Usage.CacheRead+s.Usage.CacheWrite, s.Usage.Output,
			s.CostUSD, sess, time.Duration(s.DurationMS)*time.Millisecond)
	}
}

// count is "1 request", "2 requests".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func capString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n-- // cut between characters, not inside one
	}
	return s[:n] + "…"
}

// MaxStdinBytes is how much piped input -p takes. More is refused, not cut:
// a review of half a diff is worse than none.
const MaxStdinBytes = 8 << 20

// promptFromStdin is -p's value that makes standard input the prompt
// itself (`echo "fix the bug" | brig -p -`), as "-" means stdin to most
// commands.
const promptFromStdin = "-"

// promptBlocks is the user's message: the prompt, then piped input as a
// block of its own (so the session's title is the prompt). With -p -,
// the piped input is the prompt. stdin is nil when it is a terminal.
func promptBlocks(ctx context.Context, prompt string, stdin io.Reader) ([]provider.Block, error) {
	var out []provider.Block
	fromStdin := prompt == promptFromStdin
	if fromStdin && stdin == nil {
		return nil, errors.New(`-p - reads the prompt from standard input, which is a terminal (or /dev/null) here: pipe it in (echo "fix the bug" | brig -p -), or give it after -p (brig -p "fix the bug")`)
	}
	if strings.TrimSpace(prompt) != "" && !fromStdin {
		out = append(out, provider.Text(prompt))
	}
	if stdin == nil {
		return out, nil
	}
	data, err := readAll(ctx, io.LimitReader(stdin, MaxStdinBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read standard input: %w", err)
	}
	if len(data) > MaxStdinBytes {
		return nil, fmt.Errorf("standard input is larger than %d MiB; brig does not cut it (the model would miss the rest without knowing): pass less, e.g. one file or `git diff -- PATH`", MaxStdinBytes>>20)
	}
	if textfile.LooksBinary(data) {
		// As read_file says of a binary file: sent as text, it would reach
		// the model as noise (and cost its tokens).
		return nil, fmt.Errorf("standard input is binary (%d bytes, looks like %s), and brig sends the model text: pipe text instead (`xxd FILE | head -50`, `file FILE`), or put the file in the workspace and name it in the prompt (the model reads images with view_image)", len(data), textfile.BinaryKind(data))
	}
	if bad := invalidUTF8(data); bad > 16 && bad*5 > len(data) {
		// Random bytes often hold no NUL: a new user's were sent as
		// replacement characters. Text in another encoding (Latin-1)
		// has a few such bytes and still goes, each one replaced.
		return nil, fmt.Errorf("standard input is not text (%d of its %d bytes are not UTF-8), and brig sends the model text: pipe text instead (`xxd FILE | head -50`, `file FILE`, or `iconv -f latin1 -t utf-8` for text in another encoding)", bad, len(data))
	}
	text := strings.ToValidUTF8(string(data), "\uFFFD")
	switch {
	case len(bytes.TrimSpace(data)) == 0:
		if fromStdin {
			return nil, errors.New(`-p - reads the prompt from standard input, and it was empty: pipe the prompt in (echo "fix the bug" | brig -p -)`)
		}
	case fromStdin:
		out = append(out, provider.Text(strings.TrimRight(text, "\n")))
	default:
		// The input's own last newline ends its last line: no blank
		// line is added before the closing tag.
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		out = append(out, provider.Text("<stdin>\n"+text+"</stdin>"))
	}
	return out, nil
}

// invalidUTF8 counts the bytes of b that are not part of a valid UTF-8
// character.
func invalidUTF8(b []byte) int {
	n := 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			n++
		}
		b = b[size:]
	}
	return n
}

// readAll is io.ReadAll that gives up when ctx is done (the read itself
// goes on in the background until the writer closes the pipe or brig
// exits).
func readAll(ctx context.Context, r io.Reader) ([]byte, error) {
	type read struct {
		data []byte
		err  error
	}
	done := make(chan read, 1)
	go func() {
		data, err := io.ReadAll(r)
		done <- read{data, err}
	}()
	select {
	case rd := <-done:
		return rd.data, rd.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// stdinIfPiped returns standard input when it is not a terminal.
func stdinIfPiped() io.Reader {
	fi, err := os.Stdin.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice != 0 {
		return nil
	}
	return os.Stdin
}

// deniedCalls counts the calls a -p run denied for want of someone to ask
// that --yes would have run, and whether edit mode would have run any.
type deniedCalls struct {
	n    atomic.Int32
	edit atomic.Bool // a file edit in the workspace: edit mode approves it
}

func (d *deniedCalls) add(v policy.Verdict) {
	d.n.Add(1)
	if v.Call.Effect == policy.EffectWrite && v.Deletes() == "" && v.RuleAsks() == "" {
		d.edit.Store(true)
	}
}

// note says how to let such calls run, or "" when none was denied: --yes
// for all of them, and --mode edit only where it would approve one
// (deletions and writes into .git ask in edit mode too; new user,
// 2026-12-03).
func (d *deniedCalls) note(mode policy.Mode) string {
	n := int(d.n.Load())
	if n == 0 {
		return ""
	}
	was := "were"
	if n == 1 {
		was = "was"
	}
	how := `brig -c -p "go on" --yes`
	if d.edit.Load() && mode != policy.ModeEdit && mode != policy.ModeAuto {
		how += " (or --mode edit, which approves file edits in the workspace)"
	}
	return fmt.Sprintf("%s needed your approval and %s denied: to let such calls run, go on with %s", count(n, "call"), was, how)
}

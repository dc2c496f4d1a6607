package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"brig/agent"
	"brig/agent/provider"
	"brig/agent/provider/connect"
	"brig/internal/checkpoint"
	"brig/internal/credentials"
	"brig/internal/session"
	"brig/policy"
)

// Exit statuses of `brig -p`.
const (
	exitOK           = 0
	exitFailed       = 1 // a provider or setup error ended the task
	exitBound        = 3 // the iteration bound was hit (a summary was printed)
	exitIncomplete   = 4 // the answer was cut by max_tokens or refused
	exitInterrupt    = 130
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
	Mode          string
	Yes, No       bool
	MaxIterations int
	Workspace     string
	Effort        string
	WebSearch     bool
	Compact       bool      // compact the (resumed) conversation before the prompt
	ModeSet       bool      // --mode was given (else a resumed session keeps its own)
	Continue      bool      // resume the latest session of this workspace
	Resume        string    // resume this session id
	Stdin         io.Reader // piped input, appended to the prompt; nil when a terminal
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
	CostUSD    float64        `json:"cost_usd"`
	// SessionCostUSD is the whole session's cost, resumed turns included.
	SessionCostUSD float64 `json:"session_cost_usd"`
	DurationMS     int64   `json:"duration_ms"`
	// Calls are this run's tool calls, each with the result as the model
	// received it.
	Calls []callRecord `json:"calls"`
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
	if o.Yes && o.No {
		return errors.New("--yes and --no contradict each other; give one")
	}
	if _, err := policy.ParseMode(o.Mode); err != nil {
		return err
	}
	switch provider.Effort(o.Effort) {
	case provider.EffortNone, provider.EffortMinimal, provider.EffortLow, provider.EffortMedium, provider.EffortHigh:
	default:
		return fmt.Errorf("--effort %q: want minimal, low, medium or high", o.Effort)
	}
	return nil
}

// defaultModel picks a model for the keys that are configured.
func defaultModel(creds credentials.Set, baseURL string) (string, error) {
	if _, ok := creds.Lookup(credentials.Anthropic); ok {
		return "claude-sonnet-4-5", nil
	}
	if _, ok := creds.Lookup(credentials.OpenAI); ok {
		return "gpt-5", nil
	}
	if baseURL != "" {
		return "", errors.New("--base-url needs --model (the name the server knows the model by)")
	}
	return "", nil
}

// nonInteractive answers Ask without a human: --yes allows once, --no (and
// the default) denies with a message telling the model why.
func nonInteractive(yes bool, stderr io.Writer) agent.Approver {
	return agent.ApproverFunc(func(_ context.Context, req agent.ApprovalRequest) (agent.Approval, error) {
		if yes {
			fmt.Fprintf(stderr, "brig: approved (--yes): %s — %s\n", req.Tool, req.Verdict.Reason)
			return agent.Approval{Answer: agent.AnswerOnce, By: "--yes"}, nil
		}
		fmt.Fprintf(stderr, "brig: denied (no one to ask; use --yes or --mode): %s — %s\n", req.Tool, req.Verdict.Reason)
		return agent.Approval{Answer: agent.AnswerDeny, By: "no one", Message: "this is a non-interactive run and the call needs approval; do without it or explain what you need"}, nil
	})
}

func runOneShot(ctx context.Context, o *agentOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	start := time.Now()
	prompt := o.Prompt
	if o.Stdin != nil {
		data, err := io.ReadAll(io.LimitReader(o.Stdin, 1<<20))
		if err != nil {
			return fmt.Errorf("read standard input: %w", err)
		}
		if len(data) > 0 {
			prompt += "\n\n<stdin>\n" + string(data) + "\n</stdin>"
		}
	}
	if strings.TrimSpace(prompt) == "" && !o.Compact {
		return errors.New("-p needs a prompt (or input on stdin)")
	}
	pr := newPrinter(o.Output, o.Stdout, o.Stderr)
	run, err := setupAgent(ctx, o, nonInteractive(o.Yes, o.Stderr), pr.event)
	if err != nil {
		return err
	}
	defer run.Close()
	a, model, mode, sess := run.Agent, run.Model, run.Policy.Mode(), run.Session
	if o.Compact {
		before := a.ContextUsed()
		if err := a.Compact(ctx); err != nil {
			return fmt.Errorf("--compact: %w", err)
		}
		fmt.Fprintf(o.Stderr, "brig: compacted session %s: about %d → %d tokens of context\n", sess.ID(), before, a.ContextUsed())
		if strings.TrimSpace(prompt) == "" {
			return nil
		}
	}
	tr, runErr := a.Run(ctx, []provider.Block{provider.Text(prompt)})
	sum := oneShotSummary{
		Result: tr.Text, Stop: tr.Stop, Session: sess.ID(), Model: model, Mode: mode, Iterations: tr.Iterations,
		ToolCalls: tr.ToolCalls, Usage: tr.Usage, CostUSD: tr.Cost, DurationMS: time.Since(start).Milliseconds(),
	}
	if runErr != nil {
		sum.Error = runErr.Error()
	}
	_, sum.SessionCostUSD = a.Totals()
	sum.Calls = pr.calls
	pr.finish(sum)
	switch {
	case tr.Stop == agent.StopInterrupted:
		return exitError{exitInterrupt}
	case runErr != nil:
		if o.Output == outputText {
			fmt.Fprintln(o.Stderr, "brig:", runErr)
		}
		return exitError{exitFailed}
	case tr.Stop == agent.StopBound:
		return exitError{exitBound}
	case tr.Stop == agent.StopCut || tr.Stop == agent.StopRefused:
		return exitError{exitIncomplete}
	}
	return nil
}

// openSession creates the run's session (st nil), or reopens the one
// --continue or --resume names, refusing a session of another workspace or
// a history the chosen provider cannot take back.
func openSession(ctx context.Context, o *agentOptions, stateDir, ws string, client *connect.Client) (*session.Session, *session.State, error) {
	store := session.NewStore(stateDir)
	id := o.Resume
	if o.Continue {
		latest, err := store.Latest(ctx, ws)
		if err != nil {
			return nil, nil, fmt.Errorf("--continue: %w", err)
		}
		id = latest.ID
	}
	if id == "" {
		s, err := store.Create(ctx, session.Header{Workspace: ws, Provider: client.Provider(), Model: client.Model.ID, Mode: policy.Mode(o.Mode)})
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

// recordChanges saves what differs, on resume, from the session as it was:
// the model, the mode, the system prompt.
func recordChanges(ctx context.Context, s *session.Session, st *session.State, client *connect.Client, mode policy.Mode, sys string) error {
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
	if len(recs) == 0 {
		return nil
	}
	return s.Append(ctx, recs...)
}

// printer writes a one-shot run's events in the chosen output format.
type printer struct {
	mu       sync.Mutex
	format   string
	out, err io.Writer
	enc      *json.Encoder
	midLine  bool
	calls    []callRecord // every finished call (for --output json)
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
	Cost  float64         `json:"cost_usd,omitempty"`
}

func (p *printer) event(ev agent.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Kind == agent.EventToolEnd {
		p.calls = append(p.calls, newCallRecord(*ev.Tool))
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
		rec := streamRecord{Type: string(ev.Kind), Text: ev.Text, Usage: ev.Usage, Cost: ev.Cost}
		if ev.Tool != nil {
			rec.ID, rec.Name, rec.Args = ev.Tool.ID, ev.Tool.Name, ev.Tool.Args
		}
		_ = p.enc.Encode(rec)
		return
	}
	if p.format != outputText {
		return
	}
	switch ev.Kind {
	case agent.EventText:
		fmt.Fprint(p.out, ev.Text)
		p.midLine = !strings.HasSuffix(ev.Text, "\n")
	case agent.EventToolEnd:
		if p.midLine {
			fmt.Fprintln(p.out)
			p.midLine = false
		}
		p.toolEnd(*ev.Tool)
	case agent.EventNotice:
		fmt.Fprintf(p.err, "brig: %s\n", ev.Text)
	}
}

// toolEnd shows a finished call on stderr: the call, then the last lines
// of a command's output or the first line of another tool's result.
func (p *printer) toolEnd(te agent.ToolEvent) {
	o := te.Outcome
	status := "ok"
	if o.Result.IsError {
		status = "error"
	}
	if c := o.Result.Meta.ExitCode; c != nil {
		status = fmt.Sprintf("exit %d", *c)
	}
	if !o.Changes.Empty() {
		status += " · " + shown(o.Changes.Summary())
	}
	fmt.Fprintf(p.err, "▸ %s %s — %s\n", te.Name, capString(string(te.Args), 160), status)
	text := strings.TrimRight(o.Result.Text, "\n")
	lines := strings.Split(text, "\n")
	if te.Name != "bash" {
		lines = lines[:1]
	} else if n := len(lines); n > maxShownLines {
		fmt.Fprintf(p.err, "  │ … %d earlier lines (the model received them; --output json has the whole result)\n", n-maxShownLines)
		lines = lines[n-maxShownLines:]
	}
	for _, l := range lines {
		if l != "" {
			fmt.Fprintf(p.err, "  │ %s\n", capString(l, 300))
		}
	}
}

// maxShownLines is how much of a command's output -p shows on stderr.
const maxShownLines = 12

func (p *printer) finish(s oneShotSummary) {
	p.mu.Lock()
	defer p.mu.Unlock()
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
		if p.midLine {
			fmt.Fprintln(p.out)
		}
		fmt.Fprintf(p.err, "brig: %s · %d requests, %d tool calls · %d in / %d out tokens · $%.4f (session %s: $%.4f) · %s\n",
			s.Stop, s.Iterations, s.ToolCalls, s.Usage.Input+s.Usage.CacheRead+s.Usage.CacheWrite, s.Usage.Output, s.CostUSD, s.Session, s.SessionCostUSD, time.Duration(s.DurationMS)*time.Millisecond)
	}
}

func capString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// stdinIfPiped returns standard input when it is not a terminal.
func stdinIfPiped() io.Reader {
	fi, err := os.Stdin.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice != 0 {
		return nil
	}
	return os.Stdin
}

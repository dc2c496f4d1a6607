package agent

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"brig/internal/auditlog"
	"brig/internal/checkpoint"
	"brig/internal/lazyre"
	"brig/internal/safefs"
	"brig/jail"
	"brig/policy"
	"brig/supervisor"
	"brig/tools"
)

// Runner runs one jailed call; *supervisor.Supervisor is one.
type Runner interface {
	Run(ctx context.Context, spec jail.Spec, inv jail.Invocation, stdio supervisor.IO) (jail.Result, error)
}

// modelPacer is a Runner that wants to know when the model is asked and
// when its answer is in (*supervisor.Supervisor: it tells calls that come
// at a model's pace from calls that come back to back, and starts its
// children accordingly).
type modelPacer interface {
	ModelAsked()
	ModelAnswered()
}

// The supervisor must stay a modelPacer: a method renamed or dropped would
// otherwise only stop the calls, silently.
var _ modelPacer = (*supervisor.Supervisor)(nil)

// modelAsked tells the Runner, if it wants to know, that a request to the
// model is leaving.
func (e *Executor) modelAsked() {
	// The model's answer is a round trip away: the shell analysis' tables
	// are built now, beside it, rather than by the first call's decision.
	e.prepared.Do(func() { go policy.Prepare() })
	if p, ok := e.Runner.(modelPacer); ok {
		p.ModelAsked()
	}
}

// modelAnswered tells the Runner, if it wants to know, that the model's
// answer (or its failure) is in.
func (e *Executor) modelAnswered() {
	if p, ok := e.Runner.(modelPacer); ok {
		p.ModelAnswered()
	}
}

// Answer is the user's decision on a call that needs approval.
type Answer string

// The answers. Session and Always also allow the rules the verdict proposes
// (Verdict.Always) for the rest of the session, and Always saves them to the
// user's rules for this workspace.
const (
	AnswerDeny    Answer = "deny"
	AnswerOnce    Answer = "once"
	AnswerSession Answer = "session"
	AnswerAlways  Answer = "always"
)

// Approval is the user's answer, with an optional message for the model
// (why it was denied, what to do instead).
type Approval struct {
	Answer  Answer
	Message string
	// By says who answered, for the audit log: "user" (the default),
	// "--yes", ByNoOne (a non-interactive run).
	By string
}

// ByNoOne is Approval.By when no one could be asked (a non-interactive
// run): a denial then tells the model the call was not approved (or was
// refused by the jail profile), not that the user refused it.
const ByNoOne = "no one"

// ApprovalRequest is what the user is asked about: the call, the decision
// and the exact grant it would run under.
type ApprovalRequest struct {
	ToolUseID string
	Tool      string
	Args      json.RawMessage
	Verdict   policy.Verdict
	Grant     *jail.Spec // nil for calls that run in no jail
	// Net is set when the question is a connection of a running call
	// (ToolUseID, Tool and Args are that call's): the egress proxy holds
	// it meanwhile. Verdict is then the decision on its host.
	Net *NetRequest
}

// Approver asks the user. It returns when the user answers or ctx is done.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (Approval, error)
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, req ApprovalRequest) (Approval, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req ApprovalRequest) (Approval, error) {
	return f(ctx, req)
}

// Outcome is how one tool call ended.
type Outcome struct {
	Result   tools.Result
	Verdict  *policy.Verdict // nil when the registry refused the call first
	Grant    *jail.Spec
	Approval *Approval // nil when no one was asked
	// Duration is the whole call, from its decision to its end. Waited is
	// the part of it spent waiting for the user's answers: to its approval,
	// and to the hosts it was asked about while it ran. What brig and the
	// call itself took is the difference (the TUI shows that).
	Duration, Waited time.Duration
	// Changes is what the call changed in the paths it could write (nil
	// when it could write nothing, or did not run).
	Changes *checkpoint.ChangeSet
	// Audit is the call's record in the audit log (nil: no log).
	Audit *auditlog.Ref
	// Net are the connections the call asked brig's egress proxy for,
	// allowed and refused.
	Net []jail.Connection
	// Err is an infrastructure failure (the jail could not run the call);
	// Result then says so to the model as an error.
	Err error

	// after waits for the snapshot after the call (checkpoint AfterLater),
	// between execute and ExecuteLater's completion; nil when none was taken.
	after func() (*checkpoint.ChangeSet, error)
}

// Executor runs the model's tool calls: the registry checks them, the
// policy decides, the user is asked where the tier is Ask, the decision is
// compiled into a jail Spec and the supervisor runs it. It never returns a
// Go error for something the model did: every call ends in a Result.
type Executor struct {
	Registry *tools.Registry
	Policy   *policy.Policy
	Runner   Runner
	Approver Approver
	Logger   *slog.Logger
	// Delegate runs the calls of tools.Delegated tools (task: a subagent
	// with its own context); nil refuses them.
	Delegate func(ctx context.Context, id string, args json.RawMessage) tools.Result
	// Checkpoints, when set, snapshots the paths a call may write before
	// it runs (the call does not run without it) and after (its change
	// set), for undo.
	Checkpoints *checkpoint.Store
	// Audit, when set, gets one record per call and per saved rule.
	Audit *auditlog.Log
	// Session names the session in checkpoints and audit records.
	Session string

	// prepared starts building the policy's tables once (modelAsked).
	prepared sync.Once

	mu   sync.Mutex
	plan tools.Plan
	// unaudited are call records whose write failed (keepUnaudited);
	// held, when set, is the executor that keeps them instead (a
	// subagent's is its main agent's).
	unaudited []auditlog.Record
	held      *Executor
	// netAsk lets one network question at a time reach the approver.
	netAsk chan struct{}
}

// Plan returns the current plan checklist (update_plan's state).
func (e *Executor) Plan() tools.Plan {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.plan
}

// Execute runs one tool call. Command output is copied to out as it
// arrives when out is not nil (the UI shows it live).
func (e *Executor) Execute(ctx context.Context, id, name string, args json.RawMessage, out io.Writer) Outcome {
	_, complete := e.ExecuteLater(ctx, id, name, args, out)
	return complete()
}

// ExecuteLater runs one call like Execute, but returns as soon as the call
// itself has ended, with what the model is told (the Result, the verdict,
// the grant); complete waits for the rest — the snapshot of what the call
// changed, walked in the background, and the call's audit record, written
// once it has its change set — and returns the whole Outcome. The next
// call's snapshot waits for this one's (the checkpoint store's lock is
// taken before ExecuteLater returns), so a call's result can go to the
// model while the walk of a large workspace goes on.
func (e *Executor) ExecuteLater(ctx context.Context, id, name string, args json.RawMessage, out io.Writer) (o Outcome, complete func() Outcome) {
	start := time.Now()
	o = e.execute(ctx, id, name, args, out)
	o.Duration = time.Since(start)
	if o.Err != nil {
		e.logger().Error("tool call failed to run", "tool", name, "id", id, "err", o.Err)
		o.Result = tools.Result{Text: fmt.Sprintf("brig could not run this call: %v", o.Err), IsError: true}
	}
	after := o.after
	o.after = nil
	done := make(chan Outcome, 1)
	go func() {
		full := o
		if after != nil {
			cs, err := after()
			if err != nil {
				e.logger().Warn("could not take the snapshot after a call; its change set is unknown", "tool", name, "id", id, "err", err)
			} else {
				full.Changes = cs
			}
		}
		full.Audit = e.auditCall(context.WithoutCancel(ctx), id, name, args, &full)
		done <- full
	}()
	return o, sync.OnceValue(func() Outcome { return <-done })
}

func (e *Executor) execute(ctx context.Context, id, name string, args json.RawMessage, out io.Writer) (o Outcome) {
	// A call of a group of read-only calls may run in one jail child with
	// the others (batch); any way out of here but joining lets them go on.
	slot := slotOf(ctx)
	defer slot.leave()
	ctx = withBatch(ctx, nil) // a subagent this call starts has batches of its own
	if e.Audit != nil {
		if err := e.auditPending(ctx); err != nil {
			o.Result = tools.Result{Text: fmt.Sprintf("brig did not run this call: the audit record of an earlier call could not be written (%v), and no call runs until it is. Stop and tell the user: they must free space where brig keeps its state (%s).", err, e.Audit.Dir()), IsError: true}
			return o
		}
	}
	mode := e.Policy.Mode()
	prep, refused := e.Registry.Prepare(mode, name, args)
	if refused != nil {
		o.Result = *refused
		return o
	}
	call := prep.Call
	v := e.Policy.Decide(call)
	o.Verdict = &v
	if v.Tier == policy.Deny {
		o.Result = tools.Result{Text: fmt.Sprintf("denied by brig's policy: %s. Do not retry this call; choose another way or explain what you need to the user.", v.Reason), IsError: true}
		return o
	}
	var spec *jail.Spec
	var callTmp string
	var askedTimeout time.Duration // what a bash call asked for, when the configured limit is shorter
	inJail := prep.Def.Runs == tools.InJail || prep.Def.Runs == tools.JailCommand
	if inJail {
		if !e.Policy.Namespaces() {
			// Named now for the grant, made only once the call is approved:
			// nothing is written while a call is being decided.
			callTmp = filepath.Join(os.TempDir(), "brig-call-"+rand.Text())
		}
		s, err := e.Policy.Compile(v, callTmp)
		if err != nil {
			o.Result = tools.Result{Text: fmt.Sprintf("this call cannot be granted: %v", err), IsError: true}
			return o
		}
		if prep.Def.Runs == tools.JailCommand {
			// The command's own timeout, within the configured limit.
			if a, err := tools.ParseBashArgs(args); err == nil {
				if s.Limits.Timeout <= 0 || a.Timeout() <= s.Limits.Timeout {
					s.Limits.Timeout = a.Timeout()
				} else {
					askedTimeout = a.Timeout() // the user's limit runs in its place
				}
			}
		}
		spec, o.Grant = &s, &s
	}
	if v.Tier == policy.Ask || prep.Def.Runs != tools.InJail || callTmp != "" || spec.Network || spec.Cache != nil {
		slot.leave() // before any question: the others do not wait for the user
	}
	if v.Tier == policy.Ask {
		asked := time.Now()
		ap, err := e.ask(ctx, ApprovalRequest{ToolUseID: id, Tool: name, Args: args, Verdict: v, Grant: spec})
		o.Waited += time.Since(asked)
		if err != nil {
			o.Result = interrupted(ctx, err)
			return o
		}
		o.Approval = &ap
		if ap.Answer == AnswerDeny || ap.Answer == "" {
			msg := "the user denied this call"
			if ap.By == ByNoOne {
				// No one was asked: say what happened, not that a user
				// refused.
				msg = "not approved"
				if len(v.Beyond) > 0 {
					msg = "refused by the " + string(v.Profile) + " jail profile"
				}
			}
			if ap.Message != "" {
				msg += ": " + ap.Message
			}
			o.Result = tools.Result{Text: msg + ". Do not retry it unchanged.", IsError: true}
			return o
		}
		if ap.Answer == AnswerSession || ap.Answer == AnswerAlways {
			if err := e.Policy.Remember(ctx, ap.Answer == AnswerAlways, v.Always...); err != nil {
				e.logger().Warn("could not remember the approval", "err", err)
			} else {
				e.auditRules(context.WithoutCancel(ctx), id, v.Always, ap.Answer == AnswerAlways)
			}
		}
	}
	if callTmp != "" {
		if err := os.Mkdir(callTmp, 0o700); err != nil { // exclusive: never one made by someone else
			o.Err = fmt.Errorf("per-call temporary directory: %w", err)
			return o
		}
		defer safefs.RemoveAllUnder(callTmp) // the call could write it: nothing in it is followed
	}
	switch prep.Def.Runs {
	case tools.InSupervisor:
		e.mu.Lock()
		o.Result = e.plan.Update(args)
		e.mu.Unlock()
		return o
	case tools.External:
		// An MCP tool: its server runs in its own jail (stdio) or
		// elsewhere (HTTP); the source calls it. What a stdio server may
		// write is snapshotted around the call, as a command's grant is,
		// so that undo puts back what the call changed (red team,
		// 2026-12-03: a server with write = ["."] clobbered a file that
		// brig changes and undo knew nothing of). What the server's own
		// processes write between calls is no call's.
		if g := prep.Def.Grant(); g != nil && e.Checkpoints != nil {
			if roots := writableRoots(g, nil, "", e.Policy.Machine.CacheRoot); len(roots) > 0 {
				cp, err := e.Checkpoints.Before(ctx, e.Session, id, name, roots)
				if err != nil {
					return notSnapshotted(ctx, o, err)
				}
				defer func() { o.after = cp.AfterLater(context.WithoutCancel(ctx)) }()
			}
		}
		o.Result = prep.Def.RunExternal(ctx, args)
		return o
	case tools.Delegated:
		if e.Delegate == nil {
			o.Result = tools.Result{Text: name + " is not available in this session", IsError: true}
			return o
		}
		o.Result = e.Delegate(ctx, id, args)
		return o
	}
	stdio := supervisor.IO{Stdout: out, Stderr: out}
	if spec.Network {
		d := e.netDecider(id, name, args)
		// Its questions are over once the call is (the proxy's session
		// ends with it).
		defer func() { o.Waited += d.waited() }()
		d.grant = spec
		if call.Effect == policy.EffectNetwork {
			d = d.fixedHost(call.Host, v)
		}
		stdio.Net = d
	}
	if prep.Def.Runs == tools.JailCommand {
		// The model's copy of the output is kept apart from the live one.
		stdio.Keep = supervisor.Keep{Head: tools.CommandHeadBytes, Tail: tools.CommandTailBytes}
	}
	// What the call may write is snapshotted before it runs — beside the
	// jail child's set-up, which the tool waits for anyway — and again
	// after it, however it ended.
	var (
		cp        *checkpoint.Pending
		beforeErr error
	)
	roots := writableRoots(spec, writeTargets(&v, prep.Def.Runs), callTmp, e.Policy.Machine.CacheRoot)
	if e.Checkpoints != nil && len(roots) > 0 {
		before := func() error {
			if cp != nil {
				return nil // a call run again (Supervisor.Run) keeps its first snapshot
			}
			cp, beforeErr = e.Checkpoints.Before(ctx, e.Session, id, name, roots)
			return beforeErr
		}
		if slot.open() {
			// A batch has no hook (its calls write nothing, so none gets
			// here); beforeErr below says if this failed.
			_ = before()
		} else {
			stdio.BeforeTool = before
		}
		defer func() {
			if cp != nil {
				o.after = cp.AfterLater(context.WithoutCancel(ctx)) // ExecuteLater waits for it
			}
		}()
	}
	var (
		res jail.Result
		err error
	)
	switch {
	case beforeErr != nil:
	case slot.open():
		var grant *jail.Spec
		if res, grant, err = slot.run(ctx, *spec, prep.Invocation); grant != nil {
			o.Grant = grant // the union it ran under
		}
	default:
		res, err = e.Runner.Run(ctx, *spec, prep.Invocation, stdio)
	}
	if beforeErr != nil {
		return notSnapshotted(ctx, o, beforeErr)
	}
	o.Net = res.Connections
	defer func() {
		// What the proxy refused, and what is allowed, for the model.
		if note := tools.NetworkNote(o.Net, e.Policy.AllowedHosts()); note != "" && o.Err == nil {
			o.Result.Text = strings.TrimRight(o.Result.Text, "\n") + "\n" + note
		}
	}()
	if prep.Def.Runs == tools.JailCommand {
		if err != nil {
			o.Err = err
			return o
		}
		o.Result = tools.CommandResult(res, spec, askedTimeout, StoppedBy(ctx))
		if n := repoLimitNote(e.Policy, res, o.Result.Text); n != "" {
			o.Result.Text = strings.TrimRight(o.Result.Text, "\n") + "\n" + n
		}
		return o
	}
	o.Result, o.Err = tools.FromJail(res, err)
	if o.Err == nil && o.Result.Meta.Redirect != "" {
		o.Result, o.Err = e.followRedirects(ctx, mode, name, args, call.Host, o.Result, &o.Net)
	}
	return o
}

// notSnapshotted is the outcome of a call not run because the snapshot
// before it failed: interrupted, or an error saying undo could not have
// put back what it changed.
func notSnapshotted(ctx context.Context, o Outcome, err error) Outcome {
	if ctx.Err() != nil {
		o.Result = interrupted(ctx, err)
		return o
	}
	o.Err = fmt.Errorf("%w; the call was not run (undo could not have put back what it changed)", err)
	return o
}

// repoLimitNote names the repository's config when the limit a command hit
// is one that config set (an untrusted one may lower limits): the model
// and the user must not take it for the user's own bound. A limit the
// kernel enforced reaches the command as a failed allocation or fork, not
// as a stop by brig, so the command's own words count too (a new user's
// python got MemoryError). "" otherwise.
func repoLimitNote(p *policy.Policy, res jail.Result, output string) string {
	if !slices.ContainsFunc(p.Layers, func(l policy.Layer) bool { return len(l.Limits) > 0 }) {
		return "" // the common case: no output to search
	}
	var limits []string
	switch {
	case res.TimedOut:
		limits = []string{"timeout"}
	case res.Limit != "":
		limits = []string{res.Limit}
	default:
		if reOutOfMemory().MatchString(output) {
			limits = append(limits, jail.LimitMemory)
		}
		if reNoFork().MatchString(output) {
			limits = append(limits, jail.LimitProcesses)
		}
	}
	for _, limit := range limits {
		set, layer, ok := p.RepoLimit(limit)
		if !ok {
			continue
		}
		how := "which the user trusted"
		if !layer.Trusted {
			how = "untrusted: a repository's config may lower limits, never raise them"
		}
		return fmt.Sprintf("[brig: this call's limit %s comes from the repository's own config, %s (%s), not from the user. If the task needs more, tell the user: they can change or remove it in that file]", set, layer.File, how)
	}
	return ""
}

// What commands print when an allocation or a fork failed.
var (
	reOutOfMemory = lazyre.New(`MemoryError|(?i)cannot allocate memory|out of memory|\bENOMEM\b|bad_alloc|memory allocation of \d+ bytes failed`)
	reNoFork      = lazyre.New(`(?i)fork: (retry: )?resource temporarily unavailable|can't start new thread|pthread_create failed|\bEAGAIN\b.*(fork|spawn|thread)`)
)

// reachKey is what a fetch of rawURL on host lets a redirect chain reach
// again without asking: the host, or for an address or localhost the host
// and port (an answer about those holds for one port: agent/net.go).
func reachKey(host, rawURL string) string {
	if !policy.NamesAddress(host) {
		return host
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL // never equal to another key
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443"}[u.Scheme]
		if port == "" {
			port = "80"
		}
	}
	return net.JoinHostPort(host, port)
}

// followRedirects follows a web_fetch redirect chain. Every hop is a new
// call decided by the policy: a host this chain was already allowed to
// reach, or one the policy allows without asking, is fetched in a new
// jail; any other host is not, and the model is told where the redirect
// points so it can ask for that URL itself.
func (e *Executor) followRedirects(ctx context.Context, mode policy.Mode, name string, args json.RawMessage, host string, res tools.Result, conns *[]jail.Connection) (tools.Result, error) {
	reached := map[string]bool{reachKey(host, res.Meta.URL): true}
	for hop := 1; res.Meta.Redirect != ""; hop++ {
		from, to := res.Meta.URL, res.Meta.Redirect
		if hop > tools.MaxFetchRedirects {
			return tools.Result{Text: fmt.Sprintf("stopped after %d redirects; the last one, from %s, pointed at %s", tools.MaxFetchRedirects, from, to), IsError: true, Meta: res.Meta}, nil
		}
		next, err := tools.RedirectArgs(args, to)
		if err != nil {
			return tools.Result{Text: fmt.Sprintf("%s redirected to %s, which cannot be fetched: %v", from, to, err), IsError: true, Meta: res.Meta}, nil
		}
		prep, refused := e.Registry.Prepare(mode, name, next)
		if refused != nil {
			return tools.Result{Text: fmt.Sprintf("%s redirected to %s, which cannot be fetched: %s", from, to, refused.Text), IsError: true, Meta: res.Meta}, nil
		}
		v := e.Policy.Decide(prep.Call)
		h := prep.Call.Host
		if v.Tier == policy.Deny || (v.Tier != policy.Allow && !reached[reachKey(h, to)]) {
			return tools.Result{Text: fmt.Sprintf("%s redirected to %s, on host %s, which this fetch may not reach (%s). The redirect was not followed. To fetch it, call web_fetch with that URL; the user may be asked to allow %s.", from, to, h, v.Reason, h), IsError: true, Meta: res.Meta}, nil
		}
		reached[reachKey(h, to)] = true
		spec, err := e.Policy.Compile(v, "")
		if err != nil {
			return tools.Result{Text: fmt.Sprintf("%s redirected to %s, which cannot be granted: %v", from, to, err), IsError: true, Meta: res.Meta}, nil
		}
		jr, err := e.Runner.Run(ctx, spec, prep.Invocation, supervisor.IO{Net: e.netDecider("", name, next).fixedHost(h, v)})
		*conns = append(*conns, jr.Connections...)
		if res, err = tools.FromJail(jr, err); err != nil {
			return res, err
		}
		args = next
	}
	return res, nil
}

func (e *Executor) ask(ctx context.Context, req ApprovalRequest) (Approval, error) {
	if e.Approver == nil {
		return Approval{Answer: AnswerDeny, Message: "no one can approve calls in this session"}, nil
	}
	return e.Approver.Approve(ctx, req)
}

// interrupted is the result of a call whose approval was cut short.
func interrupted(ctx context.Context, err error) tools.Result {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return tools.Result{Text: "interrupted by " + StoppedBy(ctx) + " before it ran", IsError: true}
	}
	return tools.Result{Text: fmt.Sprintf("not run: the approval failed: %v", err), IsError: true}
}

func (e *Executor) logger() *slog.Logger {
	if e.Logger != nil {
		return e.Logger
	}
	return slog.Default()
}

package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"brig/agent/provider"
	"brig/internal/auditlog"
	"brig/internal/checkpoint"
	"brig/jail"
	"brig/policy"
	"brig/tools"
)

// auditCall appends the audit record of one finished call and returns its
// reference (nil when there is no log or the append failed: the failure is
// logged, the call's result stands).
func (e *Executor) auditCall(ctx context.Context, id, name string, args json.RawMessage, o *Outcome) *auditlog.Ref {
	if e.Audit == nil {
		return nil
	}
	c := &auditlog.Call{
		ID: id, Tool: name, Args: auditlog.RedactArgs(args),
		IsError: o.Result.IsError, DurationMS: float64(o.Duration.Microseconds()) / 1000,
		ExitCode: o.Result.Meta.ExitCode, TimedOut: o.Result.Meta.TimedOut, Signal: o.Result.Meta.Signal,
		Denials: o.Result.Meta.Denials, Violations: o.Result.Meta.Violations,
		Grant: grantOf(o.Grant), Changes: changesOf(o.Changes),
	}
	for _, n := range o.Net {
		if len(c.Connections) == auditlog.MaxConnections {
			c.ConnectionsMore++
			continue
		}
		c.Connections = append(c.Connections, auditlog.Connection{Host: n.Host, Port: n.Port, Addr: n.Addr, Rule: n.Rule,
			Refused: n.Refused, Up: n.Up, Down: n.Down, DurationMS: float64(n.Duration.Microseconds()) / 1000})
	}
	if o.Err != nil {
		c.Error = o.Err.Error()
	}
	d := &c.Decision
	d.Mode = string(e.Policy.Mode())
	if v := o.Verdict; v != nil {
		d.Tier, d.Reason, d.Mode = string(v.Tier), v.Reason, string(v.Mode)
		for _, cv := range v.Commands {
			d.Commands = append(d.Commands, auditlog.Command{Words: auditlog.RedactString(strings.Join(cv.Words, " ")), Tier: string(cv.Tier), Reason: cv.Reason})
		}
	} else {
		d.Refused = o.Result.Text
	}
	if a := o.Approval; a != nil {
		d.Answer, d.AnsweredBy, d.Message = string(a.Answer), a.By, a.Message
		if d.AnsweredBy == "" {
			d.AnsweredBy = "user"
		}
	}
	rec := auditlog.Record{Kind: auditlog.KindCall, Session: e.Session, Workspace: e.Policy.Places.Workspace, Call: c}
	if err := e.auditPending(ctx); err != nil {
		e.keepUnaudited(rec, err)
		return nil
	}
	ref, err := e.Audit.Append(ctx, rec)
	if err != nil {
		e.keepUnaudited(rec, err)
		return nil
	}
	return &ref
}

// keepUnaudited holds a call's record whose write failed (a full disk,
// which the call itself may have filled to keep its record out): it is
// written before any later call runs (auditPending), saying it came late.
func (e *Executor) keepUnaudited(rec auditlog.Record, err error) {
	if e.held != nil {
		e.held.keepUnaudited(rec, err)
		return
	}
	e.logger().Warn("could not write the audit record of a call; no other call runs until it is written", "id", rec.Call.ID, "err", err)
	rec.Call.Late = fmt.Sprintf("written after later calls were tried: the first write failed (%v)", err)
	e.mu.Lock()
	e.unaudited = append(e.unaudited, rec)
	e.mu.Unlock()
}

// auditPending writes the records kept by keepUnaudited, in order, and
// reports the first failure: while one is unwritten, no call runs.
func (e *Executor) auditPending(ctx context.Context) error {
	if e.held != nil {
		return e.held.auditPending(ctx)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for len(e.unaudited) > 0 {
		if _, err := e.Audit.Append(ctx, e.unaudited[0]); err != nil {
			return err
		}
		e.unaudited = e.unaudited[1:]
	}
	return nil
}

// FlushAudit writes the records of calls whose first write failed, for a
// session that ends (brig tries once more before it exits).
func (e *Executor) FlushAudit(ctx context.Context) error {
	if e.Audit == nil {
		return nil
	}
	return e.auditPending(ctx)
}

// auditUnfinished records a call brig was stopped in the middle of (a
// crash, kill -9), found when the session is resumed: its own record was
// never written. brig changes and brig undo still have its checkpoint.
func (e *Executor) auditUnfinished(ctx context.Context, id, name string, args json.RawMessage) {
	e.appendCall(ctx, &auditlog.Call{ID: id, Tool: name, Args: auditlog.RedactArgs(args), IsError: true,
		Error: "brig stopped before this call finished (found when the session was resumed); how it was decided and what it did were not recorded"})
}

// auditNotRun records a call the loop answered without running it (its
// arguments cut off or not a JSON object, or one too many in an answer)
// as refused, with why, so that brig log shows every call the model made.
func (e *Executor) auditNotRun(ctx context.Context, id, name string, args json.RawMessage, why string) {
	c := &auditlog.Call{ID: id, Tool: name, Args: auditlog.RedactArgs(args), IsError: true}
	c.Decision.Mode, c.Decision.Refused = string(e.Policy.Mode()), why
	e.appendCall(ctx, c)
}

// appendCall writes the record of a call that never went through
// ExecuteLater.
func (e *Executor) appendCall(ctx context.Context, c *auditlog.Call) {
	if e.Audit == nil {
		return
	}
	if _, err := e.Audit.Append(ctx, auditlog.Record{Kind: auditlog.KindCall, Session: e.Session, Workspace: e.Policy.Places.Workspace, Call: c}); err != nil {
		e.logger().Warn("could not write the audit record of a call that did not run", "id", c.ID, "err", err)
	}
}

// auditUnrecorded writes the records a crash left out: brig was killed
// after the results of calls had been saved (they go back to the model as
// soon as each call ends) and before their audit records were written
// (ExecuteLater writes them once the snapshot after the call is taken).
// uses are the calls whose saved results came from Execute; those that
// have no record of this session in the log get one now, saying so.
func (e *Executor) auditUnrecorded(ctx context.Context, uses []provider.ToolUse) {
	if e.Audit == nil || len(uses) == 0 {
		return
	}
	recorded := map[string]bool{}
	err := e.Audit.Records(func(r auditlog.Record) error {
		if r.Kind == auditlog.KindCall && r.Session == e.Session && r.Call != nil {
			recorded[r.Call.ID] = true
		}
		return nil
	})
	if err != nil {
		e.logger().Warn("could not read the audit log for the records of the last calls", "err", err)
		return
	}
	for _, u := range uses {
		if recorded[u.ID] {
			continue
		}
		c := &auditlog.Call{ID: u.ID, Tool: u.Name, Args: auditlog.RedactArgs(u.Input), IsError: true,
			Error: "brig stopped after this call's result was saved and before its record was written (found when the session was resumed); what it changed is in brig changes, how it was decided was not recorded"}
		if _, err := e.Audit.Append(ctx, auditlog.Record{Kind: auditlog.KindCall, Session: e.Session, Workspace: e.Policy.Places.Workspace, Call: c}); err != nil {
			e.logger().Warn("could not write the audit record of a call whose record a crash left out", "id", u.ID, "err", err)
		}
	}
}

// auditRules records approval answers kept as rules.
func (e *Executor) auditRules(ctx context.Context, id string, rules []string, always bool) {
	if e.Audit == nil || len(rules) == 0 {
		return
	}
	rs := &auditlog.RuleSave{Rules: rules, Call: id}
	if always {
		rs.File = e.Policy.Files.User
	}
	if _, err := e.Audit.Append(ctx, auditlog.Record{Kind: auditlog.KindRule, Session: e.Session, Workspace: e.Policy.Places.Workspace, Rule: rs}); err != nil {
		e.logger().Warn("could not write the audit record of a saved rule", "err", err)
	}
}

// grantOf is the audit log's view of a jail Spec.
func grantOf(s *jail.Spec) *auditlog.Grant {
	if s == nil {
		return nil
	}
	g := &auditlog.Grant{Network: s.Network, UnixSockets: s.UnixSockets, PrivateTmp: s.PrivateTmp, Protected: len(s.Protected), Hidden: len(s.Hidden)}
	for _, r := range s.Paths {
		if r.Access == jail.Write {
			g.Write = append(g.Write, r.Path)
		} else {
			g.Read = append(g.Read, r.Path)
		}
	}
	return g
}

// changesOf is the audit log's view of a change set.
func changesOf(cs *checkpoint.ChangeSet) *auditlog.Changes {
	if cs == nil {
		return nil
	}
	c := &auditlog.Changes{Summary: cs.Summary(), Created: cs.Created, Modified: cs.Modified, Deleted: cs.Deleted,
		Dirs: cs.DirsCreated + cs.DirsChanged + cs.DirsDeleted, More: cs.More}
	for _, ch := range cs.Changes {
		if len(c.Paths) == auditlog.MaxPaths {
			c.More++
			continue
		}
		c.Paths = append(c.Paths, string(ch.Kind)+" "+ch.Path)
	}
	c.Excluded = append(c.Excluded, cs.ExcludedChanged...)
	return c
}

// writableRoots are the paths a call's grant lets it write that a
// checkpoint covers: every write grant but device nodes, the call's private
// temporary directories (gone when it ends) and brig's per-workspace
// toolchain cache (a cache: tools rebuild it). A file tool (brig's own code,
// which touches only the paths it names) granted a directory outside the
// workspace is covered by those paths (targets) rather than the whole
// directory, which may be large (a write to ~/notes/todo.md is granted
// ~/notes).
func writableRoots(s *jail.Spec, targets []string, callTmp, cacheRoot string) []string {
	if s == nil {
		return nil
	}
	var roots []string
	for _, r := range s.Paths {
		p := filepath.Clean(r.Path)
		switch {
		case r.Access != jail.Write:
		case within(p, "/dev"), within(p, "/proc"), within(p, "/sys"):
		case s.PrivateTmp && (p == "/tmp" || p == "/dev/shm"):
			// The call's own fresh tmpfs. A grant below them (a
			// workspace in /tmp) is the real directory, carried into
			// the call's view: its changes are snapshotted like any.
		case callTmp != "" && within(p, callTmp):
		case cacheRoot != "" && within(p, cacheRoot):
		case targets != nil && !within(p, s.Workspace):
			for _, t := range targets {
				if within(t, p) {
					roots = append(roots, t)
				}
			}
		default:
			roots = append(roots, p)
		}
	}
	return roots
}

// writeTargets are the paths a file tool's call writes (nil for a command,
// which may write anywhere its grant allows).
func writeTargets(v *policy.Verdict, runs tools.Runner) []string {
	if runs != tools.InJail || v == nil {
		return nil
	}
	targets := []string{}
	for _, pv := range v.Paths {
		if pv.Write {
			targets = append(targets, filepath.Clean(pv.Resolved))
		}
	}
	return targets
}

func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"brig/internal/auditlog"
	"brig/internal/session"
	"brig/internal/suggest"
)

// logOptions are the inputs of `brig log`.
type logOptions struct {
	Session string
	Tool    string
	Tier    string
	Kind    string
	Since   string
	JSON    bool
	procEnv
}

// logVerifyOptions are the inputs of `brig log verify`.
type logVerifyOptions struct {
	JSON bool
	procEnv
}

func newLogCmd(runF func(context.Context, *logOptions) error) *cobra.Command {
	o := &logOptions{}
	cmd := &cobra.Command{
		Use:   "log",
		Short: "Show the audit log: every tool call, who allowed it and under which grant; trust, mode and rule changes; undos",
		Long: `Every tool call appends one record to ~/.local/state/brig/audit/audit.jsonl
(outside every jail): its arguments (secrets redacted), the policy's decision
and the rule behind it, who answered, the jail's grant, how it ended, what it
changed and what the jail refused it. Trust changes, mode changes, saved rules
and undos are recorded too. Each record holds the hash of the one before it;
brig log verify checks the chain.`,
		Example: "  brig log --since 2h\n  brig log --tool bash --tier ask\n  brig log --session 2026-11-22-ab12cd --json\n  brig log verify",
		Args:    cobra.NoArgs,
		RunE:    commandRun(o, &o.procEnv, nil, runF, runLog),
	}
	f := cmd.Flags()
	f.StringVar(&o.Session, "session", "", "only this session's records")
	f.StringVar(&o.Tool, "tool", "", "only calls of this tool")
	f.StringVar(&o.Tier, "tier", "", "only calls the policy decided so: allow, ask or deny")
	f.StringVar(&o.Kind, "kind", "", "only records of this kind: call, undo, trust, mode, rule")
	f.StringVar(&o.Since, "since", "", "only records since a time: a duration back (2h, 30m) or a date (2026-11-22, RFC 3339)")
	f.BoolVar(&o.JSON, "json", false, "print the records as JSON lines, as stored")
	cmd.AddCommand(newLogVerifyCmd(nil))
	return cmd
}

func newLogVerifyCmd(runF func(context.Context, *logVerifyOptions) error) *cobra.Command {
	o := &logVerifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check the audit log's hash chain (and the heads sessions kept) and say where it breaks",
		Args:  cobra.NoArgs,
		RunE:  commandRun(o, &o.procEnv, nil, runF, runLogVerify),
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the report as JSON")
	return cmd
}

// parseSince reads --since: a duration back from now, a date or a time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02 15:04", time.DateOnly} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q: give a duration (2h, 30m) or a date (2026-11-22, 2026-11-22T15:04, RFC 3339)", s)
}

func runLog(ctx context.Context, o *logOptions) error {
	since, err := parseSince(o.Since, time.Now())
	if err != nil {
		return err
	}
	switch o.Tier {
	case "", "allow", "ask", "deny":
	default:
		return fmt.Errorf("--tier %q: want allow, ask or deny", o.Tier)
	}
	switch auditlog.Kind(o.Kind) {
	case "", auditlog.KindCall, auditlog.KindUndo, auditlog.KindTrust, auditlog.KindMode, auditlog.KindRule:
	default:
		return fmt.Errorf("--kind %q: want call, undo, trust, mode or rule", o.Kind)
	}
	// A session is its whole id or the six hex digits after the date,
	// as elsewhere (new user: --session 4d0a3a matched nothing, quietly).
	short := session.IsShortID(o.Session)
	if o.Session != "" && !short {
		if err := session.ValidateID(o.Session); err != nil {
			return fmt.Errorf("--session: %w", err)
		}
	}
	l := auditLog(dirsFor(o.procEnv).State)
	n := 0
	tools := map[string]bool{}
	sessionSeen := false
	err = l.Records(func(r auditlog.Record) error {
		if r.Call != nil {
			tools[r.Call.Tool] = true
		}
		if o.Session != "" && (r.Session == o.Session || short && strings.HasSuffix(r.Session, "-"+o.Session)) {
			sessionSeen = true
		}
		if !r.Time.After(since) && !since.IsZero() ||
			o.Session != "" && r.Session != o.Session && !(short && strings.HasSuffix(r.Session, "-"+o.Session)) ||
			o.Kind != "" && string(r.Kind) != o.Kind ||
			o.Tool != "" && (r.Call == nil || r.Call.Tool != o.Tool) ||
			o.Tier != "" && (r.Call == nil || r.Call.Decision.Tier != o.Tier) {
			return nil
		}
		n++
		if o.JSON {
			b, err := json.Marshal(struct {
				auditlog.Record
				Hash string `json:"hash"`
			}{r, r.Hash})
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(o.Stdout, "%s\n", b)
			return err
		}
		printRecord(o.Stdout, r)
		return nil
	})
	if err != nil {
		return err
	}
	if n == 0 && !o.JSON {
		fmt.Fprintf(o.Stderr, "brig: no audit records match (the log is %s)\n", l.Path())
		if o.Tool != "" && !tools[o.Tool] {
			// --tool bsh: say so, and what the log does hold.
			fmt.Fprintf(o.Stderr, "brig: the log has no call of a tool %q%s; its calls are of %s\n", o.Tool, nearest(o.Tool, slices.Sorted(maps.Keys(tools))), strings.Join(slices.Sorted(maps.Keys(tools)), ", "))
		}
		if o.Session != "" && !sessionSeen {
			// --session 123456: no such session at all, not a filter
			// that left nothing (new user, 2026-12-03).
			fmt.Fprintf(o.Stderr, "brig: the log has no record of a session %q (brig sessions list shows this workspace's; a removed session's records stay in the log)\n", o.Session)
		}
	}
	return nil
}

// printRecord prints one record on one or two lines.
func printRecord(w io.Writer, r auditlog.Record) {
	head := fmt.Sprintf("%6d  %s  %-19s", r.Seq, r.Time.Local().Format("2006-01-02 15:04:05"), r.Session)
	switch {
	case r.Call != nil:
		c := r.Call
		d := c.Decision
		how := d.Tier
		switch {
		case d.Tier == "" && d.Refused == "" && c.Error != "":
			how = "unfinished"
		case d.Tier == "":
			how = "refused"
		case d.Answer != "":
			how += fmt.Sprintf(" → %s by %s", d.Answer, d.AnsweredBy)
		}
		var end []string
		if c.ExitCode != nil {
			end = append(end, fmt.Sprintf("exit %d", *c.ExitCode))
		} else if c.IsError {
			end = append(end, "error")
		}
		if c.Changes != nil && c.Changes.Summary != "" {
			end = append(end, c.Changes.Summary)
		}
		if len(c.Denials) > 0 {
			end = append(end, fmt.Sprintf("%d refused by the jail", len(c.Denials)))
		}
		fmt.Fprintf(w, "%s  %-12s %s  %s\n", head, c.Tool, how, strings.Join(end, " · "))
		fmt.Fprintf(w, "        %s\n", shown(capString(string(c.Args), 200)))
		switch {
		case d.Reason != "":
			fmt.Fprintf(w, "        why: %s\n", shown(capString(d.Reason, 200)))
		case d.Refused != "":
			fmt.Fprintf(w, "        why: %s\n", shown(capString(d.Refused, 200)))
		case c.Error != "":
			fmt.Fprintf(w, "        error: %s\n", shown(capString(c.Error, 200)))
		}
	case r.Undo != nil:
		fmt.Fprintf(w, "%s  undo (%s)   calls %s: %d restored, %d removed\n", head, r.Undo.By, strings.Join(r.Undo.Calls, ", "), r.Undo.Restored, r.Undo.Removed)
	case r.Trust != nil:
		fmt.Fprintf(w, "%s  %s %s   %s %s\n", head, r.Trust.Action, r.Trust.What, shown(r.Trust.File), r.Trust.SHA256)
	case r.Mode != nil:
		fmt.Fprintf(w, "%s  mode         %s → %s\n", head, r.Mode.From, r.Mode.To)
	case r.Rule != nil:
		where := "for the session"
		if r.Rule.File != "" {
			where = "saved in " + shown(r.Rule.File)
		}
		fmt.Fprintf(w, "%s  rule         %s %s\n", head, shown(strings.Join(r.Rule.Rules, ", ")), where)
	default:
		fmt.Fprintf(w, "%s  %s\n", head, r.Kind)
	}
}

func runLogVerify(ctx context.Context, o *logVerifyOptions) error {
	state := dirsFor(o.procEnv).State
	l := auditLog(state)
	var anchors []auditlog.Anchor
	head, ok, err := l.Head()
	if err != nil {
		fmt.Fprintf(o.Stderr, "brig: warning: %v\n", err)
	}
	if ok {
		anchors = append(anchors, auditlog.Anchor{Ref: head, Source: "the head file " + l.Dir() + "/" + auditlog.HeadName})
	}
	list, problems, err := session.NewStore(state).List(ctx, session.Filter{})
	if err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintf(o.Stderr, "brig: warning: skipped %s\n", p.Err)
	}
	for _, s := range list {
		if s.Audit != nil {
			anchors = append(anchors, auditlog.Anchor{Ref: auditlog.Ref{Seq: s.Audit.Seq, Hash: s.Audit.Hash}, Source: "session " + s.ID})
		}
	}
	rep, err := l.Verify(anchors)
	if err != nil {
		return err
	}
	if o.JSON {
		if err := writeSessionsJSON(o.Stdout, struct {
			*auditlog.Report
			OK bool `json:"ok"`
		}{rep, rep.OK()}); err != nil {
			return err
		}
	} else {
		printVerify(o.Stdout, rep)
	}
	if !rep.OK() {
		return exitError{1}
	}
	return nil
}

func printVerify(w io.Writer, rep *auditlog.Report) {
	if rep.OK() {
		if rep.Records == 0 {
			fmt.Fprintf(w, "brig: the audit log %s is empty (nothing was recorded yet)\n", rep.Path)
			return
		}
		fmt.Fprintf(w, "brig: the audit log is intact: %d records (%d to %d), head %d %.16s…, checked against %s kept elsewhere\n",
			rep.Records, rep.First, rep.Head.Seq, rep.Head.Seq, rep.Head.Hash, count(rep.Anchors, "head"))
	} else {
		fmt.Fprintf(w, "brig: the audit log %s was changed after it was written. The chain breaks at %s\n", rep.Path, rep.Problems[0])
		for _, p := range rep.Problems[1:] {
			fmt.Fprintf(w, "  also: %s\n", p)
		}
	}
	if rep.Torn > 0 {
		fmt.Fprintf(w, "  the last line is incomplete (%d bytes: brig was stopped while writing it); the records before it are whole, and the next record replaces it\n", rep.Torn)
	}
}

// nearest is " (did you mean X?)" for the known name closest to got, or "".
func nearest(got string, known []string) string {
	if best := suggest.Closest(got, known, 2); best != "" {
		return fmt.Sprintf(" (did you mean %s?)", best)
	}
	return ""
}

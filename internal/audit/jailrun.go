package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"brig/internal/audit/collect"
	"brig/jail"
	"brig/policy"
	"brig/supervisor"
)

// Runner runs one jailed call; *supervisor.Supervisor is one.
type Runner interface {
	Run(ctx context.Context, spec jail.Spec, inv jail.Invocation, stdio supervisor.IO) (jail.Result, error)
}

// CollectSpec is the grant of the collector, compiled by the policy like
// any read of the workspace: the workspace readable, nothing writable, no
// network. A rule of the user's that denies or asks before reading the
// workspace is an error that names it (nobody is there to ask).
func CollectSpec(p *policy.Policy) (jail.Spec, error) {
	v := p.Decide(policy.Call{Tool: CollectTool, Effect: policy.EffectRead, Read: []string{p.Places.Workspace}})
	switch v.Tier {
	case policy.Deny:
		return jail.Spec{}, fmt.Errorf("reading the workspace is denied: %s", v.Reason)
	case policy.Ask:
		return jail.Spec{}, fmt.Errorf("reading the workspace needs approval (%s), and brig audit asks no one; allow it with a Read rule", v.Reason)
	}
	spec, err := p.Compile(v, "")
	if err != nil {
		return jail.Spec{}, fmt.Errorf("compile the collector's grant: %w", err)
	}
	return spec, nil
}

// checkReadOnly refuses a Spec that would let the collector write or reach
// the network: collection must not be able to change anything or send
// anything anywhere, whatever compiled the Spec.
func checkReadOnly(spec jail.Spec) error {
	if spec.Network {
		return errors.New("the collector's grant has the network; it must have none")
	}
	if i := slices.IndexFunc(spec.Paths, func(r jail.PathRule) bool { return r.Access != jail.Read }); i >= 0 {
		return fmt.Errorf("the collector's grant has %s access to %s; it may only read", spec.Paths[i].Access, spec.Paths[i].Path)
	}
	return nil
}

// Collect runs the collector in the jail under spec (see CollectSpec) and
// returns what it gathered.
func Collect(ctx context.Context, run Runner, spec jail.Spec, lim Limits) (*Collection, error) {
	if err := checkReadOnly(spec); err != nil {
		return nil, err
	}
	spec.Limits.OutputBytes = lim.OutputBytes()
	args, err := json.Marshal(lim)
	if err != nil {
		return nil, err
	}
	res, err := run.Run(ctx, spec, jail.Invocation{Tool: CollectTool, Args: args}, supervisor.IO{})
	var se *jail.StageError
	switch {
	case res.Canceled || ctx.Err() != nil:
		return nil, context.Canceled
	case res.TimedOut:
		return nil, fmt.Errorf("collecting the workspace timed out after %s", spec.Limits.Timeout)
	case errors.As(err, &se) && se.Stage == jail.StageTool:
		return nil, fmt.Errorf("the collector failed: %s", se.Msg)
	case err != nil:
		return nil, fmt.Errorf("collect the workspace in the jail: %w", err)
	case res.ExitCode != 0 || len(res.Output) == 0:
		return nil, fmt.Errorf("the collector ended with status %d and no result: %s", res.ExitCode, firstLine(string(res.Stderr)))
	case res.StdoutTruncated:
		return nil, fmt.Errorf("the collection outgrew its %d-byte stream; lower --max-bytes", spec.Limits.OutputBytes)
	}
	var sum collect.Summary
	if err := json.Unmarshal(res.Output, &sum); err != nil {
		return nil, fmt.Errorf("the collector's summary: %w", err)
	}
	c, err := ReadCollection(res.Stdout)
	if err != nil {
		return nil, err
	}
	if len(c.Files) != sum.Files {
		return nil, fmt.Errorf("the collector reported %d files but sent %d", sum.Files, len(c.Files))
	}
	return c, nil
}

// FilterDenied moves the files a rule of the user's denies reading (such
// as Read(./secrets/**)) from the files sent to the skipped ones.
func FilterDenied(p *policy.Policy, c *Collection) {
	kept := c.Files[:0]
	for _, f := range c.Files {
		v := p.Decide(policy.Call{Tool: CollectTool, Effect: policy.EffectRead, Read: []string{f.Path}})
		if v.Tier == policy.Deny {
			c.Skipped = append(c.Skipped, Skip{Path: f.Path, Reason: collect.ReasonDenied, Bytes: f.Bytes, Detail: v.Reason})
			continue
		}
		kept = append(kept, f)
	}
	c.Files = kept
}

// SkipReports moves brig audit's own earlier output from the files sent
// to the skipped ones: the files this run's reports will replace (--out,
// --sarif; workspace-relative paths), and Markdown or SARIF files that
// begin as its reports do, wherever an earlier run put them. The model
// would read their old findings as the repository's. Only such files are
// left out, so a repository that makes a file look like a report hides
// nothing that runs.
func SkipReports(c *Collection, reports []string) {
	kept := c.Files[:0]
	for _, f := range c.Files {
		if slices.Contains(reports, f.Path) || looksLikeReport(f) {
			c.Skipped = append(c.Skipped, Skip{Path: f.Path, Reason: collect.ReasonOwnReport, Bytes: f.Bytes})
			continue
		}
		kept = append(kept, f)
	}
	c.Files = kept
}

// looksLikeReport reports whether f is a Markdown report or SARIF log
// that brig audit wrote (report.go, sarif.go).
func looksLikeReport(f File) bool {
	switch strings.ToLower(path.Ext(f.Path)) {
	case ".md":
		return strings.HasPrefix(f.Text, "# brig audit: ")
	case ".sarif", ".json":
		head := f.Text[:min(len(f.Text), 4096)]
		return strings.Contains(head, `"fullName": "brig audit"`) || strings.Contains(head, `"fullName":"brig audit"`)
	}
	return false
}

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}

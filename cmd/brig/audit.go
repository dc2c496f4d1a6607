package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"brig/agent"
	"brig/agent/provider"
	"brig/agent/provider/anthropic"
	"brig/agent/provider/connect"
	"brig/agent/provider/openai"
	"brig/internal/audit"
	"brig/internal/credentials"
	"brig/policy"
	"brig/supervisor"
	"brig/tools"
)

// Exit statuses of `brig audit` (2 is bad usage, as everywhere).
const (
	auditExitFindings = 1 // findings at or above --fail-on
	auditExitFailed   = 3 // the audit could not be completed
)

type auditOptions struct {
	Path         string
	Focus        []string
	FailOn       string
	Out          string
	SARIF        string
	Model        string
	BaseURL      string
	MaxBytes     int64
	MaxFileBytes int64
	ChunkTokens  int
	Parallel     int
	procEnv
	// Executable is the brig binary the jail re-executes (tests use the
	// test binary); empty means /proc/self/exe.
	Executable string
	// TTY says stderr is a terminal (the progress bar); nil asks the OS.
	TTY *bool
}

func newAuditCmd() *cobra.Command {
	o := &auditOptions{}
	lim := audit.DefaultLimits()
	cmd := &cobra.Command{
		Use:   "audit [PATH]",
		Short: "Review a repository with a model that is offered no tools (Markdown and SARIF report)",
		Long: `Review a repository before you trust it. The files are collected in a read-only
jail with no network; vendored, generated, binary, lock and huge files are
skipped and secret-looking values are redacted before anything is sent. The
model is offered no tools: it only reads what brig sends and answers with
findings. The report says exactly what was sent to which provider.`,
		Args: atMostOneArg("PATH (the repository or a directory in it)"),
		RunE: commandRun(o, &o.procEnv, func(args []string) {
			if len(args) == 1 {
				o.Path = args[0]
			}
		}, nil, runAudit),
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.Focus, "focus", nil, "what to review: security, supply-chain, correctness (repeatable or comma-separated; default all)")
	f.StringVar(&o.FailOn, "fail-on", "", "exit with status 1 when a finding is at least this severe: high, medium or low")
	f.StringVar(&o.Out, "out", "", "write the Markdown report to this file in the workspace (checked by the policy like any write) instead of standard output")
	f.StringVar(&o.SARIF, "sarif", "", "also write the findings as SARIF 2.1.0 to this file in the workspace, or - for standard output (for GitHub code scanning)")
	f.StringVar(&o.Model, "model", "", "model id (default: as for brig -p)")
	f.StringVar(&o.BaseURL, "base-url", "", "API endpoint (any OpenAI-compatible server)")
	f.Int64Var(&o.MaxBytes, "max-bytes", lim.MaxTotalBytes, "send at most this many bytes of file text (build and install files first)")
	f.Int64Var(&o.MaxFileBytes, "max-file-bytes", lim.MaxFileBytes, "skip files larger than this")
	f.IntVar(&o.ChunkTokens, "chunk-tokens", 0, "the most one request may carry, in estimated tokens (default: from the model's context window)")
	f.IntVar(&o.Parallel, "parallel", 3, "parts of a large repository reviewed at once")
	return cmd
}

func runAudit(ctx context.Context, o *auditOptions) error {
	focus, err := audit.ParseFocus(o.Focus)
	if err != nil {
		return err
	}
	var failOn audit.Severity
	if o.FailOn != "" {
		if failOn, err = audit.ParseSeverity(o.FailOn); err != nil {
			return fmt.Errorf("--fail-on: %w", err)
		}
	}
	switch {
	case o.MaxBytes <= 0 || o.MaxFileBytes <= 0:
		return errors.New("--max-bytes and --max-file-bytes must be positive")
	case o.Parallel <= 0:
		return errors.New("--parallel must be at least 1")
	case o.ChunkTokens < 0:
		return errors.New("--chunk-tokens must not be negative")
	case o.SARIF == "-" && o.Out == "":
		return errors.New("--sarif - puts the SARIF log on standard output, where the Markdown report goes too; give --out FILE for the report")
	}
	tty := isTerminal(os.Stderr)
	if o.TTY != nil {
		tty = *o.TTY
	}
	meter := audit.NewMeter(o.Stderr, tty)
	defer meter.Done()

	// The provider, the workspace, its policy and the jail.
	dirs := dirsFor(o.procEnv)
	creds, err := credentials.Load(o.Env, dirs)
	if err != nil {
		return err
	}
	// The repository's own .brig/config.toml counts only once trusted: the
	// review is for deciding whether to trust it, and a repository must
	// not be able to stop its review (a malformed file), narrow it (deny
	// rules) or starve it (lowered limits). The file is reviewed like any
	// other.
	wc, err := loadConfigs(o.procEnv, o.Path, false)
	if err != nil {
		return err
	}
	if home := canonicalHome(o.Home); home != "" && within(home, wc.Workspace) {
		return fmt.Errorf("%s contains your home directory; audit a project directory", wc.Workspace)
	}
	model := o.Model
	if model == "" {
		model = wc.Loaded.Agent.Model
	}
	if model == "" {
		if model, err = defaultModel(creds, o.BaseURL); err != nil {
			return err
		}
		if model == "" {
			return credentials.None(dirs, o.Env)
		}
	}
	client, err := connect.New(connect.Config{Model: model, BaseURL: o.BaseURL, Env: o.Env, Credentials: creds})
	if err != nil {
		return err
	}
	sup, err := supervisor.New(ctx, supervisor.Options{Executable: o.Executable, ExecutableFunc: carriedPath, Programs: carriedPrograms, QuarantineDir: dirs.State + "/quarantine"})
	if err != nil {
		return err
	}
	defer sup.Close()
	wp, err := wc.policy(o.procEnv, policy.ModeAsk, sup.Namespaces, false)
	if err != nil {
		return err
	}
	// The report's files are checked before anything is sent: a path the
	// policy refuses fails now, not after the review was paid for.
	writer := &reportWriter{ex: &agent.Executor{Registry: tools.NewRegistry(), Policy: wp.Policy, Runner: sup, Approver: explicitPath{}}}
	var reports []string // workspace-relative, as the collection names files
	for _, p := range []struct{ flag, path string }{{"--out", o.Out}, {"--sarif", o.SARIF}} {
		if p.path == "" || p.path == "-" {
			continue
		}
		abs, err := writer.check(p.path)
		if err != nil {
			return fmt.Errorf("%s %s: %w", p.flag, p.path, err)
		}
		if rel, err := filepath.Rel(wp.Workspace, abs); err == nil {
			reports = append(reports, filepath.ToSlash(rel))
		}
	}

	// Collect in the jail: read-only, no network. The provider's
	// connection is opened meanwhile (nothing of the repository is sent).
	go openConnection(ctx, client)
	spec, err := audit.CollectSpec(wp.Policy)
	if err != nil {
		return err
	}
	meter.Say("collecting %s in a read-only jail with no network", wp.Workspace)
	lim := audit.Limits{MaxFileBytes: o.MaxFileBytes, MaxTotalBytes: o.MaxBytes, MaxSkipped: audit.DefaultLimits().MaxSkipped}
	col, err := audit.Collect(ctx, sup, spec, lim)
	if err != nil {
		if ctx.Err() != nil {
			return exitError{code: interruptCode(ctx)}
		}
		fmt.Fprintln(o.Stderr, "brig audit:", err)
		return exitError{auditExitFailed}
	}
	audit.FilterDenied(wp.Policy, col)
	// A report an earlier run wrote is not reviewed: the model would read
	// its own old findings as the repository's.
	audit.SkipReports(col, reports)
	endpoint := client.BaseURL
	if endpoint == "" {
		endpoint = defaultEndpoint(client.Provider())
	}
	values, in := col.Redactions()
	skipped := count(len(col.Skipped), "entry")
	if len(col.Skipped) != 1 {
		skipped = fmt.Sprintf("%d entries", len(col.Skipped))
	}
	meter.Say("sending %s (%s; %s redacted in %s; %s skipped) to %s, model %s, at %s; no tools are offered",
		count(len(col.Files), "file"), audit.Size(col.Bytes()), count(values, "secret-looking value"), count(in, "file"), skipped, client.Provider(), client.Model.ID, endpoint)

	// Review.
	rep, err := audit.Review(ctx, audit.Config{
		Client: client, Model: client.Model, Endpoint: endpoint, Focus: focus,
		ChunkTokens: o.ChunkTokens, Parallel: o.Parallel, Progress: meter.Update, Repo: filepath.Base(wp.Workspace),
	}, col)
	meter.Done()
	if err != nil {
		if rep != nil {
			fmt.Fprintf(o.Stderr, "brig audit: before it stopped, %s\n", rep.Stopped())
		}
		if ctx.Err() != nil {
			return exitError{code: interruptCode(ctx)}
		}
		fmt.Fprintln(o.Stderr, "brig audit:", err)
		return exitError{auditExitFailed}
	}

	// The report.
	md := rep.Markdown()
	if o.Out != "" {
		if err := writer.write(ctx, o.Out, md); err != nil {
			fmt.Fprintf(o.Stderr, "brig audit: --out %s: %v\n", o.Out, err)
			return exitError{auditExitFailed}
		}
		fmt.Fprintf(o.Stderr, "brig audit: report written to %s\n", o.Out)
	} else {
		fmt.Fprint(o.Stdout, md)
	}
	if o.SARIF != "" {
		data, err := rep.SARIF(brigVersion())
		switch {
		case err != nil:
		case o.SARIF == "-":
			_, err = o.Stdout.Write(data)
		default:
			err = writer.write(ctx, o.SARIF, string(data))
		}
		if err != nil {
			fmt.Fprintf(o.Stderr, "brig audit: --sarif %s: %v\n", o.SARIF, err)
			return exitError{auditExitFailed}
		}
		if o.SARIF != "-" {
			fmt.Fprintf(o.Stderr, "brig audit: SARIF written to %s\n", o.SARIF)
		}
	}
	c := rep.Counts()
	fmt.Fprintf(o.Stderr, "brig audit: %d high, %d medium, %d low · %s · %d in / %d out tokens · $%.4f · %s\n",
		c[audit.High], c[audit.Medium], c[audit.Low], count(rep.Requests, "request"), rep.Usage.Input+rep.Usage.CacheRead+rep.Usage.CacheWrite, rep.Usage.Output, rep.Cost, rep.Duration.Round(1e8))
	if failOn != "" {
		if n := rep.AtLeast(failOn); n > 0 {
			fmt.Fprintf(o.Stderr, "brig audit: %s at or above %s (--fail-on)\n", count(n, "finding"), failOn)
			return exitError{auditExitFindings}
		}
	}
	return nil
}

// defaultEndpoint is where a provider's requests go without a base URL.
func defaultEndpoint(p provider.Name) string {
	if p == provider.Anthropic {
		return anthropic.DefaultBaseURL
	}
	return openai.DefaultBaseURL
}

// reportWriter writes the report's files as the write_file tool does:
// decided by the policy, run in a jail that may write that file's
// directory and nothing else (protected paths stay read-only).
type reportWriter struct{ ex *agent.Executor }

// check refuses a path the policy denies (protected, secret, brig's own),
// and returns the path resolved.
func (w *reportWriter) check(path string) (string, error) {
	args, err := json.Marshal(map[string]string{"path": path, "content": ""})
	if err != nil {
		return "", err
	}
	prep, refused := w.ex.Registry.Prepare(w.ex.Policy.Mode(), string(tools.WriteFile), args)
	if refused != nil {
		return "", errors.New(refused.Text)
	}
	v := w.ex.Policy.Decide(prep.Call)
	if v.Tier == policy.Deny {
		return "", fmt.Errorf("refused by brig's policy: %s", v.Reason)
	}
	resolved := ""
	for _, pv := range v.Paths {
		if pv.Class != policy.ClassWorkspace {
			return "", fmt.Errorf("refused: the report is written inside the workspace only (%s is not); redirect standard output to put it elsewhere", pv.Resolved)
		}
		resolved = pv.Resolved
	}
	return resolved, nil
}

func (w *reportWriter) write(ctx context.Context, path, content string) error {
	args, err := json.Marshal(map[string]string{"path": path, "content": content})
	if err != nil {
		return err
	}
	o := w.ex.Execute(ctx, "report", string(tools.WriteFile), args, nil)
	if o.Err != nil {
		return o.Err
	}
	if o.Result.IsError {
		return errors.New(strings.TrimSpace(o.Result.Text))
	}
	return nil
}

// explicitPath approves the write of a report: the user named the path
// on the command line, and check kept it inside the workspace. Only what
// the policy would ask about comes here; what it denies never does.
type explicitPath struct{}

func (explicitPath) Approve(context.Context, agent.ApprovalRequest) (agent.Approval, error) {
	return agent.Approval{Answer: agent.AnswerOnce}, nil
}

// brigVersion is this build's version for the SARIF log.
func brigVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "devel+" + s.Value[:12]
		}
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	return "devel"
}

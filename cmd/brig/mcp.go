package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"mvdan.cc/sh/v3/syntax"

	"brig/internal/auditlog"
	"brig/internal/mcp"
	"brig/policy"
	"brig/supervisor"
	"brig/tools"
)

// mcpListOptions are the inputs of `brig mcp list`.
type mcpListOptions struct {
	JSON      bool
	Workspace string
	procEnv
	// Executable is the brig binary the jail re-executes (tests).
	Executable string
}

// mcpTrustOptions are the inputs of `brig mcp trust`.
type mcpTrustOptions struct {
	Revoke    bool
	Yes       bool
	Workspace string
	procEnv
	confirmIn
}

func newMCPCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "MCP servers: list them with their status and tools, trust a workspace's .mcp.json",
		Long: `MCP servers are configured in [mcp.servers.NAME] tables of
~/.config/brig/config.toml or of your rules file for a workspace. Stdio
servers run as long-lived jailed children (the workspace read-only, no
network and only the environment you configured for them, unless the
server's table grants more); HTTP servers are called from brig itself.
Their tools are named SERVER__TOOL and asked about like any call unless an
Mcp(SERVER__TOOL) rule allows them.`,
	}
	cmd.AddCommand(newMCPListCmd(nil), newMCPTrustCmd())
	return commandGroup(cmd)
}

func newMCPListCmd(runF func(context.Context, *mcpListOptions) error) *cobra.Command {
	o := &mcpListOptions{}
	cmd := &cobra.Command{
		Use:        "list",
		SuggestFor: []string{"ls"},
		Short:      "Start the configured MCP servers and show their status, jail and tools",
		Args:       cobra.NoArgs,
		RunE:       commandRun(o, &o.procEnv, nil, runF, runMCPList),
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the servers as JSON")
	cmd.Flags().StringVar(&o.Workspace, "workspace", "", "workspace root (default: the enclosing git root, or the current directory)")
	return cmd
}

func newMCPTrustCmd() *cobra.Command {
	o := &mcpTrustOptions{}
	run := commandRun(o, &o.procEnv, nil, nil, runMCPTrust)
	cmd := &cobra.Command{
		Use:   "trust",
		Short: "Use this workspace's .mcp.json (pinned to its current content)",
		Long: `A workspace's .mcp.json comes with the repository: brig never starts
its servers until you trust it. brig mcp trust shows every server it defines
(command, arguments, environment, grants), asks, and pins the file's
SHA-256; one changed byte makes it untrusted again. Without a terminal it
pins only with --yes. Its servers still run jailed, with the defaults or the
grants they ask for.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.confirmIn = stdinConfirm(cmd)
			return run(cmd, args)
		},
	}
	cmd.Flags().BoolVar(&o.Revoke, "revoke", false, "forget the trust in this workspace's .mcp.json")
	cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "trust without asking (for scripts: review the file first)")
	cmd.Flags().StringVar(&o.Workspace, "workspace", "", "workspace root (default: the enclosing git root, or the current directory)")
	return cmd
}

// loadMCPConfig reads the MCP servers of a workspace whose policy is open.
func loadMCPConfig(pe procEnv, wp *workspacePolicy) (mcp.Config, error) {
	repoTrusted := false
	for _, l := range wp.Policy.Layers {
		if l.Kind == "repository" && l.Exists && l.Trusted {
			repoTrusted = true
		}
	}
	return mcp.Load(mcp.Sources{Files: wp.Files, RepoTrusted: repoTrusted, TrustStore: mcp.TrustStorePath(wp.Dirs.Config), Env: pe.Env})
}

// nativeToolNames are the names an MCP tool may never take.
func nativeToolNames() []string {
	var out []string
	for _, d := range tools.NewRegistry().Definitions() {
		out = append(out, string(d.Name))
	}
	return out
}

// startMCP starts a workspace's servers for a session (nil when none is
// configured) and prints what is not available.
// mcpWait is how long a session waits for its MCP servers before it goes
// on without the slow ones.
const mcpWait = 3 * time.Second

func startMCP(ctx context.Context, pe procEnv, wp *workspacePolicy, sup *supervisor.Supervisor) (*mcp.Manager, error) {
	cfg, err := loadMCPConfig(pe, wp)
	if err != nil {
		return nil, err
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(pe.Stderr, "brig: warning: %s\n", w)
	}
	if len(cfg.Servers) == 0 {
		return nil, nil
	}
	// What a server runs from the workspace is no call's to rewrite.
	wp.Policy.ProtectPrograms(mcp.Programs(cfg, wp.Workspace))
	// A slow server does not hold the session up: after a short wait the
	// run goes on, and its tools join when it is ready.
	late := func(name, err string) {
		if err != "" {
			fmt.Fprintf(pe.Stderr, "brig: warning: MCP server %s failed: %s\n", name, err)
		} else {
			fmt.Fprintf(pe.Stderr, "brig: MCP server %s is ready; its tools are offered from the next request\n", name)
		}
	}
	m := mcp.Start(ctx, cfg, mcp.Options{Starter: sup, Policy: wp.Policy, Native: nativeToolNames(), Logger: slog.New(slog.DiscardHandler), Wait: mcpWait, Late: late})
	for _, w := range m.Warnings() {
		fmt.Fprintf(pe.Stderr, "brig: warning: %s\n", w)
	}
	for _, name := range m.Starting() {
		fmt.Fprintf(pe.Stderr, "brig: MCP server %s is still starting after %s; going on without its tools until it is ready\n", name, mcpWait)
	}
	return m, nil
}

// mcpListReport is the JSON of `brig mcp list`.
type mcpListReport struct {
	Workspace string              `json:"workspace"`
	Servers   []mcp.ServerStatus  `json:"servers"`
	MCPJSON   mcp.JSONState       `json:"mcp_json"`
	Warnings  []string            `json:"warnings,omitempty"`
	Mode      map[string][]string `json:"offered"` // tool names offered per brig mode
}

func runMCPList(ctx context.Context, o *mcpListOptions) error {
	sup, err := supervisor.New(ctx, supervisor.Options{Executable: o.Executable, ExecutableFunc: carriedPath, Programs: carriedPrograms})
	if err != nil {
		return err
	}
	defer sup.Close()
	wp, err := openPolicy(o.procEnv, o.Workspace, policy.ModeAsk, sup.Namespaces())
	if err != nil {
		return err
	}
	cfg, err := loadMCPConfig(o.procEnv, wp)
	if err != nil {
		return err
	}
	m := mcp.Start(ctx, cfg, mcp.Options{Starter: sup, Policy: wp.Policy, Native: nativeToolNames(), Logger: slog.New(slog.DiscardHandler)})
	defer m.Close()
	rep := mcpListReport{Workspace: wp.Workspace, Servers: m.Status(), MCPJSON: cfg.MCPJSON, Warnings: cfg.Warnings, Mode: map[string][]string{}}
	reg := tools.NewRegistry()
	reg.AddSource(m)
	for _, mode := range policy.Modes() {
		names := []string{}
		for _, d := range reg.Advertised(mode) {
			if d.Runs == tools.External {
				names = append(names, string(d.Name))
			}
		}
		rep.Mode[string(mode)] = names
	}
	if o.JSON {
		enc := json.NewEncoder(o.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printMCPList(o.Stdout, rep)
	}
	// A server that could not start, or an entry dropped as invalid, is a
	// failure a script must see: the list is printed all the same.
	if slices.ContainsFunc(rep.Servers, func(s mcp.ServerStatus) bool { return s.State == mcp.StateFailed }) || mcp.InvalidServers(rep.Warnings) > 0 {
		return exitError{1}
	}
	return nil
}

func printMCPList(w io.Writer, rep mcpListReport) {
	if n := mcp.InvalidServers(rep.Warnings); len(rep.Servers) == 0 && n > 0 {
		fmt.Fprintf(w, "No MCP server can start for %s: %s dropped as invalid (the warnings below say what to fix)\n", rep.Workspace, plural(n, "the configured entry was", "the %d configured entries were"))
	} else if len(rep.Servers) == 0 {
		fmt.Fprintln(w, "No MCP servers are configured for", rep.Workspace)
		fmt.Fprintln(w, "Add one to ~/.config/brig/config.toml, for example:")
		fmt.Fprintln(w, "  [mcp.servers.files]")
		fmt.Fprintln(w, `  command = "mcp-server-filesystem"`)
		fmt.Fprintln(w, `  args = ["."]`)
	}
	for i, s := range rep.Servers {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s  %s  mode %s  %s\n", s.Name, s.Transport, s.Mode, s.State)
		fmt.Fprintf(w, "  from: %s\n", s.Source)
		switch s.Transport {
		case mcp.Stdio:
			fmt.Fprintf(w, "  command: %s\n", shellWords(append([]string{s.Command}, s.Args...)))
			ws := "read-only"
			for _, p := range s.Write {
				if p == "." || p == rep.Workspace {
					ws = "writable"
				}
			}
			net := "off"
			if s.Network {
				net = "on"
			}
			fmt.Fprintf(w, "  jail: workspace %s, network %s", ws, net)
			if len(s.Read) > 0 {
				fmt.Fprintf(w, ", read %s", strings.Join(s.Read, " "))
			}
			if len(s.Write) > 0 {
				fmt.Fprintf(w, ", write %s", strings.Join(s.Write, " "))
			}
			if len(s.EnvKeys) > 0 {
				fmt.Fprintf(w, ", env %s", strings.Join(s.EnvKeys, " "))
			}
			fmt.Fprintln(w)
		case mcp.HTTP:
			fmt.Fprintf(w, "  url: %s", s.URL)
			if len(s.HeaderKeys) > 0 {
				fmt.Fprintf(w, " (headers %s)", strings.Join(s.HeaderKeys, " "))
			}
			fmt.Fprintln(w)
		}
		if s.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", s.Error)
		}
		for _, t := range s.Tools {
			if t.Refused != "" {
				fmt.Fprintf(w, "  - %s  REFUSED: %s\n", t.Name, t.Refused)
				continue
			}
			fmt.Fprintf(w, "  - %s  %s\n", t.Name, shortLine(t.Description, 80))
		}
	}
	if rep.MCPJSON.Exists {
		state := "not trusted, so its servers are not started (review it, then run `brig mcp trust`)"
		if rep.MCPJSON.Trusted {
			state = "trusted"
		}
		fmt.Fprintf(w, "\n%s: %s\n", rep.MCPJSON.Path, state)
	}
	for _, warn := range rep.Warnings {
		if rep.MCPJSON.Exists && !rep.MCPJSON.Trusted && strings.HasPrefix(warn, rep.MCPJSON.Path+" is not trusted") {
			continue // the line above says it (a new user read it twice)
		}
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	if len(rep.Servers) > 0 {
		fmt.Fprintf(w, "\nIn plan mode: %s\n", orNone(rep.Mode[string(policy.ModePlan)]))
	}
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "no MCP tools (only read_only servers' tools are offered)"
	}
	return strings.Join(names, ", ")
}

func shortLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return s
}

func runMCPTrust(ctx context.Context, o *mcpTrustOptions) error {
	wp, err := openPolicy(o.procEnv, o.Workspace, policy.ModeAsk, false)
	if err != nil {
		return err
	}
	store := mcp.TrustStorePath(wp.Dirs.Config)
	path := mcp.MCPJSONPath(wp.Workspace)
	if o.Revoke {
		if err := mcp.UntrustMCPJSON(ctx, store, wp.Workspace); err != nil {
			return err
		}
		fmt.Fprintf(o.Stdout, "brig: %s is untrusted: its servers are not started\n", path)
		return auditTrust(ctx, wp.Dirs.State, wp.Workspace, auditlog.Trust{File: path, Action: "revoke", What: "mcp"})
	}
	r, err := mcp.ReviewMCPJSON(wp.Workspace)
	if err != nil {
		return err
	}
	w := o.Stdout
	fmt.Fprintf(w, "%s (sha256 %s) comes with the repository; brig starts none of its servers until you trust it.\n", path, r.SHA256)
	if len(r.Servers) == 0 {
		fmt.Fprintln(w, "It defines no server brig would start.")
	} else {
		fmt.Fprintln(w, "Trusting it starts these servers with every session of this workspace (each stdio server in its own jail):")
		for _, s := range r.Servers {
			printServer(w, s, "  ")
		}
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	if err := confirm(o.procEnv, o.confirmIn, o.Yes, "Trust this file as it is now, and start these servers?", "brig mcp trust --yes"); err != nil {
		return err
	}
	if err := mcp.PinMCPJSON(ctx, store, wp.Workspace, r.SHA256); err != nil {
		return err
	}
	if err := auditTrust(ctx, wp.Dirs.State, wp.Workspace, auditlog.Trust{File: path, SHA256: r.SHA256, Action: "trust", What: "mcp"}); err != nil {
		return err
	}
	fmt.Fprintf(w, "brig: trusted %s (sha256 %s)\n", path, r.SHA256)
	fmt.Fprintln(w, "Any change to the file makes it untrusted again; `brig mcp trust --revoke` undoes this.")
	return nil
}

// plural is one when n is 1, else many with n in it.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return fmt.Sprintf(many, n)
}

// shellWords shows a command line as a shell would take it back, each word
// quoted where it needs to be: an argument with a space read as two.
func shellWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		s, err := syntax.Quote(w, syntax.LangBash)
		if err != nil {
			s = strconv.Quote(w) // a NUL byte, which no shell word holds
		}
		q[i] = s
	}
	return strings.Join(q, " ")
}

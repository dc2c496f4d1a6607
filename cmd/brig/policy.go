package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"brig/jail"
	"brig/policy"
	"brig/tools"
)

// policyCheckOptions are the inputs of `brig policy check`.
type policyCheckOptions struct {
	Mode       string
	JSON       bool
	Tool       string
	Paths      []string
	Host       string
	AllowHosts []string
	Workspace  string
	Command    string
	AddDirs    []string
	procEnv
	// Namespaces says whether the jail has a mount namespace here; nil
	// detects it.
	Namespaces func(context.Context) bool
}

func newPolicyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Explain the permission policy of this workspace",
	}
	cmd.AddCommand(newPolicyCheckCmd(), newPolicyShowCmd())
	commandGroup(cmd)
	// brig policy alone shows the policy; a word after it is a
	// subcommand, and an unknown one is named (commandGroup's RunE).
	unknown := cmd.RunE
	show := newPolicyShowCmd()
	cmd.Flags().AddFlagSet(show.Flags())
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return unknown(c, args)
		}
		return show.RunE(c, args)
	}
	return cmd
}

func newPolicyCheckCmd() *cobra.Command {
	o := &policyCheckOptions{}
	cmd := &cobra.Command{
		Use:   "check [flags] -- 'COMMAND LINE'  |  check --tool NAME --path P",
		Short: "Explain the decision on a command line or a tool call: tier, rule, commands, paths and the jail grant",
		Example: `  brig policy check -- 'go test ./... && git push'
  brig policy check --mode plan --json -- 'make build > out.log'
  brig policy check --tool write_file --path .git/hooks/pre-commit
  brig policy check --host registry.npmjs.org      # a command's connection to a host
  brig policy check --host localhost --allow-host localhost`,
		RunE: commandRun(o, &o.procEnv, func(args []string) { o.Command = strings.Join(args, " ") }, nil, runPolicyCheck),
	}
	f := cmd.Flags()
	f.SetInterspersed(false)
	f.StringVar(&o.Mode, "mode", "", "mode to decide in: plan, ask, edit or auto (default: [agent] mode of your config, else ask)")
	f.BoolVar(&o.JSON, "json", false, "print the decision as JSON")
	f.StringVar(&o.Tool, "tool", "", "check a tool call instead of a command line (read_file, write_file, edit_file, list_directory, web_fetch …)")
	f.StringArrayVar(&o.Paths, "path", nil, "a `PATH` the tool call touches (repeatable)")
	f.StringVar(&o.Host, "host", "", "the host a connection reaches (alone: a command's connection through brig's proxy; with --tool web_fetch: that fetch)")
	f.StringArrayVar(&o.AllowHosts, "allow-host", nil, "decide as brig -p --allow-host `HOST` would; repeatable")
	f.StringVar(&o.Workspace, "workspace", "", "workspace root (default: the enclosing git root, or the current directory)")
	f.StringArrayVar(&o.AddDirs, "add-dir", nil, "decide as brig -p --add-dir `DIR` would (DIR:ro to read only); repeatable")
	return cmd
}

// toolEffect is a tool's effect, from the native tool registry.
func toolEffect(name string) (policy.Effect, bool) {
	if name == "web_fetch" {
		return policy.EffectNetwork, true
	}
	d, ok := tools.NewRegistry().Lookup(name)
	return d.Effect, ok
}

// checkCall builds the call a check describes.
func (o *policyCheckOptions) checkCall() (policy.Call, error) {
	if o.Host != "" {
		// A pattern here was judged as a host and the answer offered
		// --allow-host *, which brig refuses.
		if err := policy.CheckHost(o.Host); err != nil {
			return policy.Call{}, fmt.Errorf("--host: %w", err)
		}
	}
	if o.Tool == "" && o.Host != "" && strings.TrimSpace(o.Command) == "" {
		// A command's connection through the egress proxy: the decision
		// the proxy asks the policy for (the same as web_fetch's).
		return policy.Call{Tool: "bash", Effect: policy.EffectNetwork, Host: o.Host}, nil
	}
	if o.Tool == "" || o.Tool == "bash" {
		if strings.TrimSpace(o.Command) == "" {
			return policy.Call{}, errors.New("nothing to check: give a command line after --, --tool NAME --path P, or --host HOST (a connection through brig's proxy)")
		}
		return policy.Call{Tool: "bash", Effect: policy.EffectExec, Command: o.Command}, nil
	}
	if o.Command != "" {
		return policy.Call{}, fmt.Errorf("--tool %s takes --path or --host, not a command line", o.Tool)
	}
	if slices.Contains(o.Paths, "") {
		return policy.Call{}, errors.New("--path is empty: give the path the tool call names (e.g. --path src/main.go)")
	}
	eff, ok := toolEffect(o.Tool)
	if !ok && !strings.Contains(o.Tool, "__") {
		var names []string
		for _, d := range tools.NewRegistry().Definitions() {
			names = append(names, string(d.Name))
		}
		if !slices.Contains(names, "web_fetch") {
			names = append(names, "web_fetch") // the supervisor's own, where the registry leaves it out
		}
		return policy.Call{}, fmt.Errorf("unknown tool %q (native tools: %s; MCP tools are SERVER__TOOL)", o.Tool, strings.Join(names, ", "))
	}
	if !ok {
		eff = policy.EffectMCP
	}
	c := policy.Call{Tool: o.Tool, Effect: eff, Host: o.Host, Confirm: o.Tool == "delete_path", Programs: o.Tool == "search_code"}
	switch eff {
	case policy.EffectRead:
		c.Read = o.Paths
	case policy.EffectWrite:
		c.Write = o.Paths
		if o.Tool == "move_path" || o.Tool == "copy_path" {
			if len(o.Paths) != 2 {
				return policy.Call{}, fmt.Errorf("%s takes two --path flags: source and destination", o.Tool)
			}
			c.Read, c.Write = o.Paths[:1], o.Paths[1:]
			if o.Tool == "move_path" {
				c.Write = o.Paths
			}
		}
	case policy.EffectNetwork:
		if o.Host == "" {
			return policy.Call{}, errors.New("web_fetch needs --host")
		}
	}
	if (eff == policy.EffectRead || eff == policy.EffectWrite) && len(o.Paths) == 0 {
		return policy.Call{}, fmt.Errorf("%s needs at least one --path", o.Tool)
	}
	return c, nil
}

// checkReport is the JSON of `policy check`.
type checkReport struct {
	Tier     policy.Tier             `json:"tier"`
	Reason   string                  `json:"reason"`
	Mode     policy.Mode             `json:"mode"`
	Call     policy.Call             `json:"call"`
	Commands []policy.CommandVerdict `json:"commands"`
	Paths    []policy.PathVerdict    `json:"paths"`
	Always   []string                `json:"always,omitempty"`
	Profile  policy.JailProfile      `json:"profile"`
	Beyond   []policy.Beyond         `json:"beyond,omitempty"`
	Grant    *jail.Spec              `json:"grant"`
	// ReadsOnly: every command of the line only reads, so the grant
	// holds nothing of the user's writable (policy.Verdict.ReadsOnly).
	ReadsOnly bool                `json:"reads_only,omitempty"`
	Net       *policy.NetDecision `json:"net,omitempty"`
	Layers    []policy.Layer      `json:"config"`
	Warnings  []string            `json:"warnings,omitempty"`
}

func runPolicyCheck(ctx context.Context, o *policyCheckOptions) error {
	if o.Mode == "" {
		wc, err := loadWorkspaceConfig(o.procEnv, o.Workspace)
		if err != nil {
			return err
		}
		o.Mode = cmp.Or(string(wc.Loaded.Agent.Mode), string(policy.ModeAsk))
	}
	mode, err := policy.ParseMode(o.Mode)
	if err != nil {
		return err
	}
	call, err := o.checkCall()
	if err != nil {
		return err
	}
	detect := o.Namespaces
	if detect == nil {
		detect = func(ctx context.Context) bool { return jail.DetectFeatures(ctx).Namespaces() }
	}
	wp, err := openPolicy(o.procEnv, o.Workspace, mode, detect(ctx))
	if err != nil {
		return err
	}
	if err := addDirs(wp.Policy, o.AddDirs, o.procEnv); err != nil {
		return err
	}
	if err := wp.Policy.AllowHosts(o.AllowHosts...); err != nil {
		return err
	}
	v := wp.Policy.Decide(call)
	rep := checkReport{
		Tier: v.Tier, Reason: v.Reason, Mode: v.Mode, Call: v.Call, Commands: v.Commands,
		Paths: v.Paths, Always: v.Always, Profile: v.Profile, Beyond: v.Beyond, Layers: wp.Policy.Layers,
		Net: v.Net, ReadsOnly: v.ReadsOnly,
	}
	for _, w := range wp.Policy.Warnings {
		rep.Warnings = append(rep.Warnings, w.String())
	}
	rep.Warnings = append(rep.Warnings, wp.Policy.ProtectedRuleWarnings()...)
	if v.Tier != policy.Deny && v.Call.Effect != policy.EffectNone && v.Call.Effect != policy.EffectMCP && !(v.Call.Effect == policy.EffectNetwork && v.Call.Tool == "bash") {
		tmp := ""
		if !wp.Policy.Namespaces() {
			tmp = os.TempDir() + "/brig-call-XXXX" // shown only; a real call creates its own
		}
		spec, err := wp.Policy.Compile(v, tmp)
		if err != nil {
			rep.Warnings = append(rep.Warnings, "no grant: "+err.Error())
		} else {
			spec.Env = envNames(spec.Env)
			rep.Grant = &spec
		}
	}
	if o.JSON {
		enc := json.NewEncoder(o.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printCheck(o, rep)
	return nil
}

// envNames keeps only the names of an environment: values can be long and
// personal.
func envNames(env []string) []string {
	out := make([]string, len(env))
	for i, kv := range env {
		out[i], _, _ = strings.Cut(kv, "=")
	}
	return out
}

func printCheck(o *policyCheckOptions, r checkReport) {
	w := o.Stdout
	fmt.Fprintf(w, "tier:    %s\nreason:  %s\nmode:    %s — runs without asking: %s\nprofile: %s — %s\n", r.Tier, r.Reason, r.Mode, policy.Approves(r.Mode), r.Profile, r.Profile.Describe())
	for _, b := range r.Beyond {
		fmt.Fprintf(w, "beyond the profile: %s\n  to allow it: %s\n", b.What, b.Hint())
	}
	if len(r.Commands) > 0 {
		fmt.Fprintln(w, "commands:")
		for _, c := range r.Commands {
			extra := ""
			if len(c.Via) > 0 {
				extra = " (via " + strings.Join(c.Via, ", ") + ")"
			}
			if c.Dir != "" {
				extra += " in " + c.Dir
			}
			fmt.Fprintf(w, "  %-5s %s%s — %s\n", c.Tier, strings.Join(c.Words, " "), extra, c.Reason)
		}
	}
	if len(r.Paths) > 0 {
		fmt.Fprintln(w, "paths:")
		for _, p := range r.Paths {
			rw := "read "
			if p.Write {
				rw = "write"
			}
			fmt.Fprintf(w, "  %-5s %s %s → %s [%s] — %s\n", p.Tier, rw, p.Given, p.Resolved, p.Class, p.Reason)
			if p.Entry != "" && p.EntryReason != "" {
				fmt.Fprintf(w, "        list entry: %s (%s)\n", p.Entry, p.EntryReason)
			} else if p.Entry != "" {
				fmt.Fprintf(w, "        list entry: %s\n", p.Entry)
			}
		}
	}
	if n := r.Net; n != nil {
		fmt.Fprintf(w, "host:    %s — %s\n", n.Host, n.Tier)
		if n.Rule != "" {
			fmt.Fprintf(w, "  decided by %s\n", n.Rule)
		}
		if n.Named {
			fmt.Fprintln(w, "  a rule names this host exactly: it may also reach loopback, private and link-local addresses")
		} else {
			fmt.Fprintln(w, "  public addresses only: loopback, private and link-local ones need a rule naming the host exactly")
		}
		if n.Tier == policy.Ask {
			fmt.Fprintln(w, "  a connection to it is held while the user is asked; a run that cannot ask (brig -p, brig sandbox) refuses it")
		}
	}
	if r.Grant != nil {
		fmt.Fprintln(w, "grant (the jail Spec this call would run under):")
		if r.ReadsOnly {
			fmt.Fprintln(w, "  every command only reads: the workspace and the added directories are read-only for this call, and no undo snapshot is taken")
		}
		writeGrant(w, *r.Grant, "  ")
	}
	if len(r.Always) > 0 {
		fmt.Fprintf(w, "always allow would save: %s\n", strings.Join(r.Always, ", "))
	}
	writeLayers(w, r.Layers)
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}

// writeLayers lists the config files, each with its state, what of an
// untrusted one is ignored and the limits it sets or lowers.
func writeLayers(w io.Writer, layers []policy.Layer) {
	fmt.Fprintln(w, "config:")
	for _, l := range layers {
		state := "missing"
		switch {
		case l.Exists && l.Trusted:
			state = "in effect"
		case l.Exists:
			state = "UNTRUSTED: " + l.Applies() + " (run `brig trust` to accept it)"
		}
		fmt.Fprintf(w, "  %-10s %s (%s)\n", l.Kind, l.File, state)
		for _, ig := range l.Ignored {
			fmt.Fprintf(w, "             ignored: %s\n", ig)
		}
		if n := l.LimitsNote(); n != "" {
			fmt.Fprintf(w, "             %s\n", n)
		}
	}
}

// policyShowOptions are the inputs of `brig policy show` (and of `brig
// policy` alone).
type policyShowOptions struct {
	Workspace string
	procEnv
}

func newPolicyShowCmd() *cobra.Command {
	o := &policyShowOptions{}
	cmd := &cobra.Command{
		Use:   "show",
		Short: "List the modes, the rules in force with the file and line of each, and the config files (brig policy alone does the same)",
		Args:  cobra.NoArgs,
		RunE:  commandRun(o, &o.procEnv, nil, nil, runPolicyShow),
	}
	cmd.Flags().StringVar(&o.Workspace, "workspace", "", "workspace root (default: the enclosing git root, or the current directory)")
	return cmd
}

// runPolicyShow prints what decides this workspace's calls: each mode with
// what it runs without asking and its jail, the rules from the user's
// files and a trusted repository config (a stricter tier wins: deny, then
// ask, then allow), the config files and their state, and the warnings
// loading them gave.
func runPolicyShow(ctx context.Context, o *policyShowOptions) error {
	wp, err := openPolicy(o.procEnv, o.Workspace, policy.ModeAsk, jail.DetectFeatures(ctx).Namespaces())
	if err != nil {
		return err
	}
	w := o.Stdout
	fmt.Fprintf(w, "workspace: %s\n", wp.Policy.Places.Workspace)
	start := fmt.Sprintf("%s unless given", policy.ModeAsk)
	if m := wp.Policy.Agent.Mode; m != "" {
		start = fmt.Sprintf("%s unless given: [agent] mode of your config", m)
	}
	fmt.Fprintf(w, "modes (--mode; %s):\n", start)
	for _, m := range policy.Modes() {
		fmt.Fprintf(w, "  %-5s runs without asking: %s; jail: %s\n", m, policy.Approves(m), policy.ProfileOf(m))
	}
	type shown struct{ tier, rule, where string }
	var list []shown
	width := 0
	rules := wp.Policy.Rules
	for _, t := range []struct {
		tier  string
		rules []policy.Rule
	}{{"deny", rules.Deny}, {"ask", rules.Ask}, {"allow", rules.Allow}} {
		for _, r := range t.rules {
			if r.Source.File == "" {
				continue // the built-in lists: policy check names the one that decides
			}
			where := r.Source.String()
			if r.Source.Tighten {
				where += " (untrusted repository config: only tightens)"
			}
			list = append(list, shown{t.tier, r.String(), where})
			width = max(width, len(r.String()))
		}
	}
	fmt.Fprintln(w, "rules of your files and the repository's (deny beats ask beats allow; where none matches, brig's built-in lists decide):")
	for _, s := range list {
		fmt.Fprintf(w, "  %-5s %-*s  %s\n", s.tier, width, s.rule, s.where)
	}
	if len(list) == 0 {
		fmt.Fprintln(w, "  none: the built-in lists decide (rules go under [permissions] in the global or workspace config below; README: Configuration)")
	}
	writeLayers(w, wp.Policy.Layers)
	// The config's own warnings were said on stderr as it loaded.
	for _, warn := range wp.Policy.ProtectedRuleWarnings() {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	fmt.Fprintln(w, "brig policy check -- 'COMMAND' explains one decision: the tier, the rule or built-in list that made it, and the jail grant.")
	return nil
}

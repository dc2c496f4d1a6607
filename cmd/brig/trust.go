package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"brig/internal/auditlog"
	"brig/policy"
)

// trustOptions are the inputs of `brig trust`.
type trustOptions struct {
	Revoke    bool
	Workspace string
	procEnv
}

func newTrustCmd() *cobra.Command {
	o := &trustOptions{}
	cmd := &cobra.Command{
		Use:   "trust",
		Short: "Accept this repository's .brig/config.toml in full (pinned to its current content)",
		Long: `A repository's .brig/config.toml is untrusted input: until you trust it,
only its deny and ask rules apply. brig trust shows what it asks for and pins
its SHA-256; changing one byte of the file makes it untrusted again.`,
		Args: cobra.NoArgs,
		RunE: commandRun(o, &o.procEnv, nil, nil, runTrust),
	}
	cmd.Flags().BoolVar(&o.Revoke, "revoke", false, "forget the trust in this workspace's repository config")
	cmd.Flags().StringVar(&o.Workspace, "workspace", "", "workspace root (default: the enclosing git root, or the current directory)")
	return cmd
}

func runTrust(ctx context.Context, o *trustOptions) error {
	wp, err := openPolicy(o.procEnv, o.Workspace, policy.ModeAsk, false)
	if err != nil {
		return err
	}
	if o.Revoke {
		if err := policy.Untrust(ctx, wp.Files); err != nil {
			return err
		}
		fmt.Fprintf(o.Stdout, "brig: %s is untrusted: only its deny and ask rules apply\n", wp.Files.Repo)
		return auditTrust(ctx, wp.Dirs.State, wp.Workspace, auditlog.Trust{File: wp.Files.Repo, Action: "revoke", What: "config"})
	}
	c, _, _, err := policy.LoadConfig(wp.Files.Repo)
	if err != nil {
		return err
	}
	sum, err := policy.Trust(ctx, wp.Files)
	if err != nil {
		return err
	}
	if err := auditTrust(ctx, wp.Dirs.State, wp.Workspace, auditlog.Trust{File: wp.Files.Repo, SHA256: sum, Action: "trust", What: "config"}); err != nil {
		return err
	}
	w := o.Stdout
	fmt.Fprintf(w, "brig: trusted %s (sha256 %s)\n", wp.Files.Repo, sum)
	fmt.Fprintln(w, "It now applies in full:")
	for _, group := range []struct {
		name  string
		rules []policy.Rule
	}{{"allow", c.Rules.Allow}, {"ask", c.Rules.Ask}, {"deny", c.Rules.Deny}} {
		for _, r := range group.rules {
			fmt.Fprintf(w, "  %-5s %s\n", group.name, r)
		}
	}
	s := c.Sandbox
	if s.Network || s.UnixSockets || len(s.Read)+len(s.Write)+len(s.Env) > 0 {
		fmt.Fprintf(w, "  sandbox: network=%v unix_sockets=%v read=%v write=%v env=%v\n", s.Network, s.UnixSockets, s.Read, s.Write, s.Env)
	}
	// Reload: the warnings are about the policy as it now stands.
	if wp, err = openPolicy(o.procEnv, o.Workspace, policy.ModeAsk, false); err != nil {
		return err
	}
	for _, warn := range wp.Policy.ProtectedRuleWarnings() {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	fmt.Fprintln(w, "Any change to the file makes it untrusted again; `brig trust --revoke` undoes this.")
	return nil
}

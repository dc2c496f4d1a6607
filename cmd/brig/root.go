package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "brig",
		Short:         "A terminal coding agent whose tool calls run in a kernel-enforced jail",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The interactive agent (TUI) and one-shot mode are separate
			// issues; until they land, say so instead of pretending.
			fmt.Fprintln(cmd.OutOrStdout(), "brig: the interactive agent is not available in this build yet.")
			fmt.Fprintln(cmd.OutOrStdout(), "Available now:")
			fmt.Fprintln(cmd.OutOrStdout(), "  brig sandbox -- COMMAND   run a command in the jail (no provider or API key needed)")
			fmt.Fprintln(cmd.OutOrStdout(), "  brig doctor               what this machine enforces")
			return nil
		},
	}
	root.AddCommand(newSandboxCmd())
	root.AddCommand(newDoctorCmd())
	root.AddCommand(newPolicyCmd())
	root.AddCommand(newTrustCmd())
	root.AddCommand(newSessionsCmd())
	return root
}

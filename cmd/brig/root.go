package main

import (
	"github.com/spf13/cobra"
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "brig",
		Short:         "A terminal coding agent whose tool calls run in a kernel-enforced jail",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newSandboxCmd())
	root.AddCommand(newDoctorCmd())
	return root
}

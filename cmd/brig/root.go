package main

import (
	"fmt"

	"brig/policy"

	"github.com/spf13/cobra"
)

func newRootCmd() *cobra.Command {
	o := &agentOptions{}
	root := &cobra.Command{
		Use:           "brig",
		Short:         "A terminal coding agent whose tool calls run in a kernel-enforced jail",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("prompt") {
				pe, err := currentProcEnv(cmd.OutOrStdout(), cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				o.procEnv = pe
				o.Stdin = stdinIfPiped()
				o.ModeSet = cmd.Flags().Changed("mode")
				return runOneShot(cmd.Context(), o)
			}
			// The interactive terminal UI is a separate issue; until it
			// lands, say so instead of pretending.
			fmt.Fprintln(cmd.OutOrStdout(), "brig: the interactive terminal UI is not available in this build yet.")
			fmt.Fprintln(cmd.OutOrStdout(), "Available now:")
			fmt.Fprintln(cmd.OutOrStdout(), "  brig -p PROMPT            one-shot: run a task and print the answer")
			fmt.Fprintln(cmd.OutOrStdout(), "  brig sandbox -- COMMAND   run a command in the jail (no provider or API key needed)")
			fmt.Fprintln(cmd.OutOrStdout(), "  brig doctor               what this machine enforces")
			return nil
		},
	}
	f := root.Flags()
	f.StringVarP(&o.Prompt, "prompt", "p", "", "run one task non-interactively and print the answer (input on stdin is appended)")
	f.StringVar(&o.Output, "output", outputText, "output format: text, json (one object at the end) or stream-json (one event per line)")
	f.StringVar(&o.Model, "model", "", "model id (default: claude-sonnet-4-5 with an Anthropic key, gpt-5 with an OpenAI key)")
	f.StringVar(&o.BaseURL, "base-url", "", "API endpoint (any OpenAI-compatible server; default ANTHROPIC_BASE_URL / OPENAI_BASE_URL, else the provider's)")
	f.StringVar(&o.Mode, "mode", string(policy.ModeAsk), "plan, ask, edit or auto")
	f.BoolVar(&o.Yes, "yes", false, "one-shot: approve calls that would ask (the jail still applies)")
	f.BoolVar(&o.No, "no", false, "one-shot: deny calls that would ask (the default)")
	f.IntVar(&o.MaxIterations, "max-iterations", 200, "tool iterations per task before brig asks the model to sum up")
	f.StringVar(&o.Workspace, "workspace", "", "workspace root (default: the enclosing git root, or the current directory)")
	f.StringVar(&o.Effort, "effort", "", "reasoning effort for models that have it: minimal, low, medium, high")
	f.BoolVar(&o.WebSearch, "web-search", false, "let the model use the provider's own web search")
	f.BoolVarP(&o.Continue, "continue", "c", false, "resume the latest session of this workspace")
	f.BoolVar(&o.Compact, "compact", false, "with --continue or --resume: summarise the earlier conversation first (then run the prompt, if any)")
	f.StringVar(&o.Resume, "resume", "", "resume the session with this `ID` (brig sessions list)")
	root.AddCommand(newSandboxCmd())
	root.AddCommand(newDoctorCmd())
	root.AddCommand(newPolicyCmd())
	root.AddCommand(newTrustCmd())
	root.AddCommand(newSessionsCmd())
	root.AddCommand(newMCPCmd())
	return root
}

package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"brig/internal/suggest"
	"brig/policy"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newRootCmd() *cobra.Command {
	o := &agentOptions{}
	root := &cobra.Command{
		Use:           "brig",
		Short:         "A terminal coding agent whose tool calls run in a kernel-enforced jail",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs, // resumeArg says what is wrong
		// How far a mistyped command may be from a real one to be
		// suggested (cobra's default, which SuggestionsFor does not apply).
		SuggestionsMinimumDistance: 2,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := promptIsFlag(cmd, o.Prompt); err != nil {
				return err
			}
			if len(args) > 0 && o.Resume != resumePick {
				// `brig sesions`: a mistyped command, not a prompt.
				if near := cmd.SuggestionsFor(args[0]); len(near) > 0 {
					return fmt.Errorf("unknown command %q: did you mean %s? (brig --help lists the commands; a prompt goes after -p)", args[0], strings.Join(near, " or "))
				}
			}
			if err := resumeArg(o, args); err != nil {
				return err
			}
			if cmd.Flags().Changed("max-tool-calls") && o.MaxToolCalls < 1 {
				// 0 is also the flag's "not given" (new user: 0 ran 64).
				return fmt.Errorf("--max-tool-calls %d: want a positive number (leave it out for the default, 64)", o.MaxToolCalls)
			}
			if o.Resume != "" && o.Resume != resumePick {
				// The six digits `brig -p` prints last name the session.
				pe, err := currentProcEnv(cmd.OutOrStdout(), cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				if o.Resume, err = sessionStore(pe).Resolve(o.Resume); err != nil {
					return fmt.Errorf("--resume: %w", err)
				}
			}
			// --compact with no prompt and no terminal (a script, the
			// README's `brig -c --compact`) compacts and exits.
			oneShot := cmd.Flags().Changed("prompt") || o.Compact && !isTerminal(os.Stdout)
			if oneShot {
				if o.Resume == resumePick {
					// No one to pick in one-shot mode: the latest session
					// of this workspace, as --continue.
					o.Resume, o.Continue, o.latestVia = "", true, "--resume (with -p and no id: the latest session)"
				}
				pe, err := currentProcEnv(cmd.OutOrStdout(), cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				o.procEnv = pe
				o.Stdin = stdinIfPiped()
				o.ModeSet = cmd.Flags().Changed("mode")
				return runOneShot(cmd.Context(), o)
			}
			return runTUI(cmd, o)
		},
	}
	f := root.Flags()
	f.StringVarP(&o.Prompt, "prompt", "p", "", "run one task non-interactively and print the answer (input on stdin is appended; -p - reads the prompt from stdin)")
	f.StringVar(&o.Output, "output", outputText, "output format: text, json (one object at the end) or stream-json (one event per line)")
	f.StringVar(&o.Model, "model", "", "model id (default: claude-sonnet-4-5 with an Anthropic key, gpt-5 with an OpenAI key)")
	f.StringVar(&o.BaseURL, "base-url", "", "API endpoint (any OpenAI-compatible server; default ANTHROPIC_BASE_URL / OPENAI_BASE_URL, else the provider's)")
	f.StringVar(&o.Provider, "provider", "", "the API a model outside brig's registry is served over: anthropic, openai (Responses) or openai-chat (Chat Completions)")
	f.StringVar(&o.Mode, "mode", string(policy.ModeAsk), "plan, ask, edit or auto ([agent] mode of your config replaces the default)")
	f.BoolVar(&o.Yes, "yes", false, "one-shot: approve calls that would ask and whose grant fits the mode's jail profile (never widens the jail)")
	f.BoolVar(&o.No, "no", false, "one-shot: deny calls that would ask (the default)")
	f.IntVar(&o.MaxIterations, "max-iterations", 200, "tool iterations per task before brig asks the model to sum up")
	f.IntVar(&o.MaxToolCalls, "max-tool-calls", 0, "tool calls run per model answer; the rest are answered as not run (default 64, or [agent] max_tool_calls)")
	f.StringArrayVar(&o.AddDirs, "add-dir", nil, "also let calls reach `DIR` (read-write; DIR:ro to read only); repeatable")
	f.StringArrayVar(&o.AllowHosts, "allow-host", nil, "let calls reach `HOST` through brig's proxy without asking (a name, *.domain, or an address; a name given exactly may reach private addresses); repeatable")
	f.StringVar(&o.Workspace, "workspace", "", "workspace root (default: the enclosing git root, or the current directory)")
	f.StringVar(&o.Effort, "effort", "", "reasoning effort for models that have it: minimal, low, medium, high")
	f.BoolVar(&o.WebSearch, "web-search", false, "let the model use the provider's own web search")
	f.BoolVarP(&o.Continue, "continue", "c", false, "resume the latest session of this workspace")
	f.BoolVar(&o.Compact, "compact", false, "with --continue or --resume: summarise the earlier conversation first (then run the prompt, if any)")
	f.StringVar(&o.Resume, "resume", "", "resume the session with this `ID` (brig sessions list); --resume alone opens the session picker (with -p: the latest session)")
	f.Lookup("resume").NoOptDefVal = resumePick
	root.AddCommand(newSandboxCmd())
	root.AddCommand(newDoctorCmd())
	root.AddCommand(newPolicyCmd())
	root.AddCommand(newTrustCmd())
	root.AddCommand(newSessionsCmd())
	root.AddCommand(newMCPCmd())
	root.AddCommand(newAuditCmd())
	root.AddCommand(newUndoCmd(nil), newChangesCmd(nil), newLogCmd(nil))
	addReleaseCommands(root)
	root.AddCommand(newCacheCmd())
	root.SetFlagErrorFunc(suggestFlag) // every subcommand asks its parent

	return root
}

// resumePick is --resume's value when no id follows it: the TUI opens the
// session picker. It cannot be a session id (ids start with a date).
const resumePick = "pick"

// resumeArg lets `--resume ID` (with a space) keep working although the
// flag's value is optional: the id then arrives as the one positional
// argument.
func resumeArg(o *agentOptions, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if o.Resume != resumePick {
		if len(args) > 1 {
			// `brig fix the bug`: a prompt without -p and quotes.
			text := strings.Join(args, " ")
			return fmt.Errorf("unexpected arguments %s (a prompt goes after -p, quoted: brig -p %q; or start brig and type it)", quoted(args), text)
		}
		// One word: most often a command brig does not have (`brig
		// config`: new user, 2026-12-03), sometimes a one-word prompt.
		return fmt.Errorf("unknown command %q (brig --help lists the commands; a prompt goes after -p: brig -p %q)", args[0], args[0])
	}
	if len(args) > 1 {
		return fmt.Errorf("--resume takes one session id, not %d: %s", len(args), quoted(args))
	}
	o.Resume = args[0]
	return nil
}

// promptIsFlag refuses a -p whose value is one of brig's own flags: -p
// takes the next word as the prompt, so `brig -p --yes "fix it"` sent
// "--yes" to the model (new user, 2026-12-02) and `brig -p --mode edit
// "fix"` said only that "edit" was unexpected.
func promptIsFlag(cmd *cobra.Command, prompt string) error {
	if !cmd.Flags().Changed("prompt") || !strings.HasPrefix(prompt, "-") || strings.ContainsAny(prompt, " \t\n") {
		return nil
	}
	name, _, _ := strings.Cut(strings.TrimLeft(prompt, "-"), "=")
	f := cmd.Flags().Lookup(name)
	if f == nil && len(name) == 1 {
		f = cmd.Flags().ShorthandLookup(name)
	}
	if f == nil {
		return nil
	}
	return fmt.Errorf("-p took %q as the prompt: -p takes the next word, so put the prompt right after it (brig -p \"fix the bug\" %s …)", prompt, prompt)
}

// commandGroup makes cmd, a command that only holds subcommands (brig
// sessions, cache, mcp, policy), refuse a word that names none of them
// with the ones near it, instead of printing its help and exiting 0 as
// cobra does: `brig cache clear` or `brig sessions delete ID` in a script
// would seem to have worked. Alone, it prints its help.
func commandGroup(cmd *cobra.Command) *cobra.Command {
	cmd.SuggestionsMinimumDistance = 2
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		var names []string
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() {
				names = append(names, c.Name())
			}
		}
		msg := fmt.Sprintf("unknown command %q for %q (its commands: %s)", args[0], cmd.CommandPath(), strings.Join(names, ", "))
		var near []string
		for _, n := range cmd.SuggestionsFor(args[0]) {
			if n = cmd.CommandPath() + " " + n; !slices.Contains(near, n) {
				near = append(near, n)
			}
		}
		if len(near) > 0 {
			msg = fmt.Sprintf("unknown command %q for %q: did you mean %s?", args[0], cmd.CommandPath(), strings.Join(near, " or "))
		}
		return errors.New(msg)
	}
	return cmd
}

// suggestFlag adds "did you mean" to cobra's "unknown flag: --modle" when
// a flag of the command is a typo away, and to every unknown flag where
// the command's flags are listed (it said only "unknown flag:
// --frobnicate": new user, 2026-12-03).
func suggestFlag(cmd *cobra.Command, err error) error {
	if strings.HasPrefix(err.Error(), "flag needs an argument: ") {
		if strings.HasSuffix(err.Error(), " -p") || strings.HasSuffix(err.Error(), " --prompt") {
			return errors.New(`-p needs the prompt after it: brig -p "fix the bug" (or -p - to read it from standard input)`)
		}
		return fmt.Errorf("%w (%s --help lists the flags and what each takes)", err, cmd.CommandPath())
	}
	if strings.HasPrefix(err.Error(), "unknown shorthand flag: ") {
		return fmt.Errorf("%w (%s --help lists the flags)", err, cmd.CommandPath())
	}
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	name, _, _ = strings.Cut(name, "=")
	var known []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			known = append(known, f.Name)
		}
	})
	// Every flag a typo or two away, nearest first: --modle is as much
	// --model (two letters swapped) as --mode (one dropped).
	var near []string
	slices.SortStableFunc(known, func(a, b string) int { return suggest.Distance(name, a) - suggest.Distance(name, b) })
	for _, k := range known {
		if suggest.Distance(name, k) <= 2 && len(near) < 3 {
			near = append(near, "--"+k)
		}
	}
	if len(near) > 0 {
		return fmt.Errorf("%w: did you mean %s? (%s --help lists the flags)", err, strings.Join(near, " or "), cmd.CommandPath())
	}
	return fmt.Errorf("%w (%s --help lists the flags)", err, cmd.CommandPath())
}

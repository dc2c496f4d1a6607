package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// The positional-argument checks of brig's commands, with a message that
// says what the command takes (cobra's own says "accepts 1 arg(s),
// received 0").

// oneArg is a command's check for exactly one argument: a noun (a
// session id), how to find one, and an example of the command.
func oneArg(noun, hint, example string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return fmt.Errorf("%s needs a %s (%s), e.g. %s", commandName(cmd), noun, hint, example)
		case len(args) > 1:
			return fmt.Errorf("%s takes one %s, not %d: %s", commandName(cmd), noun, len(args), quoted(args))
		}
		return nil
	}
}

// atMostOneArg is a command's check for an optional argument, noun.
func atMostOneArg(noun string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > 1 {
			return fmt.Errorf("%s takes at most one %s, not %d: %s", commandName(cmd), noun, len(args), quoted(args))
		}
		return nil
	}
}

// commandName is the command as typed after brig ("sessions show").
func commandName(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

// maxQuoted is how many arguments an error quotes: a glob that expanded to
// every file of a directory is said in a line, not echoed whole.
const maxQuoted = 4

// quoted shows arguments as Go strings: escapes and control characters
// pasted into a command line are shown, not sent to the terminal. Past
// maxQuoted it shows the first ones and how many more there are.
func quoted(args []string) string {
	var q []string
	for i, a := range args {
		if i == maxQuoted {
			q = append(q, fmt.Sprintf("… and %d more", len(args)-maxQuoted))
			break
		}
		q = append(q, fmt.Sprintf("%q", a))
	}
	return strings.Join(q, " ")
}

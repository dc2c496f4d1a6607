package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// newManCmd is the hidden `brig man`: it writes brig(1), one man page
// generated from the command tree (so it lists exactly the commands and
// flags this binary has). `make install` installs its output.
func newManCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "man",
		Short:  "Write the brig(1) man page (roff) to stdout",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return writeMan(cmd.OutOrStdout(), cmd.Root())
		},
	}
}

const manDescription = `brig is a terminal AI coding agent for Linux that is safe to point at a repository you do not trust. The model proposes, the policy decides, the kernel enforces: every tool call runs in a freshly re-executed copy of the brig binary that has dropped, before it touches anything, every right the call was not granted (Landlock, seccomp, no_new_privs, rlimits, its own session and process tree, and user, mount, PID and network namespaces where the kernel allows them unprivileged). A supervisor process holds the API keys and the provider connection; nothing a call runs can read them.

Run brig in a workspace for the interactive terminal UI, or brig -p PROMPT for one task without a terminal. brig doctor says which guarantees of the jail hold on this machine; brig sandbox runs any command in the jail.`

const manFiles = `~/.config/brig/config.toml
global config, permission rules, MCP servers
~/.config/brig/credentials.toml
API keys when not in the environment (mode 0600)
~/.config/brig/workspaces/
your rules for each workspace
WORKSPACE/.brig/config.toml
rules shipped by a repository: only deny and ask apply until brig trust
WORKSPACE/AGENTS.md, WORKSPACE/.brig/instructions.md
instructions for the model
~/.local/state/brig/
sessions, the listing index and the quarantine of paths a call created where it must not`

const manEnvironment = `ANTHROPIC_API_KEY, OPENAI_API_KEY
the provider's key (never passed to a tool call)
ANTHROPIC_BASE_URL, OPENAI_BASE_URL
the provider's endpoint (any OpenAI-compatible server)
XDG_CONFIG_HOME, XDG_STATE_HOME, XDG_CACHE_HOME
where brig's config, state and the jail's toolchain caches live
NO_COLOR
no colours in the terminal UI`

// writeMan writes the page for root and every visible command under it.
func writeMan(w io.Writer, root *cobra.Command) error {
	var b strings.Builder
	title := strings.ToUpper(root.Name())
	fmt.Fprintf(&b, ".TH %s 1 \"\" %s \"User Commands\"\n", title, roffQuote(root.Name()+" "+shortVersion()))
	b.WriteString(".SH NAME\n")
	fmt.Fprintf(&b, "%s \\- %s\n", root.Name(), roffText(strings.ToLower(root.Short[:1])+root.Short[1:]))
	b.WriteString(".SH SYNOPSIS\n")
	fmt.Fprintf(&b, ".B %s\n[\\fIflags\\fR]\n.br\n", root.Name())
	fmt.Fprintf(&b, ".B %s \\-p\n\\fIPROMPT\\fR [\\fIflags\\fR]\n.br\n", root.Name())
	fmt.Fprintf(&b, ".B %s\n\\fICOMMAND\\fR [\\fIflags\\fR] [\\fIARG\\fR...]\n", root.Name())
	b.WriteString(".SH DESCRIPTION\n")
	writeParagraphs(&b, manDescription)
	b.WriteString(".SH OPTIONS\n")
	writeFlags(&b, root.LocalNonPersistentFlags())
	writeFlags(&b, root.PersistentFlags())
	b.WriteString(".SH COMMANDS\n")
	for _, c := range visibleCommands(root) {
		writeCommand(&b, c)
	}
	b.WriteString(".SH ENVIRONMENT\n")
	writePairs(&b, manEnvironment)
	b.WriteString(".SH FILES\n")
	writePairs(&b, manFiles)
	b.WriteString(".SH SEE ALSO\n")
	fmt.Fprintf(&b, "%s doctor, %s sandbox \\-\\-explain, and the README of the source repository, which holds the whole manual and the security model.\n", root.Name(), root.Name())
	_, err := io.WriteString(w, b.String())
	return err
}

// visibleCommands lists c's subcommands, depth first, without hidden ones
// and help. cobra's completion command is one entry: its subcommands'
// texts are about installing the scripts, which make install does.
func visibleCommands(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, sub := range c.Commands() {
		if !sub.IsAvailableCommand() || sub.Name() == "help" {
			continue
		}
		out = append(out, sub)
		if !isCompletion(sub) {
			out = append(out, visibleCommands(sub)...)
		}
	}
	return out
}

func isCompletion(c *cobra.Command) bool { return c.Name() == "completion" && c.Parent() == c.Root() }

func writeCommand(b *strings.Builder, c *cobra.Command) {
	if isCompletion(c) {
		var shells []string
		for _, s := range c.Commands() {
			shells = append(shells, s.Name())
		}
		fmt.Fprintf(b, ".SS %s\n", roffQuote(c.CommandPath()+" "+strings.Join(shells, "|")))
		writeParagraphs(b, "Write the shell completion script for that shell to stdout. make install installs the bash, zsh and fish scripts.")
		return
	}
	fmt.Fprintf(b, ".SS %s\n", roffQuote(c.UseLine()))
	text := c.Long
	if text == "" {
		text = c.Short
	}
	writeParagraphs(b, text)
	if c.Example != "" {
		b.WriteString(".PP\nExamples:\n.PP\n.RS\n.nf\n")
		for _, l := range strings.Split(strings.Trim(c.Example, "\n"), "\n") {
			b.WriteString(roffLine(strings.TrimSpace(l)) + "\n")
		}
		b.WriteString(".fi\n.RE\n")
	}
	writeFlags(b, c.LocalNonPersistentFlags())
}

func writeFlags(b *strings.Builder, fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" || f.Name == "version" {
			return
		}
		name, usage := pflag.UnquoteUsage(f)
		b.WriteString(".TP\n")
		if f.Shorthand != "" {
			fmt.Fprintf(b, "\\fB\\-%s\\fR, ", f.Shorthand)
		}
		fmt.Fprintf(b, "\\fB\\-\\-%s\\fR", roffText(f.Name))
		if name != "" && f.NoOptDefVal == "" {
			fmt.Fprintf(b, " \\fI%s\\fR", roffText(name))
		}
		b.WriteString("\n")
		if def := f.DefValue; def != "" && def != "false" && def != "0" && def != "[]" && f.NoOptDefVal == "" {
			usage += " (default " + def + ")"
		}
		b.WriteString(roffLine(usage) + "\n")
	})
}

// writeParagraphs writes plain text: blank lines separate paragraphs.
func writeParagraphs(b *strings.Builder, text string) {
	for _, p := range strings.Split(strings.TrimSpace(text), "\n\n") {
		b.WriteString(".PP\n")
		b.WriteString(roffLine(strings.Join(strings.Fields(p), " ")) + "\n")
	}
}

// writePairs writes "term\ndescription" line pairs as a tagged list.
func writePairs(b *strings.Builder, text string) {
	lines := strings.Split(text, "\n")
	for i := 0; i+1 < len(lines); i += 2 {
		fmt.Fprintf(b, ".TP\n\\fB%s\\fR\n%s\n", roffText(lines[i]), roffLine(lines[i+1]))
	}
}

// roffText escapes text for use inside a roff line: backslashes, hyphens
// (so that options render and search as ASCII minus) and every non-ASCII
// character (as \[uXXXX], which needs no input encoding).
func roffText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\e`)
		case r == '-':
			b.WriteString(`\-`)
		case r > 0x7f:
			fmt.Fprintf(&b, `\[u%04X]`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// roffLine escapes a whole text line; a line that would start with a
// control character (. or ') is protected with \&.
func roffLine(s string) string {
	s = roffText(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// roffQuote is a macro argument: double-quoted, with quotes doubled.
func roffQuote(s string) string {
	return `"` + strings.ReplaceAll(roffText(s), `"`, `""`) + `"`
}

package main

import (
	"brig/policy"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"brig/internal/session"
	"brig/internal/termsafe"
	"brig/internal/xdg"
)

// sessionsListOptions are the inputs of `brig sessions list`.
type sessionsListOptions struct {
	All       bool
	JSON      bool
	Workspace string
	procEnv
}

// sessionsShowOptions are the inputs of `brig sessions show`.
type sessionsShowOptions struct {
	ID   string
	JSON bool
	procEnv
}

// sessionsRmOptions are the inputs of `brig sessions rm`.
type sessionsRmOptions struct {
	ID    string
	JSON  bool
	Force bool // remove it although brig undo could still put back its calls
	procEnv
}

func newSessionsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show and remove saved sessions",
		Long: `Sessions are saved under the XDG state directory
(~/.local/state/brig/sessions), one file per session, record by record as the
conversation goes: a crash loses at most the message in flight. Resume one
with brig --continue (the latest of this workspace) or brig --resume ID.`,
	}
	cmd.AddCommand(newSessionsListCmd(nil), newSessionsShowCmd(nil), newSessionsRmCmd(nil))
	return commandGroup(cmd)
}

// newSessionsListCmd builds `sessions list`; runF replaces the run function
// in tests of the flags.
func newSessionsListCmd(runF func(context.Context, *sessionsListOptions) error) *cobra.Command {
	o := &sessionsListOptions{}
	cmd := &cobra.Command{
		Use:        "list",
		SuggestFor: []string{"ls"},
		Short:      "List the saved sessions of this workspace (--all: of every workspace), newest first",
		Args:       cobra.NoArgs,
		RunE:       commandRun(o, &o.procEnv, nil, runF, runSessionsList),
	}
	f := cmd.Flags()
	f.BoolVar(&o.All, "all", false, "list the sessions of every workspace")
	f.BoolVar(&o.JSON, "json", false, "print the list as JSON")
	f.StringVar(&o.Workspace, "workspace", "", "workspace root (default: the enclosing git root, or the current directory)")
	return cmd
}

func newSessionsShowCmd(runF func(context.Context, *sessionsShowOptions) error) *cobra.Command {
	o := &sessionsShowOptions{}
	cmd := &cobra.Command{
		Use:     "show ID",
		Short:   "Print a session's history as it was shown, with its model, mode, tokens and cost",
		Example: "  brig sessions show 2026-11-22-ab12cd",
		Args:    oneArg("session id", "brig sessions list shows them", "brig sessions show 2026-11-22-ab12cd"),
		RunE:    commandRun(o, &o.procEnv, func(args []string) { o.ID = args[0] }, runF, runSessionsShow),
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the whole saved state as JSON (display history, provider-facing messages, counters)")
	return cmd
}

func newSessionsRmCmd(runF func(context.Context, *sessionsRmOptions) error) *cobra.Command {
	o := &sessionsRmOptions{}
	cmd := &cobra.Command{
		Use:        "rm ID",
		SuggestFor: []string{"delete", "remove", "del"},
		Short:      "Delete a saved session",
		Args:       oneArg("session id", "brig sessions list shows them", "brig sessions rm 2026-11-22-ab12cd"),
		RunE:       commandRun(o, &o.procEnv, func(args []string) { o.ID = args[0] }, runF, runSessionsRm),
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, `print {"removed": ID} as JSON`)
	cmd.Flags().BoolVar(&o.Force, "force", false, "remove it although brig undo could still put back some of its calls (they can no longer be undone)")
	return cmd
}

// sessionStore is the user's session store.
func sessionStore(pe procEnv) *session.Store {
	home := pe.Home
	if real, err := filepath.EvalSymlinks(home); home != "" && err == nil {
		home = real
	}
	return session.NewStore(xdg.Resolve(pe.Env, home).State)
}

// sessionList is the JSON of `sessions list`.
type sessionList struct {
	Workspace string            `json:"workspace,omitempty"` // empty with --all
	Sessions  []session.Summary `json:"sessions"`
	Problems  []session.Problem `json:"problems,omitempty"` // files skipped: corrupt or unreadable
}

func runSessionsList(ctx context.Context, o *sessionsListOptions) error {
	var filter session.Filter
	if !o.All {
		ws, err := resolveWorkspace(o.Workspace, o.Cwd)
		if err != nil {
			return err
		}
		filter.Workspace = ws
	}
	list, problems, err := sessionStore(o.procEnv).List(ctx, filter)
	if err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintf(o.Stderr, "brig: warning: skipped %s\n", p.Err)
	}
	if o.JSON {
		if list == nil {
			list = []session.Summary{}
		}
		return writeSessionsJSON(o.Stdout, sessionList{Workspace: filter.Workspace, Sessions: list, Problems: problems})
	}
	if len(list) == 0 {
		if o.All {
			fmt.Fprintln(o.Stdout, "brig: no saved sessions")
		} else {
			fmt.Fprintf(o.Stdout, "brig: no saved sessions for %s (brig sessions list --all lists every workspace)\n", filter.Workspace)
		}
		return nil
	}
	tw := tabwriter.NewWriter(o.Stdout, 0, 4, 2, ' ', 0)
	head := "ID\tUPDATED\tMODEL\tMODE\tMSGS\tCOST\t"
	if o.All {
		head += "WORKSPACE\t"
	}
	fmt.Fprintln(tw, head+"TITLE")
	for _, s := range list {
		// One row per session: a title or path with a newline or a tab
		// shows it as a symbol instead of breaking the table.
		row := fmt.Sprintf("%s\t%s\t%s\t%s\t%d\t%s\t", s.ID, s.Updated.Local().Format("2006-01-02 15:04"), termsafe.Line(s.Model), termsafe.Line(string(cmp.Or(s.Mode, policy.ModeAsk))), s.Messages, sessionCost(s.Cost))
		if o.All {
			row += termsafe.Line(s.Workspace) + "\t"
		}
		fmt.Fprintln(tw, row+termsafe.Line(s.Title))
	}
	return tw.Flush()
}

func runSessionsShow(ctx context.Context, o *sessionsShowOptions) error {
	id, err := sessionStore(o.procEnv).Resolve(o.ID)
	if err != nil {
		return err
	}
	o.ID = id
	st, err := sessionStore(o.procEnv).Load(ctx, o.ID)
	if err != nil {
		return err
	}
	for _, w := range st.Warnings {
		fmt.Fprintf(o.Stderr, "brig: warning: session %s: %s\n", st.ID, w)
	}
	if o.JSON {
		return writeSessionsJSON(o.Stdout, st)
	}
	w := o.Stdout
	fmt.Fprintf(w, "session %s · %s\n", st.ID, st.Workspace)
	fmt.Fprintf(w, "model %s (%s) · mode %s · started %s · updated %s\n", st.Model, st.Provider, st.Mode,
		st.Created.Local().Format("2006-01-02 15:04"), st.Updated.Local().Format("2006-01-02 15:04"))
	u := st.Usage
	fmt.Fprintf(w, "%s, %s, %s · tokens: %d in, %d out, %d cache read, %d cache write · cost %s\n\n",
		count(st.Summary.Messages, "message"), count(st.Turns, "model call"), count(st.Compactions, "compaction"), u.Input, u.Output, u.CacheRead, u.CacheWrite, sessionCost(st.Cost))
	if len(st.Display) == 0 {
		fmt.Fprintln(w, "(no display history was recorded)")
	}
	children := map[string][]session.Entry{} // subagents' transcripts by task call
	for _, e := range st.Display {
		if e.Parent != "" {
			children[e.Parent] = append(children[e.Parent], e)
		}
	}
	for _, e := range st.Display {
		if e.Parent != "" {
			continue
		}
		printDisplayEntry(w, e, "")
		if e.Kind == session.DisplayToolCall {
			for _, c := range children[e.ToolUseID] {
				printDisplayEntry(w, c, "    │ ")
			}
		}
		fmt.Fprintln(w)
	}
	return nil
}

// printDisplayEntry prints one display record as plain text (a subagent's
// with the margin that nests it under its task call).
func printDisplayEntry(w io.Writer, e session.Entry, margin string) {
	indent := func(prefix, text string) {
		for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
			fmt.Fprintln(w, strings.TrimRight(margin+prefix+line, " "))
		}
	}
	switch e.Kind {
	case session.DisplayUser:
		indent("> ", e.Text)
	case session.DisplayAssistant:
		indent("", e.Text)
	case session.DisplayThinking:
		indent("  (thinking) ", e.Text)
	case session.DisplayToolCall:
		indent("• "+e.Tool+" ", e.Text)
	case session.DisplayToolResult:
		mark := "  ↳ "
		if e.IsError {
			mark = "  ✗ "
		}
		indent(mark, e.Text)
	case session.DisplayError:
		indent("error: ", e.Text)
	default:
		indent("· ", e.Text)
	}
}

func runSessionsRm(ctx context.Context, o *sessionsRmOptions) error {
	id, err := sessionStore(o.procEnv).Resolve(o.ID)
	if err != nil {
		return err
	}
	o.ID = id
	// Undo goes through the session: removing it takes away what brig
	// undo could still put back, which a new user lost without a word
	// (2026-12-03). It is said first, and done only with --force.
	var ws string
	if st, err := sessionStore(o.procEnv).Load(ctx, o.ID); err == nil {
		ws = st.Workspace
	}
	if n := undoableCalls(o.procEnv, o.ID, ws); n > 0 && !o.Force {
		return fmt.Errorf("session %s (workspace %s) has %s brig undo can still put back, and removing the session loses them: brig undo --session %s first, or brig sessions rm --force %s", o.ID, ws, count(n, "call"), o.ID, o.ID)
	}
	if err := sessionStore(o.procEnv).Remove(ctx, o.ID); err != nil {
		return err
	}
	if o.JSON {
		return writeSessionsJSON(o.Stdout, map[string]string{"removed": o.ID})
	}
	if ws != "" {
		fmt.Fprintf(o.Stdout, "brig: removed session %s (workspace %s)\n", o.ID, ws)
	} else {
		fmt.Fprintf(o.Stdout, "brig: removed session %s\n", o.ID)
	}
	return nil
}

// undoableCalls counts the calls of session id that brig undo would still
// put back (0 when the workspace has no checkpoint store, or it cannot be
// read).
func undoableCalls(pe procEnv, id, ws string) int {
	if ws == "" {
		return 0
	}
	state := dirsFor(pe).State
	if _, err := os.Stat(checkpointDir(state, ws)); err != nil {
		return 0 // nothing was ever checkpointed: nothing to lose (and nothing is created)
	}
	store, _, err := openUndo(state, ws)
	if err != nil {
		return 0
	}
	defer store.Close()
	calls, err := store.Calls(id)
	if err != nil {
		return 0
	}
	n := 0
	for _, c := range calls {
		if c.CanUndo() {
			n++
		}
	}
	return n
}

func sessionCost(usd float64) string {
	if usd == 0 {
		return "-"
	}
	return fmt.Sprintf("$%.4f", usd)
}

func writeSessionsJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

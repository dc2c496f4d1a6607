package main

import (
	"brig/internal/termsafe"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"brig/agent"
	"brig/internal/checkpoint"
	"brig/internal/session"
)

// undoOptions are the inputs of `brig undo`.
type undoOptions struct {
	To        string
	Force     bool
	DryRun    bool
	Session   string
	JSON      bool
	Workspace string
	procEnv
}

// changesOptions are the inputs of `brig changes`.
type changesOptions struct {
	Session   string
	JSON      bool
	All       bool
	Workspace string
	procEnv
}

func newUndoCmd(runF func(context.Context, *undoOptions) error) *cobra.Command {
	o := &undoOptions{}
	cmd := &cobra.Command{
		Use:   "undo",
		Short: "Put back what the last call changed (--to CALL: that call and every later one)",
		Long: `brig snapshots the paths a call may write before it runs, shell commands
included, and undo restores them byte for byte: contents, modes, symlinks,
deleted files and directories; files the calls created are removed. It
works on the latest session of this workspace (--session picks another),
after a resume and after a crash. If a file the calls changed was changed
again outside brig afterwards, undo lists the conflicts and changes nothing
unless --force (what --force overwrites is copied to a file first, and
the copy named).
git's own .git and regenerated trees (node_modules …) are never touched;
brig changes lists what each call changed.`,
		Example: "  brig undo\n  brig undo --to 3\n  brig undo --to toolu_01AbC --dry-run",
		Args:    cobra.NoArgs,
		RunE:    commandRun(o, &o.procEnv, nil, runF, runUndo),
	}
	f := cmd.Flags()
	f.StringVar(&o.To, "to", "", "undo this call (its number in brig changes, or its id) and every later one")
	f.BoolVar(&o.Force, "force", false, "overwrite files changed outside brig since the calls")
	f.BoolVar(&o.DryRun, "dry-run", false, "say what would be restored and what conflicts, change nothing")
	f.StringVar(&o.Session, "session", "", "the session (default: the latest of this workspace)")
	f.BoolVar(&o.JSON, "json", false, "print the report as JSON")
	f.StringVar(&o.Workspace, "workspace", "", "workspace root (default: the enclosing git root, or the current directory)")
	return cmd
}

func newChangesCmd(runF func(context.Context, *changesOptions) error) *cobra.Command {
	o := &changesOptions{}
	cmd := &cobra.Command{
		Use:   "changes [SESSION]",
		Short: "List what each call of a session changed (default: the latest session of this workspace)",
		Args:  atMostOneArg("SESSION"),
		RunE: commandRun(o, &o.procEnv, func(args []string) {
			if len(args) > 0 {
				o.Session = args[0]
			}
		}, runF, runChanges),
	}
	f := cmd.Flags()
	f.BoolVar(&o.JSON, "json", false, "print the calls as JSON")
	f.BoolVar(&o.All, "all", false, "list every changed path (default: the first 20 of each call)")
	f.StringVar(&o.Workspace, "workspace", "", "workspace root (default: the enclosing git root, or the current directory)")
	return cmd
}

// pickSession resolves the session a command is about: the one given, or
// the latest of the workspace. It returns its id and workspace.
func pickSession(ctx context.Context, pe procEnv, id, wsFlag string) (string, string, error) {
	store := sessionStore(pe)
	if id != "" {
		var err error
		if id, err = store.Resolve(id); err != nil {
			return "", "", err
		}
		st, err := store.Load(ctx, id)
		if err != nil {
			return "", "", err
		}
		return id, st.Header.Workspace, nil
	}
	ws, err := resolveWorkspace(wsFlag, pe.Cwd)
	if err != nil {
		return "", "", err
	}
	latest, err := store.Latest(ctx, ws)
	if errors.Is(err, session.ErrNotFound) {
		return "", "", fmt.Errorf("%w (brig sessions list --all lists every workspace's)", err)
	}
	if err != nil {
		return "", "", err
	}
	return latest.ID, ws, nil
}

func runUndo(ctx context.Context, o *undoOptions) error {
	id, ws, err := pickSession(ctx, o.procEnv, o.Session, o.Workspace)
	if err != nil {
		return err
	}
	state := dirsFor(o.procEnv).State
	store, audit, err := openUndo(state, ws)
	if err != nil {
		return err
	}
	defer store.Close()
	opts := checkpoint.UndoOptions{Session: id, To: o.To, Force: o.Force, DryRun: o.DryRun}
	var rep *checkpoint.UndoReport
	if o.DryRun {
		rep, err = store.Undo(ctx, opts)
	} else {
		sess, _, oerr := session.NewStore(state).Open(ctx, id)
		if oerr != nil {
			return oerr
		}
		defer sess.Close()
		u := &agent.Undoer{Store: store, Audit: audit, Session: sess, SessionID: id, Workspace: ws, By: "brig undo"}
		rep, _, err = u.Undo(ctx, opts)
	}
	if o.JSON && rep != nil {
		if werr := writeSessionsJSON(o.Stdout, rep); werr != nil {
			return werr
		}
		if err != nil {
			return exitError{1}
		}
		return nil
	}
	if rep != nil {
		printUndo(o.Stdout, rep, ws, id)
	}
	switch {
	case errors.Is(err, checkpoint.ErrConflict):
		fmt.Fprintf(o.Stderr, "brig: nothing was undone: %s changed after brig's calls (listed above). Keep your changes, or run brig undo --force to overwrite them (what they hold now is copied to a file first, and the copy named).\n", count(len(rep.Conflicts), "path"))
		return exitError{1}
	case errors.Is(err, checkpoint.ErrNothing) && o.To == "":
		return statusError{nothingToUndo(err, store, sessionStore(o.procEnv), id, o.Session == ""), 1}
	case err != nil:
		return err
	}
	return nil
}

// nothingToUndo is brig undo's error when the session it looked at has
// nothing left to undo. It names that session and, as a later session
// that changed nothing is the default one now, the latest other session
// of the workspace that has something to undo, and how to reach it.
func nothingToUndo(err error, store *checkpoint.Store, sessions *session.Store, id string, latest bool) error {
	which := "session " + id
	if latest {
		which += ", the latest of this workspace"
	}
	others, lerr := store.Undoable(id)
	if lerr != nil {
		slog.Warn("could not list the sessions with changes to undo", "err", lerr)
	}
	for _, u := range others {
		if session.ValidateID(u.Session) != nil {
			continue
		}
		if _, serr := os.Stat(sessions.Path(u.Session)); serr != nil {
			continue // removed with brig sessions rm
		}
		changes, undo := "brig changes "+u.Session, "brig undo --session "+u.Session
		return fmt.Errorf("%w (%s)\nthe latest session of this workspace with changes to undo is %s (its last such call at %s):\n  %-*s  # what each call changed\n  %-*s  # put back its last call\n(brig sessions list lists every session)",
			err, which, u.Session, u.Last.Local().Format("2006-01-02 15:04"), len(undo), changes, len(undo), undo)
	}
	return fmt.Errorf("%w (%s); no other session of this workspace has changes to undo (brig sessions list lists the sessions, brig changes SESSION what one changed)", err, which)
}

// printUndo prints an undo report for a person.
func printUndo(w io.Writer, rep *checkpoint.UndoReport, ws, id string) {
	verb := "undid"
	switch {
	case !rep.Applied && len(rep.Conflicts) > 0:
		verb = "would undo"
	case !rep.Applied:
		verb = "would undo (dry run)"
	}
	var calls []string
	for _, c := range rep.Calls {
		calls = append(calls, fmt.Sprintf("%d (%s %s)", c.N, c.Tool, shown(c.ID)))
	}
	fmt.Fprintf(w, "brig: %s call %s of session %s\n", verb, strings.Join(calls, ", "), id)
	for _, c := range rep.Calls {
		if c.Changes != nil && c.Changes.Shared {
			fmt.Fprintf(w, "  note      call %d ran while another brig session had this workspace open: what it puts back may include that session's changes\n", c.N)
		}
	}
	for _, c := range rep.Changes {
		// What it would do (a dry run, a refused undo), or did.
		what := "restore"
		switch c.Kind {
		case checkpoint.Deleted:
			what = "remove"
		case checkpoint.Created:
			what = "recreate"
		case checkpoint.Mode:
			what = "mode"
		}
		if rep.Applied && what != "mode" {
			what += "d"
		}
		fmt.Fprintf(w, "  %-9s %s\n", what, shown(relPath(c.Path, ws)))
	}
	if rep.More > 0 {
		fmt.Fprintf(w, "  … and %d more\n", rep.More)
	}
	if rep.Applied {
		fmt.Fprintf(w, "  %d restored, %d removed\n", rep.Restored, rep.Removed)
	}
	for _, c := range rep.Conflicts {
		switch {
		case rep.Applied && c.Kept != "":
			// --force went ahead: the line says what it overwrote and
			// where the user's version is now.
			fmt.Fprintf(w, "  overwrote %s (%s); your version is copied to %s\n", shown(relPath(c.Path, ws)), c.Why, shown(c.Kept))
			continue
		case rep.Applied && c.Link != "":
			fmt.Fprintf(w, "  overwrote %s (%s); it was a symbolic link to %s\n", shown(relPath(c.Path, ws)), c.Why, shown(c.Link))
			continue
		}
		fmt.Fprintf(w, "  conflict  %s: %s\n", shown(relPath(c.Path, ws)), c.Why)
	}
	for _, l := range rep.Left {
		if l.Path == "" {
			fmt.Fprintf(w, "  %s\n", l.Why)
			continue
		}
		fmt.Fprintf(w, "  left      %s: %s\n", shown(relPath(l.Path, ws)), shown(l.Why))
	}
}

func runChanges(ctx context.Context, o *changesOptions) error {
	id, ws, err := pickSession(ctx, o.procEnv, o.Session, o.Workspace)
	if err != nil {
		return err
	}
	store, _, err := openUndo(dirsFor(o.procEnv).State, ws)
	if err != nil {
		return err
	}
	defer store.Close()
	calls, err := store.Calls(id)
	if err != nil {
		return err
	}
	if o.JSON {
		if calls == nil {
			calls = []checkpoint.Call{}
		}
		return writeSessionsJSON(o.Stdout, struct {
			Session   string            `json:"session"`
			Workspace string            `json:"workspace"`
			Calls     []checkpoint.Call `json:"calls"`
		}{id, ws, calls})
	}
	printChanges(o.Stdout, id, ws, calls, o.All, "brig undo puts back the last call not undone; brig undo --to N puts back call N and every later one.")
	return nil
}

// printChanges lists a session's checkpointed calls, numbered as undo
// takes them, with what each changed (the first 20 paths of each unless
// all), then footer (how to undo, in the words of the front end).
func printChanges(w io.Writer, id, ws string, calls []checkpoint.Call, all bool, footer string) {
	fmt.Fprintf(w, "session %s · %s\n", id, shown(ws))
	if len(calls) == 0 {
		fmt.Fprintln(w, "no call of this session could write files")
		return
	}
	for _, c := range calls {
		summary := "brig stopped before it finished; what it changed is worked out at undo"
		if c.Changes != nil {
			summary = c.Changes.Summary()
			if c.Changes.Unfinished {
				summary += " (brig stopped before it finished)"
			}
		}
		state := ""
		if c.Undone {
			state = " · undone " + c.UndoneAt.Local().Format("15:04:05")
		}
		fmt.Fprintf(w, "%3d  %s  %-12s %s%s  %s\n", c.N, c.Time.Local().Format("2006-01-02 15:04:05"), c.Tool, summary, state, shown(c.ID))
		if c.Changes == nil {
			continue
		}
		for i, ch := range c.Changes.Changes {
			if i == 20 && !all {
				fmt.Fprintf(w, "       … %d more (--all lists them)\n", len(c.Changes.Changes)-20+c.Changes.More)
				break
			}
			fmt.Fprintf(w, "       %-8s %s\n", ch.Kind, shown(relPath(ch.Path, ws)))
		}
		if c.Changes.More > 0 && (all || len(c.Changes.Changes) <= 20) {
			fmt.Fprintf(w, "       … %d more not listed\n", c.Changes.More)
		}
	}
	fmt.Fprintln(w, footer)
}

// relPath shows p relative to the workspace when it is inside it.
func relPath(p, ws string) string {
	if r, err := filepath.Rel(ws, p); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
		return r
	}
	return p
}

// shown makes a file name or other foreign text safe to print on one line:
// control and invisible characters as marked symbols (the shared terminal
// sanitiser, strict as for paths in approval prompts).
func shown(s string) string {
	return strings.NewReplacer("\n", "␊", "\t", "␉").Replace(termsafe.Strict(s))
}

// tuiChanges is /changes in the terminal UI: brig changes for the
// session open, numbered as /undo N takes them.
func tuiChanges(run *agentRun) func(ctx context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		calls, err := run.Undoer.Store.Calls(run.Session.ID())
		if err != nil {
			return "", err
		}
		var b strings.Builder
		printChanges(&b, run.Session.ID(), run.Workspace, calls, false, "/undo puts back the last call not undone; /undo N puts back call N and every later one (brig changes --all lists every path).")
		return b.String(), nil
	}
}

// tuiUndo is /undo in the terminal UI: "/undo [--force] [--dry-run] [N]".
// What it undid is noted for the model's next turn.
func tuiUndo(run *agentRun) func(ctx context.Context, args string) (string, error) {
	return func(ctx context.Context, args string) (string, error) {
		var o checkpoint.UndoOptions
		for _, f := range strings.Fields(args) {
			switch f {
			case "--force", "-f", "force":
				o.Force = true
			case "--dry-run", "-n":
				o.DryRun = true
			default:
				if o.To != "" || strings.HasPrefix(f, "-") {
					return "", fmt.Errorf("%q: want /undo [--force] [--dry-run] [N] (N: a call's number or id from brig changes)", args)
				}
				o.To = strings.TrimPrefix(f, "--to=")
			}
		}
		var rep *checkpoint.UndoReport
		var note string
		var err error
		if o.DryRun {
			o.Session = run.Session.ID()
			rep, err = run.Undoer.Store.Undo(ctx, o)
		} else {
			rep, note, err = run.Undoer.Undo(ctx, o)
		}
		var b strings.Builder
		if rep != nil {
			printUndo(&b, rep, run.Workspace, run.Session.ID())
		}
		if note != "" {
			run.Agent.Note(note)
			b.WriteString("  (the model is told at its next turn)\n")
		}
		if errors.Is(err, checkpoint.ErrConflict) {
			fmt.Fprintf(&b, "nothing was undone: %s changed after brig's calls. Keep your changes, or /undo --force to overwrite them (what they hold now is copied to a file first, and the copy named).\n", count(len(rep.Conflicts), "path"))
			return b.String(), nil
		}
		return b.String(), err
	}
}

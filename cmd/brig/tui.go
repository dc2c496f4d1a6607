package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/charmbracelet/colorprofile"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"brig/agent/provider/connect"
	"brig/internal/credentials"
	"brig/internal/doctor"
	"brig/internal/jailexe"
	"brig/internal/render"
	"brig/internal/session"
	"brig/internal/tui"
	"brig/jail"
	"brig/policy"
)

// runTUI opens the interactive terminal UI. It needs a terminal on both
// sides; scripts use -p.
func runTUI(cmd *cobra.Command, o *agentOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	if !isTerminal(os.Stdin) || !isTerminal(os.Stdout) {
		return errors.New("the interactive UI needs a terminal on standard input and output; for scripts and pipes use brig -p PROMPT")
	}
	ctx := cmd.Context()
	pe, err := currentProcEnv(cmd.OutOrStdout(), io.Discard) // config warnings show in the UI
	if err != nil {
		return err
	}
	o.procEnv = pe
	ws, err := resolveWorkspace(o.Workspace, pe.Cwd)
	if err != nil {
		return err
	}
	dirs := dirsFor(pe)
	if err := policy.CheckWorkspace(ws, canonicalHome(pe.Home), dirs.Config, dirs.State); err != nil {
		return err
	}
	// Diagnostics go to a file while the terminal belongs to the UI.
	if err := os.MkdirAll(dirs.State, 0o700); err == nil {
		if f, err := os.OpenFile(filepath.Join(dirs.State, "tui.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
			defer f.Close()
			prev := slog.Default()
			slog.SetDefault(slog.New(slog.NewTextHandler(f, nil)))
			defer slog.SetDefault(prev)
		}
	}
	initial := tui.StartRequest{Model: o.Model, Continue: o.Continue}
	if o.Resume != resumePick {
		initial.Resume = o.Resume
	}
	if cmd.Flags().Changed("mode") {
		initial.Mode = policy.Mode(o.Mode)
	}
	store := session.NewStore(dirs.State)
	rend, closeRend := tuiRenderer()
	defer closeRend()
	cfg := tui.Config{
		Start:       tuiStarter(o),
		Initial:     initial,
		PickSession: o.Resume == resumePick,
		Sessions: func(ctx context.Context) ([]session.Summary, error) {
			list, _, err := store.List(ctx, session.Filter{Workspace: ws})
			return list, err
		},
		// The same checks as brig doctor, the workspace's config included:
		// the banner shows a config that does not load as what it is.
		Sandbox: func(ctx context.Context) doctor.Report {
			feat := jail.DetectFeatures(ctx)
			r := doctor.Build(feat, pe.Env, pe.Home)
			r.SetConfig(configStatus(&doctorOptions{Cwd: ws, Home: pe.Home, Env: pe.Env}, feat.Namespaces()))
			return r
		},
		Usable: func(model string) error {
			wire, err := wireOf(o.Provider)
			if err != nil {
				return err
			}
			creds, err := credentials.Load(o.Env, dirs)
			if err != nil {
				return err
			}
			_, err = connect.New(connect.Config{Model: model, BaseURL: o.BaseURL, Wire: wire, Env: o.Env, Credentials: creds})
			return err
		},
		Workspace: ws,
		Profile:   colorprofile.Detect(os.Stdout, pe.Env),
		Renderer:  rend,
	}
	sum, err := tui.Run(ctx, cfg, tui.Options{Env: pe.Env})
	fmt.Fprintln(cmd.OutOrStdout(), sum)
	return err
}

// tuiRenderer is the TUI's renderer: the carried helper program
// (internal/render), which the TUI starts in the background once its
// banner is up (writing the program, 11 MB — into brig's state directory
// the first time a build runs, or into a memory file where it cannot be
// kept there — takes several milliseconds, which the first frame need not
// share), and a
// function that stops it. It is nil, and the TUI shows text as it is,
// when this build carries no renderer (a plain go build; make builds
// carry it).
func tuiRenderer() (render.Renderer, func()) {
	if !jailexe.CarriesRenderer() {
		slog.Warn("no renderer: Markdown and code are shown without styling (brig built with make carries one)")
		return nil, func() {}
	}
	// Written by the Client's first start, under the Client's lock; read
	// after Close, which takes that lock and after which no start runs.
	var prog *os.File
	c := render.NewClient(func() (*exec.Cmd, error) {
		if prog == nil {
			p, err := jailexe.OpenRenderer(programsDir())
			if err != nil {
				return nil, err
			}
			if p == nil {
				return nil, errors.New("this build carries no renderer")
			}
			prog = p
		}
		// The program's descriptor is high and close-on-exec: the
		// exec reaches it through this process's /proc, and the
		// renderer starts with its three pipes and nothing else of brig.
		return &exec.Cmd{
			Path: "/proc/self/fd/" + strconv.Itoa(int(prog.Fd())),
			Args: []string{"brig-render"},
			Env:  []string{"GOMAXPROCS=1"}, // nothing of brig's: its keys stay here
		}, nil
	}, slog.Default())
	return c, func() {
		_ = c.Close()
		if prog != nil {
			_ = prog.Close()
		}
	}
}

// tuiStarter builds the TUI's runs with the same set-up as one-shot mode.
func tuiStarter(base *agentOptions) tui.Starter {
	var modes tuiModes
	return func(ctx context.Context, req tui.StartRequest, h tui.Hooks) (*tui.Conn, error) {
		o := *base
		o.Resume, o.Continue = req.Resume, req.Continue && req.Resume == ""
		if req.Model != "" {
			o.Model = req.Model
		}
		o.ModeSet = req.Mode != ""
		if o.ModeSet {
			o.Mode = string(req.Mode)
		} else if req.Current != "" {
			o.Mode = string(req.Current) // a resumed session goes on in no wider a mode
			o.ModeCurrent = true
		}
		o.ModeFrom = modes.from(req)
		o.Inbox, o.Interactive = h.Inbox, true
		run, err := setupAgent(ctx, &o, h.Approver, h.Emit)
		if err != nil {
			return nil, err
		}
		modes.started(run.Policy.Mode(), run.Kept)
		return &tui.Conn{
			Agent: run.Agent, Executor: run.Executor, Policy: run.Policy, Session: run.Session,
			Model: run.Client.Model, Provider: run.Client.Provider(), Resumed: run.Resumed,
			Instructions: run.Instructions.Banner(), Tips: run.Tips, ModeNote: run.ModeNote, ModeFromConfig: run.ModeFromConfig, Undo: tuiUndo(run), Changes: tuiChanges(run), Warm: run.Warm, Connect: run.Connect, Kept: run.Kept, Close: run.Close,
		}, nil
	}
}

// tuiModes remembers the TUI's last run, so that a /mode before anything
// was said is audited: the TUI then replaces the run with one on a new
// session in the new mode (the unused session is not kept), which, not
// being resumed, would otherwise record no change.
type tuiModes struct {
	mu   sync.Mutex
	mode policy.Mode // the last run's mode; "" before the first
	kept func() bool // whether the last run's session is kept
}

// from is the mode a run started for req changes from: the last run's,
// when req starts a new session in place of one that is not kept; else ""
// (a resumed session's change is audited against its own mode).
func (m *tuiModes) from(req tui.StartRequest) policy.Mode {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mode == "" || req.Resume != "" || req.Continue || m.kept == nil || m.kept() {
		return ""
	}
	return m.mode
}

// started records the run that started.
func (m *tuiModes) started(mode policy.Mode, kept func() bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mode, m.kept = mode, kept
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

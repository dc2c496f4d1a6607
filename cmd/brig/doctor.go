package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"brig/internal/doctor"
	"brig/internal/jailexe"
	"brig/internal/termsafe"
	"brig/internal/xdg"
	"brig/jail"
	"brig/policy"
	"brig/supervisor"
)

// doctorOptions is everything brig doctor depends on, so that runDoctor can
// be tested without the command, the real environment or the real kernel.
type doctorOptions struct {
	JSON   bool
	Out    io.Writer
	Env    []string // the supervisor's environment; only names are reported
	Home   string
	Detect func(context.Context) jail.Features
	Cwd    string // the workspace whose permission config is checked; empty: none
}

func newDoctorCmd() *cobra.Command {
	opts := &doctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Report which jail guarantees this kernel can keep",
		Long: `Probe the kernel (Landlock ABI, seccomp, no_new_privs, user, mount, PID and
network namespaces, Yama, TIOCSTI) and report, for each guarantee of the jail,
whether it holds, is degraded or is missing, what provides it and how to fix
it. Also lists the credentials brig can see, by name only: values are never
printed.

Exits with status 1 when a baseline guarantee is missing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Out = cmd.OutOrStdout()
			var err error
			if opts.Env, opts.Home, err = homeEnv(); err != nil {
				return err
			}
			opts.Detect = jail.DetectFeatures
			opts.Cwd, _ = os.Getwd()
			return runDoctor(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	return cmd
}

// runDoctor probes, builds the report and prints it. It returns exitError{1}
// when a baseline guarantee is missing, after printing the report.
func runDoctor(ctx context.Context, opts *doctorOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	detect := opts.Detect
	if detect == nil {
		detect = jail.DetectFeatures
	}
	out := opts.Out
	if out == nil {
		out = os.Stdout
	}
	// The report quotes config files and their rules: foreign text.
	safe := termsafe.NewWriter(out)
	defer safe.Flush()
	out = safe
	feat := detect(ctx)
	report := doctor.Build(feat, opts.Env, opts.Home)
	if opts.Cwd != "" {
		report.SetConfig(configStatus(opts, feat.Namespaces()))
		report.SetOutside(outsideStatus(opts, feat.Namespaces()))
	}
	report.SetJailRun(jailRun(opts, feat.Namespaces()))
	report.SetStorage(storageStatus(dirsFor(procEnv{Home: opts.Home, Env: opts.Env})))
	var err error
	if opts.JSON {
		err = report.WriteJSON(out)
	} else {
		err = report.WriteText(out)
	}
	if err != nil {
		return fmt.Errorf("doctor: writing the report: %w", err)
	}
	if !report.OK {
		return exitError{code: 1}
	}
	return nil
}

// configStatus loads the permission config of the current workspace the way
// the agent will, and reports what is in effect and what is wrong.
func configStatus(opts *doctorOptions, namespaces bool) doctor.ConfigStatus {
	var warnings bytes.Buffer
	wp, err := openPolicy(procEnv{Cwd: opts.Cwd, Home: opts.Home, Env: opts.Env, Stdout: io.Discard, Stderr: &warnings}, "", policy.ModeAsk, namespaces)
	if err != nil {
		return doctor.ConfigStatus{Workspace: opts.Cwd, Error: err.Error()}
	}
	st := doctor.ConfigStatus{Workspace: wp.Workspace}
	for _, l := range wp.Policy.Layers {
		state := "missing"
		switch {
		case l.Exists && l.Trusted:
			state = "in effect"
		case l.Exists:
			state = fmt.Sprintf("untrusted: %s; ignored %s (brig trust)", l.Applies(), count(len(l.Ignored), "grant"))
		}
		if n := l.LimitsNote(); n != "" && l.Exists {
			state += "; " + n
		}
		st.Files = append(st.Files, doctor.ConfigFile{Kind: l.Kind, File: l.File, State: state})
	}
	for _, w := range wp.Policy.Warnings {
		st.Problems = append(st.Problems, w.String())
	}
	st.Problems = append(st.Problems, wp.Policy.ProtectedRuleWarnings()...)
	st.Problems = append(st.Problems, wp.Policy.SandboxGrantWarnings()...)
	return st
}

// jailRun says where this build's jail programs run from and whether a
// command's call needs a worker here.
func jailRun(opts *doctorOptions, namespaces bool) doctor.JailRun {
	var j doctor.JailRun
	dir := ""
	if opts.Home != "" {
		dir = filepath.Join(dirsFor(procEnv{Home: opts.Home, Env: opts.Env}).State, "programs")
	}
	carried, kept, why := jailexe.Where(dir)
	switch {
	case carried && kept:
		j.Programs, j.Kept = why, true
	case carried:
		j.Programs = "written into memory at every start (about 5 ms of CPU): they cannot be kept: " + why
	default:
		j.Programs = why
	}
	if opts.Home != "" {
		j.GoLayer = goLayerStatus(goLayerDir(dirsFor(procEnv{Home: opts.Home, Env: opts.Env})), opts.Env, namespaces)
	}
	if ok, why := supervisor.DirectStarts(namespaces); ok {
		j.Commands, j.Direct = "started by each call's init: one process before the command", true
	} else {
		j.Commands = "started through a worker process: " + why
	}
	return j
}

// storageStatus makes brig's state and cache directories as a start does
// and writes a file in each: "" when that works, else what is wrong and
// how to fix it (brig would not start).
func storageStatus(dirs xdg.Dirs) string {
	if !filepath.IsAbs(dirs.State) || !filepath.IsAbs(dirs.Cache) {
		return fmt.Sprintf("brig's state and cache directories (%s, %s) are not absolute paths; set HOME to your home directory", dirs.State, dirs.Cache)
	}
	if err := makeOwnDirs(dirs); err != nil {
		return err.Error()
	}
	for _, d := range []string{dirs.State, dirs.Cache} {
		f, err := os.CreateTemp(d, ".brig-doctor-*")
		if err != nil {
			return fmt.Sprintf("brig cannot write in %s (%v); make it writable, or set XDG_STATE_HOME / XDG_CACHE_HOME to a directory you can write", d, err)
		}
		f.Close()
		os.Remove(f.Name())
	}
	return ""
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"brig/internal/doctor"
	"brig/jail"
)

// doctorOptions is everything brig doctor depends on, so that runDoctor can
// be tested without the command, the real environment or the real kernel.
type doctorOptions struct {
	JSON   bool
	Out    io.Writer
	Env    []string // the supervisor's environment; only names are reported
	Home   string
	Detect func(context.Context) jail.Features
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
			opts.Env = os.Environ()
			opts.Home, _ = os.UserHomeDir() // no home: the credentials file is not reported
			opts.Detect = jail.DetectFeatures
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
	report := doctor.Build(detect(ctx), opts.Env, opts.Home)
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

// Command brig is a terminal AI coding agent whose every tool call runs in a
// kernel-enforced jail.
//
// main dispatches the jail child entry before anything else: when the binary
// is re-executed by the supervisor as a jail process it must not parse flags,
// read configuration or touch the user's keys.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	// For its side effect: the heap's first pages mapped in one system
	// call before the other packages initialise (see its doc).
	_ "brig/internal/prefault"

	"brig/internal/jailexe"
	"brig/internal/jailtools"
	"brig/internal/termsafe"
	"brig/jail"
	"brig/supervisor"
)

func main() {
	// The jail entry runs first: before cobra, config, logging or the TUI.
	if jail.IsChild() {
		jail.ChildMain(jailtools.All(), jailtools.FileTools()...)
		return // not reached: ChildMain exits
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, stopSignals()...)
	go func() {
		s, ok := <-sigs
		if !ok {
			return
		}
		cancel(stopSignal{s.(syscall.Signal)})
		// A second one does not wait for the first's orderly end (work
		// that does not look at its context, such as the undo snapshot
		// after a call of a million files): brig exits at once. Its jail
		// children die with it (their parent-death signal, their PID
		// namespace); a session stays resumable as far as it was written.
		if s, ok := <-sigs; ok {
			fmt.Fprintf(os.Stderr, "brig: %s again: exiting now, without finishing what the first one was ending\n", unix.SignalName(s.(syscall.Signal)))
			os.Exit(128 + int(s.(syscall.Signal)))
		}
	}()
	code := run(ctx, os.Args[1:])
	signal.Stop(sigs)
	os.Exit(code)
}

// stopSignals are the signals that stop brig the way Ctrl-C does, its
// work ended and its run closed (the session saved, or removed when
// nothing was said in it; the jail children and MCP servers stopped):
// SIGINT, SIGTERM and SIGHUP — a closed terminal or ssh connection —
// unless brig was started with SIGHUP ignored (nohup), which it keeps.
func stopSignals() []os.Signal {
	s := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		s = append(s, syscall.SIGHUP)
	}
	return s
}

// stopSignal is the cause of the context's end when a signal stopped brig.
type stopSignal struct{ sig syscall.Signal }

func (s stopSignal) Error() string {
	if s.sig == syscall.SIGINT {
		return "interrupted (Ctrl-C)"
	}
	return "stopped by " + unix.SignalName(s.sig)
}

// StoppedBy is who or what stopped the run, as the model's tool results
// say it (agent.StoppedBy): Ctrl-C is the user's; another signal is named,
// as a timeout wrapper or a service manager sends SIGTERM as often as a
// person does.
func (s stopSignal) StoppedBy() string {
	if s.sig == syscall.SIGINT {
		return "the user"
	}
	return unix.SignalName(s.sig)
}

// interruptCode is interruptStatus's status alone.
func interruptCode(ctx context.Context) int {
	code, _ := interruptStatus(ctx)
	return code
}

// interruptStatus is the exit status of a run that ctx's end stopped: 128
// plus the signal's number (130 for Ctrl-C, 143 for SIGTERM, 129 for
// SIGHUP).
func interruptStatus(ctx context.Context) (int, string) {
	var s stopSignal
	if errors.As(context.Cause(ctx), &s) {
		return 128 + int(s.sig), s.Error()
	}
	return 130, "interrupted"
}

// exitError carries a specific exit status out of a command.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func run(ctx context.Context, args []string) int {
	// Diagnostics read as brig's other lines (the TUI sends them to its
	// log file instead).
	slog.SetDefault(slog.New(newNoteHandler(os.Stderr)))
	return runTo(ctx, args, os.Stdout)
}

// runTo is run with the result object of a -p run that could not parse
// its flags written to stdout (a test's buffer).
func runTo(ctx context.Context, args []string, stdout io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	ask := root.FlagErrorFunc()
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		err = ask(c, err)
		if f := outputFormatIn(args); c == root && (f == outputJSON || f == outputStreamJSON) {
			// A script that asked for JSON gets its one result object
			// for a mistyped flag too, as for every other failure.
			writeFailure(stdout, &agentOptions{Output: f}, err)
		}
		return err
	})
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	// An error may quote a provider, a server or a config file.
	fmt.Fprintln(os.Stderr, "brig:", termsafe.Text(err.Error()))
	var se statusError
	if errors.As(err, &se) {
		return se.code
	}
	return 2
}

// outputFormatIn is the value of the last --output in args, read before
// the flags are parsed (a flag error stops the parse before it may reach
// it); "" when there is none before a "--".
func outputFormatIn(args []string) string {
	format := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return format
		case a == "--output" && i+1 < len(args):
			format = args[i+1]
			i++
		case strings.HasPrefix(a, "--output="):
			format = strings.TrimPrefix(a, "--output=")
		}
	}
	return format
}

// statusError is an error that is no misuse of brig (2): a command that
// ran and found nothing to do says so and exits with code.
type statusError struct {
	error
	code int
}

func (e statusError) Unwrap() error { return e.error }

// carriedPath is the program the supervisor starts for each call: the jail
// init program carried in this binary (kept in brig's state directory, or
// a sealed memory file; opened once), or "" (brig itself) when this build
// carries none.
func carriedPath() string {
	c, err := carriedChild()
	if err != nil {
		slog.Warn("the carried jail child cannot be used; brig re-executes itself for each call", "err", err)
	}
	if c == nil {
		return ""
	}
	return c.Path()
}

// carriedPrograms are the carried jail programs: init's and the workers
// (none when this build carries none; carriedPath has said why). The
// light worker serves every call but those jailtools.NeedsFullWorker
// names.
func carriedPrograms() supervisor.Programs {
	c, _ := carriedChild()
	if c == nil {
		return supervisor.Programs{}
	}
	p := supervisor.Programs{Init: c.Init(), Worker: c.Worker, NeedsFull: jailtools.NeedsFullWorker}
	if jailexe.HasLight() {
		p.Light = c.Light // still being written, perhaps: the supervisor asks once an init runs
	}
	return p
}

// carriedChild opens the carried jail programs once per process; they stay
// open for the process's life.
var carriedChild = sync.OnceValues(func() (*jailexe.Child, error) { return jailexe.Open(programsDir()) })

// programsDir is where the carried programs are kept between runs
// (jailexe): under brig's state directory, which no call is ever granted
// (policy: BrigDirs), so nothing a call does can change what a later
// call's init executes. It is "" without a home directory: the programs
// then go into memory files, as always.
func programsDir() string {
	env, home, err := homeEnv()
	if err != nil {
		return ""
	}
	return filepath.Join(dirsFor(procEnv{Home: home, Env: env}).State, "programs")
}

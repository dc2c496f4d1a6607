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
	"maps"
	"os"
	"os/signal"
	"syscall"

	"brig/internal/audit"
	"brig/jail"
	"brig/tools"
)

func main() {
	// The jail entry runs first: before cobra, config, logging or the TUI.
	if jail.IsChild() {
		jail.ChildMain(jailTools())
		return // not reached: ChildMain exits
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

// jailTools are the Go tools a jail worker of this binary can run: the
// native tools and the audit's collector (which no model is offered).
func jailTools() map[string]jail.ToolFunc {
	m := tools.JailTools()
	maps.Copy(m, audit.JailTools())
	return m
}

// exitError carries a specific exit status out of a command.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func run(ctx context.Context, args []string) int {
	root := newRootCmd()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintln(os.Stderr, "brig:", err)
	return 2
}

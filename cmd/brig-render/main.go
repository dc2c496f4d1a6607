// Command brig-render is the TUI's renderer: it turns Markdown and code
// into styled terminal text (internal/render/engine), answering the
// requests brig sends on its standard input (internal/render). brig
// carries it inside its own binary, as it carries the jail programs, and
// starts it when the TUI starts; nothing else needs glamour or chroma, whose
// package initialisation would otherwise slow every start of brig.
//
// The text it renders is the model's and the tools': untrusted. It needs
// no file, network or signal once started, so it gives up first what
// Landlock restricts — every file access, TCP, abstract Unix sockets,
// signals to other processes (best effort: a kernel without Landlock
// renders unconfined, as brig did in its own process before).
package main

import (
	"fmt"
	"os"

	"github.com/landlock-lsm/go-landlock/landlock"

	"brig/internal/render/engine"
)

func main() {
	if err := landlock.V6.BestEffort().Restrict(); err != nil {
		fmt.Fprintf(os.Stderr, "brig-render: confine itself with Landlock: %v\n", err)
		os.Exit(1)
	}
	if err := engine.Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "brig-render: %v\n", err)
		os.Exit(1)
	}
}

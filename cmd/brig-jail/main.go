// Command brig-jail is the jail's worker: the jail package and the Go
// tools it runs, without the terminal UI, the provider clients, the
// policy, the supervisor and the rest of brig (deps_test.go keeps it so). Go initialises every package a program links before main
// runs, and the UI's packages alone took 12–75 ms of every child's start.
// brig carries it inside its own binary (internal/jailexe) and each call's
// init (cmd/brig-jail-init, which lacks the tools) runs it from the copy
// brig keeps in its state directory, or from a sealed memory file, so
// brig stays one file to install; a brig built without them re-executes
// itself instead.
package main

import (
	"fmt"
	"os"

	"brig/internal/jailtools"
	"brig/jail"
)

func main() {
	if jail.IsChild() {
		jail.ChildMain(jailtools.All(), jailtools.FileTools()...)
		return // not reached: ChildMain exits
	}
	fmt.Fprintln(os.Stderr, "brig-jail is the jail child of brig, started by brig itself; run brig instead")
	os.Exit(2)
}

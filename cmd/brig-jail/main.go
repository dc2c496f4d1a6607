// Command brig-jail is the jail child alone: what brig re-executes for each
// tool call, without the terminal UI, the provider clients and the rest of
// brig. Go initialises every package a program links before main runs,
// and the UI's packages alone took 12–75 ms of every child's start; this
// program starts in about 2 ms. brig carries it inside its own binary
// (internal/jailexe) and runs it from a sealed memory file, so brig stays
// one file; a brig built without it re-executes itself instead.
package main

import (
	"fmt"
	"os"

	"brig/internal/jailtools"
	"brig/jail"
)

func main() {
	if jail.IsChild() {
		jail.ChildMain(jailtools.All())
		return // not reached: ChildMain exits
	}
	fmt.Fprintln(os.Stderr, "brig-jail is the jail child of brig, started by brig itself; run brig instead")
	os.Exit(2)
}

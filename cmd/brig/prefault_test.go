package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// internal/prefault maps the heap's first pages before the packages brig
// links initialise, so it must be the first package initialised after the
// runtime's own in a binary that links what brig links (this test's: the
// same packages, and the testing package's). Go's init trace lists every
// package that has initialisation work, in order.
func TestPrefaultInitialisedFirst(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var order []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "init" && strings.HasPrefix(f[2], "@") {
			order = append(order, f[1])
		}
	}
	for i, pkg := range order {
		if pkg != "runtime" {
			continue
		}
		if i+1 >= len(order) || order[i+1] != "brig/internal/prefault" {
			t.Fatalf("the package initialised after the runtime is not brig/internal/prefault; the order: %s", strings.Join(order, ", "))
		}
		return
	}
	t.Fatalf("no init trace of the runtime in:\n%s", out)
}

package main

import (
	"os"
	"testing"

	"brig/jail"
)

// The test binary doubles as the jail child, as brig itself does.
func TestMain(m *testing.M) {
	if jail.IsChild() {
		jail.ChildMain(nil)
	}
	os.Exit(m.Run())
}

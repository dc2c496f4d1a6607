// Package brigbin builds the brig binary for tests and benchmarks that run
// it the way a user does. It owns nothing else.
package brigbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Build compiles brig into a fresh temporary directory and returns the
// binary's path and a function that removes it.
func Build() (string, func(), error) {
	dir, err := os.MkdirTemp("", "brig-bin-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	bin := filepath.Join(dir, "brig")
	// As make builds it: with the jail child carried inside.
	script, err := buildScript()
	if err != nil {
		cleanup()
		return "", nil, err
	}
	if out, err := exec.Command("sh", script, bin).CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("build brig: %v\n%s", err, out)
	}
	return bin, cleanup, nil
}

// buildScript finds internal/build/build.sh from the module root.
func buildScript() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("find the module: %w", err)
	}
	return filepath.Join(filepath.Dir(strings.TrimSpace(string(out))), "internal", "build", "build.sh"), nil
}

// Main is a TestMain body for packages that need the binary: it builds
// brig into *bin, runs the tests and exits with their status.
func Main(m interface{ Run() int }, bin *string) {
	path, cleanup, err := Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*bin = path
	code := m.Run()
	cleanup()
	os.Exit(code)
}

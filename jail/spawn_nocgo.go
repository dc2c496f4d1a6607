//go:build !cgo

package jail

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// spawnCommand starts a command through the C clone in spawn.go, which
// needs cgo. A jail program built without it (a plain CGO_ENABLED=0
// build; build.sh builds init and the workers with cgo) links this
// stand-in, which fails every command, closed, saying how to build it.
func spawnCommand(string, []string, []string, int, []unix.SockFilter) (int, *StageError) {
	return -1, &StageError{Stage: StageExec, Msg: "this jail program was built without cgo, so it cannot start a command; build brig with internal/build/build.sh (make build)"}
}

// StartInNamespaces needs the C clone in spawn.go; only the supervisor
// calls it, and brig is always built with cgo.
func StartInNamespaces(p NSProcess) (*os.Process, error) {
	return nil, fmt.Errorf("start %s: this program was built without cgo, which starting a program in new namespaces needs; build brig with internal/build/build.sh (make build)", p.Path)
}

// spawnDirect needs the C clone in spawn.go, like spawnCommand.
func spawnDirect(string, []string, []string, int, []unix.SockFilter, directSteps) (int, *StageError) {
	return -1, &StageError{Stage: StageExec, Msg: "this jail program was built without cgo, so it cannot start a command; build brig with internal/build/build.sh (make build)"}
}

// SetNonDumpable marks the calling process non-dumpable (nothing here
// starts a child whose window it could close).
func SetNonDumpable() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("PR_SET_DUMPABLE: %w", err)
	}
	return nil
}

// openServed needs the C clone in spawn.go: without it, init opens no
// file for a file tool, and the call goes to a worker (Result.Redo).
func openServed(int, []unix.SockFilter, directSteps) (*os.File, *StageError) {
	return nil, &StageError{Stage: stageUnserved, Msg: "this jail program was built without cgo, so it opens no file for a tool"}
}

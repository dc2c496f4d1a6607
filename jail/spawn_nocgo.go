//go:build !cgo

package jail

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// spawnCommand starts a command through the C clone in spawn.go, which
// needs cgo. The jail's init (cmd/brig-jail-init) is built without cgo —
// it never starts a command, and a cgo start-up costs every call — so
// this stand-in is what it links. A worker built without cgo fails every
// command here, closed, saying how to build it.
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

package jail

import (
	"errors"
	"fmt"
	"syscall"
)

// Stage names a step of the child's set-up. A failure at any stage comes back
// to the supervisor as a *StageError naming it, never as a silent exit.
type Stage string

const (
	StagePrepare  Stage = "prepare"  // the supervisor could not prepare the call's toolchain cache
	StageSpawn    Stage = "spawn"    // the supervisor could not start the child
	StageProtocol Stage = "protocol" // a message on fd 3 was missing or malformed
	StageSession  Stage = "session"  // setsid, parent-death signal, subreaper
	StageMount    Stage = "mount"    // the namespace view (private /tmp, read-only binds)
	StageScope    Stage = "scope"    // init's outer Landlock domain, or the lack of any containment
	StageWorker   Stage = "worker"   // starting the worker process
	StageDir      Stage = "chdir"    // entering the working directory
	StageRlimit   Stage = "rlimit"   // resource limits
	StageCaps     Stage = "caps"     // preparing or checking an unprivileged worker (capabilities, no_new_privs)
	StageLandlock Stage = "landlock"
	StageSeccomp  Stage = "seccomp"
	StageFDs      Stage = "fds"     // closing inherited descriptors
	StageExec     Stage = "exec"    // finding or executing the command
	StageTool     Stage = "tool"    // a Go tool failed to start
	StageNetwork  Stage = "network" // the way to the egress proxy
)

// Stages of a file tool's open in a serving init (openServed), which
// never leave init: the open's own failure goes to the tool, and a file
// init does not read sends the call to a worker (Result.Redo).
const (
	stageOpen     Stage = "open"
	stageUnserved Stage = "unserved"
)

// StageError is a failure of one set-up stage in the child.
type StageError struct {
	Stage Stage  `json:"stage"`
	Errno int    `json:"errno,omitempty"`
	Msg   string `json:"msg"`
}

func (e *StageError) Error() string {
	return fmt.Sprintf("jail %s: %s", e.Stage, e.Msg)
}

// Unwrap exposes the errno so callers can use errors.Is(err, syscall.ENOENT).
func (e *StageError) Unwrap() error {
	if e.Errno == 0 {
		return nil
	}
	return syscall.Errno(e.Errno)
}

// stageErr builds a StageError from err, keeping its errno when it has one.
func stageErr(stage Stage, err error) *StageError {
	se := &StageError{Stage: stage, Msg: err.Error()}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		se.Errno = int(errno)
	}
	return se
}

// ErrUnenforceable is wrapped by errors for Specs the kernel cannot enforce.
var ErrUnenforceable = errors.New("the kernel cannot enforce this jail")

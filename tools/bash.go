package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"brig/jail"
	"brig/policy/toolcall"
)

// BashArgs are the arguments of a bash call.
type BashArgs struct {
	Command        string `json:"command"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty"`
	Description    string `json:"description,omitempty"`
}

func (a *BashArgs) validate() error {
	if strings.TrimSpace(a.Command) == "" {
		return errors.New("command is required")
	}
	if strings.ContainsRune(a.Command, 0) {
		return errors.New("command contains a NUL byte")
	}
	if a.TimeoutSeconds < 0 {
		return errors.New("timeout_seconds must not be negative")
	}
	if time.Duration(a.TimeoutSeconds)*time.Second > MaxBashTimeout {
		return fmt.Errorf("timeout_seconds is at most %d", int(MaxBashTimeout/time.Second))
	}
	return nil
}

// Timeout is the wall-clock limit the call asks for (the default when none).
func (a BashArgs) Timeout() time.Duration {
	if a.TimeoutSeconds == 0 {
		return DefaultBashTimeout
	}
	return time.Duration(a.TimeoutSeconds) * time.Second
}

// ParseBashArgs decodes and checks bash arguments; the caller uses Timeout
// for the call's Spec.
func ParseBashArgs(raw json.RawMessage) (BashArgs, error) { return decodeArgs[BashArgs](raw) }

func bashDef() Definition {
	d := define(Bash, toolcall.EffectExec,
		fmt.Sprintf("Run a bash command in the workspace, in a jail: it sees only the paths it was granted, has no network unless granted, and leaves no process behind. The result is stdout and stderr in the order they came (each run labelled [stdout]/[stderr] when both were used), then the exit status; beyond %d KiB the middle is left out (the first %d KiB and the last %d KiB are kept) and a note says how much. When the jail refused a path or the network, a [brig: …] note says so. Default timeout %s, at most %s. Prefer the file tools for reading, searching and editing files.",
			MaxCommandOutputBytes>>10, CommandHeadBytes>>10, CommandTailBytes>>10, DefaultBashTimeout, MaxBashTimeout),
		`{"type":"object","properties":{`+
			`"command":{"type":"string","description":"The command line, run with bash -c"},`+
			`"timeout_seconds":{"type":"integer","minimum":1,"maximum":`+fmt.Sprint(int(MaxBashTimeout/time.Second))+`},`+
			`"description":{"type":"string","description":"A few words on what the command does, shown to the user"}`+
			`},"required":["command"],"additionalProperties":false}`,
		func(a BashArgs) toolcall.Call { return toolcall.Call{Command: a.Command} },
		nil)
	d.Runs = JailCommand
	d.invoke = func(raw json.RawMessage) (jail.Invocation, error) {
		a, err := ParseBashArgs(raw)
		if err != nil {
			return jail.Invocation{}, err
		}
		return jail.Invocation{Argv: []string{"/bin/bash", "-c", a.Command}}, nil
	}
	return d
}

// Package toolcall owns the terms a tool call is described in for the
// policy: its Effect, the Call a tool builds from its arguments, and the
// session's approval Mode. It is the whole of the policy the tools (and so
// the jail's worker program, which runs them) need: it holds no rule and
// decides nothing, so the worker does not link, or initialise, the policy's
// tables. Package policy re-exports these names.
package toolcall

import (
	"fmt"
	"strings"
)

// Effect is what kind of thing a tool does. It decides what a mode
// advertises and what a call may be granted.
type Effect string

// The effects.
const (
	// EffectNone touches nothing outside brig (update_plan).
	EffectNone Effect = "none"
	// EffectRead reads files (read_file, glob, search_code …).
	EffectRead Effect = "read"
	// EffectWrite creates, changes or removes files (write_file, edit_file …).
	EffectWrite Effect = "write"
	// EffectExec runs a command line (bash).
	EffectExec Effect = "exec"
	// EffectNetwork reaches a host (web_fetch).
	EffectNetwork Effect = "network"
	// EffectMCP calls a tool of an MCP server (named SERVER__TOOL): it is
	// decided by Mcp rules alone, Ask by default. The server's own jail is
	// fixed by its configuration, not by the call.
	EffectMCP Effect = "mcp"
)

// Call is one tool call in the terms the policy decides on: what it reads,
// writes, runs and reaches. Tools build it from their arguments; the policy
// resolves its paths, gives it a tier and compiles it to a jail.Spec.
type Call struct {
	Tool   string `json:"tool"`
	Effect Effect `json:"effect"`
	// Read and Write are the paths the call touches, as the model gave them
	// (relative paths are relative to the workspace).
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
	// Command is the command line of a bash call; Dir its working
	// directory as given (empty: the workspace).
	Command string `json:"command,omitempty"`
	Dir     string `json:"dir,omitempty"`
	// Host is the host a network call reaches.
	Host string `json:"host,omitempty"`
	// Confirm asks the user even in modes that auto-approve (delete_path).
	Confirm bool `json:"confirm,omitempty"`
	// Programs says a file tool runs system programs inside its jail
	// (search_code runs ripgrep): it gets the system roots to execute.
	Programs bool `json:"programs,omitempty"`
}

// Mode is the session's approval mode, independent of the jail profile.
type Mode string

// The modes.
const (
	// ModePlan is read-only: write tools are neither advertised nor run;
	// bash runs in a read-only jail.
	ModePlan Mode = "plan"
	// ModeAsk asks for everything that is not Allowed (the default).
	ModeAsk Mode = "ask"
	// ModeEdit auto-approves file edits inside the workspace.
	ModeEdit Mode = "edit"
	// ModeAuto auto-approves everything that is not Denied; the jail still
	// applies.
	ModeAuto Mode = "auto"
)

// Modes lists the modes in order of increasing autonomy.
func Modes() []Mode { return []Mode{ModePlan, ModeAsk, ModeEdit, ModeAuto} }

// ParseMode accepts a mode name, case-insensitively.
func ParseMode(s string) (Mode, error) {
	m := Mode(strings.ToLower(strings.TrimSpace(s)))
	for _, known := range Modes() {
		if m == known {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown mode %q (want plan, ask, edit or auto)", s)
}

// Advertises reports whether tools with effect e are offered to the model in
// mode m. Plan mode hides every tool that writes; it is refused again at run
// time by the same rule.
func (m Mode) Advertises(e Effect) bool {
	return m != ModePlan || e != EffectWrite
}

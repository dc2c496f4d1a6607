package policy

import "brig/policy/toolcall"

// The terms of a tool call live in package toolcall, which the jail's
// worker links without the rest of the policy; these names are the same
// types and values.
type (
	// Effect is what kind of thing a tool does (toolcall.Effect).
	Effect = toolcall.Effect
	// Call is one tool call in the terms the policy decides on (toolcall.Call).
	Call = toolcall.Call
	// Mode is the session's approval mode (toolcall.Mode).
	Mode = toolcall.Mode
)

// The effects and modes (see toolcall).
const (
	EffectNone    = toolcall.EffectNone
	EffectRead    = toolcall.EffectRead
	EffectWrite   = toolcall.EffectWrite
	EffectExec    = toolcall.EffectExec
	EffectNetwork = toolcall.EffectNetwork
	EffectMCP     = toolcall.EffectMCP

	ModePlan = toolcall.ModePlan
	ModeAsk  = toolcall.ModeAsk
	ModeEdit = toolcall.ModeEdit
	ModeAuto = toolcall.ModeAuto
)

// Modes lists the modes in order of increasing autonomy.
func Modes() []Mode { return toolcall.Modes() }

// ParseMode accepts a mode name, case-insensitively.
func ParseMode(s string) (Mode, error) { return toolcall.ParseMode(s) }

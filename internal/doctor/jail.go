package doctor

// JailRun says how this build runs a call's jail on this machine: where
// its programs come from and whether a command needs a worker process.
// Neither changes what a call may do; both change what a call costs.
type JailRun struct {
	// Programs is where the jail's programs run from, or why each start
	// writes them into memory (about 5 ms of CPU every session).
	Programs string `json:"programs"`
	// Kept: they run from brig's state directory.
	Kept bool `json:"kept"`
	// Commands says whether each call's init starts a command itself, or
	// why a worker process does (a second program started per call).
	Commands string `json:"commands"`
	// Direct: commands start without a worker.
	Direct bool `json:"direct"`
	// GoLayer says whether calls' Go builds start from the standard
	// library brig cache warm built, and if not, why ("" when this
	// machine has no go on PATH and no layer).
	GoLayer string `json:"go_layer,omitempty"`
}

// SetJailRun records how calls run; it never makes the report not OK.
func (r *Report) SetJailRun(j JailRun) { r.JailRun = &j }

// writeJailRun prints the JailRun section.
func (r Report) writeJailRun(p func(string, ...any)) {
	j := r.JailRun
	if j == nil {
		return
	}
	p("\nHow calls run (their cost, not what they may do)\n")
	p("  programs\t%s\n", j.Programs)
	p("  commands\t%s\n", j.Commands)
	if j.GoLayer != "" {
		p("  Go builds\t%s\n", j.GoLayer)
	}
}

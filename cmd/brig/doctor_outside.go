package main

import (
	"io"
	"strings"

	"brig/internal/doctor"
	"brig/jail"
	"brig/policy"
)

// outsideStatus is what every bash call of the current workspace can read
// outside it, with what is masked, refused, and looks like a credential.
func outsideStatus(opts *doctorOptions, namespaces bool) doctor.Outside {
	wp, err := openPolicy(procEnv{Cwd: opts.Cwd, Home: opts.Home, Env: opts.Env, Stdout: io.Discard, Stderr: io.Discard}, "", policy.ModeAsk, namespaces)
	if err != nil {
		return doctor.Outside{Error: err.Error()}
	}
	prof, err := wp.Policy.BashProfile(false, "")
	if err != nil {
		return doctor.Outside{Error: err.Error()}
	}
	o, err := prof.Outside()
	if err != nil {
		return doctor.Outside{Error: err.Error()}
	}
	var out doctor.Outside
	var granted, masked []string
	for _, g := range o.Granted {
		out.Granted = append(out.Granted, doctor.OutsideGrant{Path: g.Path, Access: string(g.Access), Reason: g.Reason})
		if g.Access != jail.Write || !strings.HasPrefix(g.Path, "/dev/") {
			granted = append(granted, g.Path)
		}
	}
	for _, m := range o.Masked {
		out.Masked = append(out.Masked, doctor.OutsideMasked{Path: m.Path, Reason: m.Reason})
		masked = append(masked, m.Path)
	}
	for _, r := range o.Refused {
		out.Refused = append(out.Refused, doctor.OutsideRefused{Path: r.Path, Source: r.Source, Why: r.Why})
	}
	out.Flagged, out.Unscanned = doctor.ScanForCredentials(granted, masked)
	return out
}

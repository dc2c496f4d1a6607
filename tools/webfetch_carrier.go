//go:build brig_carrier && !brig_light_worker

package tools

import "context"

// fetchURL in brig's own binary (the brig_carrier tag of
// internal/build/build.sh): web_fetch runs in the full jail worker brig
// carries (internal/jailtools.FullOnly), so brig links neither the fetch
// nor the HTML converter and character sets, whose packages' set-up cost
// every start of brig 2.5–4 ms here. Only should brig have to run
// itself as its jail worker (its carried programs unusable: it says why
// when it starts) would a call get here.
func fetchURL(context.Context, fetchArgs) Result {
	return errorf("web_fetch could not run: this brig runs it in the jail worker program it carries, and that program could not be used in this session (brig warned why when it started); the other tools still work")
}

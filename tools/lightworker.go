//go:build brig_light_worker

package tools

// The light jail worker (cmd/brig-jail built with the brig_light_worker
// tag; internal/jailtools says which calls it serves) leaves out the Go
// tools whose libraries are most of the worker's size: view_image (image
// decoders) and web_fetch (an HTTPS client, an HTML converter, character
// sets). Their definitions keep only their names, without a function to
// run, so that the registry's list is the same and JailTools has neither.

func viewImageDef() Definition { return Definition{Name: ViewImage, Runs: InJail} }

func webFetchDef() Definition { return Definition{Name: WebFetch, Runs: InJail} }

// Command brig-jail-init is the init process of a jail child and nothing
// else: it links the jail package without the Go tools (and so without
// the policy, the HTML converter, the HTTP client and the image decoders
// they bring), which makes its start-up about half of brig-jail's — all
// but read_file's code (brig/tools/textfile, the standard library alone),
// which an init that serves calls runs itself. brig
// carries it beside brig-jail (internal/jailexe) and starts it as every
// call's init; init either starts the call's command itself (jail/direct.go)
// or runs brig-jail, whose descriptor the supervisor sends it
// ({worker_exe}, jail/doc.go), as the worker. Started as a worker it
// would know no Go tool.
package main

import (
	"fmt"
	"os"

	"brig/jail"
	"brig/tools/textfile"
)

func main() {
	if jail.IsChild() {
		// read_file, which init serves itself on a file its restricted
		// clone opened (jail/direct.go); its code needs only the
		// standard library.
		jail.ChildMain(nil, jail.FileTool{Name: textfile.Name, Run: textfile.Run})
		return // not reached: ChildMain exits
	}
	fmt.Fprintln(os.Stderr, "brig-jail-init is the jail's init process, started by brig itself; run brig instead")
	os.Exit(2)
}

// Package jailtools lists the Go tools a jail worker can run: the native
// tools and the audit's collector. Every program that can be a jail child
// (brig itself, the carried brig-jail worker, and its light build) uses
// this one list, and it says which calls the light worker cannot serve.
// It must not grow anything but the list.
//
// The light worker is cmd/brig-jail built with the brig_light_worker tag
// (internal/build/build.sh): it leaves out the tools named in FullOnly,
// whose libraries (image decoders; an HTTPS client, an HTML converter and
// character sets) made up more than half of the worker, so every call
// that runs a command or another Go tool starts a smaller program.
package jailtools

import (
	"encoding/json"
	"maps"
	"slices"

	"brig/internal/audit/collect"
	"brig/jail"
	"brig/tools"
	"brig/tools/textfile"
)

// All is every Go tool this build of a jail worker runs, by name.
func All() map[string]jail.ToolFunc {
	m := tools.JailTools()
	maps.Copy(m, collect.JailTools())
	return m
}

// FileTools are the Go tools an init that serves calls runs itself, on
// the one file its restricted clone opened (jail/direct.go): read_file.
// The carried init program (cmd/brig-jail-init) lists the same, without
// this package's imports.
func FileTools() []jail.FileTool {
	return []jail.FileTool{{Name: textfile.Name, Run: textfile.Run}}
}

// FullOnly names the Go tools only the full worker runs.
var FullOnly = []tools.Name{tools.ViewImage, tools.WebFetch}

// NeedsFullWorker reports whether inv needs the full worker: a call of a
// FullOnly tool, or a batch that holds one (or that does not decode, so
// that the full worker reports why). Commands and every other tool run in
// the light one.
func NeedsFullWorker(inv jail.Invocation) bool {
	if inv.Tool == tools.BatchTool {
		var entries []tools.BatchEntry
		if err := json.Unmarshal(inv.Args, &entries); err != nil {
			return true
		}
		return slices.ContainsFunc(entries, func(e tools.BatchEntry) bool { return fullOnly(e.Tool) })
	}
	return fullOnly(inv.Tool)
}

func fullOnly(tool string) bool { return slices.Contains(FullOnly, tools.Name(tool)) }

// Package jailtools lists the Go tools a jail worker can run: the native
// tools and the audit's collector. Both programs that can be a jail child
// (brig itself, and the small brig-jail carried inside it) use this one
// list. It must not grow anything but the list.
package jailtools

import (
	"maps"

	"brig/internal/audit/collect"
	"brig/jail"
	"brig/tools"
)

// All is every Go tool a jail worker runs, by name.
func All() map[string]jail.ToolFunc {
	m := tools.JailTools()
	maps.Copy(m, collect.JailTools())
	return m
}

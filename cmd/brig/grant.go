package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"brig/internal/termsafe"
	"brig/jail"
)

// writeGrant prints a jail Spec for a person, each line after indent: the
// working directory, every path rule that applies on this machine (the
// optional ones whose path is missing are counted, not listed), what stays
// read-only or hidden inside them, /tmp, the network, Unix sockets, the
// environment's names (never their values) and the limits. brig policy
// check and brig sandbox --explain share it; --explain=json gives the Spec
// whole.
func writeGrant(w io.Writer, spec jail.Spec, indent string) {
	line := func(format string, a ...any) { fmt.Fprintf(w, indent+format+"\n", a...) }
	line("dir   %s", termsafe.Line(spec.Dir))
	absent := 0
	for _, p := range spec.Paths {
		if p.Optional {
			if _, err := os.Lstat(p.Path); err != nil {
				absent++
				continue
			}
		}
		line("%-5s %s", p.Access, termsafe.Line(p.Path))
	}
	if absent > 0 {
		line("(and %d optional paths not on this machine, which the jail skips)", absent)
	}
	if n := len(spec.Protected); n > 0 {
		line("read-only inside those (protected): %d paths, e.g. %s", n, termsafe.Line(strings.Join(spec.Protected[:min(n, 3)], ", ")))
	}
	if n := len(spec.Hidden); n > 0 {
		line("hidden (never readable): %d paths, e.g. %s", n, termsafe.Line(strings.Join(spec.Hidden[:min(n, 3)], ", ")))
	}
	if spec.PrivateTmp {
		line("/tmp and /dev/shm: private to the call, %s each", jail.Bytes(spec.Limits.TmpBytes))
	}
	net := "none"
	if spec.Network {
		net = "through brig's proxy, each host decided as it connects"
	}
	line("network: %s", net)
	if spec.UnixSockets {
		line("Unix sockets: may be created (connecting is confined by the paths above)")
	}
	if len(spec.Env) > 0 {
		names := make([]string, len(spec.Env))
		for i, kv := range spec.Env {
			names[i], _, _ = strings.Cut(kv, "=")
		}
		line("environment: %s (values not shown)", termsafe.Line(strings.Join(names, " ")))
	}
	if l := limitsText(spec.Limits); l != "" {
		line("limits: %s", l)
	}
}

// limitsText names the limits set in l ("" when none is).
func limitsText(l jail.Limits) string {
	var parts []string
	if l.Timeout > 0 {
		parts = append(parts, "time "+l.Timeout.String())
	}
	if l.Memory > 0 {
		parts = append(parts, "memory "+jail.Bytes(l.Memory))
	}
	if l.Processes > 0 {
		parts = append(parts, fmt.Sprintf("%d processes", l.Processes))
	}
	if l.Disk > 0 {
		parts = append(parts, "disk "+jail.Bytes(l.Disk))
	}
	if l.FileSize > 0 {
		parts = append(parts, "file size "+jail.Bytes(l.FileSize))
	}
	if l.OutputBytes > 0 {
		parts = append(parts, "output "+jail.Bytes(uint64(l.OutputBytes))+" per stream")
	}
	return strings.Join(parts, ", ")
}

package tools

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"brig/jail"
)

// maxNetNoteHosts bounds the refused hosts one note names.
const maxNetNoteHosts = 5

// NetworkNote tells the model what brig's egress proxy refused during a
// call: each refused host and port (the first few) with why, and the hosts
// the user's rules and presets allow, so it can choose one of those or
// tell the user what to allow. "" when nothing was refused.
func NetworkNote(conns []jail.Connection, allowed []string) string {
	var refused, down []string
	seen := map[string]bool{}
	more := 0
	for _, c := range conns {
		if c.Refused == "" || c.Host == "" {
			continue
		}
		target := net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
		if seen[target] {
			continue
		}
		seen[target] = true
		if c.Unreachable {
			if len(down) < maxNetNoteHosts {
				down = append(down, fmt.Sprintf("%s (%s)", target, c.Refused))
			}
			continue
		}
		if len(refused) == maxNetNoteHosts {
			more++
			continue
		}
		refused = append(refused, fmt.Sprintf("%s (%s)", target, c.Refused))
	}
	var b strings.Builder
	if len(down) > 0 {
		b.WriteString("[brig: the proxy could not connect to " + strings.Join(down, "; ") + ": the host is allowed, but nothing answered there (no server listening on that port, or the host is down). This is not a refusal: check the address and port, or start the server]")
	}
	if len(refused) == 0 {
		return b.String()
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	b.WriteString("[brig: the network proxy refused ")
	b.WriteString(strings.Join(refused, "; "))
	if more > 0 {
		fmt.Fprintf(&b, "; and %d more", more)
	}
	b.WriteString(". ")
	if len(allowed) == 0 {
		b.WriteString("No host is allowed without asking the user.")
	} else {
		b.WriteString("Allowed without asking: " + strings.Join(allowed, ", ") + ".")
	}
	b.WriteString(" Do not retry a refused host unchanged; use an allowed one, or tell the user which host the task needs and why]")
	return b.String()
}

// NetSummary sums up a call's connections in a few words for the UI's
// result line: how many went through to which hosts, the bytes each way,
// and which hosts were refused. "" when there were none.
func NetSummary(conns []jail.Connection) string {
	if len(conns) == 0 {
		return ""
	}
	var up, down int64
	var ok, refused, silent []string
	count := map[string]int{}
	nOK := 0
	for _, c := range conns {
		if c.Refused != "" && c.Unreachable {
			if !slices.Contains(silent, c.Host) {
				silent = append(silent, c.Host)
			}
			continue
		}
		if c.Refused != "" {
			if c.Host != "" && !slices.Contains(refused, c.Host) {
				refused = append(refused, c.Host)
			} else if c.Host == "" && !slices.Contains(refused, "over the limit") {
				refused = append(refused, "over the limit")
			}
			continue
		}
		nOK++
		up += c.Up
		down += c.Down
		if count[c.Host] == 0 {
			ok = append(ok, c.Host)
		}
		count[c.Host]++
	}
	var parts []string
	if nOK > 0 {
		hosts := ok
		if len(hosts) > 3 {
			hosts = append(slices.Clone(hosts[:3]), fmt.Sprintf("+%d", len(ok)-3))
		}
		parts = append(parts, fmt.Sprintf("net %s to %s, ↑%s ↓%s", plural(nOK, "connection", "connections"), strings.Join(hosts, " "), humanBytes(up), humanBytes(down)))
	}
	if len(refused) > 0 {
		shown := refused
		if len(shown) > 3 {
			shown = append(slices.Clone(shown[:3]), fmt.Sprintf("+%d", len(refused)-3))
		}
		parts = append(parts, "refused "+strings.Join(shown, " "))
	}
	if len(silent) > 0 {
		parts = append(parts, "nothing answered at "+strings.Join(silent, " "))
	}
	return strings.Join(parts, " · ")
}

package jail

import (
	"bytes"
	"os"
	"strconv"
)

// MemTotal is the machine's memory in bytes (MemTotal in /proc/meminfo),
// or 0 when it cannot be read.
func MemTotal() uint64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte("MemTotal:")); ok {
			f := bytes.Fields(rest)
			if len(f) == 2 && string(f[1]) == "kB" {
				if kb, err := strconv.ParseUint(string(f[0]), 10, 64); err == nil {
					return kb << 10
				}
			}
		}
	}
	return 0
}

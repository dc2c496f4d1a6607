package policy

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"brig/jail"
)

// LimitsConfig is the [limits] table: the bounds of every jailed call, over
// brig's defaults (jail.DefaultLimits). Sizes are bytes, or a number with
// K, M, G or T (powers of 1024).
//
//	[limits]
//	memory = "4G"       # the call's memory in total: its processes plus its /tmp and /dev/shm
//	processes = 4096    # processes and threads at once
//	disk = "10G"        # free disk space a call may use up (0: not watched)
//	tmp = "1G"          # size of the private /tmp and of /dev/shm, each (counted in memory)
//	file_size = "4G"    # the largest file a call may write
//	timeout = "10m"     # wall clock of a call (a bash call may ask for less)
//
// A repository's config may only lower them until the workspace is
// trusted.
type LimitsConfig struct {
	Memory    Size     `toml:"memory" json:"memory,omitempty"`
	Processes uint64   `toml:"processes" json:"processes,omitempty"`
	Disk      *Size    `toml:"disk" json:"disk,omitempty"` // nil: not set; 0: not watched
	Tmp       Size     `toml:"tmp" json:"tmp,omitempty"`
	FileSize  Size     `toml:"file_size" json:"file_size,omitempty"`
	Timeout   Duration `toml:"timeout" json:"timeout,omitempty"`
}

// merge lets o's settings override l's.
func (l LimitsConfig) merge(o LimitsConfig) LimitsConfig {
	pick := func(a, b uint64) uint64 {
		if b != 0 {
			return b
		}
		return a
	}
	l.Memory = Size(pick(uint64(l.Memory), uint64(o.Memory)))
	l.Processes = pick(l.Processes, o.Processes)
	l.Tmp = Size(pick(uint64(l.Tmp), uint64(o.Tmp)))
	l.FileSize = Size(pick(uint64(l.FileSize), uint64(o.FileSize)))
	l.Timeout = Duration(pick(uint64(l.Timeout), uint64(o.Timeout)))
	if o.Disk != nil {
		l.Disk = o.Disk
	}
	return l
}

// tighten takes o's settings only where they are stricter than what l
// (over the defaults) gives: an untrusted repository may lower a limit,
// never raise it. It also returns the settings it took.
func (l LimitsConfig) tighten(o LimitsConfig, defaults jail.Limits) (LimitsConfig, []LimitSetting) {
	cur := l.Apply(defaults)
	lower := func(now, want uint64) bool { return want != 0 && (now == 0 || want < now) }
	var took LimitsConfig
	if lower(cur.Memory, uint64(o.Memory)) {
		l.Memory, took.Memory = o.Memory, o.Memory
	}
	if lower(cur.Processes, o.Processes) {
		l.Processes, took.Processes = o.Processes, o.Processes
	}
	if lower(cur.TmpBytes, uint64(o.Tmp)) {
		l.Tmp, took.Tmp = o.Tmp, o.Tmp
	}
	if lower(cur.FileSize, uint64(o.FileSize)) {
		l.FileSize, took.FileSize = o.FileSize, o.FileSize
	}
	if lower(uint64(cur.Timeout), uint64(o.Timeout)) {
		l.Timeout, took.Timeout = o.Timeout, o.Timeout
	}
	if o.Disk != nil && lower(cur.Disk, uint64(*o.Disk)) {
		l.Disk, took.Disk = o.Disk, o.Disk
	}
	return l, took.settings()
}

// Raises lists l's settings above what now gives, each with now's value:
// what trusting a repository's config would widen, which untrusted it
// does not get.
func (l LimitsConfig) Raises(now jail.Limits) []LimitRaise {
	above := func(cur, want uint64) bool { return want != 0 && cur != 0 && want > cur }
	var up LimitsConfig
	if above(now.Memory, uint64(l.Memory)) {
		up.Memory = l.Memory
	}
	if above(now.Processes, l.Processes) {
		up.Processes = l.Processes
	}
	if above(now.TmpBytes, uint64(l.Tmp)) {
		up.Tmp = l.Tmp
	}
	if above(now.FileSize, uint64(l.FileSize)) {
		up.FileSize = l.FileSize
	}
	if above(uint64(now.Timeout), uint64(l.Timeout)) {
		up.Timeout = l.Timeout
	}
	if l.Disk != nil && now.Disk != 0 && (*l.Disk == 0 || uint64(*l.Disk) > now.Disk) {
		up.Disk = l.Disk
	}
	cur := LimitsConfig{Memory: Size(now.Memory), Processes: now.Processes, Tmp: Size(now.TmpBytes), FileSize: Size(now.FileSize), Timeout: Duration(now.Timeout)}
	disk := Size(now.Disk)
	cur.Disk = &disk
	was := map[string]string{}
	for _, s := range cur.settings() {
		was[s.Key] = s.Value
	}
	var out []LimitRaise
	for _, s := range up.settings() {
		out = append(out, LimitRaise{LimitSetting: s, Now: was[s.Key]})
	}
	return out
}

// LimitRaise is a [limits] setting above the limit in effect (Now).
type LimitRaise struct {
	LimitSetting
	Now string
}

// LimitSetting is one [limits] key a config file set that is in effect.
type LimitSetting struct {
	Key   string `json:"key"`   // as in [limits]: memory, processes, disk, tmp, file_size, timeout
	Value string `json:"value"` // as brig reads it: "2 MiB", "16", "30s"
}

func (s LimitSetting) String() string { return fmt.Sprintf("[limits] %s = %s", s.Key, s.Value) }

// settings lists the keys the table sets, in the table's order.
func (l LimitsConfig) settings() []LimitSetting {
	var out []LimitSetting
	add := func(set bool, key, value string) {
		if set {
			out = append(out, LimitSetting{Key: key, Value: value})
		}
	}
	add(l.Memory != 0, "memory", jail.Bytes(uint64(l.Memory)))
	add(l.Processes != 0, "processes", strconv.FormatUint(l.Processes, 10))
	if l.Disk != nil {
		v := jail.Bytes(uint64(*l.Disk))
		if *l.Disk == 0 {
			v = "0 (not watched)"
		}
		add(true, "disk", v)
	}
	add(l.Tmp != 0, "tmp", jail.Bytes(uint64(l.Tmp)))
	add(l.FileSize != 0, "file_size", jail.Bytes(uint64(l.FileSize)))
	add(l.Timeout != 0, "timeout", time.Duration(l.Timeout).String())
	return out
}

// limitKeys are the [limits] keys of the limits a call's result names
// (jail.Result.Limit, and "timeout" for a call that timed out).
var limitKeys = map[string]string{
	jail.LimitMemory: "memory", jail.LimitProcesses: "processes", jail.LimitDisk: "disk",
	jail.LimitFileSize: "file_size", "timeout": "timeout",
}

// RepoLimit is the repository config's setting of the limit a call hit
// (a jail.Result.Limit name, or "timeout"), with that layer, when that
// config set the limit in effect; ok is false when the user's config or
// brig's default did.
func (l Loaded) RepoLimit(limit string) (set LimitSetting, layer Layer, ok bool) {
	key := limitKeys[limit]
	for _, ly := range l.Layers {
		if ly.Kind != "repository" {
			continue
		}
		for _, s := range ly.Limits {
			if s.Key == key {
				return s, ly, true
			}
		}
	}
	return LimitSetting{}, Layer{}, false
}

// empty reports whether the table sets nothing.
func (l LimitsConfig) empty() bool { return l == LimitsConfig{} }

// Apply returns def with the table's settings over it. The private /tmp
// is never larger than the memory it counts against.
func (l LimitsConfig) Apply(def jail.Limits) jail.Limits {
	if l.Memory != 0 {
		def.Memory = uint64(l.Memory)
	}
	if l.Processes != 0 {
		def.Processes = l.Processes
	}
	if l.Disk != nil {
		def.Disk = uint64(*l.Disk)
	}
	if l.Tmp != 0 {
		def.TmpBytes = uint64(l.Tmp)
	}
	if l.FileSize != 0 {
		def.FileSize = uint64(l.FileSize)
	}
	if l.Timeout != 0 {
		def.Timeout = time.Duration(l.Timeout)
	}
	if def.Memory != 0 && def.TmpBytes > def.Memory {
		def.TmpBytes = def.Memory
	}
	return def
}

// Size is a byte count written as a number of bytes or with a K, M, G or T
// suffix ("512M", "1.5G").
type Size uint64

// UnmarshalTOML accepts an integer or a string.
func (s *Size) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case int64:
		if x < 0 {
			return fmt.Errorf("size %d is negative", x)
		}
		*s = Size(x)
		return nil
	case string:
		n, err := ParseSize(x)
		*s = Size(n)
		return err
	}
	return fmt.Errorf("size %v: want a number of bytes or a string like \"512M\"", v)
}

// ParseSize parses "123", "512K", "64M", "1.5G", "2T" (powers of 1024).
func ParseSize(text string) (uint64, error) {
	t := strings.TrimSpace(strings.ToUpper(text))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	mult := uint64(1)
	if t != "" {
		if i := strings.IndexByte("KMGT", t[len(t)-1]); i >= 0 {
			mult = 1 << (10 * (i + 1))
			t = t[:len(t)-1]
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("size %q: want a number of bytes, or one with K, M, G or T (\"512M\")", text)
	}
	return uint64(f * float64(mult)), nil
}

// Duration is a time.Duration written as a string ("10m", "90s").
type Duration time.Duration

// UnmarshalText parses the duration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil || v < 0 {
		return fmt.Errorf("duration %q: want a duration like \"10m\" or \"90s\"", b)
	}
	*d = Duration(v)
	return nil
}

package doctor

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"brig/jail"
)

// Machine is what the report needs besides the kernel's features: the
// architecture this binary was built for, and the settings that can turn
// user namespaces off (so that the fix names the one in force). ReadMachine
// reads them; tests inject them.
type Machine struct {
	Arch string `json:"arch"` // GOARCH of this binary
	// Sysctls, -1 where this kernel does not have one.
	AppArmorRestrictUserNS int `json:"apparmor_restrict_unprivileged_userns"` // kernel.apparmor_restrict_unprivileged_userns (Ubuntu 23.10+)
	UnprivUserNSClone      int `json:"unprivileged_userns_clone"`             // kernel.unprivileged_userns_clone (Debian's older kernels)
	MaxUserNamespaces      int `json:"max_user_namespaces"`                   // user.max_user_namespaces
	// Executable is this brig's binary (links resolved).
	Executable string `json:"executable,omitempty"`
	// AppArmorProfile is the binary /etc/apparmor.d/brig lets create user
	// namespaces ("" when there is no such profile), and AppArmorLabel
	// this process's AppArmor label ("brig (unconfined)" when the
	// profile is loaded and attached to it; "" without AppArmor).
	AppArmorProfile string `json:"apparmor_profile,omitempty"`
	AppArmorLabel   string `json:"apparmor_label,omitempty"`
}

// AppArmorProfilePath is where make install puts brig's AppArmor profile.
const AppArmorProfilePath = "/etc/apparmor.d/brig"

// ReadMachine reads the architecture and, read-only, the three sysctls and
// brig's AppArmor state.
func ReadMachine() Machine {
	m := Machine{
		Arch:                   runtime.GOARCH,
		AppArmorRestrictUserNS: readSysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"),
		UnprivUserNSClone:      readSysctl("/proc/sys/kernel/unprivileged_userns_clone"),
		MaxUserNamespaces:      readSysctl("/proc/sys/user/max_user_namespaces"),
		AppArmorProfile:        profileBinary(AppArmorProfilePath),
	}
	if exe, err := os.Executable(); err == nil {
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		m.Executable = exe
	}
	for _, p := range []string{"/proc/self/attr/apparmor/current", "/proc/self/attr/current"} {
		if b, err := os.ReadFile(p); err == nil {
			m.AppArmorLabel = strings.TrimSpace(strings.TrimRight(string(b), "\x00"))
			break
		}
	}
	return m
}

// profileBinary returns the binary the profile brig in the AppArmor
// profile file at path attaches to, or "".
func profileBinary(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "profile brig ")
		if !ok {
			continue
		}
		bin, _, _ := strings.Cut(rest, " flags=")
		return strings.Trim(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(bin), "{")), `"`)
	}
	return ""
}

// appArmorStep is the first thing to do where AppArmor restricts user
// namespaces: brig's profile, installed for this binary and loaded.
func appArmorStep(m Machine) string {
	exe := m.Executable
	switch {
	case strings.HasPrefix(m.AppArmorLabel, "brig "):
		return "brig already runs under its AppArmor profile (" + AppArmorProfilePath + "); if namespaces still fail, the profile may predate AppArmor 4's userns rule: reinstall it with sudo make install"
	case m.AppArmorProfile == "":
		return "install brig's AppArmor profile, which lets this brig alone create user namespaces: sudo make install from brig's source (it writes and loads " + AppArmorProfilePath + " for $PREFIX/bin/brig; README, Installing)"
	case exe != "" && m.AppArmorProfile != exe:
		return "brig's AppArmor profile (" + AppArmorProfilePath + ") is for " + m.AppArmorProfile + ", not this binary (" + exe + "): run that one, or install this one with sudo make install"
	default:
		return "load brig's AppArmor profile, installed but not in force: sudo apparmor_parser -r " + AppArmorProfilePath
	}
}

func readSysctl(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return v
}

// testedArch reports whether the seccomp filter is built and tested for
// arch (brig's tests run on x86_64 and arm64).
func testedArch(arch string) bool { return arch == "amd64" || arch == "arm64" }

// Finding is one thing this machine lacks, in one line: what it removes
// and what to do, in order. The first step never turns a system-wide
// restriction off: it keeps what holds, or changes something for brig
// alone; a machine-wide switch comes last and says that it is one.
type Finding struct {
	ID      string   `json:"id"`      // landlock, landlock-abi, seccomp, no-new-privs, namespaces, arch, root
	What    string   `json:"what"`    // what is missing, in plain words
	Removes string   `json:"removes"` // what that costs
	Do      []string `json:"do"`      // what to do, first choice first
}

// Line is the finding as one line of text.
func (f Finding) Line() string {
	return f.What + ": removes " + f.Removes + "; do: " + strings.Join(f.Do, "; or ")
}

// refusesCalls is said when a finding makes a baseline guarantee missing.
const refusesCalls = "brig refuses every tool call until it is fixed"

// findings lists what this machine lacks, most fundamental first.
func findings(f jail.Features, m Machine) []Finding {
	var out []Finding
	abi := f.LandlockABI
	add := func(id, what, removes string, do ...string) {
		out = append(out, Finding{ID: id, What: what, Removes: removes, Do: do})
	}

	if abi < 1 {
		add("landlock", "no Landlock"+probeReason(f, "landlock"),
			"the file confinement (fs-confined) and the protected paths: "+refusesCalls,
			fixLandlock)
	} else if abi < 6 {
		var lost []string
		if abi < 2 {
			lost = append(lost, "renaming or linking files across directories (ABI 2)")
		}
		if abi < 3 {
			lost = append(lost, "control of truncate, so a file granted read-only can be emptied (ABI 3)")
		}
		if abi < 4 {
			lost = append(lost, "Landlock's own TCP rules; seccomp still keeps the network off (ABI 4)")
		}
		if f.PIDNS {
			lost = append(lost, "signal and abstract-socket scoping, which the namespaces cover here (ABI 6)")
		} else {
			lost = append(lost, "signal scoping and the containment of leftover processes, which nothing else provides without a PID namespace: "+refusesCalls+" (ABI 6)")
		}
		add("landlock-abi", fmt.Sprintf("Landlock ABI %d (kernel %s)", abi, f.Kernel), strings.Join(lost, "; "),
			"a kernel >= 6.12 (Landlock ABI 6)")
	}

	if !f.Seccomp || !f.SeccompTSync {
		what := "no seccomp filters" + probeReason(f, "seccomp")
		if f.Seccomp {
			what = "no seccomp thread sync (TSYNC)" + probeReason(f, "seccomp_tsync")
		}
		add("seccomp", what,
			"the syscall filter (network-off, unix-sockets, kernel-surface, no-tty-injection): "+refusesCalls,
			"a kernel >= 4.14 with CONFIG_SECCOMP_FILTER=y (every distribution kernel has it); inside a container, a seccomp profile that lets the container load its own filters")
	}

	if !f.NoNewPrivs {
		add("no-new-privs", "no no_new_privs"+probeReason(f, "no_new_privs"),
			"the guarantee that setuid programs gain nothing: "+refusesCalls, "a kernel >= 3.5")
	}

	if !f.Namespaces() {
		var which []string
		for _, ns := range []struct {
			name string
			ok   bool
		}{{"user", f.UserNS}, {"mount", f.MountNS}, {"PID", f.PIDNS}, {"network", f.NetNS}} {
			if !ns.ok {
				which = append(which, ns.name)
			}
		}
		removes := "the private /tmp, the read-only mounts of protected paths (brig puts them back after each call instead: a call can see what it changed in one until it ends), the private network (local test servers fail) and the per-call process count"
		if abi < 6 {
			removes += "; with Landlock below ABI 6 nothing else contains a call's processes: " + refusesCalls
		}
		add("namespaces", "no unprivileged "+strings.Join(which, ", ")+" namespaces"+probeReason(f, "userns"), removes, userNSFix(f, m, true)...)
	}

	if !testedArch(m.Arch) {
		add("arch", "a build for "+m.Arch,
			"a tested syscall filter: brig's seccomp filter is built and tested for x86_64 and arm64 only, and on "+m.Arch+" syscalls it does not list or multiplexed ones (socketcall, ipc) may pass its checks",
			"run brig on an x86_64 or arm64 machine")
	}

	if f.Root && !f.PidsCgroup {
		add("root", "running as root without a pids cgroup",
			"the bound on a call's processes (the kernel never applies RLIMIT_NPROC to uid 0), so a fork bomb runs until the timeout",
			"run brig as an ordinary user", "mount the pids cgroup controller")
	}
	return out
}

// userNSFix is what to do without the namespaces, first choice first:
// allow them for brig alone where the restriction is AppArmor's; else,
// for what a newer kernel provides without them (containment: signals and
// leftover processes), Landlock ABI 6, or living without them; only then
// the machine-wide switch, named as one.
func userNSFix(f jail.Features, m Machine, containment bool) []string {
	var do []string
	if m.AppArmorRestrictUserNS == 1 {
		do = append(do, appArmorStep(m))
	}
	switch {
	case containment && f.LandlockABI < 6:
		do = append(do, "a kernel >= 6.12 (Landlock ABI 6), which contains a call without them")
	case containment:
		do = append(do, "keep the baseline, which holds without them")
	default:
		do = append(do, "accept the cost above: no baseline guarantee depends on it")
	}
	const every = "a machine-wide switch, for every program; an administrator may have set it on purpose"
	switch {
	case m.AppArmorRestrictUserNS == 1:
		do = append(do, "last resort: sysctl kernel.apparmor_restrict_unprivileged_userns=0 ("+every+")")
	case m.UnprivUserNSClone == 0:
		do = append(do, "last resort: sysctl kernel.unprivileged_userns_clone=1 ("+every+")")
	case m.MaxUserNamespaces == 0:
		do = append(do, "last resort: sysctl user.max_user_namespaces=10000 ("+every+")")
	default:
		do = append(do, "inside a container, run it with user namespaces allowed (its runtime or seccomp profile refuses them)")
	}
	return do
}

// userNSFixText is userNSFix as the tail of a guarantee's Why.
func userNSFixText(f jail.Features, m Machine, containment bool) string {
	return strings.Join(userNSFix(f, m, containment), "; or ")
}

package doctor

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"brig/jail"
)

// machines are the injected probe results of the machines brig must
// explain itself on.
func machines() []struct {
	name string
	f    jail.Features
	m    Machine
	ok   bool     // doctor's verdict: no baseline guarantee missing
	ids  []string // the findings, in order
	want []string // facts the one-line findings must state
} {
	noNS := func(f jail.Features) jail.Features {
		f.UserNS, f.MountNS, f.PIDNS, f.NetNS = false, false, false, false
		f.Errors = map[string]string{"userns": "clone(CLONE_NEWUSER): operation not permitted"}
		return f
	}
	withABI := func(f jail.Features, abi int) jail.Features { f.LandlockABI = abi; return f }

	noLandlock := thisKernel()
	noLandlock.LandlockABI = 0
	noLandlock.Errors = map[string]string{"landlock": "landlock_create_ruleset: operation not supported (Landlock is built in but not enabled: add landlock to the lsm= boot parameter)"}

	noSeccomp := thisKernel()
	noSeccomp.Seccomp, noSeccomp.SeccompTSync = false, false
	noTSync := thisKernel()
	noTSync.SeccompTSync = false

	ubuntu := thisMachine()
	ubuntu.AppArmorRestrictUserNS = 1
	debian := thisMachine()
	debian.UnprivUserNSClone = 0
	maxZero := thisMachine()
	maxZero.MaxUserNamespaces = 0
	riscv := thisMachine()
	riscv.Arch = "riscv64"

	root := thisKernel()
	root.Root = true

	return []struct {
		name string
		f    jail.Features
		m    Machine
		ok   bool
		ids  []string
		want []string
	}{
		{"this machine", thisKernel(), thisMachine(), true, nil, nil},
		{"no Landlock", noLandlock, thisMachine(), false, []string{"landlock"},
			[]string{"no Landlock (landlock_create_ruleset: operation not supported", "removes the file confinement", "brig refuses every tool call", "do: use a kernel >= 5.13", "lsm="}},
		{"Landlock ABI 2 with namespaces", withABI(thisKernel(), 2), thisMachine(), true, []string{"landlock-abi"},
			[]string{"Landlock ABI 2 (kernel 6.18.44): removes control of truncate", "which the namespaces cover here", "do: a kernel >= 6.12"}},
		{"Ubuntu 24.04: ABI 4, AppArmor restricts user namespaces", noNS(withABI(thisKernel(), 4)), ubuntu, false, []string{"landlock-abi", "namespaces"},
			[]string{"which nothing else provides without a PID namespace: brig refuses every tool call",
				"no unprivileged user, mount, PID, network namespaces (clone(CLONE_NEWUSER): operation not permitted): removes the private /tmp",
				"do: install brig's AppArmor profile, which lets this brig alone create user namespaces: sudo make install", "; or a kernel >= 6.12 (Landlock ABI 6), which contains a call without them",
				"; or last resort: sysctl kernel.apparmor_restrict_unprivileged_userns=0 (a machine-wide switch"}},
		{"Debian, user namespaces switched off, ABI 7", noNS(thisKernel()), debian, true, []string{"namespaces"},
			[]string{"brig puts them back after each call instead", "do: keep the baseline, which holds without them; or last resort: sysctl kernel.unprivileged_userns_clone=1"}},
		{"max_user_namespaces=0, ABI 5", noNS(withABI(thisKernel(), 5)), maxZero, false, []string{"landlock-abi", "namespaces"},
			[]string{"do: a kernel >= 6.12 (Landlock ABI 6), which contains a call without them; or last resort: sysctl user.max_user_namespaces=10000"}},
		{"a container that refuses user namespaces", noNS(thisKernel()), thisMachine(), true, []string{"namespaces"},
			[]string{"do: keep the baseline, which holds without them; or inside a container, run it with user namespaces allowed"}},
		{"seccomp off", noSeccomp, thisMachine(), false, []string{"seccomp"},
			[]string{"no seccomp filters: removes the syscall filter (network-off, unix-sockets, kernel-surface, no-tty-injection): brig refuses every tool call", "CONFIG_SECCOMP_FILTER=y"}},
		{"seccomp without TSYNC", noTSync, thisMachine(), false, []string{"seccomp"},
			[]string{"no seccomp thread sync (TSYNC): removes the syscall filter"}},
		{"not x86_64 or arm64", thisKernel(), riscv, true, []string{"arch"},
			[]string{"a build for riscv64: removes a tested syscall filter", "socketcall", "do: run brig on an x86_64 or arm64 machine"}},
		{"root without a pids cgroup", root, thisMachine(), true, []string{"root"},
			[]string{"running as root without a pids cgroup: removes the bound on a call's processes", "do: run brig as an ordinary user; or mount the pids cgroup controller"}},
		{"nothing at all", jail.Features{Kernel: "4.4.0", YamaPtraceScope: -1}, riscv, false,
			[]string{"landlock", "seccomp", "no-new-privs", "namespaces", "arch"}, nil},
	}
}

// Each missing thing is one line: what it removes and what to do.
func TestFindings(t *testing.T) {
	for _, tc := range machines() {
		t.Run(tc.name, func(t *testing.T) {
			r := BuildFor(tc.f, tc.m, nil, "")
			if r.OK != tc.ok {
				t.Errorf("OK = %v, want %v", r.OK, tc.ok)
			}
			var ids, lines []string
			for _, f := range r.Findings {
				ids = append(ids, f.ID)
				lines = append(lines, f.Line())
				if f.What == "" || f.Removes == "" || len(f.Do) == 0 || strings.Contains(f.Line(), "\n") {
					t.Errorf("finding %s is not one complete line: %+v", f.ID, f)
				}
			}
			if !slices.Equal(ids, tc.ids) {
				t.Errorf("findings %v, want %v:\n%s", ids, tc.ids, strings.Join(lines, "\n"))
			}
			all := strings.Join(lines, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("the findings do not say %q:\n%s", w, all)
				}
			}
			// The text report shows each as one marked line.
			var buf bytes.Buffer
			if err := r.WriteText(&buf); err != nil {
				t.Fatal(err)
			}
			for _, l := range lines {
				if !strings.Contains(buf.String(), "\n  ! "+l+"\n") {
					t.Errorf("the text report lacks the line %q", l)
				}
			}
			if len(lines) == 0 && strings.Contains(buf.String(), "What this machine lacks") {
				t.Errorf("a section for nothing:\n%s", buf.String())
			}
		})
	}
}

// systemWide matches advice that turns a restriction off for the whole
// machine (a sysctl, a security module or a container profile switched
// off).
var systemWide = regexp.MustCompile(`(?i)sysctl|kernel\.[a-z_]+=|user\.max_user_namespaces|apparmor=0|selinux=0|setenforce|unconfined|seccomp=|last resort|ptrace_scope|unprivileged_bpf`)

// The first fix offered, in a finding or in a guarantee's reason, never
// turns a system-wide restriction off.
func TestFirstFixNeverTurnsARestrictionOff(t *testing.T) {
	for _, tc := range machines() {
		r := BuildFor(tc.f, tc.m, nil, "")
		for _, f := range r.Findings {
			if systemWide.MatchString(f.Do[0]) {
				t.Errorf("%s, %s: the first fix turns a restriction off: %q", tc.name, f.ID, f.Do[0])
			}
		}
		for _, g := range r.Guarantees {
			_, fix, ok := strings.Cut(g.Why, "fix: ")
			if !ok {
				continue
			}
			first, _, _ := strings.Cut(fix, "; or ")
			if systemWide.MatchString(first) {
				t.Errorf("%s, %s: the first fix turns a restriction off: %q", tc.name, g.ID, first)
			}
		}
	}
	// The check itself bites.
	if !systemWide.MatchString("sysctl kernel.unprivileged_userns_clone=1") || !systemWide.MatchString("--security-opt seccomp=unconfined") {
		t.Fatal("systemWide does not recognise the switches it is meant to")
	}
}

// The machine-wide switch is still named, last, where it is the only way
// back to the namespaces.
func TestUserNSFixNamesTheSwitchLast(t *testing.T) {
	for _, tc := range []struct {
		m  Machine
		sw string
	}{
		{Machine{Arch: "amd64", AppArmorRestrictUserNS: 1, UnprivUserNSClone: -1, MaxUserNamespaces: 100}, "kernel.apparmor_restrict_unprivileged_userns=0"},
		{Machine{Arch: "amd64", AppArmorRestrictUserNS: -1, UnprivUserNSClone: 0, MaxUserNamespaces: 100}, "kernel.unprivileged_userns_clone=1"},
		{Machine{Arch: "amd64", AppArmorRestrictUserNS: -1, UnprivUserNSClone: -1, MaxUserNamespaces: 0}, "user.max_user_namespaces="},
	} {
		do := userNSFix(thisKernel(), tc.m, true)
		if last := do[len(do)-1]; !strings.Contains(last, tc.sw) || !strings.Contains(last, "machine-wide") {
			t.Errorf("%+v: the last step %q does not name %s as machine-wide", tc.m, last, tc.sw)
		}
	}
}

func TestReadMachine(t *testing.T) {
	m := ReadMachine()
	if m.Arch == "" {
		t.Error("no architecture")
	}
	for name, v := range map[string]int{"apparmor": m.AppArmorRestrictUserNS, "clone": m.UnprivUserNSClone, "max": m.MaxUserNamespaces} {
		if v < -1 {
			t.Errorf("%s = %d", name, v)
		}
	}
	if readSysctl("/nonexistent/sysctl") != -1 {
		t.Error("an absent sysctl is not -1")
	}
}

// Where AppArmor restricts user namespaces, the first step is brig's own
// profile, as it stands on this machine: install it, install it for this
// binary, or load it.
func TestAppArmorStep(t *testing.T) {
	m := Machine{Arch: "amd64", AppArmorRestrictUserNS: 1, UnprivUserNSClone: -1, MaxUserNamespaces: 100, Executable: "/usr/local/bin/brig"}
	for _, tc := range []struct {
		name           string
		profile, label string
		want           string
	}{
		{"no profile", "", "unconfined", "install brig's AppArmor profile, which lets this brig alone create user namespaces: sudo make install"},
		{"profile for another binary", "/opt/brig/bin/brig", "unconfined", "is for /opt/brig/bin/brig, not this binary (/usr/local/bin/brig)"},
		{"installed, not loaded", "/usr/local/bin/brig", "unconfined", "load brig's AppArmor profile, installed but not in force: sudo apparmor_parser -r /etc/apparmor.d/brig"},
		{"in force", "/usr/local/bin/brig", "brig (unconfined)", "brig already runs under its AppArmor profile"},
	} {
		m.AppArmorProfile, m.AppArmorLabel = tc.profile, tc.label
		f := thisKernel()
		f.UserNS, f.MountNS, f.PIDNS, f.NetNS = false, false, false, false
		do := userNSFix(f, m, true)
		if !strings.Contains(do[0], tc.want) {
			t.Errorf("%s: first step %q, want %q", tc.name, do[0], tc.want)
		}
		if systemWide.MatchString(do[0]) {
			t.Errorf("%s: the first step turns a restriction off: %q", tc.name, do[0])
		}
	}
}

// profileBinary reads the binary out of the profile make install writes.
func TestProfileBinary(t *testing.T) {
	src, err := os.ReadFile("../build/apparmor/brig")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "brig")
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(src), "@BIN@", "/usr/local/bin/brig")), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := profileBinary(p); got != "/usr/local/bin/brig" {
		t.Errorf("profileBinary = %q", got)
	}
	if got := profileBinary(filepath.Join(t.TempDir(), "none")); got != "" {
		t.Errorf("no file: %q", got)
	}
}

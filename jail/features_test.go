package jail

import (
	"context"
	"errors"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDetectFeaturesThisKernel runs the real probes. The assertions are the
// facts of the machine brig is developed and tested on (kernel 6.18,
// Landlock ABI 7, seccomp, unprivileged user namespaces allowed, see
// /work/shared/notes/jail-findings.md); a kernel without them fails here on
// purpose, because the kernel tests of the jail need them too.
func TestDetectFeaturesThisKernel(t *testing.T) {
	f := DetectFeatures(context.Background())
	t.Logf("features: %+v", f)

	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		t.Fatal(err)
	}
	if want := unix.ByteSliceToString(uts.Release[:]); f.Kernel != want {
		t.Errorf("Kernel = %q, want uname release %q", f.Kernel, want)
	}
	if f.LandlockABI < 1 {
		t.Errorf("LandlockABI = %d, want >= 1 (errors: %v)", f.LandlockABI, f.Errors)
	}
	if !f.Seccomp || !f.SeccompTSync || !f.NoNewPrivs {
		t.Errorf("Seccomp=%v SeccompTSync=%v NoNewPrivs=%v, want all true (errors: %v)",
			f.Seccomp, f.SeccompTSync, f.NoNewPrivs, f.Errors)
	}
	if !f.UserNS || !f.Namespaces() {
		t.Errorf("UserNS=%v MountNS=%v PIDNS=%v NetNS=%v, want all true (errors: %v)",
			f.UserNS, f.MountNS, f.PIDNS, f.NetNS, f.Errors)
	}
	if f.Root != (os.Getuid() == 0) {
		t.Errorf("Root = %v with uid %d", f.Root, os.Getuid())
	}
	if f.Errors == nil {
		t.Error("Errors is nil, want an empty map")
	}
	for probe, why := range f.Errors {
		// Yama and the TIOCSTI sysctl may legitimately be absent, which is
		// not an error; anything else recorded here is a failed probe.
		t.Errorf("probe %s failed: %s", probe, why)
	}

	// The sysctl-derived fields agree with /proc.
	if _, err := os.Stat("/proc/sys/kernel/yama/ptrace_scope"); os.IsNotExist(err) && f.YamaPtraceScope != -1 {
		t.Errorf("YamaPtraceScope = %d without Yama, want -1", f.YamaPtraceScope)
	}
	if b, err := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti"); err == nil {
		if want := strings.TrimSpace(string(b)) != "0"; f.LegacyTIOCSTI != want {
			t.Errorf("LegacyTIOCSTI = %v, sysctl says %q", f.LegacyTIOCSTI, b)
		}
	}
}

// TestDetectFeaturesLeavesCallerUnchanged proves the probes are queries: the
// calling process (every thread) still has no no_new_privs, no seccomp
// filter, and the same namespaces afterwards.
func TestDetectFeaturesLeavesCallerUnchanged(t *testing.T) {
	for _, opt := range []int{unix.PR_GET_NO_NEW_PRIVS, unix.PR_GET_SECCOMP} {
		if v, err := unix.PrctlRetInt(opt, 0, 0, 0, 0); err != nil || v != 0 {
			t.Skipf("the test process is already restricted (prctl %d = %d, %v): nothing to compare", opt, v, err)
		}
	}
	nsBefore := namespaceLinks(t)
	f := DetectFeatures(context.Background())
	if f.LandlockABI < 1 {
		t.Logf("note: Landlock not detected (%v)", f.Errors)
	}

	// Check from several OS threads: a process-wide change (TSYNC, psx)
	// would show on every thread, a stray per-thread one on some.
	done := make(chan struct{})
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if v, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); err != nil || v != 0 {
				t.Errorf("PR_GET_NO_NEW_PRIVS = %d, %v after DetectFeatures, want 0", v, err)
			}
			if v, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil || v != 0 {
				t.Errorf("PR_GET_SECCOMP = %d, %v after DetectFeatures, want 0", v, err)
			}
		}()
	}
	for range 4 {
		<-done
	}
	if after := namespaceLinks(t); !reflect.DeepEqual(nsBefore, after) {
		t.Errorf("namespaces changed: before %v, after %v", nsBefore, after)
	}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "Seccomp_filters:") && strings.TrimSpace(strings.TrimPrefix(line, "Seccomp_filters:")) != "0" {
			t.Errorf("a seccomp filter was attached: %s", line)
		}
	}
}

func namespaceLinks(t *testing.T) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, ns := range []string{"user", "mnt", "pid", "net"} {
		l, err := os.Readlink("/proc/self/ns/" + ns)
		if err != nil {
			t.Fatal(err)
		}
		m[ns] = l
	}
	return m
}

func TestDetectFeaturesCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := DetectFeatures(ctx)
	// With a cancelled context no probe child may start, so the namespace
	// layer must be reported unavailable (with a reason), never assumed.
	if f.UserNS || f.Namespaces() {
		t.Errorf("namespaces reported available with a cancelled context: %+v", f)
	}
	if f.Errors[probeUserNS] == "" {
		t.Errorf("no reason recorded for the userns probe: %v", f.Errors)
	}
}

func TestLandlockRights(t *testing.T) {
	all := []string{
		"filesystem (ABI 1)",
		"refer: rename/link across directories (ABI 2)",
		"truncate (ABI 3)",
		"TCP bind/connect (ABI 4)",
		"ioctl on devices (ABI 5)",
		"signal and abstract-unix-socket scoping (ABI 6)",
		"audit logging flags (ABI 7)",
		"thread sync (ABI 8)",
		"pathname unix socket connect (ABI 9)",
		"UDP bind/connect/send (ABI 10)",
	}
	for _, tc := range []struct {
		abi           int
		have, missing []string
	}{
		{0, nil, all},
		{4, all[:4], all[4:]},
		{7, all[:7], all[7:]},
		{10, all, nil},
		{12, all, nil}, // a newer kernel than this list knows
	} {
		have, missing := Features{LandlockABI: tc.abi}.LandlockRights()
		if !reflect.DeepEqual(have, tc.have) || !reflect.DeepEqual(missing, tc.missing) {
			t.Errorf("ABI %d: have %q missing %q, want %q and %q", tc.abi, have, missing, tc.have, tc.missing)
		}
	}
}

func TestNamespaces(t *testing.T) {
	full := Features{UserNS: true, MountNS: true, PIDNS: true, NetNS: true}
	if !full.Namespaces() {
		t.Error("all four namespaces: Namespaces() = false")
	}
	for _, f := range []Features{
		{MountNS: true, PIDNS: true, NetNS: true},
		{UserNS: true, PIDNS: true, NetNS: true},
		{UserNS: true, MountNS: true, NetNS: true},
		{UserNS: true, MountNS: true, PIDNS: true},
	} {
		if f.Namespaces() {
			t.Errorf("%+v: Namespaces() = true, want false", f)
		}
	}
}

// TestNamespaceProbesOneByOneOnlyWhenNeeded: the namespaces are probed
// together, and one by one only when that fails — so that the report names
// the one missing, as before. The probe here is a stand-in that refuses
// what the case names; the kernel's own is TestDetectFeaturesThisKernel.
func TestNamespaceProbesOneByOneOnlyWhenNeeded(t *testing.T) {
	all := uintptr(unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWNET)
	for _, tc := range []struct {
		name     string
		refuse   uintptr // a probe whose flags include any of these fails
		noUserNS bool    // every probe fails
		probes   int
		ok       [4]bool // user, mount, PID, network
		failed   []string
	}{
		{name: "all work", probes: 1, ok: [4]bool{true, true, true, true}},
		{name: "no network namespace", refuse: unix.CLONE_NEWNET, probes: 5, ok: [4]bool{true, true, true, false}, failed: []string{probeNetNS}},
		{name: "no user namespace", noUserNS: true, probes: 2, failed: []string{probeUserNS, probeMountNS, probePIDNS, probeNetNS}},
	} {
		var probes []uintptr
		probe := func(_ context.Context, extra uintptr) error {
			probes = append(probes, extra)
			if tc.noUserNS || extra&tc.refuse != 0 {
				return errors.New("refused")
			}
			return nil
		}
		f := detectFeatures(context.Background(), probe)
		if len(probes) != tc.probes || probes[0] != all {
			t.Errorf("%s: probes %#x, want %d starting with all of them at once", tc.name, probes, tc.probes)
		}
		if got := [4]bool{f.UserNS, f.MountNS, f.PIDNS, f.NetNS}; got != tc.ok {
			t.Errorf("%s: user, mount, PID, network namespaces %v, want %v", tc.name, got, tc.ok)
		}
		for _, p := range []string{probeUserNS, probeMountNS, probePIDNS, probeNetNS} {
			if (f.Errors[p] != "") != slices.Contains(tc.failed, p) {
				t.Errorf("%s: probe %s's error %q; want one: %v", tc.name, p, f.Errors[p], slices.Contains(tc.failed, p))
			}
		}
	}
}

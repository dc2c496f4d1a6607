package doctor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"brig/jail"
)

// thisKernel is what jail.DetectFeatures reports on the development machine
// (6.18, Landlock ABI 7, seccomp, namespaces, no Yama), as an ordinary user.
func thisKernel() jail.Features {
	return jail.Features{
		Kernel: "6.18.44", LandlockABI: 7,
		Seccomp: true, SeccompTSync: true, NoNewPrivs: true,
		UserNS: true, MountNS: true, PIDNS: true, NetNS: true,
		YamaPtraceScope: -1, LegacyTIOCSTI: true,
		Errors: map[string]string{},
	}
}

// thisMachine is the development machine: x86_64, no sysctl restricting
// user namespaces.
func thisMachine() Machine {
	return Machine{Arch: "amd64", AppArmorRestrictUserNS: -1, UnprivUserNSClone: -1, MaxUserNamespaces: 63704}
}

// build is Build on thisMachine, so that the tests do not depend on the
// machine they run on.
func build(f jail.Features, env []string, home string) Report {
	return BuildFor(f, thisMachine(), env, home)
}

func TestBuildGuarantees(t *testing.T) {
	noLandlock := thisKernel()
	noLandlock.LandlockABI = 0
	noLandlock.Errors = map[string]string{"landlock": "landlock_create_ruleset: operation not supported"}

	abi4NoUserNS := thisKernel()
	abi4NoUserNS.LandlockABI = 4
	abi4NoUserNS.UserNS, abi4NoUserNS.MountNS, abi4NoUserNS.PIDNS, abi4NoUserNS.NetNS = false, false, false, false

	noSeccomp := thisKernel()
	noSeccomp.Seccomp, noSeccomp.SeccompTSync = false, false

	noTSync := thisKernel()
	noTSync.SeccompTSync = false

	asRoot := thisKernel()
	asRoot.Root = true
	asRootCgroup := asRoot
	asRootCgroup.PidsCgroup = true

	oldLandlock := thisKernel()
	oldLandlock.LandlockABI = 2

	tests := []struct {
		name string
		f    jail.Features
		ok   bool
		want map[string]Status // guarantees not listed: checked only for presence
	}{
		{"this kernel", thisKernel(), true, map[string]Status{
			"fs-confined": Holds, "protected-paths": Holds, "metadata-confined": Holds, "network-off": Holds,
			"unix-sockets": Holds, "signals-scoped": Holds, "tree-killed": Holds,
			"kernel-surface": Holds, "no-tty-injection": Holds, "no-new-privs": Holds,
			"private-tmp": Holds, "resource-bounds": Holds, "ptrace-yama": Missing,
		}},
		{"this kernel as root, no pids cgroup", asRoot, true, map[string]Status{
			"resource-bounds": Degraded, "fs-confined": Holds,
		}},
		{"this kernel as root with a pids cgroup", asRootCgroup, true, map[string]Status{
			"resource-bounds": Holds,
		}},
		{"no Landlock", noLandlock, false, map[string]Status{
			"fs-confined": Missing, "protected-paths": Missing,
			"network-off": Holds, "kernel-surface": Holds,
			// PID namespace still provides these two.
			"signals-scoped": Holds, "tree-killed": Holds,
		}},
		{"Landlock ABI 2", oldLandlock, true, map[string]Status{
			"fs-confined": Degraded, "protected-paths": Holds,
		}},
		{"ABI 4 without userns", abi4NoUserNS, false, map[string]Status{
			"fs-confined": Holds, "protected-paths": Degraded, "metadata-confined": Holds,
			"network-off": Degraded, "unix-sockets": Holds,
			"signals-scoped": Missing, "tree-killed": Missing,
			"private-tmp": Degraded, "resource-bounds": Degraded,
		}},
		{"seccomp missing", noSeccomp, false, map[string]Status{
			"fs-confined": Holds, "metadata-confined": Holds, "network-off": Missing, "unix-sockets": Missing,
			"kernel-surface": Missing, "no-tty-injection": Missing, "no-new-privs": Holds,
		}},
		{"seccomp without TSYNC", noTSync, false, map[string]Status{
			"kernel-surface": Missing, "network-off": Missing,
		}},
	}
	ids := []string{"fs-confined", "protected-paths", "metadata-confined", "network-off", "unix-sockets",
		"signals-scoped", "tree-killed", "kernel-surface", "no-tty-injection",
		"no-new-privs", "private-tmp", "resource-bounds", "ptrace-yama"}
	notBaseline := map[string]bool{"private-tmp": true, "ptrace-yama": true}

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := build(tc.f, nil, t.TempDir())
			if r.OK != tc.ok {
				t.Errorf("OK = %v, want %v", r.OK, tc.ok)
			}
			got := map[string]Guarantee{}
			for i, g := range r.Guarantees {
				got[g.ID] = g
				if i < len(ids) && g.ID != ids[i] {
					t.Errorf("guarantee %d is %q, want %q (stable order)", i, g.ID, ids[i])
				}
				if g.Baseline == notBaseline[g.ID] {
					t.Errorf("%s: Baseline = %v", g.ID, g.Baseline)
				}
				if g.Name == "" || g.Why == "" {
					t.Errorf("%s: empty name or why: %+v", g.ID, g)
				}
				if g.Status != Holds && g.Status != Degraded && g.Status != Missing {
					t.Errorf("%s: status %q", g.ID, g.Status)
				}
			}
			if len(r.Guarantees) != len(ids) {
				t.Errorf("%d guarantees, want %d", len(r.Guarantees), len(ids))
			}
			for id, st := range tc.want {
				if g, ok := got[id]; !ok {
					t.Errorf("%s: not reported", id)
				} else if g.Status != st {
					t.Errorf("%s: %s (%s), want %s", id, g.Status, g.Why, st)
				}
			}
			// OK is exactly "no baseline guarantee missing".
			wantOK := true
			for _, g := range r.Guarantees {
				if g.Baseline && g.Status == Missing {
					wantOK = false
				}
			}
			if r.OK != wantOK {
				t.Errorf("OK = %v but baseline statuses say %v", r.OK, wantOK)
			}
		})
	}
}

// Each missing or degraded guarantee names a fix.
func TestBuildWhyNamesTheFix(t *testing.T) {
	noLandlock := thisKernel()
	noLandlock.LandlockABI = 0
	noLandlock.UserNS, noLandlock.MountNS, noLandlock.PIDNS, noLandlock.NetNS = false, false, false, false
	noLandlock.Seccomp, noLandlock.SeccompTSync = false, false
	r := build(noLandlock, nil, "")
	for _, g := range r.Guarantees {
		if g.Status == Holds || g.ID == "ptrace-yama" {
			continue
		}
		if !strings.Contains(g.Why, "fix:") && !strings.Contains(g.Why, "; use a kernel") {
			t.Errorf("%s (%s) names no fix: %s", g.ID, g.Status, g.Why)
		}
	}
	byID := map[string]string{}
	for _, g := range r.Guarantees {
		byID[g.ID] = g.Why
	}
	for id, want := range map[string]string{
		"fs-confined":     "lsm=landlock",
		"protected-paths": "lsm=landlock",
		"kernel-surface":  "CONFIG_SECCOMP_FILTER",
		"tree-killed":     "a kernel >= 6.12 (Landlock ABI 6)",
		"private-tmp":     "inside a container, run it with user namespaces allowed",
	} {
		if !strings.Contains(byID[id], want) {
			t.Errorf("%s: why %q does not mention %q", id, byID[id], want)
		}
	}
	// Without a mount namespace, what differs is spelled out: git
	// commit works, protected paths are put back after the call, which
	// can see what it changed until it ends; metadata goes through brig.
	f := thisKernel()
	f.MountNS = false
	for _, g := range build(f, nil, "").Guarantees {
		switch g.ID {
		case "protected-paths":
			for _, want := range []string{"git commit", "puts it back when the call ends", "during the call", "MCP servers"} {
				if !strings.Contains(g.Why, want) {
					t.Errorf("protected-paths without mount ns does not say %q: %s", want, g.Why)
				}
			}
		case "metadata-confined":
			if g.Status != Holds || !strings.Contains(g.Why, "user notification") {
				t.Errorf("metadata-confined without mount ns: %s %s", g.Status, g.Why)
			}
		}
	}
	// Without one, and with Yama keeping brig from reading a call's
	// arguments, metadata changes are refused everywhere: degraded.
	f.YamaPtraceScope = 2
	for _, g := range build(f, nil, "").Guarantees {
		if g.ID == "metadata-confined" && (g.Status != Degraded || !strings.Contains(g.Why, "chmod +x fails")) {
			t.Errorf("metadata-confined with Yama 2: %s %s", g.Status, g.Why)
		}
	}
	// Neither a mount namespace nor seccomp: missing.
	f.Seccomp = false
	for _, g := range build(f, nil, "").Guarantees {
		if g.ID == "metadata-confined" && g.Status != Missing {
			t.Errorf("metadata-confined without mount ns and seccomp: %s", g.Status)
		}
	}
}

func TestBuildReportFields(t *testing.T) {
	f := thisKernel()
	f.Errors = map[string]string{"yama": "boom"}
	r := build(f, nil, "")
	if r.Kernel != f.Kernel || r.LandlockABI != 7 || !r.Seccomp || !r.SeccompTSync || !r.NoNewPrivs ||
		!r.UserNS || !r.MountNS || !r.PIDNS || !r.NetNS || r.YamaPtraceScope != -1 {
		t.Errorf("fields not copied: %+v", r)
	}
	if len(r.LandlockHave) != 7 || len(r.LandlockMissing) != 3 {
		t.Errorf("LandlockHave %q, LandlockMissing %q", r.LandlockHave, r.LandlockMissing)
	}
	if r.ProbeErrors["yama"] != "boom" {
		t.Errorf("ProbeErrors = %v", r.ProbeErrors)
	}
	f.Errors["other"] = "later"
	if _, ok := r.ProbeErrors["other"]; ok {
		t.Error("ProbeErrors aliases Features.Errors")
	}
}

func TestCredentials(t *testing.T) {
	home := t.TempDir()
	env := []string{
		"PATH=/usr/bin",
		"HOME=" + home,
		"ANTHROPIC_API_KEY=sk-ant-x",
		"OPENAI_API_KEY=",
		"GITHUB_TOKEN=ghp_x",
		"AWS_PROFILE=dev",
		"DB_PASSWORD=x",
		"SSH_AUTH_SOCK=/tmp/agent",
		"MY_SECRET=x",
		"KEYBOARD=us", // not a credential: KEY is not a suffix word here
		// CA bundles: paths to public certificates, not credentials
		"AWS_CA_BUNDLE=/etc/corp/ca.pem",
		"CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE=/etc/corp/ca.pem",
		"REQUESTS_CA_BUNDLE=/etc/corp/ca.pem",
		"NODE_EXTRA_CA_CERTS=/etc/corp/ca.pem",
		"SSL_CERT_FILE=/etc/corp/ca.pem",
		"TERM=xterm",
		"malformed",
	}
	r := build(thisKernel(), env, home)
	var names []string
	var file *CredentialFinding
	for i, c := range r.Credentials {
		if c.Source == "env" {
			names = append(names, c.Name)
		} else {
			file = &r.Credentials[i]
		}
	}
	want := []string{"ANTHROPIC_API_KEY", "AWS_PROFILE", "DB_PASSWORD", "GITHUB_TOKEN", "MY_SECRET", "OPENAI_API_KEY", "SSH_AUTH_SOCK"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("env credentials %q, want %q", names, want)
	}
	for _, c := range r.Credentials {
		if c.Name == "OPENAI_API_KEY" && !strings.Contains(c.Note, "empty") {
			t.Errorf("empty OPENAI_API_KEY note: %q", c.Note)
		}
	}
	path := filepath.Join(home, ".config", "brig", "credentials.toml")
	if file == nil || file.Name != path || file.Note != "not present" {
		t.Fatalf("credentials file finding = %+v, want %s not present", file, path)
	}

	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("anthropic = \"sk-file-canary\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	note := lastFileNote(t, build(thisKernel(), env, home))
	if !strings.Contains(note, "0644") || !strings.Contains(note, "chmod 600") {
		t.Errorf("0644 file note: %q", note)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if note := lastFileNote(t, build(thisKernel(), env, home)); note != "present, mode 0600" {
		t.Errorf("0600 file note: %q", note)
	}

	// XDG_CONFIG_HOME moves the file.
	xdg := t.TempDir()
	r = build(thisKernel(), []string{"XDG_CONFIG_HOME=" + xdg}, home)
	if got := r.Credentials[len(r.Credentials)-1].Name; got != filepath.Join(xdg, "brig", "credentials.toml") {
		t.Errorf("with XDG_CONFIG_HOME: %s", got)
	}
}

func lastFileNote(t *testing.T, r Report) string {
	t.Helper()
	c := r.Credentials[len(r.Credentials)-1]
	if c.Source != "file" {
		t.Fatalf("last finding is %+v, want the credentials file", c)
	}
	return c.Note
}

// No credential value reaches the text or JSON output, whatever the report
// contains, also when the credentials file exists.
func TestNoCredentialValuesInOutput(t *testing.T) {
	const canary = "CANARY-7f3a9c-do-not-print"
	home := t.TempDir()
	path := filepath.Join(home, ".config", "brig", "credentials.toml")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("anthropic_api_key = \""+canary+"-file\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"ANTHROPIC_API_KEY=" + canary + "-anthropic",
		"OPENAI_API_KEY=" + canary + "-openai",
		"GITHUB_TOKEN=" + canary + "-github",
		"AWS_SECRET_ACCESS_KEY=" + canary + "-aws",
		"SOME_PASSWORD=" + canary + "-password",
		"SSH_AUTH_SOCK=/tmp/" + canary + "-agent",
	}
	for _, f := range []jail.Features{thisKernel(), {YamaPtraceScope: -1}} {
		r := build(f, env, home)
		var text, js bytes.Buffer
		if err := r.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		for name, out := range map[string]string{"text": text.String(), "json": js.String()} {
			if strings.Contains(out, "CANARY") {
				t.Errorf("%s output contains a credential value:\n%s", name, out)
			}
			for _, n := range []string{"ANTHROPIC_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY"} {
				if !strings.Contains(out, n) {
					t.Errorf("%s output does not name %s", name, n)
				}
			}
		}
	}
}

func TestWriteText(t *testing.T) {
	var buf bytes.Buffer
	if err := build(thisKernel(), []string{"GITHUB_TOKEN=x"}, t.TempDir()).WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	t.Logf("\n%s", out)
	for _, want := range []string{
		"Kernel", "6.18.44", "ABI 7", "audit logging flags (ABI 7)", "thread sync (ABI 8)",
		"Seccomp", "GITHUB_TOKEN", "✓ fs-confined", "✗ ptrace-yama", "(optional)",
		"OK: every baseline guarantee holds.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q", want)
		}
	}
	// One line per guarantee, and the descriptions start in the same column.
	col := -1
	n := 0
	for _, line := range strings.Split(out, "\n") {
		for _, m := range []string{"✓ ", "~ ", "✗ "} {
			if strings.HasPrefix(line, "  "+m) {
				n++
				fields := strings.Fields(line)
				idEnd := strings.Index(line, fields[1]) + len(fields[1])
				c := utf8.RuneCountInString(line[:idEnd+strings.Index(line[idEnd:], fields[2])])
				if col == -1 {
					col = c
				} else if c != col {
					t.Errorf("misaligned guarantee line: %q", line)
				}
			}
		}
	}
	if n != 13 {
		t.Errorf("%d guarantee lines, want 13", n)
	}

	bad := thisKernel()
	bad.LandlockABI = 0
	buf.Reset()
	if err := build(bad, nil, "").WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Landlock  ", "unavailable", "✗ fs-confined", "NOT OK", "fs-confined, protected-paths"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("bad-kernel text lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestWriteJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := build(thisKernel(), nil, t.TempDir()).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Kernel      string `json:"kernel"`
		LandlockABI int    `json:"landlock_abi"`
		OK          *bool  `json:"ok"`
		Credentials []struct {
			Source, Name, Note string
		} `json:"credentials"`
		Guarantees []struct {
			ID       string `json:"id"`
			Name     string `json:"name"`
			Status   string `json:"status"`
			Baseline *bool  `json:"baseline"`
			Why      string `json:"why"`
		} `json:"guarantees"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if got.Kernel != "6.18.44" || got.LandlockABI != 7 || got.OK == nil || !*got.OK {
		t.Errorf("top level: %+v", got)
	}
	if len(got.Guarantees) != 13 || got.Guarantees[0].ID != "fs-confined" || got.Guarantees[0].Status != "holds" ||
		got.Guarantees[0].Baseline == nil || !*got.Guarantees[0].Baseline || got.Guarantees[0].Why == "" {
		t.Errorf("guarantees: %+v", got.Guarantees)
	}
	if len(got.Credentials) != 1 || got.Credentials[0].Source != "file" {
		t.Errorf("credentials: %+v", got.Credentials)
	}
}

// TestResourceBoundsStateTheDefaults: doctor says what each call gets by
// default and that jailed processes are the OOM killer's first choice.
func TestResourceBoundsStateTheDefaults(t *testing.T) {
	r := Build(thisKernel(), nil, t.TempDir())
	l := jail.DefaultLimits()
	for _, g := range r.Guarantees {
		if g.ID != "resource-bounds" {
			continue
		}
		for _, want := range []string{"oom_score_adj 1000", jail.Bytes(l.Memory) + " of memory", fmt.Sprintf("%d processes", l.Processes), jail.Bytes(l.Disk) + " of disk", "[limits]"} {
			if !strings.Contains(g.Why, want) {
				t.Errorf("resource-bounds does not say %q: %s", want, g.Why)
			}
		}
		return
	}
	t.Fatal("resource-bounds is not reported")
}

// TestJailRunSection: how calls run is printed in its own section, in the
// text and the JSON, and never makes the report not OK; a report without
// it prints no such section.
func TestJailRunSection(t *testing.T) {
	r := build(thisKernel(), nil, t.TempDir())
	var buf bytes.Buffer
	if err := r.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "How calls run") {
		t.Errorf("a section without a JailRun:\n%s", buf.String())
	}
	r.SetJailRun(JailRun{Programs: "written into memory at every start: noexec", Commands: "started through a worker process: no namespaces"})
	buf.Reset()
	if err := r.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"How calls run", "programs", "written into memory at every start: noexec", "commands", "started through a worker process: no namespaces", "OK: every baseline guarantee holds."} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}
	buf.Reset()
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var got struct {
		JailRun *JailRun `json:"jail_run"`
		OK      bool     `json:"ok"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil || got.JailRun == nil || got.JailRun.Kept || got.JailRun.Direct || !got.OK ||
		!strings.Contains(got.JailRun.Commands, "no namespaces") {
		t.Errorf("JSON: %+v %v\n%s", got.JailRun, err, buf.String())
	}
}

// TestNotStartingSaysWhere: a workspace brig refuses (it holds the home
// directory) is not called a config that does not load (a new user,
// 2026-12-02); the line names the directory and the reason.
func TestNotStartingSaysWhere(t *testing.T) {
	r := build(thisKernel(), nil, t.TempDir())
	r.SetConfig(ConfigStatus{Workspace: "/tmp/nu", Error: "the workspace /tmp/nu holds your home directory /tmp/nu/home; run brig inside a project directory"})
	var buf bytes.Buffer
	if err := r.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "NOT OK: brig will not start in /tmp/nu: the workspace /tmp/nu holds your home directory") || strings.Contains(buf.String(), "config does not load") {
		t.Errorf("text:\n%s", buf.String())
	}
}

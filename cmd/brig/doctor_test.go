package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brig/jail"
)

func goodFeatures(context.Context) jail.Features {
	return jail.Features{
		Kernel: "6.18.44", LandlockABI: 7,
		Seccomp: true, SeccompTSync: true, NoNewPrivs: true,
		UserNS: true, MountNS: true, PIDNS: true, NetNS: true,
		YamaPtraceScope: -1, LegacyTIOCSTI: true, Errors: map[string]string{},
	}
}

func badFeatures(context.Context) jail.Features {
	return jail.Features{
		Kernel: "5.4.0", LandlockABI: 0, NoNewPrivs: true, YamaPtraceScope: 1,
		LegacyTIOCSTI: true,
		Errors: map[string]string{
			"landlock": "landlock_create_ruleset: function not implemented",
			"seccomp":  "seccomp(SECCOMP_GET_ACTION_AVAIL, SECCOMP_RET_ERRNO): operation not permitted",
		},
	}
}

func TestRunDoctor(t *testing.T) {
	const canary = "CANARY-doctor-cmd-secret"
	env := []string{"PATH=/usr/bin", "ANTHROPIC_API_KEY=" + canary}
	for _, tc := range []struct {
		name     string
		detect   func(context.Context) jail.Features
		json     bool
		wantCode int // 0: nil error
		want     []string
	}{
		// A test binary carries no jail programs.
		{"good text", goodFeatures, false, 0, []string{"✓ fs-confined", "ANTHROPIC_API_KEY", "OK: every baseline guarantee holds.", "How calls run", "re-executes brig itself", "commands"}},
		{"bad text", badFeatures, false, 1, []string{"✗ fs-confined", "✗ kernel-surface", "NOT OK", "lsm=landlock", "started through a worker process: calls get no user namespaces"}},
		{"good json", goodFeatures, true, 0, []string{`"ok": true`}},
		{"bad json", badFeatures, true, 1, []string{`"ok": false`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := runDoctor(context.Background(), &doctorOptions{
				JSON: tc.json, Out: &out, Env: env, Home: t.TempDir(), Detect: tc.detect,
			})
			var ee exitError
			switch {
			case tc.wantCode == 0 && err != nil:
				t.Fatalf("err = %v, want nil", err)
			case tc.wantCode != 0 && (!errors.As(err, &ee) || ee.code != tc.wantCode):
				t.Fatalf("err = %v, want exitError{%d}", err, tc.wantCode)
			}
			s := out.String()
			if s == "" {
				t.Fatal("no output (the report must be printed also when it fails)")
			}
			for _, w := range tc.want {
				if !strings.Contains(s, w) {
					t.Errorf("output lacks %q:\n%s", w, s)
				}
			}
			if strings.Contains(s, canary) {
				t.Errorf("output contains a credential value:\n%s", s)
			}
		})
	}
}

func TestRunDoctorJSONShape(t *testing.T) {
	var out bytes.Buffer
	err := runDoctor(context.Background(), &doctorOptions{JSON: true, Out: &out, Home: t.TempDir(), Detect: badFeatures})
	if ee, ok := err.(exitError); !ok || ee.code != 1 {
		t.Fatalf("err = %v, want exitError{1}", err)
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out.String())
	}
	gs, ok := got["guarantees"].([]any)
	if !ok || len(gs) == 0 {
		t.Fatalf("guarantees is %T %v, want a non-empty array", got["guarantees"], got["guarantees"])
	}
	statuses := map[string]string{}
	for _, g := range gs {
		m, ok := g.(map[string]any)
		if !ok {
			t.Fatalf("guarantee %v is not an object", g)
		}
		id, _ := m["id"].(string)
		st, _ := m["status"].(string)
		if id == "" || st == "" {
			t.Errorf("guarantee without id or status: %v", m)
		}
		for _, k := range []string{"name", "baseline", "why"} {
			if _, ok := m[k]; !ok {
				t.Errorf("guarantee %s lacks %q", id, k)
			}
		}
		statuses[id] = st
	}
	if statuses["fs-confined"] != "missing" || statuses["kernel-surface"] != "missing" {
		t.Errorf("statuses = %v", statuses)
	}
	if got["ok"] != false {
		t.Errorf("ok = %v, want false", got["ok"])
	}
}

// The command wires its flag and real dependencies; the real probe runs here
// (this machine has every baseline feature, see the jail feature tests).
func TestDoctorCmdFlags(t *testing.T) {
	cmd := newDoctorCmd()
	if f := cmd.Flags().Lookup("json"); f == nil || f.DefValue != "false" {
		t.Fatalf("--json flag: %+v", f)
	}
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--json"})
	err := cmd.ExecuteContext(context.Background())
	var ee exitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("err = %v", err)
	}
	var got struct {
		Guarantees []struct{ ID, Status string } `json:"guarantees"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got.Guarantees) == 0 {
		t.Fatalf("json: %v\n%s", err, out.String())
	}
	cmd = newDoctorCmd()
	cmd.SetArgs([]string{"extra"})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.ExecuteContext(context.Background()); err == nil {
		t.Error("doctor accepted a positional argument")
	}
}

func TestDoctorReportsTheWorkspaceConfig(t *testing.T) {
	pe, _, ws := policyFixture(t)
	var out bytes.Buffer
	opts := &doctorOptions{JSON: true, Out: &out, Home: pe.Home, Env: pe.Env, Cwd: ws, Detect: goodFeatures}
	if err := runDoctor(context.Background(), opts); err != nil {
		t.Fatalf("a loadable config on a good kernel: %v\n%s", err, out.String())
	}
	var rep struct {
		Config struct {
			Files []struct{ Kind, State string }
			Error string
		}
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Config.Files) != 3 || !strings.HasPrefix(rep.Config.Files[2].State, "untrusted") {
		t.Fatalf("config files: %+v", rep.Config.Files)
	}

	if err := os.WriteFile(ws+"/.brig/config.toml", []byte("[permissions]\nallow = [\"Bash(\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err := runDoctor(context.Background(), opts)
	if ee, ok := err.(exitError); !ok || ee.code != 1 {
		t.Fatalf("a config that does not load must fail doctor: %v", err)
	}
	if !strings.Contains(out.String(), "config.toml:2") {
		t.Fatalf("the error must name file and line:\n%s", out.String())
	}
}

// TestDoctorListsWhatCallsCanRead: brig doctor lists the default grant
// with reasons, the masked secrets, the PATH entries it refused, and flags
// a credential sitting in a granted directory — without printing it.
func TestDoctorListsWhatCallsCanRead(t *testing.T) {
	pe, _, ws := policyFixture(t)
	const canary = "npm_CANARYdoctorTOKEN0123456789"
	for rel, content := range map[string]string{
		".npm-global/bin/tool":                      "#!/bin/sh\n",
		".local/lib/python3/site-packages/x/.npmrc": "//registry.npmjs.org/:_authToken=" + canary + "\n",
		".local/lib/python3/site-packages/x/a.py":   "print('hi')\n",
		".local/lib/python3/tests/fixture.npmrc":    "_authToken=" + canary + "\n",
	} {
		p := pe.Home + "/" + rel
		if err := os.MkdirAll(p[:strings.LastIndex(p, "/")], 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pe.Env = []string{"PATH=" + pe.Home + "/:" + pe.Home + "/.npm-global/bin:/usr/bin:/bin", "HOME=" + pe.Home}
	var out bytes.Buffer
	opts := &doctorOptions{Out: &out, Home: pe.Home, Env: pe.Env, Cwd: ws, Detect: goodFeatures}
	if err := runDoctor(context.Background(), opts); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{
		"Outside the workspace, every call can read",
		pe.Home + "/.npm-global/bin", "programs of npm global installs",
		"/etc/shadow", "password hashes",
		"PATH " + pe.Home + "/", "your home directory or a parent of it",
		pe.Home + "/.local/lib/python3/site-packages/x/.npmrc", "holds a package registry auth token",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(text, canary) {
		t.Error("the report printed a credential's value")
	}
	if strings.Contains(text, "fixture.npmrc") || strings.Contains(text, "x/a.py") {
		t.Errorf("a test fixture or an ordinary file was flagged:\n%s", text)
	}
}

// TestDoctorSaysWhenStateCannotBeKept: a state directory that cannot be
// made (XDG_STATE_HOME is a file) makes the report NOT OK, naming the
// directory and the variable; the control, a writable home, is OK.
func TestDoctorSaysWhenStateCannotBeKept(t *testing.T) {
	home := t.TempDir()
	file := filepath.Join(home, "not-a-dir")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"XDG_STATE_HOME=" + file}, "NOT OK: brig will not start: brig's state (sessions, undo, the audit log) directory cannot be made"},
		{nil, "OK: every baseline guarantee holds"},
	} {
		var out bytes.Buffer
		err := runDoctor(context.Background(), &doctorOptions{Out: &out, Home: home, Env: tc.env, Detect: goodFeatures})
		if !strings.Contains(out.String(), tc.want) || (err == nil) != strings.HasPrefix(tc.want, "OK") {
			t.Errorf("env %v: err %v, report:\n%s\nwant %q", tc.env, err, out.String(), tc.want)
		}
	}
}

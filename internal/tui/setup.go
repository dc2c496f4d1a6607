package tui

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"brig/internal/credentials"
)

// What the TUI says when brig cannot start a run, or a model cannot be
// picked: the real reason, and a fix the user can carry out from the TUI
// (no command-line flags). The credentials file is read again each time a
// run starts, so a key added to it works with the next /model; the
// environment is read only when brig starts.

// keyHelp is the banner's account of a missing key: a head line and the
// steps that fix it.
func keyHelp(e *credentials.MissingError) (head string, steps []string) {
	if e.Provider == "" && e.OpenAIBase != "" {
		return "no model is named for OPENAI_BASE_URL", []string{
			"OPENAI_BASE_URL is set (" + e.OpenAIBase + "): type /model NAME with the name that server knows the model by (e.g. /model qwen3-coder), or set model = \"NAME\" under [agent] in the config",
		}
	}
	if e.Provider == "" {
		return "no model provider is configured", []string{
			"add a key to " + e.File + " (chmod 600), then pick a model with /model:",
			`    [anthropic]`,
			`    api_key = "…"`,
			`  ([openai] for an OpenAI key);`,
			"or set ANTHROPIC_API_KEY or OPENAI_API_KEY (OPENAI_BASE_URL for a local OpenAI-compatible server such as Ollama) and restart brig",
		}
	}
	return "no API key for " + e.Provider, []string{missingKey(e)}
}

// missingKey is the fix for one provider's missing key, in a sentence.
func missingKey(e *credentials.MissingError) string {
	return fmt.Sprintf(`no %s: set it or add it to %s as [%s] api_key = "…" (chmod 600); the file is read again when you pick a model, the variable only when brig starts`,
		credentials.EnvVar(e.Provider), e.File, e.Provider)
}

// unusable is why a model cannot be picked: a few words for its row in the
// picker, and the whole reason with its fix.
func unusable(err error) (short, long string) {
	var missing *credentials.MissingError
	if errors.As(err, &missing) && missing.Provider != "" {
		return "no " + credentials.EnvVar(missing.Provider), missingKey(missing)
	}
	long = inert(err.Error())
	return fit(firstLine(long), 40), long
}

// startError is how the transcript reports a run that did not start.
func startError(err error) string {
	var missing *credentials.MissingError
	if errors.As(err, &missing) {
		head, steps := keyHelp(missing)
		return head + "\n" + strings.Join(steps, "\n")
	}
	return inert(err.Error())
}

// configError is the configuration problem brig doctor's check found (the
// same load every run makes), "" when there is none.
func (m *Model) configError() string {
	if m.sandbox == nil {
		return ""
	}
	return m.sandbox.Config.Error
}

// configAt matches the place a config error starts with: "file:line: ".
var configAt = regexp.MustCompile(`^(/[^:\s]+):(\d+): `)

// configPlace is where a config error points, the workspace's own files
// relative to it ("" when the error names no line).
func configPlace(msg, workspace string) string {
	at := configAt.FindStringSubmatch(msg)
	if at == nil {
		return ""
	}
	file := at[1]
	if rel, err := filepath.Rel(workspace, file); err == nil && workspace != "" && !strings.HasPrefix(rel, "..") {
		file = rel
	}
	return file + ":" + at[2]
}

// notStarted says in a few words why no run is open, for the status line.
func (m *Model) notStarted() string {
	var missing *credentials.MissingError
	switch {
	case m.configError() != "":
		if at := configPlace(m.configError(), m.cfg.Workspace); at != "" {
			return stErr.Render("config error at " + inert(at))
		}
		return stErr.Render("config error (see the banner)")
	case errors.As(m.startErr, &missing):
		return stWarn.Render("no model: no API key")
	case m.startErr != nil:
		return stErr.Render("not started (see above)")
	}
	return stWarn.Render("no model")
}

// whyNotStarted is the reply to a prompt sent with no run open.
func (m *Model) whyNotStarted() string {
	var missing *credentials.MissingError
	switch {
	case m.configError() != "":
		return "the configuration does not load: " + strings.TrimSuffix(inert(m.configError()), ".") + ". Once it is fixed, /model starts brig"
	case errors.As(m.startErr, &missing):
		head, _ := keyHelp(missing)
		return head + " (the banner above says how to add one); then pick a model with /model"
	case m.startErr != nil:
		return inert(m.startErr.Error()) + "; once that is fixed, /model starts brig"
	}
	return "no model is open; pick one with /model"
}

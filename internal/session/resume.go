package session

import (
	"fmt"

	"brig/agent/provider"
)

// ProviderError refuses to resume a session on a provider other than the
// one its messages were recorded with, when those messages hold blocks only
// that provider accepts back.
type ProviderError struct {
	ID       string
	Saved    provider.Name // the provider the session's messages were made for
	Model    string        // the session's model
	Target   provider.Name // the provider the resume would use
	Specific int           // thinking and server-side tool blocks of Saved
}

func (e *ProviderError) Error() string {
	return fmt.Sprintf("session %s was recorded with %s (model %s) and holds %d block(s) only %s accepts back (reasoning, server-side tool results); "+
		"resuming it on %s would not send the conversation the model saw. Resume it with a %s model (--model), or start a new session",
		e.ID, e.Saved, e.Model, e.Specific, e.Saved, e.Target, e.Saved)
}

// CheckResume says whether st can be resumed on provider target. It is nil
// for the same provider, and for another provider when every message is
// made of neutral blocks (text, images, tool calls and results) that carry
// over. Otherwise it is a *ProviderError with a message for the user. A
// caller that lets the user insist (a /model switch) converts the history
// with provider.ForProvider, which drops what cannot carry over.
func CheckResume(st *State, target provider.Name) error {
	if st.Provider == "" || st.Provider == target {
		return nil
	}
	n := 0
	for _, m := range st.Messages {
		for _, b := range m.Content {
			switch {
			case b.Type == provider.BlockThinking && b.Thinking != nil && b.Thinking.Provider != target:
				n++
			case b.Type == provider.BlockServerTool && b.ServerTool != nil && b.ServerTool.Provider != target:
				n++
			}
		}
	}
	if n == 0 {
		return nil
	}
	return &ProviderError{ID: st.ID, Saved: st.Provider, Model: st.Model, Target: target, Specific: n}
}

// Package tui is brig's interactive terminal front end, built on Bubble Tea
// (inline: no alternate screen, so the terminal's own scrollback keeps the
// whole conversation).
//
// It owns what the user sees and types: the banner, the multi-line input
// and its history, the streaming Markdown of the model's answers, tool
// calls as they start and end (diffs, capped command output), approval
// prompts with the jail grant, the slash commands and their pickers, the
// status line, and the cost summary on exit. It drains the agent's events
// from a buffered channel, answers the agent's approval requests through a
// broker, and queues messages typed while the agent works for the agent's
// inbox.
//
// It must not build provider requests, run tools, decide policy or write
// session files itself: every change goes through the agent, policy and
// session APIs (or the Starter its caller provides, which builds agents).
// Text from the model, tools, servers, repositories and pastes is made inert
// with internal/termsafe where it is inserted, and termsafe.Styled is the
// last gate before the terminal: escape sequences and control characters
// are shown, never sent; only brig's own SGR styling gets through. An
// approval prompt shows the whole of what runs (approval.go); it reads the
// file a call would change only to show the diff, without following links
// (preview.go).
package tui

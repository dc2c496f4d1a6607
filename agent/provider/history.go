package provider

import (
	"slices"
	"strings"
)

// ForProvider returns msgs as they may be sent to provider p: thinking and
// reasoning blocks produced by another provider are dropped (their
// signatures and encrypted content mean nothing to p), server-side tool
// blocks of another provider become plain text (their summary), a message
// left empty is dropped and neighbours of the same role are merged. Blocks of
// p itself pass unchanged. msgs is not modified; the messages returned may
// share their blocks with it (a message of p's blocks alone is passed as it
// is), and are read-only, as history is.
//
// Use it when a session switches provider (/model) or is resumed on another
// one. OpenAI and OpenAIChat count as different providers.
func ForProvider(msgs []Message, p Name) []Message {
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		if !slices.ContainsFunc(m.Content, func(b Block) bool { return changesFor(b, p) }) {
			// Nothing of another provider's: its blocks as they are,
			// clipped, so that appending to them (the merge below, or
			// a caller) copies them rather than write history's array.
			if len(m.Content) == 0 {
				continue
			}
			if n := len(out); n > 0 && out[n-1].Role == m.Role {
				out[n-1].Content = append(out[n-1].Content, m.Content...)
				continue
			}
			out = append(out, Message{Role: m.Role, Content: slices.Clip(m.Content)})
			continue
		}
		var blocks []Block
		var serverText []string
		flush := func() {
			if len(serverText) > 0 {
				blocks = append(blocks, Text(strings.Join(serverText, "\n")))
				serverText = nil
			}
		}
		for _, b := range m.Content {
			switch {
			case b.Type == BlockThinking && b.Thinking != nil && b.Thinking.Provider != p:
				continue
			case b.Type == BlockServerTool && b.ServerTool != nil && b.ServerTool.Provider != p:
				if b.ServerTool.Summary != "" {
					serverText = append(serverText, b.ServerTool.Summary)
				}
				continue
			}
			flush()
			blocks = append(blocks, b)
		}
		flush()
		if len(blocks) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == m.Role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			continue
		}
		out = append(out, Message{Role: m.Role, Content: blocks})
	}
	return out
}

// changesFor reports whether ForProvider changes b for provider p: another
// provider's thinking or server-side tool.
func changesFor(b Block, p Name) bool {
	switch {
	case b.Type == BlockThinking && b.Thinking != nil && b.Thinking.Provider != p:
		return true
	case b.Type == BlockServerTool && b.ServerTool != nil && b.ServerTool.Provider != p:
		return true
	}
	return false
}

package agent

import (
	"context"
	"errors"
	"fmt"

	"brig/agent/provider"
)

// ErrNothingToCompact is returned (wrapped) by a compaction that has no
// older part to summarise, or one too small to gain from it. Nothing is
// wrong then: the session is as it was.
var ErrNothingToCompact = errors.New("nothing to compact")

// Context management: brig keeps the conversation inside the model's
// window. When the context the model last saw crosses the threshold, the
// agent first truncates large old tool results (what the model sees, never
// what is on disk or in the display history); if that is not enough it asks
// the provider for a summary of the older part and replaces it, keeping the
// recent turns and every tool_use/tool_result pair intact.

const (
	// DefaultCompactAt is the share of the context window at which the
	// agent compacts before its next request.
	DefaultCompactAt = 0.8
	// keepShare is the share of the window the kept recent turns may take.
	keepShare = 0.3
	// oldResultBytes is what an old tool result is cut to.
	oldResultBytes = 2048
	// recentMessages are never truncated.
	recentMessages = 6
	// minCompactTokens is the least older part /compact summarises: a
	// summary takes a few hundred to a thousand tokens itself.
	minCompactTokens = 1500
	// manualKeepTokens is the most of the recent turns a manual
	// compaction keeps whole.
	manualKeepTokens = 4096
)

// Compaction is what Config.Compacted receives: the first Replaced messages
// of the history were replaced by Summary.
type Compaction struct {
	Replaced int
	Summary  []provider.Message
	Reason   string // "truncate", "auto" or "manual"
}

// EstimateTokens is a quick estimate of the tokens of messages: about four
// bytes a token for text and JSON, a fixed price for an image.
func EstimateTokens(msgs []provider.Message) int {
	n := 0
	for _, m := range msgs {
		n += 4
		for _, b := range m.Content {
			n += blockTokens(b)
		}
	}
	return n
}

func blockTokens(b provider.Block) int {
	switch b.Type {
	case provider.BlockText:
		return len(b.Text)/4 + 1
	case provider.BlockImage:
		return 1600
	case provider.BlockToolUse:
		return (len(b.ToolUse.Name)+len(b.ToolUse.Input))/4 + 8
	case provider.BlockToolResult:
		n := 8
		for _, c := range b.ToolResult.Content {
			n += blockTokens(c)
		}
		return n
	case provider.BlockThinking:
		if b.Thinking != nil {
			return len(b.Thinking.Text)/4 + len(b.Thinking.Signature)/4 + 1
		}
	case provider.BlockServerTool:
		if b.ServerTool != nil {
			return len(b.ServerTool.Raw)/4 + 1
		}
	}
	return 1
}

// ContextUsed is the context the next request will fill: the last
// response's input and output where known (the provider's own count), plus
// estimates of what was added after it.
func (a *Agent) ContextUsed() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.lastContext > 0 {
		return a.lastContext + EstimateTokens(a.history[a.lastLen:])
	}
	return EstimateTokens(a.history) + len(a.cfg.System)/4
}

// needsCompaction reports whether the next request would cross the
// threshold.
func (a *Agent) needsCompaction() bool {
	window := a.cfg.Model.ContextWindow
	if window <= 0 {
		return false
	}
	at := a.cfg.CompactAt
	if at <= 0 {
		at = DefaultCompactAt
	}
	return float64(a.ContextUsed()) >= at*float64(window)
}

// Compact shrinks the model-facing history now (`/compact`, `brig -p
// --compact`): old tool results are truncated, then the older part is
// summarised by the provider. It returns an error, and changes nothing,
// when there is too little history to compact or the summary request
// fails; old results cut with nothing left to summarise is a compaction.
func (a *Agent) Compact(ctx context.Context) error {
	return a.compact(ctx, "manual", true)
}

func (a *Agent) compact(ctx context.Context, reason string, force bool) error {
	if err := a.synced(); err != nil {
		return err // the messages it counts must be on disk
	}
	truncated := false
	if cut := a.truncateOld(); len(cut) > 0 {
		if err := a.replace(ctx, len(cut), cut, "truncate"); err != nil {
			return err
		}
		if !force && !a.needsCompaction() {
			return nil
		}
		truncated = true
	}
	h := a.History()
	k := a.splitPoint(h, force)
	if k <= 0 {
		if truncated {
			return nil // the cut old results were the compaction: not "nothing to compact" (new user, 2026-12-03)
		}
		return fmt.Errorf("%w: the conversation is only its latest turn", ErrNothingToCompact)
	}
	if t := EstimateTokens(h[:k]); force && t < minCompactTokens {
		if truncated {
			return nil
		}
		// A summary is about this size itself: compacting would spend a
		// request to grow the context (a new user's /compact of a short
		// session went from about 3907 to 3929 tokens).
		// Said with the whole count: "the older part is 1 message" of a
		// 37-message session read as a miscount (new user, 2026-12-03).
		return fmt.Errorf("%w: of its %s, the latest turns (%d) are kept whole, and the older part, %s of about %d tokens, is no more than a summary of it would take", ErrNothingToCompact, counted(len(h), "message"), len(h)-k, counted(k, "message"), t)
	}
	older := counted(k, "older message")
	a.emit(Event{Kind: EventNotice, Text: "compacting: summarising " + older})
	prefix := append([]provider.Message(nil), h[:k]...)
	prefix = append(prefix, provider.Message{Role: provider.User, Content: []provider.Block{provider.Text(
		"[brig] The conversation is about to be shortened. Write a summary of everything above that a continuation needs: the user's goals and instructions, decisions made, files read and changed (with paths), commands run and their outcomes, the current state of the work and the next steps. Be concise and factual; do not call tools.")}})
	req := provider.Request{
		Model: a.cfg.Model.ID, System: a.cfg.System,
		Messages:  provider.ForProvider(prefix, a.cfg.Client.Provider()),
		MaxTokens: min(8192, max(a.cfg.Model.MaxOutput, 1024)),
	}
	resp, err := a.cfg.Client.Stream(ctx, req, func(provider.Event) error { return nil })
	if err != nil {
		return fmt.Errorf("compaction: the summary request failed: %w", err)
	}
	a.account(resp.Usage)
	text := resp.Message.PlainText()
	if text == "" {
		return errors.New("compaction: the provider returned an empty summary; nothing was changed")
	}
	summary := []provider.Message{{Role: provider.User, Content: []provider.Block{provider.Text(
		"[brig] Summary of the earlier part of this conversation (it was compacted to fit the context window):\n\n" + text)}}}
	return a.replace(ctx, k, summary, reason)
}

// replace swaps the first n messages for summary and saves the compaction.
// The provider's last context count is kept as the baseline, less the
// estimate of what was replaced and plus the summary's: it counts the
// system prompt and the tool definitions, which an estimate of the
// messages alone leaves out (so that /compact reported 3585 → 683 tokens
// for a compaction that saved almost nothing).
func (a *Agent) replace(ctx context.Context, n int, summary []provider.Message, reason string) error {
	if a.cfg.Compacted != nil {
		if err := a.cfg.Compacted(context.WithoutCancel(ctx), Compaction{Replaced: n, Summary: summary, Reason: reason}); err != nil {
			return fmt.Errorf("save the compaction: %w", err)
		}
	}
	a.mu.Lock()
	old := a.history
	a.history = append(append([]provider.Message(nil), summary...), old[n:]...)
	if a.lastContext > 0 && n <= a.lastLen {
		a.lastContext = max(a.lastContext-EstimateTokens(old[:n])+EstimateTokens(summary), 1)
		a.lastLen += len(summary) - n
	} else {
		a.lastContext, a.lastLen = 0, 0
	}
	a.compactions++
	a.mu.Unlock()
	return nil
}

// splitPoint chooses where the kept recent part starts: at an assistant
// message (the summary goes in as the user turn before it, so every kept
// tool_use still has its result after it), keeping at most keepShare of
// the window but always the last assistant message. A compaction the user
// asked for (manual) keeps at most manualKeepTokens: with keepShare of a
// 200k window it kept any session under 60k tokens whole but for its
// first message, and summarised that alone.
func (a *Agent) splitPoint(h []provider.Message, manual bool) int {
	budget := int(keepShare * float64(max(a.cfg.Model.ContextWindow, 8192)))
	if manual {
		budget = min(budget, manualKeepTokens)
	}
	k, used := -1, 0
	for i := len(h) - 1; i > 0; i-- {
		used += EstimateTokens(h[i : i+1])
		if h[i].Role != provider.Assistant {
			continue
		}
		if k > 0 && used > budget {
			break
		}
		k = i
	}
	return k
}

// truncateOld returns the leading messages up to the last one that holds a
// large tool result older than the recent messages, with those results cut
// (nil when there is none). The history itself is not changed.
func (a *Agent) truncateOld() []provider.Message {
	h := a.History()
	last := -1
	out := make([]provider.Message, 0, len(h))
	for i := 0; i < len(h); i++ {
		m := h[i]
		if i >= len(h)-recentMessages {
			break
		}
		changed := false
		content := make([]provider.Block, len(m.Content))
		for j, b := range m.Content {
			content[j] = b
			if b.Type != provider.BlockToolResult || b.ToolResult == nil {
				continue
			}
			tr := *b.ToolResult
			kept := make([]provider.Block, 0, len(tr.Content))
			for _, c := range tr.Content {
				switch {
				case c.Type == provider.BlockText && len(c.Text) > oldResultBytes:
					c.Text = c.Text[:oldResultBytes] + fmt.Sprintf("\n[brig: %d more bytes of this old result were cut to save context; run the tool again if you need them]", len(c.Text)-oldResultBytes)
					changed = true
				case c.Type == provider.BlockImage:
					c = provider.Text("[brig: an old image was dropped to save context]")
					changed = true
				}
				kept = append(kept, c)
			}
			tr.Content = kept
			content[j] = provider.Block{Type: provider.BlockToolResult, ToolResult: &tr}
		}
		out = append(out, provider.Message{Role: m.Role, Content: content})
		if changed {
			last = i
		}
	}
	return out[:last+1]
}

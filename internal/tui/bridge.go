package tui

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"brig/agent"
	"brig/agent/provider"
	"brig/internal/session"
	"brig/policy"
)

// Conn is one agent and what it stands on (a connected run), as the
// caller built it.
type Conn struct {
	Agent    *agent.Agent
	Executor *agent.Executor
	Policy   *policy.Policy
	Session  *session.Session
	Model    provider.Model
	Provider provider.Name
	// Resumed is the saved state when the run reopened a session (its
	// display history is replayed).
	Resumed *session.State
	// Instructions are the banner lines about the instruction files.
	Instructions []string
	// Tips are banner lines on what would make this workspace's calls
	// faster (brig cache warm).
	Tips []string
	// ModeNote says which mode a resumed session goes on in when that is
	// not the one it was saved in (shown under its history).
	ModeNote string
	// ModeFromConfig says the run's mode is the one [agent] mode of the
	// user's config names, which the banner says.
	ModeFromConfig bool
	// Undo runs /undo with its arguments and returns what to show (nil:
	// undo is not available).
	Undo func(ctx context.Context, args string) (string, error)
	// Changes lists the session's calls that changed files, numbered as
	// /undo N takes them (nil: not available).
	Changes func(ctx context.Context) (string, error)
	// Warm gets the run's first calls ready (the jail's programs and
	// children, the workspace's first snapshot); the TUI calls it in the
	// background once its banner is up, so that none of it shares the
	// cores with the first frame. Nil: nothing to do.
	Warm func()
	// Connect opens the provider's connection in the background ahead of
	// a prompt; the TUI calls it as the user starts typing one, so that a
	// connection the server closed while the session sat idle is open
	// again when the prompt is sent. Nil: nothing to do.
	Connect func()
	// Kept says whether the session outlives Close: a new one in which
	// nothing was saved is removed then. Nil: it is kept.
	Kept  func() bool
	Close func()
}

// kept reports whether c's session outlives its Close.
func (c *Conn) kept() bool { return c.Kept == nil || c.Kept() }

// StartRequest says which run to build: the model ("" for the default),
// the session to reopen ("" for a new one) and the mode ("" for the
// default, or the reopened session's own).
type StartRequest struct {
	Model    string
	Resume   string
	Continue bool // reopen the workspace's latest session
	Mode     policy.Mode
	// Current is the mode in effect when a session is resumed without a
	// Mode: the session goes on in its own mode only when that is no
	// wider.
	Current policy.Mode
}

// Hooks are what the TUI gives every run it asks for: the approver, the
// event sink and the inbox of queued messages.
type Hooks struct {
	Approver agent.Approver
	Emit     func(agent.Event)
	Inbox    func() []provider.Block
}

// Starter builds a run (cmd/brig does it with the provider, supervisor,
// policy and session set-up). An error with no provider configured is shown
// in the banner; brig still opens.
type Starter func(ctx context.Context, req StartRequest, h Hooks) (*Conn, error)

// The messages the agent side sends the UI, in order, on one channel.
type (
	// eventsMsg is a batch of agent events drained at once.
	eventsMsg []agent.Event
	// approvalMsg is a call waiting for the user's answer.
	approvalMsg struct{ p *pending }
	// deliveredMsg is queued messages the agent took at a tool boundary.
	deliveredMsg []string
	// turnDoneMsg ends a turn.
	turnDoneMsg struct {
		res agent.TurnResult
		err error
	}
)

// bridge carries everything from the agent's goroutine to the UI on one
// buffered channel, so order is kept (a tool's start comes before its
// approval, the turn's end after its last event). A full channel blocks the
// sender: the agent waits for the UI rather than losing an event.
type bridge struct {
	ch chan tea.Msg
	// asking lets one approval question at a time onto the screen.
	asking chan struct{}
	// last is when wait last delivered events (unix nanoseconds).
	last atomic.Int64
	// now and after are the clock (tests replace them).
	now   func() time.Time
	after func(time.Duration) <-chan time.Time
}

// bridgeBuffer is the channel's capacity: events the agent may run ahead
// of the UI before it waits.
const bridgeBuffer = 256

// frameGap is the least time between two deliveries of events while they
// keep coming: every message the UI takes costs a whole frame (Bubble Tea
// renders the view after each), and a command printing megabytes sends
// hundreds of output events, which the UI otherwise took a few at a time
// — a frame each, on the cores the command runs on.
const frameGap = 16 * time.Millisecond

func newBridge() *bridge {
	return &bridge{ch: make(chan tea.Msg, bridgeBuffer), asking: make(chan struct{}, 1), now: time.Now, after: time.After}
}

// emit is Config.Emit: text and tool events become one message each.
func (b *bridge) emit(ev agent.Event) { b.ch <- eventsMsg{ev} }

// wait is the command that takes the next message, merging consecutive
// event batches so a fast stream costs a frame per frameGap, not one per
// delta: events that come within frameGap of the last delivery wait for
// the rest of the gap, gathering what follows (a full buffer's worth, or
// any other message, ends the wait at once); events after a pause are
// delivered as they come.
func (b *bridge) wait() tea.Cmd {
	return func() tea.Msg {
		first := <-b.ch
		evs, ok := first.(eventsMsg)
		if !ok {
			return first
		}
		var tick <-chan time.Time
		if gap := frameGap - b.now().Sub(time.Unix(0, b.last.Load())); gap > 0 {
			tick = b.after(gap)
		}
		deliver := func(m tea.Msg) tea.Msg {
			b.last.Store(b.now().UnixNano())
			return m
		}
		for len(evs) < bridgeBuffer {
			var next tea.Msg
			select {
			case next = <-b.ch:
			default:
				if tick == nil {
					return deliver(evs)
				}
				select {
				case next = <-b.ch:
				case <-tick:
					return deliver(evs)
				}
			}
			if more, ok := next.(eventsMsg); ok {
				evs = append(evs, more...)
				continue
			}
			// Keep order: deliver what was merged, then this one.
			return deliver(batchThen{evs, next})
		}
		return deliver(evs)
	}
}

// batchThen is a merged batch followed by one other message.
type batchThen struct {
	evs  eventsMsg
	next tea.Msg
}

// pending is one approval request and its answer. The first answer wins;
// a later one (a second key press, the context ending) is dropped.
type pending struct {
	req  agent.ApprovalRequest
	prev *preview // the diff and targets the prompt shows, computed once
	// rows is the prompt's body laid out for rowsWidth columns.
	rows      []string
	rowsWidth int
	// lead is the row of rows that must be in sight to approve (a
	// diff's first changed row; bodyRows).
	lead int
	// mixed is lookalikes of the call's arguments, found once (a file's
	// whole content is scanned, and the card is drawn on every frame).
	mixed     []string
	mixedDone bool
	// cramped: the terminal is too small for the prompt to show what the
	// call runs (or its target) beside the answers; approving is refused
	// until it is larger, denying is not.
	cramped bool
	// rulesHidden: the answers are shown in a word each (a short
	// terminal), without the rule "session" and "always" would save, so
	// those are not offered until it is larger.
	rulesHidden bool
	laidOut     bool // the prompt has been laid out (cramped is known)
	once        sync.Once
	reply       chan agent.Approval
}

func (p *pending) answer(a agent.Approval) {
	p.once.Do(func() { p.reply <- a })
}

// broker is the agent.Approver of the TUI: it puts the request on the
// bridge and waits for the user's answer or the turn's context. The prompt
// shows one question, so questions that come at once (a call's
// connections, subagents) wait their turn.
type broker struct{ b *bridge }

// Approve implements agent.Approver.
func (br broker) Approve(ctx context.Context, req agent.ApprovalRequest) (agent.Approval, error) {
	if br.b.asking != nil {
		select {
		case br.b.asking <- struct{}{}:
		case <-ctx.Done():
			return agent.Approval{}, ctx.Err()
		}
		defer func() { <-br.b.asking }()
	}
	// The preview reads the file a call would change: done here, on the
	// agent's goroutine, not the UI's.
	p := &pending{req: req, prev: buildPreview(req), reply: make(chan agent.Approval, 1)}
	select {
	case br.b.ch <- approvalMsg{p}:
	case <-ctx.Done():
		return agent.Approval{}, ctx.Err()
	}
	select {
	case a := <-p.reply:
		return a, nil
	case <-ctx.Done():
		p.answer(agent.Approval{Answer: agent.AnswerDeny}) // the prompt goes away unanswered
		return agent.Approval{}, ctx.Err()
	}
}

// inbox holds the messages typed while the agent works. The agent takes
// them at its next tool boundary (Config.Inbox); what is left when the turn
// ends is sent as the next turn.
type inbox struct {
	mu    sync.Mutex
	queue []string
	b     *bridge
}

func (in *inbox) push(s string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.queue = append(in.queue, s)
}

func (in *inbox) pending() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]string(nil), in.queue...)
}

// take empties the queue.
func (in *inbox) take() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	q := in.queue
	in.queue = nil
	return q
}

// drain is Config.Inbox: the queued messages as one text block, and a note
// to the UI that they were delivered.
func (in *inbox) drain() []provider.Block {
	q := in.take()
	if len(q) == 0 {
		return nil
	}
	in.b.ch <- deliveredMsg(q)
	return []provider.Block{provider.Text(queuedText(q))}
}

// queuedText is how queued messages reach the model.
func queuedText(q []string) string {
	return "[The user sent this while you were working]\n" + strings.Join(q, "\n\n")
}

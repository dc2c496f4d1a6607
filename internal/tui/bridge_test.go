package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"brig/agent"
)

// TestBridgeOrderAndMerge: events waiting together arrive as one batch, in
// order, and a non-event message after them keeps its place.
func TestBridgeOrderAndMerge(t *testing.T) {
	b := newBridge()
	for i := range 5 {
		b.emit(agent.Event{Kind: agent.EventText, Text: string(rune('a' + i))})
	}
	b.ch <- turnDoneMsg{}
	b.emit(agent.Event{Kind: agent.EventText, Text: "z"})
	first := b.wait()()
	bt, ok := first.(batchThen)
	if !ok {
		t.Fatalf("got %T, want the batch then the turn's end", first)
	}
	var got strings.Builder
	for _, ev := range bt.evs {
		got.WriteString(ev.Text)
	}
	if got.String() != "abcde" {
		t.Errorf("batch %q", got.String())
	}
	if _, ok := bt.next.(turnDoneMsg); !ok {
		t.Errorf("next %T", bt.next)
	}
	if evs, ok := b.wait()().(eventsMsg); !ok || len(evs) != 1 || evs[0].Text != "z" {
		t.Errorf("after: %+v", evs)
	}
}

// TestBridgeBackpressure: when the UI falls behind by a full buffer the
// agent's Emit waits (nothing is dropped) and goes on once the UI reads.
func TestBridgeBackpressure(t *testing.T) {
	b := newBridge()
	for range bridgeBuffer {
		b.emit(agent.Event{Kind: agent.EventText, Text: "x"})
	}
	sent := make(chan struct{})
	go func() {
		b.emit(agent.Event{Kind: agent.EventText, Text: "last"})
		close(sent)
	}()
	select {
	case <-sent:
		t.Fatal("Emit did not wait on a full channel")
	case <-time.After(50 * time.Millisecond):
	}
	total := 0
	for total < bridgeBuffer+1 {
		msg := b.wait()()
		evs, ok := msg.(eventsMsg)
		if !ok {
			t.Fatalf("got %T", msg)
		}
		total += len(evs)
		if total == bridgeBuffer+1 && evs[len(evs)-1].Text != "last" {
			t.Errorf("the last event is %q", evs[len(evs)-1].Text)
		}
	}
	<-sent
}

// TestBrokerContext: an approval whose turn is cancelled returns the
// context's error, and a late answer is dropped.
func TestBrokerContext(t *testing.T) {
	b := newBridge()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := broker{b}.Approve(ctx, agent.ApprovalRequest{Tool: "bash"})
		errc <- err
	}()
	msg := (<-b.ch).(approvalMsg)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	msg.p.answer(agent.Approval{Answer: agent.AnswerOnce}) // must not block or panic
}

// TestBrokerAnswer: the user's answer is returned to the agent.
func TestBrokerAnswer(t *testing.T) {
	b := newBridge()
	got := make(chan agent.Approval, 1)
	go func() {
		a, _ := broker{b}.Approve(context.Background(), agent.ApprovalRequest{Tool: "bash"})
		got <- a
	}()
	msg := (<-b.ch).(approvalMsg)
	msg.p.answer(agent.Approval{Answer: agent.AnswerAlways})
	msg.p.answer(agent.Approval{Answer: agent.AnswerDeny}) // second answer dropped
	if a := <-got; a.Answer != agent.AnswerAlways {
		t.Errorf("answer %v", a.Answer)
	}
}

var _ tea.Msg = batchThen{}

// TestBridgeDeliversAStreamOncePerFrame: events that follow a delivery
// within frameGap wait for the rest of the gap and come as one batch with
// what arrives meanwhile; another message ends the wait at once; events
// after a pause come at once.
func TestBridgeDeliversAStreamOncePerFrame(t *testing.T) {
	b := newBridge()
	now := time.Unix(1000, 0)
	b.now = func() time.Time { return now }
	asked := make(chan time.Duration, 1)
	tick := make(chan time.Time)
	b.after = func(d time.Duration) <-chan time.Time { asked <- d; return tick }
	text := func(evs eventsMsg) string {
		var s strings.Builder
		for _, ev := range evs {
			s.WriteString(ev.Text)
		}
		return s.String()
	}
	emit := func(s string) {
		for _, r := range s {
			b.emit(agent.Event{Kind: agent.EventToolOutput, Text: string(r)})
		}
	}
	// run starts wait's command and returns its message when it comes.
	run := func() <-chan tea.Msg {
		got := make(chan tea.Msg, 1)
		go func() { got <- b.wait()() }()
		return got
	}

	// The first events of a stream come at once: no wait is asked for.
	emit("abc")
	if evs, ok := (<-run()).(eventsMsg); !ok || text(evs) != "abc" {
		t.Fatalf("first delivery %q, want abc", text(evs))
	}
	// More within the gap: the wait asks for the rest of the gap and
	// gathers what comes meanwhile, delivered when the gap is over.
	now = now.Add(5 * time.Millisecond)
	emit("de")
	got := run()
	select {
	case d := <-asked:
		if d != frameGap-5*time.Millisecond {
			t.Fatalf("waited for %v, want the rest of the gap (%v)", d, frameGap-5*time.Millisecond)
		}
	case m := <-got:
		t.Fatalf("delivered %#v at once, within the gap", m)
	}
	emit("fg")
	select {
	case m := <-got:
		t.Fatalf("delivered %#v before the gap was over", m)
	default:
	}
	now = now.Add(frameGap)
	tick <- now
	if evs, ok := (<-got).(eventsMsg); !ok || text(evs) != "defg" {
		t.Fatalf("after the gap: %q, want defg", text(evs))
	}
	// Within the gap again, a message that is not an event (an approval
	// question, the turn's end) ends the wait at once, after the events.
	emit("h")
	got = run()
	select {
	case <-asked:
	case m := <-got:
		t.Fatalf("delivered %#v at once, within the gap", m)
	}
	b.ch <- turnDoneMsg{}
	bt, ok := (<-got).(batchThen)
	if !ok || text(bt.evs) != "h" {
		t.Fatalf("with the turn's end: %#v, want the batch h then the end", bt)
	}
	if _, ok := bt.next.(turnDoneMsg); !ok {
		t.Fatalf("next %T, want the turn's end", bt.next)
	}
	// After a pause, at once.
	now = now.Add(time.Second)
	emit("i")
	if evs, ok := (<-run()).(eventsMsg); !ok || text(evs) != "i" {
		t.Fatalf("after a pause: %q, want i", text(evs))
	}
	select {
	case d := <-asked:
		t.Fatalf("waited %v after a pause", d)
	default:
	}
}

package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"brig/jail"
	"brig/policy"
	"brig/supervisor"
	"brig/tools"
)

// batch gathers the jailed Go-tool calls of one group of read-only calls
// (one answer's, run side by side) and runs them in one jail child under
// the union of their grants (policy.Union), so that four reads pay for one
// view and one worker instead of four. Every call of the group takes a
// slot and either joins with its grant — once the policy allowed it
// without asking — or leaves (anything else: a denial, a question for the
// user, another kind of tool); once every slot has done one or the other,
// the joined calls run. Calls whose grants cannot be joined run apart, as
// does a batch of one.
type batch struct {
	runner Runner
	n      int // slots: the calls of the group

	mu      sync.Mutex
	settled int // slots that joined or left
	joined  []*batchCall
	ctx     context.Context // the first joiner's: the group's
}

// batchCall is one joined call and where its outcome goes.
type batchCall struct {
	spec jail.Spec
	inv  jail.Invocation
	done chan batchOutcome
}

// batchOutcome is what one joined call ran into: its result and error as
// from Runner.Run, and the grant it ran under (the union, when joined with
// others).
type batchOutcome struct {
	res   jail.Result
	err   error
	grant *jail.Spec
}

func newBatch(r Runner, n int) *batch { return &batch{runner: r, n: n} }

type batchKey struct{}

// withBatch marks ctx for a call of b's group.
func withBatch(ctx context.Context, b *batch) context.Context {
	return context.WithValue(ctx, batchKey{}, b)
}

// batchSlot is one call's place in its group's batch: it joins or leaves,
// once; a nil slot (a call of no group) never joins. Only its call's own
// goroutine uses it.
type batchSlot struct {
	b       *batch
	settled bool
}

// slotOf returns the slot of the call ctx belongs to, or nil.
func slotOf(ctx context.Context) *batchSlot {
	b, _ := ctx.Value(batchKey{}).(*batch)
	if b == nil {
		return nil
	}
	return &batchSlot{b: b}
}

// leave gives up the slot (a no-op once it joined or left).
func (s *batchSlot) leave() {
	if s.open() {
		s.settled = true
		s.b.settle(context.Background(), nil)
	}
}

// open reports whether the call may still join.
func (s *batchSlot) open() bool { return s != nil && !s.settled }

// run joins the call, whose slot is open, with its grant and waits for its
// outcome: the result and error as from Runner.Run, and the grant it ran
// under (nil: its own).
func (s *batchSlot) run(ctx context.Context, spec jail.Spec, inv jail.Invocation) (jail.Result, *jail.Spec, error) {
	s.settled = true
	c := &batchCall{spec: spec, inv: inv, done: make(chan batchOutcome, 1)}
	s.b.settle(ctx, c)
	select {
	case o := <-c.done:
		return o.res, o.grant, o.err
	case <-ctx.Done():
		return jail.Result{Canceled: true}, nil, nil
	}
}

// settle counts a slot that joined (c, with its call's ctx) or left
// (nil), and runs the batch once every slot has, bound to the first
// joiner's ctx (the calls of a group share theirs).
func (b *batch) settle(ctx context.Context, c *batchCall) {
	b.mu.Lock()
	b.settled++
	if c != nil {
		b.joined = append(b.joined, c)
		if b.ctx == nil {
			b.ctx = ctx
		}
	}
	ready := b.settled == b.n
	b.mu.Unlock()
	if ready {
		go b.runAll()
	}
}

// runAll runs the joined calls: in one child when their grants join,
// else each in its own, side by side.
func (b *batch) runAll() {
	b.mu.Lock()
	calls, ctx := b.joined, b.ctx
	b.mu.Unlock()
	specs := make([]jail.Spec, len(calls))
	for i, c := range calls {
		specs[i] = c.spec
	}
	if union, ok := policy.Union(specs); ok && len(calls) > 1 {
		b.runTogether(ctx, calls, union)
		return
	}
	var wg sync.WaitGroup
	for _, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.done <- b.runAlone(ctx, c)
		}()
	}
	wg.Wait()
}

// runAlone runs one call as it is.
func (b *batch) runAlone(ctx context.Context, c *batchCall) batchOutcome {
	res, err := b.runner.Run(ctx, c.spec, c.inv, supervisor.IO{})
	return batchOutcome{res: res, err: err}
}

// runTogether runs calls in one child under union and hands each its
// outcome.
func (b *batch) runTogether(ctx context.Context, calls []*batchCall, union jail.Spec) {
	entries := make([]tools.BatchEntry, len(calls))
	for i, c := range calls {
		entries[i] = tools.BatchEntry{Tool: c.inv.Tool, Args: c.inv.Args}
	}
	args, err := json.Marshal(entries)
	if err != nil {
		for _, c := range calls {
			c.done <- batchOutcome{err: fmt.Errorf("encode the batch: %w", err)}
		}
		return
	}
	res, err := b.runner.Run(ctx, union, jail.Invocation{Tool: tools.BatchTool, Args: args}, supervisor.IO{})
	var outs []tools.BatchOutput
	if err == nil && len(res.Output) > 0 {
		if derr := json.Unmarshal(res.Output, &outs); derr != nil || len(outs) != len(calls) {
			err = fmt.Errorf("decode the batch's outputs (%d for %d calls): %v", len(outs), len(calls), derr)
		}
	}
	for i, c := range calls {
		o := batchOutcome{res: res, err: err, grant: &union}
		switch {
		case err != nil || len(outs) == 0:
			// The child failed, timed out or was cancelled: every call
			// of it says so.
			o.res.Output = nil
		case outs[i].Skipped:
			o = b.runAlone(ctx, c) // the results before it filled the message
		case outs[i].Error != "":
			o.res.Output, o.err = nil, &jail.StageError{Stage: jail.StageTool, Msg: outs[i].Error}
		default:
			o.res.Output = outs[i].Data
		}
		if i > 0 {
			o.res.Violations, o.res.Connections = nil, nil // reported once, with the first
		}
		c.done <- o
	}
}

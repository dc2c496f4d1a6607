package checkpoint

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// EventKind is the kind of a journal event.
type EventKind string

// Journal events.
const (
	// EventBefore: the snapshot taken before a call, written before the
	// call starts (so a crash mid-call still leaves it to restore) and
	// synced while it runs.
	EventBefore EventKind = "before"
	// EventAfter: the snapshot after the call, with its change set.
	EventAfter EventKind = "after"
	// EventUndo: calls undone, with the snapshot taken just before the
	// undo (what it replaced, so nothing is lost even to --force).
	EventUndo EventKind = "undo"
)

// Event is one line of a store's journal.
type Event struct {
	Kind    EventKind   `json:"kind"`
	Time    time.Time   `json:"time"`
	Session string      `json:"session"`
	Call    string      `json:"call,omitempty"`
	Tool    string      `json:"tool,omitempty"`
	Roots   []RootState `json:"roots,omitempty"`
	// Changes is an after event's change set.
	Changes *ChangeSet `json:"changes,omitempty"`
	// Undone are the calls an undo event undid (ids), Forced whether it
	// overwrote changes made outside brig, Overwritten which.
	Undone      []string `json:"undone,omitempty"`
	Forced      bool     `json:"forced,omitempty"`
	Overwritten []string `json:"overwritten,omitempty"`
}

// Pending is a call between its two snapshots.
type Pending struct {
	s       *Store
	session string
	call    string
	tool    string
	before  *Snapshot
	roots   []string
	// start is the coarse clock (which stamps inode changes) before the
	// before-snapshot: what changed at or after it is the call's.
	start unix.Timespec
	// shared: another session had the store open when the call began.
	shared bool
	// synced waits for the before event's sync (see Before).
	synced func() error
}

// Snapshot is the state recorded before the call.
func (p *Pending) Snapshot() *Snapshot { return p.before }

// Before snapshots roots (the paths a call may write) and journals it for
// session's call. The call must not start before it returns: by then the
// new content is on disk and the before event written, so a kill -9 of
// brig during the call still leaves the snapshot to restore. The event's
// own sync runs meanwhile, beside the call (an fdatasync is 0.3–2 ms that
// a call would otherwise wait for); After waits for it first and reports
// its failure. Where this process snapshotted a root before and the
// kernel's change notifications cover it, only the directories something
// happened in since are read.
func (s *Store) Before(ctx context.Context, session, call, tool string, roots []string) (*Pending, error) {
	roots, err := NormalizeRoots(roots)
	if err != nil {
		return nil, err
	}
	var (
		sn     *Snapshot
		synced func() error
	)
	shared := false
	var start unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &start)
	err = s.locked(ctx, func() error {
		shared = s.othersOpen()
		sn, synced, err = s.commitSnapshotLater(ctx, roots, true, func(sn *Snapshot) []Event {
			return []Event{{Kind: EventBefore, Time: time.Now().UTC(), Session: session, Call: call, Tool: tool, Roots: sn.Roots}}
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoint before the call: %w", err)
	}
	return &Pending{s: s, session: session, call: call, tool: tool, before: sn, roots: roots, start: start, shared: shared, synced: synced}, nil
}

// After snapshots the same roots again — a full walk, which also sees
// writes the change notifications miss (through shared memory mappings) —
// journals it with the change set and returns the change set. Call it
// whether or not the call succeeded.
func (p *Pending) After(ctx context.Context) (*ChangeSet, error) {
	p.s.mu.Lock()
	return p.after(ctx)
}

// AfterLater is After with the walk off the caller's way: it takes the
// store's lock now — no snapshot asked for after it returns (the next
// call's Before, an undo) can come first — and walks in the background;
// the function it returns waits for the change set. The walk of a large
// workspace (tens of milliseconds at 10,000 files) then overlaps what the
// caller does next, such as sending the call's result to the model.
func (p *Pending) AfterLater(ctx context.Context) func() (*ChangeSet, error) {
	p.s.mu.Lock()
	done := make(chan struct{})
	var (
		cs  *ChangeSet
		err error
	)
	go func() {
		defer close(done)
		cs, err = p.after(ctx)
	}()
	return func() (*ChangeSet, error) {
		<-done
		return cs, err
	}
}

// after is After with the store's mutex already held; it releases it.
func (p *Pending) after(ctx context.Context) (*ChangeSet, error) {
	if err := p.synced(); err != nil {
		p.s.mu.Unlock()
		return nil, fmt.Errorf("checkpoint before the call (the call ran; undo may not restore it after a power cut): %w", err)
	}
	var cs *ChangeSet
	err := p.s.lockedHeld(ctx, func() error {
		p.s.callStart = p.start
		defer func() { p.s.callStart = unix.Timespec{} }()
		_, err := p.s.commitSnapshot(ctx, p.roots, false, func(sn *Snapshot) []Event {
			_, c, derr := p.s.diff(p.before, sn)
			if derr != nil {
				p.s.log.Warn("checkpoint: could not compute the change set", "call", p.call, "err", derr)
				c = &ChangeSet{}
			}
			c.Shared = p.shared || p.s.othersOpen()
			cs = c
			return []Event{{Kind: EventAfter, Time: time.Now().UTC(), Session: p.session, Call: p.call, Tool: p.tool, Roots: sn.Roots, Changes: c}}
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoint after the call: %w", err)
	}
	return cs, nil
}

// Warm snapshots roots without journalling it, so that the first call's
// snapshot finds the content stored, the stat data known and the
// directories watched (a session starts it in the background; a call's
// snapshot waits for it on the store's lock). It stops when ctx is done.
func (s *Store) Warm(ctx context.Context, roots []string) error {
	roots, err := NormalizeRoots(roots)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.snapshotted(roots) {
		// A call's snapshot came first (the session's first call can
		// overtake this goroutine): there is nothing left to warm, and
		// waiting for the store's lock here — which another process,
		// or a test, may hold — would hold the mutex the call's
		// snapshot after takes before its result goes to the model.
		s.mu.Unlock()
		return nil
	}
	return s.lockedHeld(ctx, func() error {
		_, err := s.commitSnapshot(ctx, roots, true, func(*Snapshot) []Event { return nil })
		return err
	})
}

// snapshotted reports whether this process has snapshotted every one of
// roots. Called with mu held.
func (s *Store) snapshotted(roots []string) bool {
	for _, r := range roots {
		if _, ok := s.last[r]; !ok {
			return false
		}
	}
	return true
}

// commitSnapshot takes a snapshot, makes its objects durable, then
// journals the events built from it and syncs the journal. Called with the
// store locked.
func (s *Store) commitSnapshot(ctx context.Context, roots []string, fast bool, events func(*Snapshot) []Event) (*Snapshot, error) {
	sn, _, err := s.commitSnapshotSync(ctx, roots, fast, false, events)
	return sn, err
}

// commitSnapshotLater is commitSnapshot that leaves the journal's sync
// running (appendJournalLater); synced waits for it.
func (s *Store) commitSnapshotLater(ctx context.Context, roots []string, fast bool, events func(*Snapshot) []Event) (*Snapshot, func() error, error) {
	return s.commitSnapshotSync(ctx, roots, fast, true, events)
}

// commitSnapshotSync is commitSnapshot, with the journal's sync left
// running when later (synced then waits for it) and done before it
// returns otherwise.
func (s *Store) commitSnapshotSync(ctx context.Context, roots []string, fast, later bool, events func(*Snapshot) []Event) (sn *Snapshot, synced func() error, err error) {
	w, err := s.newWriter()
	if err != nil {
		return nil, nil, err
	}
	sn, err = s.snapshot(ctx, w, roots, fast)
	if err == nil {
		err = w.commit()
	}
	if err != nil {
		w.abort()
		return nil, nil, err
	}
	synced = func() error { return nil }
	evs := events(sn)
	switch {
	case len(evs) == 0:
	case later:
		if synced, err = s.appendJournalLater(evs...); err != nil {
			return nil, nil, err
		}
	default:
		if err := s.appendJournal(evs...); err != nil {
			return nil, nil, err
		}
	}
	return sn, synced, nil
}

package tui

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"brig/agent"
	"brig/internal/termsafe"
)

// Options are the terminal the TUI runs on (tests give a pty or pipes).
type Options struct {
	In  io.Reader
	Out io.Writer
	Env []string
}

// Run runs the TUI until the user exits and returns what was spent. The
// agent's goroutine is stopped and the run closed before it returns.
func Run(ctx context.Context, cfg Config, o Options) (Summary, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := New(ctx, cfg)
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithoutSignalHandler()}
	if o.In != nil {
		opts = append(opts, tea.WithInput(o.In))
	}
	var out io.Writer = os.Stdout
	if o.Out != nil {
		out = o.Out
	}
	// The live area parks the terminal's cursor, hidden (terminal.go);
	// the title comes first, on its own line (see title).
	guard := newCursorGuard(out)
	_, _ = guard.Write([]byte(downsample(termsafe.Styled(title()), cfg.Profile) + "\r\n"))
	guard.start()
	defer guard.restore()
	opts = append(opts, tea.WithOutput(guard))
	if o.Env != nil {
		opts = append(opts, tea.WithEnvironment(o.Env))
	}
	if cfg.Profile != colorprofile.Unknown {
		// Detected once, by the caller: Bubble Tea would detect it again.
		opts = append(opts, tea.WithColorProfile(cfg.Profile))
	}
	p := tea.NewProgram(m, opts...)
	pr := newPrinter(p, m.frames)
	m.out = pr.push
	go pr.loop()
	_, err := p.Run()
	pr.close()
	m.shutdown()
	sum := m.summary()
	if err != nil && ctx.Err() == nil {
		return sum, fmt.Errorf("terminal UI: %w", err)
	}
	return sum, nil
}

// shutdown stops the turn in progress (the agent may be blocked sending an
// event: the bridge is drained meanwhile) and closes the run.
func (m *Model) shutdown() {
	if m.cancel != nil {
		m.cancel()
	}
	done := make(chan struct{})
	go func() {
		m.wg.Wait()
		close(done)
	}()
	deadline := time.After(10 * time.Second)
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case msg := <-m.bridge.ch:
			if a, ok := msg.(approvalMsg); ok {
				a.p.answer(agent.Approval{Answer: agent.AnswerDeny})
			}
		case <-deadline:
			waiting = false
		}
	}
	if m.run != nil {
		m.run.Close()
	}
}

func (m *Model) summary() Summary {
	s := Summary{Cost: m.spent, Usage: m.usage, Turns: m.turns, Failed: m.failed, Session: m.keptID}
	if m.run != nil && m.run.kept() {
		s.Session = m.run.Session.ID()
	}
	// Otherwise the run's session is removed as it closes (nothing was
	// said in it): the resume hint names the last one kept, if any.
	return s
}

// printer prints above the live area in the order the model asked, from
// one goroutine (commands run concurrently and could reorder lines), each
// block in pieces the screen has room for (frameLog).
type printer struct {
	p      *tea.Program
	frames *frameLog
	mu     sync.Mutex
	cond   *sync.Cond
	q      []string
	closed bool
	done   chan struct{}
}

func newPrinter(p *tea.Program, f *frameLog) *printer {
	pr := &printer{p: p, frames: f, done: make(chan struct{})}
	pr.cond = sync.NewCond(&pr.mu)
	return pr
}

func (pr *printer) push(s string) {
	pr.mu.Lock()
	pr.q = append(pr.q, s)
	pr.mu.Unlock()
	pr.cond.Signal()
}

func (pr *printer) loop() {
	defer close(pr.done)
	for {
		pr.mu.Lock()
		for len(pr.q) == 0 && !pr.closed {
			pr.cond.Wait()
		}
		if len(pr.q) == 0 {
			pr.mu.Unlock()
			return
		}
		s := pr.q[0]
		pr.q = pr.q[1:]
		pr.mu.Unlock()
		for lines := strings.Split(s, "\n"); len(lines) > 0; {
			n := pr.frames.take(&lines, time.Now())
			// Send returns once the program has the message, and it
			// prints it before it makes another frame.
			pr.p.Send(tea.Println(strings.Join(lines[:n], "\n"))())
			pr.frames.release()
			lines = lines[n:]
		}
	}
}

// frameLog is what the printer needs to know of the live area. Bubble Tea
// prints a block above it by scrolling the screen up by the block's rows
// from the live area's bottom, then moving up to the live area's new top
// and inserting the lines there. A block of more rows than the terminal's
// height less the live area's scrolls the live area itself into the
// scrollback (a copy of it in the history) and moves up to a top that has
// left the screen; Bubble Tea then believes the live area is still drawn
// where the block ended, and does not draw it again (seen: /cost at 20x6
// and /help at 80x24 left no input or status line). So a block is
// printed in pieces of at most the terminal's height less the height of
// any frame Bubble Tea may be showing: the frames of the last 100 ms (it
// draws 60 a second) and the last one; and while a piece is on its way,
// frames leave its rows free (hold).
type frameLog struct {
	mu            sync.Mutex
	height, width int // the terminal's
	hold          int
	last          int       // the last frame's rows
	peak, prev    int       // the most rows of a frame in this period and the one before
	since         time.Time // when this period began
}

// framePeriod is how long a frame is counted as one Bubble Tea may show.
const framePeriod = 100 * time.Millisecond

func (f *frameLog) resize(w, h int) {
	f.mu.Lock()
	f.width, f.height = w, h
	f.mu.Unlock()
}

// record counts a frame of rows rows, made at now (the caller holds mu).
func (f *frameLog) record(rows int, now time.Time) {
	switch age := now.Sub(f.since); {
	case age >= 2*framePeriod:
		f.prev, f.peak, f.since = 0, 0, now
	case age >= framePeriod:
		f.prev, f.peak, f.since = f.peak, 0, now
	}
	f.peak, f.last = max(f.peak, rows), rows
}

// take chooses how many of lines (at least one) the next piece holds and
// holds its rows free; a line wider than the terminal is first cut into
// rows of its width.
func (f *frameLog) take(lines *[]string, now time.Time) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	shown := f.last
	switch age := now.Sub(f.since); {
	case age < framePeriod:
		shown = max(shown, f.peak, f.prev)
	case age < 2*framePeriod:
		shown = max(shown, f.peak)
	}
	room := max(f.height-shown, 1)
	ls := *lines
	if f.width > 0 && ansi.StringWidth(ls[0]) > f.width {
		*lines = slices.Concat(strings.Split(ansi.Hardwrap(ls[0], f.width, true), "\n"), ls[1:])
		ls = *lines
	}
	n := 1
	for n < len(ls) && n < room && ansi.StringWidth(ls[n]) <= f.width {
		n++
	}
	f.hold = n
	return n
}

// release ends the hold of the piece just printed.
func (f *frameLog) release() {
	f.mu.Lock()
	f.hold = 0
	f.mu.Unlock()
}

// close stops the loop; lines not yet printed when the program ended are
// dropped by Send.
func (pr *printer) close() {
	pr.mu.Lock()
	pr.closed = true
	pr.q = nil
	pr.mu.Unlock()
	pr.cond.Signal()
	<-pr.done
}

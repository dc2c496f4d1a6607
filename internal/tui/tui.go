package tui

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

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
	pr := newPrinter(p)
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
	s := Summary{Cost: m.spent, Usage: m.usage, Turns: m.turns}
	if m.run != nil {
		s.Session = m.run.Session.ID()
	}
	return s
}

// printer prints above the live area in the order the model asked, from
// one goroutine (commands run concurrently and could reorder lines).
type printer struct {
	p      *tea.Program
	mu     sync.Mutex
	cond   *sync.Cond
	q      []string
	closed bool
	done   chan struct{}
}

func newPrinter(p *tea.Program) *printer {
	pr := &printer{p: p, done: make(chan struct{})}
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
		pr.p.Send(tea.Println(s)())
	}
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

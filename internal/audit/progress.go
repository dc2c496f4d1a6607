package audit

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Meter shows an audit's progress on standard error: a bar redrawn in
// place on a terminal, plain lines otherwise (CI logs, pipes).
type Meter struct {
	w     io.Writer
	tty   bool
	start time.Time
	now   func() time.Time

	mu    sync.Mutex
	drawn bool // a bar is on the current line
	last  Progress
}

// NewMeter writes to w; tty says whether w is a terminal.
func NewMeter(w io.Writer, tty bool) *Meter {
	return &Meter{w: w, tty: tty, start: time.Now(), now: time.Now}
}

// Say prints a line of its own (above the bar on a terminal).
func (m *Meter) Say(format string, args ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clear()
	fmt.Fprintf(m.w, "brig audit: "+format+"\n", args...)
	if m.tty && m.last.Total > 0 {
		m.draw()
	}
}

// Update is a Config.Progress.
func (m *Meter) Update(p Progress) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p.Stage == StageRetry {
		m.clear()
		fmt.Fprintf(m.w, "brig audit: asking again: %s\n", cleanLine(p.Note, 300))
		if m.tty && m.last.Total > 0 {
			m.draw()
		}
		return
	}
	m.last = p
	if m.tty {
		m.draw()
		return
	}
	switch {
	case p.Stage == StageMerge:
		fmt.Fprintf(m.w, "brig audit: merging the findings of %d parts\n", p.Total)
	case p.Done == 0 && p.Total > 1:
		fmt.Fprintf(m.w, "brig audit: reviewing in %d parts\n", p.Total)
	case p.Done == 0:
		fmt.Fprintf(m.w, "brig audit: reviewing\n")
	case p.Total == 1:
		fmt.Fprintf(m.w, "brig audit: reviewed (%s sent, %s tokens)\n", Size(int64(p.SentBytes)), thousands(p.Tokens))
	default:
		fmt.Fprintf(m.w, "brig audit: part %d of %d reviewed (%s sent, %s tokens so far)\n", p.Done, p.Total, Size(int64(p.SentBytes)), thousands(p.Tokens))
	}
}

// Done ends the bar's line.
func (m *Meter) Done() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.drawn {
		fmt.Fprintln(m.w)
		m.drawn = false
	}
}

func (m *Meter) clear() {
	if m.drawn {
		fmt.Fprint(m.w, "\r\x1b[2K")
		m.drawn = false
	}
}

// draw redraws the bar: parts answered, what was sent, the tokens, the
// time.
func (m *Meter) draw() {
	p := m.last
	const width = 24
	filled := 0
	if p.Total > 0 {
		filled = p.Done * width / p.Total
	}
	what := fmt.Sprintf("%d/%d parts", p.Done, p.Total)
	if p.Stage == StageMerge {
		what = "merging"
	}
	line := fmt.Sprintf("brig audit ▕%s%s▏ %s · %s sent · %s tokens · %s",
		strings.Repeat("█", filled), strings.Repeat("░", width-filled), what,
		Size(int64(p.SentBytes)), thousands(p.Tokens), m.now().Sub(m.start).Round(time.Second))
	fmt.Fprint(m.w, "\r\x1b[2K"+line)
	m.drawn = true
}

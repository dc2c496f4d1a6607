package tui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"brig/agent"
	"brig/agent/provider"
	"brig/internal/doctor"
	"brig/internal/render"
	"brig/internal/session"
	"brig/internal/termsafe"
	"brig/policy"
	"brig/tools"
)

// Config is what the TUI needs from its caller.
type Config struct {
	Start   Starter
	Initial StartRequest
	// PickSession opens the session picker before starting (--resume with
	// no id).
	PickSession bool
	// Sessions lists this workspace's sessions, newest first (the /resume
	// picker).
	Sessions func(ctx context.Context) ([]session.Summary, error)
	// Sandbox reports what the jail can guarantee on this machine (the
	// checks of brig doctor). It is called once, off the UI's path.
	Sandbox   func(ctx context.Context) doctor.Report
	Workspace string
	// Usable says whether a model could be started now: nil, or why not
	// (a *credentials.MissingError when its provider has no key). It
	// reads the credentials as the Starter does. Nil offers every model.
	Usable func(model string) error
	// Profile is the terminal's colour profile (NO_COLOR gives ASCII).
	Profile colorprofile.Profile
	// Renderer renders Markdown and colours code (brig's helper program,
	// internal/render); nil shows text as it is.
	Renderer render.Renderer
}

// Summary is what a TUI session spent, for the line printed on exit.
type Summary struct {
	Session string
	Cost    float64
	Usage   provider.Usage
	Turns   int
	Failed  int // of Turns, those a provider error ended
}

// String is the exit line. Failed turns are said: "2 turns" for one that
// was answered and one that failed read as two answers (new user,
// 2026-12-03).
func (s Summary) String() string {
	turns := fmt.Sprintf("%d turn%s", s.Turns, plural(s.Turns))
	if s.Failed > 0 {
		turns += fmt.Sprintf(" (%d failed)", s.Failed)
	}
	line := fmt.Sprintf("brig: %s · %d in / %d out tokens · $%.4f", turns, s.Usage.Input+s.Usage.CacheRead+s.Usage.CacheWrite, s.Usage.Output, s.Cost)
	if s.Session != "" {
		line += fmt.Sprintf(" · resume with: brig --resume %s", s.Session)
	}
	return line
}

// toolView is a tool call on screen while it runs.
type toolView struct {
	ev     agent.ToolEvent
	start  time.Time
	output []byte   // live output, the tail kept (appendLive)
	sub    *subView // a task call's subagent
}

// tooSmallToApprove is the status line when an approval key comes while
// the card cannot show the whole call.
const tooSmallToApprove = "the window is too small to show what this call would run: enlarge it to approve (4 or Esc denies)"

// tooSmallForRules is the status line when 2 or 3 comes while the card
// cannot show the rule they would save.
const tooSmallForRules = "the window is too small to show the rule 2 and 3 would save: enlarge it to choose them (1 allows once)"

// Model is the Bubble Tea model of the TUI.
type Model struct {
	cfg    Config
	ctx    context.Context
	bridge *bridge
	inbox  *inbox

	run      *Conn
	warmed   *Conn         // the last run warmRun started getting ready
	current  StartRequest  // what the run was started with
	prev     *StartRequest // the run a switch replaced, reopened if the switch fails
	carry    *carried      // session answers to hand to the next run of the same session
	keptID   string        // the last closed run's session, when it was kept (the exit line's resume hint)
	starting bool
	startErr error
	sandbox  *doctor.Report
	banner   bool // printed

	width, height int
	profile       colorprofile.Profile
	md            *markdown
	hl            *highlighter
	out           func(string) // prints above the live area, in order
	frames        *frameLog    // the live area's heights, for the printer
	hold          int          // rows a block being printed needs free (frameLog.hold)
	wg            *sync.WaitGroup

	input   textarea.Model
	inRows  inputCount // the input's rows, counted when it may not all show
	history []string
	histIdx int
	draft   string
	// unsent is what was sent while no run was started (a config error,
	// no key): it goes back into the input once one starts.
	unsent string

	// The turn in progress.
	busy      bool
	retry     bool // the last turn failed before its message was answered: Enter on an empty input sends it again
	cancel    context.CancelFunc
	turnStart time.Time
	live      strings.Builder // the answer's text not yet printed
	thinking  strings.Builder
	tools     map[string]*toolView
	order     []string
	approval  *pending
	// delivered are queued messages the agent took at a tool boundary
	// while the results of the calls before it were still to be shown:
	// they are printed after those results, in the order things happened.
	delivered []string
	apState   approvalState // how the pending approval's prompt is shown
	lastKey   time.Time     // when the last key was pressed (approvalArm)
	// gone is when a question shown went away unanswered (its call or
	// connection gave up), and what it asked: the next question, which
	// takes its place, must not take a key meant for it (swapArm).
	gone      time.Time
	goneWhat  string
	denying   bool // typing a message to go with a denial
	denyInput textinput.Model
	frame     int
	liveC     liveCache

	popupIdx     int
	picker       *picker
	resumeWanted string // /resume ID: the id to find in the listing

	// lastOutput is the last finished command's whole result, which
	// Ctrl+O prints (the transcript shows its tail).
	lastOutput *agent.ToolEvent
	// outputs are the finished commands' whole results, numbered from
	// outputBase+1, which /output N prints: a folded output's note names
	// its number (Ctrl+O alone reaches only the last: new user,
	// 2026-12-03). At most maxOutputs are kept.
	outputs    []*agent.ToolEvent
	outputBase int

	lastInput int // input tokens of the last response: the context used
	spent     float64
	usage     provider.Usage
	sessCost  float64
	turns     int
	failed    int // of turns, those that ended in an error

	ctrlC    time.Time
	now      func() time.Time // the clock: elapsed times, the Ctrl+C window (tests stop it)
	quitting bool
	status   string // a transient note under the input
}

// denyPrompt leads the input of a denial's message to the model.
const denyPrompt = "message to the model: "

// denyWidth is the room the denial's message has on a row of width w:
// the text input's width leaves out its prompt (and the cursor's cell), and
// a row wider than the terminal was cut with "…" (new user, 2026-12-02).
func denyWidth(w int) int { return max(w-len(denyPrompt)-1, 8) }

// New builds the model. The run starts asynchronously (the prompt is
// usable at once); a Starter error is shown in the banner.
func New(ctx context.Context, cfg Config) *Model {
	b := newBridge()
	ta := newInput(inputRows)
	ta.Focus()
	di := textinput.New()
	di.Prompt = denyPrompt
	di.KeyMap.Paste.SetEnabled(false) // see noClipboard
	var rend render.Renderer = render.Plain{}
	if cfg.Renderer != nil {
		rend = cfg.Renderer
	}
	m := &Model{
		cfg: cfg, ctx: ctx, bridge: b, inbox: &inbox{b: b},
		width: 80, height: 24, profile: cfg.Profile,
		md: newMarkdown(cfg.Profile, rend), hl: newHighlighter(rend),
		input: ta, denyInput: di, tools: map[string]*toolView{},
		starting: !cfg.PickSession, wg: &sync.WaitGroup{},
		out: func(string) {}, now: time.Now, frames: &frameLog{height: 24, width: 80},
	}
	m.input.SetWidth(m.width)
	m.denyInput.SetWidth(denyWidth(m.width))
	return m
}

// inputRows is how many rows the input shows at most; a marker under it
// says how many more there are (inputView).
const inputRows = 8

// inputMax is how many rows the input shows in this terminal: inputRows,
// fewer in a short one, where the status line, the marker and a note
// under it keep their rows (liveRows).
func (m *Model) inputMax() int { return min(inputRows, max(m.liveRows()-3, 1)) }

// newInput is the multi-line input, showing at most rows rows (0: all).
func newInput(rows int) textarea.Model {
	ta := textarea.New()
	ta.Prompt = "› "
	ta.Placeholder = "Ask brig… (Enter send · Alt+Enter newline · / commands)"
	ta.ShowLineNumbers = false
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = rows
	// The content's own bound, in rows: without it the textarea stops
	// taking new lines at MaxHeight lines.
	ta.MaxContentHeight = 1 << 30
	ta.CharLimit = 0
	ta.MaxWidth = 0
	ta.KeyMap.InsertNewline.SetKeys("alt+enter", "ctrl+j")
	// See noClipboard.
	ta.KeyMap.Paste.SetEnabled(false)
	ta.KeyMap.CopySelection.SetEnabled(false)
	st := textarea.DefaultDarkStyles()
	st.Focused.CursorLine = st.Focused.Text
	st.Cursor.Blink = false
	ta.SetStyles(st)
	return ta
}

// noClipboard is the status line for a clipboard key. Bubbles' inputs bind
// Ctrl+V (and the textarea Ctrl+Shift+C) to github.com/atotto/clipboard,
// which runs xclip, xsel or wl-paste as found on PATH — in the
// supervisor, outside any jail, with its whole environment, API keys
// included. brig runs nothing but jailed calls (SPEC §1), so those
// bindings are off and pasting is the terminal's: its paste key arrives
// as a bracketed paste (paste).
const noClipboard = "brig runs no clipboard program: copy and paste with your terminal's keys (often Ctrl+Shift+C, Ctrl+Shift+V or Shift+Insert)"

// maxInputLines is the most lines the textarea holds (bubbles' textarea
// drops what is pasted beyond it, so a longer paste is refused whole).
const maxInputLines = 10000

// hooks are given to every run.
func (m *Model) hooks() Hooks {
	return Hooks{Approver: broker{m.bridge}, Emit: m.bridge.emit, Inbox: m.inbox.drain}
}

type (
	startedMsg struct {
		run *Conn
		err error
		req StartRequest
	}
	sandboxMsg  doctor.Report
	sessionsMsg struct {
		list []session.Summary
		err  error
	}
	tickMsg   struct{}
	ctrlCMsg  struct{}
	statusMsg struct{}
)

// Init starts the run (or the session picker), the sandbox probe and the
// bridge.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.bridge.wait(), m.probeSandbox()}
	if m.cfg.PickSession {
		cmds = append(cmds, m.listSessions())
	} else {
		cmds = append(cmds, m.startCmd(m.cfg.Initial))
	}
	return tea.Batch(cmds...)
}

func (m *Model) probeSandbox() tea.Cmd {
	if m.cfg.Sandbox == nil {
		return nil
	}
	ctx := m.ctx
	return func() tea.Msg { return sandboxMsg(m.cfg.Sandbox(ctx)) }
}

func (m *Model) listSessions() tea.Cmd {
	if m.cfg.Sessions == nil {
		return func() tea.Msg { return sessionsMsg{err: errors.New("sessions are not available")} }
	}
	ctx := m.ctx
	return func() tea.Msg {
		l, err := m.cfg.Sessions(ctx)
		return sessionsMsg{l, err}
	}
}

// startCmd builds a run off the UI goroutine.
func (m *Model) startCmd(req StartRequest) tea.Cmd {
	m.starting = true
	ctx, start, h := m.ctx, m.cfg.Start, m.hooks()
	return func() tea.Msg {
		if start == nil {
			return startedMsg{err: errors.New("no agent can be started"), req: req}
		}
		r, err := start(ctx, req, h)
		return startedMsg{r, err, req}
	}
}

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		// The width has a floor (rows wider than the terminal are clipped:
		// autowrap is off, see noWrap); the height has none: a live area
		// taller than the terminal floods the scrollback (liveRows). A
		// terminal that reports no size (0x0: script(1), some serial
		// consoles) gets the usual 80x24.
		w, h := cmp.Or(max(msg.Width, 0), 80), cmp.Or(max(msg.Height, 0), 24)
		m.width, m.height = max(w, 20), h
		m.frames.resize(w, h)
		m.input.MaxHeight = m.inputMax()
		m.input.SetWidth(m.width) // lays the input out again, at its new height too
		m.denyInput.SetWidth(denyWidth(m.width))
		if m.status == tooSmallToApprove || m.status == tooSmallForRules {
			m.status = "" // said of the old size; a key at the new one says it again if it still holds
		}
		return m, nil
	case tea.ColorProfileMsg:
		if m.cfg.Profile == colorprofile.Unknown {
			m.profile = msg.Profile
			m.md = newMarkdown(msg.Profile, m.md.r)
		}
		return m, nil
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case tea.PasteMsg:
		return m, m.paste(msg.Content)
	case startedMsg:
		return m, m.started(msg)
	case sandboxMsg:
		r := doctor.Report(msg)
		m.sandbox = &r
		return m, m.maybeBanner()
	case sessionsMsg:
		return m, m.sessionsListed(msg)
	case undoneMsg:
		if t := strings.TrimRight(msg.text, "\n"); t != "" {
			m.print(stDim.Render(inert(t)))
		}
		if msg.err != nil {
			m.print(stErr.Render(cmp.Or(msg.cmd, "/undo")+": ") + inert(msg.err.Error()))
		}
		return m, nil
	case eventsMsg:
		m.events(msg)
		return m, m.bridge.wait()
	case batchThen:
		m.events(msg.evs)
		return m.Update(msg.next)
	case approvalMsg:
		if m.approval != nil && m.approval != msg.p {
			m.withdrawn(m.approval) // one at a time: the one shown gave up
		}
		m.approval, m.denying, m.apState = msg.p, false, approvalState{typed: m.lastKey}
		if shown := m.now().Add(approvalShown - approvalArm); shown.After(m.apState.typed) {
			// The keys queued while the UI was busy are handled just after
			// the question, and the time since the last key handled said
			// nothing of when they were pressed: a "4" typed into a
			// message answered a question that came during a stall (new
			// user, 2026-12-03). No key answers in its first moments.
			m.apState.typed = shown
		}
		if !m.gone.IsZero() && m.now().Sub(m.gone) < swapArm {
			// Another question took the place of one the user was
			// reading: a key pressed for that one goes on into the
			// message for swapArm after this one shows, and they are told.
			m.apState.typed = m.now().Add(swapArm - approvalArm)
			m.apState.swapped = "the question about " + m.goneWhat + " was withdrawn unanswered; this is another one"
			m.status = m.apState.swapped + ": read it, then answer"
		}
		m.gone = time.Time{}
		return m, m.bridge.wait()
	case deliveredMsg:
		// The agent takes the queue as soon as its calls return, before
		// their ends (which carry the results shown) come: a message sent
		// after a call waits for its result to be printed first.
		m.delivered = append(m.delivered, msg...)
		if len(m.order) == 0 {
			m.printDelivered()
		}
		return m, m.bridge.wait()
	case compactDoneMsg:
		return m, tea.Batch(m.compactDone(msg), m.bridge.wait())
	case turnDoneMsg:
		return m, tea.Batch(m.turnDone(msg), m.bridge.wait())
	case tickMsg:
		if !m.busy {
			return m, nil
		}
		m.frame++
		return m, tick()
	case ctrlCMsg:
		m.clearStatus()
		return m, nil
	}
	return m, nil
}

func tick() tea.Cmd {
	return tea.Tick(120*time.Millisecond, func(time.Time) tea.Msg { return tickMsg{} })
}

// clearStatus clears the status line unless it still asks for a second
// Ctrl+C: a turn that ends inside the window must not hide that prompt.
func (m *Model) clearStatus() {
	if m.ctrlC.IsZero() || m.now().Sub(m.ctrlC) >= ctrlCWindow {
		m.status = ""
	} else {
		m.status = ctrlCAgain
	}
}

// ctrlCAgain is the status line after a first Ctrl+C.
const ctrlCAgain = "press Ctrl+C again to exit"

// ctrlCWindow is how soon a second Ctrl+C must follow the first to exit.
const ctrlCWindow = 2 * time.Second

// started installs a new run (or shows why there is none). A failed
// switch (/model, /mode, /resume, /clear) goes back to the run that was
// there.
func (m *Model) started(msg startedMsg) tea.Cmd {
	m.starting = false
	if msg.err != nil {
		if !m.banner {
			m.startErr = msg.err
			return m.maybeBanner()
		}
		m.print(hang(stErr.Render("brig: "), "      ", startError(msg.err), m.width))
		if m.prev != nil {
			prev := *m.prev
			m.prev = nil
			return m.startCmd(prev)
		}
		m.startErr = msg.err
		return nil
	}
	sameSession := m.current.Resume != "" && m.current.Resume == msg.run.Session.ID()
	if c := m.carry; c != nil && c.session == msg.run.Session.ID() {
		msg.run.Policy.AllowForSession(c.rules...)
	}
	m.carry = nil
	m.run, m.current, m.prev, m.startErr = msg.run, msg.req, nil, nil
	if m.sandbox != nil {
		m.sandbox.Config.Error = "" // it loaded: the problem the check found is fixed
	}
	m.current.Resume, m.current.Continue = msg.run.Session.ID(), false
	m.lastInput, m.sessCost = 0, 0
	if st := msg.run.Resumed; st != nil {
		m.sessCost = st.Cost
		m.lastInput = st.Last.Input + st.Last.CacheRead + st.Last.CacheWrite
	}
	if m.banner {
		// A later run (/model): the banner said the first model's note;
		// an unlisted model's price and window are said now.
		if note := msg.run.Model.Note(); note != "" {
			m.print(hang("", "  ", stWarn.Render(inert(note)), m.width))
		}
	}
	cmd := tea.Batch(m.maybeBanner(), m.warmRun()) // a later run: the banner is up
	if msg.run.Resumed != nil && !sameSession {
		m.print(m.replay(msg.run.Resumed))
		if n := msg.run.ModeNote; n != "" {
			m.print(hang("", "  ", stWarn.Render(inert(n)), m.width))
		}
	}
	if m.unsent != "" {
		m.input.SetValue(joinMessages(m.unsent, m.input.Value()))
		m.unsent = ""
		m.print(stDim.Render("  (your message is back in the input: Enter sends it)"))
	}
	if q := m.inbox.take(); len(q) > 0 {
		return tea.Batch(cmd, m.submit(strings.Join(q, "\n\n")))
	}
	return cmd
}

// joinMessages is a then b, a blank line between them when both hold text.
func joinMessages(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "\n\n" + b
}

// maybeBanner prints the banner once the run (or its error) and the
// sandbox report are both known.
func (m *Model) maybeBanner() tea.Cmd {
	if m.banner || m.starting || (m.sandbox == nil && m.cfg.Sandbox != nil) || m.picker != nil {
		return nil
	}
	if m.cfg.PickSession && m.run == nil && m.startErr == nil && m.configError() == "" {
		// --resume without an id: the sessions are being listed, and the
		// session picked decides the model and the mode the banner shows
		// (it showed ask for a session resumed in auto: new user,
		// 2026-12-02).
		return nil
	}
	m.banner = true
	m.print(m.bannerText())
	return tea.Batch(m.startRenderer(), m.warmRun())
}

// warmRun gets the current run's first calls ready in the background
// (Conn.Warm) once the banner is up, once per run.
func (m *Model) warmRun() tea.Cmd {
	if !m.banner || m.run == nil || m.run == m.warmed || m.run.Warm == nil {
		return nil
	}
	m.warmed = m.run
	warm := m.run.Warm
	return func() tea.Msg {
		warm()
		return nil
	}
}

// startRenderer starts the renderer's helper program, when it has one to
// start, in the background once the banner is up: started beside the
// first frame (writing an 11.6 MB program into memory, then that
// program's own start), it took a quarter of that frame's time. A render
// before it is ready starts it itself.
func (m *Model) startRenderer() tea.Cmd {
	s, ok := m.cfg.Renderer.(interface{ Start() error })
	if !ok {
		return nil
	}
	return func() tea.Msg {
		_ = s.Start() // a failure is logged by the renderer; text is then shown as it is
		return nil
	}
}

// idle refuses a command that needs the agent idle.
func (m *Model) idle(what string) bool {
	switch {
	case m.busy:
		m.print(stWarn.Render(what + ": the agent is working; wait for the turn to end or press Esc to interrupt it"))
		return false
	case m.starting:
		m.print(stWarn.Render(what + ": brig is still starting"))
		return false
	}
	return true
}

// carried is what a restart keeps from the run it replaces.
type carried struct {
	session string
	rules   []policy.Rule
}

// restart replaces the run: the old one is closed first (it holds the
// session file and the supervisor), then the Starter builds the new one.
// If that fails, the old one is reopened.
func (m *Model) restart(req StartRequest) tea.Cmd {
	if m.run != nil {
		prev := m.current
		if id := m.run.Session.ID(); !m.run.kept() {
			// A session nothing was saved in is removed as the run
			// closes: there is nothing to reopen, so a switch of its
			// mode or model (and the old run's stand-in, should the new
			// one fail) starts a new one.
			if req.Resume == id {
				req.Resume = ""
			}
			if prev.Resume == id {
				prev.Resume = ""
			}
		}
		m.prev = &prev
		// "Allow for this session" answers outlive a /mode or /model
		// switch on the same session.
		m.carry = &carried{session: m.run.Session.ID(), rules: m.run.Policy.SessionRules()}
		if m.run.kept() {
			m.keptID = m.run.Session.ID()
		}
		m.run.Close()
		m.run = nil
	}
	return m.startCmd(req)
}

// submit sends the user's text: as a new turn, or queued for the agent's
// next tool boundary while it works.
func (m *Model) submit(text string) tea.Cmd {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	if m.busy || m.starting {
		m.inbox.push(text)
		return nil
	}
	if m.run == nil {
		// Nothing typed is lost: the input stays free for the /model
		// that starts a run, and the message is in the input's history.
		// It comes back into the input by itself once a run starts: after
		// a /model, ↑ brought back the /model first (new user, 2026-12-03).
		m.unsent = joinMessages(m.unsent, text)
		m.print(hang(stWarn.Render("brig: "), "      ", stWarn.Render("not started: ")+m.whyNotStarted()+stDim.Render(" (your message comes back into the input once brig starts)"), m.width))
		return nil
	}
	m.print(hang(stUser.Render("› "), "  ", inert(text), m.width))
	return m.startTurn([]provider.Block{provider.Text(text)})
}

// startTurn runs the agent's turn on user (nil sends the unanswered
// history again).
func (m *Model) startTurn(user []provider.Block) tea.Cmd {
	ctx, cancel := context.WithCancel(m.ctx)
	m.cancel, m.busy, m.turnStart, m.frame, m.status, m.retry = cancel, true, m.now(), 0, "", false
	m.turns++
	a, b := m.run.Agent, m.bridge
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		res, err := a.Run(ctx, user)
		b.ch <- turnDoneMsg{res, err}
	}()
	return tick()
}

// retryTurn sends the history a failed turn left unanswered again.
func (m *Model) retryTurn() tea.Cmd {
	if m.run == nil || !m.run.Agent.Unanswered() {
		m.retry = false
		return nil
	}
	m.print(stDim.Render("↻ trying again"))
	return m.startTurn(nil)
}

// printDelivered prints the queued messages the agent has taken.
func (m *Model) printDelivered() {
	for _, q := range m.delivered {
		m.print(hang(stUser.Render("› "), "  ", stDim.Render("(queued, sent at a tool boundary) ")+inert(q), m.width))
	}
	m.delivered = nil
}

// turnDone ends a turn: what is left of the answer is printed, and
// messages still queued become the next turn.
func (m *Model) turnDone(msg turnDoneMsg) tea.Cmd {
	m.flushThinking()
	m.flushLive(true)
	for _, id := range m.order {
		m.print(stDim.Render("  ⎿ " + m.tools[id].ev.Name + ": ended without a result"))
	}
	m.tools, m.order = map[string]*toolView{}, nil
	m.printDelivered()
	m.busy, m.approval, m.denying = false, nil, false
	m.clearStatus()
	if m.cancel != nil {
		m.cancel()
		m.cancel = nil
	}
	elapsed := m.now().Sub(m.turnStart).Round(100 * time.Millisecond)
	switch {
	case msg.res.Stop == agent.StopInterrupted:
		m.print(hang(stWarn.Render("⏹ "), "  ", stWarn.Render("interrupted")+stDim.Render(fmt.Sprintf(" after %s; the conversation is kept, say what to do next", elapsed)), m.width))
	case msg.err != nil:
		m.failed++
		// The message is kept when the history ends with it unanswered;
		// otherwise (too large to send, say) it never went in, and the
		// input's history recalls it.
		advice := " (Up recalls your message)"
		if m.run != nil && m.run.Agent.Unanswered() {
			m.retry = true
			advice = " (your message is kept: press Enter to send it again, or type a new one)"
		}
		m.print(hang(stErr.Render("✗ "), "  ", stErr.Render("the turn failed: ")+inert(msg.err.Error())+stDim.Render(advice), m.width))
	case msg.res.Stop == agent.StopBound, msg.res.Stop == agent.StopCut, msg.res.Stop == agent.StopRefused:
		m.print(stWarn.Render("turn ended: " + string(msg.res.Stop)))
	}
	q := m.inbox.take()
	switch {
	case len(q) == 0 || m.quitting:
	case msg.res.Stop == agent.StopInterrupted:
		// An interrupt stops the work: what was queued is not sent on its
		// own but waits in the input, to send, change or drop.
		m.input.SetValue(joinMessages(strings.Join(q, "\n\n"), m.input.Value()))
		m.print(stDim.Render("  (what you queued is back in the input: Enter sends it)"))
	default:
		return m.submit(strings.Join(q, "\n\n"))
	}
	return nil
}

// events applies a batch of agent events.
func (m *Model) events(evs eventsMsg) {
	for _, ev := range evs {
		if ev.Parent != "" {
			m.subEvent(ev)
			continue
		}
		switch ev.Kind {
		case agent.EventText:
			m.flushThinking()
			m.live.WriteString(ev.Text)
			m.flushLive(false)
		case agent.EventThinking:
			m.thinking.WriteString(ev.Text)
		case agent.EventServerTool:
			m.flushLive(true)
			m.print(hang(stAccent.Render("⌕ "), "  ", inert(ev.Text), m.width))
		case agent.EventToolStart:
			m.flushThinking()
			m.flushLive(true)
			m.tools[ev.Tool.ID] = &toolView{ev: *ev.Tool, start: m.now()}
			m.order = append(m.order, ev.Tool.ID)
		case agent.EventToolOutput:
			if tv := m.tools[ev.Tool.ID]; tv != nil {
				tv.output = appendLive(tv.output, ev.Text)
			}
		case agent.EventToolEnd:
			if ev.Tool.Name == string(tools.Bash) && ev.Tool.Outcome != nil {
				m.lastOutput = ev.Tool
				m.outputs = append(m.outputs, ev.Tool)
				if len(m.outputs) > maxOutputs {
					m.outputs, m.outputBase = m.outputs[1:], m.outputBase+1
				}
			}
			m.print(m.toolDone(*ev.Tool))
			delete(m.tools, ev.Tool.ID)
			for i, id := range m.order {
				if id == ev.Tool.ID {
					m.order = append(m.order[:i], m.order[i+1:]...)
					break
				}
			}
			if m.approval != nil && m.approval.req.ToolUseID == ev.Tool.ID {
				m.withdrawn(m.approval)
				m.approval = nil
			}
			if len(m.order) == 0 {
				m.printDelivered()
			}
		case agent.EventUsage:
			m.lastInput = ev.Usage.Input + ev.Usage.CacheRead + ev.Usage.CacheWrite
			m.usage = m.usage.Add(*ev.Usage)
			m.spent += ev.Cost
			m.sessCost += ev.Cost
		case agent.EventNotice:
			m.flushLive(true)
			m.print(hang(stWarn.Render("brig: "), "      ", inert(ev.Text), m.width))
		case agent.EventMessage:
			if ev.Message != nil && ev.Message.Role == provider.Assistant {
				m.flushThinking()
				m.flushLive(true)
			}
		}
	}
}

// flushLive prints the complete part of the streaming answer (all of it
// when the message is over).
func (m *Model) flushLive(all bool) {
	text := m.live.String()
	cut := len(text)
	if !all {
		cut = stableSplit(text)
	}
	if cut == 0 {
		return
	}
	m.live.Reset()
	m.live.WriteString(text[cut:])
	if strings.TrimSpace(text[:cut]) == "" {
		return
	}
	out := m.md.render(inert(text[:cut]), m.width)
	if !all {
		out += "\n" // the block ended at a blank line: keep it
	}
	m.print(out)
}

// flushThinking prints the model's reasoning, dimmed and capped.
func (m *Model) flushThinking() {
	t := strings.TrimSpace(m.thinking.String())
	m.thinking.Reset()
	if t == "" {
		return
	}
	kept, dropped := capLines(wrap(inert(t), m.width-len(thinkingIndent)), 6)
	if dropped > 0 {
		kept = fmt.Sprintf("… (%d earlier lines of reasoning)\n", dropped) + kept
	}
	m.print(thinkingBlock(kept))
}

// thinkingIndent is the width of the thinking mark; the reasoning's rows
// are wrapped to the rest.
const thinkingIndent = "  "

// thinkingBlock marks reasoning rows as the model's thinking: "✻ " before
// the first, dimmed and in italics, so that a terminal without italics
// still tells it apart from the answer.
func thinkingBlock(rows string) string {
	lines := strings.Split(rows, "\n")
	for i, l := range lines {
		if i == 0 {
			lines[i] = "✻ " + l
		} else {
			lines[i] = thinkingIndent + l
		}
	}
	return stDim.Italic(true).Render(strings.Join(lines, "\n"))
}

// replay renders a saved session's display history.
func (m *Model) replay(st *session.State) string {
	var b strings.Builder
	b.WriteString(stDim.Render(fmt.Sprintf("── resumed session %s: %s (%d messages) ──", st.ID, inert(st.Title), st.Summary.Messages)) + "\n")
	children := map[string][]session.Entry{} // subagents' transcripts by task call
	// Each call's result is the first one after it with its id that no
	// earlier call took: a server may use an id again in a later answer
	// (new user, 2026-12-03: keyed by id alone, every call showed the last
	// result of its id, another call's).
	results := map[int]session.Entry{} // by the call's index in Display
	paired := map[int]bool{}           // the results shown under their calls
	waiting := map[string][]int{}      // calls without a result yet, by id
	for i, e := range st.Display {
		switch {
		case e.Parent != "":
			children[e.Parent] = append(children[e.Parent], e)
		case e.Kind == session.DisplayToolCall && e.ToolUseID != "":
			waiting[e.ToolUseID] = append(waiting[e.ToolUseID], i)
		case e.Kind == session.DisplayToolResult && e.ToolUseID != "":
			if q := waiting[e.ToolUseID]; len(q) > 0 {
				results[q[0]], paired[i] = e, true
				waiting[e.ToolUseID] = q[1:]
			}
		}
	}
	resultLine := func(e session.Entry) {
		line := firstLine(inert(e.Text))
		if e.IsError {
			b.WriteString(stErr.Render("  ⎿ ") + fit(line, m.width-4) + "\n")
		} else {
			b.WriteString(stDim.Render("  ⎿ "+fit(line, m.width-4)) + "\n")
		}
	}
	exits := exitCodes(st.Messages)
	for i, e := range st.Display {
		if e.Parent != "" {
			continue
		}
		switch e.Kind {
		case session.DisplayUser:
			b.WriteString(hang(stUser.Render("› "), "  ", inert(e.Text), m.width) + "\n")
		case session.DisplayAssistant:
			b.WriteString(m.md.render(inert(e.Text), m.width) + "\n")
		case session.DisplayThinking:
			kept, _ := capLines(wrap(inert(e.Text), m.width-len(thinkingIndent)), 3)
			b.WriteString(thinkingBlock(kept) + "\n")
		case session.DisplayToolCall:
			// Marked as the live transcript marks it: a failure with ✗ (and
			// a command's exit status), a denial with ⊘.
			mark, facts := stAccent.Render("● "), ""
			var code *int // this call's exit status: the next of its id's
			if q := exits[e.ToolUseID]; len(q) > 0 && e.Tool == string(tools.Bash) {
				code, exits[e.ToolUseID] = q[0], q[1:]
			}
			if r, ok := results[i]; ok {
				switch {
				case r.IsError && deniedText(r.Text):
					mark = stWarn.Render("⊘ ")
				case r.IsError:
					mark = stErr.Render("✗ ")
				default:
					mark = stOK.Render("● ")
				}
				if code != nil {
					facts = fmt.Sprintf(" · exit %d", *code)
				}
			}
			b.WriteString(mark + e.Tool + " " + stDim.Render(fit(inert(e.Text), m.width-len(e.Tool)-4-len(facts))+facts) + "\n")
			b.WriteString(m.replaySubagent(children[e.ToolUseID]))
			// Its result under it: calls of one answer run side by side,
			// and their results came after all of them (new user,
			// 2026-12-02: each showed under the other call).
			if r, ok := results[i]; ok {
				resultLine(r)
			}
		case session.DisplayToolResult:
			if !paired[i] {
				resultLine(e) // a result whose call is not shown (or has no id)
			}
		case session.DisplayNotice:
			b.WriteString(hang(stDim.Render("brig: "), "      ", stDim.Render(inert(e.Text)), m.width) + "\n")
		case session.DisplayError:
			b.WriteString(hang(stErr.Render("✗ "), "  ", inert(e.Text), m.width) + "\n")
		}
	}
	if unanswered(st.Display) {
		// The last turn ended before any answer (a provider error, an
		// interruption): said, so the prompt is not read as pending.
		b.WriteString(stWarn.Render("(no answer to this message: the turn ended before one; send it again, or a new one, to go on)") + "\n")
	}
	b.WriteString(stDim.Render("── end of the resumed history ──"))
	return b.String()
}

// unanswered reports whether the last entry of a display history (a
// subagent's aside) is the user's message.
func unanswered(d []session.Entry) bool {
	for i := len(d) - 1; i >= 0; i-- {
		if d[i].Parent != "" {
			continue
		}
		return d[i].Kind == session.DisplayUser
	}
	return false
}

// deniedText reports whether a result is brig's own word that the call
// was not run: denied by the policy or by the user, or not approved
// (agent.Executor writes these).
func deniedText(s string) bool {
	for _, p := range []string{"denied by brig's policy: ", "the user denied this call", "not approved", "refused by the "} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// exitStatus is the exit status a command's result ends with
// (tools.CommandResult): "[exit code N]" or "[killed by SIG (exit code N)]".
var exitStatus = regexp.MustCompile(`(?m)^\[(?:exit code (-?\d+)|killed by [^\]\n]* \(exit code (-?\d+)\))\]$`)

// exitCodes are the exit statuses of the bash calls in a saved
// conversation, by call id, one for each call with that id in the order
// they were made (nil for one whose result gave none; a compacted part
// of the conversation has none). Each result goes to the first call of
// its id that no earlier result took: an id may come again.
func exitCodes(msgs []provider.Message) map[string][]*int {
	out := map[string][]*int{}
	bash := map[string]int{} // calls of the id waiting for their results
	for _, msg := range msgs {
		for _, b := range msg.Content {
			switch {
			case b.ToolUse != nil && b.ToolUse.Name == string(tools.Bash):
				bash[b.ToolUse.ID]++
			case b.ToolResult != nil && bash[b.ToolResult.ToolUseID] > 0:
				id := b.ToolResult.ToolUseID
				bash[id]--
				var text strings.Builder
				for _, c := range b.ToolResult.Content {
					text.WriteString(c.Text)
				}
				var code *int
				if all := exitStatus.FindAllStringSubmatch(text.String(), -1); len(all) > 0 {
					last := all[len(all)-1] // the status follows the output
					if n, err := strconv.Atoi(last[1] + last[2]); err == nil {
						code = &n
					}
				}
				out[id] = append(out[id], code)
			}
		}
	}
	return out
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// key handles one key press.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	if s == "ctrl+c" {
		return m.ctrlCPressed()
	}
	defer func() { m.lastKey = m.now() }()
	if m.status == noClipboard {
		m.status = "" // said once, for the key that was pressed: it stayed for good (new user, 2026-12-03)
	}
	if m.approval != nil { // an approval comes first: the agent waits on it
		return m.approvalKey(k)
	}
	if m.picker != nil {
		return m.pickerKey(s)
	}
	// A slash command recalled from the history opens the command menu,
	// but ↑ and ↓ keep walking the history (they would be stuck there).
	if popup := m.popupItems(); len(popup) > 0 && !(m.recalled() && (s == "up" || s == "down")) {
		switch s {
		case "up":
			m.popupIdx = (m.popupIdx + len(popup) - 1) % len(popup)
			return nil
		case "down":
			m.popupIdx = (m.popupIdx + 1) % len(popup)
			return nil
		case "tab":
			m.input.SetValue("/" + popup[m.popupIdx].name + " ")
			m.input.CursorEnd()
			return nil
		case "enter":
			name := popup[m.popupIdx].name
			if v := strings.TrimSpace(m.input.Value()); strings.Contains(v, " ") || v == "/"+name {
				break // a complete command: run it as typed
			}
			m.input.Reset()
			m.popupIdx = 0
			m.echoCommand("/" + name)
			return m.command("/" + name)
		case "esc":
			m.input.Reset()
			return nil
		}
	}
	empty := m.input.Value() == ""
	switch s {
	case "ctrl+o":
		m.expandLastOutput()
		return nil
	case "ctrl+v", "ctrl+shift+c", "ctrl+shift+v":
		m.status = noClipboard
		return nil
	case "enter":
		text := m.input.Value()
		if strings.TrimSpace(text) == "" {
			if m.retry && !m.busy && !m.starting {
				return m.retryTurn()
			}
			return nil
		}
		m.input.Reset()
		m.popupIdx = 0
		m.remember(text)
		if strings.HasPrefix(text, "/") && !strings.Contains(firstLine(text), "\n") {
			m.echoCommand(strings.TrimSpace(text))
			return m.command(strings.TrimSpace(text))
		}
		return m.submit(text)
	case "esc":
		m.interrupt()
		return nil
	case "up":
		if m.input.Line() == 0 && len(m.history) > 0 {
			if m.histIdx == len(m.history) {
				m.draft = m.input.Value()
			}
			if m.histIdx > 0 {
				m.histIdx--
			}
			m.input.SetValue(m.history[m.histIdx])
			return m.typed(empty, nil)
		}
	case "down":
		if m.input.Line() == m.input.LineCount()-1 && m.histIdx < len(m.history) {
			m.histIdx++
			if m.histIdx == len(m.history) {
				m.input.SetValue(m.draft)
			} else {
				m.input.SetValue(m.history[m.histIdx])
			}
			return nil
		}
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	m.popupIdx = min(m.popupIdx, max(len(m.popupItems())-1, 0))
	return m.typed(empty, cmd)
}

// typed returns cmd and, when the input was empty and now holds the
// start of a prompt (typed, pasted or recalled from the history), the
// provider's connection opened in the background (Conn.Connect): a
// session left idle may have lost it, and the prompt would wait for the
// handshakes.
func (m *Model) typed(wasEmpty bool, cmd tea.Cmd) tea.Cmd {
	if !wasEmpty || m.input.Value() == "" || m.run == nil || m.run.Connect == nil {
		return cmd
	}
	connect := m.run.Connect
	return tea.Batch(cmd, func() tea.Msg {
		connect()
		return nil
	})
}

// maxOutputs bounds the commands' results kept for /output.
const maxOutputs = 100

// expandLastOutput prints the whole result of the last command, as the
// model received it.
func (m *Model) expandLastOutput() {
	if m.lastOutput == nil {
		m.status = "no command has finished yet"
		return
	}
	m.printOutput(m.lastOutput)
}

// expandOutput prints the whole result of command n (as its folded output
// numbers it; "" for the last).
func (m *Model) expandOutput(arg string) {
	if arg == "" {
		if m.lastOutput == nil {
			m.print(stWarn.Render("/output: ") + "no command has finished yet")
			return
		}
		m.printOutput(m.lastOutput)
		return
	}
	n, err := strconv.Atoi(arg)
	last := m.outputBase + len(m.outputs)
	switch {
	case err != nil || n < 1:
		m.print(stErr.Render("/output: ") + inert(arg) + " is not a command's number (a folded output names its own: /output 3)")
	case n > last:
		m.print(stErr.Render("/output: ") + fmt.Sprintf("no command %d: %d have finished in this view", n, last))
	case n <= m.outputBase:
		m.print(stErr.Render("/output: ") + fmt.Sprintf("command %d's output is no longer kept (the last %d are)", n, maxOutputs))
	default:
		m.printOutput(m.outputs[n-m.outputBase-1])
	}
}

// printOutput prints a command's whole result.
func (m *Model) printOutput(te *agent.ToolEvent) {
	head := hang(stAccent.Render("▾ "), "  ", stAccent.Render("output of ")+toolTarget(te.Name, te.Args), m.width)
	body := inert(strings.TrimRight(te.Outcome.Result.Text, "\n"))
	m.print(head + "\n" + stDim.Render(hang("  │ ", "  │ ", body, m.width)))
}

// echoCommand prints the slash command the user ran, as a message is,
// so that what it printed has its cause above it in the scrollback.
func (m *Model) echoCommand(line string) {
	m.print(hang(stUser.Render("› "), "  ", stDim.Render(inert(line)), m.width))
}

// recalled reports whether the input holds the history entry ↑ or ↓
// brought back, unchanged.
func (m *Model) recalled() bool {
	return m.histIdx < len(m.history) && m.input.Value() == m.history[m.histIdx]
}

// remember adds a line to the input history.
func (m *Model) remember(text string) {
	if n := len(m.history); n == 0 || m.history[n-1] != text {
		m.history = append(m.history, text)
	}
	m.histIdx, m.draft = len(m.history), ""
}

// paste inserts pasted text with its control characters made inert.
func (m *Model) paste(s string) tea.Cmd {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	if m.approval != nil && m.denying {
		m.denyInput.SetValue(m.denyInput.Value() + strings.ReplaceAll(inert(s), "\n", " "))
		m.denyInput.CursorEnd()
		return nil
	}
	if m.picker != nil {
		return nil
	}
	if m.approval != nil {
		// A paste while a question is up is the message being written:
		// it goes to the message box, and counts as typing (approvalArm).
		m.apState.typed, m.lastKey = m.now(), m.now()
	}
	if n := strings.Count(s, "\n") + 1; m.input.LineCount()+n-1 > maxInputLines {
		lines := n // as the user counts them: a last newline ends a line, it starts none
		if strings.HasSuffix(s, "\n") {
			lines--
		}
		m.print(hang(stWarn.Render("paste refused: "), "  ", fmt.Sprintf("the paste has %d lines and the input holds at most %d; put the text in a file in the workspace and ask brig to read it", lines, maxInputLines), m.width))
		return nil
	}
	empty := m.input.Value() == ""
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(tea.PasteMsg{Content: inert(s)}) // keeps the cursor, at the paste's end, in view
	if m.approval != nil {
		m.status = fmt.Sprintf("the question came while you were typing: your paste went to your message (%d characters, shown once you answer); pause, then answer", utf8.RuneCountInString(m.input.Value()))
	}
	return m.typed(empty, cmd)
}

// interrupt stops the turn (or /compact) in progress, with everything
// under it; it reports whether there was one.
func (m *Model) interrupt() bool {
	if !m.busy || m.cancel == nil {
		return false
	}
	m.cancel()
	m.status = "interrupting…"
	return true
}

// ctrlCPressed: the first Ctrl+C interrupts a running turn, as Esc does,
// or (idle) clears the input; a second one within ctrlCWindow exits.
func (m *Model) ctrlCPressed() tea.Cmd {
	if !m.ctrlC.IsZero() && m.now().Sub(m.ctrlC) < ctrlCWindow {
		m.quitting = true
		if m.cancel != nil {
			m.cancel()
		}
		if m.approval != nil {
			m.approval.answer(agent.Approval{Answer: agent.AnswerDeny})
		}
		return tea.Quit
	}
	m.ctrlC = m.now()
	if m.interrupt() {
		m.status = "interrupting… press Ctrl+C again to exit"
	} else {
		// What was typed goes into the history, so that ↑ brings back
		// what a reflex Ctrl+C cleared.
		if text := m.input.Value(); strings.TrimSpace(text) != "" {
			m.remember(text)
			m.status = ctrlCAgain + " (↑ brings back what you cleared)"
		} else {
			m.status = ctrlCAgain
		}
		m.input.Reset()
	}
	return tea.Tick(ctrlCWindow, func(time.Time) tea.Msg { return ctrlCMsg{} })
}

// approvalKey answers the pending approval.
func (m *Model) approvalKey(k tea.KeyPressMsg) tea.Cmd {
	p := m.approval
	if m.denying {
		switch k.String() {
		case "enter":
			msg := strings.TrimSpace(m.denyInput.Value())
			return m.answer(p, agent.Approval{Answer: agent.AnswerDeny, Message: msg})
		case "esc":
			m.denying = false
			return nil
		case "ctrl+v", "ctrl+shift+v":
			m.status = noClipboard
			return nil
		}
		var cmd tea.Cmd
		m.denyInput, cmd = m.denyInput.Update(k)
		return cmd
	}
	// Every key counts for the next: one within approvalArm of any key
	// (a letter, a scroll key, a paste) is typing, never an answer.
	wasTyping := m.typing()
	m.apState.typed = m.now()
	if wasTyping && typed(k) {
		// A key within approvalArm of the last one is the message the
		// user was typing when the question came: it goes on into the
		// message box, not to the question.
		return m.typeAhead(k)
	}
	switch k.String() {
	case "1", "2", "3":
		if !p.laidOut {
			m.frameText() // a key before the prompt's first frame: lay it out to know
		}
		if p.cramped {
			m.status = tooSmallToApprove
			return nil
		}
	}
	switch k.String() {
	case "1":
		return m.answer(p, agent.Approval{Answer: agent.AnswerOnce})
	case "2", "3":
		if !offersRules(p.req.Verdict) {
			m.status = "only 'allow once' is offered for this call: no rule would allow it as a whole"
			if p.req.Verdict.Call.Confirm {
				m.status = "only 'allow once' is offered: this call asks every time"
			}
			return nil
		}
		if p.rulesHidden {
			m.status = tooSmallForRules
			return nil
		}
		if k.String() == "2" {
			return m.answer(p, agent.Approval{Answer: agent.AnswerSession})
		}
		return m.answer(p, agent.Approval{Answer: agent.AnswerAlways})
	case "v":
		m.apState.expanded, m.apState.scroll = !m.apState.expanded, 0
		return nil
	case "up", "k":
		m.apState.scroll--
		return nil
	case "down", "j":
		m.apState.scroll++
		return nil
	case "pgup": // a page is the rows the view shows, so that none is skipped
		m.apState.scroll -= max(m.apState.page, 1)
		return nil
	case "pgdown", " ":
		m.apState.scroll += max(m.apState.page, 1)
		return nil
	case "home", "g":
		m.apState.scroll = 0
		return nil
	case "end", "G":
		m.apState.scroll = 1 << 30
		return nil
	case "esc":
		if m.apState.expanded { // Esc closes the whole-body view, back to the question
			m.apState.expanded, m.apState.scroll = false, 0
			return nil
		}
		return m.answer(p, agent.Approval{Answer: agent.AnswerDeny})
	case "4":
		return m.answer(p, agent.Approval{Answer: agent.AnswerDeny})
	case "5":
		m.denying = true
		m.denyInput.Reset()
		return m.denyInput.Focus()
	}
	// Enter after a pause never answers, and sends nothing unseen; any
	// other key that answers nothing is the user typing a message.
	if typed(k) && k.String() != "enter" {
		return m.typeAhead(k)
	}
	return nil
}

// typed reports whether k edits a message: a character, Enter or Backspace.
func typed(k tea.KeyPressMsg) bool {
	switch k.String() {
	case "enter", "backspace", "alt+enter", "ctrl+j":
		return true
	}
	return k.Text != ""
}

// typeAhead gives a key typed while a question is up to the message box,
// where the question found the user typing: Enter queues the message for
// the agent's next tool boundary, as it does while the agent works, and
// nothing typed answers the question (approvalArm).
func (m *Model) typeAhead(k tea.KeyPressMsg) tea.Cmd {
	m.apState.typed = m.now()
	came := "the question came while you were typing: "
	if m.apState.swapped != "" {
		came = m.apState.swapped + ": "
	}
	var cmd tea.Cmd
	switch k.String() {
	case "enter":
		text := m.input.Value()
		if strings.TrimSpace(text) == "" {
			return nil
		}
		m.input.Reset()
		m.remember(text)
		m.status = came + "your message is queued for the agent; pause, then answer"
		m.inbox.push(text) // a question is up only while a turn runs: the message waits for its next tool boundary
		return nil
	case "alt+enter", "ctrl+j":
		m.input.InsertString("\n")
	default:
		m.input, cmd = m.input.Update(k)
	}
	m.status = fmt.Sprintf(came+"your keys go to your message (%d characters, shown once you answer); pause, then answer", utf8.RuneCountInString(m.input.Value()))
	return cmd
}

// withdrawn notes that p, shown, went away without the user's answer.
func (m *Model) withdrawn(p *pending) {
	m.gone, m.goneWhat = m.now(), questionSubject(p.req)
}

// questionSubject names what a question asked about, for a notice.
func questionSubject(req agent.ApprovalRequest) string {
	if n := req.Net; n != nil {
		return inert(hostPort(n.Host, n.Port))
	}
	return inert(req.Tool)
}

// swapArm is how long a question that took the place of one withdrawn
// unanswered takes no answer (red team: a call gave up on a connection to
// a registry the user was reading about, and its next connection's
// question, to a loopback service, took the "2" meant for the first).
const swapArm = 1500 * time.Millisecond

// approvalArm is how long the keyboard must have been quiet before a key
// allows a call: a question that appears while the user is typing a
// message must not take the message's keys (a "1" or the next word) as
// its answer.
const approvalArm = 600 * time.Millisecond

// approvalShown is how long a question is on the screen before a key
// allows it, however quiet the keyboard was before it came.
const approvalShown = 300 * time.Millisecond

// typing reports whether a key was pressed less than approvalArm ago, just
// before the question appeared or since: an allowing key then only says
// the question is there. Keys that scroll or fold the question, or deny,
// do not count as typing.
func (m *Model) typing() bool {
	t := m.apState.typed
	return !t.IsZero() && m.now().Sub(t) < approvalArm
}

func (m *Model) answer(p *pending, a agent.Approval) tea.Cmd {
	if tv := m.tools[p.req.ToolUseID]; tv != nil && m.asking(p.req.ToolUseID) {
		tv.start = m.now() // the call starts now: its clock leaves the wait out
	}
	p.answer(a)
	m.approval, m.denying = nil, false
	m.denyInput.Blur()
	what := map[agent.Answer]string{
		agent.AnswerOnce: "allowed once", agent.AnswerSession: "allowed for this session",
		agent.AnswerAlways: "always allowed (" + strings.Join(p.req.Verdict.Always, ", ") + " saved to your rules for this workspace)",
		agent.AnswerDeny:   "denied",
	}[a.Answer]
	if rules := p.req.Verdict.Always; a.Answer == agent.AnswerSession && len(rules) > 0 {
		// Named as "always" names them: "bash allowed for this session"
		// read as every command allowed (new user, 2026-12-03).
		what += " (" + strings.Join(rules, ", ") + ")"
	}
	if a.Message != "" {
		what += ": " + a.Message
	}
	st := stOK
	if a.Answer == agent.AnswerDeny {
		st = stWarn
	}
	subject := p.req.Tool
	if n := p.req.Net; n != nil {
		// The question was a connection, not the call: "bash allowed
		// once" read as if the command itself had been approved.
		subject = fmt.Sprintf("%s's connection to %s:%d", p.req.Tool, n.Host, n.Port)
	}
	m.print(hang(st.Render("  ⎿ "), "    ", st.Render(inert(subject+" "+what)), m.width))
	return nil
}

// modeOf is the current mode, or the requested one before a run exists.
func (m *Model) modeOf() policy.Mode {
	if m.run != nil {
		return m.run.Policy.Mode()
	}
	if m.cfg.Initial.Mode != "" {
		return m.cfg.Initial.Mode
	}
	return policy.ModeAsk
}

// print puts finished output above the live area (into the terminal's
// scrollback), every row wrapped at word boundaries to the width (reflow)
// and converted to the terminal's colour profile. termsafe.Styled is the
// last gate: only brig's own styling gets through as escapes.
func (m *Model) print(s string) {
	m.out(downsample(termsafe.Styled(reflow(s, m.width)), m.profile))
}

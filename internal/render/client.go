package render

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"brig/internal/textbusy"
)

// answerBound is how long the Client waits for one answer before it takes
// the helper for hung, kills it and renders plainly from then on. It guards
// against a hang; a render takes well under a millisecond.
const answerBound = 10 * time.Second

// Client renders through a helper process speaking Request and Response
// as JSON lines on its standard input and output. The helper starts on
// first use (or at Start, which the TUI calls in the background once its
// banner is up, so that the first message does not wait for it). Once the helper
// fails — it cannot start, it crashed, it hung — the Client logs why once
// and renders as Plain for the rest of the session: a rendering failure
// never costs the user the text. Safe for concurrent use.
type Client struct {
	command func() (*exec.Cmd, error)
	log     *slog.Logger

	mu     sync.Mutex
	cmd    *exec.Cmd
	in     *os.File // the helper's standard input
	out    *os.File // its standard output
	enc    *json.Encoder
	dec    *json.Decoder
	stderr *tail // what the helper said on its standard error
	failed error
}

// NewClient returns a Client whose helper command is command's (a fresh
// *exec.Cmd each time it is called; its standard input and output are the
// Client's to set). An error from command (the helper's program could
// not be made ready) is a failure like any other: the Client renders
// plainly from then on.
func NewClient(command func() (*exec.Cmd, error), log *slog.Logger) *Client {
	return &Client{command: command, log: log}
}

// Start starts the helper unless it runs or has failed.
func (c *Client) Start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.startLocked()
}

func (c *Client) startLocked() error {
	if c.failed != nil {
		return c.failed
	}
	if c.cmd != nil {
		return nil
	}
	cmd, err := c.command()
	if err != nil {
		return c.fail(fmt.Errorf("the renderer's program: %w", err))
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return c.fail(fmt.Errorf("a pipe to the renderer: %w", err))
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return c.fail(fmt.Errorf("a pipe from the renderer: %w", err))
	}
	c.stderr = &tail{}
	// brig writes the renderer's program as the TUI starts, while the
	// supervisor clones its first jail children: an exec refused with
	// ETXTBSY for that instant is tried again (textbusy), each time with
	// a new Cmd (one starts once).
	tries := 0
	err = textbusy.Retry(func() error {
		if tries++; tries > 1 {
			if cmd, err = c.command(); err != nil {
				return err
			}
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, c.stderr
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL // it never outlives brig
		return cmd.Start()
	}, nil)
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return c.fail(fmt.Errorf("start the renderer: %w", err))
	}
	c.cmd, c.in, c.out = cmd, inW, outR
	c.enc, c.dec = json.NewEncoder(inW), json.NewDecoder(bufio.NewReader(outR))
	return nil
}

// fail records err as the reason to render plainly from now on, stops the
// helper, and returns err. Called with mu held.
func (c *Client) fail(err error) error {
	c.failed = err
	c.stopLocked()
	var said string
	if c.stderr != nil {
		said = c.stderr.String()
	}
	c.log.Warn("the renderer failed; text is shown without styling from now on", "err", err, "stderr", said)
	return err
}

// ask sends req and waits for its answer.
func (c *Client) ask(req Request) (Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.startLocked(); err != nil {
		return Response{}, err
	}
	if err := c.enc.Encode(req); err != nil {
		return Response{}, c.fail(fmt.Errorf("send to the renderer: %w", err))
	}
	_ = c.out.SetReadDeadline(time.Now().Add(answerBound))
	var resp Response
	if err := c.dec.Decode(&resp); err != nil {
		return Response{}, c.fail(fmt.Errorf("the renderer's answer: %w", err))
	}
	if resp.Err != "" {
		return resp, errors.New(resp.Err)
	}
	return resp, nil
}

// Markdown renders through the helper, or plainly when it failed.
func (c *Client) Markdown(style string, width int, src string) (string, error) {
	resp, err := c.ask(Request{Markdown: &MarkdownRequest{Style: style, Width: width, Src: src}})
	if err != nil {
		return Plain{}.Markdown(style, width, src)
	}
	return resp.Text, nil
}

// Code colours through the helper; nil when it failed.
func (c *Client) Code(path, code string) []Token {
	resp, err := c.ask(Request{Code: &CodeRequest{Path: path, Code: code}})
	if err != nil {
		return nil
	}
	return resp.Tokens
}

// errClosed is why a closed Client renders plainly.
var errClosed = errors.New("the renderer was closed")

// Close stops the helper; the Client renders plainly from then on.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopLocked()
	if c.failed == nil {
		c.failed = errClosed
	}
	return nil
}

func (c *Client) stopLocked() {
	if c.cmd == nil {
		return
	}
	c.in.Close() // the helper ends on EOF
	_ = c.cmd.Process.Kill()
	_ = c.cmd.Wait()
	c.out.Close()
	c.cmd = nil
}

// tailLimit is how much of the helper's standard error is kept.
const tailLimit = 4 << 10

// tail keeps the last tailLimit bytes written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailLimit {
		t.buf = t.buf[len(t.buf)-tailLimit:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

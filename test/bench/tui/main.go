// Command tui measures the interactive UI in a real pseudo-terminal: the
// time from launching brig to an interactive prompt (the input box is drawn
// and takes keys), the time until the banner is printed (provider, policy,
// session and the sandbox checks ready), and brig's memory after a long
// scripted session (many streamed answers and jailed tool calls) in one
// UI.
//
//	go run ./test/bench/tui -runs 20 -turns 100
package main

import (
	"brig/test/brigbin"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"brig/test/fakeprovider"
)

func main() {
	runs := flag.Int("runs", 20, "launches to time (median and p95 reported)")
	turns := flag.Int("turns", 100, "model responses in the long session (each with a tool call)")
	flag.Parse()
	if err := run(*runs, *turns); err != nil {
		fmt.Fprintln(os.Stderr, "tui bench:", err)
		os.Exit(1)
	}
}

func run(runs, turns int) error {
	bin, cleanup, err := brigbin.Build()
	if err != nil {
		return err
	}
	defer cleanup()
	ws, err := os.MkdirTemp("/var/tmp", "brig-bench-tui-ws-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	// The home directory lies beside the workspace, not in it: brig
	// refuses a workspace that holds the home directory.
	home, err := os.MkdirTemp("/var/tmp", "brig-bench-tui-home-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		return err
	}

	var prompt, banner []time.Duration
	for range runs {
		srv, err := fakeprovider.Start(fakeprovider.Script{})
		if err != nil {
			return err
		}
		t, err := launch(bin, ws, home, srv.URL())
		if err != nil {
			srv.Close()
			return err
		}
		prompt = append(prompt, t.prompt)
		banner = append(banner, t.banner)
		err = t.quit()
		srv.Close()
		if err != nil {
			return err
		}
	}
	fmt.Printf("launch to interactive prompt   median %v  p95 %v  (%d runs; target < 100ms)\n", pct(prompt, 50), pct(prompt, 95), runs)
	fmt.Printf("launch to banner (agent ready) median %v  p95 %v\n", pct(banner, 50), pct(banner, 95))

	// A long session: one prompt, turns responses of Markdown and a jailed
	// command each.
	var script fakeprovider.Script
	para := strings.Repeat("Some **Markdown** with `code` and a [link](https://example.com). ", 12)
	for i := range turns {
		script.Turns = append(script.Turns, fakeprovider.Turn{
			Text:      fmt.Sprintf("## Step %d\n\n%s\n\n- item one\n- item two\n\n```go\nfunc step%d() {}\n```\n", i, para, i),
			ToolCalls: []fakeprovider.ToolCall{{Name: "bash", Input: json.RawMessage(fmt.Sprintf(`{"command":"seq 1 %d"}`, 40+i))}},
		})
	}
	script.Turns = append(script.Turns, fakeprovider.Turn{Text: "LONG-SESSION-DONE"})
	srv, err := fakeprovider.Start(script)
	if err != nil {
		return err
	}
	defer srv.Close()
	t, err := launch(bin, ws, home, srv.URL(), "--mode", "auto")
	if err != nil {
		return err
	}
	start := time.Now()
	t.write("run the long session\r")
	if err := t.waitFor("LONG-SESSION-DONE", 5*time.Minute); err != nil {
		t.kill()
		return err
	}
	wall := time.Since(start)
	rss, hwm := memory(t.cmd.Process.Pid)
	if err := t.quit(); err != nil {
		return err
	}
	fmt.Printf("long session: %d responses, %d jailed commands, %d bytes drawn in %v; brig RSS after it %d MiB (peak %d MiB)\n",
		turns+1, turns, t.bytes(), wall.Round(time.Millisecond), rss/1024, hwm/1024)
	return nil
}

// term is brig on a pseudo-terminal.
type term struct {
	cmd    *exec.Cmd
	master *os.File
	mu     sync.Mutex
	out    bytes.Buffer
	start  time.Time
	prompt time.Duration
	banner time.Duration
	done   chan error
}

// launch starts brig on a new 100x40 pty and waits for its prompt and its
// banner.
func launch(bin, ws, home, url string, args ...string) (*term, error) {
	master, slave, err := openPTY(100, 40)
	if err != nil {
		return nil, err
	}
	defer slave.Close()
	cmd := exec.Command(bin, append([]string{"--model", "claude-sonnet-4-5"}, args...)...)
	cmd.Dir = ws
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home, "TERM=xterm-256color", "LANG=C.UTF-8", "ANTHROPIC_API_KEY=sk-ant-bench", "ANTHROPIC_BASE_URL=" + url}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	t := &term{cmd: cmd, master: master, done: make(chan error, 1)}
	t.start = time.Now()
	if err := cmd.Start(); err != nil {
		master.Close()
		return nil, err
	}
	go t.read()
	go func() { t.done <- cmd.Wait() }()
	if err := t.waitFor("sk brig…", 10*time.Second); err != nil {
		t.kill()
		return nil, err
	}
	t.prompt = time.Since(t.start)
	if err := t.waitFor("sandbox", 10*time.Second); err != nil {
		t.kill()
		return nil, err
	}
	t.banner = time.Since(t.start)
	return t, nil
}

func (t *term) read() {
	buf := make([]byte, 64<<10)
	for {
		n, err := t.master.Read(buf)
		t.mu.Lock()
		t.out.Write(buf[:n])
		t.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (t *term) bytes() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.out.Len()
}

func (t *term) write(s string) { _, _ = t.master.WriteString(s) }

// waitFor polls what brig drew for s (1 ms steps: the figure's resolution).
func (t *term) waitFor(s string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		t.mu.Lock()
		ok := bytes.Contains(t.out.Bytes(), []byte(s))
		t.mu.Unlock()
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			t.mu.Lock()
			defer t.mu.Unlock()
			tail := t.out.Bytes()[max(0, t.out.Len()-2000):]
			return fmt.Errorf("brig never drew %q; last output:\n%q", s, tail)
		}
		time.Sleep(time.Millisecond)
	}
}

// quit presses Ctrl+C twice and waits for brig to exit.
func (t *term) quit() error {
	t.write("\x03")
	time.Sleep(50 * time.Millisecond) // two separate presses, not one read
	t.write("\x03")
	select {
	case err := <-t.done:
		t.master.Close()
		return err
	case <-time.After(15 * time.Second):
		t.kill()
		return errors.New("brig did not exit after Ctrl+C twice")
	}
}

func (t *term) kill() {
	_ = t.cmd.Process.Kill()
	t.master.Close()
}

// memory is VmRSS and VmHWM of pid in KiB.
func memory(pid int) (rss, hwm int64) {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(data), "\n") {
		var v int64
		if _, err := fmt.Sscanf(l, "VmRSS: %d kB", &v); err == nil {
			rss = v
		}
		if _, err := fmt.Sscanf(l, "VmHWM: %d kB", &v); err == nil {
			hwm = v
		}
	}
	return rss, hwm
}

// openPTY opens a pseudo-terminal pair of the given size.
func openPTY(cols, rows int) (master, slave *os.File, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("unlockpt: %w", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("ptsname: %w", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	if err := unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)}); err != nil {
		m.Close()
		s.Close()
		return nil, nil, err
	}
	return m, s, nil
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))].Round(100 * time.Microsecond)
}

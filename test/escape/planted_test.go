package escape

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"brig/test/fakeprovider"
)

// ---------------------------------------------------------------------------
// planted: links and files a call leaves where the supervisor acts later
// (the toolchain cache it prepares before every call), and state a deleted
// repository leaves for the next one at the same path. Detected by the
// victims outside (content, size, mode, entries) and by the next call
// working.

// victimState is what must not change about the planted links' targets.
type victimState map[string]string

func (e *env) victims() victimState {
	v := victimState{}
	for _, p := range []string{"home/.bashrc", "home/.config/brig/config.toml", "other/config.toml"} {
		fi, err := os.Lstat(e.path(p))
		if err != nil {
			v[p] = "missing"
			continue
		}
		b, _ := os.ReadFile(e.path(p))
		v[p] = fmt.Sprintf("%q size=%d mode=%v", b, fi.Size(), fi.Mode())
	}
	for _, d := range []string{"other", "home/.config/other"} {
		entries, _ := os.ReadDir(e.path(d))
		var names []string
		for _, en := range entries {
			names = append(names, en.Name())
		}
		v[d+"/"] = strings.Join(names, ",")
	}
	return v
}

// plantScript replaces, from inside a call, every entry of its toolchain
// cache that the supervisor creates, rewrites or removes before the next
// call: links to brig's config and the user's .bashrc, a link to another
// directory, a file and a FIFO where directories belong, a cargo config.
const plantScript = `set -u
c=$(dirname "$npm_config_userconfig")
ln -sfn "$ESC_ROOT/home/.bashrc" "$c/npmrc"
ln -sfn "$ESC_ROOT/home/.config/brig/config.toml" "$c/go.env"
rm -rf "$c/go-build"; ln -sfn "$ESC_ROOT/home/.config/other" "$c/go-build"
rm -rf "$c/npm"; echo planted > "$c/npm"
rm -rf "$c/pip"; mkfifo "$c/pip"
rm -rf "$c/xdg"; ln -sfn "$ESC_ROOT/other/config.toml" "$c/xdg"
rm -rf "$c/cargo"; ln -sfn "$ESC_ROOT/other" "$c/cargo"
echo PLANTED "$c"`

// checkScript is the next call: the cache must be brig's again and usable.
const checkScript = `c=$(dirname "$npm_config_userconfig")
test -f "$npm_config_userconfig" && ! test -L "$npm_config_userconfig" && ! test -s "$npm_config_userconfig" &&
test -f "$GOENV" && ! test -L "$GOENV" &&
for d in "$GOCACHE" "$npm_config_cache" "$PIP_CACHE_DIR" "$XDG_CACHE_HOME" "$CARGO_HOME"; do test -d "$d" && ! test -L "$d" || exit 1; done &&
! test -e "$CARGO_HOME/config.toml" && echo built > "$GOCACHE/obj" && echo CACHE-OK`

func plantedCases() []escCase {
	return []escCase{
		{family: "planted", name: "links and wrong types in the toolchain cache", passes: inNoNS,
			control: func(t *testing.T, e *env) {
				// The call can plant them (its cache is writable): the
				// links exist afterwards and point outside.
				e.mkfile("other/config.toml", "victim = true\n", 0o640)
				res := e.sh(plantScript)
				dir := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(res.Stdout)), "PLANTED"))
				if target, err := os.Readlink(filepath.Join(dir, "npmrc")); err != nil || target != e.path("home/.bashrc") {
					controlFail(t, "the call could not plant npmrc -> ~/.bashrc in its cache (%q, %v): %s", target, err, output(res))
				}
				if target, err := os.Readlink(filepath.Join(dir, "cargo")); err != nil || target != e.path("other") {
					controlFail(t, "the call could not plant cargo -> another project (%q, %v)", target, err)
				}
			},
			attack: func(t *testing.T, e *env) {
				e.mkfile("other/config.toml", "victim = true\n", 0o640)
				before := e.victims()
				e.sh(plantScript)
				for i := range 2 { // the next calls prepare the cache again
					res := e.sh(checkScript)
					if !strings.Contains(string(res.Stdout), "CACHE-OK") {
						t.Errorf("call %d after the plant could not use its cache (exit %d): %s", i+2, res.ExitCode, output(res))
					}
				}
				after := e.victims()
				for k, v := range before {
					if after[k] != v {
						escaped(t, "the supervisor acted on %s through a link a call planted in its cache: was %s, now %s", k, v, after[k])
					}
				}
			}},
		{family: "planted", name: "cache of a deleted repository at the same path", passes: inNoNS,
			control: func(t *testing.T, e *env) {
				// The same repository keeps its build cache from call to call.
				e.sh(`echo built > "$GOCACHE/marker"`)
				res := e.sh(`cat "$GOCACHE/marker"`)
				if !strings.Contains(string(res.Stdout), "built") {
					controlFail(t, "the build cache did not persist between two calls of one repository: %s", output(res))
				}
			},
			attack: func(t *testing.T, e *env) {
				e.sh(`echo built > "$GOCACHE/marker"; mkdir -p "$CARGO_HOME" && printf '[build]\nrustc-wrapper = "%s/wrap"\n' "$PWD" > "$CARGO_HOME/config.toml"; echo CACHE "$GOCACHE"`)
				// The repository is deleted; another is cloned at its path.
				removeAll(e.ws)
				e.mkfile("ws/src/main.go", "package main\n", 0o644)
				e.mkdir("ws/.git")
				res := e.sh(`test -e "$GOCACHE/marker" && echo MARKER-SEEN; test -e "$CARGO_HOME/config.toml" && echo CARGO-CONFIG-SEEN; echo DONE`)
				if !strings.Contains(string(res.Stdout), "DONE") {
					t.Fatalf("the call in the new repository did not run: %s", output(res))
				}
				if strings.Contains(string(res.Stdout), "SEEN") {
					escaped(t, "a repository cloned at a deleted one's path got its cache: %s", res.Stdout)
				}
				entries, _ := os.ReadDir(e.path("cache"))
				if len(entries) != 1 {
					escaped(t, "the deleted repository's cache was left behind: %v", entries)
				}
			}},
	}
}

// TestPlantedProgramsOnPath: programs named like everything the
// supervisor could conceivably start, planted in a directory on PATH
// inside the workspace (an activated .venv/bin), never run outside the
// jail, whichever brig command starts, with its output to a pipe and on a
// terminal inside tmux (TMUX set, no COLORTERM: where a colour library ran
// `tmux info` from PATH, with brig's environment, keys included, before
// brig's copy of colorprofile): each writes a canary outside the
// workspace, which stays absent, while the same program run directly
// (the control) does write it. Runs as root and, through TestUnprivileged,
// as uid 65534.
func TestPlantedProgramsOnPath(t *testing.T) {
	t.Parallel()
	root, err := os.MkdirTemp("/var/tmp", "brig-escape-path-")
	if err != nil {
		t.Fatal(err)
	}
	root, _ = filepath.EvalSymlinks(root)
	t.Cleanup(func() { removeAll(root) })
	ws, home, canary := filepath.Join(root, "ws"), filepath.Join(root, "home"), filepath.Join(root, "canary")
	bin := filepath.Join(ws, ".venv", "bin")
	for _, d := range []string{bin, home, canary, filepath.Join(ws, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	names := []string{"true", "false", "sh", "bash", "dash", "env", "git", "rg", "go", "gofmt", "node", "npm", "npx", "python3", "python", "cargo", "rustc",
		"make", "ls", "cat", "echo", "id", "uname", "getent", "ps", "sudo", "setpriv", "unshare", "newuidmap", "newgidmap", "systemd-run",
		"systemctl", "dbus-send", "xdg-open", "ssh", "gpg", "security", "pass", "brig", "ldconfig", "mount", "ip", "tmux", "tput", "infocmp", "stty",
		"xclip", "xsel", "wl-paste", "wl-copy"}
	for _, n := range names {
		// Only absolute paths inside: the planted programs must not
		// find each other on PATH.
		script := "#!/bin/sh\n{ echo \"ran $0 $*\"; /usr/bin/env; } > " + filepath.Join(canary, n) + " 2>/dev/null\nexit 0\n"
		if err := os.WriteFile(filepath.Join(bin, n), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "LANG=C.UTF-8", "ANTHROPIC_API_KEY=sk-ant-path-canary"}
	// Control: looked up on this PATH, the planted programs run. (A file
	// just written can be "busy" for a moment: a fork by another test
	// running in parallel may hold the writer's descriptor until its
	// exec closes it. That is retried; nothing else is.)
	for try := 0; ; try++ {
		ctl := exec.Command("true")
		ctl.Env = env
		ctl.Path = filepath.Join(bin, "true")
		if err = ctl.Run(); !errors.Is(err, syscall.ETXTBSY) || try == 50 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil || !exists(filepath.Join(canary, "true")) {
		t.Fatalf("CONTROL FAILED: the planted true did not run when started directly: %v", err)
	}
	if entries, _ := os.ReadDir(canary); len(entries) != 1 {
		t.Fatalf("CONTROL FAILED: the planted true ran others: %v", entries)
	}
	if err := os.Remove(filepath.Join(canary, "true")); err != nil {
		t.Fatal(err)
	}

	srv, err := fakeprovider.Start(fakeprovider.Script{Turns: []fakeprovider.Turn{
		{ToolCalls: []fakeprovider.ToolCall{{Name: "bash", Input: json.RawMessage(`{"command":"true; git status; echo hi"}`)}}},
		{Text: "done"},
		{ToolCalls: []fakeprovider.ToolCall{{Name: "bash", Input: json.RawMessage(`{"command":"true; git status; echo hi"}`)}}},
		{Text: "done"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	commands := [][]string{
		{"sandbox", "--", "echo", "hi"},
		{"sandbox", "--explain", "--", "true"},
		{"sandbox", "--explain=json", "--", "true"},
		{"doctor"},
		{"cache", "list"},
		{"policy", "check", "--", "true && git status"},
		{"--model", "claude-sonnet-4-5", "-p", "run true", "--mode", "auto", "--yes"},
	}
	check := func(how string, args []string) {
		t.Helper()
		entries, _ := os.ReadDir(canary)
		for _, en := range entries {
			b, _ := os.ReadFile(filepath.Join(canary, en.Name()))
			t.Errorf("ESCAPE: `brig %s` (%s) ran the planted %s outside the jail (as %s):\n%s", strings.Join(args, " "), how, en.Name(), who(), b)
			os.Remove(filepath.Join(canary, en.Name()))
		}
	}
	for _, args := range commands {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, brigBin, args...)
		cmd.Dir = ws
		cmd.Env = append(env, "ANTHROPIC_BASE_URL="+srv.URL())
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if ctx.Err() != nil {
			t.Errorf("`brig %s` (output to a pipe) did not end within a minute", strings.Join(args, " "))
		}
		cancel()
		check("output to a pipe", args)
		t.Logf("brig %s: %v\n%s", strings.Join(args, " "), err, clip(out.Bytes()))
	}
	// On a terminal, inside tmux (TMUX set, no COLORTERM): where the
	// terminal libraries look for colours, and where a library would run
	// `tmux info` from PATH. The TUI too, until its prompt shows.
	onTerminal := [][]string{{"--help"}, {"doctor"}, {"sandbox", "--", "echo", "hi"}, {"cache", "list"}, {"policy", "check", "--", "true"}, commands[len(commands)-1], {"--model", "claude-sonnet-4-5"}}
	for _, args := range onTerminal {
		p := openPTY(t)
		if err := unix.IoctlSetWinsize(int(p.master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 120}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, brigBin, args...)
		cmd.Dir = ws
		cmd.Env = append(env, "ANTHROPIC_BASE_URL="+srv.URL(), "TERM=xterm-256color", "TMUX=/tmp/tmux-planted/default,1,0")
		cmd.Stdin, cmd.Stdout, cmd.Stderr = p.slave, p.slave, p.slave
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The interactive TUI (no -p, no subcommand) is stopped once its
		// banner shows; every other command ends by itself.
		tui := args[0] == "--model" && !slices.Contains(args, "-p")
		for tui && ctx.Err() == nil && !p.has("workspace") {
			time.Sleep(20 * time.Millisecond)
		}
		if tui {
			// Ctrl+V, which the input library would answer by running
			// xclip (or xsel, wl-paste) from PATH: brig says to paste
			// with the terminal instead. Waited for until that shows
			// or a planted program ran.
			if p.has("clipboard") {
				t.Fatal("the TUI's screen says clipboard before Ctrl+V; this check cannot tell")
			}
			if _, err := p.master.Write([]byte{0x16}); err != nil {
				t.Fatal(err)
			}
			for ctx.Err() == nil && !p.has("clipboard") {
				if entries, _ := os.ReadDir(canary); len(entries) > 0 {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			_ = cmd.Process.Signal(syscall.SIGTERM)
		}
		err := cmd.Wait()
		if ctx.Err() != nil {
			t.Errorf("`brig %s` on a terminal did not end within a minute (the TUI: its banner never showed)", strings.Join(args, " "))
		}
		cancel()
		check("on a terminal in tmux", args)
		p.mu.Lock()
		t.Logf("brig %s on a terminal: %v\n%s", strings.Join(args, " "), err, clip(p.seen))
		p.mu.Unlock()
	}
}

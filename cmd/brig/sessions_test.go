package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"brig/agent/provider"
	"brig/internal/session"
	"brig/internal/xdg"
	"brig/policy"
)

// sessionsFixture is a git workspace, a home whose XDG state holds two
// sessions of that workspace and one of another, and the process
// environment to run the commands in.
func sessionsFixture(t *testing.T) (pe procEnv, out, errOut *bytes.Buffer, store *session.Store, mine, other *session.Session) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
	for _, d := range []string{ws + "/.git", ws + "/sub", home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut = &bytes.Buffer{}, &bytes.Buffer{}
	pe = procEnv{Cwd: ws + "/sub", Home: home, Env: []string{"HOME=" + home, "XDG_STATE_HOME=" + root + "/state"}, Stdout: out, Stderr: errOut}
	store = session.NewStore(xdg.Resolve(pe.Env, home).State)
	ctx := context.Background()
	mk := func(workspace, prompt string) *session.Session {
		s, err := store.Create(ctx, session.Header{Workspace: workspace, Provider: provider.Anthropic, Model: "claude-sonnet-4-5", Mode: policy.ModeAsk})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		err = s.Append(ctx,
			session.DisplayRecord(session.Display{Kind: session.DisplayUser, Text: prompt}),
			session.MessageRecord(provider.Message{Role: provider.User, Content: []provider.Block{provider.Text(prompt)}}),
			session.DisplayRecord(session.Display{Kind: session.DisplayToolCall, Tool: "bash", Text: "$ go test ./..."}),
			session.DisplayRecord(session.Display{Kind: session.DisplayToolResult, Tool: "bash", Text: "exit 1", IsError: true}),
			session.DisplayRecord(session.Display{Kind: session.DisplayAssistant, Text: "The test fails.\nHere is why."}),
			session.UsageRecord("claude-sonnet-4-5", provider.Usage{Input: 1000, Output: 200}, 0.0123))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	mine = mk(ws, "why does the test fail?")
	other = mk(root+"/elsewhere", "another project")
	return pe, out, errOut, store, mine, other
}

func TestSessionsFlagsReachTheOptions(t *testing.T) {
	var lo *sessionsListOptions
	cmd := newSessionsListCmd(func(_ context.Context, o *sessionsListOptions) error { lo = o; return nil })
	cmd.SetArgs([]string{"--all", "--json", "--workspace", "/x"})
	if err := cmd.Execute(); err != nil || !lo.All || !lo.JSON || lo.Workspace != "/x" {
		t.Fatalf("list options %+v, %v", lo, err)
	}
	var so *sessionsShowOptions
	show := newSessionsShowCmd(func(_ context.Context, o *sessionsShowOptions) error { so = o; return nil })
	show.SetArgs([]string{"2026-11-22-ab12cd", "--json"})
	if err := show.Execute(); err != nil || so.ID != "2026-11-22-ab12cd" || !so.JSON {
		t.Fatalf("show options %+v, %v", so, err)
	}
	var ro *sessionsRmOptions
	rm := newSessionsRmCmd(func(_ context.Context, o *sessionsRmOptions) error { ro = o; return nil })
	rm.SetArgs([]string{"2026-11-22-ab12cd"})
	if err := rm.Execute(); err != nil || ro.ID != "2026-11-22-ab12cd" {
		t.Fatalf("rm options %+v, %v", ro, err)
	}
	for _, c := range []*cobra.Command{newSessionsShowCmd(nil), newSessionsRmCmd(nil)} {
		c.SetArgs(nil)
		c.SetOut(&bytes.Buffer{})
		c.SetErr(&bytes.Buffer{})
		if err := c.Execute(); err == nil {
			t.Errorf("%s without an id succeeded", c.Name())
		}
	}
}

func TestSessionsList(t *testing.T) {
	pe, out, errOut, store, mine, other := sessionsFixture(t)
	ctx := context.Background()
	if err := runSessionsList(ctx, &sessionsListOptions{procEnv: pe}); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if !strings.Contains(text, mine.ID()) || strings.Contains(text, other.ID()) || !strings.Contains(text, "why does the test fail?") || !strings.Contains(text, "$0.0123") {
		t.Fatalf("list of this workspace (from a subdirectory):\n%s", text)
	}
	out.Reset()
	if err := runSessionsList(ctx, &sessionsListOptions{All: true, JSON: true, procEnv: pe}); err != nil {
		t.Fatal(err)
	}
	var l sessionList
	if err := json.Unmarshal(out.Bytes(), &l); err != nil || len(l.Sessions) != 2 || l.Workspace != "" {
		t.Fatalf("list --all --json: %v\n%s", err, out)
	}

	// A corrupt file is named on stderr and skipped; the rest lists.
	bad := store.Path("2026-01-01-badbad")
	if err := os.WriteFile(bad, []byte("{\"kind\":\"header\"}\nnot json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := runSessionsList(ctx, &sessionsListOptions{All: true, procEnv: pe}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), bad) || !strings.Contains(out.String(), mine.ID()) {
		t.Fatalf("corrupt file: stderr %q, stdout %q", errOut, out)
	}

	// A workspace with no sessions says how to see the others.
	empty := filepath.Join(filepath.Dir(pe.Cwd), "..", "empty")
	os.MkdirAll(empty, 0o755)
	out.Reset()
	if err := runSessionsList(ctx, &sessionsListOptions{Workspace: empty, procEnv: pe}); err != nil || !strings.Contains(out.String(), "--all") {
		t.Fatalf("empty workspace: %v %q", err, out)
	}
}

func TestSessionsShow(t *testing.T) {
	pe, out, _, _, mine, _ := sessionsFixture(t)
	ctx := context.Background()
	if err := runSessionsShow(ctx, &sessionsShowOptions{ID: mine.ID(), procEnv: pe}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"> why does the test fail?", "• bash $ go test ./...", "1 message, 1 model call, 0 compactions", "  ✗ exit 1", "The test fails.\nHere is why.", "mode ask", "1000 in, 200 out", "$0.0123"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	out.Reset()
	if err := runSessionsShow(ctx, &sessionsShowOptions{ID: mine.ID(), JSON: true, procEnv: pe}); err != nil {
		t.Fatal(err)
	}
	var st session.State
	if err := json.Unmarshal(out.Bytes(), &st); err != nil || len(st.Display) != 4 || len(st.Messages) != 1 || st.Cost != 0.0123 {
		t.Fatalf("show --json: %v %+v", err, st)
	}
	for _, bad := range []string{"../../etc/passwd", "2026-11-22-ab12cd/..", "x"} {
		err := runSessionsShow(ctx, &sessionsShowOptions{ID: bad, procEnv: pe})
		if err == nil || !strings.Contains(err.Error(), "invalid session id") {
			t.Errorf("show %q = %v", bad, err)
		}
	}
	if err := runSessionsShow(ctx, &sessionsShowOptions{ID: "2020-01-01-000000", procEnv: pe}); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("show of a missing session = %v", err)
	}
}

func TestSessionsRm(t *testing.T) {
	pe, out, _, store, mine, other := sessionsFixture(t)
	ctx := context.Background()
	if err := runSessionsRm(ctx, &sessionsRmOptions{ID: mine.ID(), procEnv: pe}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "removed session "+mine.ID()) {
		t.Fatalf("rm said %q", out)
	}
	list, _, _ := store.List(ctx, session.Filter{})
	if len(list) != 1 || list[0].ID != other.ID() {
		t.Fatalf("after rm: %+v", list)
	}
	if err := runSessionsRm(ctx, &sessionsRmOptions{ID: mine.ID(), procEnv: pe}); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("second rm = %v", err)
	}
	if err := runSessionsRm(ctx, &sessionsRmOptions{ID: "../index.json", procEnv: pe}); err == nil || !strings.Contains(err.Error(), "invalid session id") {
		t.Fatalf("rm of a bad id = %v", err)
	}
}

// TestSessionsRmKeepsWhatUndoCouldPutBack (new user, 2026-12-03): brig
// sessions rm took away the undo of the session's calls without a word.
// A session with a call undo would still put back is kept unless --force,
// and the refusal says how to undo first; a session with none goes.
func TestSessionsRmKeepsWhatUndoCouldPutBack(t *testing.T) {
	pe, out, _, _, mine, other := sessionsFixture(t)
	ctx := context.Background()
	ws := strings.TrimSuffix(pe.Cwd, "/sub")
	store, _, err := openUndo(dirsFor(pe).State, ws)
	if err != nil {
		t.Fatal(err)
	}
	p, err := store.Before(ctx, mine.ID(), "toolu_1", "bash", []string{ws})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ws+"/made.txt", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := p.After(ctx); err != nil {
		t.Fatal(err)
	}
	store.Close()

	err = runSessionsRm(ctx, &sessionsRmOptions{ID: mine.ID(), procEnv: pe})
	if err == nil || !strings.Contains(err.Error(), "has 1 call brig undo can still put back") || !strings.Contains(err.Error(), "brig undo --session "+mine.ID()+" first, or brig sessions rm --force") {
		t.Fatalf("rm of a session with an undoable call: %v", err)
	}
	if _, err := os.Stat(sessionStore(pe).Path(mine.ID())); err != nil {
		t.Fatalf("the refused rm removed the session: %v", err)
	}
	if err := runSessionsRm(ctx, &sessionsRmOptions{ID: mine.ID(), Force: true, procEnv: pe}); err != nil {
		t.Fatalf("rm --force: %v", err)
	}
	if !strings.Contains(out.String(), "removed session "+mine.ID()+" (workspace "+ws+")") {
		t.Errorf("rm said %q", out)
	}
	// Control: a session with no call to undo goes at once.
	if err := runSessionsRm(ctx, &sessionsRmOptions{ID: other.ID(), procEnv: pe}); err != nil {
		t.Errorf("rm of a session with nothing to undo: %v", err)
	}
}

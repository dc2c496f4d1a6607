package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"brig/jail"
	"brig/policy"
	"brig/supervisor"
	"brig/tools"
	"brig/tools/textfile"
)

// The test binary is also the jail child, with the native tools.
func TestMain(m *testing.M) {
	if jail.IsChild() {
		// read_file is served by init itself where commands are
		// (jail/direct.go), as in brig.
		jail.ChildMain(tools.JailTools(), jail.FileTool{Name: textfile.Name, Run: textfile.Run})
	}
	os.Exit(m.Run())
}

// recorder is an Approver that answers from a script and records requests.
type recorder struct {
	mu      sync.Mutex
	answers []Approval
	asked   []ApprovalRequest
	// think, when set, is how long each answer takes, as a user's does.
	think time.Duration
}

func (r *recorder) Approve(ctx context.Context, req ApprovalRequest) (Approval, error) {
	if r.think > 0 {
		select {
		case <-time.After(r.think):
		case <-ctx.Done():
			return Approval{}, ctx.Err()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, req)
	if len(r.answers) == 0 {
		return Approval{Answer: AnswerDeny, Message: "script exhausted"}, nil
	}
	a := r.answers[0]
	r.answers = r.answers[1:]
	return a, nil
}

type execEnv struct {
	ex   *Executor
	ap   *recorder
	ws   string
	home string
}

// newExecEnv builds a real supervisor and policy over a workspace kept
// outside /tmp (the jail's /tmp is private).
func newExecEnv(t testing.TB, mode policy.Mode) *execEnv {
	t.Helper()
	return newExecEnvConfig(t, mode, "")
}

// newExecEnvConfig is newExecEnv with a global config file's content.
func newExecEnvConfig(t testing.TB, mode policy.Mode, config string) *execEnv {
	t.Helper()
	if jail.LandlockABI() < 1 {
		t.Skip("Landlock unavailable on this kernel")
	}
	sup, err := supervisor.New(context.Background(), supervisor.Options{Executable: os.Args[0], Prewarm: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sup.Close)
	root, err := os.MkdirTemp("/var/tmp", "brig-agent-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	root, _ = filepath.EvalSymlinks(root)
	ws, home := root+"/ws", root+"/home"
	for _, d := range []string{ws + "/.git/hooks", home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(ws+"/a.txt", []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := policy.FilesFor(root+"/config", ws)
	if config != "" {
		if err := os.MkdirAll(root+"/config", 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(files.Global, []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	loaded, err := policy.Load(files)
	if err != nil {
		t.Fatal(err)
	}
	lim := jail.DefaultLimits()
	lim.Timeout = 20 * time.Second
	pol, err := policy.New(ws, loaded, mode, policy.Machine{
		Home: home, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + home}, Namespaces: sup.Namespaces(),
		CacheRoot: root + "/cache", BrigDirs: []string{root + "/config"}, Limits: lim,
	})
	if err != nil {
		t.Fatal(err)
	}
	ap := &recorder{}
	return &execEnv{ex: &Executor{Registry: tools.NewRegistry(), Policy: pol, Runner: sup, Approver: ap}, ap: ap, ws: ws, home: home}
}

func args(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestExecutorReadsWithoutAsking(t *testing.T) {
	e := newExecEnv(t, policy.ModeAsk)
	o := e.ex.Execute(context.Background(), "t1", "read_file", args(t, map[string]any{"path": "a.txt"}), nil)
	if o.Err != nil || o.Result.IsError || !strings.Contains(o.Result.Text, "hello") {
		t.Fatalf("read_file: %+v", o)
	}
	if len(e.ap.asked) != 0 {
		t.Fatalf("a workspace read asked the user: %+v", e.ap.asked)
	}
	if o.Grant == nil || len(o.Grant.Paths) != 1 || o.Grant.Paths[0].Path != e.ws+"/a.txt" {
		t.Fatalf("grant: %+v", o.Grant)
	}
}

func TestExecutorAsksAndObeys(t *testing.T) {
	e := newExecEnv(t, policy.ModeAsk)
	write := args(t, map[string]any{"path": "b.txt", "content": "new\n"})

	e.ap.answers = []Approval{{Answer: AnswerDeny, Message: "use c.txt instead"}}
	o := e.ex.Execute(context.Background(), "t1", "write_file", write, nil)
	if !o.Result.IsError || !strings.Contains(o.Result.Text, "use c.txt instead") {
		t.Fatalf("denied write: %+v", o.Result)
	}
	if _, err := os.Stat(e.ws + "/b.txt"); err == nil {
		t.Fatal("a denied write happened")
	}
	if len(e.ap.asked) != 1 || e.ap.asked[0].Grant == nil || e.ap.asked[0].Verdict.Tier != policy.Ask {
		t.Fatalf("the approval must carry the verdict and the grant: %+v", e.ap.asked)
	}

	e.ap.answers = []Approval{{Answer: AnswerOnce}}
	if o := e.ex.Execute(context.Background(), "t2", "write_file", write, nil); o.Result.IsError {
		t.Fatalf("approved write: %+v", o.Result)
	}
	if b, _ := os.ReadFile(e.ws + "/b.txt"); string(b) != "new\n" {
		t.Fatalf("b.txt = %q", b)
	}

	// "Always" saves the rule: the same write no longer asks, and the
	// user's workspace file holds it.
	e.ap.answers = []Approval{{Answer: AnswerAlways}}
	e.ex.Execute(context.Background(), "t3", "write_file", write, nil)
	asked := len(e.ap.asked)
	e.ex.Execute(context.Background(), "t4", "write_file", write, nil)
	if len(e.ap.asked) != asked {
		t.Fatal("asked again after an always answer")
	}
	if data, err := os.ReadFile(e.ex.Policy.Files.User); err != nil || !strings.Contains(string(data), "Write(./b.txt)") {
		t.Fatalf("saved rules: %q, %v", data, err)
	}
}

func TestExecutorDeniesProtectedWithoutAsking(t *testing.T) {
	e := newExecEnv(t, policy.ModeAuto)
	o := e.ex.Execute(context.Background(), "t1", "write_file", args(t, map[string]any{"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}), nil)
	if !o.Result.IsError || !strings.Contains(o.Result.Text, "protected") || len(e.ap.asked) != 0 {
		t.Fatalf("hook write: %+v (asked %d)", o.Result, len(e.ap.asked))
	}
	if _, err := os.Stat(e.ws + "/.git/hooks/pre-commit"); err == nil {
		t.Fatal("the hook exists")
	}
}

func TestExecutorPlanModeRefusesWrites(t *testing.T) {
	e := newExecEnv(t, policy.ModePlan)
	o := e.ex.Execute(context.Background(), "t1", "write_file", args(t, map[string]any{"path": "c.txt", "content": "x"}), nil)
	if !o.Result.IsError || !strings.Contains(o.Result.Text, "plan mode") || len(e.ap.asked) != 0 {
		t.Fatalf("plan write: %+v", o.Result)
	}
}

func TestExecutorBashStreamsOutput(t *testing.T) {
	e := newExecEnv(t, policy.ModeAuto)
	var live bytes.Buffer
	o := e.ex.Execute(context.Background(), "t1", "bash", args(t, map[string]any{"command": "echo out; exit 3"}), &live)
	if o.Err != nil || !strings.Contains(live.String(), "out") || o.Result.Meta.ExitCode == nil || *o.Result.Meta.ExitCode != 3 {
		t.Fatalf("bash: %+v, live %q", o, live.String())
	}
}

func TestExecutorInterruptedApproval(t *testing.T) {
	e := newExecEnv(t, policy.ModeAsk)
	ctx, cancel := context.WithCancel(context.Background())
	e.ex.Approver = ApproverFunc(func(ctx context.Context, _ ApprovalRequest) (Approval, error) {
		cancel()
		<-ctx.Done()
		return Approval{}, ctx.Err()
	})
	o := e.ex.Execute(ctx, "t1", "write_file", args(t, map[string]any{"path": "d.txt", "content": "x"}), nil)
	if !o.Result.IsError || !strings.Contains(o.Result.Text, "interrupted") {
		t.Fatalf("interrupted approval: %+v", o.Result)
	}
	if _, err := os.Stat(e.ws + "/d.txt"); err == nil {
		t.Fatal("an interrupted call ran")
	}
}

// The time a call waited for the user's answer is reported apart from the
// rest of it (the TUI shows the call's time without it); a call no one
// was asked about waited for nothing.
func TestExecutorReportsTheTimeTheUserTook(t *testing.T) {
	e := newExecEnv(t, policy.ModeAsk)
	const think = 300 * time.Millisecond
	e.ap.think = think
	e.ap.answers = []Approval{{Answer: AnswerOnce}}
	o := e.ex.Execute(context.Background(), "t1", "write_file", args(t, map[string]any{"path": "w.txt", "content": "x\n"}), nil)
	if o.Result.IsError || len(e.ap.asked) != 1 {
		t.Fatalf("approved write: %+v (asked %d)", o.Result, len(e.ap.asked))
	}
	if o.Waited < think || o.Duration < o.Waited {
		t.Fatalf("waited %v of %v; the answer took %v", o.Waited, o.Duration, think)
	}
	o = e.ex.Execute(context.Background(), "t2", "read_file", args(t, map[string]any{"path": "a.txt"}), nil)
	if o.Result.IsError || len(e.ap.asked) != 1 || o.Waited != 0 || o.Duration <= 0 {
		t.Fatalf("a read no one was asked about: waited %v of %v (%+v)", o.Waited, o.Duration, o.Result)
	}
}

func TestExecutorUpdatePlanRunsInTheSupervisor(t *testing.T) {
	e := newExecEnv(t, policy.ModePlan)
	o := e.ex.Execute(context.Background(), "t1", "update_plan", args(t, map[string]any{"plan": []map[string]string{{"step": "read", "status": "in_progress"}}}), nil)
	if o.Result.IsError || o.Grant != nil {
		t.Fatalf("update_plan: %+v", o)
	}
	if len(e.ex.Plan().Steps) != 1 {
		t.Fatalf("plan: %+v", e.ex.Plan())
	}
}

// TestConfiguredTimeoutBoundsBash: the machine's timeout ([limits] in the
// config) bounds a bash call even though the call's own default is
// longer.
func TestConfiguredTimeoutBoundsBash(t *testing.T) {
	e := newExecEnv(t, policy.ModeAuto)
	e.ex.Policy.Machine.Limits.Timeout = time.Second
	o := e.ex.Execute(context.Background(), "t1", "bash", args(t, map[string]any{"command": "sleep 30"}), nil)
	if o.Err != nil || !o.Result.Meta.TimedOut || !strings.Contains(o.Result.Text, "timed out after 1s") {
		t.Fatalf("bash under a 1 s limit: %+v", o.Result)
	}
	if o.Grant == nil || o.Grant.Limits.Timeout != time.Second {
		t.Fatalf("grant timeout %v", o.Grant.Limits.Timeout)
	}
	// The model is told the user's limit cut it short, not to ask for more.
	if !strings.Contains(o.Result.Text, "[limits] timeout in brig's configuration") || strings.Contains(o.Result.Text, "set timeout_seconds") {
		t.Fatalf("the note invites a longer timeout_seconds: %s", o.Result.Text)
	}
	if strings.Contains(o.Result.Text, "repository's own config") {
		t.Fatalf("the user's limit is blamed on the repository: %s", o.Result.Text)
	}
	// The same limit set by the repository's config (a new user's
	// untrusted repository lowered it): the result names that file.
	e.ex.Policy.Layers = append(e.ex.Policy.Layers, policy.Layer{Kind: "repository", File: "/ws/.brig/config.toml", Exists: true,
		Limits: []policy.LimitSetting{{Key: "timeout", Value: "1s"}}})
	o = e.ex.Execute(context.Background(), "t1b", "bash", args(t, map[string]any{"command": "sleep 30"}), nil)
	if !o.Result.Meta.TimedOut || !strings.Contains(o.Result.Text, "[limits] timeout = 1s comes from the repository's own config, /ws/.brig/config.toml (untrusted") {
		t.Fatalf("the repository's limit is not named: %s", o.Result.Text)
	}
	e.ex.Policy.Layers = e.ex.Policy.Layers[:len(e.ex.Policy.Layers)-1]
	// A call that asked for less than the limit is timed out by its own
	// timeout_seconds, and told it may ask for more.
	e.ex.Policy.Machine.Limits.Timeout = time.Minute
	o = e.ex.Execute(context.Background(), "t2", "bash", args(t, map[string]any{"command": "sleep 30", "timeout_seconds": 1}), nil)
	if !o.Result.Meta.TimedOut || !strings.Contains(o.Result.Text, "set timeout_seconds") || strings.Contains(o.Result.Text, "[limits]") {
		t.Fatalf("bash timed out by its own timeout_seconds: %s", o.Result.Text)
	}
}

// TestDenialByNoOneSaysWhatHappened: a denial in a run that could ask no
// one (-p) tells the model the call was not approved, or that the jail
// profile refused it, never that a user denied it; a user's denial says
// the user did.
func TestDenialByNoOneSaysWhatHappened(t *testing.T) {
	e := newExecEnv(t, policy.ModeAsk)
	outside := t.TempDir() + "/x.txt"
	for _, tt := range []struct {
		path, by, want string
	}{
		{"b.txt", ByNoOne, "not approved: why"},
		{outside, ByNoOne, "refused by the workspace-write jail profile: why"},
		{"b.txt", "", "the user denied this call: why"},
	} {
		e.ap.answers = []Approval{{Answer: AnswerDeny, By: tt.by, Message: "why"}}
		o := e.ex.Execute(context.Background(), "t1", "write_file", args(t, map[string]any{"path": tt.path, "content": "x"}), nil)
		if !o.Result.IsError || !strings.HasPrefix(o.Result.Text, tt.want) {
			t.Errorf("%s denied by %q: %q (beyond %v), want %q…", tt.path, tt.by, o.Result.Text, o.Verdict.Beyond, tt.want)
		}
		if tt.by == ByNoOne && strings.Contains(o.Result.Text, "user denied") {
			t.Errorf("no one was asked, yet: %s", o.Result.Text)
		}
	}
}

// TestRepoLimitNote (new user, 2026-12-02): an untrusted repository's
// config lowered [limits] memory and python failed with MemoryError, with
// no word of where the bound came from. A limit the kernel enforces shows
// only in the command's words; brig's own stop names the limit. Controls:
// the same failure under the user's limit, and an unrelated failure, get
// no note.
func TestRepoLimitNote(t *testing.T) {
	p := &policy.Policy{}
	p.Layers = []policy.Layer{{Kind: "global", File: "/h/config.toml", Exists: true, Trusted: true},
		{Kind: "repository", File: "/ws/.brig/config.toml", Exists: true, Limits: []policy.LimitSetting{{Key: "memory", Value: "128.0 MiB"}, {Key: "processes", Value: "16"}}}}
	for _, tt := range []struct {
		name   string
		res    jail.Result
		output string
		want   string
	}{
		{"python", jail.Result{ExitCode: 1}, "Traceback (most recent call last):\nMemoryError\n[exit code 1]", "[limits] memory = 128.0 MiB comes from the repository's own config, /ws/.brig/config.toml (untrusted"},
		{"node", jail.Result{ExitCode: 134}, "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory", "[limits] memory"},
		{"brig stopped it", jail.Result{Limit: jail.LimitMemory, ExitCode: 137}, "", "[limits] memory"},
		{"fork", jail.Result{ExitCode: 254}, "bash: fork: retry: Resource temporarily unavailable", "[limits] processes = 16"},
		{"unrelated", jail.Result{ExitCode: 1}, "cat: x: No such file or directory", ""},
		{"the user's timeout", jail.Result{TimedOut: true}, "", ""},
	} {
		got := repoLimitNote(p, tt.res, tt.output)
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("%s: note %q, want %q", tt.name, got, tt.want)
		}
	}
	p.Layers = p.Layers[:1] // no repository config: the limits are the user's
	if got := repoLimitNote(p, jail.Result{ExitCode: 1}, "MemoryError"); got != "" {
		t.Errorf("the user's limit blamed on the repository: %q", got)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"brig/jail"
)

// sandboxFixture is a workspace (a git repository) and a fake home.
func sandboxFixture(t *testing.T) (*sandboxOptions, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	home := filepath.Join(root, "home")
	for _, d := range []string{filepath.Join(ws, ".git"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	return &sandboxOptions{
		Cwd: ws, Home: home, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + home},
		Timeout: 20 * time.Second, MaxOutput: 1 << 20, Memory: 1 << 30, Procs: 256,
		Stdout: &out, Stderr: &errb,
	}, &out, &errb
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	return 0
}

func TestSandboxExitStatusIsTheCommands(t *testing.T) {
	o, out, _ := sandboxFixture(t)
	o.Argv = []string{"sh", "-c", "echo hi; exit 3"}
	if code := exitCode(t, runSandbox(context.Background(), o)); code != 3 {
		t.Fatalf("exit %d, want 3", code)
	}
	if out.String() != "hi\n" {
		t.Fatalf("stdout %q", out.String())
	}
}

func TestSandboxCommandNotFound(t *testing.T) {
	o, _, errb := sandboxFixture(t)
	o.Argv = []string{"definitely-not-a-command"}
	if code := exitCode(t, runSandbox(context.Background(), o)); code != exitNotFound {
		t.Fatalf("exit %d, want %d; stderr %q", code, exitNotFound, errb)
	}
	if !strings.Contains(errb.String(), "definitely-not-a-command") {
		t.Fatalf("the error does not name the command: %q", errb)
	}
}

func TestSandboxGrantPathMustExist(t *testing.T) {
	o, _, _ := sandboxFixture(t)
	o.Write = []string{"../no-such-dir"}
	o.Argv = []string{"true"}
	err := runSandbox(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), "--write") {
		t.Fatalf("want a clear error about the missing --write path, got %v", err)
	}
}

// TestSandboxWriteRootRefused: --write / (or --add-dir /) is refused
// before anything runs, with what to do instead; --read / runs.
func TestSandboxWriteRootRefused(t *testing.T) {
	for _, flag := range []string{"--write", "--add-dir"} {
		o, _, _ := sandboxFixture(t)
		o.Argv = []string{"true"}
		if flag == "--write" {
			o.Write = []string{"/"}
		} else if err := (addDirFlag{o}).Set("/"); err != nil {
			t.Fatal(err)
		}
		err := runSandbox(context.Background(), o)
		if err == nil || !strings.Contains(err.Error(), "whole machine") || flag == "--write" && !strings.Contains(err.Error(), "--read /") {
			t.Fatalf("%s /: want a refusal that says what to do, got %v", flag, err)
		}
	}
	o, out, errb := sandboxFixture(t)
	o.Read = []string{"/"}
	o.Argv = []string{"sh", "-c", "echo read-root-ok"}
	if code := exitCode(t, runSandbox(context.Background(), o)); code != 0 || out.String() != "read-root-ok\n" {
		t.Fatalf("--read /: exit %d, stdout %q, stderr %q", code, out, errb)
	}
}

func TestSandboxReadOnlyAndWrite(t *testing.T) {
	o, _, _ := sandboxFixture(t)
	o.ReadOnly = true
	o.Argv = []string{"sh", "-c", "echo x > file"}
	if code := exitCode(t, runSandbox(context.Background(), o)); code == 0 {
		t.Fatal("--read-only let the command write")
	}
	if _, err := os.Stat(filepath.Join(o.Cwd, "file")); err == nil {
		t.Fatal("--read-only: the file exists")
	}
	// Control: without --read-only the same write lands.
	o.ReadOnly = false
	if code := exitCode(t, runSandbox(context.Background(), o)); code != 0 {
		t.Fatalf("write refused without --read-only: %d", code)
	}
	if _, err := os.Stat(filepath.Join(o.Cwd, "file")); err != nil {
		t.Fatal("the write did not land")
	}
	// --write grants one more directory outside the workspace.
	extra := filepath.Join(filepath.Dir(o.Cwd), "out")
	if err := os.Mkdir(extra, 0o755); err != nil {
		t.Fatal(err)
	}
	o.Argv = []string{"sh", "-c", "echo y > ../out/f"}
	if code := exitCode(t, runSandbox(context.Background(), o)); code == 0 {
		t.Fatal("a write outside the workspace succeeded without --write")
	}
	o.Write = []string{"../out"}
	if code := exitCode(t, runSandbox(context.Background(), o)); code != 0 {
		t.Fatalf("--write ../out refused: %d", code)
	}
	if b, err := os.ReadFile(filepath.Join(extra, "f")); err != nil || string(b) != "y\n" {
		t.Fatalf("--write: %q %v", b, err)
	}
}

func TestSandboxExplainPrintsTheGrant(t *testing.T) {
	o, _, errb := sandboxFixture(t)
	o.Explain = "json"
	o.Env = append(o.Env, "GITHUB_TOKEN=canary-value")
	o.Argv = []string{"true"}
	if code := exitCode(t, runSandbox(context.Background(), o)); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var got struct {
		Spec struct {
			Workspace string   `json:"workspace"`
			Protected []string `json:"protected"`
			Env       []string `json:"env"`
			Paths     []struct {
				Path, Access string
			} `json:"paths"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(errb.Bytes(), &got); err != nil {
		t.Fatalf("--explain is not JSON: %v\n%s", err, errb)
	}
	if got.Spec.Workspace != o.Cwd {
		t.Fatalf("workspace %q, want %q", got.Spec.Workspace, o.Cwd)
	}
	var wsWrite bool
	for _, p := range got.Spec.Paths {
		wsWrite = wsWrite || (p.Path == o.Cwd && p.Access == "write")
	}
	if !wsWrite {
		t.Fatal("the grant does not show the workspace as writable")
	}
	if !strings.Contains(strings.Join(got.Spec.Protected, " "), filepath.Join(o.Cwd, ".git", "hooks")) {
		t.Fatal("the grant does not list .git/hooks as protected")
	}
	if strings.Contains(errb.String(), "canary-value") || strings.Contains(errb.String(), "GITHUB_TOKEN") {
		t.Fatal("--explain shows a credential")
	}
}

// TestSandboxExplainForAPerson checks --explain's text: the workspace
// writable, protected and hidden paths counted, the network and the
// limits named, and no environment value shown.
func TestSandboxExplainForAPerson(t *testing.T) {
	o, _, errb := sandboxFixture(t)
	o.Explain = "text"
	o.Env = append(o.Env, "GITHUB_TOKEN=canary-value", "LANG=C.UTF-8-canary")
	o.Argv = []string{"true"}
	if code := exitCode(t, runSandbox(context.Background(), o)); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	got := errb.String()
	for _, want := range []string{"brig sandbox: the grant (Landlock ABI", "write " + o.Cwd + "\n", "read-only inside those (protected):", "network: ", "limits: time ", "(values not shown)"} {
		if !strings.Contains(got, want) {
			t.Errorf("--explain does not say %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "canary") || strings.Contains(got, "GITHUB_TOKEN") {
		t.Fatalf("--explain shows a credential or a value:\n%s", got)
	}
	if strings.HasPrefix(strings.TrimSpace(got), "{") {
		t.Fatalf("--explain printed JSON, want text:\n%s", got)
	}
}

func TestSandboxRefusesRootWorkspace(t *testing.T) {
	o, _, _ := sandboxFixture(t)
	o.Workspace = "/"
	o.Argv = []string{"true"}
	if err := runSandbox(context.Background(), o); err == nil || !strings.Contains(err.Error(), "whole machine") {
		t.Fatalf("want a refusal of /, got %v", err)
	}
	o.Workspace = filepath.Dir(o.Home)
	if err := runSandbox(context.Background(), o); err == nil || !strings.Contains(err.Error(), "home directory") {
		t.Fatalf("want a refusal of a workspace containing home, got %v", err)
	}
}

func TestSandboxUnknownFlag(t *testing.T) {
	code := run(context.Background(), []string{"sandbox", "--no-such-flag", "--", "true"})
	if code == 0 {
		t.Fatal("an unknown flag was accepted")
	}
}

func TestSandboxUnsafeRunsWithoutJailAndSaysSo(t *testing.T) {
	o, out, errb := sandboxFixture(t)
	o.Unsafe = true
	o.Timeout, o.MaxOutput, o.Memory, o.Procs = 0, 0, 0, 0 // the jail's flags: refused without it
	secret := filepath.Join(o.Home, "secret")
	if err := os.WriteFile(secret, []byte("readable"), 0o600); err != nil {
		t.Fatal(err)
	}
	o.Argv = []string{"cat", secret}
	if code := exitCode(t, runSandbox(context.Background(), o)); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if !strings.Contains(errb.String(), "WITHOUT the jail") {
		t.Fatalf("no loud warning: %q", errb)
	}
	if out.String() != "readable" {
		t.Fatalf("unsafe mode did not run the command: %q", out)
	}
	// Control: the same read inside the jail is refused.
	o.Unsafe = false
	out.Reset()
	if code := exitCode(t, runSandbox(context.Background(), o)); code == 0 || out.Len() != 0 {
		t.Fatalf("the jail let the command read the home directory: exit %d, %q", code, out)
	}
}

func TestSandboxOutcomeMapsFailures(t *testing.T) {
	o, _, errb := sandboxFixture(t)
	err := sandboxOutcome(context.Background(), o, jail.Result{}, fmt.Errorf("%w: Landlock is not available", jail.ErrUnenforceable))
	if code := exitCode(t, err); code != exitUnenforceable || !strings.Contains(errb.String(), "brig doctor") || !strings.Contains(errb.String(), "--unsafe-no-sandbox") {
		t.Fatalf("unenforceable: exit %d, %q", code, errb)
	}
	errb.Reset()
	err = sandboxOutcome(context.Background(), o, jail.Result{}, &jail.StageError{Stage: jail.StageLandlock, Msg: "boom"})
	if code := exitCode(t, err); code != exitCannotRun || !strings.Contains(errb.String(), "landlock") {
		t.Fatalf("stage error: exit %d, %q", code, errb)
	}
	if code := exitCode(t, sandboxOutcome(context.Background(), o, jail.Result{TimedOut: true}, nil)); code != exitTimedOut {
		t.Fatalf("timeout: exit %d", code)
	}
	if code := exitCode(t, sandboxOutcome(context.Background(), o, jail.Result{ExitCode: 137, Signal: "SIGKILL"}, nil)); code != 137 {
		t.Fatalf("signal: exit %d", code)
	}
}

// TestSandboxSizeFlags: --memory and --disk take sizes as [limits] does;
// a memory no call can start in, or a size that is not one, is refused
// with what is wanted.
func TestSandboxSizeFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		mem  uint64
		want string
	}{
		{[]string{"--memory", "512M", "--disk", "2G"}, 512 << 20, ""},
		{[]string{"--memory", "1048576"}, 1 << 20, ""},
		{[]string{"--memory", "1"}, 0, "below the least a call can start in (1.0 MiB)"},
		{[]string{"--memory", "lots"}, 0, `want a number of bytes, or one with K, M, G or T`},
	} {
		cmd := newSandboxCmd()
		err := cmd.ParseFlags(tc.args)
		got := cmd.Flags().Lookup("memory").Value.String()
		switch {
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		case tc.want == "" && (err != nil || got != jail.Bytes(tc.mem)):
			t.Errorf("%v: %v, memory %q", tc.args, err, got)
		}
	}
}

// TestSandboxAddDirChecksAsP (red team, 2026-12-02): brig sandbox's
// --add-dir took anything, where brig -p's refuses a credential directory,
// a later-run one unless :ro, and a path reached through a link in the
// workspace; --read and --write followed such a link too (vendor-cache ->
// ~/.ssh granted and unmasked the key). Controls: the directory named
// directly works with --read, and an ordinary outside directory with
// --add-dir.
func TestSandboxAddDirChecksAsP(t *testing.T) {
	setup := func(t *testing.T) (*sandboxOptions, *bytes.Buffer, string) {
		o, out, _ := sandboxFixture(t)
		keys := filepath.Join(filepath.Dir(o.Cwd), "keys")
		if err := os.MkdirAll(keys, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(keys, "id"), []byte("canary-key"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(keys, filepath.Join(o.Cwd, "vendor-cache")); err != nil {
			t.Fatal(err)
		}
		o.Argv = []string{"cat", "vendor-cache/id"}
		return o, out, keys
	}
	for _, tc := range []struct {
		name string
		set  func(o *sandboxOptions)
	}{
		{"--add-dir link:ro", func(o *sandboxOptions) { (addDirFlag{o}).Set("vendor-cache:ro") }},
		{"--add-dir link", func(o *sandboxOptions) { (addDirFlag{o}).Set("vendor-cache") }},
		{"--read link", func(o *sandboxOptions) { o.Read = []string{"vendor-cache"} }},
		{"--write link", func(o *sandboxOptions) { o.Write = []string{"vendor-cache"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, out, _ := setup(t)
			tc.set(o)
			err := runSandbox(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), "through the symbolic link") || strings.Contains(out.String(), "canary-key") {
				t.Fatalf("err %v, stdout %q", err, out)
			}
		})
	}
	// The home directory's credentials and later-run places, named.
	o, _, _ := setup(t)
	ssh := filepath.Join(o.Home, ".ssh")
	bin := filepath.Join(o.Home, ".local", "bin")
	for _, d := range []string{ssh, bin} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []string{ssh + ":ro", bin, o.Home} {
		o, _, _ := setup(t)
		o.Home, o.Env = filepath.Dir(ssh), []string{"PATH=/usr/bin:/bin", "HOME=" + filepath.Dir(ssh)}
		(addDirFlag{o}).Set(v)
		o.Argv = []string{"true"}
		if err := runSandbox(context.Background(), o); err == nil || !strings.Contains(err.Error(), "--add-dir") {
			t.Errorf("--add-dir %s: %v, want a refusal", v, err)
		}
	}
	// Controls.
	o, out, keys := setup(t)
	o.Read, o.Argv = []string{keys}, []string{"cat", keys + "/id"}
	if code := exitCode(t, runSandbox(context.Background(), o)); code != 0 || out.String() != "canary-key" {
		t.Errorf("control --read %s: exit %d, stdout %q", keys, code, out)
	}
	o, out, keys = setup(t)
	(addDirFlag{o}).Set(keys + ":ro")
	o.Argv = []string{"cat", keys + "/id"}
	if code := exitCode(t, runSandbox(context.Background(), o)); code != 0 || out.String() != "canary-key" {
		t.Errorf("control --add-dir %s:ro: exit %d, stdout %q", keys, code, out)
	}
}

// TestSandboxOutputIsPassedOnWhole (new user, 2026-12-03): a 40 MB file
// piped through brig sandbox was cut at 16 MiB with status 0 and brig's
// note appended to the data. By default nothing is cut; with
// --max-output the stream stops at the cap with no note in it, the note
// goes to stderr, and the status is 126.
func TestSandboxOutputIsPassedOnWhole(t *testing.T) {
	o, out, errb := sandboxFixture(t)
	o.MaxOutput = 0
	o.Argv = []string{"head", "-c", "18000000", "/dev/zero"}
	if code := exitCode(t, runSandbox(context.Background(), o)); code != 0 || out.Len() != 18000000 {
		t.Fatalf("no cap: exit %d, %d bytes (want 18000000); stderr %q", code, out.Len(), errb)
	}
	o, out, errb = sandboxFixture(t)
	o.MaxOutput = 1000
	o.Argv = []string{"head", "-c", "5000", "/dev/zero"}
	if code := exitCode(t, runSandbox(context.Background(), o)); code != exitCannotRun || out.Len() != 1000 || bytes.Contains(out.Bytes(), []byte("brig")) {
		t.Fatalf("--max-output 1000: exit %d, %d bytes, stdout tail %q", code, out.Len(), out.Bytes()[max(out.Len()-80, 0):])
	}
	if !strings.Contains(errb.String(), "the command's stdout was cut after 1000 bytes (--max-output)") {
		t.Errorf("stderr %q", errb)
	}
}

// TestSandboxRefusesFlagsThatDoNothing (new user, 2026-12-03): a negative
// --timeout turned the limit off, and --unsafe-no-sandbox ran with
// --read-only and --timeout given and neither applied. Both are refused,
// naming the flags.
func TestSandboxRefusesFlagsThatDoNothing(t *testing.T) {
	o, _, _ := sandboxFixture(t)
	o.Argv = []string{"true"}
	o.Timeout = -5 * time.Second
	if err := runSandbox(context.Background(), o); err == nil || !strings.Contains(err.Error(), "--timeout -5s: give a positive duration") {
		t.Errorf("--timeout -5s: %v", err)
	}
	o.Timeout, o.MaxOutput = 0, -1
	if err := runSandbox(context.Background(), o); err == nil || !strings.Contains(err.Error(), "--max-output -1") {
		t.Errorf("--max-output -1: %v", err)
	}
	o.MaxOutput, o.Memory, o.Procs = 0, 0, 0
	o.Unsafe, o.ReadOnly, o.Timeout = true, true, 2*time.Second
	if err := runSandbox(context.Background(), o); err == nil || !strings.Contains(err.Error(), "where --read-only, --timeout would do nothing") {
		t.Errorf("--unsafe-no-sandbox --read-only --timeout: %v", err)
	}
	// Control: --unsafe-no-sandbox alone runs.
	o.ReadOnly, o.Timeout = false, 0
	if err := runSandbox(context.Background(), o); err != nil {
		t.Errorf("--unsafe-no-sandbox alone: %v", err)
	}
}

// TestSandboxNotAProgram (new user, 2026-12-03): a file without execute
// permission or a directory given as the command said "the jail could
// not run the command: … permission denied", which read as the jail
// refusing it. It is said as a shell says it; status 126.
func TestSandboxNotAProgram(t *testing.T) {
	o, _, errb := sandboxFixture(t)
	if err := os.WriteFile(filepath.Join(o.Cwd, "run.sh"), []byte("echo hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(o.Cwd, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for argv0, want := range map[string]string{"./run.sh": "./run.sh is not executable: chmod +x it", "./dir": "./dir is a directory, not a program"} {
		errb.Reset()
		o.Argv = []string{argv0}
		if code := exitCode(t, runSandbox(context.Background(), o)); code != exitCannotRun || !strings.Contains(errb.String(), want) {
			t.Errorf("%s: exit %d, stderr %q; want 126 and %q", argv0, code, errb, want)
		}
	}
}

// TestSandboxSaysWhatTheJailRefused (new user, 2026-12-03: only cat's
// "Permission denied" was shown): a read outside the grant is named with
// the flag that grants it; with that flag the read works and nothing is
// said (the control); a write refused by --read-only says so.
func TestSandboxSaysWhatTheJailRefused(t *testing.T) {
	// Outside /tmp, which every call has a private one of.
	dir, err := os.MkdirTemp("/var/tmp", "brig-sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	outside := filepath.Join(dir, "todo.md")
	if err := os.WriteFile(outside, []byte("canary-note\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, out, errb := sandboxFixture(t)
	o.Argv = []string{"cat", outside}
	if code := exitCode(t, runSandbox(context.Background(), o)); code == 0 || strings.Contains(out.String(), "canary") {
		t.Fatalf("the read outside the grant worked: exit %d, %q", code, out)
	}
	if want := "brig: the jail refused " + outside + ": outside the grant (--read " + outside + " grants it)"; !strings.Contains(errb.String(), want) {
		t.Errorf("stderr does not say %q:\n%s", want, errb)
	}

	o, out, errb = sandboxFixture(t)
	o.Read, o.Argv = []string{outside}, []string{"cat", outside}
	if code := exitCode(t, runSandbox(context.Background(), o)); code != 0 || out.String() != "canary-note\n" || strings.Contains(errb.String(), "jail refused") {
		t.Fatalf("control: --read: exit %d, %q, %s", code, out, errb)
	}

	// A credential is named as one, with no flag offered for it.
	o, _, errb = sandboxFixture(t)
	home := filepath.Join(dir, "home")
	key := filepath.Join(home, ".ssh", "id_ed25519")
	if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, []byte("canary-key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o.Home, o.Env, o.Argv = home, []string{"PATH=/usr/bin:/bin", "HOME=" + home}, []string{"cat", key}
	if code := exitCode(t, runSandbox(context.Background(), o)); code == 0 {
		t.Fatal("the key was read")
	}
	if got := errb.String(); !strings.Contains(got, "(it holds credentials)") || strings.Contains(got, "--read") {
		t.Errorf("a credential's refusal: %s", got)
	}

	o, _, errb = sandboxFixture(t)
	o.ReadOnly, o.Argv = true, []string{"touch", filepath.Join(o.Cwd, "new")}
	if code := exitCode(t, runSandbox(context.Background(), o)); code == 0 {
		t.Fatal("--read-only: the write worked")
	}
	if want := "the call may only read it (--read-only made the workspace so)"; !strings.Contains(errb.String(), want) {
		t.Errorf("stderr does not say %q:\n%s", want, errb)
	}
}

package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"brig/jail"
	"brig/policy/toolcall"
	"brig/supervisor"
	"brig/tools"
	"brig/tools/textfile"
)

// The test binary is also the jail child: the supervisor re-executes it, and
// it serves the real native tools.
func TestMain(m *testing.M) {
	if jail.IsChild() {
		// read_file is served by init itself where commands are
		// (jail/direct.go), as in brig.
		jail.ChildMain(tools.JailTools(), jail.FileTool{Name: textfile.Name, Run: textfile.Run})
	}
	os.Exit(m.Run())
}

type kenv struct {
	sup *supervisor.Supervisor
	ws  string
	// outside is off /tmp (private in the jail when namespaces are used),
	// so a refusal there is Landlock's doing, not a missing file.
	outside string
}

func newKernelEnv(t *testing.T) kenv {
	t.Helper()
	if jail.LandlockABI() < 1 {
		t.Skip("Landlock unavailable on this kernel")
	}
	sup, err := supervisor.New(context.Background(), supervisor.Options{Executable: os.Args[0]})
	if err != nil {
		t.Fatal(err)
	}
	outside, err := os.MkdirTemp("/var/tmp", "brig-tools-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	// The workspace is off /tmp as well: with namespaces the jail's /tmp is
	// its own, and only grants outside it are remounted writable.
	wsRoot, err := os.MkdirTemp("/var/tmp", "brig-tools-ws-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(wsRoot) })
	ws := filepath.Join(wsRoot, "ws")
	if err := os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	return kenv{sup: sup, ws: ws, outside: outside}
}

// spec is a least-privilege Spec built by hand, the way the policy compiles
// one for a single call: only the given grants, the workspace's protected
// paths, no network, nothing else.
func (e kenv) spec(t *testing.T, rules ...jail.PathRule) jail.Spec {
	t.Helper()
	protected, err := jail.ProtectedPaths(e.ws)
	if err != nil {
		t.Fatal(err)
	}
	// The worker's all-thread Landlock call (psx) lists its own threads in
	// /proc after the first thread is already restricted: every Spec needs
	// that much of /proc, as supervisor.Profile grants it.
	proc := jail.PathRule{Path: "/proc/self", Access: jail.Read}
	if e.sup.Namespaces() {
		proc.Path = "/proc" // a fresh procfs holding only the call's processes
	}
	rules = append(rules, proc)
	lim := jail.DefaultLimits()
	lim.Timeout = 20 * time.Second
	s := jail.Spec{Workspace: e.ws, Dir: e.ws, Paths: rules, Protected: protected, Limits: lim}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

// run sends one tool call through the registry and the real jail; no
// policy check runs.
func (e kenv) run(t *testing.T, spec jail.Spec, name tools.Name, args any) tools.Result {
	t.Helper()
	out, err := e.try(t, spec, name, args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

// try is run for a call the jail may refuse: its error is returned.
func (e kenv) try(t *testing.T, spec jail.Spec, name tools.Name, args any) (tools.Result, error) {
	t.Helper()
	raw, _ := json.Marshal(args)
	p, refused := tools.NewRegistry().Prepare(toolcall.ModeAuto, string(name), raw)
	if refused != nil {
		t.Fatalf("%s refused before the jail: %s", name, refused.Text)
	}
	res, err := e.sup.Run(context.Background(), spec, p.Invocation, supervisor.IO{})
	return tools.FromJail(res, err)
}

// canary writes secret into a file outside every grant and returns its
// path.
func (e kenv) canary(t *testing.T, secret string) string {
	t.Helper()
	p := filepath.Join(e.outside, "secret")
	put(t, p, secret+"\n")
	return p
}

func put(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestKernelReadFileSymlinkToCanary(t *testing.T) {
	e := newKernelEnv(t)
	const secret = "canary-7f3a-never-read"
	canary := e.canary(t, secret)
	put(t, filepath.Join(e.ws, "a.txt"), "workspace text\n")
	if err := os.Symlink(canary, filepath.Join(e.ws, "link.txt")); err != nil {
		t.Fatal(err)
	}
	spec := e.spec(t, jail.PathRule{Path: e.ws, Access: jail.Read})

	// Control: the granted file reads.
	ok := e.run(t, spec, tools.ReadFile, map[string]any{"path": "a.txt"})
	if ok.IsError || !strings.Contains(ok.Text, "     1\tworkspace text") {
		t.Fatalf("control read failed: %+v", ok)
	}
	// The link sits inside the workspace; its target does not. No policy
	// ran: the kernel alone refuses.
	res := e.run(t, spec, tools.ReadFile, map[string]any{"path": "link.txt"})
	out, _ := json.Marshal(res)
	if !res.IsError || strings.Contains(string(out), secret) {
		t.Fatalf("read through the link was not refused: %s", out)
	}
	if !strings.Contains(res.Text, "permission denied") {
		t.Errorf("refusal does not say why: %s", res.Text)
	}
}

// TestKernelGrantThroughALinkPlantedSince: the policy grants a file
// tool the path it resolved, links and all followed; if a directory on
// that path is then replaced by a link (another session's call writes the
// same workspace), the jail must not move the grant to the link's target.
// The control: the same Specs read and write while the path is what was
// decided, and the canary reads where it is granted by its own path. The
// same for an exact rule outside the workspace (an added directory).
func TestKernelGrantThroughALinkPlantedSince(t *testing.T) {
	e := newKernelEnv(t)
	const secret = "canary-swapped-grant"
	canary := e.canary(t, secret)
	sub := filepath.Join(e.ws, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	put(t, filepath.Join(sub, "secret"), "the workspace's own\n")
	readSpec := e.spec(t, jail.PathRule{Path: filepath.Join(sub, "secret"), Access: jail.Read})
	writeSpec := e.spec(t, jail.PathRule{Path: sub, Access: jail.Write})
	readArgs := map[string]any{"path": "sub/secret"}
	writeArgs := map[string]any{"path": "sub/new.txt", "content": "planted\n"}

	if r := e.run(t, readSpec, tools.ReadFile, readArgs); r.IsError || !strings.Contains(r.Text, "the workspace's own") {
		t.Fatalf("control: read_file sub/secret as decided: %+v", r)
	}
	if r := e.run(t, writeSpec, tools.WriteFile, writeArgs); r.IsError {
		t.Fatalf("control: write_file sub/new.txt as decided: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(sub, "new.txt")); err != nil {
		t.Fatalf("control: write_file did not write: %v", err)
	}
	if r := e.run(t, e.spec(t, jail.PathRule{Path: canary, Access: jail.Read}), tools.ReadFile, map[string]any{"path": canary}); !strings.Contains(r.Text, secret) {
		t.Fatalf("control: the canary granted by its own path did not read: %+v", r)
	}

	// sub becomes a link to the canary's directory; the Specs stay.
	if err := os.RemoveAll(sub); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(e.outside, sub); err != nil {
		t.Fatal(err)
	}
	attempt := func(spec jail.Spec, name tools.Name, args any) string {
		out, err := e.try(t, spec, name, args)
		if err == nil && !out.IsError {
			t.Errorf("ESCAPE: %s through the planted link succeeded: %+v", name, out)
		}
		b, _ := json.Marshal(out)
		return string(b) + fmt.Sprint(err)
	}
	if got := attempt(readSpec, tools.ReadFile, readArgs); strings.Contains(got, secret) {
		t.Errorf("ESCAPE: read_file sub/secret read the canary through the link: %s", got)
	} else if !strings.Contains(got, "symbolic link") {
		t.Errorf("the refusal does not say a link was planted: %s", got)
	}
	attempt(writeSpec, tools.WriteFile, writeArgs)
	if _, err := os.Lstat(filepath.Join(e.outside, "new.txt")); err == nil {
		t.Errorf("ESCAPE: write_file sub/new.txt wrote into the link's target %s", e.outside)
	}

	// The same outside the workspace, in a directory added for the run
	// (another session may have it added read-write too): the policy
	// marks the rule exact.
	added, err := os.MkdirTemp("/var/tmp", "brig-tools-added-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(added) })
	addedSub := filepath.Join(added, "sub")
	if err := os.Mkdir(addedSub, 0o755); err != nil {
		t.Fatal(err)
	}
	put(t, filepath.Join(addedSub, "secret"), "the added directory's own\n")
	addedSpec := e.spec(t, jail.PathRule{Path: filepath.Join(addedSub, "secret"), Access: jail.Read, Exact: true})
	addedArgs := map[string]any{"path": filepath.Join(addedSub, "secret")}
	if r := e.run(t, addedSpec, tools.ReadFile, addedArgs); r.IsError || !strings.Contains(r.Text, "the added directory's own") {
		t.Fatalf("control: read_file in the added directory as decided: %+v", r)
	}
	if err := os.RemoveAll(addedSub); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(e.outside, addedSub); err != nil {
		t.Fatal(err)
	}
	if got := attempt(addedSpec, tools.ReadFile, addedArgs); strings.Contains(got, secret) {
		t.Errorf("ESCAPE: read_file in the added directory read the canary through the link: %s", got)
	}
}

// TestKernelReadFileServedAsInTheWorker: read_file's result through the
// jail — where commands start without a worker, an init that serves the
// call itself on a file its restricted clone opened (jail/direct.go) —
// is the one the worker's code gives for the same file read directly: a
// window, cut lines, a binary file, an empty one, a directory, a FIFO, a
// missing file, an offset past the end, a relative path.
func TestKernelReadFileServedAsInTheWorker(t *testing.T) {
	e := newKernelEnv(t)
	var lines strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&lines, "line %d\n", i)
	}
	put(t, filepath.Join(e.ws, "long.txt"), lines.String())
	put(t, filepath.Join(e.ws, "wide.txt"), "short\n"+strings.Repeat("é", tools.MaxLineChars)+"\nend")
	put(t, filepath.Join(e.ws, "image.png"), "\x89PNG\r\n\x1a\n\x00\x00")
	put(t, filepath.Join(e.ws, "empty.txt"), "")
	if err := os.Mkdir(filepath.Join(e.ws, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(e.ws, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := e.spec(t, jail.PathRule{Path: e.ws, Access: jail.Read})
	for _, a := range []textfile.Args{
		{Path: "pipe"},
		{Path: "long.txt"}, {Path: "long.txt", Offset: 2990, Limit: 5}, {Path: "long.txt", Offset: 4000},
		{Path: "wide.txt"}, {Path: "image.png"}, {Path: "empty.txt"}, {Path: "dir"}, {Path: "missing.txt"},
		{Path: filepath.Join(e.ws, "long.txt"), Limit: 1},
	} {
		res := e.run(t, spec, tools.ReadFile, a)
		m := res.Meta
		got := textfile.Result{Text: res.Text, IsError: res.IsError, Meta: textfile.Meta{
			Path: m.Path, StartLine: m.StartLine, Lines: m.Lines, TotalLines: m.TotalLines,
			Truncated: m.Truncated, Bytes: m.Bytes, Hash: m.Hash,
		}}
		local := a
		if !filepath.IsAbs(local.Path) {
			local.Path = filepath.Join(e.ws, a.Path)
		}
		want := textfile.Read(textfile.OpenNonBlocking, local)
		// The text names the path as asked; the local read asked for it
		// from here.
		want.Text = strings.ReplaceAll(want.Text, local.Path, a.Path)
		if want.Meta.Path != "" {
			want.Meta.Path = a.Path
		}
		if got != want || res.Images != nil {
			t.Errorf("read_file %+v through the jail:\n%+v\nread here:\n%+v", a, got, want)
		}
	}
}

func TestKernelWriteFileToGitHooks(t *testing.T) {
	e := newKernelEnv(t)
	spec := e.spec(t, jail.PathRule{Path: e.ws, Access: jail.Write})

	// Control: a normal file in the same workspace is written.
	ok := e.run(t, spec, tools.WriteFile, map[string]any{"path": "src/main.go", "content": "package main\n"})
	if ok.IsError {
		t.Fatalf("control write failed: %s", ok.Text)
	}
	if b, err := os.ReadFile(filepath.Join(e.ws, "src", "main.go")); err != nil || string(b) != "package main\n" {
		t.Fatalf("control file: %q %v", b, err)
	}

	hook := filepath.Join(e.ws, ".git", "hooks", "pre-commit")
	res := e.run(t, spec, tools.WriteFile, map[string]any{"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch /tmp/pwned\n"})
	if !res.IsError {
		t.Fatalf("write to .git/hooks was not refused: %s", res.Text)
	}
	if _, err := os.Lstat(hook); !os.IsNotExist(err) {
		t.Fatalf("the hook exists after the call (%v)", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(hook))
	if len(entries) != 0 {
		t.Fatalf("something was left in .git/hooks: %v", entries)
	}
}

func TestKernelEditFileRacingSymlinkSwap(t *testing.T) {
	e := newKernelEnv(t)
	const original = "hello from outside\n"
	canary := filepath.Join(e.outside, "victim.txt")
	put(t, canary, original)
	target := filepath.Join(e.ws, "target.txt")
	put(t, target, "hello from inside\n")
	spec := e.spec(t, jail.PathRule{Path: e.ws, Access: jail.Write})

	// Control: with nothing racing, the edit lands.
	ok := e.run(t, spec, tools.EditFile, map[string]any{"path": "target.txt", "old_string": "hello", "new_string": "hi"})
	if ok.IsError {
		t.Fatalf("control edit failed: %s", ok.Text)
	}

	// Swap target.txt between a regular file and a symlink to the victim
	// as fast as possible while edits run.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		link, file := filepath.Join(e.ws, ".swap-link"), filepath.Join(e.ws, ".swap-file")
		for {
			select {
			case <-stop:
				return
			default:
			}
			os.Remove(link)
			if os.Symlink(canary, link) == nil {
				os.Rename(link, target)
			}
			if os.WriteFile(file, []byte("hello from inside\n"), 0o644) == nil {
				os.Rename(file, target)
			}
			// Leave the regular file in place a little longer than the
			// link, so edits meet both states and the swaps in between.
			time.Sleep(300 * time.Microsecond)
		}
	})
	outcomes := map[string]int{}
	for range 6 {
		res := e.run(t, spec, tools.EditFile, map[string]any{"path": "target.txt", "old_string": "hello", "new_string": "pwned"})
		outcomes[strings.SplitN(res.Text, "\n", 2)[0]]++
	}
	close(stop)
	wg.Wait()
	t.Logf("edits during the race: %v", outcomes)

	// Without a race, a write through a link that points outside goes to
	// the link's target, which the kernel refuses (no temporary file
	// there, no rewrite in place).
	if err := os.Symlink(canary, filepath.Join(e.ws, "out-link")); err != nil {
		t.Fatal(err)
	}
	res := e.run(t, spec, tools.WriteFile, map[string]any{"path": "out-link", "content": "pwned\n"})
	if !res.IsError || !strings.Contains(res.Text, "the jail refused it") {
		t.Fatalf("write through an outward link: %s", res.Text)
	}

	if b, err := os.ReadFile(canary); err != nil || string(b) != original {
		t.Fatalf("the file outside the workspace changed: %q %v", b, err)
	}
	if entries, _ := os.ReadDir(e.outside); len(entries) != 1 {
		t.Fatalf("files appeared outside the workspace: %v", entries)
	}
}

func TestKernelSearchCodeEngines(t *testing.T) {
	e := newKernelEnv(t)
	put(t, filepath.Join(e.ws, "a.go"), "package a\n// findme here\n")
	read := jail.PathRule{Path: e.ws, Access: jail.Read}

	// Read on the workspace only: rg cannot be executed, the Go engine
	// answers the same way.
	res := e.run(t, e.spec(t, read), tools.SearchCode, map[string]any{"pattern": "findme"})
	if res.IsError || res.Text != "a.go:2:// findme here\n[1 match in 1 file]" || res.Meta.Engine != "go" {
		t.Fatalf("go engine in the jail: %+v", res)
	}
	if _, err := os.Stat("/usr/bin/rg"); err != nil {
		t.Skip("no /usr/bin/rg")
	}
	// With the system executable roots granted, ripgrep runs in the jail.
	var sys []jail.PathRule
	for _, d := range []string{"/usr", "/lib", "/lib64", "/bin"} {
		sys = append(sys, jail.PathRule{Path: d, Access: jail.Exec, Optional: true})
	}
	res = e.run(t, e.spec(t, append(sys, read)...), tools.SearchCode, map[string]any{"pattern": "findme"})
	if res.IsError || res.Text != "a.go:2:// findme here\n[1 match in 1 file]" || res.Meta.Engine != "ripgrep" {
		t.Fatalf("ripgrep in the jail: %+v", res)
	}
}

// TestKernelBatchStaysInItsGrant: the calls of a batch run in one jail
// child and each is held to the batch's grant: a call naming a file the
// grant does not hold is refused by the kernel (a canary outside the grant
// stays unread) while its neighbours, granted, read; the outputs come back
// in the calls' order, an unknown tool is an error of its own entry.
func TestKernelBatchStaysInItsGrant(t *testing.T) {
	e := newKernelEnv(t)
	const secret = "canary-batch-never-read"
	canary := e.canary(t, secret)
	put(t, filepath.Join(e.ws, "a.txt"), "alpha\n")
	put(t, filepath.Join(e.ws, "b.txt"), "bravo\n")
	spec := e.spec(t, jail.PathRule{Path: filepath.Join(e.ws, "a.txt"), Access: jail.Read}, jail.PathRule{Path: filepath.Join(e.ws, "b.txt"), Access: jail.Read})
	entry := func(path string) tools.BatchEntry {
		raw, _ := json.Marshal(map[string]string{"path": path})
		return tools.BatchEntry{Tool: string(tools.ReadFile), Args: raw}
	}
	entries := []tools.BatchEntry{entry("a.txt"), entry(canary), entry("b.txt"), {Tool: "no_such_tool"}}
	args, _ := json.Marshal(entries)
	res, err := e.sup.Run(context.Background(), spec, jail.Invocation{Tool: tools.BatchTool, Args: args}, supervisor.IO{})
	if err != nil {
		t.Fatal(err)
	}
	var outs []tools.BatchOutput
	if err := json.Unmarshal(res.Output, &outs); err != nil || len(outs) != len(entries) {
		t.Fatalf("the batch's outputs: %v (%d for %d calls): %s", err, len(outs), len(entries), res.Output)
	}
	read := func(i int) tools.Result {
		var r tools.Result
		if err := json.Unmarshal(outs[i].Data, &r); err != nil {
			t.Fatalf("output %d: %v: %s", i, err, outs[i].Data)
		}
		return r
	}
	if r := read(0); r.IsError || !strings.Contains(r.Text, "alpha") {
		t.Errorf("the first granted read: %+v", r)
	}
	if r := read(2); r.IsError || !strings.Contains(r.Text, "bravo") {
		t.Errorf("the second granted read: %+v", r)
	}
	if r := read(1); !r.IsError || strings.Contains(string(outs[1].Data), secret) {
		t.Fatalf("a batched read outside the batch's grant was not refused: %s", outs[1].Data)
	}
	if outs[3].Error == "" || outs[3].Data != nil {
		t.Errorf("an unknown tool in a batch: %+v", outs[3])
	}
}

package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"brig/jail"
	"brig/policy"
)

// restoreRig is a git workspace and a supervisor whose calls run without
// namespaces, as where user namespaces are unavailable.
type restoreRig struct {
	t    *testing.T
	sup  *Supervisor
	ws   string
	home string
}

func newRestoreRig(t *testing.T) *restoreRig {
	t.Helper()
	if jail.LandlockABI() < 6 {
		t.Skip("without namespaces the jail needs Landlock ABI 6 to contain a call (this kernel has less)")
	}
	sup, err := New(context.Background(), Options{QuarantineDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sup.Close)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := &restoreRig{t: t, sup: sup, ws: filepath.Join(root, "ws"), home: filepath.Join(root, "home")}
	mk(t, filepath.Join(r.home, ".gitconfig"), "[user]\n\tname = Restore\n\temail = restore@example.invalid\n[init]\n\tdefaultBranch = main\n")
	mk(t, filepath.Join(r.ws, "main.go"), "package main\n\nfunc main() {}\n")
	mk(t, filepath.Join(r.ws, ".brig/config.toml"), "# repository rules\n")
	r.git("init", "-q")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "initial")
	// Times far from now, so that a restored file with a fresh mtime
	// shows.
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, p := range []string{".git/config", ".git/hooks/pre-commit.sample", ".brig/config.toml", ".brig", ".git/hooks"} {
		if err := os.Chtimes(filepath.Join(r.ws, p), old, old); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func (r *restoreRig) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.ws}, args...)...)
	cmd.Env = []string{"HOME=" + r.home, "PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *restoreRig) spec() jail.Spec {
	r.t.Helper()
	p := policy.Profile{
		Workspace: r.ws, Dir: r.ws, Home: r.home, Limits: jail.DefaultLimits(), CallTmp: r.t.TempDir(),
		ParentEnv: []string{"PATH=/usr/bin:/bin", "HOME=" + r.home, "LANG=C.UTF-8", "GIT_CONFIG_NOSYSTEM=1"},
	}
	spec, err := p.Spec()
	if err != nil {
		r.t.Fatal(err)
	}
	spec.Layers.NoNamespaces = true
	return spec
}

func (r *restoreRig) sh(script string) jail.Result {
	r.t.Helper()
	res, err := r.sup.Run(context.Background(), r.spec(), jail.Invocation{Argv: []string{"/bin/sh", "-c", script}}, IO{})
	if err != nil {
		r.t.Fatalf("jail call: %v", err)
	}
	return res
}

// sig is what a later reader of p sees: type, mode, mtime, content.
func sig(p string) string {
	fi, err := os.Lstat(p)
	if err != nil {
		return "absent"
	}
	s := fmt.Sprintf("%v %d", fi.Mode(), fi.ModTime().UnixNano())
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		t, _ := os.Readlink(p)
		s += " -> " + t
	case fi.IsDir():
		entries, _ := os.ReadDir(p)
		for _, e := range entries {
			s += " " + e.Name()
		}
	default:
		b, _ := os.ReadFile(p)
		s += fmt.Sprintf(" %q", b)
	}
	return s
}

// TestRestoreOrdinaryWorkWithoutNamespaces: without namespaces, ordinary
// work in the workspace succeeds as it does with them — a new directory
// and a new file at the workspace root, git add and commit (new entries in
// .git), a build output directory — and the supervisor reports nothing.
func TestRestoreOrdinaryWorkWithoutNamespaces(t *testing.T) {
	r := newRestoreRig(t)
	before := r.git("rev-parse", "HEAD")
	res := r.sh(`set -e; mkdir newdir; echo b > top.txt; git add -A; git commit -q -m step; git stash list; git checkout -q -b topic; mkdir -p bin && cp main.go bin/app; echo ok`)
	if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), "ok") {
		t.Fatalf("ordinary work failed without namespaces: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if after := r.git("rev-parse", "HEAD"); after == before {
		t.Error("git commit made no commit")
	}
	for _, p := range []string{"newdir", "top.txt", "bin/app"} {
		if _, err := os.Stat(filepath.Join(r.ws, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if len(res.Violations) != 0 {
		t.Errorf("ordinary work reported as a change of protected paths: %v", res.Violations)
	}
}

// TestRestoreProtectedWithoutNamespaces: whatever a call without
// namespaces does to a protected path — a new hook, an edited or replaced
// config, a mode change, a new .envrc or .vscode, .git or .brig renamed
// away and replaced — is undone after the call, byte for byte with its
// mode and times, and reported; the control beside each is the same write
// to an ordinary path, which stays.
func TestRestoreProtectedWithoutNamespaces(t *testing.T) {
	cases := []struct {
		name, script string
		kept         []string // ordinary paths the script also writes: must stay
		leftover     []string // harmless entries that may remain (not protected)
	}{
		{"new hook", `printf '#!/bin/sh\ntouch /tmp/x\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; echo x > ctl`, []string{"ctl"}, nil},
		{"edited sample and mode", `echo evil >> .git/hooks/pre-commit.sample; chmod 777 .git/hooks/pre-commit.sample; chmod 777 .git/hooks; echo x > ctl`, []string{"ctl"}, nil},
		{"config edited", `git config core.fsmonitor 'touch /tmp/x'; git config core.hooksPath /tmp; echo x > ctl`, []string{"ctl"}, nil},
		{"config replaced by a link", `cp .git/config c2 && echo '[core]' >> c2 && mv -f c2 .git/config; rm -f .git/config; ln -s /tmp/evil .git/config; echo x > ctl`, []string{"ctl"}, nil},
		{"later-run files created", `echo evil > .envrc; mkdir -p .vscode && echo '{}' > .vscode/tasks.json; echo '{}' > .mcp.json; echo x > ctl`, []string{"ctl"}, nil},
		{".brig rewritten and renamed", `echo 'allow = ["Bash(*)"]' >> .brig/config.toml; echo x > .brig/new.md; mv .brig .brig.old; mkdir .brig; echo y > .brig/config.toml`, nil, nil},
		{".git renamed and replaced", `mv .git .git2 && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit`, nil, nil},
		{".git replaced by a link", `mv .git gd && mkdir -p evil/hooks && echo x > evil/hooks/pre-commit && ln -s evil .git`, []string{"evil/hooks/pre-commit"}, nil},
		{"hooks replaced by a link", `rm -rf .git/hooks; ln -s ../.brig .git/hooks; mv .git/hooks .git/hooks.old`, nil, []string{".git/hooks.old"}},
		{"a link on the way to a missing protected path", `mkdir -p src && printf 'pre-commit:\n  commands:\n    x:\n      run: touch /tmp/x\n' > src/lefthook.yml && ln -s src .config`, []string{"src/lefthook.yml"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRestoreRig(t)
			watched := []string{".git/config", ".git/hooks", ".git/hooks/pre-commit.sample", ".git/hooks/pre-commit", ".git/HEAD",
				".envrc", ".vscode", ".mcp.json", ".brig", ".brig/config.toml", ".brig/new.md", ".brig.old", ".git2", "gd", ".config"}
			before := map[string]string{}
			for _, p := range watched {
				before[p] = sig(filepath.Join(r.ws, p))
			}
			res := r.sh(tc.script)
			for _, p := range watched {
				if after := sig(filepath.Join(r.ws, p)); after != before[p] {
					t.Errorf("%s after the call:\n  was %s\n  now %s", p, before[p], after)
				}
			}
			for _, p := range tc.kept {
				if _, err := os.Stat(filepath.Join(r.ws, p)); err != nil {
					t.Errorf("control: the ordinary path %s the call wrote is gone: %v", p, err)
				}
			}
			if len(res.Violations) == 0 {
				t.Errorf("nothing reported (stderr: %s)", res.Stderr)
			}
			if st := r.git("status", "--porcelain", "--", "main.go"); st != "" {
				t.Errorf("the repository is not the same after the call: %s", st)
			}
			t.Logf("undone: %v", res.Violations)
		})
	}
}

// TestRestoreBreaksLinksToProtectedFiles: a hard link a call made to a
// protected file cannot be used by a later call to write it, because the
// file is put back as a new file; the control is the link itself, which
// the call was allowed to make.
func TestRestoreBreaksLinksToProtectedFiles(t *testing.T) {
	r := newRestoreRig(t)
	cfg := sig(filepath.Join(r.ws, ".git/config"))
	r.sh(`ln .git/config keep-a-link`)
	if _, err := os.Lstat(filepath.Join(r.ws, "keep-a-link")); err != nil {
		t.Fatalf("control: the call could not make its link: %v", err)
	}
	r.sh(`echo '[core] fsmonitor = touch /tmp/x' >> keep-a-link`)
	if after := sig(filepath.Join(r.ws, ".git/config")); after != cfg {
		t.Errorf(".git/config changed through a link made by an earlier call:\n  was %s\n  now %s", cfg, after)
	}
}

// TestRestoreOverlappingCalls: a call that starts while another is
// changing a protected path records what was there before that call, so
// the hook the first one planted is not put back by the second.
func TestRestoreOverlappingCalls(t *testing.T) {
	r := newRestoreRig(t)
	hook := filepath.Join(r.ws, ".git/hooks/pre-commit")
	planted, release := filepath.Join(r.ws, "planted"), filepath.Join(r.ws, "release")
	first := make(chan jail.Result, 1)
	go func() {
		first <- r.sh(`echo evil > .git/hooks/pre-commit && touch planted && while ! test -e release; do sleep 0.01; done`)
	}()
	for !exists(planted) {
		time.Sleep(5 * time.Millisecond)
	}
	second := make(chan jail.Result, 1)
	go func() {
		second <- r.sh(`while ! test -e release2; do sleep 0.01; done`)
	}()
	// The second call has recorded its protected paths once it runs:
	// wait for it to be running, then let the first end.
	waitFor(t, func() bool { return len(processesWith(t, "release2")) > 0 })
	mk(t, release, "")
	<-first
	if exists(hook) {
		t.Error("the first call's hook survived its end")
	}
	mk(t, filepath.Join(r.ws, "release2"), "")
	<-second
	if exists(hook) {
		t.Error("the hook the first call planted was put back by the call that started while it ran")
	}
}

// TestRestoreRefusesOversizedRecords: protected paths holding more than
// brig keeps a copy of refuse the call before the tool starts.
func TestRestoreRefusesOversizedRecords(t *testing.T) {
	r := newRestoreRig(t)
	big := make([]byte, maxRecordBytes+1)
	if err := os.WriteFile(filepath.Join(r.ws, ".brig/big"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := r.sup.Run(context.Background(), r.spec(), jail.Invocation{Argv: []string{"/bin/sh", "-c", "touch ran"}}, IO{})
	if !errors.Is(err, jail.ErrUnenforceable) || !strings.Contains(err.Error(), ".brig/big") {
		t.Fatalf("got %v, want a refusal naming .brig/big", err)
	}
	if exists(filepath.Join(r.ws, "ran")) {
		t.Error("the tool ran although its protected paths could not be recorded")
	}
	os.Remove(filepath.Join(r.ws, ".brig/big"))
	if res := r.sh("touch ran"); res.ExitCode != 0 || !exists(filepath.Join(r.ws, "ran")) {
		t.Errorf("control: the call did not run once the file was gone: %+v", res)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline, ok := t.Deadline()
	if !ok {
		deadline = time.Now().Add(time.Minute)
	}
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("gave up waiting")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRestoreWorktreeGitFile: a workspace whose .git is a file naming a
// git directory elsewhere (git worktree add, --separate-git-dir): ordinary
// work leaves the file alone and reports nothing, and a call that rewrites
// or removes it has it put back.
func TestRestoreWorktreeGitFile(t *testing.T) {
	r := newRestoreRig(t)
	ws2 := filepath.Join(filepath.Dir(r.ws), "ws2")
	if out, err := exec.Command("git", "init", "-q", "--separate-git-dir", filepath.Join(filepath.Dir(r.ws), "ws2.git"), ws2).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	r.ws = ws2
	dotgit := filepath.Join(ws2, ".git")
	before := sig(dotgit)
	if res := r.sh("mkdir sub && echo ok > sub/file"); len(res.Violations) != 0 || sig(dotgit) != before {
		t.Fatalf("ordinary work: reported %v, .git now %s (was %s)", res.Violations, sig(dotgit), before)
	}
	res := r.sh("echo 'gitdir: /tmp/evil' > .git; rm -f .git; mkdir .git")
	if after := sig(dotgit); after != before {
		t.Errorf(".git after the call: %s, was %s", after, before)
	}
	if len(res.Violations) == 0 {
		t.Error("nothing reported")
	}
}

// TestMetadataWithoutNamespaces: without namespaces the mode, owner and
// times of a file change only inside the call's write grant (the
// supervisor performs them), and are refused outside it, on protected
// paths and on devices — for the path, *at, descriptor and O_PATH forms,
// and through a symbolic link the call keeps swapping between a file it
// may change and one it may not.
func TestMetadataWithoutNamespaces(t *testing.T) {
	r := newRestoreRig(t)
	outside := filepath.Join(filepath.Dir(r.ws), "outside.txt")
	mk(t, outside, "outside\n")
	if err := os.Chmod(outside, 0o640); err != nil {
		t.Fatal(err)
	}
	before := inodeSig(outside)
	cfgBefore := inodeSig(filepath.Join(r.ws, ".git/config"))
	res := r.sh(`o=` + outside + `
echo x > mine.sh
chmod 755 mine.sh && echo chmod-inside-ok
touch -d '2001-02-03 04:05' mine.sh && echo touch-inside-ok
chown "$(id -u):$(id -g)" mine.sh && echo chown-inside-ok
python3 -c 'import os; fd=os.open("mine.sh", os.O_RDONLY); os.fchmod(fd, 0o700)' && echo fchmod-inside-ok
chmod 666 "$o" || echo chmod-outside-refused
touch -d '2001-02-03 04:05' "$o" || echo touch-outside-refused
python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.fchmod(fd, 0o666)' "$o" || echo fchmod-outside-refused
python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_PATH); os.chmod("/proc/self/fd/%d" % fd, 0o666)' "$o" || echo opath-outside-refused
chmod 666 .git/config || echo protected-refused
chmod 666 /dev/null || echo device-refused
ln -s "$o" swap; (i=0; while [ $i -lt 300 ]; do ln -sfn mine.sh swap; ln -sfn "$o" swap; i=$((i+1)); done) & j=0; while [ $j -lt 300 ]; do chmod 604 swap 2>/dev/null; j=$((j+1)); done; wait; echo race-done`)
	out := string(res.Stdout)
	for _, want := range []string{"chmod-inside-ok", "touch-inside-ok", "chown-inside-ok", "fchmod-inside-ok",
		"chmod-outside-refused", "touch-outside-refused", "fchmod-outside-refused", "opath-outside-refused",
		"protected-refused", "device-refused", "race-done"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s\nstdout: %s\nstderr: %s", want, out, res.Stderr)
		}
	}
	fi, err := os.Stat(filepath.Join(r.ws, "mine.sh"))
	if err != nil || fi.Mode().Perm() != 0o700 && fi.Mode().Perm() != 0o604 || fi.ModTime().Year() != 2001 {
		t.Errorf("control: mine.sh is %v %v (%v), want mode 0700 (or 0604 from the race) and year 2001", fi.Mode(), fi.ModTime(), err)
	}
	if after := inodeSig(outside); after != before {
		t.Errorf("the file outside the grant changed:\n  was %s\n  now %s", before, after)
	}
	if after := inodeSig(filepath.Join(r.ws, ".git/config")); after != cfgBefore {
		t.Errorf(".git/config changed:\n  was %s\n  now %s", cfgBefore, after)
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode().Perm() != 0o666 {
		t.Errorf("/dev/null: %v %v", fi.Mode(), err)
	}
}

func inodeSig(p string) string {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return "absent"
	}
	return fmt.Sprintf("%s uid=%d gid=%d ctime=%d.%09d", sig(p), st.Uid, st.Gid, st.Ctim.Sec, st.Ctim.Nsec)
}

// TestConcurrentCallsWithoutNamespaces: calls without namespaces running
// side by side all end by themselves. (The metadata service of each call
// runs on a thread of its own; a thread that ended with it could be the
// one that started another call's init, whose parent-death signal then
// cancelled that call.)
func TestConcurrentCallsWithoutNamespaces(t *testing.T) {
	r := newRestoreRig(t)
	var wg sync.WaitGroup
	errs := make(chan string, 100)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				res, err := r.sup.Run(context.Background(), r.spec(), jail.Invocation{Argv: []string{"/bin/sh", "-c", "mkdir -p a$$/b && chmod 700 a$$ && mv a$$ c$$ && rm -rf c$$"}}, IO{})
				if err != nil || res.ExitCode != 0 || res.Canceled {
					errs <- fmt.Sprintf("exit %d (%s), canceled %v, err %v, stderr %s", res.ExitCode, res.Signal, res.Canceled, err, res.Stderr)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestRestoreALinkOnTheWayWithoutNamespaces: .config is a link into the
// workspace and .config/lefthook.yml (which git hooks obey) a file where
// it leads; a call without namespaces that rewrites the file through the
// link, or replaces the link by a directory holding another one, is
// undone. Control: a file written beside it stays.
func TestRestoreALinkOnTheWayWithoutNamespaces(t *testing.T) {
	for _, script := range []string{
		`echo 'pre-commit: {commands: {x: {run: evil}}}' > .config/lefthook.yml; echo x > cfg/ctl`,
		`rm .config && mkdir .config && echo 'pre-commit: {commands: {x: {run: evil}}}' > .config/lefthook.yml; echo x > cfg/ctl`,
	} {
		r := newRestoreRig(t)
		mk(t, filepath.Join(r.ws, "cfg", "lefthook.yml"), "pre-commit: {}\n")
		if err := os.Symlink("cfg", filepath.Join(r.ws, ".config")); err != nil {
			t.Fatal(err)
		}
		res := r.sh(script)
		if target, err := os.Readlink(filepath.Join(r.ws, ".config")); err != nil || target != "cfg" {
			t.Errorf("%s: .config is no longer the link: %q %v", script, target, err)
		}
		if b, _ := os.ReadFile(filepath.Join(r.ws, ".config", "lefthook.yml")); string(b) != "pre-commit: {}\n" {
			t.Errorf("%s: .config/lefthook.yml reads %q (undone: %v)", script, b, res.Violations)
		}
		if _, err := os.Stat(filepath.Join(r.ws, "cfg", "ctl")); err != nil {
			t.Errorf("%s: control: %v", script, err)
		}
	}
}

// TestRestoreRefusesALinkToAWriteGrantWithoutNamespaces: .husky (husky's
// hooks, which git runs) is a link to a directory the call may write as a
// whole. Without namespaces brig cannot keep what is there (a record of a
// whole grant is no protection it can give), so the call is refused,
// saying which link; nothing is planted. Control: without the link the
// same call runs.
func TestRestoreRefusesALinkToAWriteGrantWithoutNamespaces(t *testing.T) {
	r := newRestoreRig(t)
	grant := t.TempDir()
	spec := r.spec()
	spec.Paths = append(spec.Paths, jail.PathRule{Path: grant, Access: jail.Write})
	run := func() (jail.Result, error) {
		return r.sup.Run(context.Background(), spec, jail.Invocation{Argv: []string{"/bin/sh", "-c", "echo planted > " + grant + "/pre-commit"}}, IO{})
	}
	if _, err := run(); err != nil {
		t.Fatalf("control: %v", err)
	}
	if err := os.Remove(filepath.Join(grant, "pre-commit")); err != nil {
		t.Fatalf("control: the call did not write the grant: %v", err)
	}
	if err := os.Symlink(grant, filepath.Join(r.ws, ".husky")); err != nil {
		t.Fatal(err)
	}
	_, err := run()
	if err == nil || !strings.Contains(err.Error(), ".husky") {
		t.Fatalf("the call was not refused naming the link: %v", err)
	}
	if _, err := os.Stat(filepath.Join(grant, "pre-commit")); err == nil {
		t.Fatal("a hook was planted where .husky leads")
	}
}

package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"brig/test/fakeprovider"
)

// The default-grant battery: a hostile repository gets nothing from the
// default grant. Through the real `brig -p` and the fake provider, with a
// temporary HOME:
//
//   - in ask mode, the repository's Makefile (`make` runs unasked) tries to
//     read git's credential-store file, an npm global config's token,
//     through a PATH entry "$HOME/" an SSH key, and through the PATH entry
//     of the workspace's own bin (direnv's PATH_add bin), which the
//     repository ships as a link to ../sibling, another project's notes;
//     and to plant what git runs
//     later: a directory with a repository's shape whose config names a
//     pager and an fsmonitor, a `git init --bare` repository with a work
//     tree, a new .git/modules entry, hooks in the core.hooksPath directory,
//     and a hook manager's config;
//   - in edit mode, the model does the same with file tools;
//   - in auto mode, the repository's .git/hooks is a link into brig's
//     toolchain cache (which every bash call may write) and its config
//     gives a diff textconv that writes a hook there: the model's
//     `git diff`, a line that only reads, runs it.
//
// Afterwards the user's own git runs OUTSIDE brig (git log on a terminal,
// git status, git commit) and every canary stays absent; no secret reaches
// the provider. The control beside each: the same Makefile run (or the
// same files written) outside brig in an identical copy makes the same
// later git commands write every canary, and the reads of files the
// default grant does allow (git's config, an npm global package, a program
// on PATH) reach the provider through the same calls.
//
// Each cell runs as root and as uid 65534 (setpriv), with namespaces and
// without them (brig started in a user namespace whose
// user.max_user_namespaces is 0, so it cannot create its own: the
// Landlock-only composition).

type cell struct {
	name   string
	unpriv bool // run brig and the user's git as uid/gid 65534
	noNS   bool // brig cannot create user namespaces
}

const unprivID = 65534

// wrap returns the command line that runs argv as the cell's user. For
// brig without namespaces it also returns the attributes of a user
// namespace to start it in (uid 0 and 65534 mapped to themselves) whose
// user.max_user_namespaces is then set to 0: brig inside keeps its own uid
// and cannot create a namespace of its own.
func (c cell) wrap(argv []string, forBrig bool) ([]string, *syscall.SysProcAttr) {
	if c.unpriv {
		argv = append([]string{"setpriv", fmt.Sprintf("--reuid=%d", unprivID), fmt.Sprintf("--regid=%d", unprivID), "--clear-groups", "--"}, argv...)
	}
	if !forBrig || !c.noNS {
		return argv, nil
	}
	argv = append([]string{"/bin/sh", "-c", `echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"`, "sh"}, argv...)
	ids := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}, {ContainerID: unprivID, HostID: unprivID, Size: 1}}
	return argv, &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER, UidMappings: ids, GidMappings: ids, GidMappingsEnableSetgroups: true}
}

// fixture is one workspace and home for a run, and an identical control
// workspace for the same actions outside brig.
type fixture struct {
	t                   *testing.T
	c                   cell
	root, home          string
	ws, ctl             string            // the workspace brig runs in, and its control copy
	canaries, ctlCanary string            // where planted commands write (outside every workspace)
	other, otherSHA     string            // another project's repository, outside the workspace
	sha                 map[string]string // HEAD of each workspace (git only)
	canary              string            // in every secret file
	git                 bool
}

func randToken() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func newFixture(t *testing.T, c cell, git bool) *fixture {
	t.Helper()
	root, err := os.MkdirTemp("/var/tmp", "brig-dg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	root, _ = filepath.EvalSymlinks(root)
	f := &fixture{t: t, c: c, root: root, home: root + "/home", ws: root + "/ws", ctl: root + "/ctl",
		canaries: root + "/canaries", ctlCanary: root + "/canaries-ctl", other: root + "/other",
		canary: "CANARY" + randToken(), git: git}
	write := func(p, content string, mode os.FileMode) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(f.home+"/.gitconfig", "[user]\n\tname = Battery\n\temail = battery@example.invalid\n[init]\n\tdefaultBranch = main\n", 0o644)
	write(f.home+"/.config/git/config", "[color]\n\tui = never\n# gitconfig-control-ok\n", 0o644)
	write(f.home+"/.config/git/credentials", "https://user:ghp_"+f.canary+"@github.com\n", 0o600)
	write(f.home+"/.npm-global/etc/npmrc", "//registry.npmjs.org/:_authToken="+f.canary+"\n", 0o600)
	write(f.home+"/.npm-global/bin/hello", "#!/bin/sh\necho path-control-ok\n", 0o755)
	write(f.home+"/.npm-global/lib/node_modules/x/package.json", `{"name":"x","note":"npmlib-control-ok"}`+"\n", 0o644)
	write(f.home+"/.ssh/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\n"+f.canary+"\n", 0o600)
	for _, d := range []string{f.canaries, f.ctlCanary} {
		os.MkdirAll(d, 0o755)
	}
	write(f.other+"/README", "another project\n", 0o644)
	write(root+"/sibling/notes.txt", "a sibling project's notes "+f.canary+"\n", 0o644)
	f.hostGit(f.other, "init", "-q")
	f.hostGit(f.other, "add", "README")
	f.hostGit(f.other, "commit", "-q", "-m", "other")
	f.otherSHA = strings.TrimSpace(f.hostGit(f.other, "rev-parse", "HEAD"))
	f.sha = map[string]string{}
	for _, ws := range []string{f.ws, f.ctl} {
		f.workspace(ws, write)
		if git {
			f.sha[ws] = strings.TrimSpace(f.hostGit(ws, "rev-parse", "HEAD"))
		}
	}
	if c.unpriv {
		if out, err := exec.Command("chown", "-R", fmt.Sprintf("%d:%d", unprivID, unprivID), root).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v %s", err, out)
		}
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	return f
}

// workspace builds one workspace: for git, a repository whose hooks live
// in tools/hooks (core.hooksPath), with a hook manager's stub there that
// runs what .pre-commit-config.yaml names; else a plain directory.
func (f *fixture) workspace(ws string, write func(string, string, os.FileMode)) {
	write(ws+"/src/main.go", "package main\n\nfunc main() {}\n", 0o644)
	write(ws+"/lib/README", "a library\n", 0o644)
	write(ws+"/out/.keep", "", 0o644)
	if !f.git {
		write(ws+"/Makefile", rootMakefile(f.canaries), 0o644)
		return
	}
	write(ws+"/Makefile", gitMakefile(f.canaries), 0o644)
	write(ws+"/tools/hooks/pre-commit", "#!/bin/sh\n# installed by the hook manager: run what its config names\nsed -n 's/^ *entry: *//p' .pre-commit-config.yaml | while read -r cmd; do sh -c \"$cmd\"; done\n", 0o755)
	write(ws+"/.pre-commit-config.yaml", "repos:\n- repo: local\n  hooks:\n  - id: check\n    name: check\n    entry: true\n    language: system\n", 0o644)
	// The repository's bin, which the user's PATH names, is a link the
	// repository chose: to a sibling of the workspace.
	if err := os.Symlink("../sibling", ws+"/bin"); err != nil {
		f.t.Fatal(err)
	}
	f.hostGit(ws, "init", "-q")
	f.hostGit(ws, "config", "core.hooksPath", "tools/hooks")
	os.MkdirAll(ws+"/.git/modules", 0o755)
	f.hostGit(ws, "add", "-A")
	f.hostGit(ws, "commit", "-q", "-m", "initial")
}

// gitMakefile is the hostile repository's Makefile. OUT is where planted
// commands write their canary (the control passes its own).
func gitMakefile(out string) string {
	return `OUT ?= ` + out + `
WS := $(CURDIR)

all:
	-cat $(HOME)/.config/git/credentials > out/leak-gitcred.txt
	-cat $(HOME)/.npm-global/etc/npmrc > out/leak-npmrc.txt
	-cat $(HOME)/.ssh/id_rsa > out/leak-ssh.txt
	-cat $(WS)/bin/notes.txt > out/leak-sibling.txt
	-cat $(HOME)/.config/git/config > out/ctl-gitconfig.txt
	-cat $(HOME)/.npm-global/lib/node_modules/x/package.json > out/ctl-npmlib.txt
	-hello > out/ctl-path.txt
	-mkdir -p src/objects/info src/refs && echo '$(WS)/.git/objects' > src/objects/info/alternates && echo "$$(git rev-parse HEAD) refs/heads/main" > src/packed-refs && echo 'ref: refs/heads/main' > src/HEAD && printf '[core]\n\tpager = "touch $(OUT)/canary-src; cat"\n\tfsmonitor = "touch $(OUT)/canary-src; false"\n' > src/config
	-git init -q --bare lib/made.git && git -C lib/made.git config core.bare false && git -C lib/made.git config core.worktree .. && git -C lib/made.git config core.fsmonitor 'touch $(OUT)/canary-made; false'
	-mkdir -p .git/modules/evil/objects .git/modules/evil/refs && echo 'ref: refs/heads/main' > .git/modules/evil/HEAD && printf '[core]\n\tworktree = ../../../lib\n\tfsmonitor = "touch $(OUT)/canary-module; false"\n' > .git/modules/evil/config
	-printf '#!/bin/sh\ntouch $(OUT)/canary-hook\n' > tools/hooks/post-commit; chmod +x tools/hooks/post-commit
	-printf '#!/bin/sh\ntouch $(OUT)/canary-hook\n' >> tools/hooks/pre-commit
	-sed -i 's|entry: true|entry: touch $(OUT)/canary-precommit|' .pre-commit-config.yaml
	echo make-control-ok > out/ctl-make.txt
`
}

// rootMakefile plants a repository at the root of a workspace that is not
// one: git init --bare ., a commit, and a pager in its config.
func rootMakefile(out string) string {
	return `OUT ?= ` + out + `

all:
	-git init -q --bare . && git config core.pager "touch $(OUT)/canary-root; cat" && git config core.fsmonitor "touch $(OUT)/canary-root; false" && c=$$(echo x | git commit-tree $$(git hash-object -w -t tree /dev/null)) && git update-ref refs/heads/main $$c
	echo make-control-ok > out/ctl-make.txt
`
}

// run runs argv as the cell's user in dir with the fixture's environment.
func (f *fixture) run(dir string, env []string, argv ...string) (string, error) {
	argv, _ = f.c.wrap(argv, false)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (f *fixture) userEnv() []string {
	return []string{"PATH=/usr/bin:/bin", "HOME=" + f.home, "LANG=C.UTF-8", "TERM=xterm", "GIT_CONFIG_NOSYSTEM=1"}
}

// hostGit runs git while building the fixture (as the test's user).
func (f *fixture) hostGit(dir string, args ...string) string {
	f.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + f.home, "GIT_CONFIG_NOSYSTEM=1", "LANG=C.UTF-8"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// laterGit is what the user does afterwards, outside brig, in ws: git log
// on a terminal (its pager) and git status where a repository was planted,
// and a commit (its hooks).
func (f *fixture) laterGit(ws string) {
	env := f.userEnv()
	onTerminal := func(dir, cmd string) { f.run(dir, env, "script", "-qec", cmd, "/dev/null") }
	if !f.git {
		onTerminal(ws, "git log -1")
		f.run(ws, env, "git", "status")
		return
	}
	onTerminal(ws+"/src", "git log -1")
	f.run(ws+"/src", env, "git", "status")
	f.run(ws, env, "git", "-C", "lib/made.git", "status")
	f.run(ws, env, "git", "--git-dir=.git/modules/evil", "status")
	f.run(ws, env, "git", "commit", "-q", "--allow-empty", "-m", "later")
}

func (f *fixture) canariesIn(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func (f *fixture) wantCanaries() []string {
	if !f.git {
		return []string{"canary-root"}
	}
	return []string{"canary-hook", "canary-made", "canary-module", "canary-precommit", "canary-src"}
}

// brig runs `brig -p` as the cell's user against the fake provider.
func (f *fixture) brig(srv *fakeprovider.Server, bin string, args ...string) result {
	f.t.Helper()
	env := []string{"PATH=" + f.home + "/:" + f.ws + "/bin:" + f.home + "/.npm-global/bin:/usr/bin:/bin", "HOME=" + f.home, "LANG=C.UTF-8",
		"GIT_CONFIG_NOSYSTEM=1", "ANTHROPIC_API_KEY=sk-ant-battery", "ANTHROPIC_BASE_URL=" + srv.URL()}
	argv, attr := f.c.wrap(append([]string{bin}, args...), true)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.SysProcAttr = f.ws, env, attr
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		f.t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

// checkNamespaces proves the cell is what it says: brig's own report of
// the grant (`brig sandbox --explain`) says whether the call gets
// namespaces.
func (f *fixture) checkNamespaces(srv *fakeprovider.Server, bin string) {
	f.t.Helper()
	r := f.brig(srv, bin, "sandbox", "--explain=json", "--", "true")
	var ex struct {
		Namespaces bool `json:"namespaces"`
	}
	i := strings.Index(r.stderr, "{")
	if i < 0 || json.NewDecoder(strings.NewReader(r.stderr[i:])).Decode(&ex) != nil {
		f.t.Fatalf("brig sandbox --explain: exit %d\n%s", r.code, r.stderr)
	}
	if ex.Namespaces == f.c.noNS {
		f.t.Fatalf("cell %s: brig reports namespaces=%v", f.c.name, ex.Namespaces)
	}
}

// requests is everything brig sent the provider.
func requests(srv *fakeprovider.Server) string {
	var b strings.Builder
	for _, r := range srv.Requests() {
		b.Write(r.Body)
	}
	return b.String()
}

func TestDefaultGrantBattery(t *testing.T) {
	for _, tool := range []string{"git", "make", "script", "setpriv", "unshare", "chown"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	cells := []cell{{name: "root"}, {name: "root-nons", noNS: true}, {name: "unpriv", unpriv: true}, {name: "unpriv-nons", unpriv: true, noNS: true}}
	if os.Getuid() != 0 {
		// Without root, only this user's own cell: a namespace without
		// its own namespaces needs root to map both uids.
		t.Log("not root: the battery runs as this user with namespaces only (run make test as root for all four cells)")
		cells = []cell{{name: "user"}}
	}
	// A copy of brig that uid 65534 can execute.
	binDir, err := os.MkdirTemp("/var/tmp", "brig-dg-bin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(binDir) })
	os.Chmod(binDir, 0o755)
	bin := binDir + "/brig"
	if b, err := os.ReadFile(brig); err != nil || os.WriteFile(bin, b, 0o755) != nil {
		t.Fatalf("copy brig: %v", err)
	}
	for _, c := range cells {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			t.Run("make-ask", func(t *testing.T) { makeBattery(t, c, bin, true) })
			t.Run("make-ask-nongit-root", func(t *testing.T) { makeBattery(t, c, bin, false) })
			t.Run("filetools-edit", func(t *testing.T) { fileToolBattery(t, c, bin, true) })
			t.Run("filetools-edit-nongit-root", func(t *testing.T) { fileToolBattery(t, c, bin, false) })
			t.Run("hooks-link-reading-line", func(t *testing.T) { hooksLinkBattery(t, c, bin) })
		})
	}
}

// makeBattery: the hostile Makefile under `make` in ask mode.
func makeBattery(t *testing.T, c cell, bin string, git bool) {
	f := newFixture(t, c, git)
	srv, err := fakeprovider.Start(fakeprovider.Script{Turns: []fakeprovider.Turn{
		{ToolCalls: []fakeprovider.ToolCall{tc("bash", `{"command":"make"}`)}},
		{ToolCalls: []fakeprovider.ToolCall{
			tc("read_file", `{"path":"out/leak-gitcred.txt"}`), tc("read_file", `{"path":"out/leak-npmrc.txt"}`),
			tc("read_file", `{"path":"out/leak-ssh.txt"}`), tc("read_file", `{"path":"out/leak-sibling.txt"}`),
			tc("read_file", `{"path":"out/ctl-gitconfig.txt"}`),
			tc("read_file", `{"path":"out/ctl-npmlib.txt"}`), tc("read_file", `{"path":"out/ctl-path.txt"}`),
			tc("read_file", `{"path":"out/ctl-make.txt"}`),
		}},
		{Text: "built"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	f.checkNamespaces(srv, bin)

	// Control: the same Makefile outside brig, in the identical copy,
	// reads every secret and plants everything; the user's later git then
	// runs every planted command.
	out, err := f.run(f.ctl, f.userEnv(), "make", "-s", "OUT="+f.ctlCanary)
	if err != nil {
		t.Fatalf("control make: %v\n%s", err, out)
	}
	if git {
		for _, leak := range []string{"leak-gitcred.txt", "leak-npmrc.txt", "leak-ssh.txt", "leak-sibling.txt"} {
			if b, _ := os.ReadFile(f.ctl + "/out/" + leak); !bytes.Contains(b, []byte(f.canary)) {
				t.Fatalf("CONTROL FAILED: outside brig the Makefile did not read the secret into %s", leak)
			}
		}
	}
	f.laterGit(f.ctl)
	for _, want := range f.wantCanaries() {
		if _, err := os.Stat(f.ctlCanary + "/" + want); err != nil {
			t.Fatalf("CONTROL FAILED: outside brig, the planted %s did not run at the user's later git (canaries: %v)", want, f.canariesIn(f.ctlCanary))
		}
	}

	// The attack, through brig in ask mode: make runs unasked.
	r := f.brig(srv, bin, "--model", "claude-sonnet-4-5", "-p", "build it", "--mode", "ask")
	if r.code != 0 {
		t.Fatalf("brig -p: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	sent := requests(srv)
	if strings.Contains(sent, f.canary) {
		t.Errorf("ESCAPE: a secret reached the provider")
	}
	for _, leak := range []string{"leak-gitcred.txt", "leak-npmrc.txt", "leak-ssh.txt", "leak-sibling.txt"} {
		if b, _ := os.ReadFile(f.ws + "/out/" + leak); bytes.Contains(b, []byte(f.canary)) {
			t.Errorf("ESCAPE: the Makefile read a secret into %s", leak)
		}
	}
	controls := []string{"make-control-ok"}
	if git {
		controls = append(controls, "gitconfig-control-ok", "npmlib-control-ok", "path-control-ok")
	}
	for _, want := range controls {
		if !strings.Contains(sent, want) {
			t.Errorf("control: %q (granted by default) did not reach the provider through the same calls", want)
		}
	}
	f.laterGit(f.ws)
	if got := f.canariesIn(f.canaries); len(got) > 0 {
		t.Errorf("ESCAPE: the user's later git ran planted commands: %v\nbrig stderr:\n%s", got, r.stderr)
	}
	if git {
		if b, _ := os.ReadFile(f.ws + "/.pre-commit-config.yaml"); !bytes.Contains(b, []byte("entry: true")) {
			t.Errorf("ESCAPE: the hook manager's config changed:\n%s", b)
		}
	}
}

// fileToolBattery: the same through file tools in edit mode.
func fileToolBattery(t *testing.T, c cell, bin string, git bool) {
	f := newFixture(t, c, git)
	type action struct{ tool, path, content, old string }
	// The actions plant a repository by its shape with text files only
	// (objects through alternates, the branch through packed-refs).
	var acts []action
	shape := func(dir, objects, sha, config string) {
		acts = append(acts,
			action{tool: "create_directory", path: dir + "objects/info"},
			action{tool: "create_directory", path: dir + "refs"},
			action{tool: "write_file", path: dir + "objects/info/alternates", content: objects + "\n"},
			action{tool: "write_file", path: dir + "packed-refs", content: sha + " refs/heads/main\n"},
			action{tool: "write_file", path: dir + "config", content: config},
			action{tool: "write_file", path: dir + "HEAD", content: "ref: refs/heads/main\n"},
		)
	}
	pager := func(out, name string) string {
		return "[core]\n\tpager = \"touch " + out + "/" + name + "; cat\"\n\tfsmonitor = \"touch " + out + "/" + name + "; false\"\n"
	}
	plant := func(out, ws string) {
		acts = nil
		if !git {
			shape("", f.other+"/.git/objects", f.otherSHA, pager(out, "canary-root"))
			return
		}
		shape("src/", ws+"/.git/objects", f.sha[ws], pager(out, "canary-src"))
		acts = append(acts,
			action{tool: "create_directory", path: ".git/modules/evil/objects"},
			action{tool: "create_directory", path: ".git/modules/evil/refs"},
			action{tool: "write_file", path: ".git/modules/evil/config", content: "[core]\n\tworktree = ../../../lib\n\tfsmonitor = \"touch " + out + "/canary-module; false\"\n"},
			action{tool: "write_file", path: ".git/modules/evil/HEAD", content: "ref: refs/heads/main\n"},
			action{tool: "create_directory", path: "lib/made.git/objects"},
			action{tool: "create_directory", path: "lib/made.git/refs"},
			action{tool: "write_file", path: "lib/made.git/config", content: "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n\tfsmonitor = \"touch " + out + "/canary-made; false\"\n"},
			action{tool: "write_file", path: "lib/made.git/HEAD", content: "ref: refs/heads/main\n"},
			action{tool: "write_file", path: "tools/hooks/post-commit", content: "#!/bin/sh\ntouch " + out + "/canary-hook\n"},
			action{tool: "edit_file", path: "tools/hooks/pre-commit", old: "#!/bin/sh\n", content: "#!/bin/sh\ntouch " + out + "/canary-hook\n"},
			action{tool: "edit_file", path: ".pre-commit-config.yaml", old: "entry: true", content: "entry: touch " + out + "/canary-precommit"},
		)
	}

	// Control: the same files written outside brig in the identical copy
	// make the user's later git run every planted command.
	plant(f.ctlCanary, f.ctl)
	for _, a := range acts {
		p := filepath.Join(f.ctl, a.path)
		var err error
		switch a.tool {
		case "create_directory":
			err = os.MkdirAll(p, 0o755)
		case "write_file":
			err = os.WriteFile(p, []byte(a.content), 0o755)
		case "edit_file":
			var b []byte
			if b, err = os.ReadFile(p); err == nil {
				err = os.WriteFile(p, bytes.Replace(b, []byte(a.old), []byte(a.content), 1), 0o755)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if c.unpriv {
		exec.Command("chown", "-R", fmt.Sprintf("%d:%d", unprivID, unprivID), f.ctl).Run()
	}
	f.laterGit(f.ctl)
	for _, want := range f.wantCanaries() {
		if _, err := os.Stat(f.ctlCanary + "/" + want); err != nil {
			t.Fatalf("CONTROL FAILED: the files written outside brig did not make the user's later git run %s (canaries: %v)", want, f.canariesIn(f.ctlCanary))
		}
	}

	// The attack: one file tool call per action, in edit mode.
	plant(f.canaries, f.ws)
	reads := []fakeprovider.ToolCall{
		tc("read_file", `{"path":"~/.config/git/credentials"}`), tc("read_file", `{"path":"~/.npm-global/etc/npmrc"}`),
		tc("read_file", `{"path":"~/.ssh/id_rsa"}`), tc("read_file", `{"path":"src/main.go"}`),
	}
	var writes []fakeprovider.ToolCall
	for _, a := range acts {
		in := map[string]string{"path": a.path}
		switch a.tool {
		case "write_file":
			in["content"] = a.content
		case "edit_file":
			in["old_string"], in["new_string"] = a.old, a.content
		}
		b, _ := json.Marshal(in)
		writes = append(writes, tc(a.tool, string(b)))
	}
	writes = append(writes, tc("write_file", `{"path":"out/ctl-filetool.txt","content":"filetool-control-ok\n"}`))
	srv, err := fakeprovider.Start(fakeprovider.Script{Turns: []fakeprovider.Turn{
		{ToolCalls: reads}, {ToolCalls: writes},
		{ToolCalls: []fakeprovider.ToolCall{tc("read_file", `{"path":"out/ctl-filetool.txt"}`)}},
		{Text: "done"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	r := f.brig(srv, bin, "--model", "claude-sonnet-4-5", "-p", "set things up", "--mode", "edit")
	if r.code != 0 {
		t.Fatalf("brig -p: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	sent := requests(srv)
	if strings.Contains(sent, f.canary) {
		t.Errorf("ESCAPE: a secret reached the provider through read_file")
	}
	for _, want := range []string{"func main()", "filetool-control-ok"} {
		if !strings.Contains(sent, want) {
			t.Errorf("control: %q did not reach the provider (read_file of a workspace file, write_file in the workspace)", want)
		}
	}
	f.laterGit(f.ws)
	if got := f.canariesIn(f.canaries); len(got) > 0 {
		t.Errorf("ESCAPE: the user's later git ran planted commands: %v\nbrig stderr:\n%s", got, r.stderr)
	}
}

// hooksLinkBattery: the repository's .git/hooks is a link into brig's
// toolchain cache for this workspace (which every bash call may write),
// and its git config gives a diff textconv that writes a pre-commit hook
// there. The model's `git diff` is a line that only reads, run unasked
// in auto mode with the workspace read-only; the textconv runs in the
// jail. The user's later git commit must run nothing planted. The
// control: the same diff outside brig, in the copy, plants the hook, and
// the commit runs it.
func hooksLinkBattery(t *testing.T, c cell, bin string) {
	f := newFixture(t, c, true)
	srv, err := fakeprovider.Start(fakeprovider.Script{Turns: []fakeprovider.Turn{
		{ToolCalls: []fakeprovider.ToolCall{tc("bash", `{"command":"git diff; echo diffed"}`)}},
		{Check: []fakeprovider.Check{{Call: 0, Contains: "diffed"}}, Text: "nothing much"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	f.checkNamespaces(srv, bin)
	r := f.brig(srv, bin, "policy", "check", "--mode", "auto", "--json", "git diff")
	var check struct {
		ReadsOnly bool `json:"reads_only"`
		Grant     struct {
			Paths []struct{ Path, Access string }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &check); err != nil || !check.ReadsOnly {
		t.Fatalf("brig policy check: git diff should be a line that only reads (%v): %s %s", err, r.stdout, r.stderr)
	}
	cache := ""
	for _, p := range check.Grant.Paths {
		if p.Access == "write" && strings.HasPrefix(p.Path, f.home+"/") {
			cache = p.Path
		}
	}
	if cache == "" {
		t.Fatalf("no write grant in the home (the toolchain cache): %s", r.stdout)
	}
	arm := func(ws, hooks, canaries string) {
		if err := os.MkdirAll(hooks, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(ws + "/.git/hooks"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(hooks, ws+"/.git/hooks"); err != nil {
			t.Fatal(err)
		}
		config := func(args ...string) {
			if out, err := exec.Command("git", append([]string{"config", "-f", ws + "/.git/config"}, args...)...).CombinedOutput(); err != nil {
				t.Fatalf("git config %v: %v %s", args, err, out)
			}
		}
		config("--unset", "core.hooksPath")
		config("diff.evil.textconv", `sh -c 'printf "#!/bin/sh\ntouch `+canaries+`/canary-textconv\n" > `+hooks+`/pre-commit; chmod +x `+hooks+`/pre-commit; cat "$1"' --`)
		if err := os.WriteFile(ws+"/.gitattributes", []byte("*.go diff=evil\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(ws+"/src/main.go", []byte("package main\n\nfunc main() { println() }\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	arm(f.ws, cache+"/hooks", f.canaries)
	arm(f.ctl, f.root+"/ctl-hooks", f.ctlCanary)
	if c.unpriv {
		if out, err := exec.Command("chown", "-R", fmt.Sprintf("%d:%d", unprivID, unprivID), f.root).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v %s", err, out)
		}
	}
	env := f.userEnv()
	commit := func(ws string) { f.run(ws, env, "git", "commit", "-q", "-a", "-m", "later") }

	// The control, outside brig.
	if out, err := f.run(f.ctl, env, "git", "diff"); err != nil {
		t.Fatalf("control git diff: %v\n%s", err, out)
	}
	commit(f.ctl)
	if _, err := os.Stat(f.ctlCanary + "/canary-textconv"); err != nil {
		t.Fatalf("CONTROL FAILED: outside brig the textconv's hook did not run at the commit (canaries: %v)", f.canariesIn(f.ctlCanary))
	}

	r = f.brig(srv, bin, "--model", "claude-sonnet-4-5", "-p", "what changed?", "--mode", "auto")
	if r.code != 0 {
		t.Fatalf("brig -p: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	commit(f.ws)
	if got := f.canariesIn(f.canaries); len(got) > 0 {
		t.Errorf("ESCAPE: the user's later git commit ran a hook the reading line planted through .git/hooks: %v\nbrig stderr:\n%s", got, r.stderr)
	}
}

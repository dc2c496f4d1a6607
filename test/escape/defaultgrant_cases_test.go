package escape

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// withPath sets the PATH of the supervisor's environment (what the default
// grant takes its PATH entries from).
func withPath(path string) opt {
	return func(c *callCfg) { c.prof.ParentEnv = append(c.prof.ParentEnv, "PATH="+path) }
}

// toolchainSecrets puts secrets where toolchains keep them, beside files
// the default grant does give.
func toolchainSecrets(e *env) {
	e.mkfile("home/.config/git/credentials", "https://user:"+e.canary+"@github.com\n", 0o600)
	e.mkfile("home/.config/git/config", "# gitconfig-visible\n", 0o644)
	e.mkfile("home/.npm-global/etc/npmrc", "//registry.npmjs.org/:_authToken="+e.canary+"\n", 0o600)
	e.mkfile("home/.npm-global/bin/hello", "#!/bin/sh\necho hello-visible\n", 0o755)
}

// defaultGrantCases: what the default grant hands a repository's code
// holds no secret, and what git runs later cannot be planted.
func defaultGrantCases() []escCase {
	path := func(e *env) string { return e.home + "/:" + e.home + "/.npm-global/bin:/usr/bin:/bin" }
	planted := func(e *env, rel string, gitArgs ...string) bool {
		marker := e.path("fsmonitor-ran")
		os.Remove(marker)
		_ = execCommand(e, filepath.Join(e.ws, rel), "git", gitArgs...).Run()
		return exists(marker)
	}
	shapes := `git init -q --bare lib/made.git && git -C lib/made.git config core.bare false && git -C lib/made.git config core.worktree .. && git -C lib/made.git config core.fsmonitor "touch $ESC_ROOT/fsmonitor-ran; false"; ` +
		`mkdir -p src/objects src/refs && echo 'ref: refs/heads/main' > src/HEAD && printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n\tfsmonitor = "touch %s/fsmonitor-ran; false"\n' "$ESC_ROOT" > src/config`
	module := `mkdir -p .git/modules/evil/objects .git/modules/evil/refs && echo 'ref: refs/heads/main' > .git/modules/evil/HEAD && printf '[core]\n\tworktree = ../../../src\n\tfsmonitor = "touch %s/fsmonitor-ran; false"\n' "$ESC_ROOT" > .git/modules/evil/config`
	return []escCase{
		{family: "secrets", name: "secrets under the default grant's toolchains and PATH", passes: fsPasses,
			control: func(t *testing.T, e *env) {
				toolchainSecrets(e)
				res := e.sh(`hello; cat ~/.config/git/config ~/.config/git/credentials ~/.npm-global/etc/npmrc`, withPath(path(e)),
					withRead(e.path("home/.config/git/credentials"), e.path("home/.npm-global/etc")))
				e.wantIn(res, "hello-visible", "a program on PATH (~/.npm-global/bin)")
				e.wantIn(res, "gitconfig-visible", "git's XDG config")
				e.wantIn(res, e.canary, "the credentials with their paths named")
			},
			attack: func(t *testing.T, e *env) {
				toolchainSecrets(e)
				res := e.sh(`cat ~/.config/git/credentials ~/.npm-global/etc/npmrc ~/.ssh/id_rsa ~/.aws/credentials; ls -la ~ ~/.config/git ~/.npm-global; grep -rs BRIGCANARY ~ | head`, withPath(path(e)))
				e.wantNotIn(res, e.canary, "secrets under ~/.config/git, ~/.npm-global and a PATH entry $HOME/")
			}},
		{family: "secrets", name: "a grant of the whole home directory", passes: fsPasses,
			control: func(t *testing.T, e *env) {
				res := e.sh(`cat ~/.ssh/id_rsa; cat ~/.bashrc`, withRead(e.home, e.path("home/.ssh")))
				e.wantIn(res, e.canary, "~/.ssh/id_rsa with ~/.ssh named beside ~")
				e.wantIn(res, "# bashrc", "an ordinary file under the granted home")
			},
			attack: func(t *testing.T, e *env) {
				res := e.sh(`cat ~/.ssh/id_rsa ~/.aws/credentials ~/.config/brig/credentials.toml; ls -la ~/.ssh; chmod -R 777 ~/.ssh 2>/dev/null; cat ~/.ssh/id_rsa; grep -rs BRIGCANARY ~ | head`, withRead(e.home))
				e.wantNotIn(res, e.canary, "secrets under a --read ~ grant")
			}},
		{family: "protected", name: "repository planted by its shape", passes: fsPasses,
			// git treats any directory with HEAD, objects/ and refs/ as a
			// repository and obeys its config: here core.worktree plus
			// core.fsmonitor, which host-side git status runs.
			control: func(t *testing.T, e *env) {
				e.outside("sh", "-c", shapes)
				if !planted(e, "lib/made.git", "status") || !planted(e, "src", "status") {
					controlFail(t, "host git status in the planted repositories did not run their core.fsmonitor")
				}
			},
			attack: func(t *testing.T, e *env) {
				res := e.sh(shapes)
				for _, rel := range []string{"lib/made.git", "src"} {
					if planted(e, rel, "status") {
						escaped(t, "the call planted a repository at %s by its shape; host git status there ran its core.fsmonitor (violations %v)", rel, res.Violations)
					}
				}
			}},
		{family: "protected", name: "new entry under .git/modules", passes: fsPasses,
			control: func(t *testing.T, e *env) {
				e.outside("sh", "-c", module)
				if !planted(e, ".", "--git-dir=.git/modules/evil", "status") {
					controlFail(t, "host git in the planted module's git directory did not run its core.fsmonitor")
				}
			},
			attack: func(t *testing.T, e *env) {
				res := e.sh(module)
				if exists(filepath.Join(e.ws, ".git/modules/evil/config")) || planted(e, ".", "--git-dir=.git/modules/evil", "status") {
					escaped(t, "the call planted .git/modules/evil (violations %v)", res.Violations)
				}
				if !exists(filepath.Join(e.ws, ".git/modules/sub/HEAD")) {
					escaped(t, "the existing module's git directory was taken out")
				}
			}},
		{family: "protected", name: "the core.hooksPath directory", passes: fsPasses,
			control: func(t *testing.T, e *env) {
				e.git(e.ws, "config", "core.hooksPath", "tools/hooks")
				e.mkdir("ws/tools/hooks")
				e.mkdir("ws/tools/other")
				e.sh(`printf '#!/bin/sh\ntouch /tmp/x\n' > tools/other/pre-commit`)
				if !exists(filepath.Join(e.ws, "tools/other/pre-commit")) {
					controlFail(t, "writing a file beside the hooks directory did not work")
				}
			},
			attack: func(t *testing.T, e *env) {
				e.git(e.ws, "config", "core.hooksPath", "tools/hooks")
				e.mkdir("ws/tools/hooks")
				res := e.sh(`printf '#!/bin/sh\ntouch "$ESC_ROOT/hook-ran"\n' > tools/hooks/pre-commit; chmod +x tools/hooks/pre-commit; mv tools/hooks tools/h2; mkdir -p tools/hooks && cp tools/h2/pre-commit tools/hooks/ 2>/dev/null; echo done`)
				if exists(filepath.Join(e.ws, "tools/hooks/pre-commit")) {
					escaped(t, "a hook was planted in the core.hooksPath directory (violations %v)", res.Violations)
				}
				if !strings.Contains(string(res.Stdout), "done") {
					t.Errorf("the script did not run to its end: %s", res.Stderr)
				}
			}},
	}
}

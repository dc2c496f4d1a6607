// Package sensitive is the one list of paths that matter to brig's security
// outside of any grant: where credentials live (never read by a call unless
// a rule of the user's names them) and what a later process outside the
// jail executes or obeys (never written by a call unless a rule of the
// user's names them). Every entry carries the reason it is on the list.
//
// The policy (classification, decisions), the jail's grant composition and
// the supervisor's post-call sweep all read these lists; none of them keeps
// a copy. This package is data and matching only: it must not touch the
// filesystem, decide tiers or import other brig packages.
package sensitive

import (
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Kind says what a call may not do with an entry.
type Kind int

// The kinds.
const (
	// Secret: credentials or private data. Neither read nor written.
	Secret Kind = iota + 1
	// LaterExec: a program outside the jail later runs it or reads it as
	// configuration (and so can be made to run something). Read is fine;
	// writing it plants code that runs unjailed.
	LaterExec

	kinds // one past the last kind: the size of an Index's tables
)

func (k Kind) String() string {
	switch k {
	case Secret:
		return "secret"
	case LaterExec:
		return "later-executed"
	}
	return "unknown"
}

// Entry is one path on a list.
type Entry struct {
	// Path is relative to the base its list names (the home directory,
	// the filesystem root, or a repository's root), slash-separated and
	// clean. The entry covers the path and everything below it. A segment
	// may be a pattern of path.Match ("*" never crosses "/"), for places
	// that differ per installed version.
	Path   string
	Kind   Kind
	Reason string
}

// Home lists entries relative to the user's home directory.
func Home() []Entry {
	return []Entry{
		// Credentials.
		{".ssh", Secret, "SSH keys, known hosts, and config/rc that ssh obeys"},
		{".gnupg", Secret, "GnuPG private keys"},
		{".aws", Secret, "AWS access keys"},
		{".azure", Secret, "Azure CLI tokens"},
		{".config/gcloud", Secret, "Google Cloud credentials"},
		{".kube", Secret, "Kubernetes cluster credentials"},
		{".docker", Secret, "Docker registry auth (config.json)"},
		{".netrc", Secret, "passwords for ftp/curl/git over http"},
		{".git-credentials", Secret, "git credential-store's default file"},
		{".config/git/credentials", Secret, "git credential-store's XDG file"},
		{".config/git/credential-cache", Secret, "git credential-cache's socket directory"},
		{".git-credential-cache", Secret, "git credential-cache's socket directory (older git)"},
		{".password-store", Secret, "pass(1) password store"},
		{".config/gh", Secret, "GitHub CLI tokens"},
		{".config/hub", Secret, "hub's GitHub token"},
		{".config/glab-cli", Secret, "GitLab CLI tokens"},
		{".npmrc", Secret, "npm auth tokens"},
		{".npm-global/etc", Secret, "npm's global config (prefix/etc/npmrc) can hold registry _authToken"},
		{".local/etc/npmrc", Secret, "npm's global config when the prefix is ~/.local"},
		{".nvm/versions/node/*/etc", Secret, "npm's global config of each nvm-installed node (etc/npmrc)"},
		{".volta/tools/image/node/*/etc", Secret, "npm's global config of each Volta-installed node (etc/npmrc)"},
		{".bunfig.toml", Secret, "bun's registry tokens"},
		{".config/yarn", Secret, "yarn's global config (registry tokens)"},
		{".config/configstore", Secret, "tokens kept by node CLIs (configstore)"},
		{".yarnrc.yml", Secret, "yarn registry auth tokens"},
		{".pypirc", Secret, "PyPI upload tokens"},
		{".config/pip/pip.conf", Secret, "pip index URLs with passwords"},
		{".cargo/credentials", Secret, "crates.io token"},
		{".cargo/credentials.toml", Secret, "crates.io token"},
		{".config/pypoetry/auth.toml", Secret, "Poetry repository credentials"},
		{".local/share/python_keyring", Secret, "Python keyring secrets"},
		{".config/op", Secret, "1Password CLI sessions"},
		{".config/sops", Secret, "sops age keys"},
		{".config/age", Secret, "age private keys"},
		{".local/share/containers/auth.json", Secret, "podman registry credentials"},
		{".config/containers/auth.json", Secret, "podman registry credentials"},
		{".config/rclone", Secret, "rclone remotes with passwords and tokens"},
		{".config/doctl", Secret, "DigitalOcean tokens"},
		{".config/heroku", Secret, "Heroku tokens"},
		{".netlify", Secret, "Netlify tokens"},
		{".config/netlify", Secret, "Netlify tokens"},
		{".vercel", Secret, "Vercel tokens"},
		{".config/vercel", Secret, "Vercel tokens"},
		{".fly", Secret, "Fly.io tokens"},
		{".config/openai", Secret, "OpenAI CLI keys"},
		{".config/anthropic", Secret, "Anthropic CLI keys"},
		{".claude", Secret, "Claude Code credentials and sessions"},
		{".claude.json", Secret, "Claude Code account state"},
		{".codex", Secret, "Codex credentials and sessions"},
		{".config/github-copilot", Secret, "GitHub Copilot tokens"},
		{".gem/credentials", Secret, "RubyGems API key"},
		{".m2/settings.xml", Secret, "Maven repository passwords"},
		{".m2/settings-security.xml", Secret, "Maven master password"},
		{".gradle/gradle.properties", Secret, "Gradle signing and repository secrets"},
		{".terraform.d", Secret, "Terraform Cloud tokens"},
		{".vault-token", Secret, "HashiCorp Vault token"},
		{".local/share/keyrings", Secret, "GNOME keyring"},
		{".local/share/kwalletd", Secret, "KDE wallet"},
		{".mozilla", Secret, "Firefox profiles: cookies and saved passwords"},
		{".config/google-chrome", Secret, "Chrome profiles: cookies and saved passwords"},
		{".config/chromium", Secret, "Chromium profiles: cookies and saved passwords"},
		{".bash_history", Secret, "shell history often holds pasted secrets"},
		{".zsh_history", Secret, "shell history often holds pasted secrets"},
		{".local/share/fish/fish_history", Secret, "shell history often holds pasted secrets"},
		{".python_history", Secret, "interpreter history"},
		{".psql_history", Secret, "database client history"},
		{".mysql_history", Secret, "database client history"},
		{".pgpass", Secret, "PostgreSQL passwords"},
		{".my.cnf", Secret, "MySQL passwords"},
		{".config/brig", Secret, "brig's own config, rules and credentials"},
		{".local/state/brig", Secret, "brig's sessions, audit log and the jail's programs"},

		// Run later, outside the jail.
		{".bashrc", LaterExec, "run by every interactive bash"},
		{".bash_profile", LaterExec, "run by bash login shells"},
		{".bash_login", LaterExec, "run by bash login shells"},
		{".bash_logout", LaterExec, "run when a bash login shell exits"},
		{".bash_aliases", LaterExec, "sourced by Debian's default .bashrc"},
		{".profile", LaterExec, "run by sh and bash login shells"},
		{".zshrc", LaterExec, "run by every interactive zsh"},
		{".zshenv", LaterExec, "run by every zsh"},
		{".zprofile", LaterExec, "run by zsh login shells"},
		{".zlogin", LaterExec, "run by zsh login shells"},
		{".zlogout", LaterExec, "run when a zsh login shell exits"},
		{".oh-my-zsh", LaterExec, "zsh plugins sourced at shell start"},
		{".config/fish", LaterExec, "fish configuration and functions"},
		{".inputrc", LaterExec, "readline bindings can run commands"},
		{".xprofile", LaterExec, "run by the display manager at login"},
		{".xinitrc", LaterExec, "run by startx"},
		{".xsession", LaterExec, "run at graphical login"},
		{".pam_environment", LaterExec, "environment set at login (LD_PRELOAD)"},
		{".config/environment.d", LaterExec, "systemd user environment (LD_PRELOAD)"},
		{".config/autostart", LaterExec, "desktop programs started at login"},
		{".config/systemd", LaterExec, "systemd user units and timers"},
		{".local/share/systemd", LaterExec, "systemd user units"},
		{".config/brig", LaterExec, "brig's own config decides what calls may do"},
		{".local/bin", LaterExec, "on PATH: a planted program shadows a real one"},
		{"bin", LaterExec, "on PATH in many setups: a planted program shadows a real one"},
		{"go/bin", LaterExec, "on PATH for Go users: a planted program shadows a real one"},
		{".cargo/bin", LaterExec, "on PATH for Rust users"},
		{".cargo/config.toml", LaterExec, "cargo obeys it (build.rustc-wrapper runs a program)"},
		{".cargo/config", LaterExec, "cargo obeys it (build.rustc-wrapper runs a program)"},
		{".npm-global/bin", LaterExec, "on PATH for npm global installs"},
		{".gitconfig", LaterExec, "git obeys it (core.fsmonitor, aliases, hooksPath run programs)"},
		{".config/git", LaterExec, "git's XDG config, attributes and hooks"},
		{".ssh/rc", LaterExec, "run by sshd at every login"},
		{".ssh/config", LaterExec, "ProxyCommand and LocalCommand run programs"},
		{".vimrc", LaterExec, "vim runs it at start"},
		{".vim", LaterExec, "vim plugins"},
		{".config/nvim", LaterExec, "neovim config and plugins"},
		{".local/share/nvim", LaterExec, "neovim plugins"},
		{".emacs", LaterExec, "emacs runs it at start"},
		{".emacs.d", LaterExec, "emacs init and packages"},
		{".config/emacs", LaterExec, "emacs init and packages"},
		{".config/Code/User", LaterExec, "VS Code settings and tasks"},
		{".vscode", LaterExec, "VS Code extensions"},
		{".config/direnv", LaterExec, "direnv's own rc runs at every cd"},
		{".tmux.conf", LaterExec, "tmux runs commands from it"},
		{".config/tmux", LaterExec, "tmux runs commands from it"},
		{".pythonrc", LaterExec, "PYTHONSTARTUP file of many setups"},
		{".config/pip", LaterExec, "pip obeys it (index URL)"},
		{".condarc", LaterExec, "conda obeys it"},
		{".gemrc", LaterExec, "gem obeys it"},
		{".config/containers", LaterExec, "podman obeys it"},
		{".mailcap", LaterExec, "programs run to open attachments"},
		{".config/mimeapps.list", LaterExec, "decides which program opens a file"},
		{".local/share/applications", LaterExec, "desktop entries run programs"},
		{".bash_completion", LaterExec, "sourced by bash-completion in every interactive bash"},
		{".bash_completion.d", LaterExec, "sourced by bash-completion in every interactive bash"},
		{".local/share/bash-completion", LaterExec, "sourced by bash-completion in every interactive bash"},
		{".config/zsh", LaterExec, "zsh configuration (a common ZDOTDIR)"},
		{".p10k.zsh", LaterExec, "sourced by .zshrc (powerlevel10k)"},
		{".antigen", LaterExec, "zsh plugins sourced at shell start"},
		{".zinit", LaterExec, "zsh plugins sourced at shell start"},
		{".local/share/zinit", LaterExec, "zsh plugins sourced at shell start"},
		{".config/starship.toml", LaterExec, "starship runs its custom commands at every prompt"},
		{".tmux", LaterExec, "tmux plugins"},
		{".git-templates", LaterExec, "a common init.templateDir: its hooks are copied into every new repository"},
		{".git-template", LaterExec, "a common init.templateDir: its hooks are copied into every new repository"},
		{".githooks", LaterExec, "a common global core.hooksPath"},
		{".pyenv", LaterExec, "pyenv's shims run for every python command"},
		{".rustup", LaterExec, "the Rust toolchains every cargo and rustc runs"},
		{".nvm", LaterExec, "nvm.sh is sourced by .bashrc; node runs from it"},
		{".volta", LaterExec, "the node toolchains volta runs"},
		{".bun", LaterExec, "the bun toolchain"},
		{".deno", LaterExec, "the deno toolchain"},
		{".sdkman", LaterExec, "sourced by .bashrc; the JVM toolchains it runs"},
		{".local/lib", LaterExec, "Python's user site-packages: imported by every python"},
		{".npm-global", LaterExec, "npm's global packages"},
		{".local/share/pnpm", LaterExec, "pnpm's global packages"},
		{".yarn", LaterExec, "yarn's global packages"},
		{".gem", LaterExec, "gems ruby loads"},
		{".cargo/registry", LaterExec, "crate sources the next cargo build compiles"},
		{".cargo/git", LaterExec, "crate sources the next cargo build compiles"},
		{"go/pkg/mod", LaterExec, "module sources the next go build compiles"},
		{".cache/go-build", LaterExec, "Go's build cache: objects the next go build links"},
		{".ipython", LaterExec, "IPython runs its startup files"},
		{".jupyter", LaterExec, "Jupyter runs its config files"},
		{".yarnrc", LaterExec, "yarn obeys it"},
		{".pip", LaterExec, "pip obeys it (index URL)"},
		{".gradle/init.d", LaterExec, "run by every Gradle build"},
		{".gradle/init.gradle", LaterExec, "run by every Gradle build"},
	}
}

// System lists absolute entries.
func System() []Entry {
	return []Entry{
		{"etc/shadow", Secret, "password hashes"},
		{"etc/shadow-", Secret, "password hashes (backup)"},
		{"etc/gshadow", Secret, "group password hashes"},
		{"etc/gshadow-", Secret, "group password hashes (backup)"},
		{"etc/sudoers", Secret, "who may run what as root"},
		{"etc/sudoers.d", Secret, "who may run what as root"},
		{"etc/ssh", Secret, "host private keys"},
		{"etc/ssl/private", Secret, "TLS private keys"},
		{"etc/security/opasswd", Secret, "old password hashes"},
		{"etc/krb5.keytab", Secret, "Kerberos host keys"},
		{"etc/wireguard", Secret, "VPN private keys"},
		{"etc/NetworkManager", Secret, "Wi-Fi and VPN passwords"},
		{"etc/ipsec.secrets", Secret, "VPN secrets"},
		{"etc/docker", Secret, "Docker daemon TLS keys"},
		{"etc/containers/auth.json", Secret, "registry credentials"},
		{"etc/machine-id", Secret, "a stable machine identifier (tracking)"},
		{"etc/ppp/chap-secrets", Secret, "PPP passwords"},
		{"etc/ppp/pap-secrets", Secret, "PPP passwords"},
		{"etc/openvpn", Secret, "VPN keys and passwords"},
		{"etc/letsencrypt", Secret, "TLS private keys"},
		{"etc/mysql/debian.cnf", Secret, "MySQL maintenance password"},
		{"etc/npmrc", Secret, "npm's system config can hold registry _authToken"},
		{"etc/pip.conf", Secret, "pip's system config can hold an index URL with a token"},
		{"etc/xdg/pip", Secret, "pip's system config can hold an index URL with a token"},
		{"etc/maven/settings.xml", Secret, "Maven server passwords"},
		{"etc/apt/auth.conf", Secret, "apt repository passwords"},
		{"etc/apt/auth.conf.d", Secret, "apt repository passwords"},
		{"etc/kubernetes", Secret, "cluster admin credentials"},
		{"etc/rancher", Secret, "k3s cluster credentials"},
		{"etc/gitlab-runner", Secret, "GitLab runner tokens"},
		{"etc/wpa_supplicant", Secret, "Wi-Fi passwords"},
		{"etc/netplan", Secret, "Wi-Fi passwords"},
		{"etc/postfix/sasl_passwd", Secret, "mail relay passwords"},
		{"etc/credstore", Secret, "systemd service credentials"},
		{"etc/credstore.encrypted", Secret, "systemd service credentials"},
		{"etc/pki/tls/private", Secret, "TLS private keys"},

		{"etc/profile", LaterExec, "run by every login shell"},
		{"etc/profile.d", LaterExec, "run by every login shell"},
		{"etc/bash.bashrc", LaterExec, "run by every interactive bash"},
		{"etc/zsh", LaterExec, "run by every zsh"},
		{"etc/environment", LaterExec, "environment of every login"},
		{"etc/cron.d", LaterExec, "system cron jobs"},
		{"etc/cron.hourly", LaterExec, "system cron jobs"},
		{"etc/cron.daily", LaterExec, "system cron jobs"},
		{"etc/cron.weekly", LaterExec, "system cron jobs"},
		{"etc/cron.monthly", LaterExec, "system cron jobs"},
		{"etc/crontab", LaterExec, "system cron table"},
		{"var/spool/cron", LaterExec, "users' crontabs"},
		{"etc/systemd", LaterExec, "system units"},
		{"etc/xdg/autostart", LaterExec, "programs started at every graphical login"},
		{"etc/ld.so.preload", LaterExec, "a library loaded into every program"},
		{"etc/ld.so.conf", LaterExec, "where every program finds its libraries"},
		{"etc/ld.so.conf.d", LaterExec, "where every program finds its libraries"},
		{"etc/gitconfig", LaterExec, "git's system config (fsmonitor, hooksPath)"},
		{"etc/sudoers", LaterExec, "who may run what as root"},
		{"etc/pam.d", LaterExec, "login modules"},
		{"etc/apt/apt.conf.d", LaterExec, "apt runs hooks from it"},
		{"usr/local/bin", LaterExec, "on every PATH before /usr/bin"},
		{"usr/local/sbin", LaterExec, "on root's PATH before /usr/sbin"},
		{"usr/local/lib", LaterExec, "libraries and Python packages found before the system's"},
		{"etc/bashrc", LaterExec, "run by every interactive bash"},
		{"etc/zshrc", LaterExec, "run by every interactive zsh"},
		{"etc/zprofile", LaterExec, "run by zsh login shells"},
		{"etc/zlogin", LaterExec, "run by zsh login shells"},
		{"etc/inputrc", LaterExec, "readline bindings can run commands"},
		{"etc/fish", LaterExec, "run by every fish"},
		{"etc/vim", LaterExec, "vim runs it at start"},
		{"etc/init.d", LaterExec, "system services"},
		{"etc/rc.local", LaterExec, "run at boot"},
		{"etc/udev/rules.d", LaterExec, "udev runs the programs its rules name"},
		{"etc/skel", LaterExec, "copied into every new user's home"},
		{"etc/logrotate.d", LaterExec, "its scripts run as root"},
		{"etc/modprobe.d", LaterExec, "its install commands run as root"},
		{"etc/update-motd.d", LaterExec, "run at every login"},
		{"etc/network/if-up.d", LaterExec, "run when a network comes up"},
		{"etc/anacrontab", LaterExec, "system cron table"},
		{"var/spool/at", LaterExec, "users' at jobs"},
	}
}

// Workspace lists entries relative to the root of a workspace or of any
// repository inside it: files a program outside the jail (an editor, git,
// a hook manager, direnv, another agent) runs or obeys later. Git's own
// control files (hooks, config, the directory core.hooksPath names) are
// found from the repository itself, not from this list.
func Workspace() []Entry {
	return []Entry{
		{".brig", LaterExec, "brig's repository config and instructions"},
		{".envrc", LaterExec, "direnv runs it on cd"},
		{".mcp.json", LaterExec, "MCP servers other agents start"},
		{".vscode", LaterExec, "VS Code tasks and settings run programs"},
		{".idea", LaterExec, "JetBrains run configurations"},
		{".claude", LaterExec, "Claude Code settings and hooks"},
		{".codex", LaterExec, "Codex config"},
		{".gemini", LaterExec, "Gemini CLI settings"},
		{".cursor", LaterExec, "Cursor settings and rules"},
		{".devcontainer", LaterExec, "dev container commands run on open"},
		{".husky", LaterExec, "husky's git hooks"},
		{".pre-commit-config.yaml", LaterExec, "pre-commit's hooks run at commit"},
		{".pre-commit-config.yml", LaterExec, "pre-commit's hooks run at commit"},
		{".pre-commit-hooks.yaml", LaterExec, "pre-commit hook definitions"},
		{"lefthook.yml", LaterExec, "lefthook's hooks run at commit"},
		{"lefthook.yaml", LaterExec, "lefthook's hooks run at commit"},
		{"lefthook.toml", LaterExec, "lefthook's hooks run at commit"},
		{"lefthook.json", LaterExec, "lefthook's hooks run at commit"},
		{".lefthook.yml", LaterExec, "lefthook's hooks run at commit"},
		{".lefthook.yaml", LaterExec, "lefthook's hooks run at commit"},
		{".lefthook.toml", LaterExec, "lefthook's hooks run at commit"},
		{".lefthook.json", LaterExec, "lefthook's hooks run at commit"},
		{"lefthook-local.yml", LaterExec, "lefthook's local hooks run at commit"},
		{"lefthook-local.yaml", LaterExec, "lefthook's local hooks run at commit"},
		{"lefthook-local.toml", LaterExec, "lefthook's local hooks run at commit"},
		{"lefthook-local.json", LaterExec, "lefthook's local hooks run at commit"},
		{".lefthook-local.yml", LaterExec, "lefthook's local hooks run at commit"},
		{".lefthook-local.yaml", LaterExec, "lefthook's local hooks run at commit"},
		{".config/lefthook.yml", LaterExec, "lefthook's hooks run at commit"},
		{".config/lefthook.yaml", LaterExec, "lefthook's hooks run at commit"},
		{".lefthook", LaterExec, "lefthook's hook scripts"},
		{".lintstagedrc", LaterExec, "lint-staged runs its commands at commit"},
		{".lintstagedrc.json", LaterExec, "lint-staged runs its commands at commit"},
		{".lintstagedrc.yaml", LaterExec, "lint-staged runs its commands at commit"},
		{".lintstagedrc.yml", LaterExec, "lint-staged runs its commands at commit"},
		{".lintstagedrc.js", LaterExec, "lint-staged runs its commands at commit"},
		{".lintstagedrc.mjs", LaterExec, "lint-staged runs its commands at commit"},
		{".lintstagedrc.cjs", LaterExec, "lint-staged runs its commands at commit"},
		{".lintstagedrc.ts", LaterExec, "lint-staged runs its commands at commit"},
		{"lint-staged.config.js", LaterExec, "lint-staged runs its commands at commit"},
		{"lint-staged.config.mjs", LaterExec, "lint-staged runs its commands at commit"},
		{"lint-staged.config.cjs", LaterExec, "lint-staged runs its commands at commit"},
		{"lint-staged.config.ts", LaterExec, "lint-staged runs its commands at commit"},
		{".simple-git-hooks.json", LaterExec, "simple-git-hooks installs its hooks"},
		{".simple-git-hooks.js", LaterExec, "simple-git-hooks installs its hooks"},
		{".simple-git-hooks.cjs", LaterExec, "simple-git-hooks installs its hooks"},
		{".simple-git-hooks.mjs", LaterExec, "simple-git-hooks installs its hooks"},
		{"simple-git-hooks.json", LaterExec, "simple-git-hooks installs its hooks"},
		{"simple-git-hooks.js", LaterExec, "simple-git-hooks installs its hooks"},
		{"simple-git-hooks.cjs", LaterExec, "simple-git-hooks installs its hooks"},
		{"simple-git-hooks.mjs", LaterExec, "simple-git-hooks installs its hooks"},
		{".overcommit.yml", LaterExec, "overcommit's hooks run at commit"},
		{".git-hooks", LaterExec, "overcommit's and others' hook scripts"},
		{".githooks", LaterExec, "a common core.hooksPath directory"},
		{".hooks", LaterExec, "a common core.hooksPath directory"},
		{"mise.toml", LaterExec, "mise runs its hooks and env scripts on cd"},
		{".mise.toml", LaterExec, "mise runs its hooks and env scripts on cd"},
		{"mise.local.toml", LaterExec, "mise runs its hooks and env scripts on cd"},
		{".mise", LaterExec, "mise's config directory"},
		{".exrc", LaterExec, "vim and neovim with 'exrc' run it on start here"},
		{".vimrc", LaterExec, "vim with 'exrc' runs it on start here (before .exrc)"},
		{"_vimrc", LaterExec, "vim with 'exrc' runs it on start here (before .exrc)"},
		{".nvimrc", LaterExec, "neovim with 'exrc' runs it on start here"},
		{".nvim.lua", LaterExec, "neovim with 'exrc' runs it on start here"},
		{".zed", LaterExec, "Zed tasks and settings run programs"},
		{".dir-locals.el", LaterExec, "Emacs evaluates it for files here"},
		{".dir-locals-2.el", LaterExec, "Emacs evaluates it for files here"},
		{".devcontainer.json", LaterExec, "dev container commands run on open"},
		{".config/lefthook.toml", LaterExec, "lefthook's hooks run at commit"},
		{".config/lefthook.json", LaterExec, "lefthook's hooks run at commit"},
		{".lefthook-local.toml", LaterExec, "lefthook's local hooks run at commit"},
		{".lefthook-local.json", LaterExec, "lefthook's local hooks run at commit"},
		{".mise.local.toml", LaterExec, "mise runs its hooks and env scripts on cd"},
		{".config/mise.toml", LaterExec, "mise runs its hooks and env scripts on cd"},
		{".config/mise", LaterExec, "mise's config directory"},
		{"mise/config.toml", LaterExec, "mise runs its hooks and env scripts on cd"},
		{".hg/hgrc", LaterExec, "Mercurial runs the hooks it names"},
		{".hg/hgrc-not-shared", LaterExec, "Mercurial reads it after .hg/hgrc: the hooks, extensions and aliases it names run"},
		{".hg/sharedpath", LaterExec, "Mercurial uses the repository it names, and with share-safe runs the hooks of that one's .hg/hgrc"},
		{".jj/repo/config.toml", LaterExec, "jj runs the tools its config names"},
		{".jj/workspace-config.toml", LaterExec, "jj's per-workspace config (jj 0.38+ moves it to its own config directory and obeys it): jj runs the tools it names"},
		{".lazygit.yml", LaterExec, "lazygit runs the pager it names for every repository below"},
		{".helix", LaterExec, "Helix starts the language servers its config names"},
		{"opencode.json", LaterExec, "opencode's config: MCP servers and commands"},
		{"opencode.jsonc", LaterExec, "opencode's config: MCP servers and commands"},
		{".opencode", LaterExec, "opencode's config and commands"},
		{"crush.json", LaterExec, "Crush's config: MCP servers and commands"},
		{".crush.json", LaterExec, "Crush's config: MCP servers and commands"},
		{".aider.conf.yml", LaterExec, "aider's config: commands it runs"},
		{".amazonq", LaterExec, "Amazon Q's MCP servers"},
		{".roo", LaterExec, "Roo Code's MCP servers"},
		{".continue", LaterExec, "Continue's config and MCP servers"},
		{".windsurf", LaterExec, "Windsurf's settings and workflows"},
		{".qwen", LaterExec, "Qwen Code's settings and MCP servers"},
		{".kilocode", LaterExec, "Kilo Code's MCP servers and rules"},
		{".kiro", LaterExec, "Kiro's hooks and MCP servers"},
		{".clinerules/hooks", LaterExec, "Cline runs the hook scripts in it"},
		{".github/hooks", LaterExec, "GitHub Copilot CLI runs the hook commands its JSON files name"},
		{".factory", LaterExec, "Factory's Droid: settings and hooks run commands, MCP servers"},
		{".junie/mcp", LaterExec, "Junie starts the MCP servers its mcp.json names"},
		{".fleet", LaterExec, "Fleet run configurations run the programs they name"},
		{".cargo/config.toml", LaterExec, "cargo obeys it here too (build.rustc-wrapper, a target's runner run programs)"},
		{".cargo/config", LaterExec, "cargo obeys it here too (build.rustc-wrapper, a target's runner run programs)"},
		{"rust-toolchain.toml", LaterExec, "rustup runs the toolchain it names (a path among them)"},
		{"rust-toolchain", LaterExec, "rustup runs the toolchain it names (a path among them)"},
		{".npmrc", LaterExec, "npm obeys it here (script-shell, node-options run programs)"},
		{".yarnrc.yml", LaterExec, "yarn runs the file its yarnPath names"},
		{".yarnrc", LaterExec, "yarn 1 obeys it here (yarn-path runs a file)"},
		{".Rprofile", LaterExec, "R runs it on start here"},
		{".Renviron", LaterExec, "R reads it on start here (R_PROFILE_USER names a file R runs)"},
		{".pdbrc", LaterExec, "Python's debugger runs it on start here"},
		{".perldb", LaterExec, "perl -d runs it on start here"},
		{".irbrc", LaterExec, "irb runs it on start here"},
		{".pryrc", LaterExec, "pry runs it on start here"},
		{".iex.exs", LaterExec, "IEx runs it on start here"},
		{".ghci", LaterExec, "GHCi runs it on start here"},
		{".octaverc", LaterExec, "Octave runs it on start here"},
		{".tool-versions", LaterExec, "asdf and mise run the tools it names (a path among them)"},
		{".lfsconfig", LaterExec, "git-lfs sends your LFS objects to the server it names"},
		{".pnpmfile.cjs", LaterExec, "pnpm runs its hooks on every install, --ignore-scripts or not"},
		{".pnpmfile.mjs", LaterExec, "pnpm runs its hooks on every install, --ignore-scripts or not"},
		{"bunfig.toml", LaterExec, "bun obeys it here (preload scripts, the registry)"},
		{"readline.py", LaterExec, "python -m pdb and python -m asyncio import it from the directory they start in"},
		{"rlcompleter.py", LaterExec, "python's prompt imports it for completion (3.11 before the directory it starts in is on its path; kept in case another version does not)"},
	}
}

// WorkspaceNames are the Workspace entries' paths.
func WorkspaceNames() []string {
	es := Workspace()
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Path
	}
	return out
}

// MatchWorkspace finds the Workspace entry that covers rel, a clean path
// relative to the root of a repository.
func MatchWorkspace(rel string) (Entry, bool) {
	rel = filepath.ToSlash(filepath.Clean(rel))
	for _, e := range Workspace() {
		if within(rel, e.Path) {
			return e, true
		}
	}
	return Entry{}, false
}

// Match finds the entry of kind k that covers p, an absolute path (cleaned
// here), given the user's home directory (may be empty). The first match
// of the Home list, then the System list, wins.
func Match(p, home string, k Kind) (Entry, bool) {
	p = filepath.Clean(p)
	if home != "" {
		for _, e := range Home() {
			if e.Kind == k && within(p, filepath.Join(home, e.Path)) {
				return e, true
			}
		}
	}
	for _, e := range System() {
		if e.Kind == k && within(p, "/"+e.Path) {
			return e, true
		}
	}
	return Entry{}, false
}

// Abs returns the absolute paths (patterns, for entries with one) of the
// Home and System entries of kind k.
func Abs(home string, k Kind) []string {
	var out []string
	for _, e := range NewIndex(home).entries {
		if e.Kind == k {
			out = append(out, e.Path)
		}
	}
	return out
}

// Index is the Home and System entries with absolute paths for one home
// directory, for callers that ask many questions (a grant's every path).
type Index struct {
	home    string
	entries []indexed
	// Per kind, for lookups that need not scan every entry (a bash
	// call's grant asks about each of its paths): the literal entries'
	// positions in entries sorted by path (then position), and the
	// pattern entries' positions in list order.
	sorted   [kinds][]int
	patterns [kinds][]int
}

type indexed struct {
	Entry         // Path absolute
	fixed  string // the part before the first pattern segment; Path if none
	prefix string // fixed + "/"
	meta   bool
}

// NewIndex makes the absolute entries for home (may be empty).
func NewIndex(home string) *Index {
	ix := &Index{home: home}
	add := func(e Entry, path string) {
		e.Path = path
		in := indexed{Entry: e, fixed: path, meta: hasMeta(path)}
		if in.meta {
			in.fixed = literalPrefix(path)
		}
		in.prefix = strings.TrimSuffix(in.fixed, "/") + "/"
		ix.entries = append(ix.entries, in)
	}
	if home != "" {
		for _, e := range Home() {
			add(e, filepath.Join(home, e.Path))
		}
	}
	for _, e := range System() {
		add(e, "/"+e.Path)
	}
	for i, e := range ix.entries {
		if e.Kind < 0 || e.Kind >= kinds {
			continue // no list has such an entry; a scan would skip it too
		}
		if e.meta {
			ix.patterns[e.Kind] = append(ix.patterns[e.Kind], i)
			continue
		}
		ix.sorted[e.Kind] = append(ix.sorted[e.Kind], i)
	}
	for k := range ix.sorted {
		slices.SortFunc(ix.sorted[k], func(a, b int) int {
			if c := strings.Compare(ix.entries[a].Path, ix.entries[b].Path); c != 0 {
				return c
			}
			return a - b
		})
	}
	return ix
}

// firstAt is the position in sorted (a kind's sorted literal entries) of
// the first entry whose path is p or sorts after it.
func (ix *Index) firstAt(sorted []int, p string) int {
	j, _ := slices.BinarySearchFunc(sorted, p, func(i int, p string) int { return strings.Compare(ix.entries[i].Path, p) })
	return j
}

// Home is the home directory the index was made for.
func (ix *Index) Home() string { return ix.home }

// Under lists the entries of kind k that lie strictly inside root (an
// absolute, clean directory): each literal entry whether or not it
// exists, and each existing path a pattern entry names. A grant of root
// would expose them; the caller masks them. It reads the filesystem only
// to expand patterns whose fixed part lies on root's side.
func Under(root, home string, k Kind) []Found { return NewIndex(home).Under(root, k) }

// Under is the package function Under on this index.
func (ix *Index) Under(root string, k Kind) []Found {
	if k < 0 || k >= kinds {
		return nil
	}
	root = filepath.Clean(root)
	prefix := strings.TrimSuffix(root, "/") + "/"
	// The literal entries under root are one run of the sorted list;
	// found in list order with the patterns' matches, as a scan would.
	type hit struct {
		i int
		f Found
	}
	var hits []hit
	lits := ix.sorted[k]
	for j := ix.firstAt(lits, prefix); j < len(lits); j++ {
		e := ix.entries[lits[j]]
		if !strings.HasPrefix(e.Path, prefix) {
			break
		}
		hits = append(hits, hit{lits[j], Found{Path: e.Path, Entry: e.Entry}})
	}
	for _, i := range ix.patterns[k] {
		e := ix.entries[i]
		// A pattern: expand it only when its fixed part and root lie on
		// one line.
		if !strings.HasPrefix(e.fixed, prefix) && e.fixed != root && !strings.HasPrefix(prefix, e.prefix) {
			continue
		}
		matches, _ := filepath.Glob(e.Path)
		for _, m := range matches {
			if m != root && strings.HasPrefix(m, prefix) {
				hits = append(hits, hit{i, Found{Path: m, Entry: e.Entry}})
			}
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return a.i - b.i })
	var out []Found
	for _, h := range hits {
		out = append(out, h.f)
	}
	return out
}

// Contains reports whether dir (absolute, clean) holds any entry of kind k
// — literal entries whether or not they exist, pattern entries when a path
// they name exists — or lies inside one.
func Contains(dir, home string, k Kind) (Entry, bool) { return NewIndex(home).Contains(dir, k) }

// Contains is the package function Contains on this index.
func (ix *Index) Contains(dir string, k Kind) (Entry, bool) {
	if k < 0 || k >= kinds {
		return Entry{}, false
	}
	dir = filepath.Clean(dir)
	// The first entry in list order that dir lies in: a literal one is
	// dir or one of its parents, looked up by path (the first of equal
	// paths sorts first); a pattern is checked.
	first := -1
	lits := ix.sorted[k]
	for a := dir; ; a = filepath.Dir(a) {
		if j := ix.firstAt(lits, a); j < len(lits) && ix.entries[lits[j]].Path == a && (first < 0 || lits[j] < first) {
			first = lits[j]
		}
		if a == "/" || a == "." {
			break
		}
	}
	slash := dir + "/"
	for _, i := range ix.patterns[k] {
		if first >= 0 && i > first {
			break
		}
		if e := ix.entries[i]; strings.HasPrefix(slash, e.prefix) && within(dir, e.Path) {
			first = i
			break
		}
	}
	if first >= 0 {
		return ix.relative(ix.entries[first].Entry), true
	}
	if f := ix.Under(dir, k); len(f) > 0 {
		return ix.relative(f[0].Entry), true
	}
	return Entry{}, false
}

// relative gives an absolute entry back its list's relative path.
func (ix *Index) relative(e Entry) Entry {
	if ix.home != "" && strings.HasPrefix(e.Path, ix.home+"/") {
		e.Path = strings.TrimPrefix(e.Path, ix.home+"/")
	} else {
		e.Path = strings.TrimPrefix(e.Path, "/")
	}
	return e
}

// Found is a path named by an entry.
type Found struct {
	Path  string // absolute
	Entry Entry  // Entry.Path is absolute (a pattern for pattern entries)
}

func hasMeta(p string) bool { return strings.ContainsAny(p, `*?[\`) }

// literalPrefix is the part of a pattern before its first segment with a
// metacharacter.
func literalPrefix(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if hasMeta(s) {
			if i <= 1 {
				return "/"
			}
			return strings.Join(segs[:i], "/")
		}
	}
	return p
}

// within reports whether p is dir or below it; dir may hold patterns, each
// matching one segment.
func within(p, dir string) bool {
	if !hasMeta(dir) {
		return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
	}
	ps, ds := strings.Split(p, "/"), strings.Split(dir, "/")
	if len(ps) < len(ds) {
		return false
	}
	for i, d := range ds {
		if ok, err := path.Match(d, ps[i]); err != nil || !ok {
			return false
		}
	}
	return true
}

// credentialNames are file names that hold credentials wherever they are.
var credentialNames = map[string]bool{
	"credentials": true, "credentials.toml": true, "credentials.json": true, "credentials.db": true,
	".git-credentials": true, ".netrc": true, "_netrc": true, ".pgpass": true, ".vault-token": true,
	"access_tokens.db": true, "application_default_credentials.json": true, "service-account.json": true,
	"id_rsa": true, "id_dsa": true, "id_ecdsa": true, "id_ed25519": true, "id_ecdsa_sk": true,
	"id_ed25519_sk": true, "secring.gpg": true, ".htpasswd": true, "settings-security.xml": true,
	".env": true,
}

// credentialSuffixes are name endings of key stores and private keys.
var credentialSuffixes = []string{".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk", ".kdbx"}

// LooksLikeCredential reports whether a file name is one credentials are
// usually kept under (a heuristic for reports such as brig doctor's; the
// grant itself uses the lists above). Some names (".pem", ".key") are
// shared with public certificates: a report reads the content to tell.
func LooksLikeCredential(name string) bool {
	n := strings.ToLower(name)
	if credentialNames[n] || strings.HasPrefix(n, ".env.") {
		return true
	}
	for _, s := range credentialSuffixes {
		if strings.HasSuffix(n, s) && n != s {
			return true
		}
	}
	return false
}

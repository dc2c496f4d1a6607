package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"brig/internal/termsafe"
	"brig/internal/xdg"
	"brig/jail"
	"brig/policy"
)

// procEnv is what every command reads from its process: the working
// directory, home, environment and output streams. Tests fill it in by hand.
type procEnv struct {
	Cwd            string
	Home           string
	Env            []string
	Stdout, Stderr io.Writer
}

// workingDir is the current directory, or an error that says what to do
// when it cannot be had (removed while the shell sat in it).
func workingDir() (string, error) {
	cwd, err := os.Getwd()
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("the current directory no longer exists (removed since the shell entered it): cd to one that exists and run brig again: %w", err)
	}
	if err != nil {
		return "", fmt.Errorf("current directory: %w", err)
	}
	return cwd, nil
}

// currentProcEnv reads the real process's environment.
func currentProcEnv(stdout, stderr io.Writer) (procEnv, error) {
	cwd, err := workingDir()
	if err != nil {
		return procEnv{}, err
	}
	env, home, err := homeEnv()
	if err != nil {
		return procEnv{}, err
	}
	return procEnv{Cwd: cwd, Home: home, Env: env, Stdout: stdout, Stderr: stderr}, nil
}

// homeEnv is the process's environment and the user's home (xdg.Home);
// when HOME was unset, the environment gains HOME set to that home, so
// that calls and the git config brig reads see the home the policy
// protects.
func homeEnv() ([]string, string, error) {
	env := os.Environ()
	home, err := xdg.Home(env)
	if err != nil {
		return nil, "", err
	}
	if os.Getenv("HOME") != home {
		env = append(env, "HOME="+home)
	}
	return env, home, nil
}

// workspacePolicy is a workspace with its loaded policy.
type workspacePolicy struct {
	Workspace string
	Dirs      xdg.Dirs
	Files     policy.Files
	Policy    *policy.Policy
}

// workspaceConfig is a workspace and its loaded config files.
type workspaceConfig struct {
	Workspace string
	Files     policy.Files
	Loaded    policy.Loaded
	// buildsGoLayer: the policy serves brig cache warm's one call, which
	// writes the layer's build directory in brig's cache (no other grant
	// may) and runs no repository's code; it sees no layer beneath it.
	buildsGoLayer bool
}

// loadWorkspaceConfig finds the workspace and loads its config files
// (failing on any unreadable or malformed one). Warnings go to stderr.
func loadWorkspaceConfig(pe procEnv, wsFlag string) (*workspaceConfig, error) {
	return loadConfigs(pe, wsFlag, true)
}

// loadConfigs is loadWorkspaceConfig; untrustedRepo false leaves the
// repository's own config out (not parsed) unless brig trust pinned its
// current content.
func loadConfigs(pe procEnv, wsFlag string, untrustedRepo bool) (*workspaceConfig, error) {
	ws, err := resolveWorkspace(wsFlag, pe.Cwd)
	if err != nil {
		return nil, err
	}
	files := policy.FilesFor(dirsFor(pe).Config, ws)
	if !untrustedRepo && !policy.RepoTrusted(files) {
		files.Repo = ""
	}
	loaded, err := policy.Load(files)
	if err != nil {
		return nil, err
	}
	for _, w := range loaded.Warnings {
		fmt.Fprintf(pe.Stderr, "brig: warning: %s\n", w)
	}
	return &workspaceConfig{Workspace: ws, Files: files, Loaded: loaded}, nil
}

// openPolicy loads the workspace's config and builds its policy.
func openPolicy(pe procEnv, wsFlag string, mode policy.Mode, namespaces bool) (*workspacePolicy, error) {
	wc, err := loadWorkspaceConfig(pe, wsFlag)
	if err != nil {
		return nil, err
	}
	return wc.policy(pe, mode, func() bool { return namespaces }, false)
}

// policy builds the policy of a loaded workspace; namespaces answers
// whether calls get namespaces, asked when a call is first decided (the
// supervisor's probe: sup.Namespaces). session: the policy serves a
// session's calls, whose searches of the workspace watch it.
func (wc *workspaceConfig) policy(pe procEnv, mode policy.Mode, namespaces func() bool, session bool) (*workspacePolicy, error) {
	dirs := dirsFor(pe)
	// brig's cache as it really is: the grants it is compared with are
	// resolved (a ~/.cache that links to another disk).
	cache := dirs.Cache
	if r, _, err := policy.ResolvePath(dirs.Cache, "/", ""); err == nil {
		cache = r
	}
	m := policy.Machine{
		Home: canonicalHome(pe.Home), Env: pe.Env, NamespacesFrom: namespaces, WatchRepositories: session,
		CacheRoot: filepath.Join(cache, "jail"),
		GoLayer:   filepath.Join(cache, filepath.Base(goLayerDir(dirs))),
		BrigCache: cache,
		BrigDirs:  []string{dirs.Config, dirs.State},
		Limits:    wc.Loaded.Limits.Apply(jail.DefaultLimits()),
	}
	if wc.buildsGoLayer {
		m.GoLayer, m.BrigCache = "", ""
	}
	pol, err := policy.New(wc.Workspace, wc.Loaded, mode, m)
	if err != nil {
		return nil, err
	}
	for _, w := range pol.SandboxGrantWarnings() {
		fmt.Fprintf(pe.Stderr, "brig: warning: %s\n", w)
	}
	return &workspacePolicy{Workspace: wc.Workspace, Dirs: dirs, Files: wc.Files, Policy: pol}, nil
}

// canonicalHome resolves symlinks in the home directory, so paths compare.
func canonicalHome(home string) string {
	if home != "" {
		if real, err := filepath.EvalSymlinks(home); err == nil {
			return real
		}
	}
	return home
}

// dirsFor is brig's config, state and cache directories for a process.
func dirsFor(pe procEnv) xdg.Dirs { return xdg.Resolve(pe.Env, canonicalHome(pe.Home)) }

// commandRun is the RunE of a command with an Options struct o: it fills
// o's process environment (pe points into o), lets set take the positional
// arguments, and runs runF when a test gave one, else run.
func commandRun[O any](o *O, pe *procEnv, set func(args []string), runF, run func(context.Context, *O) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		// Everything these commands print passes the terminal sanitiser:
		// they quote config files, sessions and servers (JSON stays exact).
		stdout, stderr := termsafe.NewWriter(cmd.OutOrStdout()), termsafe.NewWriter(cmd.ErrOrStderr())
		defer stdout.Flush()
		defer stderr.Flush()
		env, err := currentProcEnv(stdout, stderr)
		if err != nil {
			return err
		}
		*pe = env
		if set != nil {
			set(args)
		}
		if runF != nil {
			return runF(cmd.Context(), o)
		}
		return run(cmd.Context(), o)
	}
}

// makeOwnDirs makes brig's state and cache directories (if missing), so
// that a home brig cannot write stops it at the start with the fix,
// rather than failing each of its calls (the toolchain cache) or the
// session's first save (the state) with a bare mkdir error.
func makeOwnDirs(dirs xdg.Dirs) error {
	for _, d := range []struct{ path, what, variable string }{
		{dirs.State, "state (sessions, undo, the audit log)", "XDG_STATE_HOME"},
		{dirs.Cache, "cache (the jail's toolchain caches)", "XDG_CACHE_HOME"},
	} {
		if err := os.MkdirAll(d.path, 0o700); err != nil {
			return fmt.Errorf("brig's %s directory cannot be made: %w; make it writable, or set %s to a directory you can write", d.what, err, d.variable)
		}
	}
	return nil
}

package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

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

// currentProcEnv reads the real process's environment.
func currentProcEnv(stdout, stderr io.Writer) (procEnv, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return procEnv{}, fmt.Errorf("current directory: %w", err)
	}
	home, _ := os.UserHomeDir()
	return procEnv{Cwd: cwd, Home: home, Env: os.Environ(), Stdout: stdout, Stderr: stderr}, nil
}

// workspacePolicy is a workspace with its loaded policy.
type workspacePolicy struct {
	Workspace string
	Dirs      xdg.Dirs
	Files     policy.Files
	Policy    *policy.Policy
}

// openPolicy finds the workspace, loads its config files (failing on any
// unreadable or malformed one) and builds the policy. Warnings go to stderr.
func openPolicy(pe procEnv, wsFlag string, mode policy.Mode, namespaces bool) (*workspacePolicy, error) {
	ws, err := resolveWorkspace(wsFlag, pe.Cwd)
	if err != nil {
		return nil, err
	}
	home := pe.Home
	if home != "" {
		if real, err := filepath.EvalSymlinks(home); err == nil {
			home = real
		}
	}
	dirs := xdg.Resolve(pe.Env, home)
	files := policy.FilesFor(dirs.Config, ws)
	loaded, err := policy.Load(files)
	if err != nil {
		return nil, err
	}
	for _, w := range loaded.Warnings {
		fmt.Fprintf(pe.Stderr, "brig: warning: %s\n", w)
	}
	pol, err := policy.New(ws, loaded, mode, policy.Machine{
		Home: home, Env: pe.Env, Namespaces: namespaces,
		CacheRoot: filepath.Join(dirs.Cache, "jail"),
		BrigDirs:  []string{dirs.Config, dirs.State},
		Limits:    jail.DefaultLimits(),
	})
	if err != nil {
		return nil, err
	}
	return &workspacePolicy{Workspace: ws, Dirs: dirs, Files: files, Policy: pol}, nil
}

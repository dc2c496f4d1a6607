// Package xdg locates brig's configuration, state and cache directories.
//
// It owns the XDG base-directory rules for brig. It must not create, read or
// write anything: callers decide what to do with the paths.
package xdg

import (
	"path/filepath"
	"strings"
)

// Dirs are brig's directories for one user.
type Dirs struct {
	Config string // ~/.config/brig
	State  string // ~/.local/state/brig
	Cache  string // ~/.cache/brig
}

// Resolve applies XDG_CONFIG_HOME, XDG_STATE_HOME and XDG_CACHE_HOME from env
// (NAME=value pairs), falling back to the usual places under home.
func Resolve(env []string, home string) Dirs {
	base := func(name, fallback string) string {
		if v := lookup(env, name); filepath.IsAbs(v) {
			return v
		}
		return filepath.Join(home, fallback)
	}
	return Dirs{
		Config: filepath.Join(base("XDG_CONFIG_HOME", ".config"), "brig"),
		State:  filepath.Join(base("XDG_STATE_HOME", ".local/state"), "brig"),
		Cache:  filepath.Join(base("XDG_CACHE_HOME", ".cache"), "brig"),
	}
}

func lookup(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// Package xdg locates brig's configuration, state and cache directories.
//
// It owns the XDG base-directory rules for brig, and where the user's home
// is (Home). It must not create or write anything, and reads nothing but
// the password database, for a home when HOME is unset: callers decide
// what to do with the paths.
package xdg

import (
	"fmt"
	"os"
	"os/user"
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

// Home is the user's home directory, under which brig finds its config,
// state and cache and the policy finds the secrets it hides: HOME from
// env when it is an absolute path; when HOME is unset or empty (env -i, a
// system service), the home the password database gives the user.
// Anything else is an error that says how to fix it: a relative home
// would put brig's own directories — its audit log, its sessions, the
// config it takes as the user's — under the directory brig was started
// in, a repository that calls can write.
func Home(env []string) (string, error) {
	return HomeFrom(env, func() (string, error) {
		u, err := user.Current()
		if err != nil {
			return "", err
		}
		return u.HomeDir, nil
	})
}

// HomeFrom is Home with the password database's answer from passwd.
func HomeFrom(env []string, passwd func() (string, error)) (string, error) {
	home, set := lookupSet(env, "HOME")
	switch {
	case filepath.IsAbs(home):
		return filepath.Clean(home), nil
	case set && home != "":
		return "", fmt.Errorf("HOME is %q, not an absolute path: brig keeps its config, state and cache under your home directory; set HOME to it (e.g. HOME=/home/you)", home)
	}
	h, err := passwd()
	switch {
	case err != nil:
		return "", fmt.Errorf("HOME is not set and the password database has no home for uid %d (%v): set HOME to your home directory", os.Getuid(), err)
	case !filepath.IsAbs(h):
		return "", fmt.Errorf("HOME is not set and the password database gives uid %d the home %q, not an absolute path: set HOME to your home directory", os.Getuid(), h)
	}
	return filepath.Clean(h), nil
}

func lookup(env []string, name string) string {
	v, _ := lookupSet(env, name)
	return v
}

// lookupSet is the last value of name in env, and whether it is set.
func lookupSet(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v, true
		}
	}
	return "", false
}

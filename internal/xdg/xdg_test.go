package xdg

import (
	"errors"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	got := Resolve(nil, "/home/u")
	want := Dirs{Config: "/home/u/.config/brig", State: "/home/u/.local/state/brig", Cache: "/home/u/.cache/brig"}
	if got != want {
		t.Fatalf("defaults: got %+v, want %+v", got, want)
	}
	got = Resolve([]string{"XDG_CONFIG_HOME=/c", "XDG_STATE_HOME=relative", "XDG_CACHE_HOME=/k"}, "/home/u")
	want = Dirs{Config: "/c/brig", State: "/home/u/.local/state/brig", Cache: "/k/brig"}
	if got != want {
		t.Fatalf("overrides (a relative value is ignored, as the spec says): got %+v, want %+v", got, want)
	}
}

func TestHomeFrom(t *testing.T) {
	passwd := func(h string, err error) func() (string, error) {
		return func() (string, error) { return h, err }
	}
	for _, c := range []struct {
		name    string
		env     []string
		passwd  func() (string, error)
		want    string
		wantErr string
	}{
		{"absolute HOME", []string{"HOME=/home/u/"}, passwd("/root", nil), "/home/u", ""},
		{"the last HOME wins", []string{"HOME=/a", "HOME=/b"}, passwd("/root", nil), "/b", ""},
		{"unset: the password database", nil, passwd("/home/p", nil), "/home/p", ""},
		{"empty: the password database", []string{"HOME="}, passwd("/home/p", nil), "/home/p", ""},
		{"relative HOME is refused", []string{"HOME=relhome"}, passwd("/home/p", nil), "", `HOME is "relhome", not an absolute path`},
		{"HOME=. is refused", []string{"HOME=."}, passwd("/home/p", nil), "", "not an absolute path"},
		{"no entry", nil, passwd("", errors.New("unknown uid")), "", "password database has no home"},
		{"a relative entry", nil, passwd("home", nil), "", `the home "home", not an absolute path`},
	} {
		got, err := HomeFrom(c.env, c.passwd)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "set HOME") {
				t.Errorf("%s: got %q, %v; want an error containing %q that says to set HOME", c.name, got, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

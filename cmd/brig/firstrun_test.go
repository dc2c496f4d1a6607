package main

// What a new user's first runs met: the errors that must say what is
// wrong and how to fix it.

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brig/internal/xdg"
)

// TestMakeOwnDirsNamesTheFix: a state or cache directory brig cannot make
// stops it with the directory and the variable that moves it (a file in
// the way fails for root too); the control makes both.
func TestMakeOwnDirsNamesTheFix(t *testing.T) {
	root := t.TempDir()
	blocker := filepath.Join(root, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ok := xdg.Dirs{State: filepath.Join(root, "state/brig"), Cache: filepath.Join(root, "cache/brig")}
	for _, c := range []struct {
		dirs xdg.Dirs
		want string
	}{
		{xdg.Dirs{State: filepath.Join(blocker, "brig"), Cache: ok.Cache}, "XDG_STATE_HOME"},
		{xdg.Dirs{State: ok.State, Cache: filepath.Join(blocker, "brig")}, "XDG_CACHE_HOME"},
	} {
		err := makeOwnDirs(c.dirs)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), blocker) {
			t.Errorf("%+v: got %v, want an error naming %s and %s", c.dirs, err, blocker, c.want)
		}
	}
	if err := makeOwnDirs(ok); err != nil {
		t.Fatalf("control: %v", err)
	}
	for _, d := range []string{ok.State, ok.Cache} {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("control: %s not made as a 0700 directory: %v %v", d, fi, err)
		}
	}
}

// TestUnknownToolListsEachToolOnce: the error for a --tool typo lists the
// native tools, web_fetch once.
func TestUnknownToolListsEachToolOnce(t *testing.T) {
	_, err := (&policyCheckOptions{Tool: "nosuch"}).checkCall()
	if err == nil {
		t.Fatal("an unknown tool was accepted")
	}
	if n := strings.Count(err.Error(), "web_fetch"); n != 1 || !strings.Contains(err.Error(), "read_file") {
		t.Errorf("web_fetch listed %d times, or read_file missing: %v", n, err)
	}
}

// TestLogRefusesAnUnknownKind: a typo in --kind is an error naming the
// kinds, not "no audit records match"; a known kind is not refused.
func TestLogRefusesAnUnknownKind(t *testing.T) {
	home := t.TempDir()
	pe := procEnv{Home: home, Env: []string{"HOME=" + home}, Stdout: io.Discard, Stderr: io.Discard}
	err := runLog(context.Background(), &logOptions{procEnv: pe, Kind: "nope"})
	if err == nil || !strings.Contains(err.Error(), "want call, undo, trust, mode or rule") {
		t.Errorf("--kind nope: %v", err)
	}
	if err := runLog(context.Background(), &logOptions{procEnv: pe, Kind: "mode"}); err != nil && strings.Contains(err.Error(), "--kind") {
		t.Errorf("control --kind mode: %v", err)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestGoLayerTipAndStatus: a session in a Go workspace (go.mod or go.work
// at its root) tips the user to brig cache warm while there is no layer
// and go is on PATH, and says nothing otherwise; brig doctor says what
// the layer holds, or how to build it, or that calls cannot use it.
func TestGoLayerTipAndStatus(t *testing.T) {
	root := t.TempDir()
	ws, bin, layer := filepath.Join(root, "ws"), filepath.Join(root, "bin"), filepath.Join(root, "cache", "go-std")
	for _, d := range []string{ws, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	withGo, withoutGo := []string{"PATH=/nonexistent:" + bin}, []string{"PATH=/nonexistent"}

	if tip := goLayerTip(ws, layer, withGo); tip != "" {
		t.Errorf("a workspace without go.mod got a tip: %q", tip)
	}
	for _, f := range []string{"go.work", "go.mod"} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte("go 1.22\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if tip := goLayerTip(ws, layer, withGo); !strings.Contains(tip, "brig cache warm") {
			t.Errorf("with %s: no tip: %q", f, tip)
		}
		if err := os.Remove(filepath.Join(ws, f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if tip := goLayerTip(ws, layer, withoutGo); tip != "" {
		t.Errorf("no go on PATH, yet a tip: %q", tip)
	}
	if s := goLayerStatus(layer, withoutGo, true); s != "" {
		t.Errorf("no go and no layer, yet doctor says %q", s)
	}
	if s := goLayerStatus(layer, withGo, true); !strings.Contains(s, "brig cache warm") {
		t.Errorf("doctor does not say how to build the layer: %q", s)
	}

	if err := os.MkdirAll(layer, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(layer, goLayerVersion), []byte("go version go1.99 linux/amd64\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if tip := goLayerTip(ws, layer, withGo); tip != "" {
		t.Errorf("with the layer in place, a tip: %q", tip)
	}
	if s := goLayerStatus(layer, withGo, true); !strings.Contains(s, "start from "+layer+" (go version go1.99 linux/amd64") {
		t.Errorf("doctor: %q", s)
	}
	if s := goLayerStatus(layer, withGo, false); !strings.Contains(s, "no mount namespace") {
		t.Errorf("doctor does not say calls cannot use the layer: %q", s)
	}

	// The go on PATH is of another release than the layer's (its GOROOT's
	// VERSION file says so): the layer serves none of its builds.
	if err := os.WriteFile(filepath.Join(root, "VERSION"), []byte("go1.98\ntime 2026-01-01T00:00:00Z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if tip := goLayerTip(ws, layer, withGo); !strings.Contains(tip, "another Go version than go1.98") {
		t.Errorf("a stale layer gets no tip: %q", tip)
	}
	if s := goLayerStatus(layer, withGo, true); !strings.Contains(s, "the go on PATH is go1.98") {
		t.Errorf("doctor does not say the layer is stale: %q", s)
	}
	// A FIFO where the version is kept (a call granted a write above the
	// layer could put one there) is not waited on.
	if err := os.Remove(filepath.Join(layer, goLayerVersion)); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(layer, goLayerVersion), 0o600); err != nil {
		t.Fatal(err)
	}
	if s := goLayerStatus(layer, withGo, true); !strings.Contains(s, "of an unknown Go version") {
		t.Errorf("doctor with a FIFO for the version: %q", s)
	}
	if err := os.Remove(filepath.Join(layer, goLayerVersion)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(layer, goLayerVersion), []byte("go version go1.99 linux/amd64\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Control: the same release.
	if err := os.WriteFile(filepath.Join(root, "VERSION"), []byte("go1.99\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if tip := goLayerTip(ws, layer, withGo); tip != "" {
		t.Errorf("a layer of the same release gets a tip: %q", tip)
	}
	if s := goLayerStatus(layer, withGo, true); strings.Contains(s, "rebuilds") {
		t.Errorf("doctor calls a current layer stale: %q", s)
	}
}

// TestGoLayerTipIsSaidOnce: the start's tip is said once for a Go version
// and reason, not at every start; another reason (the layer went stale)
// or another Go version says it again.
func TestGoLayerTipIsSaidOnce(t *testing.T) {
	root := t.TempDir()
	ws, bin, state, layer := filepath.Join(root, "ws"), filepath.Join(root, "bin"), filepath.Join(root, "state"), filepath.Join(root, "cache", "go-std")
	for _, d := range []string{ws, bin, state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for f, body := range map[string]string{filepath.Join(bin, "go"): "#!/bin/sh\n", filepath.Join(ws, "go.mod"): "module x\n", filepath.Join(root, "VERSION"): "go1.98\n"} {
		if err := os.WriteFile(f, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=" + bin}
	if tip := goLayerTipOnce(ws, layer, state, env); !strings.Contains(tip, "brig cache warm") || !strings.Contains(tip, "said once") {
		t.Fatalf("the first start: %q", tip)
	}
	if tip := goLayerTipOnce(ws, layer, state, env); tip != "" {
		t.Errorf("the second start said it again: %q", tip)
	}
	// Another reason: a layer of another Go version.
	if err := os.MkdirAll(layer, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(layer, goLayerVersion), []byte("go version go1.1 linux/amd64\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if tip := goLayerTipOnce(ws, layer, state, env); !strings.Contains(tip, "another Go version") {
		t.Errorf("a stale layer after the tip for a missing one: %q", tip)
	}
}

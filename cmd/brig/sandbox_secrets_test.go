package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSandboxBroadGrantMasksSecrets: `brig sandbox --read ~` and
// `[sandbox] read = ["~"]` grant the home directory without brig's
// credentials or ~/.ssh, and say so; naming brig's own directory is
// refused.
func TestSandboxBroadGrantMasksSecrets(t *testing.T) {
	const canary = "canary-sandbox-secret"
	setup := func(t *testing.T) (*sandboxOptions, func() (string, string)) {
		o, out, errb := sandboxFixture(t)
		for rel, content := range map[string]string{
			".ssh/id_rsa":                   canary,
			".config/brig/credentials.toml": "[anthropic]\napi_key = \"" + canary + "\"\n",
			"notes.txt":                     "visible-notes\n",
		} {
			p := filepath.Join(o.Home, rel)
			os.MkdirAll(filepath.Dir(p), 0o700)
			if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		o.Argv = []string{"sh", "-c", "cat ~/notes.txt; cat ~/.ssh/id_rsa; cat ~/.config/brig/credentials.toml; ls ~/.ssh; exit 0"}
		return o, func() (string, string) { return out.String(), errb.String() }
	}
	check := func(t *testing.T, o *sandboxOptions, got func() (string, string), warnedBy string) {
		if code := exitCode(t, runSandbox(context.Background(), o)); code != 0 {
			_, e := got()
			t.Fatalf("exit %d: %s", code, e)
		}
		out, errs := got()
		if strings.Contains(out+errs, canary) {
			t.Errorf("a secret was read through the broad grant:\n%s\n%s", out, errs)
		}
		if !strings.Contains(out, "visible-notes") {
			t.Errorf("control: a file under the granted home was not read:\n%s\n%s", out, errs)
		}
		if !strings.Contains(errs, warnedBy) || !strings.Contains(errs, "~/.ssh") || !strings.Contains(errs, "~/.config/brig") {
			t.Errorf("no warning naming the covered secrets:\n%s", errs)
		}
	}
	t.Run("--read ~", func(t *testing.T) {
		o, got := setup(t)
		o.Read = []string{o.Home}
		check(t, o, got, "--read")
	})
	t.Run("[sandbox] read", func(t *testing.T) {
		o, got := setup(t)
		if err := os.WriteFile(filepath.Join(o.Home, ".config/brig/config.toml"), []byte("[sandbox]\nread = [\"~\"]\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		check(t, o, got, "[sandbox] read")
	})
	t.Run("--read ~/.config/brig", func(t *testing.T) {
		o, _ := setup(t)
		o.Read = []string{filepath.Join(o.Home, ".config/brig")}
		if err := runSandbox(context.Background(), o); err == nil || !strings.Contains(err.Error(), "brig's own directory") {
			t.Fatalf("granting brig's own directory: %v", err)
		}
	})
}

// TestSandboxBrigCacheThroughALink: a ~/.cache that links to another disk
// is brig's cache all the same. A write grant in it, named by its real
// path, is refused; under a grant of ~/.cache (the link) another
// workspace's cache stays read-only while the call's own is written; the
// control: the rest of the grant is writable.
func TestSandboxBrigCacheThroughALink(t *testing.T) {
	o, out, errb := sandboxFixture(t)
	real, err := os.MkdirTemp("/var/tmp", "brig-realcache-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(real) })
	other, tool := filepath.Join(real, "brig", "jail", "other-ws"), filepath.Join(real, "tool")
	for _, d := range []string{other, tool} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(other, "obj-d"), []byte("trusted\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(o.Home, ".cache")); err != nil {
		t.Fatal(err)
	}
	o.Argv = []string{"true"}
	o.Write = []string{filepath.Join(real, "brig", "jail")}
	if err := runSandbox(context.Background(), o); err == nil || !strings.Contains(err.Error(), "brig's cache") {
		t.Fatalf("a write grant in brig's cache by its real path: %v", err)
	}
	o.Write = []string{filepath.Join(o.Home, ".cache")}
	o.Argv = []string{"sh", "-c", "echo x >> " + other + "/obj-d || echo other-refused; echo y > \"$GOCACHE/mine\" && echo own-written; echo z > " + tool + "/f && echo tool-written"}
	if code := exitCode(t, runSandbox(context.Background(), o)); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"other-refused", "own-written", "tool-written"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the call's output lacks %q:\n%s\n%s", want, out.String(), errb.String())
		}
	}
	if b, _ := os.ReadFile(filepath.Join(other, "obj-d")); string(b) != "trusted\n" {
		t.Errorf("another workspace's cache was written: %q", b)
	}
}

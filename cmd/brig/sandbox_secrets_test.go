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

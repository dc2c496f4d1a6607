package integration

import (
	"bytes"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"brig/internal/egress"
)

// TestRealRegistriesThroughTheProxy installs real packages through brig's
// egress proxy with the npm and Go presets on, and checks that without
// them the same install is refused with a message saying how to allow it.
// It leaves loopback, so it runs only when asked (BRIG_TEST_REGISTRIES=1)
// and the registries answer; make test keeps to loopback.
func TestRealRegistriesThroughTheProxy(t *testing.T) {
	if os.Getenv("BRIG_TEST_REGISTRIES") != "1" {
		t.Skip("reaches the real npm registry and Go module proxy: run with BRIG_TEST_REGISTRIES=1")
	}
	// The presets live in the user's own config (a repository's config
	// cannot add hosts until trusted).
	cfg := t.TempDir()
	on := []string{"XDG_CONFIG_HOME=" + cfg}
	write(t, filepath.Join(cfg, "brig", "config.toml"), "[sandbox]\nnet_presets = [\"npm\", \"go\"]\n")
	off := []string{"XDG_CONFIG_HOME=" + t.TempDir()}
	var onArgs []string
	for _, host := range []string{"registry.npmjs.org", "proxy.golang.org"} {
		c, err := net.DialTimeout("tcp", host+":443", 10*time.Second)
		if err != nil {
			t.Skipf("%s is unreachable from this machine: %v", host, err)
		}
		c.Close()
		// Where a registry's name resolves to an address the proxy keeps
		// for rules naming the host (a private network's mirror, a test
		// network), a preset cannot reach it: name the host instead.
		addrs, _ := net.LookupHost(host)
		for _, a := range addrs {
			if ip, err := netip.ParseAddr(a); err == nil {
				if why, internal := egress.Internal(ip); internal {
					t.Logf("%s resolves to %s here (%s): allowed with --allow-host, which names it, instead of the preset", host, a, why)
					onArgs = append(onArgs, "--allow-host", host)
					break
				}
			}
		}
	}
	run := func(env []string, dir, script string) (string, int) {
		t.Helper()
		args := []string{"sandbox", "--timeout", "5m"}
		if env[0] == on[0] {
			args = append(args, onArgs...)
		}
		cmd := exec.Command(brig, append(args, "--", "sh", "-c", script)...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return out.String(), ee.ExitCode()
		} else if err != nil {
			t.Fatalf("run brig: %v", err)
		}
		return out.String(), 0
	}

	t.Run("npm", func(t *testing.T) {
		if _, err := exec.LookPath("npm"); err != nil {
			t.Skip("npm is not installed")
		}
		ws := workspace(t, "npm-registry")
		write(t, filepath.Join(ws, "package.json"), `{"name":"t","version":"1.0.0","dependencies":{"left-pad":"1.3.0"}}`+"\n")
		out, code := run(off, ws, "npm install --no-audit --no-fund")
		if code == 0 || !strings.Contains(out, "refused a connection to registry.npmjs.org") || !strings.Contains(out, "--allow-host registry.npmjs.org") {
			t.Fatalf("without the preset: exit %d\n%s", code, out)
		}
		if _, err := os.Stat(filepath.Join(ws, "node_modules", "left-pad")); err == nil {
			t.Fatal("installed without the preset")
		}
		out, code = run(on, ws, "npm install --no-audit --no-fund && node -e 'console.log(require(\"left-pad\")(\"7\", 3, \"0\"))'")
		if code != 0 || !strings.Contains(out, "007") {
			t.Fatalf("with the preset: exit %d\n%s", code, out)
		}
	})

	t.Run("go", func(t *testing.T) {
		if _, err := exec.LookPath("go"); err != nil {
			t.Skip("go is not installed")
		}
		ws := workspace(t, "go-registry")
		// A version unlikely to be in your module cache already, so the
		// download really goes to the proxy.
		write(t, filepath.Join(ws, "go.mod"), "module example.com/r\n\ngo 1.21\n\nrequire golang.org/x/text v0.3.5\n")
		write(t, filepath.Join(ws, "main.go"), "package main\n\nimport (\n\t\"fmt\"\n\n\t\"golang.org/x/text/language\"\n)\n\nfunc main() { fmt.Println(language.French) }\n")
		out, code := run(off, ws, "go mod tidy && go run .")
		if code == 0 || strings.Contains(out, "\nfr\n") {
			t.Fatalf("without the preset: exit %d\n%s", code, out)
		}
		out, code = run(on, ws, "go mod tidy && go run .")
		if code != 0 || !strings.Contains(out, "fr") {
			t.Fatalf("with the preset: exit %d\n%s", code, out)
		}
		// The download went to the workspace's own module cache, not yours.
		if gomod, _ := exec.Command("go", "env", "GOMODCACHE").Output(); len(gomod) > 0 {
			if _, err := os.Stat(filepath.Join(strings.TrimSpace(string(gomod)), "golang.org/x/text@v0.3.5")); err == nil {
				t.Log("note: your module cache already held golang.org/x/text@v0.3.5 (the download may have come from it)")
			}
		}
	})
}

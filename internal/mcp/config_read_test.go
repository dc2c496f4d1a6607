package mcp

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"brig/internal/hangtest"
)

// TestRepoFilesOnlyFromARegularFile: a workspace's .mcp.json or (trusted)
// .brig/config.toml that is a committed link to /dev/zero, a FIFO, or
// larger than 4 MiB is an error naming the file and saying why, not an out
// of memory or a hang; a regular file loads.
func TestRepoFilesOnlyFromARegularFile(t *testing.T) {
	for _, file := range []string{".mcp.json", ".brig/config.toml"} {
		for _, tc := range []struct {
			name, want string
			make       func(path string) error
		}{
			{"link to /dev/zero", "is a symbolic link", func(p string) error { return os.Symlink("/dev/zero", p) }},
			{"FIFO", "is not a regular file (a FIFO)", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
			{"too large", "is larger than 4 MiB", func(p string) error {
				return os.WriteFile(p, []byte(strings.Repeat(" ", 4<<20+1)), 0o644)
			}},
		} {
			t.Run(file+"/"+tc.name, func(t *testing.T) {
				f := newConfigFixture(t)
				f.src.RepoTrusted = true
				path := MCPJSONPath(f.ws)
				if file != ".mcp.json" {
					path = f.src.Files.Repo
				}
				if err := tc.make(path); err != nil {
					t.Fatal(err)
				}
				var err error
				hangtest.Within(t, "Load", func() { _, err = Load(f.src) })
				if err == nil || !strings.HasPrefix(err.Error(), path+" "+tc.want) {
					t.Fatalf("got %v; want an error naming %s and saying %q", err, path, tc.want)
				}
			})
		}
	}
	t.Run("regular files", func(t *testing.T) {
		f := newConfigFixture(t)
		f.src.RepoTrusted = true
		write(t, f.src.Files.Repo, "[mcp.servers.fromrepo]\ncommand = \"repo-server\"\n")
		write(t, MCPJSONPath(f.ws), `{"mcpServers": {"fromjson": {"command": "json-server"}}}`)
		var c Config
		var err error
		hangtest.Within(t, "Load", func() { c, err = Load(f.src) })
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(names(c), " "); got != "fromrepo@config.toml" || !c.MCPJSON.Exists || c.MCPJSON.SHA256 == "" {
			t.Fatalf("servers %q, .mcp.json %+v", got, c.MCPJSON)
		}
	})
}

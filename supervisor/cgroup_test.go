package supervisor

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOOMKillsByVersion reads the OOM-kill counter from the file of the
// cgroup version its limits name: memory.oom_control beside a v1
// memory.limit_in_bytes, memory.events beside a v2 memory.max. Each
// directory also holds the other version's file with another count, so
// reading the wrong one fails.
func TestOOMKillsByVersion(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n")
	write("memory.events", "low 0\nhigh 0\nmax 9\noom 8\noom_kill 7\noom_group_kill 0\n")
	for _, tc := range []struct {
		limit string
		want  uint64
	}{
		{"memory.limit_in_bytes", 3},
		{"memory.max", 7},
		{"pids.max", 0}, // no memory bound: nothing to count
	} {
		c := &callCgroup{limits: map[string]uint64{filepath.Join(dir, tc.limit): 1 << 30}}
		if got := c.oomKills(); got != tc.want {
			t.Errorf("with %s: oomKills() = %d, want %d", tc.limit, got, tc.want)
		}
	}
	var none *callCgroup
	if got := none.oomKills(); got != 0 {
		t.Errorf("no cgroup: oomKills() = %d, want 0", got)
	}
}

package jail

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSplitCgroupJoins: a cgroup with a "tasks" file (v1), whose parent has
// one too, is joined by init's thread for the fork and left to its parent;
// one without (v2) is a move of the worker.
func TestSplitCgroupJoins(t *testing.T) {
	root := t.TempDir()
	mk := func(files ...string) {
		for _, f := range files {
			p := filepath.Join(root, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("pids/brig/tasks", "pids/brig/call-1/tasks", "pids/brig/call-1/cgroup.procs",
		"unified/brig/cgroup.procs", "unified/brig/call-1/cgroup.procs")
	v1 := filepath.Join(root, "pids/brig/call-1/cgroup.procs")
	v2 := filepath.Join(root, "unified/brig/call-1/cgroup.procs")
	joins, moves := splitCgroupJoins([]string{v1, v2})
	want := []cgroupJoin{{enter: filepath.Join(root, "pids/brig/call-1/tasks"), leave: filepath.Join(root, "pids/brig/tasks")}}
	if !slices.Equal(joins, want) {
		t.Errorf("joins %v, want %v", joins, want)
	}
	if !slices.Equal(moves, []string{v2}) {
		t.Errorf("moves %v, want %v", moves, []string{v2})
	}
	if j, m := splitCgroupJoins(nil); j != nil || m != nil {
		t.Errorf("no cgroups: %v %v", j, m)
	}
}

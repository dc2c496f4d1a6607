package jail

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// A root call's worker must be in the call's cgroups (supervisor
// callCgroup) before it can fork anything. Moving a running process into
// a cgroup (a pid written to cgroup.procs) takes the kernel's global
// threadgroup lock for writing, which first waits out an RCU grace
// period: 5–15 ms on this project's test machine, on the clock of every
// call whose child had no time to start ahead of it (the first call of a
// session, `brig sandbox`). A thread that moves only itself (0 written to
// a cgroup v1 "tasks" file) skips that lock: 0.2 ms. So on v1 init's
// forking thread joins the call's cgroups, forks the worker — which is
// born in them, as every child is born in its parent thread's cgroups —
// and leaves again at once. Cgroup v2 has no per-thread move for a domain
// cgroup: there the worker is still moved after it starts.

// cgroupJoin is one cgroup v1 hierarchy's pair of "tasks" files: the
// call's cgroup, and the parent cgroup init's thread returns to.
type cgroupJoin struct{ enter, leave string }

// splitCgroupJoins sorts the call's cgroup.procs files (InitArgs) into the
// v1 cgroups init's forking thread joins for the fork (a "tasks" file
// beside cgroup.procs) and the others (v2), into which the worker is moved
// once started. The thread leaves to the call cgroup's parent — brig's own
// cgroup of that hierarchy, which sets no limit — rather than back where
// init started: that path needs no parsing of /proc, and init's other
// threads never left their place.
func splitCgroupJoins(procs []string) (joins []cgroupJoin, moves []string) {
	for _, p := range procs {
		dir := filepath.Dir(p)
		tasks := filepath.Join(dir, "tasks")
		parent := filepath.Join(filepath.Dir(dir), "tasks")
		if fileExists(tasks) && fileExists(parent) {
			joins = append(joins, cgroupJoin{enter: tasks, leave: parent})
			continue
		}
		moves = append(moves, p)
	}
	return joins, moves
}

// enterCgroups moves the calling thread (locked to its goroutine) into
// each join's cgroup. On failure it leaves the ones it entered.
func enterCgroups(joins []cgroupJoin) error {
	for i, j := range joins {
		if err := moveThisThread(j.enter); err != nil {
			return errors.Join(fmt.Errorf("join the call's cgroup for the worker's fork (%s): %w", j.enter, err), leaveCgroups(joins[:i]))
		}
	}
	return nil
}

// leaveCgroups moves the calling thread out of each join's cgroup, to its
// parent.
func leaveCgroups(joins []cgroupJoin) error {
	var errs []error
	for _, j := range joins {
		if err := moveThisThread(j.leave); err != nil {
			errs = append(errs, fmt.Errorf("leave the call's cgroup after the worker's fork (to %s): %w", j.leave, err))
		}
	}
	return errors.Join(errs...)
}

// moveThisThread writes 0 — the calling thread, and no other — to the
// cgroup v1 tasks file.
func moveThisThread(tasks string) error {
	return os.WriteFile(tasks, []byte("0"), 0)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

package jail

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Without a PID namespace nothing in the kernel ties a call's processes to
// init: init finds them, and the supervisor finds them should init fail to
// end them, through the parent links of /proc. A call's processes cannot
// leave init's subtree while init lives: init is their child subreaper, so
// an orphan comes back to it.

// KillTree kills every process below root (not root itself) and returns
// once none of them runs any more — a zombie has stopped running — or when
// ctx ends. It is the supervisor's way to end a call whose init did not:
// without a PID namespace, killing init alone leaves the call's processes
// running (re-parented to init's parent's subreaper). Kill root only after
// it returns, so that orphans gather under root meanwhile.
//
// Each process is signalled through a pidfd opened before its parent is
// checked again, so a pid reused by an unrelated process is never signalled.
// A killed process cannot fork any more, so the rounds end: each finds only
// processes forked before the last signal reached their parent.
func KillTree(ctx context.Context, root int) error {
	for {
		tree := descendants(root, nil)
		in := make(map[int]bool, len(tree)+1)
		in[root] = true
		for _, pid := range tree {
			in[pid] = true
		}
		running := 0
		for _, pid := range tree {
			fd, err := unix.PidfdOpen(pid, 0)
			if err != nil {
				continue // gone meanwhile
			}
			if ppid, state := procStat(pid); in[ppid] && state != 'Z' && state != 'X' {
				running++
				_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
			}
			_ = unix.Close(fd)
		}
		if running == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d processes below pid %d still run after SIGKILL: %w", running, root, ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// descendants lists the processes below root, parents before children,
// zombies included. keep, when not nil, selects which entries of /proc are
// looked at (a cheaper test than reading each one's stat file).
func descendants(root int, keep func(name string) bool) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || (keep != nil && !keep(e.Name())) {
			continue
		}
		if ppid, _ := procStat(pid); ppid > 0 {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var pids []int
	queue := children[root]
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		pids = append(pids, p)
		queue = append(queue, children[p]...)
	}
	return pids
}

// procStat reads a process's parent pid and state letter from
// /proc/PID/stat (0 and 0 when it is gone).
func procStat(pid int) (ppid int, state byte) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0
	}
	// pid (comm) state ppid …; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 || len(f[0]) != 1 {
		return 0, 0
	}
	ppid, _ = strconv.Atoi(string(f[1]))
	return ppid, f[0][0]
}

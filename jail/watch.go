package jail

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Init watches what the kernel cannot bound for an ordinary user: the
// call's memory in total (RLIMIT_DATA is per process; a root supervisor
// uses a memory cgroup instead), a call that sits at its process limit (a
// fork bomb, which RLIMIT_NPROC or the pids cgroup only stalls), and the
// free space of the filesystems the call writes. It looks every
// watchInterval, on its own loop, and stops the whole call (killAll) when
// one is exceeded, saying which in the Result.

// watchInterval is how often init looks at the call's memory, processes
// and disks.
const watchInterval = 100 * time.Millisecond

// DiskReserve is the free space below which a call that writes to a
// filesystem is stopped whatever its Disk limit: 1 GiB, or 5% of a
// smaller filesystem. It keeps room for brig's own session and state.
func DiskReserve(size uint64) uint64 { return min(1<<30, size/20) }

// oomScoreAdj makes the calling process, and everything it starts, the OOM
// killer's first choice. Raising one's own score needs no privilege, and
// lowering it again would (CAP_SYS_RESOURCE), so no process of the call can
// undo it.
func oomScoreAdj() error {
	if err := os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0); err != nil {
		return fmt.Errorf("make the call the OOM killer's first choice (oom_score_adj 1000): %w", err)
	}
	return nil
}

// watch is init's record of one call's limits and the disks it writes.
type watch struct {
	lim    Limits
	memory bool     // watch memory (no memory cgroup bounds it)
	pidNS  bool     // /proc lists exactly the call's processes
	tmp    []string // the private tmpfs mounts, counted in memory
	disks  []disk
	last   time.Time
	atMax  int // consecutive looks that found the call at its process limit
}

// disk is a filesystem the call can write, as it was when the call started.
type disk struct {
	path      string // a write grant on it (for messages)
	fsid      unix.Fsid
	freeStart uint64 // free blocks × block size, counting root's reserve
	reserve   uint64
}

// newWatch records the starting state of the filesystems the call can
// write: call it once the view is built, before the tool starts.
func newWatch(spec Spec, pidNS, memoryCgroup bool) *watch {
	w := &watch{lim: spec.Limits, memory: !memoryCgroup && spec.Limits.Memory > 0, pidNS: pidNS, last: time.Now()}
	if spec.PrivateTmp {
		w.tmp = []string{"/tmp", "/dev/shm"}
	}
	if spec.Limits.Disk == 0 {
		return w
	}
	seen := map[unix.Fsid]bool{}
	for _, r := range spec.Paths {
		// The private /tmp and /dev/shm are watched as tmpfs (w.tmp); a
		// grant below them (a workspace in /tmp) is the real directory
		// carried into the view, on the filesystem it lives on.
		if r.Access != Write || within(r.Path, "/dev") || within(r.Path, "/proc") || (spec.PrivateTmp && r.Path == "/tmp") {
			continue
		}
		var st unix.Statfs_t
		if unix.Statfs(r.Path, &st) != nil || seen[st.Fsid] {
			continue
		}
		seen[st.Fsid] = true
		w.disks = append(w.disks, disk{
			path: r.Path, fsid: st.Fsid,
			freeStart: st.Bfree * uint64(st.Bsize),
			reserve:   DiskReserve(st.Blocks * uint64(st.Bsize)),
		})
	}
	return w
}

// check looks at the call, at most every watchInterval, and returns the
// limit it exceeds with a sentence saying so, or "" when it is within all.
func (w *watch) check(now time.Time) (limit, detail string) {
	if now.Sub(w.last) < watchInterval {
		return "", ""
	}
	w.last = now
	if w.memory || w.lim.Processes > 0 {
		tasks, mem := w.processes()
		if w.memory {
			tmp := w.tmpUsed()
			if total := mem + tmp; total > w.lim.Memory {
				return LimitMemory, fmt.Sprintf("the call used more than its memory limit of %s (%s in its processes, %s in its /tmp and /dev/shm), so brig stopped it and every process of the call was killed", Bytes(w.lim.Memory), Bytes(mem), Bytes(tmp))
			}
		}
		if w.lim.Processes > 0 && tasks >= w.lim.Processes {
			// At the limit, forks fail; a call that stays there is a
			// fork bomb or stuck, and would hold the CPU till its
			// timeout. Above it (RLIMIT_NPROC without a user namespace
			// counts the user's other processes too, which may have
			// ended since the call started) it is stopped at once.
			if w.atMax++; w.atMax >= 2 || tasks > w.lim.Processes {
				return LimitProcesses, fmt.Sprintf("the call stayed at its limit of %d processes and threads (a fork bomb, or a build that starts too many at once), so brig stopped it and every process of the call was killed", w.lim.Processes)
			}
		} else {
			w.atMax = 0
		}
	}
	for _, d := range w.disks {
		var st unix.Statfs_t
		if unix.Statfs(d.path, &st) != nil || st.Fsid != d.fsid {
			continue
		}
		free := st.Bfree * uint64(st.Bsize)
		used := uint64(0)
		if d.freeStart > free {
			used = d.freeStart - free
		}
		switch {
		case used > w.lim.Disk:
			return LimitDisk, fmt.Sprintf("the call used more than its limit of %s of disk space on the filesystem of %s, so brig stopped it and every process of the call was killed; what it wrote is still there", Bytes(w.lim.Disk), d.path)
		case used > 0 && st.Bavail*uint64(st.Bsize) < d.reserve:
			return LimitDisk, fmt.Sprintf("the filesystem of %s is nearly full (%s left; brig keeps %s free), so brig stopped the call after it wrote %s there and every process of the call was killed; what it wrote is still there", d.path, Bytes(st.Bavail*uint64(st.Bsize)), Bytes(d.reserve), Bytes(used))
		}
	}
	return "", ""
}

// processes counts the call's tasks (processes and threads, init's own
// included: what RLIMIT_NPROC and the pids cgroup count) and adds up the
// resident anonymous and shared memory and the swap of its processes
// (init's excluded). Shared memory mapped by several processes counts once
// for each: the total errs on the high side.
func (w *watch) processes() (tasks, mem uint64) {
	for _, pid := range append(w.pids(), -1) {
		name := "self"
		if pid > 0 {
			name = strconv.Itoa(pid)
		}
		b, err := os.ReadFile("/proc/" + name + "/status")
		if err != nil {
			continue // gone meanwhile
		}
		threads := uint64(1)
		for line := range bytes.Lines(b) {
			key, rest, ok := bytes.Cut(line, []byte(":"))
			if !ok {
				continue
			}
			f := bytes.Fields(rest)
			if len(f) == 0 {
				continue
			}
			v, err := strconv.ParseUint(string(f[0]), 10, 64)
			if err != nil {
				continue
			}
			switch string(key) {
			case "Threads":
				threads = max(v, 1)
			case "RssAnon", "RssShmem", "VmSwap":
				if pid > 0 {
					mem += v << 10
				}
			}
		}
		tasks += threads
	}
	return tasks, mem
}

// pids lists the call's processes. In its PID namespace they are all of
// /proc but init (PID 1). Otherwise they are init's descendants (orphans
// come back to init, a child subreaper), found through the parent of each
// process of init's user: the kernel's per-task children lists can skip
// entries while the tree changes, which a fork bomb does all the time.
func (w *watch) pids() []int {
	self := os.Getpid()
	if w.pidNS {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return nil
		}
		var pids []int
		for _, e := range entries {
			if pid, err := strconv.Atoi(e.Name()); err == nil && pid != self {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	// /proc/PID belongs to the process's effective uid (root when it is
	// not dumpable; the call's processes are).
	uid := uint32(os.Getuid())
	return descendants(self, func(name string) bool {
		var st unix.Stat_t
		return unix.Stat("/proc/"+name, &st) == nil && st.Uid == uid
	})
}

// tmpUsed is what the call's private tmpfs mounts hold.
func (w *watch) tmpUsed() uint64 {
	var used uint64
	for _, p := range w.tmp {
		var st unix.Statfs_t
		if unix.Statfs(p, &st) == nil {
			used += (st.Blocks - st.Bfree) * uint64(st.Bsize)
		}
	}
	return used
}

// Bytes formats n as a human size ("1.5 GiB").
func Bytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

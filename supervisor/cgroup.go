package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// callCgroup bounds one call's process count and total memory with a
// cgroup. The kernel never applies RLIMIT_NPROC to uid 0, so a root
// supervisor needs this to stop a fork bomb; for other users RLIMIT_NPROC,
// counted per user namespace, does the job, init watches the call's memory,
// and no cgroup is made.
type callCgroup struct {
	dirs   []string // one per hierarchy (v1) or one (v2)
	procs  []string // the cgroup.procs files the worker joins
	limits map[string]uint64
	// ooms is the OOM kill count read at the end of the cgroup's last
	// call (oomsKnown), kept for its next call with the same child.
	ooms      uint64
	oomsKnown bool
}

// procFiles returns the cgroup.procs files (none for a nil cgroup).
func (c *callCgroup) procFiles() []string {
	if c == nil {
		return nil
	}
	return c.procs
}

// cgroupPool keeps the empty cgroups of finished calls for later ones:
// creating and removing a cgroup costs more than the rest of a warm call.
type cgroupPool struct {
	mu   sync.Mutex
	free []*callCgroup
}

// get returns an empty call cgroup with the given bounds, or nil when the
// supervisor is not root or the pids controller is not available.
func (p *cgroupPool) get(processes, memory uint64) (*callCgroup, error) {
	p.mu.Lock()
	var c *callCgroup
	if n := len(p.free); n > 0 {
		c, p.free = p.free[n-1], p.free[:n-1]
	}
	p.mu.Unlock()
	if c == nil {
		return newCallCgroup(processes, memory)
	}
	if !c.exists() {
		// Removed meanwhile (by hand, or by a supervisor that took it
		// for a dead one's): make another.
		return newCallCgroup(processes, memory)
	}
	if err := c.setLimits(processes, memory); err != nil {
		c.remove()
		return newCallCgroup(processes, memory)
	}
	// A new child's worker may join it before its call: its next count
	// is read afresh.
	c.oomsKnown = false
	return c, nil
}

// put returns a cgroup whose processes are all gone.
func (p *cgroupPool) put(c *callCgroup) {
	if c == nil {
		return
	}
	p.mu.Lock()
	p.free = append(p.free, c)
	p.mu.Unlock()
}

// removeAll deletes every pooled cgroup.
func (p *cgroupPool) removeAll() {
	p.mu.Lock()
	free := p.free
	p.free = nil
	p.mu.Unlock()
	for _, c := range free {
		c.remove()
	}
}

var cgroupSeq atomic.Uint64

// removeStaleCgroups deletes empty call cgroups left by supervisors that
// died: their PID namespace and pid are in the name, and only a supervisor
// in the same PID namespace can tell whether that pid is gone (containers
// on one machine share the cgroup hierarchy). Non-empty ones stay: rmdir
// refuses them.
func removeStaleCgroups() {
	ns := pidNamespace()
	for _, parent := range []string{"/sys/fs/cgroup/pids/brig", "/sys/fs/cgroup/memory/brig", "/sys/fs/cgroup/brig"} {
		entries, err := os.ReadDir(parent)
		if err != nil {
			continue
		}
		for _, e := range entries {
			var theirNS uint64
			var pid int
			if _, err := fmt.Sscanf(e.Name(), "call-%d-ns%d-", &pid, &theirNS); err != nil || theirNS != ns || pid == os.Getpid() {
				continue
			}
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); errors.Is(err, os.ErrNotExist) {
				_ = os.Remove(filepath.Join(parent, e.Name()))
			}
		}
	}
}

// newCallCgroup creates the call's cgroup under brig's own parent cgroup.
// It returns nil (no error) when the process is not root or the pids
// controller is not mounted where brig can write.
func newCallCgroup(processes, memory uint64) (*callCgroup, error) {
	if os.Geteuid() != 0 || processes == 0 {
		return nil, nil
	}
	name := fmt.Sprintf("call-%d-ns%d-%d-%d", os.Getpid(), pidNamespace(), time.Now().UnixNano(), cgroupSeq.Add(1))
	cg := &callCgroup{}
	switch {
	case exists("/sys/fs/cgroup/pids/cgroup.procs"): // v1
		if err := cg.add("/sys/fs/cgroup/pids/brig", name, map[string]uint64{"pids.max": processes}); err != nil {
			return nil, err
		}
		if memory > 0 && exists("/sys/fs/cgroup/memory/cgroup.procs") {
			// Best effort: a memory hierarchy we cannot write is not fatal,
			// RLIMIT_DATA still bounds each process.
			_ = cg.add("/sys/fs/cgroup/memory/brig", name, map[string]uint64{"memory.limit_in_bytes": memory})
		}
	case exists("/sys/fs/cgroup/cgroup.controllers"): // v2
		parent := "/sys/fs/cgroup/brig"
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", parent, err)
		}
		_ = os.WriteFile("/sys/fs/cgroup/cgroup.subtree_control", []byte("+pids +memory"), 0)
		_ = os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+pids +memory"), 0)
		limits := map[string]uint64{"pids.max": processes}
		if memory > 0 {
			limits["memory.max"] = memory
		}
		if err := cg.add(parent, name, limits); err != nil {
			return nil, err
		}
		if memory > 0 {
			// No swap either, or memory.max bounds only RAM (best
			// effort: the file exists only with swap accounting).
			_ = os.WriteFile(filepath.Join(parent, name, "memory.swap.max"), []byte("0"), 0)
		}
	default:
		return nil, nil
	}
	return cg, nil
}

func (c *callCgroup) add(parent, name string, limits map[string]uint64) error {
	dir := filepath.Join(parent, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create cgroup %s: %w", dir, err)
	}
	c.dirs = append(c.dirs, dir)
	if c.limits == nil {
		c.limits = map[string]uint64{}
	}
	for file, v := range limits {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(strconv.FormatUint(v, 10)), 0); err != nil {
			c.remove()
			return fmt.Errorf("set %s in %s: %w", file, dir, err)
		}
		c.limits[filepath.Join(dir, file)] = v
	}
	c.procs = append(c.procs, filepath.Join(dir, "cgroup.procs"))
	return nil
}

// boundsMemory reports whether the cgroup limits the call's memory.
func (c *callCgroup) boundsMemory() bool { return c.memoryDir() != "" }

// memoryDir is the cgroup directory whose memory limit is set, or "".
func (c *callCgroup) memoryDir() string {
	dir, _ := c.memoryCounters()
	return dir
}

// memoryCounters is the memory cgroup's directory and the file in it that
// counts OOM kills: memory.events (v2) or memory.oom_control (v1), told
// apart by the limit file the cgroup was made with ("" when it bounds no
// memory).
func (c *callCgroup) memoryCounters() (dir, events string) {
	if c == nil {
		return "", ""
	}
	for p := range c.limits {
		switch filepath.Base(p) {
		case "memory.max":
			return filepath.Dir(p), "memory.events"
		case "memory.limit_in_bytes":
			return filepath.Dir(p), "memory.oom_control"
		}
	}
	return "", ""
}

// oomKillsBefore is oomKills at the start of a call: the count read at
// the end of the cgroup's last call (oomKillsAfter) when it serves the
// same child again — a serving init, whose commands are the only
// processes ever in the cgroup and are all gone between its calls, so
// the count cannot have moved —, else read now. A read of a memory
// cgroup's counters costs about 45 µs here (cgroup v1's oom_control).
func (c *callCgroup) oomKillsBefore() uint64 {
	if c != nil && c.oomsKnown {
		c.oomsKnown = false // once: only a read after this call is kept
		return c.ooms
	}
	return c.oomKills()
}

// oomKillsAfter is oomKills once a call's processes are all gone,
// remembered for the cgroup's next call (oomKillsBefore).
func (c *callCgroup) oomKillsAfter() uint64 {
	n := c.oomKills()
	if c != nil {
		c.ooms, c.oomsKnown = n, true
	}
	return n
}

// oomKills is how many processes the OOM killer has killed in the cgroup
// so far (0 when unknown). It is read before and after every call, so it
// opens only the file its cgroup version has.
func (c *callCgroup) oomKills() uint64 {
	dir, events := c.memoryCounters()
	if dir == "" {
		return 0
	}
	b, err := os.ReadFile(filepath.Join(dir, events))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// setLimits changes the bounds of a cgroup made earlier (a warm child's).
func (c *callCgroup) setLimits(processes, memory uint64) error {
	if c == nil {
		return nil
	}
	want := map[string]uint64{"pids.max": processes, "memory.limit_in_bytes": memory, "memory.max": memory}
	for p, cur := range c.limits {
		v := want[filepath.Base(p)]
		if v == 0 || v == cur {
			continue // unchanged: a write costs a syscall round trip per file
		}
		if err := os.WriteFile(p, []byte(strconv.FormatUint(v, 10)), 0); err != nil {
			return fmt.Errorf("set %s: %w", p, err)
		}
		c.limits[p] = v
	}
	return nil
}

// remove deletes the call's cgroups; the call's processes are dead by then.
func (c *callCgroup) remove() {
	if c == nil {
		return
	}
	for _, d := range c.dirs {
		// rmdir fails while the last killed processes are still exiting.
		for i := 0; i < 50; i++ {
			if err := os.Remove(d); err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// exists reports whether the cgroup's directories are all still there.
func (c *callCgroup) exists() bool {
	for _, p := range c.procs {
		if !exists(p) {
			return false
		}
	}
	return true
}

// pidNamespace is the inode number of this process's PID namespace (0 when
// it cannot be read).
func pidNamespace() uint64 {
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/self/ns/pid", &st); err != nil {
		return 0
	}
	return st.Ino
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

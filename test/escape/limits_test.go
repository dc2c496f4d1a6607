package escape

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"brig/jail"
	"brig/test/fakeprovider"
)

// ---------------------------------------------------------------------------
// limits: a call that takes the machine's memory, processes or disk is
// stopped (the Result names the limit), while a call running at the same
// time and the supervisor go on. Detected by what the hostile processes
// managed (bytes allocated, files written, processes alive afterwards), by
// the concurrent call's output, and by the jailed processes' OOM score.

// hogScript starts n processes that each allocate and touch mib MiB, say
// so, and wait; the marker names them for markerPIDs. Each takes 10 MiB
// at a time and pauses 50 ms between, so that n of them grow by at most
// n × 200 MiB/s however fast the machine: a watch that looks every 100 ms
// (init's, without a memory cgroup) then stops them within a bounded
// overshoot, which the attack checks. (Touched at full speed, four of
// them reached 525 MiB within one look on this VM.)
func hogScript(n, mib int, marker string) string {
	return fmt.Sprintf(`for i in $(seq %d); do python3 -c '
import sys, time
held = []
for k in range(%d // 10):
    b = bytearray(10 << 20)
    for j in range(0, len(b), 4096): b[j] = 1
    held.append(b)
    time.sleep(0.05)
print("ALLOC-DONE", flush=True)
time.sleep(3)' %s & done; wait; echo HOG-END`, n, mib, marker)
}

// concurrently runs a well-behaved call while f runs and returns its result.
func concurrently(t *testing.T, e *env, f func()) jail.Result {
	t.Helper()
	var wg sync.WaitGroup
	var res jail.Result
	var err error
	wg.Add(1)
	go func() {
		defer wg.Done()
		res, err = e.call([]string{"/bin/sh", "-c", `i=0; while [ $i -lt 20 ]; do i=$((i+1)); sleep 0.1; done; echo CONCURRENT-ALIVE`})
	}()
	f()
	wg.Wait()
	if err != nil {
		t.Errorf("the concurrent call failed: %v", err)
	}
	return res
}

func limitCases() []escCase {
	cases := []escCase{
		{family: "limits", name: "memory hog with a concurrent call", passes: inNoNS, probe: true,
			control: func(t *testing.T, e *env) {
				res := e.sh(hogScript(3, 100, "brighog"+randHex(4)), withLimits(func(l *jail.Limits) { l.Timeout = memoryBackstop; l.Memory = 1 << 30 }))
				if n := strings.Count(string(res.Stdout), "ALLOC-DONE"); n != 3 || res.Limit != "" {
					controlFail(t, "with 1 GiB, 3 × 100 MiB did not all allocate (%d did; limit %q): %s", n, res.Limit, output(res))
				}
			},
			attack: func(t *testing.T, e *env) {
				marker := "brighog" + randHex(6)
				t.Cleanup(func() { killMarked(marker) })
				var res jail.Result
				var peak uint64
				other := concurrently(t, e, func() {
					stop := sampleRSS(marker, &peak)
					res = e.sh(hogScript(4, 150, marker), withLimits(func(l *jail.Limits) { l.Timeout = memoryBackstop; l.Memory = 256 << 20; l.TmpBytes = 64 << 20 }))
					stop()
				})
				if res.Limit != jail.LimitMemory {
					escaped(t, "4 × 150 MiB under a 256 MiB call limit (as %s) ended without the memory limit (limit %q, exit %d): %s", who(), res.Limit, res.ExitCode, output(res))
				}
				if n := strings.Count(string(res.Stdout), "ALLOC-DONE"); n == 4 {
					escaped(t, "all 4 hog processes of 150 MiB allocated under a 256 MiB limit")
				}
				// The memory cgroup never lets it past; init's watch looks
				// every 100 ms, in which the four paced hogs grow by at
				// most 80 MiB: twice the limit is more than three looks
				// late.
				if peak > (256+256)<<20 {
					escaped(t, "the hog processes held %s at once under a 256 MiB limit (as %s)", jail.Bytes(peak), who())
				}
				t.Logf("peak of the hog processes: %s (as %s)", jail.Bytes(peak), who())
				if pids := markerPIDs(marker); len(pids) > 0 {
					escaped(t, "%d hog processes survive the call", len(pids))
				}
				if !strings.Contains(res.LimitDetail, "memory limit") {
					t.Errorf("the limit is not explained: %q", res.LimitDetail)
				}
				if !strings.Contains(string(other.Stdout), "CONCURRENT-ALIVE") || other.Limit != "" {
					t.Errorf("the call running at the same time did not survive: %s (limit %q)", output(other), other.Limit)
				}
			}},
		{family: "limits", name: "private /tmp and /dev/shm count as memory", passes: inNoNS,
			control: func(t *testing.T, e *env) {
				if !e.pass.namespaces() {
					t.Skip("without a mount namespace /tmp is a directory on disk (the disk limit applies)")
				}
				res := e.sh(tmpFiller(100),
					withLimits(func(l *jail.Limits) { l.Timeout = memoryBackstop; l.Memory = 1 << 30; l.TmpBytes = 512 << 20 }))
				if !strings.Contains(string(res.Stdout), "TMP-END") || res.Limit != "" {
					controlFail(t, "with 1 GiB, 200 MiB of /tmp and /dev/shm was stopped (limit %q): %s", res.Limit, output(res))
				}
			},
			attack: func(t *testing.T, e *env) {
				if !e.pass.namespaces() {
					t.Skip("without a mount namespace /tmp is a directory on disk (the disk limit applies)")
				}
				res := e.sh(tmpFiller(200), withLimits(func(l *jail.Limits) { l.Timeout = memoryBackstop; l.Memory = 256 << 20; l.TmpBytes = 256 << 20 }))
				if res.Limit != jail.LimitMemory {
					escaped(t, "400 MiB in /tmp and /dev/shm under a 256 MiB call limit (as %s) was not stopped (limit %q): %s", who(), res.Limit, output(res))
				}
			}},
		{family: "limits", name: "fork bomb stopped with a concurrent call", passes: inNoNS, probe: true,
			control: func(t *testing.T, e *env) {
				res := e.sh(`for i in $(seq 20); do sleep 0.5 & done; wait; echo FORKS-END`, withLimits(func(l *jail.Limits) { l.Processes = 256 }))
				if !strings.Contains(string(res.Stdout), "FORKS-END") || res.Limit != "" {
					controlFail(t, "20 processes under a limit of 256 were stopped (limit %q): %s", res.Limit, output(res))
				}
			},
			attack: func(t *testing.T, e *env) {
				marker := "brigbomb" + randHex(6)
				t.Cleanup(func() { killMarked(marker) })
				// Without a user namespace an ordinary user's RLIMIT_NPROC
				// counts all of the user's tasks, which the suite's other
				// calls share: the bomb may be held below its own budget,
				// bounded but not stopped, until its timeout (README).
				shared := unprivPass && !e.pass.namespaces()
				// brig gives the call its budget on top of the uid's
				// tasks at the start, and the suite's other passes run
				// tasks of this uid too (some in other user namespaces,
				// which the kernel counts apart): without a user namespace
				// the bomb may hold up to that many more than 64.
				others := 0
				if shared {
					// One bomb of this uid at a time across the suite's
					// processes, as in runBomb: the same case of another
					// pass without user namespaces, bombing beside this one,
					// raised the uid's count past even the concurrent
					// call's limit (its sh could not fork), each bomb
					// getting its budget on top of the other's tasks.
					defer uidLock(t, "bombs")()
					others = uidTasks(os.Getuid())
				}
				var res jail.Result
				var err error
				other := concurrently(t, e, func() {
					res, err = e.call([]string{probeBin, "bomb", "100000", marker}, withLimits(func(l *jail.Limits) {
						l.Processes = 64
						l.Timeout = 10 * time.Second
					}))
				})
				var se *jail.StageError
				if shared && errors.As(err, &se) && se.Stage == jail.StageExec && errors.Is(err, unix.EAGAIN) {
					t.Logf("the user's shared RLIMIT_NPROC, full with the suite's other calls, refused to start the bomb at all (no user namespace): %v", err)
					return
				}
				if err != nil {
					t.Fatalf("the bomb's call failed: %v", err)
				}
				var created int
				for _, l := range strings.Split(string(res.Stdout), "\n") {
					if strings.HasPrefix(l, "BOMB ") {
						fmt.Sscanf(l, "BOMB created=%d", &created)
					}
				}
				switch {
				case res.Limit == jail.LimitProcesses && !res.TimedOut:
				case shared && res.TimedOut && created <= 64+others:
					t.Logf("held at %d processes by the user's shared RLIMIT_NPROC (%d other tasks of the uid at the start) and ended by its timeout (no user namespace)", created, others)
				case res.TimedOut && created < 64:
					// The kernel counts tasks init has not reaped yet; on a
					// loaded machine init's count can stay just under the
					// limit while every fork already fails: bounded, and
					// ended by the timeout (README, Resource limits).
					t.Logf("held at %d processes by RLIMIT_NPROC just under the watch's count and ended by its timeout", created)
				default:
					escaped(t, "a fork bomb under a limit of 64 (as %s; %d other tasks of the uid at the start) was not stopped by it (limit %q, timed out %v, ran %s, created %d)", who(), others, res.Limit, res.TimedOut, res.Duration, created)
				}
				if pids := markerPIDs(marker); len(pids) > 0 {
					escaped(t, "%d bomb processes survive the call", len(pids))
				}
				if !strings.Contains(string(other.Stdout), "CONCURRENT-ALIVE") {
					t.Errorf("the call running at the same time did not survive: %s", output(other))
				}
			}},
		{family: "limits", name: "jailed processes are the OOM killer's first choice", passes: inNoNS,
			control: func(t *testing.T, e *env) {
				// Outside the jail a process may set its own score.
				out, _ := e.outside("/bin/sh", "-c", "echo 500 > /proc/self/oom_score_adj; cat /proc/self/oom_score_adj")
				if strings.TrimSpace(out) != "500" {
					controlFail(t, "outside the jail, oom_score_adj could not be set: %q", out)
				}
			},
			attack: func(t *testing.T, e *env) {
				// The call tries to lower its score (its own /proc entry is
				// readable only with namespaces); the test reads the score
				// of the call's processes from outside while they run.
				marker := "brigoom" + randHex(6)
				t.Cleanup(func() { killMarked(marker) })
				// The marked process waits until the sampler has seen it
				// (the sampler then creates a file in the workspace):
				// an event, not a time — a scan of /proc took longer than
				// a 2-second sleep on a loaded machine, and the sampler
				// saw nothing.
				sampled := filepath.Join(e.ws, "oom-sampled-"+randHex(4))
				seen := map[string]bool{}
				callEnded, done := make(chan struct{}), make(chan struct{})
				go func() {
					defer close(done)
					for {
						for _, pid := range markerPIDs(marker) {
							if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/oom_score_adj", pid)); err == nil {
								seen[strings.TrimSpace(string(b))] = true
							}
						}
						if len(seen) > 0 {
							if err := os.WriteFile(sampled, nil, 0o644); err != nil {
								t.Errorf("tell the call it was sampled: %v", err)
							}
							return
						}
						select {
						case <-callEnded:
							return
						case <-time.After(20 * time.Millisecond):
						}
					}
				}()
				res := e.sh(`echo -1000 > /proc/self/oom_score_adj 2>/dev/null; echo 0 > /proc/self/oom_score_adj 2>/dev/null; cat /proc/self/oom_score_adj 2>/dev/null; sh -c 'while [ ! -e "$1" ]; do sleep 0.05; done' ` + marker + ` ` + sampled)
				close(callEnded)
				<-done
				if len(seen) == 0 {
					controlFail(t, "the sampler never saw the call's marked process (timed out %v): %s", res.TimedOut, output(res))
				}
				if got := strings.TrimSpace(string(res.Stdout)); e.pass.namespaces() && got != "1000" {
					escaped(t, "a jailed process's oom_score_adj is %q after trying to lower it (as %s), want 1000", got, who())
				}
				if len(seen) != 1 || !seen["1000"] {
					escaped(t, "the call's processes had oom_score_adj %v (as %s), want 1000", seen, who())
				}
			}},
		{family: "limits", name: "disk filler", passes: inNoNS,
			control: func(t *testing.T, e *env) {
				defer diskLock(t, e)()
				res := e.sh(diskFiller(0.5), withLimits(func(l *jail.Limits) { l.Disk = 1 << 30; l.FileSize = 256 << 20 }))
				if !strings.Contains(string(res.Stdout), "FILL-END") || res.Limit != "" || dirSize(filepath.Join(e.ws, "src/fill")) != 128<<20 {
					controlFail(t, "with 1 GiB of disk, 128 MiB of files were stopped (limit %q, %d bytes): %s", res.Limit, dirSize(filepath.Join(e.ws, "src/fill")), output(res))
				}
			},
			attack: func(t *testing.T, e *env) {
				// The watch looks every 0.1 s: the call writes 128 MiB at
				// once and then waits. The watch measures free space, so
				// space others free meanwhile would hide the write: the
				// suite's other disk fills (this case in other passes and
				// in the re-executed ones) are removed while the lock is
				// held, never during another's call.
				defer diskLock(t, e)()
				res := e.sh(diskFiller(3), withLimits(func(l *jail.Limits) { l.Disk = 32 << 20; l.FileSize = 256 << 20 }))
				if res.Limit != jail.LimitDisk || strings.Contains(string(res.Stdout), "FILL-END") {
					escaped(t, "a call that wrote 128 MiB under a 32 MiB disk limit was not stopped (as %s; limit %q): %s", who(), res.Limit, output(res))
				}
			}},
	}
	for i := range cases {
		// One at a time (and taken before a slot of the suite's
		// semaphore): they load the machine, and must not starve the
		// suite's cases that wait on the clock.
		cases[i].serial = true
	}
	return cases
}

// diskFiller writes 128 MiB (in src/: without namespaces the top of the
// workspace takes no new entry), waits wait seconds and says it ended.
// diskLock takes a lock on the disk cases, shared by every process of the
// suite (the re-executed passes too), and returns its release, which first
// removes what the call wrote.
func diskLock(t *testing.T, e *env) func() {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "brig-escape-disk.lock"), os.O_CREATE|os.O_RDONLY, 0o644) // flock needs no write access: uid 65534 opens root's file too
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		t.Fatal(err)
	}
	return func() {
		os.RemoveAll(filepath.Join(e.ws, "src/fill"))
		f.Close() // releases the lock
	}
}

func diskFiller(wait float64) string {
	return fmt.Sprintf(`mkdir -p src/fill && dd if=/dev/zero of=src/fill/f bs=1M count=128 2>/dev/null; sleep %g; echo FILL-END`, wait)
}

// tmpFiller writes mib MiB to /tmp and as much to /dev/shm, in files of
// 32 MiB (each under the file size limit).
func tmpFiller(mib int) string {
	return fmt.Sprintf(`for d in /tmp /dev/shm; do for i in $(seq %d); do dd if=/dev/zero of=$d/f$i bs=1M count=32 2>/dev/null; done; done; sleep 0.5; echo TMP-END`, mib/32)
}

// sampleRSS adds up, every 20 ms, the resident memory of the processes
// whose command line holds marker, keeping the highest sum in *peak, until
// the returned stop is called.
func sampleRSS(marker string, peak *uint64) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			var sum uint64
			for _, pid := range markerPIDs(marker) {
				b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
				for _, line := range strings.Split(string(b), "\n") {
					if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
						var kb uint64
						fmt.Sscan(v, &kb)
						sum += kb << 10
					}
				}
			}
			*peak = max(*peak, sum)
			select {
			case <-quit:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() { close(quit); <-done }
}

func dirSize(dir string) int64 {
	var n int64
	entries, _ := os.ReadDir(dir)
	for _, en := range entries {
		if fi, err := en.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// TestLimitsKeepTheSession: `brig -p`, with the user's [limits] config, runs
// a model whose calls are a memory hog and a fork bomb: each is stopped,
// the model is told which limit stopped it, the turn goes on to its end,
// and the saved session reads back whole. Runs as root and, through
// TestUnprivileged, as uid 65534.
func TestLimitsKeepTheSession(t *testing.T) {
	t.Parallel()
	if probeBin == "" {
		t.Skipf("needs the C probe: %s", probeWhy)
	}
	if !sup.Namespaces() && sup.LandlockABI() < 6 {
		notApplicable(t, "without user namespaces below Landlock ABI 6 brig refuses every call (nothing would contain its processes), so no limit is ever reached")
	}
	root, err := os.MkdirTemp("/var/tmp", "brig-escape-limits-")
	if err != nil {
		t.Fatal(err)
	}
	root, _ = filepath.EvalSymlinks(root)
	t.Cleanup(func() { removeAll(root) })
	ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
	for _, d := range []string{filepath.Join(ws, ".git"), filepath.Join(home, ".config", "brig")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Without a user namespace an ordinary user's RLIMIT_NPROC counts
	// every process of the uid on the machine (other passes of this suite
	// run as uid 65534 at the same time, each Go test binary with its
	// threads): the call's budget is 64 beyond what the uid holds now, with
	// room for those passes to grow, or the hog's first fork already fails.
	procs := 64
	if !sup.Namespaces() && os.Getuid() != 0 {
		procs += uidTasks(os.Getuid()) + 256
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "brig", "config.toml"), []byte(fmt.Sprintf("[limits]\nmemory = \"256M\"\nprocesses = %d\ntimeout = \"60s\"\n", procs)), 0o644); err != nil {
		t.Fatal(err)
	}
	// The probe goes into the workspace: /tmp (where the test keeps it) is
	// the call's own.
	if err := copyFile(filepath.Join(ws, "probe"), probeBin, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := "brigsess" + randHex(6)
	t.Cleanup(func() { killMarked(marker) })
	bomb, _ := json.Marshal(map[string]string{"command": "./probe bomb 100000 " + marker})
	hog, _ := json.Marshal(map[string]string{"command": hogScript(4, 150, marker)})
	srv, err := fakeprovider.Start(fakeprovider.Script{Turns: []fakeprovider.Turn{
		{ToolCalls: []fakeprovider.ToolCall{{Name: "bash", Input: hog}}},
		{ToolCalls: []fakeprovider.ToolCall{{Name: "bash", Input: bomb}}},
		{Text: "both were stopped"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, brigBin, "--model", "claude-sonnet-4-5", "-p", "stress it", "--mode", "auto", "--yes", "--output", "json")
	cmd.Dir = ws
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "LANG=C.UTF-8", "ANTHROPIC_API_KEY=sk-ant-limits", "ANTHROPIC_BASE_URL=" + srv.URL()}
	if v, ok := os.LookupEnv(jail.TestABIEnv); ok {
		cmd.Env = append(cmd.Env, jail.TestABIEnv+"="+v) // a capped run stays capped
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("brig -p: %v\n%s\n%s", err, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "both were stopped") {
		t.Fatalf("the turn did not reach its end: %s\n%s", out.String(), errb.String())
	}
	var sent string
	for _, r := range srv.Requests() {
		sent += string(r.Body)
	}
	if !strings.Contains(sent, "brig's memory limit") {
		t.Errorf("the model was not told the memory limit; requests:\n%s", sent)
	}
	// The bomb is stopped at its process limit, or — where the kernel's
	// process count held it below that limit all along — it is bounded
	// until the call's timeout (60 s here, from [limits]); either way the
	// model is told how the call ended.
	if !strings.Contains(sent, "brig's processes limit") && !strings.Contains(sent, "[timed out after 1m0s") {
		t.Errorf("the model was not told how the bomb's call ended; requests:\n%s", sent)
	}
	if pids := markerPIDs(marker); len(pids) > 0 {
		t.Errorf("ESCAPE: %d hostile processes survive the run (as %s)", len(pids), who())
	}
	// The session reads back whole, with the final answer.
	show := exec.CommandContext(ctx, brigBin, "sessions", "list", "--json")
	show.Dir, show.Env = ws, cmd.Env
	list, err := show.Output()
	if err != nil {
		t.Fatalf("brig sessions list: %v %s", err, list)
	}
	var sessions struct {
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
		Problems []any `json:"problems"`
	}
	if err := json.Unmarshal(list, &sessions); err != nil || len(sessions.Sessions) != 1 || len(sessions.Problems) != 0 {
		t.Fatalf("sessions: %v %s", err, list)
	}
	show = exec.CommandContext(ctx, brigBin, "sessions", "show", "--json", sessions.Sessions[0].ID)
	show.Dir, show.Env = ws, cmd.Env
	text, err := show.CombinedOutput()
	bombEnd := "brig's processes limit"
	if !strings.Contains(sent, bombEnd) {
		bombEnd = "[timed out after 1m0s"
	}
	for _, want := range []string{"both were stopped", "brig's memory limit", bombEnd} {
		if err != nil || !strings.Contains(string(text), want) {
			t.Fatalf("the session does not read back whole (%q is missing): %v\n%s", want, err, clip(text))
		}
	}
}

// TestFullDiskKeepsTheSession: on a nearly full filesystem holding the
// workspace and brig's state, a call that fills it is stopped while room is
// left (the model is told), the session goes on and reads back whole; and
// when the disk is full from outside, brig says so and keeps the saved
// session intact. Root only: it mounts a 256 MiB tmpfs. The call writes
// 50 MiB/s, so the 12.8 MiB the watch keeps free last five looks.
func TestFullDiskKeepsTheSession(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("root only: the test mounts a small filesystem")
	}
	root, err := os.MkdirTemp("/var/tmp", "brig-escape-disk-")
	if err != nil {
		t.Fatal(err)
	}
	root, _ = filepath.EvalSymlinks(root)
	t.Cleanup(func() { removeAll(root) })
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256m,mode=755", "tmpfs", root).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", root).Run() })
	ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
	for _, d := range []string{filepath.Join(ws, ".git"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Most of the disk is taken already, by something else.
	if err := os.WriteFile(filepath.Join(root, "other"), make([]byte, 200<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	fill, _ := json.Marshal(map[string]string{"command": "mkdir -p out; for i in $(seq 80); do dd if=/dev/zero of=out/f$i bs=1M count=1 2>/dev/null; sleep 0.02; done; echo FILLED"})
	run := func(turns ...fakeprovider.Turn) (string, string, error) {
		srv, err := fakeprovider.Start(fakeprovider.Script{Turns: turns})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, brigBin, "--model", "claude-sonnet-4-5", "-p", "fill it", "--mode", "auto", "--yes")
		cmd.Dir = ws
		cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "LANG=C.UTF-8", "ANTHROPIC_API_KEY=sk-ant-disk", "ANTHROPIC_BASE_URL=" + srv.URL()}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err = cmd.Run()
		var sent string
		for _, r := range srv.Requests() {
			sent += string(r.Body)
		}
		return out.String() + errb.String(), sent, err
	}
	out, sent, err := run(
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{Name: "bash", Input: fill}}},
		fakeprovider.Turn{Text: "the disk filled up"},
	)
	if err != nil || !strings.Contains(out, "the disk filled up") {
		t.Fatalf("the run with a call filling the disk did not finish: %v\n%s", err, out)
	}
	if !strings.Contains(sent, "brig's disk limit") || !strings.Contains(sent, "nearly full") {
		t.Fatalf("the model was not told the call was stopped for the full disk:\n%s", clip([]byte(sent)))
	}
	sessionOK := func() {
		t.Helper()
		cmd := exec.Command(brigBin, "sessions", "list", "--json")
		cmd.Dir, cmd.Env = ws, []string{"PATH=/usr/bin:/bin", "HOME=" + home}
		b, err := cmd.Output()
		if err != nil || !strings.Contains(string(b), `"id"`) || strings.Contains(string(b), `"problems"`) {
			t.Fatalf("the saved session does not read back: %v\n%s", err, b)
		}
	}
	sessionOK()
	// Now the disk is full from outside: brig says so and loses nothing.
	f, err := os.Create(filepath.Join(root, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.Write(make([]byte, 256<<20)) // until ENOSPC
	f.Close()
	out, _, err = run(fakeprovider.Turn{Text: "hello"})
	if err == nil || !strings.Contains(out, "no space left on device") {
		t.Fatalf("a run on a full disk did not say so: %v\n%s", err, out)
	}
	sessionOK()
}

package escape

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"brig/jail"
	"brig/supervisor"
)

// TestNothingCrossesToTheNextCall: where a command's init serves calls in
// turn (jail/direct.go), what a call leaves must not reach the next call
// of the same init, as if each had its own: a process left running, files
// in its private /tmp and /dev/shm, a System V shared memory segment, and
// its grant (the next call is read-only). The first call proves each was
// made (the control); the second proves it ran in the same init — its
// shell's PID in the namespace is above the last the first call's
// processes had, where a fresh init's first command gets one of the
// lowest — and saw none of it. The background process is checked from the
// host too, the moment the first call returned. Runs as root and, through
// TestUnprivileged, as uid 65534.
func TestNothingCrossesToTheNextCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// A supervisor of its own with a pool of one, so both calls have the
	// same init whatever the other tests run meanwhile.
	own, err := supervisor.New(ctx, supervisor.Options{Executable: brigBin, KillGrace: 3 * time.Second, Prewarm: true, PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if ok, why := supervisor.DirectStarts(own.Namespaces()); !ok {
		notApplicable(t, "each call has an init of its own here: %s", why)
	}
	own.Warm()
	e := newEnv(t, passes[0], "serving", true)
	run := func(prof func(*jail.Spec), script string) jail.Result {
		t.Helper()
		spec, err := e.profile().Spec()
		if err != nil {
			t.Fatal(err)
		}
		if prof != nil {
			prof(&spec)
		}
		cctx, cancel := context.WithTimeout(ctx, untilDeadline(t))
		defer cancel()
		res, err := own.Run(cctx, spec, jail.Invocation{Argv: []string{"/bin/sh", "-c", script}}, supervisor.IO{})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("the call failed: %v, exit %d\nstdout: %s\nstderr: %s", err, res.ExitCode, res.Stdout, res.Stderr)
		}
		return res
	}
	marker := "brigserving" + randHex(6)
	t.Cleanup(func() { killMarked(marker) })
	// The background process: a shell that sleeps, the marker its $0. It
	// is counted the same way in both calls, by its exact command line
	// (the calls' own shells carry the marker in their scripts). The first
	// call waits until exactly one is running: the shell's fork for sleep
	// carries the same command line until it execs, and a count in that
	// moment saw two (CI, once).
	survivor := `setsid sh -c 'sleep 7777; :' ` + marker + ` </dev/null >/dev/null 2>&1 &`
	count := `n=0
for d in /proc/[0-9]*; do
  if [ "$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null)" = "sh -c sleep 7777; : ` + marker + ` " ]; then n=$((n+1)); fi
done
echo "running:$n"
`
	ipcmk, _ := exec.LookPath("ipcmk")
	first := `echo "pid:$$"
` + survivor + `
for i in $(seq 500); do
` + count + `  [ "$n" -eq 1 ] && break; sleep 0.02
done
echo kept >/tmp/mark && echo kept >/dev/shm/mark && echo one >one
echo "tmp:$(cat /tmp/mark) shm:$(cat /dev/shm/mark)"
if [ -n "` + ipcmk + `" ]; then ipcmk -M 4096 >/dev/null; echo "ipc:$(ipcs -m | grep -c '^0x')"; fi
sh -c 'echo "last:$$"'
echo FIRST-DONE`
	res1 := run(nil, first)
	out := string(res1.Stdout)
	controls := []string{"running:1", "tmp:kept shm:kept", "FIRST-DONE"}
	if ipcmk != "" {
		controls = append(controls, "ipc:1")
	}
	for _, want := range controls {
		if !strings.Contains(out, want) {
			controlFail(t, "the first call's output lacks %q, so the case proves nothing:\n%s", want, out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(e.ws, "one")); err != nil || string(b) != "one\n" {
		controlFail(t, "the first call could not write its workspace: %q, %v", b, err)
	}
	if pids := markerPIDs(marker); len(pids) > 0 {
		escaped(t, "the first call's background process %v outlived it", pids)
	}

	readOnly := func(s *jail.Spec) {
		s.Paths = slices.Clone(s.Paths)
		for i, r := range s.Paths {
			if r.Path == e.ws {
				s.Paths[i].Access = jail.Read
			}
		}
	}
	second := `echo "pid:$$"
` + count + `test -e /tmp/mark && echo tmp-kept || echo tmp-clean
test -e /dev/shm/mark && echo shm-kept || echo shm-clean
if command -v ipcs >/dev/null; then echo "ipc:$(ipcs -m | grep -c '^0x')"; fi
(echo two >two) 2>/dev/null && echo wrote-two || echo refused-two
echo SECOND-DONE`
	out = string(run(readOnly, second).Stdout)
	if first, last, second := pidOf(string(res1.Stdout), "pid:"), pidOf(string(res1.Stdout), "last:"), pidOf(out, "pid:"); first < 0 || last < first+5 || second <= last {
		controlFail(t, "the first call's shell was PID %d of its namespace and its last process %d, the second call's shell %d: it did not run in the first call's init, so the case proves nothing:\n%s", first, last, second, out)
	}
	if !strings.Contains(out, "SECOND-DONE") {
		t.Fatalf("the second call did not finish:\n%s", out)
	}
	for _, leak := range []struct{ want, what string }{
		{"running:0", "the first call's background process"},
		{"tmp-clean", "the first call's /tmp"},
		{"shm-clean", "the first call's /dev/shm"},
		{"refused-two", "the first call's write grant"},
	} {
		if !strings.Contains(out, leak.want) {
			escaped(t, "the next call of the same init got %s:\n%s", leak.what, out)
		}
	}
	if ipcmk != "" && !strings.Contains(out, "ipc:0") {
		escaped(t, "the next call of the same init saw the first call's System V shared memory:\n%s", out)
	}
	if strings.Contains(out, "FIRST-DONE") {
		escaped(t, "the next call's output holds the first call's:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "two")); err == nil {
		escaped(t, "the read-only call wrote %s", fmt.Sprint(filepath.Join(e.ws, "two")))
	}
}

// pidOf returns the number after prefix on a line of out, or -1.
func pidOf(out, prefix string) int {
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			if n, err := strconv.Atoi(v); err == nil {
				return n
			}
		}
	}
	return -1
}

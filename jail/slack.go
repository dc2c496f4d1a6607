package jail

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Timer slack: how late the kernel may end a thread's timed sleep, so
// as to serve it with another timer's wake-up (PR_SET_TIMERSLACK; 50 µs
// unless the user's session chose otherwise). Children inherit it, and
// exec keeps it.
//
// Go's runtime has a monitor thread (sysmon) that, while any of the
// process's processors is busy, sleeps 20 µs at a time for the first
// millisecond, and starts over each time the process wakes from idle. A
// call keeps its init busy for a millisecond or two (the view, the
// ruleset, the command's start and end), so init's monitor woke some
// twenty times a call, each wake-up a switch on one of the two cores the
// call itself was using. Init and its worker run with InitTimerSlack
// (the supervisor starts init so, NSProcess.TimerSlack): a monitor's
// sleep then ends with the next timer due anyway, about once a
// millisecond at most. Their own timed waits are coarse (the orphan
// sweep every 100 ms, a kill's retry after 1 ms, the limits' checks),
// and with one processor each (GOMAXPROCS=1) their runtime never sleeps
// for microseconds to steal work from another. On the 2-core VM of
// test/bench/HISTORY.md's 2026-11-30 entry: init's monitor woke 6 times
// a call instead of 21, and a sequential bash call was 0.1-0.7 ms
// faster in each of five alternating comparisons (0.34 on average).
//
// The supervisor keeps the user's slack: with several processors, its
// runtime's work stealing does sleep for microseconds, and a 2 ms slack
// there made four parallel calls 2 ms slower. So do the commands: the
// supervisor passes its own slack to init in TimerSlackEnv, init to its
// worker, and the clone that starts a command sets it before the exec.

// InitTimerSlack is the timer slack of a jail's init and worker, in ns.
const InitTimerSlack = 2_000_000

// TimerSlackEnv names the variable of init's and the worker's environment
// that holds the user's timer slack (ns) for the commands they start.
const TimerSlackEnv = "BRIG_TIMER_SLACK"

// TimerSlack is the calling thread's timer slack in ns (0 if unknown).
func TimerSlack() uint64 {
	v, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil || v <= 0 {
		return 0
	}
	return uint64(v)
}

// commandTimerSlack is the timer slack a command started here gets:
// TimerSlackEnv's, or 0 (keep this process's) when it is not set, as in
// a test that starts a command itself.
func commandTimerSlack() uint64 {
	v, err := strconv.ParseUint(os.Getenv(TimerSlackEnv), 10, 64)
	if err != nil {
		return 0
	}
	return v
}

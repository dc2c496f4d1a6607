// Command agent measures the harness around the jail: a scripted session of
// N tool calls run by the real `brig -p` against the fake provider on
// loopback. It reports the time from start to the first request, the
// harness overhead per tool call (wall time minus the fake provider's own
// time, minus the tool calls' own time, minus start-up, divided by N), and
// brig's peak RSS.
package main

import (
	"brig/test/brigbin"
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"brig/test/fakeprovider"
)

func main() {
	calls := flag.Int("calls", 50, "tool calls in the scripted session")
	runs := flag.Int("runs", 5, "sessions to run (the median is reported)")
	chunkDelay := flag.Int("chunk-delay-ms", 4, "the fake model's delay between stream chunks (a real model takes far longer; 0 makes calls arrive faster than the supervisor can prewarm the next jail child)")
	flag.Parse()
	if err := run(*calls, *runs, *chunkDelay); err != nil {
		fmt.Fprintln(os.Stderr, "agent bench:", err)
		os.Exit(1)
	}
}

type sample struct {
	firstRequest, overheadPerCall, wall time.Duration
	maxRSSKiB                           int64
}

func run(calls, runs, chunkDelay int) error {
	bin, cleanup, err := brigbin.Build()
	if err != nil {
		return err
	}
	defer cleanup()
	ws, err := os.MkdirTemp("/var/tmp", "brig-bench-ws-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		return err
	}
	var samples []sample
	for range runs {
		s, err := once(bin, ws, calls, chunkDelay)
		if err != nil {
			return err
		}
		samples = append(samples, s)
	}
	med := func(f func(sample) time.Duration) time.Duration {
		v := make([]time.Duration, len(samples))
		for i, s := range samples {
			v[i] = f(s)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	var rss []int64
	for _, s := range samples {
		rss = append(rss, s.maxRSSKiB)
	}
	slices.Sort(rss)
	fmt.Printf("brig -p, %d tool calls (read_file, one per request; the fake model waits %d ms between chunks), %d sessions, medians:\n", calls, chunkDelay, runs)
	fmt.Printf("  start to first request     %8.2f ms  (target < 50 ms)\n", ms(med(func(s sample) time.Duration { return s.firstRequest })))
	fmt.Printf("  harness overhead per call  %8.2f ms  (target < 5 ms on top of the jail)\n", ms(med(func(s sample) time.Duration { return s.overheadPerCall })))
	fmt.Printf("  session wall time          %8.2f ms\n", ms(med(func(s sample) time.Duration { return s.wall })))
	fmt.Printf("  peak RSS of brig           %8.1f MB  (target < 40 MB; max of %d: %.1f MB)\n", float64(rss[len(rss)/2])/1024, runs, float64(rss[len(rss)-1])/1024)
	return nil
}

func once(bin, ws string, calls, chunkDelay int) (sample, error) {
	var turns []fakeprovider.Turn
	for range calls {
		turns = append(turns, fakeprovider.Turn{ChunkDelayMS: chunkDelay, ToolCalls: []fakeprovider.ToolCall{{Name: "read_file", Input: json.RawMessage(`{"path":"a.txt"}`)}}})
	}
	turns = append(turns, fakeprovider.Turn{Text: "done"})
	srv, err := fakeprovider.Start(fakeprovider.Script{Turns: turns})
	if err != nil {
		return sample{}, err
	}
	defer srv.Close()
	cmd := exec.Command(bin, "--model", "claude-sonnet-4-5", "-p", "read a.txt many times", "--mode", "auto", "--output", "stream-json", "--max-iterations", fmt.Sprint(calls+5))
	cmd.Dir = ws
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + os.Getenv("HOME"), "ANTHROPIC_API_KEY=sk-bench", "ANTHROPIC_BASE_URL=" + srv.URL()}
	var out bytes.Buffer
	cmd.Stdout = &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("brig -p: %v\n%s", err, out.String())
	}
	wall := time.Since(start)
	var toolTime time.Duration
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		var rec struct {
			Type       string `json:"type"`
			DurationUS int64  `json:"duration_us"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Type == "tool_end" {
			toolTime += time.Duration(rec.DurationUS) * time.Microsecond
			n++
		}
	}
	if n != calls {
		return sample{}, fmt.Errorf("%d tool calls ran, want %d", n, calls)
	}
	reqs := srv.Requests()
	first := reqs[0].Received.Sub(start)
	last := reqs[len(reqs)-1]
	end := last.Received.Add(last.Duration)
	// The harness's time between the first request and the last answer,
	// minus what the provider and the tools themselves took.
	busy := end.Sub(reqs[0].Received) - srv.ServerTime() - toolTime
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return sample{firstRequest: first, overheadPerCall: busy / time.Duration(calls), wall: wall, maxRSSKiB: ru.Maxrss}, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Command roundtrip measures brig as its users feel it: the real binary,
// an instant scripted model on loopback, and side by side in the same run
// a plain exec of the same commands. It reports, with the machine's load
// at the time:
//
//   - the round trip of a sequential bash call: from the end of the model's
//     answer that asks for it to the arrival of the next request (median,
//     p95), against a plain fork+exec of `bash -c` with the same command;
//   - the round trip of one answer with 4 read-only calls (run in parallel),
//     and of the next such answer, streamed as slowly as a real model's
//     (the pool of waiting jail children has had time to fill);
//   - the round trip of a sequential read_file call (a Go tool, run by a
//     jail child of its own), instant and streamed, against a plain
//     fork+exec of `cat`;
//   - the first call of a fresh brig process, and start to first request
//     (medians over the full sessions and three times as many sessions of
//     two calls each), the same start in a home brig has run in before
//     (as a user's), `brig --help`, and `brig sandbox -- true`
//     against `bwrap --unshare-all … true` (when bubblewrap is installed);
//   - peak RSS of the supervisor and of its whole process tree (prewarmed
//     jail children included) over a 20-call session, and the binary's size.
//     The tree is sampled in one more session of its own: reading /proc
//     every 2 ms competes with brig for the cores, so no timed session
//     runs the sampler.
//
// It then times the same sessions in a workspace of 10,000 files, where
// the per-call walks of the workspace show. -load N runs N busy loops
// during a last pass, to see how the round trip grows under load.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"brig/test/brigbin"
	"brig/test/fakeprovider"
)

func main() {
	calls := flag.Int("calls", 20, "sequential bash calls per session")
	runs := flag.Int("runs", 5, "sessions per measurement (medians across them)")
	load := flag.Int("load", 2*runtime.NumCPU(), "busy loops for the loaded pass (0: no loaded pass)")
	bin := flag.String("bin", "", "the brig binary to measure (default: build one the way make does)")
	flag.Parse()
	b := *bin
	if b == "" {
		var cleanup func()
		var err error
		if b, cleanup, err = brigbin.Build(); err != nil {
			fail(err)
		}
		defer cleanup()
	}
	installed, err := installedCopy(b)
	if err != nil {
		fail(err)
	}
	defer os.Remove(installed)
	if err := run(installed, *calls, *runs, *load); err != nil {
		fail(err)
	}
}

// installedCopy copies the binary to measure as an installation does
// (install(1) reads and writes it): a binary just written by the Go
// linker, through its own mapping of the file, maps about 4 MB more of
// itself into every process that runs it than a copy of the same bytes
// (measured: the supervisor's peak RSS 29.3 against 24.7 MB).
func installedCopy(bin string) (string, error) {
	src, err := os.Open(bin)
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst, err := os.CreateTemp("/var/tmp", "brig-bench-bin-")
	if err != nil {
		return "", err
	}
	if _, err = io.Copy(dst, src); err == nil {
		err = dst.Chmod(0o755)
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst.Name())
		return "", fmt.Errorf("copy %s to measure it: %w", bin, err)
	}
	return dst.Name(), nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "roundtrip bench:", err)
	os.Exit(1)
}

func run(bin string, calls, runs, load int) error {
	ws, err := os.MkdirTemp("/var/tmp", "brig-bench-rt-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	for _, f := range []string{"a.txt", "b.txt", "c.txt", "d.txt"} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte("hello\n"), 0o644); err != nil {
			return err
		}
	}
	fi, err := os.Stat(bin)
	if err != nil {
		return err
	}
	fmt.Printf("brig round trips: the real binary (%.1f MB), an instant fake model on loopback, %d sessions of %d sequential bash calls\n", float64(fi.Size())/1e6, runs, calls)
	// The large workspace is made first, so that it is as old as a real
	// repository's by the time it is used (brig does not remember a
	// directory changed within the last second: jail.RepoCache).
	large, err := largeWorkspace()
	if err != nil {
		return err
	}
	defer os.RemoveAll(large)
	keptHome, err := keptPrograms(bin, ws)
	if err != nil {
		return err
	}
	defer os.RemoveAll(keptHome)
	kept := programsIn(keptHome)
	idle, err := pass(bin, keptHome, ws, calls, runs)
	if err != nil {
		return err
	}
	idle.print("")
	if err := largeWorkspacePass(bin, kept, large, calls, max(runs/2, 1)); err != nil {
		return err
	}
	if load > 0 {
		stop := busy(load)
		loaded, err := pass(bin, keptHome, ws, calls, runs)
		stop()
		if err != nil {
			return err
		}
		loaded.print(fmt.Sprintf(" with %d busy loops", load))
		fmt.Printf("  growth under load: sequential call median ×%.1f (target ≤ 3×)\n", ms(loaded.seqMed)/ms(idle.seqMed))
	}
	return nil
}

// largeFiles is the size of the workspace largeWorkspacePass measures in:
// a repository of a few thousand source files is no rarity, and what a
// call costs beyond the empty workspace's grows with it.
const largeFiles = 10000

// largeWorkspace makes a workspace of largeFiles files and returns its
// path: 100 directories of 10 subdirectories of 10 files, about the
// files per directory of real source trees (Go's own: 8.7), so that what
// a call costs per directory shows as well as what it costs per file.
func largeWorkspace() (string, error) {
	ws, err := os.MkdirTemp("/var/tmp", "brig-bench-large-")
	if err != nil {
		return "", err
	}
	for d := range largeFiles / 100 {
		for s := range 10 {
			dir := filepath.Join(ws, fmt.Sprintf("pkg%02d", d), fmt.Sprintf("sub%d", s))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				os.RemoveAll(ws)
				return "", err
			}
			for f := range 10 {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.go", f)), []byte("package p\n"), 0o644); err != nil {
					os.RemoveAll(ws)
					return "", err
				}
			}
		}
	}
	for _, f := range []string{"a.txt", "b.txt", "c.txt", "d.txt"} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte("hello\n"), 0o644); err != nil {
			os.RemoveAll(ws)
			return "", err
		}
	}
	return ws, nil
}

// largeWorkspacePass runs sessions in the large workspace ws and prints
// the calls' round trips there: a call that may write is snapshotted
// after it by a walk of the whole workspace (undo), and its grant and
// sweep look for repositories through all of it; a call that only reads
// has none of that.
func largeWorkspacePass(bin, kept, ws string, calls, runs int) error {
	l := loadavg()
	var seq, paced, writing []time.Duration
	for range runs {
		s, err := session(bin, kept, ws, calls, false, false)
		if err != nil {
			return err
		}
		seq, paced = append(seq, s.seq...), append(paced, s.paced...)
		if s, err = session(bin, kept, ws, calls, false, true); err != nil {
			return err
		}
		writing = append(writing, s.seq...)
	}
	plural := "s"
	if runs == 1 {
		plural = ""
	}
	fmt.Printf("\n  in a workspace of %d files (%d session%s; load average %.1f at the start):\n", largeFiles, runs, plural, l)
	fmt.Printf("    %-40s %8.2f ms\n", "sequential bash call, median", ms(quantile(seq, 0.5)))
	fmt.Printf("    %-40s %8.2f ms\n", "the same, the model streaming (median)", ms(quantile(paced, 0.5)))
	fmt.Printf("    %-40s %8.2f ms\n", "sequential writing call, median", ms(quantile(writing, 0.5)))
	return nil
}

// figures are one pass's results.
type figures struct {
	load                                  float64
	seqMed, seqP95, execMed               time.Duration
	writeMed                              time.Duration
	pacedMed                              time.Duration
	readMed, pacedReadMed, execCat        time.Duration
	batch4, batch4Again, execBatch4       time.Duration
	firstCall, firstRequest, help         time.Duration
	firstCallUsed, firstRequestUsed       time.Duration
	sandboxTrue, bwrapTrue, execTrue      time.Duration
	rssSupervisorMB, rssTreeMB, pssTreeMB float64
}

func (f figures) print(label string) {
	fmt.Printf("\n  load average %.1f at the start%s:\n", f.load, label)
	row := func(name string, v time.Duration, target string, base time.Duration) {
		s := fmt.Sprintf("    %-40s %8.2f ms", name, ms(v))
		if base > 0 {
			s += fmt.Sprintf("   plain exec %6.2f ms, ×%.1f", ms(base), ms(v)/ms(base))
		}
		if target != "" {
			s += "   (target " + target + ")"
		}
		fmt.Println(s)
	}
	row("sequential bash call, median", f.seqMed, "≤ 5 ms", f.execMed)
	row("sequential bash call, p95", f.seqP95, "≤ 10 ms", 0)
	row("the same, the model streaming (median)", f.pacedMed, "", f.execMed)
	row("sequential writing call, median", f.writeMed, "", f.execMed)
	row("4 read-only calls in one answer", f.batch4, "≤ 8 ms", f.execBatch4)
	row("4 read-only calls, next (slow) answer", f.batch4Again, "≤ 8 ms", f.execBatch4)
	row("sequential read_file call, median", f.readMed, "", f.execCat)
	row("the same, the model streaming (median)", f.pacedReadMed, "", f.execCat)
	row("first call of a fresh process", f.firstCall, "≤ 10 ms", 0)
	row("the same, in a home used before", f.firstCallUsed, "≤ 10 ms", 0)
	row("start to first request", f.firstRequest, "≤ 15 ms", 0)
	row("the same, in a home used before", f.firstRequestUsed, "≤ 15 ms", 0)
	row("brig --help", f.help, "≤ 10 ms", 0)
	row("brig sandbox -- true", f.sandboxTrue, "< bwrap", f.execTrue)
	if f.bwrapTrue > 0 {
		row("bwrap --unshare-all … true", f.bwrapTrue, "", f.execTrue)
	}
	fmt.Printf("    %-40s %8.1f MB   (target ≤ 40 MB)\n", "peak RSS, supervisor", f.rssSupervisorMB)
	fmt.Printf("    %-40s %8.1f MB   (target ≤ 60 MB; prewarmed children included)\n", "peak RSS, whole process tree", f.rssTreeMB)
	fmt.Printf("    %-40s %8.1f MB   (the same tree with shared pages counted once)\n", "  its PSS at that peak", f.pssTreeMB)
}

// pass measures one pass in ws. keptHome is the home whose programs every
// session's home gets (keptPrograms); `brig --help` and `brig sandbox` run
// in it too, with the sessions' environment: nothing of the user's (their
// config, their cache directory) is read or written.
func pass(bin, keptHome, ws string, calls, runs int) (figures, error) {
	kept := programsIn(keptHome)
	var f figures
	f.load = loadavg()
	var seq, paced, first, firstReq, batch, batchAgain, reads, pacedReads []time.Duration
	var rssSup, rssTree, pssTree []float64
	for i := range runs + 1 {
		// The last session measures memory only (its sampler would slow
		// the calls it times).
		sampled := i == runs
		s, err := session(bin, kept, ws, calls, sampled, false)
		if err != nil {
			return f, err
		}
		if sampled {
			rssSup = append(rssSup, s.rssSupMB)
			rssTree = append(rssTree, s.rssTreeMB)
			pssTree = append(pssTree, s.pssTreeMB)
			continue
		}
		seq = append(seq, s.seq...)
		paced = append(paced, s.paced...)
		reads, pacedReads = append(reads, s.reads...), append(pacedReads, s.pacedReads...)
		first = append(first, s.first)
		firstReq = append(firstReq, s.firstRequest)
		batch = append(batch, s.batch4)
		batchAgain = append(batchAgain, s.batch4Again)
		rssSup = append(rssSup, s.rssSupMB)
	}
	var writing []time.Duration
	for range runs {
		s, err := session(bin, kept, ws, calls, false, true)
		if err != nil {
			return f, err
		}
		writing = append(writing, s.seq...)
	}
	// A session gives one first call and one start; short sessions add
	// more of both, so that their medians rest on as many samples as the
	// home used before's start.
	moreFirst, moreReq, err := firstCalls(bin, kept, ws, 3*runs, true)
	if err != nil {
		return f, err
	}
	first, firstReq = append(first, moreFirst...), append(firstReq, moreReq...)
	f.writeMed = quantile(writing, 0.5)
	f.seqMed, f.seqP95 = quantile(seq, 0.5), quantile(seq, 0.95)
	f.pacedMed = quantile(paced, 0.5)
	f.readMed, f.pacedReadMed = quantile(reads, 0.5), quantile(pacedReads, 0.5)
	f.firstCall, f.firstRequest = quantile(first, 0.5), quantile(firstReq, 0.5)
	f.batch4, f.batch4Again = quantile(batch, 0.5), quantile(batchAgain, 0.5)
	slices.Sort(rssSup)
	slices.Sort(rssTree)
	slices.Sort(pssTree)
	f.rssSupervisorMB, f.rssTreeMB, f.pssTreeMB = rssSup[len(rssSup)-1], rssTree[len(rssTree)-1], pssTree[len(pssTree)-1]
	var execs, execs4, cats []time.Duration
	for i := range calls * runs {
		execs = append(execs, timeIt(func() error { return exec.Command("/bin/bash", "-c", "echo "+strconv.Itoa(i)).Run() }))
	}
	for range runs * 4 {
		execs4 = append(execs4, timeIt(func() error {
			var wg sync.WaitGroup
			var bad atomic.Bool
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if exec.Command("/bin/cat", filepath.Join(ws, "a.txt")).Run() != nil {
						bad.Store(true)
					}
				}()
			}
			wg.Wait()
			return nil
		}))
	}
	for range runs * seqReads {
		cats = append(cats, timeIt(func() error { return exec.Command("/bin/cat", filepath.Join(ws, "a.txt")).Run() }))
	}
	f.execMed, f.execBatch4, f.execCat = quantile(execs, 0.5), quantile(execs4, 0.5), quantile(cats, 0.5)
	var help, sb, bw, tr []time.Duration
	hasBwrap := false
	if _, err := os.Stat("/usr/bin/bwrap"); err == nil {
		hasBwrap = true
	}
	for range 15 {
		env := []string{"PATH=/usr/bin:/bin", "HOME=" + keptHome}
		h := exec.Command(bin, "--help")
		h.Env = env
		help = append(help, timeIt(h.Run))
		c := exec.Command(bin, "sandbox", "--", "/bin/true")
		c.Dir, c.Env = ws, env
		sb = append(sb, timeIt(c.Run))
		tr = append(tr, timeIt(func() error { return exec.Command("/bin/true").Run() }))
		if hasBwrap {
			bw = append(bw, timeIt(func() error {
				return exec.Command("/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all", "/bin/true").Run()
			}))
		}
	}
	f.help, f.sandboxTrue, f.execTrue = quantile(help, 0.5), quantile(sb, 0.5), quantile(tr, 0.5)
	usedFirst, usedReq, err := firstCalls(bin, keptHome, ws, 3*runs, false)
	if err != nil {
		return f, err
	}
	f.firstCallUsed, f.firstRequestUsed = quantile(usedFirst, 0.5), quantile(usedReq, 0.5)
	if hasBwrap {
		f.bwrapTrue = quantile(bw, 0.5)
	}
	return f, nil
}

// firstCalls starts n brig -p sessions of two bash calls and returns each
// one's first call and its start to the first request. With fresh set,
// each runs in a fresh home with the kept programs (as session's): its
// start makes brig's state directories, the workspace's undo store and
// toolchain cache. Otherwise all run in home, after one more that is not
// counted: a user's brig finds those there from its second run on.
func firstCalls(bin, home, ws string, n int, fresh bool) (first, firstReq []time.Duration, err error) {
	var turns []fakeprovider.Turn
	for i := range 2 {
		in, _ := json.Marshal(map[string]string{"command": "echo " + strconv.Itoa(i)})
		turns = append(turns, fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{Name: "bash", Input: in}}})
	}
	turns = append(turns, fakeprovider.Turn{Text: "done"})
	for i := range n + 1 {
		if i == 0 && fresh {
			continue // every session starts alike: none to leave out
		}
		d, r, err := firstCall(bin, home, ws, turns, fresh)
		if err != nil {
			return nil, nil, err
		}
		if i > 0 {
			first, firstReq = append(first, d), append(firstReq, r)
		}
	}
	return first, firstReq, nil
}

// firstCall runs one session of firstCalls: in a fresh home with the
// programs kept in dir when fresh, else in the home dir.
func firstCall(bin, dir, ws string, turns []fakeprovider.Turn, fresh bool) (first, firstReq time.Duration, err error) {
	srv, err := fakeprovider.Start(fakeprovider.Script{Turns: turns})
	if err != nil {
		return 0, 0, err
	}
	defer srv.Close()
	home := dir
	if fresh {
		h, remove, err := freshHome(dir)
		if err != nil {
			return 0, 0, err
		}
		defer remove()
		home = h
	}
	cmd := exec.Command(bin, "--model", "claude-sonnet-4-5", "-p", "echo twice", "--mode", "auto", "--output", "json")
	cmd.Dir = ws
	cmd.Env = sessionEnv(home, srv.URL())
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("brig -p (first calls): %v\n%s", err, out)
	}
	reqs := srv.Requests()
	if len(reqs) != len(turns) {
		return 0, 0, fmt.Errorf("brig -p (first calls): %d requests, want %d", len(reqs), len(turns))
	}
	return reqs[1].Received.Sub(reqs[0].Received.Add(reqs[0].Duration)), reqs[0].Received.Sub(start), nil
}

// keptPrograms runs `brig sandbox -- /bin/true` once in a home directory
// of its own, where brig keeps its jail programs (internal/jailexe), and
// returns that home. Every session's fresh home gets its programs
// (seedPrograms), as after any earlier run of the same build: only the
// first run of a build writes them.
func keptPrograms(bin, ws string) (string, error) {
	home, err := os.MkdirTemp("/var/tmp", "brig-bench-kept-")
	if err != nil {
		return "", err
	}
	c := exec.Command(bin, "sandbox", "--", "/bin/true")
	c.Dir = ws
	c.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home}
	if out, err := c.CombinedOutput(); err != nil {
		os.RemoveAll(home)
		return "", fmt.Errorf("brig sandbox -- /bin/true: %v\n%s", err, out)
	}
	return home, nil
}

// programsIn is where brig keeps its programs for a home directory
// without XDG_STATE_HOME.
func programsIn(home string) string {
	return filepath.Join(home, ".local", "state", "brig", "programs")
}

// freshHome makes a session's home with the kept programs in it (as
// after an earlier run of the same build); remove takes it away.
func freshHome(kept string) (home string, remove func(), err error) {
	if home, err = os.MkdirTemp("/var/tmp", "brig-bench-home-"); err != nil {
		return "", nil, err
	}
	remove = func() { os.RemoveAll(home) }
	if err := seedPrograms(kept, home); err != nil {
		remove()
		return "", nil, err
	}
	return home, remove, nil
}

// sessionEnv is a brig -p session's whole environment: nothing of the
// user's, the fake provider at url.
func sessionEnv(home, url string) []string {
	return []string{"PATH=/usr/bin:/bin", "HOME=" + home, "ANTHROPIC_API_KEY=sk-bench", "ANTHROPIC_BASE_URL=" + url}
}

// seedPrograms links the kept programs into home's programs directory
// (none there: this build keeps none, and the session writes memfds).
func seedPrograms(kept, home string) error {
	names, err := os.ReadDir(kept)
	if err != nil {
		return nil
	}
	dir := programsIn(home)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, n := range names {
		if err := os.Link(filepath.Join(kept, n.Name()), filepath.Join(dir, n.Name())); err != nil {
			return err
		}
	}
	return nil
}

// pacedCalls are the sequential bash calls of a session whose answers
// stream at a real model's pace.
const pacedCalls = 10

// seqReads are the sequential read_file calls of a session, instant and
// then as many streamed at a real model's pace.
const seqReads = 6

type sessionFigures struct {
	seq, paced, reads, pacedReads  []time.Duration
	first, firstRequest            time.Duration
	batch4, batch4Again            time.Duration
	rssSupMB, rssTreeMB, pssTreeMB float64
}

// session runs one brig -p session: calls sequential bash calls, then
// seqReads+1 read_file calls whose answers stream as a real model's, then
// pacedCalls bash calls streamed too (frames 10 ms
// apart: the replacement of the jail child a call took is started while
// the next answer streams, not on top of the next call, so these measure
// a call's own path rather than two cores shared with the spawns), then
// two answers with four read_file calls each (the second streamed slowly:
// the pool has time to fill before its calls), then seqReads answers with
// one read_file call each, instant, then the end.
// With writes, the sequential calls write a file (echo i > out.txt), so
// each is granted the workspace and snapshotted for undo; without, they
// only read (echo i), and run with the workspace read-only and no
// snapshot, as a model's ls, cat and grep do.
// With sampleTree it also samples the RSS of brig's process tree; that
// sampler reads /proc every 2 ms, which cost brig a quarter of its round
// trip on two cores, so timed sessions run without it.
func session(bin, kept, ws string, calls int, sampleTree, writes bool) (sessionFigures, error) {
	var s sessionFigures
	var turns []fakeprovider.Turn
	for i := range calls {
		line := "echo " + strconv.Itoa(i)
		if writes {
			line += " > out.txt" // a call that may write: snapshotted before and after it (undo)
		}
		in, _ := json.Marshal(map[string]string{"command": line})
		turns = append(turns, fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{Name: "bash", Input: in}}})
	}
	// One read_file call per answer, streamed: the Go tools' pool holds
	// one waiting child once the first has started it (the first's is a
	// cold start, not counted).
	read := func(i, delay int) fakeprovider.Turn {
		in := json.RawMessage(`{"path":"` + []string{"a.txt", "b.txt", "c.txt", "d.txt"}[i%4] + `"}`)
		return fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{Name: "read_file", Input: in}}, ChunkDelayMS: delay}
	}
	for i := range seqReads + 1 {
		turns = append(turns, read(i, 10))
	}
	for i := range pacedCalls {
		in, _ := json.Marshal(map[string]string{"command": "echo paced " + strconv.Itoa(i)})
		turns = append(turns, fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{Name: "bash", Input: in}}, ChunkDelayMS: 10})
	}
	var four []fakeprovider.ToolCall
	for _, f := range []string{"a.txt", "b.txt", "c.txt", "d.txt"} {
		four = append(four, fakeprovider.ToolCall{Name: "read_file", Input: json.RawMessage(`{"path":"` + f + `"}`)})
	}
	// The second answer streams as a real model's would (its frames 10 ms
	// apart), which leaves the supervisor time to fill its pool.
	turns = append(turns, fakeprovider.Turn{ToolCalls: four}, fakeprovider.Turn{ToolCalls: four, ChunkDelayMS: 10})
	for i := range seqReads {
		turns = append(turns, read(i, 0))
	}
	turns = append(turns, fakeprovider.Turn{Text: "done"})
	srv, err := fakeprovider.Start(fakeprovider.Script{Turns: turns})
	if err != nil {
		return s, err
	}
	defer srv.Close()
	home, remove, err := freshHome(kept)
	if err != nil {
		return s, err
	}
	defer remove()
	cmd := exec.Command(bin, "--model", "claude-sonnet-4-5", "-p", "echo many times", "--mode", "auto", "--output", "json", "--max-iterations", strconv.Itoa(calls+pacedCalls+2*seqReads+6))
	cmd.Dir = ws
	cmd.Env = sessionEnv(home, srv.URL())
	var out bytes.Buffer
	cmd.Stdout = &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return s, err
	}
	peak := func() (int64, int64) { return 0, 0 }
	if sampleTree {
		peak = watchTree(cmd.Process.Pid)
	}
	err = cmd.Wait()
	treeKiB, treePSSKiB := peak()
	if err != nil {
		return s, fmt.Errorf("brig -p: %v\n%s", err, out.String())
	}
	reqs := srv.Requests()
	if want := calls + pacedCalls + 2*seqReads + 4; len(reqs) != want {
		return s, fmt.Errorf("%d requests, want %d", len(reqs), want)
	}
	s.firstRequest = reqs[0].Received.Sub(start)
	// Request i's answer ended at Received+Duration; the next request
	// arrived after the call ran and its result was recorded.
	for i := 0; i < calls; i++ {
		end := reqs[i].Received.Add(reqs[i].Duration)
		d := reqs[i+1].Received.Sub(end)
		if i == 0 {
			s.first = d
			continue
		}
		s.seq = append(s.seq, d)
	}
	after := func(i int) time.Duration { return reqs[i+1].Received.Sub(reqs[i].Received.Add(reqs[i].Duration)) }
	for i := range seqReads {
		s.pacedReads = append(s.pacedReads, after(calls+1+i))
	}
	for i := calls + seqReads + 1; i < calls+seqReads+1+pacedCalls; i++ {
		s.paced = append(s.paced, after(i))
	}
	b := calls + seqReads + 1 + pacedCalls
	s.batch4, s.batch4Again = after(b), after(b+1)
	for i := range seqReads {
		s.reads = append(s.reads, after(b+2+i))
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	s.rssSupMB, s.rssTreeMB, s.pssTreeMB = float64(ru.Maxrss)/1024, float64(treeKiB)/1024, float64(treePSSKiB)/1024
	return s, nil
}

// watchTree samples the summed RSS of pid and its descendants every 2 ms
// until the returned function is called, which gives the peak in KiB and
// the tree's PSS (shared pages divided among their users) when it was
// reached. PSS is read only at a new peak: reading it walks every mapping.
func watchTree(pid int) func() (rssKiB, pssKiB int64) {
	var peak, pss atomic.Int64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
			if t, pids := treeRSS(pid); t > peak.Load() {
				peak.Store(t)
				pss.Store(sumPSS(pids))
			}
		}
	}()
	return func() (int64, int64) { close(done); <-stopped; return peak.Load(), pss.Load() }
}

// treeRSS sums VmRSS (KiB) of root and every process below it, and names
// them. A process started with CLONE_VM (init, and each command, until
// their exec) shares its parent's address space, and /proc shows it with
// all of that RSS: it is counted once, with the process that owns it
// (kcmp), and each process's RSS is read only after that check, so that a
// process that execs in between is counted with its own.
func treeRSS(root int) (int64, []int) {
	entries, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if v, ok := statusField(pid, "PPid:"); ok {
			parent[pid] = int(v)
		}
	}
	var tree []int
	for pid := range parent {
		for p := pid; p > 1; p = parent[p] {
			if p == root {
				tree = append(tree, pid)
				break
			}
		}
	}
	slices.Sort(tree)
	var sum int64
	var pids []int
	for _, pid := range tree {
		if slices.ContainsFunc(pids, func(q int) bool { return sharesVM(q, pid) }) {
			continue
		}
		if n, ok := statusField(pid, "VmRSS:"); ok {
			sum += n
			pids = append(pids, pid)
		}
	}
	return sum, pids
}

// statusField is the number after key in /proc/pid/status.
func statusField(pid int, key string) (int64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key); ok {
			if f := strings.Fields(v); len(f) > 0 {
				n, err := strconv.ParseInt(f[0], 10, 64)
				return n, err == nil
			}
		}
	}
	return 0, false
}

// kcmpVM is kcmp(2)'s KCMP_VM: whether two processes share one address
// space.
const kcmpVM = 1

// sharesVM reports whether processes a and b share one address space.
func sharesVM(a, b int) bool {
	r, _, errno := syscall.Syscall6(unix.SYS_KCMP, uintptr(a), uintptr(b), kcmpVM, 0, 0, 0)
	return errno == 0 && r == 0
}

// sumPSS sums the Pss (KiB) of pids.
func sumPSS(pids []int) int64 {
	var sum int64
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "Pss:" {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				sum += n
			}
		}
	}
	return sum
}

func timeIt(f func() error) time.Duration {
	t := time.Now()
	_ = f()
	return time.Since(t)
}

func quantile(v []time.Duration, q float64) time.Duration {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func loadavg() float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	f, _ := strconv.ParseFloat(strings.Fields(string(b) + " 0")[0], 64)
	return f
}

// busy starts n busy shell loops in a process group of their own and returns how to
// stop it.
func busy(n int) func() {
	cmd := exec.Command("/bin/sh", "-c", strings.Repeat("while :; do :; done & ", n)+"wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return func() {}
	}
	time.Sleep(time.Second) // let the loops reach the scheduler
	return func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

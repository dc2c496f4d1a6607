package session

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"brig/agent/provider"
)

// concurrencyDuration is how long the two-process test appends (the issue
// asks for a minute); -short runs it for a few seconds.
const concurrencyDuration = time.Minute

// helperEnv selects a helper mode when the test binary re-executes itself.
const helperEnv = "BRIG_SESSION_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		if err := runHelper(mode); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runHelper is the child side: "crash" appends to one session forever and
// prints "durable N" after each Append returns; "concurrent" appends to a
// shared session and to one of its own until a deadline, then prints its
// counts.
func runHelper(mode string) error {
	ctx := context.Background()
	s := NewStore(os.Getenv("HELPER_DIR"))
	if mode == "fresh" {
		return freshHelper(ctx, s, os.Getenv("HELPER_STOP"))
	}
	sess, _, err := s.Open(ctx, os.Getenv("HELPER_ID"))
	if err != nil {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	switch mode {
	case "crash":
		start, _ := strconv.Atoi(os.Getenv("HELPER_START"))
		for i := start; ; i++ {
			// Sizes from a few bytes to a megabyte, so a kill lands in the
			// middle of a write now and then.
			body := strings.Repeat("x", rand.IntN(1<<20))
			err := sess.Append(ctx, DisplayRecord(Display{Kind: DisplayNotice, Text: "c-" + strconv.Itoa(i)}),
				MessageRecord(provider.Message{Role: provider.User, Content: []provider.Block{provider.Text(body)}}))
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "durable %d\n", i)
			out.Flush()
		}
	case "concurrent":
		who := os.Getenv("HELPER_WHO")
		d, err := time.ParseDuration(os.Getenv("HELPER_FOR"))
		if err != nil {
			return err
		}
		own, err := s.Create(ctx, Header{Workspace: "/ws/" + who, Provider: provider.Anthropic, Model: "m"})
		if err != nil {
			return err
		}
		shared, nOwn := 0, 0
		for deadline := time.Now().Add(d); time.Now().Before(deadline); {
			text := strings.Repeat("y", rand.IntN(8<<10))
			if err := sess.Append(ctx, DisplayRecord(Display{Kind: DisplayNotice, Text: fmt.Sprintf("%s-%d %s", who, shared, text)})); err != nil {
				return err
			}
			shared++
			if err := own.Append(ctx, DisplayRecord(Display{Kind: DisplayNotice, Text: fmt.Sprintf("%s-%d", who, nOwn)})); err != nil {
				return err
			}
			nOwn++
		}
		fmt.Fprintf(out, "done %d %d %s\n", shared, nOwn, own.ID())
		return out.Flush()
	}
	return fmt.Errorf("unknown helper mode %q", mode)
}

// freshHelper is brig -p's start: CreateLater, then the prompt saved with
// AppendLater, its sync left running. It prints "created ID", then
// "written" once the prompt is written, and after the line stop names it
// waits to be killed.
func freshHelper(ctx context.Context, s *Store, stop string) error {
	sess, err := s.CreateLater(ctx, Header{Workspace: "/ws", Provider: provider.Anthropic, Model: "m"})
	if err != nil {
		return err
	}
	fmt.Printf("created %s\n", sess.ID())
	if stop == "created" {
		select {}
	}
	if _, err := sess.AppendLater(ctx, MessageRecord(provider.Message{Role: provider.User, Content: []provider.Block{provider.Text("the prompt")}})); err != nil {
		return err
	}
	fmt.Println("written")
	select {}
}

func helper(t *testing.T, mode, dir, id string, extra ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "HELPER_DIR="+dir, "HELPER_ID="+id)
	cmd.Env = append(cmd.Env, extra...)
	cmd.Stderr = os.Stderr
	return cmd
}

// TestKilledWriterLosesNothingItReportedDurable SIGKILLs a real writer
// process at random moments, several times over one session: every record
// it reported saved is there, in order, once, and the file loads.
func TestKilledWriterLosesNothingItReportedDurable(t *testing.T) {
	t.Parallel()
	stateDir := t.TempDir()
	s := NewStore(stateDir)
	sess, err := s.Create(context.Background(), Header{Workspace: "/ws", Provider: provider.Anthropic, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	sess.Close()
	rounds := 6
	if testing.Short() {
		rounds = 2
	}
	next, torn := 0, 0
	for round := range rounds {
		cmd := helper(t, "crash", stateDir, sess.ID(), "HELPER_START="+strconv.Itoa(next))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		durable := -1
		lines := make(chan int)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if n, ok := strings.CutPrefix(sc.Text(), "durable "); ok {
					i, _ := strconv.Atoi(n)
					lines <- i
				}
			}
			close(lines)
		}()
		kill := time.After(time.Duration(100+rand.IntN(400)) * time.Millisecond)
	wait:
		for {
			select {
			case i, ok := <-lines:
				if !ok {
					t.Fatalf("round %d: the writer exited before it was killed", round)
				}
				durable = i
			case <-kill:
				if durable < next {
					kill = time.After(10 * time.Millisecond) // at least one saved record per round
					continue
				}
				cmd.Process.Signal(syscall.SIGKILL)
				break wait
			}
		}
		for i := range lines { // reported before the kill landed
			durable = i
		}
		cmd.Wait()

		st, err := s.Load(context.Background(), sess.ID())
		if err != nil {
			t.Fatalf("round %d: the killed writer's file does not load: %v", round, err)
		}
		if len(st.Warnings) > 0 {
			torn++
		}
		var got []int
		for _, d := range st.Display {
			i, err := strconv.Atoi(strings.TrimPrefix(d.Text, "c-"))
			if err != nil {
				t.Fatalf("unexpected display record %q", d.Text)
			}
			got = append(got, i)
		}
		for k, i := range got {
			if i != k {
				t.Fatalf("round %d: record %d is c-%d: lost, duplicated or reordered records", round, k, i)
			}
		}
		if len(got) < durable+1 {
			t.Fatalf("round %d: the writer reported c-%d durable, the file holds %d records", round, durable, len(got))
		}
		if len(got) > durable+2 {
			t.Fatalf("round %d: %d records, but only c-%d was ever reported (one in flight at most)", round, len(got), durable)
		}
		if len(st.Messages) != len(got) {
			t.Fatalf("round %d: %d messages for %d display records: a batch was half saved", round, len(st.Messages), len(got))
		}
		next = len(got)
	}
	t.Logf("%d rounds, %d records, %d kills left a torn tail that the next writer repaired", rounds, next, torn)
}

// TestKilledAtStartKeepsTheSession SIGKILLs brig -p's start where its new
// session is written but not yet synced (session.CreateLater, then the
// prompt's AppendLater with its sync running): the session is there under
// its name and loads, with the prompt once it was written.
func TestKilledAtStartKeepsTheSession(t *testing.T) {
	t.Parallel()
	for _, stop := range []string{"created", "written"} {
		stateDir := t.TempDir()
		cmd := helper(t, "fresh", stateDir, "", "HELPER_STOP="+stop)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		var id string
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "created "); ok {
				id = v
			}
			if strings.HasPrefix(sc.Text(), stop) {
				break
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if id == "" {
			t.Fatalf("%s: the helper never created its session", stop)
		}
		st, err := NewStore(stateDir).Load(context.Background(), id)
		if err != nil {
			t.Fatalf("killed once %s: the session does not load: %v", stop, err)
		}
		want := map[string]int{"created": 0, "written": 1}[stop]
		if len(st.Messages) != want || st.Header.Workspace != "/ws" {
			t.Fatalf("killed once %s: %d messages, header %+v; want %d and the header", stop, len(st.Messages), st.Header, want)
		}
		if want == 1 && st.Messages[0].PlainText() != "the prompt" {
			t.Fatalf("the prompt saved as %+v", st.Messages[0])
		}
	}
}

// TestTwoProcessesAppendingAtOnce runs two writer processes, each appending
// to one shared session and to a session of its own, while this process
// lists: every record each writer counted is there, in its order, and no
// file is corrupt.
func TestTwoProcessesAppendingAtOnce(t *testing.T) {
	t.Parallel()
	d := concurrencyDuration
	if testing.Short() {
		d = 3 * time.Second
	}
	stateDir := t.TempDir()
	s := NewStore(stateDir)
	shared, err := s.Create(context.Background(), Header{Workspace: "/ws/shared", Provider: provider.Anthropic, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	shared.Close()
	type result struct {
		shared, own int
		id          string
	}
	results := make([]result, 2)
	var wg sync.WaitGroup
	for w := range 2 {
		cmd := helper(t, "concurrent", stateDir, shared.ID(), "HELPER_WHO=w"+strconv.Itoa(w), "HELPER_FOR="+d.String())
		wg.Go(func() {
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("writer %d: %v", w, err)
				return
			}
			if _, err := fmt.Sscanf(string(out), "done %d %d %s", &results[w].shared, &results[w].own, &results[w].id); err != nil {
				t.Errorf("writer %d printed %q", w, out)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	lists := 0
	for running := true; running; lists++ {
		select {
		case <-done:
			running = false
		case <-time.After(50 * time.Millisecond):
		}
		_, problems, err := s.List(context.Background(), Filter{})
		if err != nil || len(problems) > 0 {
			t.Fatalf("listing while two processes write: %v %v", err, problems)
		}
	}
	if t.Failed() {
		return
	}
	st, err := s.Load(context.Background(), shared.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Warnings) > 0 {
		t.Fatalf("shared session: %q", st.Warnings)
	}
	next := map[string]int{}
	for _, e := range st.Display {
		who, rest, _ := strings.Cut(e.Text, "-")
		n, _ := strconv.Atoi(strings.Fields(rest + " ")[0])
		if n != next[who] {
			t.Fatalf("shared session: %s-%d after %s-%d", who, n, who, next[who]-1)
		}
		next[who]++
	}
	total := 0
	for w, r := range results {
		who := "w" + strconv.Itoa(w)
		if next[who] != r.shared {
			t.Errorf("%s saved %d records to the shared session, the file holds %d", who, r.shared, next[who])
		}
		own, err := s.Load(context.Background(), r.id)
		if err != nil || len(own.Display) != r.own {
			t.Errorf("%s's own session: %v, %d records of %d", who, err, len(own.Display), r.own)
		}
		total += r.shared + r.own
	}
	list, _, _ := s.List(context.Background(), Filter{})
	if len(list) != 3 {
		t.Errorf("listing has %d sessions, want 3", len(list))
	}
	t.Logf("%v: %d records from two processes, %d listings meanwhile", d, total, lists)
}

// TestFullDiskKeepsThePreviousState fills a tiny tmpfs: the Append that
// does not fit fails saying the disk is full, and the file holds exactly
// what was saved before.
func TestFullDiskKeepsThePreviousState(t *testing.T) {
	mnt := filepath.Join(t.TempDir(), "tiny")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=256k"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v); TestFailedWriteLeavesThePreviousStateIntact covers an injected failure", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	s := NewStore(mnt)
	sess, err := s.Create(context.Background(), Header{Workspace: "/ws", Provider: provider.Anthropic, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	saved := 0
	var before []byte
	var full error
	for {
		before, _ = os.ReadFile(sess.Path())
		if full = sess.Append(context.Background(), MessageRecord(userMsg(strings.Repeat("z", 10_000)))); full != nil {
			break
		}
		saved++
	}
	if !errors.Is(full, syscall.ENOSPC) || !strings.Contains(full.Error(), "disk is full") {
		t.Fatalf("Append on a full disk = %v", full)
	}
	after, _ := os.ReadFile(sess.Path())
	if string(after) != string(before) {
		t.Fatalf("the failed Append left %d bytes behind", len(after)-len(before))
	}
	st, err := s.Load(context.Background(), sess.ID())
	if err != nil || len(st.Messages) != saved || len(st.Warnings) != 0 {
		t.Fatalf("after a full disk: %v, %d messages of %d saved, warnings %q", err, len(st.Messages), saved, st.Warnings)
	}
	t.Logf("%d records saved before the disk filled: %v", saved, full)
}

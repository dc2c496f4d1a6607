package checkpoint

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The benchmark repository: 10,000 files of 0.5–16 KiB in 500 directories
// (about 80 MB), like a mid-sized source tree, made once per process.
const (
	benchFiles = 10000
	benchDirs  = 500
)

var (
	benchOnce sync.Once
	benchWS   string
	benchErr  error
)

func benchRepo(b *testing.B) string {
	b.Helper()
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("/var/tmp", "brig-bench-ckpt-")
		if err != nil {
			benchErr = err
			return
		}
		benchWS, _ = filepath.EvalSymlinks(dir)
		rng := rand.New(rand.NewPCG(1, 2))
		line := strings.Repeat("the quick brown fox jumps over the lazy dog ", 2)
		for i := range benchFiles {
			d := filepath.Join(benchWS, fmt.Sprintf("pkg%03d/sub%d", i%benchDirs, i%3))
			if err := os.MkdirAll(d, 0o755); err != nil {
				benchErr = err
				return
			}
			var sb strings.Builder
			size := 512 + rng.IntN(16<<10)
			fmt.Fprintf(&sb, "// file %d\n", i)
			for sb.Len() < size {
				fmt.Fprintf(&sb, "%d %s\n", rng.Int(), line)
			}
			if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%05d.go", i)), []byte(sb.String()), 0o644); err != nil {
				benchErr = err
				return
			}
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchWS
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchWS != "" {
		os.RemoveAll(benchWS)
	}
	os.Exit(code)
}

func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// BenchmarkFirstCheckpoint: the first snapshot of the repository, into an
// empty store: every file is read, hashed and stored (target ≤ 1 s).
func BenchmarkFirstCheckpoint(b *testing.B) {
	ws := benchRepo(b)
	ctx := context.Background()
	var stored int64
	var cpu time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		dir := b.TempDir()
		s, err := Open(filepath.Join(dir, fmt.Sprint(i)), Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		c0 := cpuTime()
		p, err := s.Before(ctx, "s", "c", "bash", []string{ws})
		if err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - c0
		b.StopTimer()
		stored = p.Snapshot().Stored
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(stored)/(1<<20), "MiB-stored")
	b.ReportMetric(float64(cpu)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkCheckpointFewChanges: a snapshot of the repository after three
// files changed (target ≤ 20 ms), and how much the store grows for it
// (the changed content and the trees on their paths only).
func BenchmarkCheckpointFewChanges(b *testing.B) {
	ws := benchRepo(b)
	ctx := context.Background()
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	warm(b, s, ws)
	var changed int64
	var cpu time.Duration
	before := dirSize(s.Dir())
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		for k := range 3 {
			content := fmt.Sprintf("changed %d %d\n", i, k)
			changed += int64(len(content))
			if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("pkg%03d/sub%d/f%05d.go", k*7, (k*7)%3, k*7)), []byte(content), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		c0 := cpuTime()
		p, err := s.Before(ctx, "s", fmt.Sprint(i), "bash", []string{ws})
		if err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - c0
		if r := p.Snapshot().Read; r > 6 {
			b.Fatalf("a snapshot after 3 changes read %d files of %d", r, p.Snapshot().Entries)
		}
	}
	grew := dirSize(s.Dir()) - before
	b.ReportMetric(float64(grew)/float64(b.N), "store-B/op")
	b.ReportMetric(float64(changed)/float64(b.N), "changed-B/op")
	b.ReportMetric(float64(cpu)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkCallFewChanges: what a writing call pays in all: the snapshot
// before, the snapshot after and the change set between them.
func BenchmarkCallFewChanges(b *testing.B) {
	ws := benchRepo(b)
	ctx := context.Background()
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	warm(b, s, ws)
	c0 := cpuTime()
	var excluded time.Duration
	defer func() { reportCPU(b, c0, excluded) }()
	for i := 0; b.Loop(); i++ {
		p, err := s.Before(ctx, "s", fmt.Sprint(i), "bash", []string{ws})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		w0 := cpuTime()
		if err := os.WriteFile(filepath.Join(ws, "pkg001/sub1/f00001.go"), []byte(fmt.Sprint(i)), 0o644); err != nil {
			b.Fatal(err)
		}
		excluded += cpuTime() - w0
		b.StartTimer()
		cs, err := p.After(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if cs.Modified != 1 {
			b.Fatalf("change set %+v", cs)
		}
	}
}

// warm takes the first snapshot, then one more once the files written last
// are no longer racy, so the benchmark starts from a store that knows the
// repository.
func warm(b *testing.B, s *Store, ws string) {
	b.Helper()
	ctx := context.Background()
	for range 2 {
		if _, err := s.Before(ctx, "s", "warm", "bash", []string{ws}); err != nil {
			b.Fatal(err)
		}
		time.Sleep(time.Duration(racyWindow))
	}
}

// BenchmarkStatWalk is the floor a snapshot stands on: a walk that only
// stats every entry of the repository (filepath.WalkDir and Lstat).
func BenchmarkStatWalk(b *testing.B) {
	ws := benchRepo(b)
	c0 := cpuTime()
	defer func() { reportCPU(b, c0, 0) }()
	for b.Loop() {
		n := 0
		filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
			if _, err := os.Lstat(p); err == nil {
				n++
			}
			return nil
		})
		if n < benchFiles {
			b.Fatal(n)
		}
	}
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per operation since start: on a loaded
// machine it says more about the cost than the wall clock does.
func reportCPU(b *testing.B, start time.Duration, excluded time.Duration) {
	b.ReportMetric(float64(cpuTime()-start-excluded)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkSeedAfterHistory is a new process's first snapshot of a small
// workspace whose journal holds 10 or 10,000 calls of history (two
// events each, the workspace's other roots first): it finds its last
// snapshot from the journal's end, so the history's length should not
// show.
func BenchmarkSeedAfterHistory(b *testing.B) {
	for _, calls := range []int{10, 10000} {
		b.Run(fmt.Sprintf("calls=%d", calls), func(b *testing.B) {
			ws := b.TempDir()
			for i := range 20 {
				if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%d.txt", i)), []byte("content\n"), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			dir := b.TempDir()
			s, err := Open(dir, Options{})
			if err != nil {
				b.Fatal(err)
			}
			p, err := s.Before(context.Background(), "s", "c", "bash", []string{ws})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := p.After(context.Background()); err != nil {
				b.Fatal(err)
			}
			// The rest of the history: the same events again.
			evs, err := s.Events()
			if err != nil {
				b.Fatal(err)
			}
			var more []Event
			for range calls - 1 {
				more = append(more, evs...)
			}
			if err := s.appendJournal(more...); err != nil {
				b.Fatal(err)
			}
			s.Close()
			b.ResetTimer()
			for range b.N {
				s, err := Open(dir, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Warm(context.Background(), []string{ws}); err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
		})
	}
}

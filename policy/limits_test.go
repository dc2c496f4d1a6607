package policy

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"brig/jail"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]uint64{"0": 0, "4096": 4096, "512K": 512 << 10, "64M": 64 << 20, "1.5G": 3 << 29, "2T": 2 << 40, "8GiB": 8 << 30, "1gb": 1 << 30} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "G", "-1G", "lots", "1X"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
}

// TestLimitsTable: the user's [limits] set the bounds of every call; an
// untrusted repository may lower them but never raise them; a malformed
// size names its file and line.
func TestLimitsTable(t *testing.T) {
	root := t.TempDir()
	f := FilesFor(filepath.Join(root, "config", "brig"), filepath.Join(root, "ws"))
	writeFile(t, f.Global, "[limits]\nmemory = \"2G\"\nprocesses = 512\ndisk = 0\ntimeout = \"5m\"\n")
	writeFile(t, f.User, "[limits]\ntmp = \"256M\"\n")
	writeFile(t, f.Repo, "[limits]\nmemory = \"64G\"\nprocesses = 100\nfile_size = \"1G\"\ntimeout = \"1h\"\n")
	l, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	def := jail.DefaultLimits()
	got := l.Limits.Apply(def)
	want := def
	want.Memory, want.Processes, want.Disk, want.Timeout, want.TmpBytes, want.FileSize = 2<<30, 100, 0, 5*time.Minute, 256<<20, 1<<30
	if got != want {
		t.Fatalf("limits\n got %+v\nwant %+v", got, want)
	}
	// What the untrusted repository lowered is said on its layer, and a
	// call that hits it can name the file; what it could not raise is not.
	repo := l.Layers[len(l.Layers)-1]
	if n := repo.LimitsNote(); n != "lowers [limits] processes = 100, [limits] file_size = 1.0 GiB" || repo.Applies() != "only its deny and ask rules and the limits it lowers apply" {
		t.Fatalf("repository layer: %q / %q", n, repo.Applies())
	}
	if s, ly, ok := l.RepoLimit(jail.LimitFileSize); !ok || s.Value != "1.0 GiB" || ly.File != f.Repo {
		t.Fatalf("RepoLimit(file size) = %v %v %v", s, ly.File, ok)
	}
	for _, lim := range []string{jail.LimitMemory, "timeout"} {
		if s, _, ok := l.RepoLimit(lim); ok {
			t.Fatalf("RepoLimit(%s) = %v: the user's limit is blamed on the repository", lim, s)
		}
	}
	// Trusted, the repository's settings count in full.
	if _, err := Trust(t.Context(), f); err != nil {
		t.Fatal(err)
	}
	l, err = Load(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Limits.Apply(def); got.Memory != 64<<30 || got.Timeout != time.Hour || got.Processes != 100 {
		t.Fatalf("trusted repository limits not applied: %+v", got)
	}
	if s, _, ok := l.RepoLimit("timeout"); !ok || s.Value != "1h0m0s" || !strings.HasPrefix(l.Layers[len(l.Layers)-1].LimitsNote(), "sets [limits] memory = 64.0 GiB") {
		t.Fatalf("trusted: RepoLimit(timeout) = %v %v; %q", s, ok, l.Layers[len(l.Layers)-1].LimitsNote())
	}
	writeFile(t, f.Global, "[limits]\nmemory = \"lots\"\n")
	if _, err := Load(f); err == nil || !strings.Contains(err.Error(), f.Global) {
		t.Fatalf("a malformed size: %v", err)
	}
	// A memory or a process count no call's programs can run in is
	// refused with the line and the least; the least itself loads.
	writeFile(t, f.Global, "[limits]\n\nmemory = \"2M\"\n")
	if _, err := Load(f); err == nil || !strings.Contains(err.Error(), f.Global+":3") || !strings.Contains(err.Error(), "128.0 MiB") {
		t.Fatalf("memory = 2M: %v", err)
	}
	writeFile(t, f.Global, "[limits]\nmemory = \"128M\"\n")
	if _, err := Load(f); err != nil {
		t.Fatalf("memory = \"128M\": %v", err)
	}
	writeFile(t, f.Global, "[limits]\nprocesses = 1\n")
	if _, err := Load(f); err == nil || !strings.Contains(err.Error(), f.Global+":2") || !strings.Contains(err.Error(), "below the 16") {
		t.Fatalf("processes = 1: %v", err)
	}
	writeFile(t, f.Global, "[limits]\nprocesses = 16\n")
	if _, err := Load(f); err != nil {
		t.Fatalf("processes = 16: %v", err)
	}
	// The private /tmp never exceeds the memory it counts against.
	if got := (LimitsConfig{Memory: 1 << 30, Tmp: 4 << 30}).Apply(def); got.TmpBytes != 1<<30 {
		t.Fatalf("tmp %d above memory %d", got.TmpBytes, got.Memory)
	}
}

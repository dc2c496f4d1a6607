package policy

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// loadWithin runs Load and fails the test if it does not return after a
// generous deadline: a FIFO must not hang brig's start.
func loadWithin(t *testing.T, f Files) (Loaded, error) {
	t.Helper()
	type result struct {
		l   Loaded
		err error
	}
	done := make(chan result, 1)
	go func() { l, err := Load(f); done <- result{l, err} }()
	select {
	case r := <-done:
		return r.l, r.err
	case <-time.After(30 * time.Second):
		t.Fatal("Load did not return")
	}
	return Loaded{}, nil
}

// TestLoadRepoConfigOnlyFromARegularFile: a repository's .brig/config.toml
// that is a committed link to /dev/zero, a FIFO, or larger than 4 MiB
// stops the load with an error naming the file and saying why (not an out
// of memory, not a hang); a regular file loads.
func TestLoadRepoConfigOnlyFromARegularFile(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		make       func(path string) error
	}{
		{"link to /dev/zero", "is a symbolic link", func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"FIFO", "is not a regular file (a FIFO)", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"too large", "is larger than 4 MiB", func(p string) error {
			return os.WriteFile(p, []byte("# "+strings.Repeat("x", 4<<20)+"\n"), 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := loadFixture(t)
			if err := os.Remove(f.Repo); err != nil {
				t.Fatal(err)
			}
			if err := tc.make(f.Repo); err != nil {
				t.Fatal(err)
			}
			_, err := loadWithin(t, f)
			if err == nil || !strings.Contains(err.Error(), f.Repo+" "+tc.want) || !strings.Contains(err.Error(), "comes with the repository") {
				t.Fatalf("got %v; want an error naming %s and saying %q", err, f.Repo, tc.want)
			}
			if _, _, _, err := LoadConfig(f.Repo); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("LoadConfig: %v", err)
			}
		})
	}
	t.Run("regular file", func(t *testing.T) {
		f, _ := loadFixture(t)
		l, err := loadWithin(t, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Layers) != 3 || !l.Layers[2].Exists || l.Layers[2].SHA256 == "" || len(l.Rules.Deny) == 0 {
			t.Fatalf("the repository config was not loaded: %+v", l.Layers)
		}
	})
}

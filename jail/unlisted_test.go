package jail

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"brig/internal/unprivtest"
)

// envUnlistedUnpriv marks the unprivileged pass of
// TestSearchReportsClosedDirectories.
const envUnlistedUnpriv = "BRIG_UNLISTED_UNPRIV"

// TestSearchReportsClosedDirectories: a directory the search cannot open
// (a call's chmod 111 after planting a repository in it) is reported,
// by a fresh search and by a remembering, watching one whose earlier
// search saw it open; a directory that can be opened is not. Only an
// ordinary user is refused a directory's listing, so the check runs in
// the unprivileged pass (as root every directory opens).
func TestSearchReportsClosedDirectories(t *testing.T) {
	if !unprivtest.Active(envUnlistedUnpriv) {
		out := unprivtest.Rerun(t, envUnlistedUnpriv, "^TestSearchReportsClosedDirectories$")
		if !bytes.Contains(out, []byte("--- PASS: TestSearchReportsClosedDirectories")) {
			t.Fatalf("the unprivileged pass did not pass:\n%s", out)
		}
		return
	}
	ws := t.TempDir()
	for _, d := range []string{"src/x", "src/open", "lib"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := NewRepoCache()
	c.racy = 0
	c.Watch()
	for range 2 { // remembered and watched, as before a call
		if _, _, err := c.Search(ws); err != nil {
			t.Fatal(err)
		}
		nextTick()
	}
	// The call.
	if err := os.MkdirAll(filepath.Join(ws, "src/x/.hg"), 0o755); err != nil {
		t.Fatal(err)
	}
	closed := filepath.Join(ws, "src/x")
	if err := os.Chmod(closed, 0o111); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(closed, 0o755) })

	for name, search := range map[string]func() ([]Repository, []string, error){
		"remembering": func() ([]Repository, []string, error) { return c.Search(ws) },
		"fresh":       func() ([]Repository, []string, error) { return Search(ws) },
	} {
		_, unlisted, err := search()
		if err != nil {
			t.Fatalf("%s search: %v", name, err)
		}
		if !slices.Equal(unlisted, []string{closed}) {
			t.Errorf("%s search: unlisted %v, want [%s] (and not the open ones)", name, unlisted, closed)
		}
	}
}

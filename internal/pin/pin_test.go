package pin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPinIsExactAndPerWorkspace(t *testing.T) {
	s := Store{Path: filepath.Join(t.TempDir(), "trust.toml"), Command: "brig trust", Header: "test"}
	ctx := context.Background()
	sum := Hash([]byte("[permissions]\n"))
	if ok, err := s.Pinned("/ws", sum); ok || err != nil {
		t.Fatalf("pinned before Pin: %v %v", ok, err)
	}
	if err := s.Pin(ctx, "/ws", sum); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Pinned("/ws", sum); !ok {
		t.Fatal("not pinned after Pin")
	}
	if ok, _ := s.Pinned("/ws", Hash([]byte("[permissions]\n "))); ok {
		t.Fatal("a different content is pinned")
	}
	if ok, _ := s.Pinned("/other", sum); ok {
		t.Fatal("another workspace is pinned")
	}
	if err := s.Pin(ctx, "/other", sum); err != nil {
		t.Fatal(err)
	}
	if err := s.Unpin(ctx, "/ws"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Pinned("/ws", sum); ok {
		t.Fatal("still pinned after Unpin")
	}
	if ok, _ := s.Pinned("/other", sum); !ok {
		t.Fatal("Unpin of one workspace removed another's pin")
	}
	if fi, err := os.Stat(s.Path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("store file: %v %v", fi, err)
	}
}

func TestCorruptStoreIsAnError(t *testing.T) {
	s := Store{Path: filepath.Join(t.TempDir(), "trust.toml"), Command: "brig trust"}
	if err := os.WriteFile(s.Path, []byte("[[workspace\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pinned("/ws", "x"); err == nil || !strings.Contains(err.Error(), "brig trust") {
		t.Fatalf("a corrupt store must be an error that says how to fix it: %v", err)
	}
	if err := s.Pin(context.Background(), "/ws", "x"); err == nil {
		t.Fatal("a corrupt store was overwritten")
	}
}

// TestFilesArePinnedBesideTheirFile: the hashes pinned beside a file hold
// only while that file's pin does; a pin written without them (an old
// store) reads as nil, one with none to pin as empty.
func TestFilesArePinnedBesideTheirFile(t *testing.T) {
	s := Store{Path: filepath.Join(t.TempDir(), "trust.toml"), Command: "brig trust"}
	ctx := context.Background()
	if err := os.WriteFile(s.Path, []byte("[[workspace]]\npath = \"/ws\"\nsha256 = \"c1\"\ntrusted = 2024-01-01T00:00:00Z\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if files, ok, err := s.Files("/ws", "c1"); err != nil || !ok || files != nil {
		t.Fatalf("an old pin: %v %v %v", files, ok, err)
	}
	if err := s.PinFiles(ctx, "/ws", "c1", map[string]string{"AGENTS.md": "a1"}); err != nil {
		t.Fatal(err)
	}
	if files, ok, _ := s.Files("/ws", "c1"); !ok || files["AGENTS.md"] != "a1" || len(files) != 1 {
		t.Fatalf("after PinFiles: %v %v", files, ok)
	}
	if ok, _ := s.Pinned("/ws", "c1"); !ok {
		t.Fatal("PinFiles lost the file's own pin")
	}
	if _, ok, _ := s.Files("/ws", "c2"); ok {
		t.Fatal("files of another content of the file")
	}
	if err := s.PinFiles(ctx, "/ws", "c2", map[string]string{"AGENTS.md": "a2"}); err == nil || !strings.Contains(err.Error(), "brig trust") {
		t.Fatalf("PinFiles beside a content that is not pinned: %v", err)
	}
	if files, _, _ := s.Files("/ws", "c1"); files["AGENTS.md"] != "a1" {
		t.Fatalf("a refused PinFiles changed the pins: %v", files)
	}
	if err := s.PinFiles(ctx, "/ws", "c1", nil); err != nil {
		t.Fatal(err)
	}
	if files, ok, _ := s.Files("/ws", "c1"); !ok || files == nil || len(files) != 0 {
		t.Fatalf("no files to pin must read as empty, not as an old pin: %v %v", files, ok)
	}
	// Pinning the file again forgets what was pinned beside it.
	s.PinFiles(ctx, "/ws", "c1", map[string]string{"AGENTS.md": "a1"})
	if err := s.Pin(ctx, "/ws", "c1"); err != nil {
		t.Fatal(err)
	}
	if files, ok, _ := s.Files("/ws", "c1"); !ok || files != nil {
		t.Fatalf("after Pin: %v %v", files, ok)
	}
}

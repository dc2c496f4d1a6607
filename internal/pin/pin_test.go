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

package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// call runs a tool's in-jail implementation directly (no jail), as the
// worker would after decoding its arguments.
func call(t *testing.T, name Name, args any) Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := NewRegistry().Lookup(string(name))
	if !ok || d.run == nil {
		t.Fatalf("%s has no in-jail implementation", name)
	}
	return d.run(context.Background(), raw)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type obj = map[string]any

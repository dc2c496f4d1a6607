package tools_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brig/jail"
	"brig/tools"
)

// TestKernelEveryFileTool runs every file tool through the real jail with a
// Spec that grants the workspace only and no policy in front: each works
// inside the workspace (the control) and is refused by the kernel outside
// it, judged by the outside canary's bytes never showing and the outside
// files being exactly as they were.
func TestKernelEveryFileTool(t *testing.T) {
	e := newKernelEnv(t)
	const secret = "canary-4e1d-outside"
	out := e.outside
	put(t, filepath.Join(out, "canary.txt"), secret+"\n")
	put(t, filepath.Join(out, "keep.txt"), "keep\n")
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewRGBA(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(out, "img.png"), filepath.Join(e.ws, "img.png")} {
		if err := os.WriteFile(p, img.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put(t, filepath.Join(e.ws, "a.txt"), "needle here\n")
	put(t, filepath.Join(e.ws, "m.txt"), "one two\n")
	spec := e.spec(t, jail.PathRule{Path: e.ws, Access: jail.Write})
	outsideBefore := snapshot(t, out)

	cases := []struct {
		tool    tools.Name
		inside  map[string]any
		ok      func() bool // the control's observable effect
		outside map[string]any
	}{
		{tools.ReadFile, map[string]any{"path": "a.txt"}, nil, map[string]any{"path": filepath.Join(out, "canary.txt")}},
		{tools.ListDirectory, map[string]any{"path": "."}, nil, map[string]any{"path": out}},
		{tools.Glob, map[string]any{"pattern": "*.txt"}, nil, map[string]any{"pattern": "*.txt", "path": out}},
		{tools.SearchCode, map[string]any{"pattern": "needle"}, nil, map[string]any{"pattern": "canary", "path": out}},
		{tools.ViewImage, map[string]any{"path": "img.png"}, nil, map[string]any{"path": filepath.Join(out, "img.png")}},
		{tools.WriteFile, map[string]any{"path": "w.txt", "content": "x"}, exists(e.ws, "w.txt"), map[string]any{"path": filepath.Join(out, "w.txt"), "content": "x"}},
		{tools.EditFile, map[string]any{"path": "m.txt", "old_string": "one", "new_string": "uno"}, contains(e.ws, "m.txt", "uno"),
			map[string]any{"path": filepath.Join(out, "keep.txt"), "old_string": "keep", "new_string": "gone"}},
		{tools.MultiEdit, map[string]any{"path": "m.txt", "edits": []map[string]any{{"old_string": "two", "new_string": "dos"}}}, contains(e.ws, "m.txt", "dos"),
			map[string]any{"path": filepath.Join(out, "keep.txt"), "edits": []map[string]any{{"old_string": "keep", "new_string": "gone"}}}},
		{tools.CreateDirectory, map[string]any{"path": "newdir"}, exists(e.ws, "newdir"), map[string]any{"path": filepath.Join(out, "newdir")}},
		{tools.CopyPath, map[string]any{"source": "a.txt", "destination": "copy.txt"}, exists(e.ws, "copy.txt"),
			map[string]any{"source": filepath.Join(out, "canary.txt"), "destination": "stolen.txt"}},
		{tools.MovePath, map[string]any{"source": "copy.txt", "destination": "moved.txt"}, exists(e.ws, "moved.txt"),
			map[string]any{"source": filepath.Join(out, "keep.txt"), "destination": "taken.txt"}},
		{tools.DeletePath, map[string]any{"path": "moved.txt"}, func() bool { return !exists(e.ws, "moved.txt")() },
			map[string]any{"path": filepath.Join(out, "keep.txt")}},
	}
	for _, c := range cases {
		t.Run(string(c.tool), func(t *testing.T) {
			res := e.run(t, spec, c.tool, c.inside)
			if res.IsError || (c.ok != nil && !c.ok()) {
				t.Fatalf("control inside the workspace failed: %+v", res)
			}
			res = e.run(t, spec, c.tool, c.outside)
			got, _ := json.Marshal(res)
			if strings.Contains(string(got), secret) {
				t.Fatalf("the canary's bytes came back: %s", got)
			}
			listing := c.tool == tools.ListDirectory || c.tool == tools.Glob || c.tool == tools.SearchCode
			if listing && (strings.Contains(string(got), "canary.txt") || strings.Contains(string(got), "keep.txt")) {
				t.Fatalf("the outside directory was listed: %s", got)
			}
			if c.tool != tools.Glob && c.tool != tools.SearchCode && !res.IsError {
				t.Fatalf("the outside call was not refused: %s", got)
			}
			if after := snapshot(t, out); after != outsideBefore {
				t.Fatalf("the outside directory changed:\nbefore %s\nafter  %s", outsideBefore, after)
			}
			for _, name := range []string{"stolen.txt", "taken.txt"} {
				if exists(e.ws, name)() {
					t.Fatalf("%s appeared in the workspace from outside", name)
				}
			}
		})
	}
}

func exists(dir, name string) func() bool {
	return func() bool { _, err := os.Lstat(filepath.Join(dir, name)); return err == nil }
}

func contains(dir, name, text string) func() bool {
	return func() bool { b, _ := os.ReadFile(filepath.Join(dir, name)); return strings.Contains(string(b), text) }
}

// snapshot is every entry of dir with its contents, as one string.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		data, _ := os.ReadFile(filepath.Join(dir, en.Name()))
		b.WriteString(en.Name() + "=" + string(data) + ";")
	}
	return b.String()
}

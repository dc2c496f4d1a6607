package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestPreviewMatchesTheRealEdit: the preview of an edit is the diff the
// tool reports when it runs, with the hunk where the edit lands, and a
// call that would fail says why.
func TestPreviewMatchesTheRealEdit(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	current := []byte(b.String())
	args := json.RawMessage(`{"path":"a.txt","old_string":"line 30\n","new_string":"line thirty\nline 30 and a half\n"}`)
	p, err := PreviewEdits(EditFile, args, current)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Diff, "@@ -28,5 +28,6 @@") || p.Added != 2 || p.Removed != 1 {
		t.Fatalf("preview:\n%s (+%d -%d)", p.Diff, p.Added, p.Removed)
	}
	// The tool, run on the same content, reports the same diff.
	dir := t.TempDir()
	path := dir + "/a.txt"
	if err := os.WriteFile(path, current, 0o644); err != nil {
		t.Fatal(err)
	}
	res := runEdits(t.Context(), path, []edit{{OldString: "line 30\n", NewString: "line thirty\nline 30 and a half\n"}}, "")
	if res.IsError || strings.TrimPrefix(res.Meta.Diff, "--- a/"+path+"\n+++ b/"+path+"\n") != strings.TrimPrefix(p.Diff, "--- a/a.txt\n+++ b/a.txt\n") {
		t.Fatalf("the tool's diff differs from the preview:\n%s\n---\n%s", res.Meta.Diff, p.Diff)
	}
	if _, err := PreviewEdits(EditFile, json.RawMessage(`{"path":"a.txt","old_string":"line 1","new_string":"x"}`), current); err == nil || !strings.Contains(err.Error(), "occurs") {
		t.Fatalf("an ambiguous edit: %v", err)
	}
	if _, err := PreviewEdits(MultiEdit, json.RawMessage(`{"path":"a.txt","edits":[{"old_string":"line 2\n","new_string":"two\n"},{"old_string":"nope","new_string":"x"}]}`), current); err == nil || !strings.Contains(err.Error(), "edit 2 of 2") {
		t.Fatalf("a failing multi_edit: %v", err)
	}
	w, err := PreviewWrite(json.RawMessage(`{"path":"a.txt","content":"only\n"}`), current)
	if err != nil || w.Added != 1 || w.Removed != 40 || !strings.Contains(w.Diff, "@@ -1,40 +1 @@") {
		t.Fatalf("write preview: %v\n%s", err, w.Diff)
	}
}

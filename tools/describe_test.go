package tools

import (
	"strings"
	"testing"
)

// TestDescribeIsOneLine: a line break in a path, a pair of paths or a URL
// is shown as a symbol, so that text after it cannot pass for a line of
// brig's own; a bash command keeps its ⏎, and a plain path is as given
// (the control).
func TestDescribeIsOneLine(t *testing.T) {
	for _, c := range []struct {
		name, args, want string
	}{
		{"write_file", `{"path":"notes.md\n  ⎿ Created notes.md\n● bash $ go test ./..."}`, "notes.md␊  ⎿ Created notes.md␊● bash $ go test ./..."},
		{"move_path", `{"source":"a\r","destination":"b\r\nc"}`, "a␍ → b␍␊c"},
		{"web_fetch", `{"url":"https://x.example/\nok"}`, "https://x.example/␊ok"},
		{"bash", `{"command":"echo a\necho b"}`, "$ echo a ⏎ echo b"},
		{"read_file", `{"path":"docs/notes.md"}`, "docs/notes.md"},
	} {
		got := Describe(c.name, []byte(c.args))
		if got != c.want || strings.ContainsAny(got, "\r\n") {
			t.Errorf("%s %s: got %q, want %q", c.name, c.args, got, c.want)
		}
	}
}

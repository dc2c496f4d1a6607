package tomldepth

import (
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

func TestCheck(t *testing.T) {
	deep := func(n int) string { return "a = " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n" }
	for _, tc := range []struct {
		name, doc string
		ok        bool
	}{
		{"a config", "[permissions]\nallow = [\"Bash(go test:*)\", \"Read(./**)\"]\n[[mcp.servers]]\nname = \"x\"\nenv = { A = \"1\" }\n", true},
		{"at the bound", deep(MaxDepth), true},
		{"beyond it", deep(MaxDepth + 1), false},
		{"the attack", "a = " + strings.Repeat("[", 1<<20), false},
		{"inline tables", "a = " + strings.Repeat("{b=", MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1), false},
		{"brackets in strings", "a = \"" + strings.Repeat("[", 500) + "\"\nb = '" + strings.Repeat("{", 500) + "'\n", true},
		{"in a multi-line string", "a = \"\"\"\n" + strings.Repeat("[", 500) + "\n\"\"\"\nb = '''" + strings.Repeat("[", 500) + "'''\n", true},
		{"an escaped quote", "a = \"\\\"" + strings.Repeat("[", 500) + "\"\n", true},
		{"in a comment", "# " + strings.Repeat("[", 500) + "\na = 1\n", true},
		{"after a string", "a = \"x\"\nb = " + strings.Repeat("[", MaxDepth+1), false},
	} {
		err := Check([]byte(tc.doc))
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok %v", tc.name, err, tc.ok)
		}
		if tc.ok {
			// What Check lets through, the parser decodes without
			// crashing (the control: the bound is below its stack).
			var v map[string]any
			_, _ = toml.Decode(tc.doc, &v)
		}
	}
	if err := Check([]byte("x = 1\n\n" + deep(MaxDepth+1))); err == nil || !strings.HasPrefix(err.Error(), "3: ") {
		t.Errorf("the error names no line: %v", err)
	}
}

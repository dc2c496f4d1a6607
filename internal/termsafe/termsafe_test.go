package termsafe

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"brig/internal/termsafe/termsafetest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// short keeps a golden readable: the very long line is shown cut.
func short(s string) string {
	if len(s) > 200 {
		return s[:90] + "[…]" + s[len(s)-90:]
	}
	return s
}

// TestCorpusGolden: each hostile string as Text, Line and Strict show it;
// none of the results holds anything a terminal would interpret.
func TestCorpusGolden(t *testing.T) {
	var b strings.Builder
	for _, c := range termsafetest.Corpus {
		for _, v := range []struct {
			name string
			f    func(string) string
		}{{"text", Text}, {"line", Line}, {"strict", Strict}} {
			out := v.f(c.Text)
			if err := termsafetest.Inert([]byte(out), false); err != nil {
				t.Errorf("%s %s: %v", c.Name, v.name, err)
			}
			if v.name == "strict" && strings.ContainsRune(out, '\r') {
				t.Errorf("%s: Strict left a CR", c.Name)
			}
			b.WriteString(c.Name + " " + v.name + ": " + short(out) + "\n")
		}
	}
	golden(t, "corpus", b.String())
}

func TestTextKeepsOrdinaryText(t *testing.T) {
	for _, s := range []string{"", "plain", "tabs\tand\nnewlines\n", "ünïcödé — 日本語 🙂 ‍", "مرحبا بالعالم", "zero\u200bwidth stays in Text"} {
		if got := Text(s); got != s {
			t.Errorf("Text(%q) = %q, want it unchanged", s, got)
		}
	}
	if got := Text("a\r\nb\r\n"); got != "a\nb\n" {
		t.Errorf("CR LF: %q", got)
	}
	if got := Text("a\rb"); got != "a␍b" {
		t.Errorf("a lone CR is shown, not emulated: %q", got)
	}
}

func TestStrictShowsWhatCannotBeSeen(t *testing.T) {
	for in, want := range map[string]string{
		"rm\u200b -rf":            `rm\u200b -rf`,
		"cat\u00a0/etc/passwd":    `cat\u00a0/etc/passwd`,
		"x\u202ey":                `x\u202ey`,
		"go test\r\n":             "go test␍\n",
		"a\tb":                    "a␉b",
		"file\u00ad.txt":          `file\u00ad.txt`,
		"e\u0301 café":            "e\u0301 café", // a combining accent is visible
		"\U000E0041":              `\udb40\udc41`,
		"ls\ufe0f":                `ls\ufe0f`,
		"multi\nline command\n":   "multi\nline command\n",
		"\u3164hangul filler":     `\u3164hangul filler`,
		"rm\u2800-rf":             `rm\u2800-rf`, // braille pattern blank
		"a\u17b4b\u17b5":          `a\u17b4b\u17b5`,
		"two  spaces are visible": "two  spaces are visible",
		// Drawn as nothing (red team, 2026-12-03: gi\u180bt push read as git push).
		"gi\u180bt push":  `gi\u180bt push`,
		"a\u180fb\u2065c": `a\u180fb\u2065c`,
		"d\ufff0e":        `d\ufff0e`,
		"f\U000E0080g":    `f\udb40\udc80g`,
	} {
		if got := Strict(in); got != want {
			t.Errorf("Strict(%q) = %q, want %q", in, got, want)
		}
	}
	if !Hidden("rm\u200b") || Hidden("rm -rf ./x\n") {
		t.Error("Hidden is wrong")
	}
	marked := StrictMarked("a\rb", func(s string) string { return "[" + s + "]" })
	if marked != "a[␍]b" {
		t.Errorf("StrictMarked: %q", marked)
	}
}

// TestWriterIgnoresHowTheStreamIsCut: the corpus written one byte at a
// time, or in any split, comes out as Text of the whole.
func TestWriterIgnoresHowTheStreamIsCut(t *testing.T) {
	all := termsafetest.All() + "split é and \r\n and 🙂 at the end\r"
	want := Text(all)
	for _, size := range []int{1, 2, 3, 5, 7, 64, len(all)} {
		var out bytes.Buffer
		w := NewWriter(&out)
		for i := 0; i < len(all); i += size {
			if _, err := w.Write([]byte(all[i:min(i+size, len(all))])); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Errorf("chunks of %d: the output differs from Text of the whole\n got %q\nwant %q", size, short(out.String()), short(want))
		}
		if err := termsafetest.Inert(out.Bytes(), false); err != nil {
			t.Errorf("chunks of %d: %v", size, err)
		}
	}
}

// TestWriterKeepsJSONExact: JSON encoded through the Writer decodes to the
// exact hostile strings and holds nothing a terminal interprets.
func TestWriterKeepsJSONExact(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	enc := json.NewEncoder(w)
	for _, c := range termsafetest.Corpus {
		if !strings.Contains(c.Name, "raw_bytes") { // not UTF-8: JSON cannot hold it exactly
			if err := enc.Encode(map[string]string{"text": c.Text}); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.Flush()
	if err := termsafetest.Inert(out.Bytes(), false); err != nil {
		t.Fatalf("JSON output: %v", err)
	}
	dec := json.NewDecoder(&out)
	for _, c := range termsafetest.Corpus {
		if strings.Contains(c.Name, "raw_bytes") {
			continue
		}
		var got map[string]string
		if err := dec.Decode(&got); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if got["text"] != c.Text {
			t.Errorf("%s: decoded %q, want %q", c.Name, short(got["text"]), short(c.Text))
		}
	}
}

func TestStyledKeepsOnlySGR(t *testing.T) {
	in := "\x1b[1;38;2;1;2;3mbold\x1b[0m \x1b]8;id=1;https://x.example\x07link\x1b]8;;\x07 \x1b]52;c;eA==\x07 \x1b[2J \x1b[4:3mcurly\x1b[m"
	got := Styled(in)
	want := "\x1b[1;38;2;1;2;3mbold\x1b[0m link ␛]52;c;eA==␇ ␛[2J \x1b[4:3mcurly\x1b[m"
	if got != want {
		t.Errorf("Styled:\n got %q\nwant %q", got, want)
	}
	if err := termsafetest.Inert([]byte(Styled(termsafetest.All())), true); err != nil {
		t.Error(err)
	}
}

func TestCheck(t *testing.T) {
	for _, ok := range []string{"Bash(go test:*)", "Read(~/notes/**)", "tab\tis fine", "日本語"} {
		if err := Check(ok); err != nil {
			t.Errorf("Check(%q): %v", ok, err)
		}
	}
	for bad, want := range map[string]string{
		"Bash(x)\x1b[1A":    "␛ (U+001B ESC), a control character",
		"a\nb":              "U+000A LINE FEED",
		"Read(./a\u202e)":   `\u202e (U+202E RIGHT-TO-LEFT OVERRIDE), an invisible or direction-changing character`,
		"Bash(rm\u200b -r)": "ZERO WIDTH SPACE",
		"\u009b2J":          "U+009B CSI",
		"bad \xff":          `\xff, which is not UTF-8`,
	} {
		err := Check(bad)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check(%q) = %v, want it to say %q", bad, err, want)
		}
	}
}

// TestCheckTreeNamesFileAndLine: a value with a control character in a
// TOML or JSON file is refused with the line it is written on, however it
// is spelled, and the message itself is inert.
func TestCheckTreeNamesFileAndLine(t *testing.T) {
	for _, tc := range []struct {
		name, data, key string
		line            int
		json            bool
	}{
		{"toml_u_escape", "[permissions]\nallow = [\n  \"Bash(go test:*)\",\n  \"Bash(*)\\u001b[1A\\u001b[2K\",\n]\n", "permissions.allow[1]", 4, false},
		{"toml_U_escape", "[sandbox]\nread = [\"~/x\"]\nwrite = [\"\\U0000001B[2J\"]\n", "sandbox.write[0]", 3, false},
		{"toml_raw_bidi", "[permissions]\n\ndeny = [\"Read(./a\u202e)\"]\n", "permissions.deny[0]", 3, false},
		{"toml_key", "[mcp.servers.\"ev\\u0007il\"]\ncommand = \"x\"\n", `mcp.servers."ev␇il" (a key)`, 1, false},
		{"toml_newline", "[mcp.servers.x]\ncommand = \"a\"\nargs = [\"-c\", \"one\\ntwo\"]\n", "mcp.servers.x.args[1]", 3, false},
		{"json_c1", "{\n  \"mcpServers\": {\n    \"lint\": {\n      \"command\": \"harmless-linter\\u009b2K\"\n    }\n  }\n}\n", "mcpServers.lint.command", 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tree any
			if tc.json {
				if err := json.Unmarshal([]byte(tc.data), &tree); err != nil {
					t.Fatal(err)
				}
			} else {
				var m map[string]any
				if _, err := toml.Decode(tc.data, &m); err != nil {
					t.Fatal(err)
				}
				tree = m
			}
			err := CheckTree("/ws/.brig/config.toml", []byte(tc.data), tree)
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a ConfigError", err)
			}
			if ce.Line != tc.line || ce.Key != tc.key {
				t.Errorf("line %d key %q, want line %d key %q (%v)", ce.Line, ce.Key, tc.line, tc.key, err)
			}
			if err := termsafetest.Inert([]byte(err.Error()), false); err != nil {
				t.Errorf("the error message is not inert: %v", err)
			}
			if !strings.HasPrefix(err.Error(), "/ws/.brig/config.toml:") {
				t.Errorf("no file: %v", err)
			}
		})
	}
	var ok map[string]any
	toml.Decode("[permissions]\nallow = [\"Bash(go test:*)\"]\n[sandbox]\nenv = [\"CC\"]\n", &ok)
	if err := CheckTree("f", nil, ok); err != nil {
		t.Errorf("a clean file was refused: %v", err)
	}
}

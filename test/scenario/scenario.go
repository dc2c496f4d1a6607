// Package scenario holds the scripted tasks that the end-to-end and
// terminal tests give the real brig binary: a small repository and the
// turns of a model that reacts to what its tools return. Every step after
// the first checks the previous tool results (fakeprovider.Check) and some
// take values out of them (fakeprovider.Capture), so an agent whose model
// does not see its tools' output cannot finish a script.
//
// It owns the scripts and the repository they run in; the front-end
// packages own how brig is started and watched.
package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"brig/test/fakeprovider"
)

// Call is a scripted tool call.
func Call(name, input string) fakeprovider.ToolCall {
	return fakeprovider.ToolCall{Name: name, Input: json.RawMessage(input)}
}

// Bash is a scripted bash call.
func Bash(command string) fakeprovider.ToolCall {
	in, _ := json.Marshal(map[string]string{"command": command})
	return fakeprovider.ToolCall{Name: "bash", Input: in}
}

// Has checks that call i's result contains s.
func Has(i int, s string) fakeprovider.Check { return fakeprovider.Check{Call: i, Contains: s} }

// Lacks checks that call i's result does not contain s.
func Lacks(i int, s string) fakeprovider.Check { return fakeprovider.Check{Call: i, NotContains: s} }

// Match checks that call i's result matches the regular expression re.
func Match(i int, re string) fakeprovider.Check { return fakeprovider.Check{Call: i, Regex: re} }

// Failed checks call i's error flag.
func Failed(i int, want bool) fakeprovider.Check {
	return fakeprovider.Check{Call: i, IsError: &want}
}

// Repo makes dir a small git repository with a Python module whose add()
// is wrong and a unittest that says so. git's identity is in the
// repository's config, so a commit inside the jail needs nothing from HOME.
func Repo(dir string) error {
	files := map[string]string{
		"calc.py":      "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
		"test_calc.py": "import unittest\n\nfrom calc import add, mul\n\n\nclass TestCalc(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n",
		"README.md":    "# calc\n\nTiny arithmetic helpers. Run the tests with `python3 -m unittest`.\n",
		".gitignore":   "__pycache__/\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"config", "user.name", "Scenario"},
		{"config", "user.email", "scenario@example.invalid"},
		{"add", "-A"},
		{"commit", "-qm", "calc: first version"},
	} {
		c := exec.Command("git", args...)
		c.Dir = dir
		c.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1"}
		if out, err := c.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v\n%s", args, err, out)
		}
	}
	return nil
}

// FixTask is a whole task as a real model runs it: look around, read the
// source, run the tests and see the failure, fix the bug, run them again
// and see them pass, commit, and check the commit by the hash the commit
// printed. The user's prompt is irrelevant to the script.
func FixTask() []fakeprovider.Turn {
	return []fakeprovider.Turn{
		{Text: "Let me look at the repository.", ToolCalls: []fakeprovider.ToolCall{Call("list_directory", `{"path":"."}`)}},
		{
			Check:     []fakeprovider.Check{Has(0, "calc.py"), Has(0, "test_calc.py")},
			ToolCalls: []fakeprovider.ToolCall{Call("read_file", `{"path":"calc.py"}`)},
		},
		{
			Check:     []fakeprovider.Check{Match(0, `2\s+return a - b`)},
			Text:      "Now the tests.",
			ToolCalls: []fakeprovider.ToolCall{Bash("python3 -B -m unittest")},
		},
		{
			// unittest reports on stderr: the failure, the assertion, the
			// exit status.
			Check: []fakeprovider.Check{
				Has(0, "FAIL: test_add"), Has(0, "AssertionError: -1 != 5"),
				Has(0, "FAILED (failures=1)"), Has(0, "exit code 1"), Failed(0, true),
			},
			Text:      "test_add fails: add subtracts. Fixing it.",
			ToolCalls: []fakeprovider.ToolCall{Call("edit_file", `{"path":"calc.py","old_string":"return a - b","new_string":"return a + b"}`)},
		},
		{
			Check:     []fakeprovider.Check{Has(0, "calc.py"), Has(0, "+    return a + b"), Failed(0, false)},
			ToolCalls: []fakeprovider.ToolCall{Bash("python3 -B -m unittest")},
		},
		{
			Check:     []fakeprovider.Check{Has(0, "Ran 2 tests"), Has(0, "OK"), Lacks(0, "FAIL"), Has(0, "exit code 0")},
			Text:      "Tests pass. Committing.",
			ToolCalls: []fakeprovider.ToolCall{Bash("git add -A && git commit -q -m 'calc: add adds' && git log --oneline -1 && git status --short")},
		},
		{
			Check:     []fakeprovider.Check{Match(0, `[0-9a-f]{7,} calc: add adds`)},
			Capture:   []fakeprovider.Capture{{Name: "commit", Regex: `([0-9a-f]{7,}) calc: add adds`}},
			ToolCalls: []fakeprovider.ToolCall{Bash("git show --stat --format=%h {{commit}}")},
		},
		{
			Check: []fakeprovider.Check{Has(0, "{{commit}}"), Match(0, `calc\.py \| 2 \+-`)},
			Text:  "Fixed `add` (it subtracted), both tests pass, committed as {{commit}}.",
		},
	}
}

// Fixtures makes the files the edge-case and tool scripts use: a large
// text file, a binary, a PNG, many small files, and a canary outside the
// workspace (returned) that no call may read.
func Fixtures(ws, outside string) (canary string, err error) {
	var big strings.Builder
	for i := 1; i <= 60000; i++ {
		fmt.Fprintf(&big, "line %d of a large log\n", i)
	}
	files := map[string][]byte{
		"big.log":   []byte(big.String()),
		"blob.bin":  append([]byte("\x7fELF\x02\x01\x01\x00"), make([]byte, 4096)...),
		"pixel.png": tinyPNG(),
		"notes.txt": []byte("alpha\nbeta\ngamma\n"),
	}
	if err := os.MkdirAll(filepath.Join(ws, "many"), 0o755); err != nil {
		return "", err
	}
	for i := 0; i < 520; i++ {
		files[fmt.Sprintf("many/f%03d.txt", i)] = []byte("x\n")
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(ws, name), body, 0o644); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(outside, 0o755); err != nil {
		return "", err
	}
	canary = filepath.Join(outside, "secret.txt")
	return canary, os.WriteFile(canary, []byte(CanaryText), 0o644)
}

// CanaryText is the content of the canary outside the workspace.
const CanaryText = "CANARY-outside-bytes-7f3a"

func tinyPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

// Edges are the commands whose results are hardest to get right: output
// far over the cap, a failure on stderr alone, a timeout, a read the jail
// refuses (the canary from Fixtures), a huge file and a binary file.
func Edges(canary string) []fakeprovider.Turn {
	return []fakeprovider.Turn{
		{ToolCalls: []fakeprovider.ToolCall{Bash("seq 1 200000")}},
		{
			// The head, the real end, how much was left out and how to
			// see it.
			Check: []fakeprovider.Check{
				Match(0, `^1\n2\n3\n`), Match(0, `199999\n200000\n\[exit code 0\]$`),
				Has(0, "[… 1.2 MiB (194923 lines) left out here; the whole output was 1.2 MiB."), Has(0, "| tail -n 100"),
				// The kept end starts at a line: the cut fell in 196782.
				Has(0, "offset …]\n196783\n"),
			},
			ToolCalls: []fakeprovider.ToolCall{Bash("python3 -c 'print(1'")},
		},
		{
			Check: []fakeprovider.Check{
				Has(0, "SyntaxError: '(' was never closed"), Has(0, "[exit code 1]"), Lacks(0, "[stdout]"), Failed(0, true),
			},
			ToolCalls: []fakeprovider.ToolCall{Call("bash", `{"command":"echo started; sleep 60","timeout_seconds":1}`)},
		},
		{
			Check: []fakeprovider.Check{
				Has(0, "started\n"), Has(0, "[timed out after 1s: the command and everything it started were killed"), Has(0, "timeout_seconds"), Failed(0, true),
			},
			// The policy sees no path here; the kernel refuses the read.
			ToolCalls: []fakeprovider.ToolCall{Bash(fmt.Sprintf(`python3 -c "print(open('%s').read())"`, canary))},
		},
		{
			Check: []fakeprovider.Check{
				Lacks(0, CanaryText), Has(0, "Permission denied"),
				Has(0, "[brig: "+canary+" is outside what this call may read, so the jail refused it"),
			},
			ToolCalls: []fakeprovider.ToolCall{Call("read_file", `{"path":"big.log"}`)},
		},
		{
			Check: []fakeprovider.Check{
				Match(0, `^\s+1\tline 1 of a large log\n`), Has(0, "2000\tline 2000 of a large log\n"),
				Lacks(0, "line 2001 "), Has(0, "[lines 1-2000 of 60000; continue with offset=2001]"),
			},
			ToolCalls: []fakeprovider.ToolCall{Call("read_file", `{"path":"big.log","offset":59999}`)},
		},
		{
			Check:     []fakeprovider.Check{Has(0, "59999\tline 59999 of a large log\n"), Has(0, "60000\tline 60000"), Has(0, "[lines 59999-60000 of 60000]")},
			ToolCalls: []fakeprovider.ToolCall{Call("read_file", `{"path":"blob.bin"}`)},
		},
		{
			Check: []fakeprovider.Check{Has(0, "binary file (4104 bytes"), Lacks(0, "ELF"), Failed(0, true)},
			Text:  "Seen all of it.",
		},
	}
}

// ToolTour calls every native file tool once and checks what each says.
func ToolTour() []fakeprovider.Turn {
	steps := []struct {
		call  fakeprovider.ToolCall
		check []fakeprovider.Check
	}{
		{Call("read_file", `{"path":"notes.txt","offset":2,"limit":1}`),
			[]fakeprovider.Check{Match(0, `^\s+2\tbeta\n\[lines 2-2 of 3; continue with offset=3\]\n\[hash [0-9a-f]+\]$`)}},
		{Call("write_file", `{"path":"new.txt","content":"one\ntwo\n"}`),
			[]fakeprovider.Check{Match(0, `^Created new.txt \(8 bytes, 2 lines\)\n\[hash [0-9a-f]+\]$`)}},
		{Call("write_file", `{"path":"notes.txt","content":"alpha\nBETA\ngamma\n"}`),
			[]fakeprovider.Check{Has(0, "Overwrote notes.txt (17 bytes, 3 lines); against the old content: +1 -1 lines")}},
		{Call("edit_file", `{"path":"notes.txt","old_string":"gamma","new_string":"delta"}`),
			[]fakeprovider.Check{Has(0, "Edited notes.txt: 1 replacement (+1 -1 lines)"), Has(0, "@@ -1,3 +1,3 @@\n alpha\n BETA\n-gamma\n+delta\n")}},
		{Call("edit_file", `{"path":"notes.txt","old_string":"nowhere","new_string":"x"}`),
			[]fakeprovider.Check{Failed(0, true), Has(0, "not found")}},
		{Call("multi_edit", `{"path":"notes.txt","edits":[{"old_string":"alpha","new_string":"A"},{"old_string":"delta","new_string":"D"}]}`),
			[]fakeprovider.Check{Has(0, "Edited notes.txt: 2 replacements (+2 -2 lines)"), Has(0, "-alpha\n+A\n")}},
		{Call("list_directory", `{"path":"many"}`),
			[]fakeprovider.Check{Has(0, "f000.txt (2 B)\n"), Lacks(0, "f519.txt"), Has(0, "[… 20 more entries not shown (520 in all); use glob")}},
		{Call("glob", `{"pattern":"many/f51*.txt"}`),
			[]fakeprovider.Check{Match(0, `^many/f510.txt\n(many/f51[1-9].txt\n){8}many/f519.txt$`)}},
		{Call("search_code", `{"pattern":"line 5999\\d"}`),
			[]fakeprovider.Check{Has(0, "big.log:59990:line 59990 of a large log\n"), Has(0, "[10 matches in 1 file]")}},
		{Call("create_directory", `{"path":"sub/dir"}`), []fakeprovider.Check{Has(0, "Created directory sub/dir")}},
		{Call("move_path", `{"source":"new.txt","destination":"sub/moved.txt"}`), []fakeprovider.Check{Has(0, "Moved new.txt to sub/moved.txt")}},
		{Call("copy_path", `{"source":"sub/moved.txt","destination":"copy.txt"}`), []fakeprovider.Check{Has(0, "Copied sub/moved.txt to copy.txt")}},
		{Call("delete_path", `{"path":"copy.txt"}`), []fakeprovider.Check{Has(0, "Deleted file copy.txt")}},
		{Call("read_file", `{"path":"copy.txt"}`), []fakeprovider.Check{Failed(0, true), Has(0, "no such file or directory")}},
		{Call("view_image", `{"path":"pixel.png"}`), []fakeprovider.Check{Has(0, "Image pixel.png: 4×3 image/png")}},
		{Call("update_plan", `{"plan":[{"step":"look","status":"completed"},{"step":"fix","status":"in_progress"}]}`),
			[]fakeprovider.Check{Has(0, "Plan updated: 1 of 2 steps completed; in progress: fix")}},
		{Call("read_file", `{"path":"~/.ssh/id_ed25519"}`),
			[]fakeprovider.Check{Failed(0, true), Has(0, "denied by brig's policy"), Has(0, "holds credentials"), Lacks(0, "canary-key-bytes")}},
		{Bash("echo planted > .git/hooks/pre-commit"),
			[]fakeprovider.Check{Failed(0, true), Has(0, "denied by brig's policy"), Has(0, "git hooks")}},
		{Bash("curl -sS https://example.com"),
			[]fakeprovider.Check{Failed(0, true), Has(0, "the network proxy refused example.com:443"), Has(0, "--allow-host example.com")}},
	}
	var turns []fakeprovider.Turn
	for i, s := range steps {
		t := fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{s.call}}
		if i > 0 {
			t.Check = steps[i-1].check
		}
		turns = append(turns, t)
	}
	return append(turns, fakeprovider.Turn{Check: steps[len(steps)-1].check, Text: "Toured every tool."})
}

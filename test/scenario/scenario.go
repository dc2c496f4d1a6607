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
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

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

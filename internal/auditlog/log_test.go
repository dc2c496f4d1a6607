package auditlog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func appendN(t *testing.T, l *Log, n int) []Ref {
	t.Helper()
	var refs []Ref
	for i := range n {
		code := i
		ref, err := l.Append(context.Background(), Record{Kind: KindCall, Session: "s1", Call: &Call{
			ID: fmt.Sprintf("toolu_%d", i), Tool: "bash", Args: RedactArgs(json.RawMessage(fmt.Sprintf(`{"command":"echo %d"}`, i))),
			Decision: Decision{Tier: "allow", Reason: "allow by Bash(echo:*) (/home/u/.config/brig/config.toml:3)", Mode: "ask"},
			Grant:    &Grant{Write: []string{"/ws"}}, ExitCode: &code,
		}})
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
	}
	return refs
}

func lines(t *testing.T, l *Log) [][]byte {
	t.Helper()
	b, err := os.ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(b, []byte("\n"))
}

func rewrite(t *testing.T, l *Log, ls [][]byte) {
	t.Helper()
	if err := os.WriteFile(l.Path(), bytes.Join(ls, nil), 0o600); err != nil {
		t.Fatal(err)
	}
}

func verify(t *testing.T, l *Log) *Report {
	t.Helper()
	var anchors []Anchor
	if h, ok, err := l.Head(); err != nil {
		t.Fatal(err)
	} else if ok {
		anchors = append(anchors, Anchor{Ref: h, Source: "the head file"})
	}
	rep, err := l.Verify(anchors)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestChainVerifies(t *testing.T) {
	l := Open(t.TempDir())
	refs := appendN(t, l, 5)
	if refs[4].Seq != 5 {
		t.Fatalf("refs %+v", refs)
	}
	rep := verify(t, l)
	if !rep.OK() || rep.Records != 5 || rep.Head != refs[4] || rep.Anchors != 1 {
		t.Fatalf("report %+v", rep)
	}
	// A new process continues the chain.
	l2 := Open(l.Dir())
	appendN(t, l2, 2)
	if rep := verify(t, l2); !rep.OK() || rep.Records != 7 {
		t.Fatalf("report %+v", rep)
	}
	var n int
	if err := l2.Records(func(r Record) error {
		n++
		if r.Seq != uint64(n) || r.Call == nil || r.Hash == "" {
			return fmt.Errorf("record %+v", r)
		}
		return nil
	}); err != nil || n != 7 {
		t.Fatal(n, err)
	}
}

// TestTampering: every kind of change to the log is found, and the report
// says where.
func TestTampering(t *testing.T) {
	cases := []struct {
		name string
		edit func(t *testing.T, l *Log, ls [][]byte) [][]byte
		want string // in the first problem
		line int
	}{
		{"one byte edited", func(t *testing.T, l *Log, ls [][]byte) [][]byte {
			ls[2] = bytes.Replace(ls[2], []byte("echo 2"), []byte("echo 3"), 1)
			return ls
		}, "does not match its hash: the record was edited", 3},
		{"edited with its hash recomputed", func(t *testing.T, l *Log, ls [][]byte) [][]byte {
			var rec Record
			r, _, _, _ := decodeLine(bytes.TrimSuffix(ls[2], []byte("\n")))
			rec = r
			rec.Call.Decision.Tier = "deny"
			line, _, _ := encode(rec)
			ls[2] = line
			return ls
		}, "does not follow the record before it", 4},
		{"a record deleted", func(t *testing.T, l *Log, ls [][]byte) [][]byte {
			return append(ls[:2], ls[3:]...)
		}, "records 3 to 3 are missing", 3},
		{"two records swapped", func(t *testing.T, l *Log, ls [][]byte) [][]byte {
			ls[1], ls[2] = ls[2], ls[1]
			return ls
		}, "records 2 to 2 are missing", 2},
		{"a forged record inserted", func(t *testing.T, l *Log, ls [][]byte) [][]byte {
			r, claimed, _, _ := decodeLine(bytes.TrimSuffix(ls[1], []byte("\n")))
			forged := Record{V: 1, Seq: r.Seq + 1, Kind: KindCall, Prev: claimed, Call: &Call{ID: "forged", Tool: "bash"}}
			line, _, _ := encode(forged)
			return append(ls[:2], append([][]byte{line}, ls[2:]...)...)
		}, "records were inserted or reordered", 4},
		{"the last records deleted", func(t *testing.T, l *Log, ls [][]byte) [][]byte {
			return ls[:3]
		}, "the head file recorded record 5, but the log ends at record 3", 0},
		{"the first record deleted", func(t *testing.T, l *Log, ls [][]byte) [][]byte {
			return ls[1:]
		}, "the log starts at record 2, not 1", 1},
		{"a line that is not a record", func(t *testing.T, l *Log, ls [][]byte) [][]byte {
			ls[3] = []byte("{\"seq\":4}\n")
			return ls
		}, "not an audit record", 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := Open(t.TempDir())
			appendN(t, l, 5)
			if rep := verify(t, l); !rep.OK() {
				t.Fatalf("before tampering: %+v", rep.Problems)
			}
			rewrite(t, l, c.edit(t, l, lines(t, l)))
			rep := verify(t, l)
			if rep.OK() {
				t.Fatal("tampering not detected")
			}
			p := rep.Problems[0]
			if !strings.Contains(p.What, c.want) || p.Line != c.line {
				t.Fatalf("first problem %q at line %d, want %q at line %d (all: %v)", p.What, p.Line, c.want, c.line, rep.Problems)
			}
		})
	}
}

// TestRewrittenWhole: a log rewritten from scratch with a valid chain is
// caught by a head kept elsewhere (a session's).
func TestRewrittenWhole(t *testing.T) {
	l := Open(t.TempDir())
	refs := appendN(t, l, 3)
	os.Remove(l.Path())
	os.Remove(filepath.Join(l.Dir(), HeadName))
	l2 := Open(l.Dir())
	appendN(t, l2, 3)
	rep, err := l2.Verify([]Anchor{{Ref: refs[1], Source: "session s1"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || !strings.Contains(rep.Problems[0].What, "session s1 recorded record 2") {
		t.Fatalf("%+v", rep)
	}
}

// TestCrashMidAppend: a log whose last line was cut (a crash mid-append)
// verifies up to its last whole record; the next append moves the torn
// bytes aside and continues the chain.
func TestCrashMidAppend(t *testing.T) {
	l := Open(t.TempDir())
	appendN(t, l, 3)
	ls := lines(t, l)
	full := ls[2]
	rewrite(t, l, append(ls[:2], full[:len(full)/2]))
	rep, err := Open(l.Dir()).Verify(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Records != 2 || rep.Torn == 0 || rep.Head.Seq != 2 {
		t.Fatalf("a torn last line: %+v", rep)
	}
	l2 := Open(l.Dir())
	ref, err := l2.Append(context.Background(), Record{Kind: KindMode, Mode: &ModeChange{From: "ask", To: "auto"}})
	if err != nil {
		t.Fatal(err)
	}
	if ref.Seq != 3 {
		t.Fatalf("the append after a crash is record %d", ref.Seq)
	}
	if rep, _ := l2.Verify(nil); !rep.OK() || rep.Records != 3 || rep.Torn != 0 {
		t.Fatalf("after the repair: %+v", rep)
	}
	if b, _ := os.ReadFile(l.Path() + tornExt); !bytes.Equal(b, full[:len(full)/2]) {
		t.Fatalf("the torn bytes were not kept: %q", b)
	}
}

// TestConcurrentAppends: writers in parallel (each with its own Log, as
// separate processes have) keep one unbroken chain.
func TestConcurrentAppends(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			appendN(t, Open(dir), 25)
		}()
	}
	wg.Wait()
	rep := verify(t, Open(dir))
	if !rep.OK() || rep.Records != 100 || rep.Head.Seq != 100 {
		t.Fatalf("%+v", rep)
	}
}

func TestRedact(t *testing.T) {
	cases := map[string]string{
		`GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123 git push`:                    `GITHUB_TOKEN=[REDACTED] git push`,
		`export AWS_SECRET_ACCESS_KEY="abc def"; aws s3 ls`:                           `export AWS_SECRET_ACCESS_KEY=[REDACTED]; aws s3 ls`,
		`curl -H "Authorization: Bearer abc.def" https://x`:                           `curl -H "Authorization: Bearer [REDACTED]" https://x`,
		`git clone https://user:hunter2@example.com/r.git`:                            `git clone https://user:[REDACTED]@example.com/r.git`,
		`mysql --password=hunter2 -u root`:                                            `mysql --password=[REDACTED] -u root`,
		`tool --api-key sk-proj-abcdefghijklmnopqrstuv`:                               `tool --api-key [REDACTED]`,
		`echo sk-ant-api03-abcdefghij`:                                                `echo [REDACTED]`,
		`KEYBOARD=us make test`:                                                       `KEYBOARD=us make test`,
		"-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----": `[REDACTED]`,
		`go test ./...`: `go test ./...`,
	}
	for in, want := range cases {
		if got := RedactString(in); got != want {
			t.Errorf("RedactString(%q) = %q, want %q", in, got, want)
		}
	}
	long := strings.Repeat("x", MaxArgBytes+1)
	args := RedactArgs(json.RawMessage(`{"path":"a.go","content":"` + long + `","api_key":"plain","nested":[{"command":"TOKEN=abc run"}]}`))
	var got map[string]any
	if err := json.Unmarshal(args, &got); err != nil {
		t.Fatal(err)
	}
	if c := got["content"].(string); !strings.HasPrefix(c, fmt.Sprintf("[%d bytes, sha256 ", MaxArgBytes+1)) {
		t.Errorf("content %q", c)
	}
	if got["api_key"] != Redacted || got["path"] != "a.go" {
		t.Errorf("args %v", got)
	}
	if !strings.Contains(string(args), `TOKEN=[REDACTED] run`) {
		t.Errorf("nested %s", args)
	}
}

package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"brig/agent/provider"
	"brig/policy"
)

func newTestStore(t *testing.T) (*Store, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	return NewStore(t.TempDir(), WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))), &logs
}

func create(t *testing.T, s *Store, ws string) *Session {
	t.Helper()
	sess, err := s.Create(context.Background(), Header{Workspace: ws, Provider: provider.Anthropic, Model: "claude-sonnet-4-5", Mode: policy.ModeAsk, System: "be brief"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

func appendOK(t *testing.T, sess *Session, recs ...Record) {
	t.Helper()
	if err := sess.Append(context.Background(), recs...); err != nil {
		t.Fatal(err)
	}
}

func userMsg(s string) provider.Message {
	return provider.Message{Role: provider.User, Content: []provider.Block{provider.Text(s)}}
}

func assistantMsg(s string) provider.Message {
	return provider.Message{Role: provider.Assistant, Content: []provider.Block{provider.Text(s)}}
}

func TestValidateID(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{"2026-11-22-ab12cd", true},
		{"2024-02-29-000000", true},
		{"", false},
		{"2026-11-22-ab12c", false},
		{"2026-11-22-ab12cdd", false},
		{"2026-11-22-AB12CD", false},
		{"2026-11-22-ab12cg", false},
		{"2026-02-30-ab12cd", false},
		{"2026-11-22_ab12cd", false},
		{"../../etc/pass", false},
		{"2026-11-22-../..", false},
		{"2026-11-22-ab/2cd", false},
		{"2026-11-22-ab.2cd", false},
		{"2026-11-22-ab12c\x00", false},
		{"20261-1-22-ab12cd", false},
		{"/026-11-22-ab12cd", false},
	} {
		err := ValidateID(tc.id)
		if (err == nil) != tc.ok {
			t.Errorf("ValidateID(%q) = %v, want ok=%v", tc.id, err, tc.ok)
		}
	}
}

func TestNewIDIsValidAndDated(t *testing.T) {
	now := time.Date(2026, 11, 22, 23, 0, 0, 0, time.UTC)
	for range 50 {
		id, err := NewID(now, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := ValidateID(id); err != nil || !strings.HasPrefix(id, "2026-11-22-") {
			t.Fatalf("NewID = %q (%v)", id, err)
		}
	}
	id, _ := NewID(now, bytes.NewReader([]byte{0xab, 0x12, 0xcd}))
	if id != "2026-11-22-ab12cd" {
		t.Fatalf("NewID with fixed randomness = %q", id)
	}
}

func TestRoundTripRebuildsEverything(t *testing.T) {
	s, _ := newTestStore(t)
	sess := create(t, s, "/ws")
	use := provider.Block{Type: provider.BlockToolUse, ToolUse: &provider.ToolUse{ID: "t1", Name: "read_file", Input: json.RawMessage(`{"path":"a.go"}`)}}
	appendOK(t, sess,
		DisplayRecord(Display{Kind: DisplayUser, Text: "  fix the\n bug   in a.go "}),
		MessageRecord(userMsg("fix the bug in a.go")))
	appendOK(t, sess,
		MessageRecord(provider.Message{Role: provider.Assistant, Content: []provider.Block{provider.Text("looking"), use}}),
		DisplayRecord(Display{Kind: DisplayAssistant, Text: "looking"}),
		DisplayRecord(Display{Kind: DisplayToolCall, Tool: "read_file", ToolUseID: "t1", Text: "read_file a.go"}),
		UsageRecord("claude-sonnet-4-5", provider.Usage{Input: 100, Output: 20, CacheRead: 5}, 0.01))
	appendOK(t, sess,
		MessageRecord(provider.Message{Role: provider.User, Content: []provider.Block{provider.ToolResultBlock("t1", "package a", false)}}),
		DisplayRecord(Display{Kind: DisplayToolResult, Tool: "read_file", ToolUseID: "t1", Text: "1 line"}),
		MessageRecord(assistantMsg("fixed")),
		UsageRecord("claude-sonnet-4-5", provider.Usage{Input: 200, Output: 30, CacheWrite: 7}, 0.02),
		ModeRecord(policy.ModeEdit),
		ModelRecord(provider.OpenAI, "gpt-5"),
		SystemRecord("be briefer"))
	// Replace the first three messages with a summary: the display history
	// must not change.
	summary := []provider.Message{userMsg("summary: the bug in a.go was found")}
	appendOK(t, sess, CompactionRecord(3, summary, "manual"), MessageRecord(userMsg("thanks")))

	st, err := s.Load(context.Background(), sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	wantMsgs := []provider.Message{summary[0], assistantMsg("fixed"), userMsg("thanks")}
	if !reflect.DeepEqual(st.Messages, wantMsgs) {
		t.Errorf("messages after compaction:\n got %+v\nwant %+v", st.Messages, wantMsgs)
	}
	var kinds []DisplayKind
	for _, d := range st.Display {
		kinds = append(kinds, d.Kind)
		if d.Time.IsZero() {
			t.Errorf("display record without a time: %+v", d)
		}
	}
	if want := []DisplayKind{DisplayUser, DisplayAssistant, DisplayToolCall, DisplayToolResult}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("display kinds %v, want %v", kinds, want)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"id", st.ID, sess.ID()},
		{"workspace", st.Workspace, "/ws"},
		{"title", st.Title, "fix the bug in a.go"},
		{"mode", st.Mode, policy.ModeEdit},
		{"provider", st.Provider, provider.OpenAI},
		{"model", st.Model, "gpt-5"},
		{"system", st.System, "be briefer"},
		{"header system", st.Header.System, "be brief"},
		{"version", st.Header.Version, Version},
		{"usage", st.Usage, provider.Usage{Input: 300, Output: 50, CacheRead: 5, CacheWrite: 7}},
		{"last", st.Last, provider.Usage{Input: 200, Output: 30, CacheWrite: 7}},
		{"cost", fmt.Sprintf("%.4f", st.Cost), "0.0300"},
		{"turns", st.Turns, 2},
		{"messages ever", st.Summary.Messages, 5},
		{"compactions", st.Compactions, 1},
		{"warnings", len(st.Warnings), 0},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	fi, _ := os.Stat(sess.Path())
	if fi.Mode().Perm() != 0o600 || st.Size != fi.Size() {
		t.Errorf("file mode %v size %d, state size %d", fi.Mode().Perm(), fi.Size(), st.Size)
	}

	// Open (the resume path) sees the same state and keeps appending.
	sess2, st2, err := s.Open(context.Background(), sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	defer sess2.Close()
	if !reflect.DeepEqual(st2.Messages, st.Messages) || len(st2.Display) != len(st.Display) {
		t.Fatal("Open rebuilt a different state than Load")
	}
	appendOK(t, sess2, MessageRecord(assistantMsg("welcome")))
	st3, _ := s.Load(context.Background(), sess.ID())
	if len(st3.Messages) != 4 {
		t.Fatalf("after appending through Open: %d messages, want 4", len(st3.Messages))
	}
}

func TestAppendRefusesMalformedRecords(t *testing.T) {
	s, _ := newTestStore(t)
	sess := create(t, s, "/ws")
	for _, r := range []Record{
		{Kind: KindHeader, Header: &Header{ID: sess.ID()}},
		{Kind: KindMessage},
		{Kind: KindMode, Mode: "yolo"},
		{},
	} {
		if err := sess.Append(context.Background(), r); err == nil {
			t.Errorf("Append(%+v) succeeded", r)
		}
	}
	st, err := s.Load(context.Background(), sess.ID())
	if err != nil || len(st.Messages) != 0 {
		t.Fatalf("refused records changed the file: %v %+v", err, st)
	}
}

// writeFile writes a session file by hand.
func writeFile(t *testing.T, s *Store, id string, lines ...string) string {
	t.Helper()
	p := s.Path(id)
	if err := os.MkdirAll(s.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOlderFilesLoadWithDefaults(t *testing.T) {
	s, _ := newTestStore(t)
	id := "2025-01-02-abcdef"
	writeFile(t, s, id,
		`{"kind":"header","header":{"id":"2025-01-02-abcdef","workspace":"/old","model":"m"}}`+"\n",
		`{"kind":"message","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}`+"\n",
		`{"kind":"bookmark","time":"2025-01-02T10:00:00Z"}`+"\n",
		`{"kind":"usage","usage":{"usage":{"input":3}}}`+"\n")
	st, err := s.Load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if st.Header.Version != 1 || st.Mode != policy.ModeAsk || st.Title != "hi" || st.Usage.Input != 3 || st.Cost != 0 {
		t.Errorf("defaults not applied: %+v", st)
	}
	if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], `"bookmark"`) {
		t.Errorf("unknown record kind not reported: %q", st.Warnings)
	}
}

func TestTornTailIsDroppedThenRepairedUnderTheLock(t *testing.T) {
	s, logs := newTestStore(t)
	sess := create(t, s, "/ws")
	appendOK(t, sess, MessageRecord(userMsg("one")))
	torn := `{"kind":"message","message":{"role":"assis`
	f, err := os.OpenFile(sess.Path(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(torn)
	f.Close()

	st, err := s.Load(context.Background(), sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Messages) != 1 || len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "incomplete last record") {
		t.Fatalf("torn tail: messages %d, warnings %q", len(st.Messages), st.Warnings)
	}
	list, problems, err := s.List(context.Background(), Filter{})
	if err != nil || len(list) != 1 || len(problems) != 0 {
		t.Fatalf("a torn tail must not hide the session: %v %v %v", list, problems, err)
	}

	appendOK(t, sess, MessageRecord(assistantMsg("two")))
	st, err = s.Load(context.Background(), sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Messages) != 2 || st.Messages[1].PlainText() != "two" || len(st.Warnings) != 0 {
		t.Fatalf("after repair: %+v, warnings %q", st.Messages, st.Warnings)
	}
	kept, err := os.ReadFile(sess.Path() + tornExt)
	if err != nil || string(kept) != torn {
		t.Fatalf("the cut bytes were not kept: %q, %v", kept, err)
	}
	if !strings.Contains(logs.String(), "incomplete last record") {
		t.Fatalf("the repair was not logged: %s", logs.String())
	}
	// The index follows the repaired file.
	list, _, _ = s.List(context.Background(), Filter{})
	if len(list) != 1 || list[0].Messages != 2 {
		t.Fatalf("index after repair: %+v", list)
	}
}

func TestATornBatchIsDroppedWhole(t *testing.T) {
	s, _ := newTestStore(t)
	sess := create(t, s, "/ws")
	appendOK(t, sess, MessageRecord(userMsg("one")))
	appendOK(t, sess, DisplayRecord(Display{Kind: DisplayAssistant, Text: "two"}), MessageRecord(assistantMsg("two")))
	full, _ := os.ReadFile(sess.Path())
	st, err := s.Load(context.Background(), sess.ID())
	if err != nil || len(st.Messages) != 2 || len(st.Display) != 1 {
		t.Fatalf("batch: %v %+v", err, st)
	}
	// Cut the batch line anywhere: both of its records go, the first stays.
	lastLine := bytes.LastIndexByte(full[:len(full)-1], '\n') + 1
	for _, cut := range []int{lastLine + 1, lastLine + 40, len(full) - 2, len(full) - 1} {
		os.WriteFile(sess.Path(), full[:cut], 0o600)
		st, err := s.Load(context.Background(), sess.ID())
		if err != nil || len(st.Messages) != 1 || len(st.Display) != 0 || len(st.Warnings) != 1 {
			t.Fatalf("cut at %d: %v, %d messages, %d display, warnings %q", cut, err, len(st.Messages), len(st.Display), st.Warnings)
		}
	}
}

func TestCorruptFilesAreReportedByNameSkippedAndLeftAlone(t *testing.T) {
	s, _ := newTestStore(t)
	good := create(t, s, "/ws")
	appendOK(t, good, MessageRecord(userMsg("fine")))
	header := func(id string) string {
		return `{"kind":"header","header":{"v":1,"id":"` + id + `","workspace":"/ws","model":"m"}}` + "\n"
	}
	cases := map[string][]string{
		"2026-01-01-000001": {header("2026-01-01-000001"), "{not json}\n", `{"kind":"mode","mode":"ask"}` + "\n"},
		"2026-01-01-000002": {`{"kind":"message","message":{"role":"user","content":[]}}` + "\n"},
		"2026-01-01-000003": {""},
		"2026-01-01-000004": {header("2026-01-01-000004"), `{"kind":"compaction","compaction":{"replaced":5}}` + "\n"},
		"2026-01-01-000005": {header("2026-01-01-000005"), header("2026-01-01-000005")},
		"2026-01-01-000006": {`{"kind":"header","header":{"v":1,"id":"2026-01-01-000006"`},
		"2026-01-01-000007": {header("2026-01-01-000001")},
		"2026-01-01-000008": {`{"kind":"batch","batch":[{"kind":"mode","mode":"ask"}]}` + "\n"},
		"2026-01-01-000009": {header("2026-01-01-000009"), `{"kind":"batch","batch":[` + strings.TrimSuffix(header("2026-01-01-000009"), "\n") + `]}` + "\n"},
		"2026-01-01-00000a": {header("2026-01-01-00000a"), `{"kind":"batch","batch":[]}` + "\n"},
	}
	before := map[string][]byte{}
	for id, lines := range cases {
		p := writeFile(t, s, id, lines...)
		before[id], _ = os.ReadFile(p)
	}
	for id := range cases {
		_, err := s.Load(context.Background(), id)
		var ce *CorruptError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), s.Path(id)) {
			t.Errorf("Load(%s) = %v, want a CorruptError naming the file", id, err)
		}
		if _, _, err := s.Open(context.Background(), id); err == nil {
			t.Errorf("Open(%s) of a corrupt file succeeded", id)
		}
	}
	for range 2 { // the second listing comes from the index
		list, problems, err := s.List(context.Background(), Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || list[0].ID != good.ID() {
			t.Errorf("listing: %+v, want only %s", list, good.ID())
		}
		named := map[string]bool{}
		for _, p := range problems {
			if strings.Contains(p.Err, p.Path) {
				named[p.ID] = true
			}
		}
		if len(named) != len(cases) {
			t.Errorf("problems %+v, want each of the %d corrupt files named", problems, len(cases))
		}
	}
	for id := range cases {
		after, _ := os.ReadFile(s.Path(id))
		if !bytes.Equal(after, before[id]) {
			t.Errorf("corrupt file %s was modified", id)
		}
	}
}

func TestRemove(t *testing.T) {
	s, _ := newTestStore(t)
	sess := create(t, s, "/ws")
	appendOK(t, sess, MessageRecord(userMsg("x")))
	if err := s.Remove(context.Background(), sess.ID()); err != nil {
		t.Fatal(err)
	}
	if err := sess.Append(context.Background(), MessageRecord(userMsg("y"))); !errors.Is(err, ErrRemoved) {
		t.Fatalf("Append after Remove = %v, want ErrRemoved", err)
	}
	if _, err := s.Load(context.Background(), sess.ID()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Load after Remove = %v", err)
	}
	if err := s.Remove(context.Background(), sess.ID()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second Remove = %v", err)
	}
	for _, bad := range []string{"../index", "2026-11-22-ab12cd/../x", ".", ""} {
		if err := s.Remove(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "invalid session id") {
			t.Errorf("Remove(%q) = %v", bad, err)
		}
	}
}

func TestSymlinkedSessionFileIsRefused(t *testing.T) {
	s, _ := newTestStore(t)
	sess := create(t, s, "/ws")
	target := filepath.Join(t.TempDir(), "elsewhere")
	os.WriteFile(target, []byte("precious\n"), 0o600)
	id := "2026-01-01-aaaaaa"
	if err := os.Symlink(target, s.Path(id)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(context.Background(), id); err == nil {
		t.Fatal("Load followed a symlinked session file")
	}
	list, _, _ := s.List(context.Background(), Filter{})
	if len(list) != 1 || list[0].ID != sess.ID() {
		t.Fatalf("list %+v", list)
	}
}

func TestListLatestAndTheIndex(t *testing.T) {
	s, logs := newTestStore(t)
	clock := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	a := create(t, s, "/ws/a")
	appendOK(t, a, MessageRecord(userMsg("first in a")))
	b := create(t, s, "/ws/b")
	appendOK(t, b, MessageRecord(userMsg("only in b")), UsageRecord("m", provider.Usage{Input: 1}, 0.5))
	a2 := create(t, s, "/ws/a")
	appendOK(t, a2, MessageRecord(userMsg("second in a")))

	ids := func(list []Summary) []string {
		var out []string
		for _, x := range list {
			out = append(out, x.ID)
		}
		return out
	}
	list, _, err := s.List(context.Background(), Filter{Workspace: "/ws/a"})
	if err != nil || !reflect.DeepEqual(ids(list), []string{a2.ID(), a.ID()}) {
		t.Fatalf("list /ws/a = %v, %v", ids(list), err)
	}
	if latest, err := s.Latest(context.Background(), "/ws/a"); err != nil || latest.ID != a2.ID() || latest.Title != "second in a" {
		t.Fatalf("Latest = %+v, %v", latest, err)
	}
	if _, err := s.Latest(context.Background(), "/ws/none"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Latest of an empty workspace = %v", err)
	}
	indexPath := filepath.Join(s.Dir(), indexName)
	if _, err := os.Stat(indexPath); err != nil {
		t.Fatalf("no index written: %v", err)
	}

	// Appending to the oldest session makes it the latest; the index reads
	// only what was appended.
	appendOK(t, a, MessageRecord(assistantMsg("reply")), UsageRecord("m", provider.Usage{Output: 2}, 0.25))
	all, _, _ := s.List(context.Background(), Filter{})
	if all[0].ID != a.ID() || all[0].Messages != 2 || all[0].Cost != 0.25 || all[0].Title != "first in a" {
		t.Fatalf("after append: %+v", all[0])
	}
	// The mode a session is in: ask from its header, then its last change.
	if all[0].Mode != policy.ModeAsk {
		t.Fatalf("mode before any change: %q", all[0].Mode)
	}
	appendOK(t, a, ModeRecord(policy.ModeEdit))
	if all, _, _ = s.List(context.Background(), Filter{}); all[0].Mode != policy.ModeEdit {
		t.Fatalf("mode after a change to edit: %q", all[0].Mode)
	}

	// The index is used when a file did not change: a marked title shows.
	idx, _ := s.readIndex()
	idx.Sessions[b.ID()].Title = "from the index"
	s.writeIndex(context.Background(), idx)
	all2, _, _ := s.List(context.Background(), Filter{})
	if got := findSummary(all2, b.ID()); got.Title != "from the index" {
		t.Fatalf("unchanged file not served from the index: %+v", got)
	}
	// A stale entry (the file's identity no longer matches) is rebuilt.
	idx.Sessions[b.ID()].Size = 1
	idx.Sessions[b.ID()].Offset = 1 << 40
	s.writeIndex(context.Background(), idx)
	all3, _, _ := s.List(context.Background(), Filter{})
	if got := findSummary(all3, b.ID()); got.Title != "only in b" || got.Cost != 0.5 {
		t.Fatalf("stale entry not rebuilt: %+v", got)
	}
	// A missing, a corrupt and a foreign-version index are rebuilt alike;
	// a removed session's entry goes.
	for _, damage := range []func(){
		func() { os.Remove(indexPath) },
		func() { os.WriteFile(indexPath, []byte("{garbage"), 0o600) },
		func() { os.WriteFile(indexPath, []byte(`{"v":99,"sessions":{}}`), 0o600) },
	} {
		damage()
		rebuilt, _, err := s.List(context.Background(), Filter{})
		if err != nil || !reflect.DeepEqual(stripIndexOnly(rebuilt), stripIndexOnly(all)) {
			t.Fatalf("rebuilt listing differs:\n got %+v\nwant %+v", rebuilt, all)
		}
	}
	if !strings.Contains(logs.String(), "rebuilding the session index") {
		t.Error("the rebuild of a corrupt index was not logged")
	}
	s.Remove(context.Background(), b.ID())
	s.List(context.Background(), Filter{})
	idx, _ = s.readIndex()
	if _, ok := idx.Sessions[b.ID()]; ok || len(idx.Sessions) != 2 {
		t.Fatalf("index after remove has %d entries", len(idx.Sessions))
	}
}

func findSummary(list []Summary, id string) Summary {
	for _, s := range list {
		if s.ID == id {
			return s
		}
	}
	return Summary{}
}

// stripIndexOnly compares listings on what the files hold.
func stripIndexOnly(list []Summary) []Summary {
	out := make([]Summary, len(list))
	for i, s := range list {
		s.Updated = s.Updated.UTC()
		s.Created = s.Created.UTC()
		out[i] = s
	}
	return out
}

func TestCheckResume(t *testing.T) {
	thinking := provider.Block{Type: provider.BlockThinking, Thinking: &provider.Thinking{Provider: provider.Anthropic, Text: "hm", Signature: "sig"}}
	plain := []provider.Message{userMsg("hi"), assistantMsg("hello")}
	withThinking := []provider.Message{userMsg("hi"), {Role: provider.Assistant, Content: []provider.Block{thinking, provider.Text("hello")}}}
	for _, tc := range []struct {
		name   string
		saved  provider.Name
		msgs   []provider.Message
		target provider.Name
		refuse bool
	}{
		{"same provider", provider.Anthropic, withThinking, provider.Anthropic, false},
		{"neutral history carries over", provider.Anthropic, plain, provider.OpenAI, false},
		{"anthropic thinking on openai", provider.Anthropic, withThinking, provider.OpenAI, true},
		{"responses vs chat completions", provider.OpenAI, []provider.Message{{Role: provider.Assistant, Content: []provider.Block{{Type: provider.BlockThinking, Thinking: &provider.Thinking{Provider: provider.OpenAI, EncryptedContent: "x"}}}}}, provider.OpenAIChat, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &State{Summary: Summary{ID: "2026-01-01-abcdef", Provider: tc.saved, Model: "some-model"}, Messages: tc.msgs}
			err := CheckResume(st, tc.target)
			if (err != nil) != tc.refuse {
				t.Fatalf("CheckResume = %v, want refuse=%v", err, tc.refuse)
			}
			var pe *ProviderError
			if tc.refuse && (!errors.As(err, &pe) || !strings.Contains(err.Error(), string(tc.saved)) || !strings.Contains(err.Error(), "--model")) {
				t.Fatalf("refusal does not say what to do: %v", err)
			}
		})
	}
}

func TestFailedWriteLeavesThePreviousStateIntact(t *testing.T) {
	s, _ := newTestStore(t)
	sess := create(t, s, "/ws")
	appendOK(t, sess, MessageRecord(userMsg("kept")))
	before, _ := os.ReadFile(sess.Path())
	s.writeAt = func(f *os.File, b []byte, off int64) (int, error) {
		n, _ := f.WriteAt(b[:len(b)/2], off) // half of it reaches the file
		return n, syscall.ENOSPC
	}
	err := sess.Append(context.Background(), MessageRecord(assistantMsg(strings.Repeat("lost ", 100))), MessageRecord(userMsg("also lost")))
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "disk is full") || !strings.Contains(err.Error(), "intact") {
		t.Fatalf("Append on a full disk = %v", err)
	}
	after, _ := os.ReadFile(sess.Path())
	if !bytes.Equal(before, after) {
		t.Fatalf("a failed write changed the file:\n%q\n%q", before, after)
	}
	s.writeAt = (*os.File).WriteAt
	appendOK(t, sess, MessageRecord(assistantMsg("after")))
	st, err := s.Load(context.Background(), sess.ID())
	if err != nil || len(st.Messages) != 2 || len(st.Warnings) != 0 {
		t.Fatalf("after the disk recovered: %v %+v", err, st)
	}
}

// TestAppendLater: the records are in the file when AppendLater returns
// (a kill -9 keeps them), their sync runs after, and the session's next use
// waits for it; a failed sync cuts them back off as a failed write does.
func TestAppendLater(t *testing.T) {
	s, _ := newTestStore(t)
	sess := create(t, s, "/ws")
	appendOK(t, sess, MessageRecord(userMsg("kept")))
	before, _ := os.ReadFile(sess.Path())
	release := make(chan struct{})
	syncing := make(chan struct{})
	var calls atomic.Int32
	s.datasync = func(f *os.File) error {
		if calls.Add(1) > 1 {
			return f.Sync()
		}
		close(syncing)
		<-release
		return syscall.EIO
	}
	synced, err := sess.AppendLater(context.Background(), MessageRecord(assistantMsg("written, then cut")))
	if err != nil {
		t.Fatal(err)
	}
	<-syncing
	if st, err := s.Load(context.Background(), sess.ID()); err != nil || len(st.Messages) != 2 {
		t.Fatalf("while its sync runs, the file has %+v, %v: want the record written", st, err)
	}
	next := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		close(started)
		next <- sess.Append(context.Background(), MessageRecord(userMsg("after")))
	}()
	<-started
	for range 100 {
		runtime.Gosched()
	}
	select {
	case err := <-next:
		t.Fatalf("an append went on while the sync before it ran: %v", err)
	default:
	}
	close(release)
	if err := synced(); !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "intact") {
		t.Fatalf("synced() = %v, want the I/O error and what was kept", err)
	}
	if err := synced(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("synced() again = %v", err)
	}
	if err := <-next; err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(sess.Path())
	if !bytes.HasPrefix(after, before) || bytes.Contains(after, []byte("written, then cut")) || !bytes.Contains(after, []byte(`"after"`)) {
		t.Fatalf("after the failed sync the file is\n%q\nwant the records before it, then the next append", after)
	}
	// A sync that succeeds leaves the records in place.
	synced, err = sess.AppendLater(context.Background(), MessageRecord(assistantMsg("durable")))
	if err != nil || synced() != nil {
		t.Fatal(err, synced())
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := s.Load(context.Background(), sess.ID())
	if err != nil || len(st.Messages) != 3 || st.Messages[2].PlainText() != "durable" {
		t.Fatalf("%v %+v", err, st)
	}
}

// TestCreateLaterSyncsWithTheFirstSave: CreateLater writes the header under
// the session's name without a sync; the first save's sync makes header
// and name durable (its file's data and its directory), later saves sync
// the file alone; Close syncs a session no save did. Create syncs both at
// once, as before.
func TestCreateLaterSyncsWithTheFirstSave(t *testing.T) {
	s, _ := newTestStore(t)
	var datasyncs, dirSyncs atomic.Int32
	s.datasync = func(f *os.File) error { datasyncs.Add(1); return f.Sync() }
	s.syncDir = func(dir string) error {
		if dir != s.Dir() {
			t.Errorf("synced %s, want the sessions directory %s", dir, s.Dir())
		}
		dirSyncs.Add(1)
		return nil
	}
	counts := func(what string, data, dir int32) {
		t.Helper()
		if d, n := datasyncs.Load(), dirSyncs.Load(); d != data || n != dir {
			t.Fatalf("%s: %d data syncs and %d directory syncs, want %d and %d", what, d, n, data, dir)
		}
	}
	h := Header{Workspace: "/ws", Provider: provider.Anthropic, Model: "m"}
	sess, err := s.CreateLater(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	counts("CreateLater", 0, 0)
	if st, err := s.Load(context.Background(), sess.ID()); err != nil || st.Header.Workspace != "/ws" {
		t.Fatalf("before any sync the session must load under its name (a kill -9 keeps it): %+v, %v", st, err)
	}
	synced, err := sess.AppendLater(context.Background(), MessageRecord(userMsg("first")))
	if err != nil || synced() != nil {
		t.Fatal(err, synced())
	}
	counts("the first save", 1, 1)
	appendOK(t, sess, MessageRecord(assistantMsg("second")))
	counts("the second save", 2, 1)
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	counts("Close after saves", 2, 1)

	// Never saved: Close makes it durable.
	idle, err := s.CreateLater(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	counts("a second CreateLater", 2, 1)
	if err := idle.Close(); err != nil {
		t.Fatal(err)
	}
	counts("Close of a session never saved", 3, 2)

	// Create: durable when it returns; its first save syncs the file only.
	now, err := s.Create(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	counts("Create", 4, 3)
	appendOK(t, now, MessageRecord(userMsg("x")))
	counts("Create's first save", 5, 3)
	now.Close()

	// A directory sync that fails is reported, and tried again at the next
	// save; the records stay.
	s.syncDir = func(string) error { dirSyncs.Add(1); return syscall.EIO }
	failing, err := s.CreateLater(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	if err := failing.Append(context.Background(), MessageRecord(userMsg("kept"))); !errors.Is(err, syscall.EIO) {
		t.Fatalf("a failed directory sync: %v, want the I/O error", err)
	}
	s.syncDir = func(string) error { dirSyncs.Add(1); return nil }
	appendOK(t, failing, MessageRecord(assistantMsg("after")))
	before := dirSyncs.Load()
	appendOK(t, failing, MessageRecord(userMsg("again")))
	if dirSyncs.Load() != before {
		t.Fatal("the directory was synced again after a sync that succeeded")
	}
	failing.Close()
	st, err := s.Load(context.Background(), failing.ID())
	if err != nil || len(st.Messages) != 3 {
		t.Fatalf("%v %+v", err, st)
	}
}

// TestResolveShortID (new user, 2026-12-02): the six digits `brig -p`
// prints at the end name the session for show, rm, undo and --resume; a
// whole id is kept as it is; digits two sessions share, or none has, are
// refused with what to do.
func TestResolveShortID(t *testing.T) {
	s := NewStore(t.TempDir())
	dir := s.Dir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"2026-12-01-ab12cd", "2026-12-02-ab12cd", "2026-12-03-0f0f0f"} {
		if err := os.WriteFile(filepath.Join(dir, id+fileExt), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.Resolve("0f0f0f"); err != nil || got != "2026-12-03-0f0f0f" {
		t.Fatalf("Resolve(0f0f0f) = %q, %v", got, err)
	}
	if got, err := s.Resolve("2026-12-01-ab12cd"); err != nil || got != "2026-12-01-ab12cd" {
		t.Fatalf("a whole id: %q, %v", got, err)
	}
	for in, want := range map[string]string{
		"ab12cd":       "2 sessions end in \"ab12cd\": 2026-12-01-ab12cd, 2026-12-02-ab12cd; give the whole id",
		"123456":       "no saved session ends in \"123456\"",
		"../x":         "invalid session id",
		"2026-12-03-0": "invalid session id",
	} {
		if _, err := s.Resolve(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Resolve(%q): %v, want %q", in, err, want)
		}
	}
}

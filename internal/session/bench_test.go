package session

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brig/agent/provider"
	"brig/internal/fsutil"
)

// benchMessage is a typical saved turn: about a kilobyte of text.
func benchMessage(i int) provider.Message {
	role := provider.User
	if i%2 == 1 {
		role = provider.Assistant
	}
	return provider.Message{Role: role, Content: []provider.Block{provider.Text(fmt.Sprintf("message %d: %s", i, strings.Repeat("lorem ipsum ", 85)))}}
}

// BenchmarkSave is the cost of saving one more message in a session that
// already holds n, durably (fsync), with the two strategies the issue asks
// about: append one record (what Session.Append does) against rewriting the
// whole session file atomically (temp, fsync, rename) on every change.
func BenchmarkSave(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10, 1_000, 10_000} {
		b.Run(fmt.Sprintf("append/messages=%d", n), func(b *testing.B) {
			s := NewStore(b.TempDir())
			sess, err := s.Create(ctx, Header{Workspace: "/ws", Provider: provider.Anthropic, Model: "m"})
			if err != nil {
				b.Fatal(err)
			}
			defer sess.Close()
			recs := make([]Record, n)
			for i := range recs {
				recs[i] = MessageRecord(benchMessage(i))
			}
			if err := sess.Append(ctx, recs...); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if err := sess.Append(ctx, MessageRecord(benchMessage(n+i))); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("rewrite/messages=%d", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "session.json")
			st := State{Header: Header{Version: Version, Workspace: "/ws", Provider: provider.Anthropic, Model: "m"}}
			for i := range n {
				st.Messages = append(st.Messages, benchMessage(i))
			}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				st.Messages = append(st.Messages, benchMessage(n+i))
				data, err := json.Marshal(st)
				if err != nil {
					b.Fatal(err)
				}
				if err := fsutil.WriteFileAtomic(path, data, 0o600); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkList lists 1,000 sessions of 20 messages each: "warm" with the
// index in place (every file is still stat'ed), "cold" rebuilding the index
// from every file.
func BenchmarkList(b *testing.B) {
	ctx := context.Background()
	s := NewStore(b.TempDir())
	for i := range 1000 {
		sess, err := s.Create(ctx, Header{Workspace: fmt.Sprintf("/ws/%d", i%10), Provider: provider.Anthropic, Model: "m"})
		if err != nil {
			b.Fatal(err)
		}
		recs := []Record{DisplayRecord(Display{Kind: DisplayUser, Text: "a prompt"})}
		for j := range 20 {
			recs = append(recs, MessageRecord(benchMessage(j)))
		}
		if err := sess.Append(ctx, recs...); err != nil {
			b.Fatal(err)
		}
		sess.Close()
	}
	list := func(b *testing.B) {
		all, problems, err := s.List(ctx, Filter{})
		if err != nil || len(all) != 1000 || len(problems) > 0 {
			b.Fatalf("listed %d, %v, %v", len(all), problems, err)
		}
	}
	b.Run("sessions=1000/warm", func(b *testing.B) {
		list(b)
		for b.Loop() {
			list(b)
		}
	})
	b.Run("sessions=1000/cold", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			os.Remove(filepath.Join(s.Dir(), indexName))
			b.StartTimer()
			list(b)
		}
	})
}

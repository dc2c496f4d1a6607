package supervisor

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"

	"brig/jail"
)

func text(cs []jail.Chunk) string {
	var b strings.Builder
	for _, c := range cs {
		if c.Stderr {
			b.WriteString("E:")
		} else {
			b.WriteString("O:")
		}
		b.Write(c.Data)
		b.WriteString("|")
	}
	return b.String()
}

func TestTranscriptKeepsOrderHeadAndTail(t *testing.T) {
	tr := newTranscript(Keep{Head: 6, Tail: 8})
	tr.write(false, []byte("abc"))
	tr.write(true, []byte("de"))
	tr.write(false, []byte("f\ng"))   // head is full after 'f'
	tr.write(true, []byte("1\n2\n3")) // tail: "\ng" + "1\n2\n3" = 7 bytes
	tr.write(false, []byte("45"))     // tail 9 bytes: the oldest byte ("\n") goes
	got := tr.result()
	if h := text(got.Head); h != "O:abc|E:de|O:f|" {
		t.Errorf("head %q", h)
	}
	if tl := text(got.Tail); tl != "O:g|E:1\n2\n3|O:45|" {
		t.Errorf("tail %q", tl)
	}
	if got.Omitted != 1 || got.OmittedLines != 1 || got.Stdout != 8 || got.Stderr != 7 {
		t.Errorf("counts %+v", got)
	}
	// A write larger than the tail skips its own middle.
	tr = newTranscript(Keep{Head: 2, Tail: 3})
	tr.write(false, []byte("ab\n\n\nxyz"))
	got = tr.result()
	if text(got.Head) != "O:ab|" || text(got.Tail) != "O:xyz|" || got.Omitted != 3 || got.OmittedLines != 3 {
		t.Errorf("one big write: %q %q %+v", text(got.Head), text(got.Tail), got)
	}
	if newTranscript(Keep{}) != nil {
		t.Error("the zero Keep made a transcript")
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// TestTranscriptBesideLiveOutput: a call whose output is streamed live
// still returns it, both streams, whole, in its transcript (the model's
// copy) — and one whose output is not watched too.
func TestTranscriptBesideLiveOutput(t *testing.T) {
	ctx := context.Background()
	sup, err := New(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sup.Close()
	_, spec := workspaceSpec(t, sup)
	inv := jail.Invocation{Argv: []string{"/bin/sh", "-c", "echo MARKER_A1; echo MARKER_ERR >&2; seq 1 20000; exit 3"}}
	all := int64(len("MARKER_A1\n")) + int64(len(seqOutput(20000)))
	for _, live := range []bool{true, false} {
		var w lockedBuffer
		// A head that holds everything: which pipe is read first is not
		// the test's to pin, so both markers must be kept whatever it is.
		stdio := IO{Keep: Keep{Head: 1 << 20, Tail: 100}}
		if live {
			stdio.Stdout, stdio.Stderr = &w, &w
		}
		res, err := sup.Run(ctx, spec, inv, stdio)
		if err != nil || res.ExitCode != 3 {
			t.Fatalf("live=%v: %v %+v", live, err, res)
		}
		tr := res.Transcript
		if h := text(tr.Head); !strings.Contains(h, "O:MARKER_A1\n") || !strings.Contains(h, "E:MARKER_ERR\n|") || !strings.Contains(h, "1\n2\n3\n") || !strings.HasSuffix(h, "19999\n20000\n|") {
			t.Errorf("live=%v: head %q…%q", live, h[:min(len(h), 80)], h[max(0, len(h)-40):])
		}
		if tr.Stdout != all || tr.Stderr != int64(len("MARKER_ERR\n")) || tr.Omitted != 0 || len(tr.Tail) != 0 {
			t.Errorf("live=%v: counts %+v (stdout should be %d)", live, tr, all)
		}
		if live && (!strings.Contains(w.b.String(), "MARKER_A1") || !strings.Contains(w.b.String(), "20000\n")) {
			t.Errorf("the live copy lacks output: %d bytes", w.b.Len())
		}
		if !live && (len(res.Stdout) != 0 || len(res.Stderr) != 0) {
			t.Errorf("an unwatched stream with a transcript was also captured whole (%d bytes)", len(res.Stdout))
		}
	}
	// A small budget keeps the first and the last bytes of a flood.
	var w lockedBuffer
	res, err := sup.Run(ctx, spec, jail.Invocation{Argv: []string{"seq", "1", "20000"}}, IO{Stdout: &w, Stderr: &w, Keep: Keep{Head: 100, Tail: 100}})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Transcript
	if h, tl := text(tr.Head), text(tr.Tail); !strings.HasPrefix(h, "O:1\n2\n3\n") || !strings.HasSuffix(tl, "19999\n20000\n|") || tr.Omitted != int64(len(seqOutput(20000)))-200 {
		t.Errorf("head %q tail %q omitted %d", h, tl, tr.Omitted)
	}
}

func seqOutput(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i) + "\n")
	}
	return b.String()
}

package tools

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"brig/jail"
)

// CommandResult formats a finished command (bash) for the model: what it
// wrote to stdout and stderr in the order it came (each run labelled when
// both streams were used), the middle left out with its size when long,
// how it ended, and what the jail refused (see denialNotes). grant is the
// Spec the command ran under (nil: no notes). asked is the timeout the call
// asked for (its timeout_seconds, or the default) when the configured
// [limits] timeout was shorter and ran in its place; 0 otherwise. stoppedBy
// is who or what interrupted a cancelled command ("" is the user).
func CommandResult(res jail.Result, grant *jail.Spec, asked time.Duration, stoppedBy string) Result {
	t := res.Transcript
	if len(t.Head) == 0 && len(t.Tail) == 0 && (len(res.Stdout) > 0 || len(res.Stderr) > 0) {
		t = transcriptOf(res.Stdout, res.Stderr)
	}
	t = headToALine(tailFromALine(t))
	both := t.Stdout > 0 && t.Stderr > 0
	var b strings.Builder
	w := chunkWriter{b: &b, label: both}
	for _, c := range wholeLines(t.Head) {
		w.write(c)
	}
	if t.Omitted > 0 {
		w.newline()
		fmt.Fprintf(&b, "[… %s (%d lines) left out here; the whole output was %s. To see a part, rerun with `| tail -n 100`, `| head -n 100` or `| grep PATTERN`, or redirect it (`> out.log 2>&1`) and read_file out.log with an offset …]\n",
			humanBytes(t.Omitted), t.OmittedLines, humanBytes(t.Stdout+t.Stderr))
		w.last = -1 // label the tail's first run again
	}
	for _, c := range wholeLines(t.Tail) {
		w.write(c)
	}
	output := b.String()
	if t.Stdout+t.Stderr == 0 {
		b.WriteString(NoOutput + "\n")
	} else {
		w.newline()
	}
	code := res.ExitCode
	// A timeout is said as the limit that fired, not the wall time the
	// kill took on top of it (a fork bomb under load: 1m1s for a 1m limit).
	after := res.Duration.Round(time.Second)
	if grant != nil && grant.Limits.Timeout > 0 {
		after = grant.Limits.Timeout
	}
	r := Result{Meta: Meta{ExitCode: &code, TimedOut: res.TimedOut, Truncated: t.Omitted > 0, Signal: res.Signal, Violations: res.Violations}}
	switch {
	case res.TimedOut && asked > 0:
		fmt.Fprintf(&b, "[timed out after %s: the command and everything it started were killed. The [limits] timeout in brig's configuration capped this call (it asked for %s); a larger timeout_seconds will not help. Run less at once, or tell the user it needs longer]", after, asked)
		r.IsError = true
	case res.TimedOut:
		fmt.Fprintf(&b, "[timed out after %s: the command and everything it started were killed. If it needs longer, set timeout_seconds (at most %d); or run less at once]", after, int(MaxBashTimeout/time.Second))
		r.IsError = true
	case res.Canceled:
		fmt.Fprintf(&b, "[interrupted by %s: the command and everything it started were killed]", cmp.Or(stoppedBy, "the user"))
		r.IsError = true
	case res.Signal != "":
		fmt.Fprintf(&b, "[killed by %s (exit code %d)]", res.Signal, code)
		r.IsError = true
	default:
		fmt.Fprintf(&b, "[exit code %d]", code)
		r.IsError = code != 0
	}
	if res.OwnCopies != "" {
		fmt.Fprintf(&b, "\n[brig: %s]", res.OwnCopies)
	}
	if len(res.Violations) > 0 {
		b.WriteString("\n" + violationsNote("command", res.Violations))
	}
	if res.LimitDetail != "" {
		fmt.Fprintf(&b, "\n[brig's %s limit: %s]", res.Limit, res.LimitDetail)
	}
	if !res.Canceled {
		for _, n := range denialNotes(output, grant) {
			b.WriteString("\n" + n)
			r.Meta.Denials = append(r.Meta.Denials, n)
		}
	}
	r.Text = strings.ToValidUTF8(b.String(), "\uFFFD")
	return r
}

// tailFromALine starts each stream's kept tail at a line: the cut falls
// anywhere, and the end of a line whose start the model cannot see ("2"
// of "196782") reads as output of its own. Of a stream whose tail begins
// mid-line (Transcript.MidLine), the bytes up to and including its first
// newline in the tail join the bytes left out; a stream with no newline
// in its tail (one long line) keeps it. t's chunks are not modified.
func tailFromALine(t jail.Transcript) jail.Transcript {
	for s, mid := range t.MidLine {
		if !mid {
			continue
		}
		stream := s == 1
		end := slices.IndexFunc(t.Tail, func(c jail.Chunk) bool { return c.Stderr == stream && bytes.IndexByte(c.Data, '\n') >= 0 })
		if end < 0 {
			continue
		}
		tail := make([]jail.Chunk, 0, len(t.Tail))
		for i, c := range t.Tail {
			switch {
			case c.Stderr != stream || i > end:
				tail = append(tail, c)
			case i < end:
				t.Omitted += int64(len(c.Data))
			default:
				n := bytes.IndexByte(c.Data, '\n') + 1
				t.Omitted += int64(n)
				t.OmittedLines++
				if n < len(c.Data) {
					tail = append(tail, jail.Chunk{Stderr: c.Stderr, Data: c.Data[n:]})
				}
			}
		}
		t.Tail, t.MidLine[s] = tail, false
	}
	return t
}

// NoOutput is the line a command's result starts with when it wrote
// nothing.
const NoOutput = "(no output)"

// IsCutNote reports whether line is the note CommandResult puts where it
// left a command's output out, for a front end that shows only the end of
// a result to say the output was cut, as the model was told.
func IsCutNote(line string) bool {
	return strings.HasPrefix(line, "[… ") && strings.Contains(line, " left out here")
}

// headToALine ends each stream's kept head at a line, as tailFromALine
// starts its tail at one: a stream the cut stopped mid-line ("line 922\nli")
// has that line's start join the bytes left out, unless its head holds no
// newline at all (one long line, kept). A stream whose head is all it
// wrote is left alone. t's chunks are not modified.
func headToALine(t jail.Transcript) jail.Transcript {
	if t.Omitted == 0 {
		return t
	}
	var wrote [2]int64
	for _, c := range t.Head {
		wrote[streamOf(c)] += int64(len(c.Data))
	}
	head := t.Head
	for s, total := range [2]int64{t.Stdout, t.Stderr} {
		if wrote[s] >= total {
			continue // the stream ended within the head
		}
		last := -1
		for i, c := range head {
			if streamOf(c) == s {
				last = i
			}
		}
		if last < 0 || bytes.HasSuffix(head[last].Data, []byte("\n")) {
			continue
		}
		// Drop the stream's bytes after its last newline in the head.
		cut, drop := -1, int64(0)
		for i := last; i >= 0 && cut < 0; i-- {
			c := head[i]
			if streamOf(c) != s {
				continue
			}
			if n := bytes.LastIndexByte(c.Data, '\n'); n >= 0 {
				cut, drop = i, drop+int64(len(c.Data)-n-1)
				break
			}
			drop += int64(len(c.Data))
		}
		if cut < 0 {
			continue // one long line: kept
		}
		kept := make([]jail.Chunk, 0, len(head))
		for i, c := range head {
			switch {
			case streamOf(c) != s || i < cut:
				kept = append(kept, c)
			case i == cut:
				kept = append(kept, jail.Chunk{Stderr: c.Stderr, Data: c.Data[:bytes.LastIndexByte(c.Data, '\n')+1]})
			}
		}
		head = kept
		t.Omitted += drop
	}
	t.Head = head
	return t
}

// wholeLines keeps each stream's lines whole: a line one stream left open
// (curl writes "curl: (7) Failed to connect" and " to host port 80\n" in
// two writes) is finished by that stream's next bytes before the other
// stream's output is shown, instead of being split by a label. Each line
// keeps the place where its first byte was read, and each stream's own
// order never changes.
func wholeLines(cs []jail.Chunk) []jail.Chunk {
	var out []jail.Chunk
	open := [2]int{-1, -1} // per stream: the chunk in out whose last line is unfinished
	for _, c := range cs {
		s := streamOf(c)
		d := c.Data
		if k := open[s]; k >= 0 {
			end := bytes.IndexByte(d, '\n') + 1 // 0: the line goes on
			if end == 0 {
				end = len(d)
			} else {
				open[s] = -1
			}
			out[k].Data = append(out[k].Data, d[:end]...)
			d = d[end:]
		}
		if len(d) == 0 {
			continue
		}
		out = append(out, jail.Chunk{Stderr: c.Stderr, Data: bytes.Clone(d)})
		if d[len(d)-1] != '\n' {
			open[s] = len(out) - 1
		}
	}
	return out
}

// chunkWriter writes runs of output, labelling each run with its stream
// when both were used.
type chunkWriter struct {
	b     *strings.Builder
	label bool
	last  int // 0 stdout, 1 stderr, -1 none yet
	mid   bool
}

func (w *chunkWriter) write(c jail.Chunk) {
	stream := streamOf(c)
	if w.label && (w.b.Len() == 0 || stream != w.last) {
		w.newline()
		w.b.WriteString([]string{"[stdout]\n", "[stderr]\n"}[stream])
	}
	w.last = stream
	w.b.Write(c.Data)
	w.mid = len(c.Data) > 0 && c.Data[len(c.Data)-1] != '\n'
}

// streamOf is c's stream as an index: 0 stdout, 1 stderr.
func streamOf(c jail.Chunk) int {
	if c.Stderr {
		return 1
	}
	return 0
}

// newline ends a line the output left open.
func (w *chunkWriter) newline() {
	if w.mid {
		w.b.WriteByte('\n')
		w.mid = false
	}
}

// transcriptOf makes a transcript of separately captured streams (stdout
// first), cut to the model's budget.
func transcriptOf(stdout, stderr []byte) jail.Transcript {
	t := jail.Transcript{Stdout: int64(len(stdout)), Stderr: int64(len(stderr))}
	var all []jail.Chunk
	if len(stdout) > 0 {
		all = append(all, jail.Chunk{Data: stdout})
	}
	if len(stderr) > 0 {
		all = append(all, jail.Chunk{Stderr: true, Data: stderr})
	}
	headRoom := CommandHeadBytes
	total := len(stdout) + len(stderr)
	if total <= MaxCommandOutputBytes {
		t.Head = all
		return t
	}
	skip := total - CommandHeadBytes - CommandTailBytes
	for _, c := range all {
		d := c.Data
		if headRoom > 0 {
			n := min(headRoom, len(d))
			t.Head = append(t.Head, jail.Chunk{Stderr: c.Stderr, Data: d[:n]})
			headRoom -= n
			d = d[n:]
		}
		if skip > 0 && len(d) > 0 {
			n := min(skip, len(d))
			t.Omitted += int64(n)
			t.OmittedLines += bytes.Count(d[:n], []byte{'\n'})
			t.MidLine[streamOf(c)] = d[n-1] != '\n'
			skip -= n
			d = d[n:]
		}
		if len(d) > 0 {
			t.Tail = append(t.Tail, jail.Chunk{Stderr: c.Stderr, Data: d})
		}
	}
	return t
}

package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"unicode/utf8"

	"brig/jail"
)

// Result is what a tool call gives back: text for the model, optional
// images, whether it failed, and metadata for the UI (never sent to the
// model). Go tools marshal it as their jail output.
type Result struct {
	Text    string  `json:"text"`
	Images  []Image `json:"images,omitempty"`
	IsError bool    `json:"is_error,omitempty"`
	Meta    Meta    `json:"meta,omitzero"`
}

// Image is one image for the model.
type Image struct {
	MediaType string `json:"media_type"` // image/png, image/jpeg, image/gif, image/webp
	Data      string `json:"data"`       // base64 (standard encoding)
	Width     int    `json:"width"`
	Height    int    `json:"height"`
}

// Meta is what the UI shows about a call beyond the model's text.
type Meta struct {
	Path string `json:"path,omitempty"`
	// read_file: the range shown and whether the model saw the whole file.
	StartLine  int   `json:"start_line,omitempty"`
	Lines      int   `json:"lines,omitempty"`
	TotalLines int   `json:"total_lines,omitempty"`
	Truncated  bool  `json:"truncated,omitempty"`
	Bytes      int64 `json:"bytes,omitempty"`
	// Hash is the content hash of the file after the call (see hashContent).
	Hash string `json:"hash,omitempty"`
	// Edits: the unified diff and line counts.
	Diff          string `json:"diff,omitempty"`
	DiffTruncated bool   `json:"diff_truncated,omitempty"`
	Added         int    `json:"added,omitempty"`
	Removed       int    `json:"removed,omitempty"`
	// Atomic is false when a write fell back to rewriting the file in place
	// (the jail granted the file but not its directory).
	Atomic *bool `json:"atomic,omitempty"`
	// Search and listings.
	Matches int    `json:"matches,omitempty"`
	Engine  string `json:"engine,omitempty"`
	// Commands.
	ExitCode *int `json:"exit_code,omitempty"`
	TimedOut bool `json:"timed_out,omitempty"`
	// web_fetch: the URL fetched, its status and type, and where a
	// redirect pointed (the executor decides that host before following).
	URL         string `json:"url,omitempty"`
	Status      int    `json:"status,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	Redirect    string `json:"redirect,omitempty"`
	// Images: the size before any resize.
	OrigWidth  int `json:"orig_width,omitempty"`
	OrigHeight int `json:"orig_height,omitempty"`
}

// errorf is a model-facing failure.
func errorf(format string, a ...any) Result {
	return Result{Text: capText(fmt.Sprintf(format, a...), MaxErrorTextBytes), IsError: true}
}

// fsError explains a filesystem failure to the model. A refusal by the jail
// reads differently from a missing file, so the model does not retry blindly.
func fsError(op, path string, err error) Result {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errorf("%s %s: no such file or directory", op, path)
	case errors.Is(err, syscall.EROFS):
		return errorf("%s %s: read-only here (a protected path, or a read-only call); the jail refused it", op, path)
	case errors.Is(err, fs.ErrPermission):
		return errorf("%s %s: permission denied; this call was not granted access to that path (the jail refused it)", op, path)
	case errors.Is(err, syscall.EISDIR):
		return errorf("%s %s: is a directory", op, path)
	case errors.Is(err, syscall.ENOTDIR):
		return errorf("%s %s: a component of the path is not a directory", op, path)
	}
	return errorf("%s %s: %v", op, path, err)
}

// CapText cuts s to at most n bytes on a rune boundary, saying so (for
// results built outside this package: MCP).
func CapText(s string, n int) string { return capText(s, n) }

// capText cuts s to at most n bytes on a rune boundary, saying so.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const note = "\n[… output truncated]"
	cut := max(n-len(note), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + note
}

// headTail keeps the beginning and the end of s within n bytes, which is
// what matters in command output (the command, and how it ended).
func headTail(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	head := n / 3
	tail := n - head
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	start := len(s) - tail
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	omitted := start - head
	return fmt.Sprintf("%s\n[… %d bytes omitted …]\n%s", s[:head], omitted, s[start:]), true
}

// FromJail turns what the supervisor reports for a Go tool call into the
// tool's Result. Failures the model should hear about (the tool reported
// an error, timed out, was cancelled, crashed) become error Results; an error
// is returned only when the call could not be run at all.
func FromJail(res jail.Result, runErr error) (Result, error) {
	var se *jail.StageError
	switch {
	case res.TimedOut:
		return errorf("the tool call timed out after %s", res.Duration.Round(1e6)), nil
	case res.Canceled:
		return errorf("the tool call was cancelled"), nil
	case errors.As(runErr, &se) && se.Stage == jail.StageTool:
		return errorf("the tool failed: %s", se.Msg), nil
	case runErr != nil:
		return Result{}, fmt.Errorf("run the tool in the jail: %w", runErr)
	}
	if len(res.Output) == 0 {
		msg := fmt.Sprintf("the tool exited with status %d without a result", res.ExitCode)
		if tail := strings.TrimSpace(string(res.Stderr)); tail != "" {
			s, _ := headTail(tail, 1024)
			msg += ": " + s
		}
		return errorf("%s", msg), nil
	}
	var r Result
	if err := json.Unmarshal(res.Output, &r); err != nil {
		return Result{}, fmt.Errorf("decode the tool's result: %w", err)
	}
	return r, nil
}

// CommandResult formats a finished command (bash) for the model: its
// output with the middle cut when long, and how it ended.
func CommandResult(res jail.Result) Result {
	var b strings.Builder
	out := string(res.Stdout)
	if len(res.Stderr) > 0 {
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		out += string(res.Stderr)
	}
	shown, cut := headTail(out, MaxCommandOutputBytes)
	b.WriteString(shown)
	if out != "" && !strings.HasSuffix(shown, "\n") {
		b.WriteByte('\n')
	}
	if res.StdoutTruncated || res.StderrTruncated {
		b.WriteString("[the command produced more output than the jail keeps; the rest was dropped]\n")
	}
	code := res.ExitCode
	r := Result{Meta: Meta{ExitCode: &code, TimedOut: res.TimedOut, Truncated: cut || res.StdoutTruncated || res.StderrTruncated}}
	switch {
	case res.TimedOut:
		fmt.Fprintf(&b, "[timed out after %s; the command and everything it started were killed]", res.Duration.Round(1e9))
		r.IsError = true
	case res.Canceled:
		b.WriteString("[cancelled by the user]")
		r.IsError = true
	case res.Signal != "":
		fmt.Fprintf(&b, "[killed by %s, exit code %d]", res.Signal, code)
		r.IsError = true
	default:
		fmt.Fprintf(&b, "[exit code %d]", code)
		r.IsError = code != 0
	}
	if len(res.Violations) > 0 {
		fmt.Fprintf(&b, "\n[the command tried to create protected paths, which were removed: %s]", strings.Join(res.Violations, ", "))
	}
	if res.LimitDetail != "" {
		fmt.Fprintf(&b, "\n[brig's %s limit: %s]", res.Limit, res.LimitDetail)
	}
	r.Text = b.String()
	return r
}

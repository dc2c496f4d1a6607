package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"brig/jail"
	"brig/tools/textfile"
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
	ExitCode *int   `json:"exit_code,omitempty"`
	TimedOut bool   `json:"timed_out,omitempty"`
	Signal   string `json:"signal,omitempty"`
	// What the jail refused the command, as the notes added to its
	// result say, and the protected paths it created or changed (undone
	// after the call): for the audit log.
	Denials    []string `json:"denials,omitempty"`
	Violations []string `json:"violations,omitempty"`
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

// fsError explains a filesystem failure to the model (textfile.Explain).
func fsError(op, path string, err error) Result {
	return errorf("%s", textfile.Explain(op, path, err))
}

// CapText cuts s to at most n bytes on a rune boundary, saying so (for
// results built outside this package: MCP).
func CapText(s string, n int) string { return textfile.CapText(s, n) }

// capText cuts s to at most n bytes on a rune boundary, saying so.
func capText(s string, n int) string { return textfile.CapText(s, n) }

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
	if r.IsError && strings.ContainsRune(r.Text, utf8.RuneError) && reMissing().MatchString(r.Text) {
		// The name came from a listing, where bytes that are not UTF-8
		// are shown as U+FFFD: no file has that name.
		r.Text = strings.TrimRight(r.Text, "\n") + "\n[brig: the name holds � (U+FFFD), which listings show in place of bytes that are not UTF-8; the file tools cannot name such a file. Use bash (cat, or mv with a glob such as caf?.txt to give it a UTF-8 name)]"
	}
	if len(res.Violations) > 0 {
		// What the sweep after the call took out (a planted git state
		// written with write_file): the model must not believe it stands.
		r.Meta.Violations = res.Violations
		r.Text = strings.TrimRight(r.Text, "\n") + "\n" + violationsNote("call", res.Violations)
	}
	return r, nil
}

// violationsNote tells the model that brig undid what a call (of kind
// what: "command", "call") left in protected places, and which paths.
func violationsNote(what string, paths []string) string {
	return fmt.Sprintf("[the %s created or changed protected paths; brig undid it: %s]", what, strings.Join(paths, ", "))
}

// plural is "1 file", "2 files".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

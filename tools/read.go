package tools

import (
	"context"
	"errors"
	"fmt"

	"brig/policy/toolcall"
	"brig/tools/textfile"
)

// lineCutMarker ends a line read_file cut short. edit_file refuses an
// old_string containing it: that text is not in the file.
const lineCutMarker = textfile.LineCutMarker

type readArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

func (a *readArgs) validate() error {
	if a.Path == "" {
		return errors.New("path is required")
	}
	if a.Offset < 0 || a.Limit < 0 {
		return errors.New("offset and limit must not be negative")
	}
	return nil
}

func (a *readArgs) pathFields() []*string { return []*string{&a.Path} }

func (a *readArgs) openPath() string { return a.Path }

// readFileDef is read_file. Its invocation names the file (Open:
// readArgs.openPath), so an init that serves calls can run it on a file
// its restricted clone opened (jail/direct.go) instead of starting a
// worker.
func readFileDef() Definition {
	return define(ReadFile, toolcall.EffectRead,
		`Read a text file. Lines come numbered like cat -n ("number<TAB>text"); the numbers are not part of the file. `+
			fmt.Sprintf("Returns at most %d lines and %d KiB per call; use offset (1-based line) and limit to page through larger files. ", MaxReadLines, MaxReadBytes>>10)+
			"The last line gives the file's hash: pass it as expected_hash to edit_file or multi_edit to have them refuse if the file changed since. Binary files are refused (use view_image for images).",
		`{"type":"object","properties":{`+
			`"path":{"type":"string","description":"File to read, relative to the workspace or absolute"},`+
			`"offset":{"type":"integer","minimum":1,"description":"First line to return (1-based); default 1"},`+
			`"limit":{"type":"integer","minimum":1,"description":"Number of lines to return; default and maximum `+fmt.Sprint(MaxReadLines)+`"}`+
			`},"required":["path"],"additionalProperties":false}`,
		func(a readArgs) toolcall.Call { return toolcall.Call{Read: []string{a.Path}} },
		runReadFile)
}

// runReadFile is read_file in the jail worker; a serving init runs the
// same code (textfile.Run) on a file its restricted clone opened.
func runReadFile(_ context.Context, a readArgs) Result {
	r := textfile.Read(textfile.OpenNonBlocking, textfile.Args{Path: a.Path, Offset: a.Offset, Limit: a.Limit})
	m := r.Meta
	return Result{Text: r.Text, IsError: r.IsError, Meta: Meta{
		Path: m.Path, StartLine: m.StartLine, Lines: m.Lines, TotalLines: m.TotalLines,
		Truncated: m.Truncated, Bytes: m.Bytes, Hash: m.Hash,
	}}
}

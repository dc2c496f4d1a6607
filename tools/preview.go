package tools

import (
	"encoding/json"
	"fmt"
)

// Preview is what a file-changing call would do to a file, computed before
// it runs (for an approval prompt) from its arguments and the file's
// current content, with the same rules the tool applies when it runs.
type Preview struct {
	Diff           string // unified, with hunk headers that give real line numbers
	DiffTruncated  bool
	Added, Removed int
}

// PreviewEdits applies an edit_file or multi_edit call's edits to current
// as the tool would (exact match, uniqueness, CRLF kept) and returns the
// diff. An error says why the call would fail as it stands.
func PreviewEdits(name Name, args json.RawMessage, current []byte) (Preview, error) {
	var path string
	var edits []edit
	switch name {
	case EditFile:
		a, err := decodeArgs[editArgs](args)
		if err != nil {
			return Preview{}, err
		}
		path, edits = a.Path, []edit{a.edit}
	case MultiEdit:
		a, err := decodeArgs[multiEditArgs](args)
		if err != nil {
			return Preview{}, err
		}
		path, edits = a.Path, a.Edits
	default:
		return Preview{}, fmt.Errorf("%s does not edit a file", name)
	}
	content := string(current)
	crlf := usesCRLF(current)
	for i, e := range edits {
		if crlf {
			e.OldString, e.NewString = toCRLF(e.OldString), toCRLF(e.NewString)
		}
		next, _, err := applyEdit(content, e)
		if err != nil {
			if len(edits) > 1 {
				return Preview{}, fmt.Errorf("edit %d of %d: %w", i+1, len(edits), err)
			}
			return Preview{}, err
		}
		content = next
	}
	if content == string(current) {
		return Preview{}, fmt.Errorf("the edits leave the file unchanged")
	}
	return previewDiff(path, string(current), content), nil
}

// PreviewWrite returns the diff of a write_file call replacing current.
func PreviewWrite(args json.RawMessage, current []byte) (Preview, error) {
	a, err := decodeArgs[writeArgs](args)
	if err != nil {
		return Preview{}, err
	}
	return previewDiff(a.Path, string(current), a.Content), nil
}

func previewDiff(path, before, after string) Preview {
	d := fileDiff(path, before, after)
	return Preview{Diff: d.meta, DiffTruncated: d.metaCut, Added: d.added, Removed: d.removed}
}

package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"brig/internal/lazyre"
	"brig/policy/toolcall"
	"brig/tools/textfile"
)

// How edits stay honest when every call is a fresh process:
//
//   - edit_file and multi_edit always read the whole file from disk
//     themselves; the model's view of it is never the source of an edit.
//     old_string must occur in that real content exactly (once, unless
//     replace_all), so text read_file cut or never showed cannot be matched,
//     and an old_string carrying read_file's cut marker is refused outright.
//   - read_file reports a content hash; passing it back as expected_hash
//     makes the edit refuse if the file changed since it was read.
//   - Between reading and renaming, the file is read again and compared, so
//     a change made during the edit is not overwritten.

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func (a *writeArgs) validate() error {
	if a.Path == "" {
		return errors.New("path is required")
	}
	if len(a.Content) > MaxWriteBytes {
		return fmt.Errorf("content is %d bytes, more than the %d bytes write_file takes", len(a.Content), MaxWriteBytes)
	}
	return nil
}

func (a *writeArgs) pathFields() []*string { return []*string{&a.Path} }

func writeFileDef() Definition {
	return define(WriteFile, toolcall.EffectWrite,
		"Create a file or replace its whole content, atomically. Missing parent directories are created; an existing file keeps its permissions. Prefer edit_file for changes to an existing file.",
		`{"type":"object","properties":{`+
			`"path":{"type":"string","description":"File to write, relative to the workspace or absolute"},`+
			`"content":{"type":"string","description":"The complete new content"}`+
			`},"required":["path","content"],"additionalProperties":false}`,
		func(a writeArgs) toolcall.Call { return toolcall.Call{Write: []string{a.Path}} },
		runWriteFile)
}

func runWriteFile(_ context.Context, a writeArgs) Result {
	var old []byte
	existed := false
	if fi, err := os.Stat(a.Path); err == nil {
		if fi.IsDir() {
			return errorf("write %s: is a directory", a.Path)
		}
		existed = true
		if fi.Size() <= maxDiffInputBytes {
			old, _ = os.ReadFile(a.Path) // for the diff only; unreadable is fine
		}
	} else if dir := filepath.Dir(a.Path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fsError("create the parent directory of", a.Path, err)
		}
	}
	atomic, err := writeAtomic(a.Path, []byte(a.Content), 0o644)
	if err != nil {
		return fsError("write", a.Path, err)
	}
	res := Result{Meta: Meta{Path: a.Path, Bytes: int64(len(a.Content)), Lines: textfile.CountLines([]byte(a.Content)), Hash: textfile.HashContent([]byte(a.Content)), Atomic: &atomic}}
	verb := "Created"
	if existed {
		verb = "Overwrote"
		if len(old) > 0 || len(a.Content) == 0 {
			d := fileDiff(a.Path, string(old), a.Content)
			res.Meta.Diff, res.Meta.DiffTruncated, res.Meta.Added, res.Meta.Removed = d.meta, d.metaCut, d.added, d.removed
		}
	}
	res.Text = fmt.Sprintf("%s %s (%s, %s)", verb, a.Path, plural(len(a.Content), "byte", "bytes"), plural(res.Meta.Lines, "line", "lines"))
	if existed && res.Meta.Diff != "" {
		res.Text += fmt.Sprintf("; against the old content: +%d -%d lines", res.Meta.Added, res.Meta.Removed)
	} else if existed && len(old) > 0 {
		res.Text += "; the content is unchanged"
	}
	res.Text += fmt.Sprintf("\n[hash %s]", res.Meta.Hash)
	return res
}

// edit is one replacement.
type edit struct {
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

func (e edit) validate() error {
	switch {
	case e.OldString == "":
		return errors.New("old_string must not be empty (use write_file to create a file)")
	case e.OldString == e.NewString:
		return errors.New("old_string and new_string are the same; nothing would change")
	case strings.Contains(e.OldString, lineCutMarker):
		return errors.New("old_string contains read_file's line-cut marker; that text is not in the file. Read the lines again with a smaller range, or match a shorter piece of the line")
	}
	return nil
}

type editArgs struct {
	Path string `json:"path"`
	edit
	ExpectedHash string `json:"expected_hash,omitempty"`
}

func (a *editArgs) validate() error {
	if a.Path == "" {
		return errors.New("path is required")
	}
	return a.edit.validate()
}

func (a *editArgs) pathFields() []*string { return []*string{&a.Path} }

type multiEditArgs struct {
	Path         string `json:"path"`
	Edits        []edit `json:"edits"`
	ExpectedHash string `json:"expected_hash,omitempty"`
}

func (a *multiEditArgs) validate() error {
	if a.Path == "" {
		return errors.New("path is required")
	}
	if len(a.Edits) == 0 {
		return errors.New("edits must hold at least one edit")
	}
	if len(a.Edits) > MaxMultiEdits {
		return fmt.Errorf("at most %d edits per call", MaxMultiEdits)
	}
	for i, e := range a.Edits {
		if err := e.validate(); err != nil {
			return fmt.Errorf("edit %d: %w", i+1, err)
		}
	}
	return nil
}

func (a *multiEditArgs) pathFields() []*string { return []*string{&a.Path} }

const editProps = `"old_string":{"type":"string","description":"Exact text to replace, including whitespace and indentation (no line-number prefixes)"},` +
	`"new_string":{"type":"string","description":"Replacement text"},` +
	`"replace_all":{"type":"boolean","description":"Replace every occurrence; otherwise old_string must occur exactly once"}`

const hashProp = `"expected_hash":{"type":"string","description":"The [hash …] read_file reported; the edit is refused if the file changed since"}`

func editFileDef() Definition {
	return define(EditFile, toolcall.EffectWrite,
		"Replace text in a file. old_string must match the file exactly and occur exactly once, unless replace_all is set; include enough surrounding lines to make it unique. Line endings (CRLF) are kept. Returns a diff of the change and the new hash.",
		`{"type":"object","properties":{`+
			`"path":{"type":"string","description":"File to edit"},`+editProps+`,`+hashProp+
			`},"required":["path","old_string","new_string"],"additionalProperties":false}`,
		func(a editArgs) toolcall.Call { return toolcall.Call{Read: []string{a.Path}, Write: []string{a.Path}} },
		func(ctx context.Context, a editArgs) Result {
			return runEdits(ctx, a.Path, []edit{a.edit}, a.ExpectedHash)
		})
}

func multiEditDef() Definition {
	return define(MultiEdit, toolcall.EffectWrite,
		"Apply several edits to one file in order, all or nothing: each edit works on the result of the previous ones and follows edit_file's rules; if any fails, the file is left unchanged.",
		`{"type":"object","properties":{`+
			`"path":{"type":"string","description":"File to edit"},`+
			`"edits":{"type":"array","minItems":1,"maxItems":`+fmt.Sprint(MaxMultiEdits)+`,"items":{"type":"object","properties":{`+editProps+`},"required":["old_string","new_string"],"additionalProperties":false}},`+
			hashProp+
			`},"required":["path","edits"],"additionalProperties":false}`,
		func(a multiEditArgs) toolcall.Call {
			return toolcall.Call{Read: []string{a.Path}, Write: []string{a.Path}}
		},
		func(ctx context.Context, a multiEditArgs) Result {
			return runEdits(ctx, a.Path, a.Edits, a.ExpectedHash)
		})
}

// runEdits applies edits in order to the file at path and writes the result
// once, or nothing.
func runEdits(_ context.Context, path string, edits []edit, expectedHash string) Result {
	orig, _, refused := readForEdit("edit", path)
	if refused != nil {
		return *refused
	}
	hash := textfile.HashContent(orig)
	if expectedHash != "" && !strings.EqualFold(strings.TrimSpace(expectedHash), hash) {
		return errorf("edit %s: the file changed since it was read (hash %s, expected %s); read it again before editing", path, hash, expectedHash)
	}
	content := string(orig)
	crlf := usesCRLF(orig)
	replacements := 0
	for i, e := range edits {
		if crlf {
			e.OldString, e.NewString = toCRLF(e.OldString), toCRLF(e.NewString)
		}
		next, n, err := applyEdit(content, e)
		if err != nil {
			if len(edits) > 1 {
				return errorf("edit %s: edit %d of %d: %v; nothing was written", path, i+1, len(edits), err)
			}
			return errorf("edit %s: %v", path, err)
		}
		content = next
		replacements += n
	}
	if content == string(orig) {
		return errorf("edit %s: the edits leave the file unchanged", path)
	}
	// Refuse to overwrite a change made while this call ran.
	now, err := os.ReadFile(path)
	if err != nil {
		return fsError("edit", path, err)
	}
	if !bytes.Equal(now, orig) {
		return errorf("edit %s: the file changed on disk during the edit; read it again", path)
	}
	atomic, err := writeAtomic(path, []byte(content), 0o644)
	if err != nil {
		return fsError("write", path, err)
	}
	d := fileDiff(path, string(orig), content)
	newHash := textfile.HashContent([]byte(content))
	res := Result{Meta: Meta{
		Path: path, Hash: newHash, Bytes: int64(len(content)), Atomic: &atomic,
		Diff: d.meta, DiffTruncated: d.metaCut, Added: d.added, Removed: d.removed,
	}}
	res.Text = fmt.Sprintf("Edited %s: %s (+%d -%d lines)\n%s[hash %s]", path, plural(replacements, "replacement", "replacements"), d.added, d.removed, d.model, newHash)
	return res
}

// applyEdit replaces old_string in content: exactly one occurrence, or all
// of them with replace_all.
func applyEdit(content string, e edit) (string, int, error) {
	n := strings.Count(content, e.OldString)
	switch {
	case n == 0:
		return "", 0, errors.New(noMatchHelp(content, e.OldString))
	case n > 1 && !e.ReplaceAll:
		return "", 0, fmt.Errorf("old_string occurs %d times (lines %s); include more surrounding text to make it unique, or set replace_all", n, matchLines(content, e.OldString, 10))
	}
	return strings.ReplaceAll(content, e.OldString, e.NewString), n, nil
}

var lineNumberPrefix = lazyre.New(`(?m)^ *\d+\t`)

// noMatchHelp says why old_string was not found, as far as it can tell.
func noMatchHelp(content, old string) string {
	msg := "old_string was not found in the file"
	switch {
	case lineNumberPrefix().MatchString(old) && strings.Count(old, "\n")+1 == len(lineNumberPrefix().FindAllString(old, -1)):
		msg += "; it seems to include read_file's line-number prefixes, which are not part of the file"
	case strings.Contains(content, strings.TrimSpace(old)):
		msg += "; it matches when leading and trailing whitespace is ignored, so check indentation and blank lines"
	default:
		msg += "; read the file again and copy the text exactly"
	}
	return msg
}

// matchLines lists the line numbers where sub starts, at most limit of them.
func matchLines(content, sub string, limit int) string {
	var nums []string
	off := 0
	for len(nums) < limit {
		i := strings.Index(content[off:], sub)
		if i < 0 {
			break
		}
		nums = append(nums, fmt.Sprint(strings.Count(content[:off+i], "\n")+1))
		off += i + len(sub)
	}
	if strings.Count(content, sub) > limit {
		nums = append(nums, "…")
	}
	return strings.Join(nums, ", ")
}

// usesCRLF reports whether every line ending in b is CRLF.
func usesCRLF(b []byte) bool {
	crlf := bytes.Count(b, []byte("\r\n"))
	return crlf > 0 && crlf == bytes.Count(b, []byte("\n"))
}

// toCRLF gives every line ending of s as CRLF.
func toCRLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

// diffSummary is a unified diff cut for the model and for the UI.
type diffSummary struct {
	model          string // with a trailing newline, or empty
	meta           string
	metaCut        bool
	added, removed int
}

// fileDiff diffs two versions of a file by lines. The common head and tail
// are skipped before diffing, so a small change in a large file is cheap.
func fileDiff(path, before, after string) diffSummary {
	if len(before) > maxDiffInputBytes || len(after) > maxDiffInputBytes {
		pre, suf := commonLines(before, after)
		before, after = before[pre:len(before)-suf], after[pre:len(after)-suf]
		if len(before) > maxDiffInputBytes || len(after) > maxDiffInputBytes {
			return diffSummary{model: "(the change is too large to show as a diff)\n"}
		}
		// Hunk line numbers are then relative to the first changed line.
	}
	edits := udiff.Lines(before, after)
	u, err := udiff.ToUnifiedDiff("a/"+path, "b/"+path, before, edits, DiffContextLines)
	if err != nil {
		return diffSummary{model: fmt.Sprintf("(no diff: %v)\n", err)}
	}
	var s diffSummary
	for _, h := range u.Hunks {
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Insert:
				s.added++
			case udiff.Delete:
				s.removed++
			}
		}
	}
	text := u.String()
	s.model = capText(text, MaxDiffModelBytes)
	s.meta = capText(text, MaxDiffMetaBytes)
	s.metaCut = len(text) > MaxDiffMetaBytes
	if s.model != "" && !strings.HasSuffix(s.model, "\n") {
		s.model += "\n"
	}
	return s
}

// commonLines returns the byte lengths of the common prefix and suffix of a
// and b that end and start on line boundaries and do not overlap.
func commonLines(a, b string) (int, int) {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	pre = strings.LastIndexByte(a[:pre], '\n') + 1
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	if i := strings.IndexByte(a[len(a)-suf:], '\n'); i >= 0 {
		suf -= i + 1
	} else {
		suf = 0
	}
	return pre, suf
}

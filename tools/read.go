package tools

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"brig/policy/toolcall"
)

// lineCutMarker ends a line read_file cut short. edit_file refuses an
// old_string containing it: that text is not in the file.
const lineCutMarker = "[brig: line truncated"

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

func runReadFile(_ context.Context, a readArgs) Result {
	f, err := os.Open(a.Path)
	if err != nil {
		return fsError("read", a.Path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fsError("read", a.Path, err)
	}
	if fi.IsDir() {
		return errorf("read %s: is a directory; use list_directory or glob", a.Path)
	}
	head, err := readHead(f, binarySniffBytes)
	if err != nil {
		return fsError("read", a.Path, err)
	}
	if looksBinary(head) {
		kind := binaryKind(head)
		hint := ""
		if strings.HasPrefix(kind, "image/") {
			hint = "; use view_image to look at it"
		}
		return errorf("read %s: binary file (%d bytes, looks like %s)%s", a.Path, fi.Size(), kind, hint)
	}

	start := max(a.Offset, 1)
	limit := a.Limit
	if limit == 0 || limit > MaxReadLines {
		limit = MaxReadLines
	}
	// Small enough files are read to the end for the hash and line count.
	whole := fi.Size() <= MaxHashFileBytes
	h := sha256.New()
	var src io.Reader = io.MultiReader(bytes.NewReader(head), f)
	if whole {
		src = io.TeeReader(src, h)
	}
	br := bufio.NewReaderSize(src, 64<<10)

	var out strings.Builder
	lineNo, shown, cutLines := 0, 0, 0
	stopped := false // the window ended before the file did
	for {
		line, rest, err := readLine(br, MaxLineChars)
		if err != nil && !errors.Is(err, io.EOF) {
			return fsError("read", a.Path, err)
		}
		if line == nil && errors.Is(err, io.EOF) {
			break
		}
		lineNo++
		if lineNo >= start && !stopped {
			text := strings.TrimSuffix(strings.TrimSuffix(string(line), "\n"), "\r")
			if rest > 0 {
				text += fmt.Sprintf("… %s, %d more bytes]", lineCutMarker, rest)
				cutLines++
			}
			entry := fmt.Sprintf("%6d\t%s\n", lineNo, text)
			if shown >= limit || out.Len()+len(entry) > MaxReadBytes {
				stopped = true
				if !whole {
					break
				}
				// Count the rest of the file (this line is counted already).
				rem, cerr := io.ReadAll(br)
				if cerr != nil {
					return fsError("read", a.Path, cerr)
				}
				lineNo += countLines(rem)
				break
			}
			out.WriteString(entry)
			shown++
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}

	res := Result{Meta: Meta{Path: a.Path, StartLine: start, Lines: shown, Bytes: fi.Size()}}
	if whole {
		res.Meta.TotalLines = lineNo
		res.Meta.Hash = hex.EncodeToString(h.Sum(nil)[:8])
	}
	switch {
	case fi.Size() == 0:
		out.WriteString("(empty file)\n")
	case shown == 0 && start > 1:
		return errorf("read %s: offset %d is past the end of the file (%d lines)", a.Path, start, lineNo)
	}
	last := start + shown - 1
	if stopped {
		if whole {
			fmt.Fprintf(&out, "[lines %d-%d of %d; continue with offset=%d]\n", start, last, lineNo, last+1)
		} else {
			fmt.Fprintf(&out, "[lines %d-%d of a %d-byte file; continue with offset=%d]\n", start, last, fi.Size(), last+1)
		}
	} else if start > 1 {
		fmt.Fprintf(&out, "[lines %d-%d of %d]\n", start, last, lineNo)
	}
	if cutLines > 0 {
		fmt.Fprintf(&out, "[%d long lines were cut at %d bytes; text after a cut is not shown and cannot be used in old_string]\n", cutLines, MaxLineChars)
	}
	res.Meta.Truncated = stopped || cutLines > 0 || start > 1
	if whole {
		fmt.Fprintf(&out, "[hash %s]", res.Meta.Hash)
	}
	res.Text = strings.TrimSuffix(out.String(), "\n")
	return res
}

// readLine returns the next line (with its newline) cut to at most max bytes
// on a rune boundary, and how many bytes of it were dropped. At the end of
// the input it returns a nil line and io.EOF.
func readLine(br *bufio.Reader, max int) ([]byte, int, error) {
	var line []byte
	dropped := 0
	for {
		chunk, err := br.ReadSlice('\n')
		room := max - len(line)
		if room > 0 {
			take := min(room, len(chunk))
			line = append(line, chunk[:take]...)
			dropped += len(chunk) - take
		} else {
			dropped += len(chunk)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if dropped > 0 {
			// The newline went with the dropped bytes; it is not text.
			if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
				dropped--
			}
			// Do not end on half a character.
			k := trimPartialRune(line)
			dropped += len(line) - k
			line = line[:k]
		}
		if err != nil {
			if len(line) == 0 && dropped == 0 {
				return nil, 0, err
			}
			return line, dropped, err
		}
		return line, dropped, nil
	}
}

// trimPartialRune returns the length of b without an incomplete UTF-8
// sequence at its end.
func trimPartialRune(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

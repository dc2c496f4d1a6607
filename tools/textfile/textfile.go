// Package textfile owns how brig shows a file to the model as text:
// read_file's whole logic (line numbers, windows, cut lines, binary
// detection, the content hash) and the small helpers the other file tools
// share with it. It imports the standard library alone, so that the
// jail's init program — which serves a read_file call itself, on a file
// its restricted clone opened (jail/direct.go) — can link it without the
// rest of the Go tools.
//
// It never opens a path by itself: Read is handed the function that does
// (os.Open in the jail worker, a clone under every layer in init), so what
// it can reach is what the kernel let that function reach. It must not
// decide policy, spawn processes or know about the supervisor.
package textfile

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"
)

// errNotRegular is a FIFO's, a socket's or a device's refusal, in the
// words of jail.ErrNotRegular (this package imports nothing of brig's).
var errNotRegular = errors.New("not a regular file (a FIFO, a socket or a device)")

// OpenNonBlocking opens name for reading without waiting: a FIFO's open
// would wait for a writer. Read refuses anything but a regular file or a
// directory before reading.
func OpenNonBlocking(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}

// Name is the tool this package implements.
const Name = "read_file"

// read_file's caps: what the model can receive from one call.
const (
	MaxLines      = 2000      // lines returned by one call
	MaxBytes      = 100 << 10 // bytes of numbered text returned by one call
	MaxLineChars  = 2000      // a longer line is cut, with a marker
	MaxHashBytes  = 64 << 20  // files up to this size get a content hash and a line count
	SniffBytes    = 8 << 10   // bytes inspected for a NUL to call a file binary
	MaxErrorBytes = 4 << 10   // the text of a failure
)

// LineCutMarker ends a line read_file cut short. edit_file refuses an
// old_string containing it: that text is not in the file.
const LineCutMarker = "[brig: line truncated"

// Args are read_file's arguments.
type Args struct {
	Path   string `json:"path"`
	Offset int    `json:"offset,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

// Result is read_file's result: the fields of the tools package's Result
// it sets, under the same JSON names, so either decodes the other.
type Result struct {
	Text    string `json:"text"`
	IsError bool   `json:"is_error,omitempty"`
	Meta    Meta   `json:"meta,omitzero"`
}

// Meta is what the UI shows about a read beyond the model's text.
type Meta struct {
	Path       string `json:"path,omitempty"`
	StartLine  int    `json:"start_line,omitempty"`
	Lines      int    `json:"lines,omitempty"`
	TotalLines int    `json:"total_lines,omitempty"`
	Truncated  bool   `json:"truncated,omitempty"`
	Bytes      int64  `json:"bytes,omitempty"`
	Hash       string `json:"hash,omitempty"` // HashContent of the whole file
}

// Run is read_file as a jail file tool (jail.FileToolFunc): args as the
// supervisor sent them, the result as JSON. An error means the arguments
// did not decode (the supervisor checked them before the call).
func Run(_ context.Context, open func(name string) (*os.File, error), args json.RawMessage) (json.RawMessage, error) {
	var a Args
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, fmt.Errorf("%s: decode arguments: %w", Name, err)
	}
	return json.Marshal(Read(open, a))
}

// Read reads a.Path, opened with open, as numbered text within
// read_file's caps.
func Read(open func(name string) (*os.File, error), a Args) Result {
	f, err := open(a.Path)
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
	if !fi.Mode().IsRegular() {
		// As the jail's init says of one (jail.ErrNotRegular).
		return fsError("read", a.Path, &os.PathError{Op: "open", Path: a.Path, Err: errNotRegular})
	}
	head, err := ReadHead(f, SniffBytes)
	if err != nil {
		return fsError("read", a.Path, err)
	}
	if LooksBinary(head) {
		kind := BinaryKind(head)
		hint := ""
		if strings.HasPrefix(kind, "image/") {
			hint = "; use view_image to look at it"
		}
		return errorf("read %s: binary file (%d bytes, looks like %s)%s", a.Path, fi.Size(), kind, hint)
	}

	start := max(a.Offset, 1)
	limit := a.Limit
	if limit == 0 || limit > MaxLines {
		limit = MaxLines
	}
	// Small enough files are read to the end for the hash and line count.
	whole := fi.Size() <= MaxHashBytes
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
				text += fmt.Sprintf("… %s, %d more bytes]", LineCutMarker, rest)
				cutLines++
			}
			entry := fmt.Sprintf("%6d\t%s\n", lineNo, text)
			if shown >= limit || out.Len()+len(entry) > MaxBytes {
				stopped = true
				if !whole {
					break
				}
				// Count the rest of the file (this line is counted already).
				rem, cerr := io.ReadAll(br)
				if cerr != nil {
					return fsError("read", a.Path, cerr)
				}
				lineNo += CountLines(rem)
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

// errorf is a model-facing failure.
func errorf(format string, a ...any) Result {
	return Result{Text: CapText(fmt.Sprintf(format, a...), MaxErrorBytes), IsError: true}
}

func fsError(op, path string, err error) Result {
	return Result{Text: CapText(Explain(op, path, err), MaxErrorBytes), IsError: true}
}

// Explain says what a filesystem failure means to the model. A refusal by
// the jail reads differently from a missing file, so the model does not
// retry blindly.
func Explain(op, path string, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("%s %s: no such file or directory", op, path)
	case errors.Is(err, syscall.EROFS):
		return fmt.Sprintf("%s %s: read-only here (a protected path, or a read-only call); the jail refused it", op, path)
	case errors.Is(err, fs.ErrPermission) && deniedByMode(op, path, err):
		return fmt.Sprintf("%s %s: permission denied by the owner and mode of the file or its directory (ls -l shows them), not by brig's jail; chmod can change them if the task needs it", op, path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("%s %s: permission denied; this call was not granted access to that path (the jail refused it)", op, path)
	case errors.Is(err, syscall.EISDIR):
		return fmt.Sprintf("%s %s: is a directory", op, path)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Sprintf("%s %s: a component of the path is not a directory", op, path)
	}
	return fmt.Sprintf("%s %s: %v", op, path, err)
}

// readOps are Explain's operations that only read; the others write.
var readOps = map[string]bool{"read": true, "view": true, "search": true, "list": true, "glob in": true}

// deniedByMode reports whether the file's own permissions refuse op on
// the path err names (path when it names none): access(2) checks the
// owner, the group and the mode bits as open(2) does, and Landlock takes
// no part in it, so a refusal that access(2) repeats is not the jail's. A
// write is checked on the file when it exists and on its directory (a
// new name, a removal).
func deniedByMode(op, path string, err error) bool {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path != "" {
		path = pe.Path
	}
	denied := func(p string, mode uint32) bool {
		return errors.Is(syscall.Access(p, mode), syscall.EACCES)
	}
	if readOps[op] {
		return denied(path, 4) // R_OK
	}
	if _, err := os.Lstat(path); err == nil && denied(path, 2) { // W_OK
		return true
	}
	return denied(filepath.Dir(path), 3) // W_OK|X_OK
}

// CapText cuts s to at most n bytes on a rune boundary, saying so.
func CapText(s string, n int) string {
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

// HashContent is the content hash read_file reports and edit_file checks
// (expected_hash): the first 16 hex digits of SHA-256, enough to notice a
// file that changed since the model read it. (Read computes the same while
// it streams the file.)
func HashContent(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// CountLines counts lines as an editor shows them (a last line without a
// newline counts).
func CountLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// ReadHead reads up to n bytes from the start of r.
func ReadHead(r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, n)
	k, err := io.ReadFull(r, buf)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = nil
	}
	return buf[:k], err
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
			k := TrimPartialRune(line)
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

// TrimPartialRune returns the length of b without an incomplete UTF-8
// sequence at its end.
func TrimPartialRune(b []byte) int {
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

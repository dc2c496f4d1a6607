package tools

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"brig/internal/fsutil"
)

// hashContent is the content hash read_file reports and edit_file checks
// (expected_hash): the first 16 hex digits of SHA-256, enough to notice a
// file that changed since the model read it.
func hashContent(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// looksBinary reports whether the start of a file holds a NUL byte, the
// test git and ripgrep use.
func looksBinary(head []byte) bool {
	return bytes.IndexByte(head[:min(len(head), binarySniffBytes)], 0) >= 0
}

// binaryKinds are the media types binaryKind names, each by the bytes a
// file of that type starts with (at offset at).
var binaryKinds = []struct {
	at    int
	magic string
	kind  string
}{
	{0, "\x89PNG\r\n\x1a\n", "image/png"},
	{0, "\xff\xd8\xff", "image/jpeg"},
	{0, "GIF87a", "image/gif"},
	{0, "GIF89a", "image/gif"},
	{8, "WEBPVP", "image/webp"},
	{0, "BM", "image/bmp"},
	{0, "II*\x00", "image/tiff"},
	{0, "MM\x00*", "image/tiff"},
	{0, "\x00\x00\x01\x00", "image/x-icon"},
	{0, "%PDF-", "application/pdf"},
	{0, "PK\x03\x04", "application/zip"},
	{0, "\x1f\x8b\x08", "application/gzip"},
	{0, "\xfd7zXZ\x00", "application/x-xz"},
	{0, "BZh", "application/x-bzip2"},
	{0, "(\xb5/\xfd", "application/zstd"},
	{0, "7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"},
	{0, "Rar!\x1a\x07", "application/vnd.rar"},
	{257, "ustar", "application/x-tar"},
	{0, "\x7fELF", "application/x-elf"},
	{0, "\x00asm", "application/wasm"},
	{0, "SQLite format 3\x00", "application/vnd.sqlite3"},
	{0, "wOFF", "font/woff"},
	{0, "wOF2", "font/woff2"},
	{0, "OTTO", "font/otf"},
	{0, "\x00\x01\x00\x00", "font/ttf"},
	{0, "OggS", "application/ogg"},
	{0, "ID3", "audio/mpeg"},
	{0, "fLaC", "audio/flac"},
	{4, "ftyp", "video/mp4"},
	{0, "\x1aE\xdf\xa3", "video/webm"},
}

// binaryKind names the media type of a binary file by its first bytes,
// for the model's hint: application/octet-stream when none of
// binaryKinds matches. (net/http's DetectContentType did this; the light
// jail worker, which reads files, does not link net/http.)
func binaryKind(head []byte) string {
	for _, k := range binaryKinds {
		if len(head) >= k.at+len(k.magic) && string(head[k.at:k.at+len(k.magic)]) == k.magic {
			return k.kind
		}
	}
	return "application/octet-stream"
}

// readForEdit reads a whole regular file that a tool is about to change.
// It refuses what cannot be edited safely as text.
func readForEdit(op, path string) ([]byte, fs.FileInfo, *Result) {
	fi, err := os.Stat(path)
	if err != nil {
		r := fsError(op, path, err)
		return nil, nil, &r
	}
	if fi.IsDir() {
		r := errorf("%s %s: is a directory", op, path)
		return nil, nil, &r
	}
	if !fi.Mode().IsRegular() {
		r := errorf("%s %s: not a regular file", op, path)
		return nil, nil, &r
	}
	if fi.Size() > MaxEditFileBytes {
		r := errorf("%s %s: the file is %d bytes, more than the %d bytes this tool edits; use bash (sed, a script) for files this large", op, path, fi.Size(), MaxEditFileBytes)
		return nil, nil, &r
	}
	b, err := os.ReadFile(path)
	if err != nil {
		r := fsError(op, path, err)
		return nil, nil, &r
	}
	if len(b) > MaxEditFileBytes {
		r := errorf("%s %s: the file grew beyond %d bytes while being read", op, path, MaxEditFileBytes)
		return nil, nil, &r
	}
	if looksBinary(b) {
		r := errorf("%s %s: binary file; this tool edits text only", op, path)
		return nil, nil, &r
	}
	return b, fi, nil
}

// writeTarget is the file a write really lands on: the target of a symlink
// (so editing a linked file keeps the link), or the path itself.
func writeTarget(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return path, nil
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("%s is a symlink whose target cannot be resolved: %w", path, err)
	}
	return real, nil
}

// writeAtomic replaces path's content: a temporary file in the same
// directory, fsync, rename over the target, fsync of the directory. An
// existing file keeps its permission bits; a new one gets mode. When the
// jail granted the file but not its directory (no temporary file can be
// created there), an existing file is rewritten in place instead, and
// atomic is false.
func writeAtomic(path string, data []byte, mode fs.FileMode) (atomic bool, err error) {
	target, err := writeTarget(path)
	if err != nil {
		return false, err
	}
	existing := false
	if fi, err := os.Stat(target); err == nil {
		if !fi.Mode().IsRegular() {
			return false, fmt.Errorf("%s is not a regular file", path)
		}
		mode = fi.Mode().Perm()
		existing = true
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".brig-*")
	if err != nil {
		if existing && (errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)) {
			return false, writeInPlace(target, data)
		}
		return false, err
	}
	committed := false
	defer func() {
		if !committed {
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return false, err
	}
	committed = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // durability of the rename; best effort
		d.Close()
	}
	return true, nil
}

// writeInPlace truncates and rewrites an existing file (no new directory
// entry is needed).
func writeInPlace(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	return fsutil.WriteSyncClose(f, data)
}

// countLines counts lines as an editor shows them (a last line without a
// newline counts).
func countLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// readHead reads up to n bytes from the start of r.
func readHead(r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, n)
	k, err := io.ReadFull(r, buf)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = nil
	}
	return buf[:k], err
}

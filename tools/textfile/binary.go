package textfile

import "bytes"

// LooksBinary reports whether the start of a file holds a NUL byte, the
// test git and ripgrep use.
func LooksBinary(head []byte) bool {
	return bytes.IndexByte(head[:min(len(head), SniffBytes)], 0) >= 0
}

// binaryKinds are the media types BinaryKind names, each by the bytes a
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

// BinaryKind names the media type of a binary file by its first bytes,
// for the model's hint: application/octet-stream when none of
// binaryKinds matches. (net/http's DetectContentType did this; the light
// jail worker, which reads files, does not link net/http.)
func BinaryKind(head []byte) string {
	for _, k := range binaryKinds {
		if len(head) >= k.at+len(k.magic) && string(head[k.at:k.at+len(k.magic)]) == k.magic {
			return k.kind
		}
	}
	return "application/octet-stream"
}

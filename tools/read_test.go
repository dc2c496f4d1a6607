package tools

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"brig/tools/textfile"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	var many strings.Builder
	for i := 1; i <= MaxReadLines+500; i++ {
		fmt.Fprintf(&many, "line %d\n", i)
	}
	files := map[string]string{
		"small.txt": "alpha\nbeta\ngamma",
		"crlf.txt":  "one\r\ntwo\r\n",
		"empty.txt": "",
		"many.txt":  many.String(),
		"long.txt":  "short\n" + strings.Repeat("é", MaxLineChars) + "\nafter\n",
		"wide.txt":  strings.Repeat(strings.Repeat("x", 1000)+"\n", 200),
		"bin.dat":   "PK\x03\x04\x00\x00binary",
		"image.png": "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
	}
	for name, c := range files {
		writeFile(t, filepath.Join(dir, name), c)
	}
	tests := []struct {
		name      string
		args      obj
		wantErr   string
		contains  []string
		absent    []string
		truncated bool
		lines     int
	}{
		{name: "numbered like cat -n", args: obj{"path": "small.txt"},
			contains: []string{"     1\talpha\n     2\tbeta\n     3\tgamma\n[hash " + textfile.HashContent([]byte(files["small.txt"])) + "]"}, lines: 3},
		{name: "range", args: obj{"path": "small.txt", "offset": 2, "limit": 1},
			contains: []string{"     2\tbeta\n", "[lines 2-2 of 3; continue with offset=3]"}, absent: []string{"alpha", "gamma"}, truncated: true, lines: 1},
		{name: "crlf shown without CR", args: obj{"path": "crlf.txt"}, contains: []string{"     1\tone\n     2\ttwo\n"}, absent: []string{"\r"}, lines: 2},
		{name: "empty", args: obj{"path": "empty.txt"}, contains: []string{"(empty file)"}},
		{name: "line cap", args: obj{"path": "many.txt"},
			contains: []string{fmt.Sprintf("%6d\tline %d\n", MaxReadLines, MaxReadLines), fmt.Sprintf("[lines 1-%d of %d; continue with offset=%d]", MaxReadLines, MaxReadLines+500, MaxReadLines+1)},
			absent:   []string{fmt.Sprintf("line %d\n", MaxReadLines+1)}, truncated: true, lines: MaxReadLines},
		{name: "long line cut on a rune boundary", args: obj{"path": "long.txt"},
			contains: []string{"     3\tafter", lineCutMarker + ", " + fmt.Sprint(MaxLineChars) + " more bytes]", "1 long lines were cut"}, truncated: true, lines: 3},
		{name: "byte cap", args: obj{"path": "wide.txt"}, contains: []string{"continue with offset="}, truncated: true},
		{name: "past the end", args: obj{"path": "small.txt", "offset": 9}, wantErr: "past the end"},
		{name: "binary", args: obj{"path": "bin.dat"}, wantErr: "binary file (12 bytes, looks like application/zip)"},
		{name: "image hint", args: obj{"path": "image.png"}, wantErr: "looks like image/png); use view_image"},
		{name: "missing", args: obj{"path": "nope.txt"}, wantErr: "no such file"},
		{name: "directory", args: obj{"path": "."}, wantErr: "is a directory"},
	}
	t.Chdir(dir)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, ReadFile, tt.args)
			if tt.wantErr != "" {
				if !res.IsError || !strings.Contains(res.Text, tt.wantErr) {
					t.Fatalf("want error %q, got %+v", tt.wantErr, res)
				}
				return
			}
			if res.IsError {
				t.Fatalf("error: %s", res.Text)
			}
			for _, c := range tt.contains {
				if !strings.Contains(res.Text, c) {
					t.Errorf("missing %q in:\n%s", c, tail(res.Text))
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(res.Text, a) {
					t.Errorf("unexpected %q", a)
				}
			}
			if res.Meta.Truncated != tt.truncated {
				t.Errorf("truncated = %v, want %v", res.Meta.Truncated, tt.truncated)
			}
			if tt.lines != 0 && res.Meta.Lines != tt.lines {
				t.Errorf("lines = %d, want %d", res.Meta.Lines, tt.lines)
			}
			if len(res.Text) > MaxReadBytes+1024 {
				t.Errorf("text is %d bytes", len(res.Text))
			}
		})
	}
}

func tail(s string) string {
	if len(s) > 600 {
		return "…" + s[len(s)-600:]
	}
	return s
}

// TestBinaryKind: each signature names its type, at its offset only; a
// head shorter than a signature, or unknown bytes, is
// application/octet-stream.
func TestBinaryKind(t *testing.T) {
	tar := make([]byte, 512)
	copy(tar[257:], "ustar\x0000")
	for _, tt := range []struct {
		head []byte
		want string
	}{
		{[]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), "image/png"},
		{[]byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"), "image/jpeg"},
		{[]byte("RIFF\x10\x00\x00\x00WEBPVP8 "), "image/webp"},
		{[]byte("GIF89a\x01\x00"), "image/gif"},
		{[]byte("\x7fELF\x02\x01\x01\x00"), "application/x-elf"},
		{[]byte("\x00\x00\x00\x18ftypmp42"), "video/mp4"},
		{tar, "application/x-tar"},
		{[]byte("\x89PN"), "application/octet-stream"},           // shorter than the signature
		{[]byte("xxxxWEBPVP8 \x00"), "application/octet-stream"}, // the right bytes at the wrong offset
		{[]byte("\x00\x01\x02\x03"), "application/octet-stream"},
		{nil, "application/octet-stream"},
	} {
		if got := textfile.BinaryKind(tt.head); got != tt.want {
			t.Errorf("textfile.BinaryKind(%q) = %q, want %q", tt.head, got, tt.want)
		}
	}
}

//go:build !brig_light_worker

package tools

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/image/bmp"
)

func testImage(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 90, 255})
		}
	}
	// A red top-left corner shows where "up" is.
	for y := 0; y < h/4; y++ {
		for x := 0; x < w/4; x++ {
			img.Set(x, y, color.RGBA{255, 0, 0, 255})
		}
	}
	return img
}

func encode(t *testing.T, f func(*bytes.Buffer) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := f(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// withOrientation inserts an EXIF APP1 segment holding orientation o after
// the JPEG's SOI marker.
func withOrientation(jpg []byte, o uint16) []byte {
	tiff := []byte("MM\x00\x2a\x00\x00\x00\x08")
	ifd := make([]byte, 2+12+4)
	binary.BigEndian.PutUint16(ifd, 1)
	binary.BigEndian.PutUint16(ifd[2:], 0x0112)
	binary.BigEndian.PutUint16(ifd[4:], 3)
	binary.BigEndian.PutUint32(ifd[6:], 1)
	binary.BigEndian.PutUint16(ifd[10:], o)
	payload := append(append([]byte("Exif\x00\x00"), tiff...), ifd...)
	seg := []byte{0xFF, 0xE1, 0, 0}
	binary.BigEndian.PutUint16(seg[2:], uint16(len(payload)+2))
	out := append([]byte{}, jpg[:2]...)
	out = append(out, seg...)
	out = append(out, payload...)
	return append(out, jpg[2:]...)
}

func TestViewImage(t *testing.T) {
	dir := t.TempDir()
	small := testImage(64, 32)
	jpg := encode(t, func(b *bytes.Buffer) error { return jpeg.Encode(b, testImage(80, 40), &jpeg.Options{Quality: 95}) })
	files := map[string][]byte{
		"small.png":   encode(t, func(b *bytes.Buffer) error { return png.Encode(b, small) }),
		"small.gif":   encode(t, func(b *bytes.Buffer) error { return gif.Encode(b, small, nil) }),
		"photo.jpg":   jpg,
		"rotated.jpg": withOrientation(jpg, 6),
		"wide.png":    encode(t, func(b *bytes.Buffer) error { return png.Encode(b, testImage(3000, 1000)) }),
		"old.bmp":     encode(t, func(b *bytes.Buffer) error { return bmp.Encode(b, small) }),
		"notes.txt":   []byte("not an image"),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	big := filepath.Join(dir, "huge.png")
	if err := os.WriteFile(big, make([]byte, MaxImageFileBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		file        string
		media       string
		w, h        int
		passThrough bool
		wantErr     string
		note        string
	}{
		{file: "small.png", media: "image/png", w: 64, h: 32, passThrough: true},
		{file: "small.gif", media: "image/gif", w: 64, h: 32, passThrough: true},
		{file: "photo.jpg", media: "image/jpeg", w: 80, h: 40, passThrough: true},
		{file: "rotated.jpg", media: "image/jpeg", w: 40, h: 80, note: "EXIF orientation 6"},
		{file: "wide.png", media: "image/png", w: 2048, h: 682, note: "scaled down from 3000×1000"},
		{file: "old.bmp", media: "image/png", w: 64, h: 32, note: "converted from bmp"},
		{file: "notes.txt", wantErr: "not a decodable image"},
		{file: "huge.png", wantErr: "20 MiB limit"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			res := call(t, ViewImage, obj{"path": filepath.Join(dir, tt.file)})
			if tt.wantErr != "" {
				if !res.IsError || !strings.Contains(res.Text, tt.wantErr) {
					t.Fatalf("want %q, got %+v", tt.wantErr, res.Text)
				}
				return
			}
			if res.IsError || len(res.Images) != 1 {
				t.Fatalf("%+v", res.Text)
			}
			img := res.Images[0]
			data, err := base64.StdEncoding.DecodeString(img.Data)
			if err != nil {
				t.Fatal(err)
			}
			cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if img.MediaType != tt.media || "image/"+format != tt.media || cfg.Width != tt.w || cfg.Height != tt.h || img.Width != tt.w || img.Height != tt.h {
				t.Fatalf("got %s %d×%d (decoded %s %d×%d), want %s %d×%d", img.MediaType, img.Width, img.Height, format, cfg.Width, cfg.Height, tt.media, tt.w, tt.h)
			}
			if tt.passThrough != bytes.Equal(data, files[tt.file]) {
				t.Errorf("pass-through = %v, want %v", !tt.passThrough, tt.passThrough)
			}
			if !strings.Contains(res.Text, tt.note) {
				t.Errorf("text %q lacks %q", res.Text, tt.note)
			}
			if len(data) > MaxImageBytes {
				t.Errorf("%d bytes", len(data))
			}
		})
	}
}

// Orientation 6 means the stored image must turn 90° clockwise: the red
// top-left corner of the stored image ends up top-right.
func TestOrientationMovesPixels(t *testing.T) {
	src := testImage(80, 40)
	cases := map[int]image.Point{1: {5, 5}, 3: {75, 35}, 6: {35, 5}, 8: {5, 75}}
	for o, red := range cases {
		out := orientImage(src, o)
		r, g, b, _ := out.At(red.X, red.Y).RGBA()
		if r>>8 != 255 || g>>8 != 0 || b>>8 != 0 {
			t.Errorf("orientation %d: pixel %v is not red (%d,%d,%d)", o, red, r>>8, g>>8, b>>8)
		}
	}
	jpg := encode(t, func(b *bytes.Buffer) error { return jpeg.Encode(b, src, nil) })
	for _, o := range []uint16{1, 3, 6, 8} {
		if got := jpegOrientation(withOrientation(jpg, o)); got != int(o) {
			t.Errorf("jpegOrientation = %d, want %d", got, o)
		}
	}
	if got := jpegOrientation(jpg); got != 1 {
		t.Errorf("no EXIF: %d", got)
	}
}

func TestWebPPassesThrough(t *testing.T) {
	// golang.org/x/image decodes WebP but cannot encode it: use its own
	// test image when the module cache has it.
	matches, _ := filepath.Glob(filepath.Join(os.Getenv("GOMODCACHE"), "golang.org/x/image@*/testdata/blue-purple-pink.lossless.webp"))
	if len(matches) == 0 {
		home, _ := os.UserHomeDir()
		matches, _ = filepath.Glob(filepath.Join(home, "go/pkg/mod/golang.org/x/image@*/testdata/blue-purple-pink.lossless.webp"))
	}
	if len(matches) == 0 {
		t.Skip("no WebP sample in the module cache")
	}
	raw, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	img, _, err := prepareImage(raw)
	if err != nil {
		t.Fatal(err)
	}
	if img.MediaType != "image/webp" || img.Data != base64.StdEncoding.EncodeToString(raw) {
		t.Fatalf("WebP was not passed through: %s", img.MediaType)
	}
}

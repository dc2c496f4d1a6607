//go:build !brig_light_worker

package tools

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	_ "image/gif" // decode GIF
	"image/jpeg"
	"image/png"
	"os"

	_ "golang.org/x/image/bmp" // decode BMP (re-encoded as PNG)
	xdraw "golang.org/x/image/draw"
	_ "golang.org/x/image/tiff" // decode TIFF (re-encoded as PNG)
	_ "golang.org/x/image/webp" // decode WebP

	"brig/policy/toolcall"
)

type imageArgs struct {
	Path string `json:"path"`
}

func (a *imageArgs) validate() error {
	if a.Path == "" {
		return errors.New("path is required")
	}
	return nil
}

func (a *imageArgs) pathFields() []*string { return []*string{&a.Path} }

func viewImageDef() Definition {
	return define(ViewImage, toolcall.EffectRead,
		fmt.Sprintf("Look at an image file (PNG, JPEG, GIF, WebP; BMP and TIFF are converted). Files up to %d MiB; images larger than %d px on the long side are scaled down.", MaxImageFileBytes>>20, MaxImageSide),
		`{"type":"object","properties":{"path":{"type":"string","description":"Image file to view"}},"required":["path"],"additionalProperties":false}`,
		func(a imageArgs) toolcall.Call { return toolcall.Call{Read: []string{a.Path}} },
		func(_ context.Context, a imageArgs) Result { return loadImage(a.Path) })
}

// passThrough are the formats a model takes as they are.
var passThrough = map[string]string{"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}

func loadImage(path string) Result {
	fi, err := os.Stat(path)
	if err != nil {
		return fsError("view", path, err)
	}
	if fi.IsDir() {
		return errorf("view %s: is a directory", path)
	}
	if fi.Size() > MaxImageFileBytes {
		return errorf("view %s: the image is %s, more than the %d MiB limit", path, humanBytes(fi.Size()), MaxImageFileBytes>>20)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return fsError("view", path, err)
	}
	img, note, err := prepareImage(raw)
	if err != nil {
		return errorf("view %s: %v", path, err)
	}
	res := Result{
		Text:   fmt.Sprintf("Image %s: %d×%d %s%s", path, img.Width, img.Height, img.MediaType, note.text),
		Images: []Image{img},
		Meta:   Meta{Path: path, Bytes: fi.Size(), OrigWidth: note.origW, OrigHeight: note.origH},
	}
	return res
}

// CapImage prepares an image that did not come from a file (an MCP tool's
// result) exactly as view_image prepares a file: formats models take pass
// through when small enough, others are re-encoded, orientation applied,
// the long side at most MaxImageSide. note says what was changed.
func CapImage(raw []byte) (img Image, note string, err error) {
	if len(raw) > MaxImageFileBytes {
		return Image{}, "", fmt.Errorf("the image is %s, more than the %d MiB limit", humanBytes(int64(len(raw))), MaxImageFileBytes>>20)
	}
	img, n, err := prepareImage(raw)
	return img, n.text, err
}

type imageNote struct {
	text         string
	origW, origH int
}

// prepareImage returns the image the model receives: the file's own bytes
// when its format is one models take, it is small enough and needs no
// rotation; otherwise the decoded image, turned upright, scaled so its long
// side fits, and encoded again (JPEG stays JPEG, everything else becomes
// PNG, shrinking further if the encoding is still too large).
func prepareImage(raw []byte) (Image, imageNote, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		return Image{}, imageNote{}, fmt.Errorf("not a decodable image: %v", err)
	}
	note := imageNote{origW: cfg.Width, origH: cfg.Height}
	if float64(cfg.Width)*float64(cfg.Height) > MaxImagePixels {
		return Image{}, note, fmt.Errorf("the image is %d×%d pixels, more than the %.0f megapixels brig decodes", cfg.Width, cfg.Height, MaxImagePixels/1e6)
	}
	orient := 1
	if format == "jpeg" {
		orient = jpegOrientation(raw)
	}
	media, ok := passThrough[format]
	if ok && orient == 1 && max(cfg.Width, cfg.Height) <= MaxImageSide && len(raw) <= MaxImageBytes {
		return Image{MediaType: media, Data: base64.StdEncoding.EncodeToString(raw), Width: cfg.Width, Height: cfg.Height}, note, nil
	}

	src, _, err := image.Decode(bytes.NewReader(raw))
	if err != nil {
		return Image{}, note, fmt.Errorf("decode %s: %v", format, err)
	}
	side := MaxImageSide
	for range 6 {
		// Scale first: turning the smaller image is cheaper, and the long
		// side stays the long side.
		img := fitImage(src, side)
		if orient != 1 {
			img = orientImage(img, orient)
		}
		var buf bytes.Buffer
		media := "image/png"
		if format == "jpeg" {
			media = "image/jpeg"
			err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 85})
		} else {
			err = png.Encode(&buf, img)
		}
		if err != nil {
			return Image{}, note, fmt.Errorf("encode: %v", err)
		}
		if buf.Len() <= MaxImageBytes {
			b := img.Bounds()
			if orient != 1 {
				note.text += fmt.Sprintf(" (turned upright from EXIF orientation %d)", orient)
			}
			if max(b.Dx(), b.Dy()) != max(cfg.Width, cfg.Height) {
				note.text += fmt.Sprintf(" (scaled down from %d×%d)", cfg.Width, cfg.Height)
			}
			if format != "jpeg" && format != "png" {
				note.text += fmt.Sprintf(" (converted from %s)", format)
			}
			return Image{MediaType: media, Data: base64.StdEncoding.EncodeToString(buf.Bytes()), Width: b.Dx(), Height: b.Dy()}, note, nil
		}
		side = side * 3 / 4
	}
	return Image{}, note, fmt.Errorf("could not encode the image within %d bytes", MaxImageBytes)
}

// fitImage scales img so its long side is at most side (never up).
func fitImage(img image.Image, side int) image.Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if max(w, h) <= side {
		return img
	}
	if w >= h {
		h = max(1, h*side/w)
		w = side
	} else {
		w = max(1, w*side/h)
		h = side
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	xdraw.CatmullRom.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
	return dst
}

// orientImage applies an EXIF orientation (2–8) so the image is upright.
func orientImage(src image.Image, orient int) image.Image {
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	dw, dh := w, h
	if orient >= 5 {
		dw, dh = h, w
	}
	dst := image.NewRGBA(image.Rect(0, 0, dw, dh))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var dx, dy int
			switch orient {
			case 2: // mirrored
				dx, dy = w-1-x, y
			case 3: // rotated 180
				dx, dy = w-1-x, h-1-y
			case 4: // mirrored vertically
				dx, dy = x, h-1-y
			case 5: // transposed
				dx, dy = y, x
			case 6: // rotated 90 clockwise to view
				dx, dy = h-1-y, x
			case 7: // transversed
				dx, dy = h-1-y, w-1-x
			case 8: // rotated 90 counter-clockwise to view
				dx, dy = y, w-1-x
			default:
				dx, dy = x, y
			}
			dst.Set(dx, dy, color.RGBAModel.Convert(src.At(b.Min.X+x, b.Min.Y+y)))
		}
	}
	return dst
}

// jpegOrientation reads the EXIF orientation tag of a JPEG (1 when absent
// or unreadable).
func jpegOrientation(b []byte) int {
	if len(b) < 4 || b[0] != 0xFF || b[1] != 0xD8 {
		return 1
	}
	i := 2
	for i+4 <= len(b) && b[i] == 0xFF {
		marker := b[i+1]
		if marker == 0xD9 || marker == 0xDA { // end of image, start of scan
			return 1
		}
		size := int(binary.BigEndian.Uint16(b[i+2:]))
		if size < 2 || i+2+size > len(b) {
			return 1
		}
		seg := b[i+4 : i+2+size]
		if marker == 0xE1 && len(seg) > 6 && string(seg[:6]) == "Exif\x00\x00" {
			return exifOrientation(seg[6:])
		}
		i += 2 + size
	}
	return 1
}

// exifOrientation finds tag 0x0112 in IFD0 of a TIFF structure.
func exifOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	off := int(bo.Uint32(t[4:]))
	if off < 8 || off+2 > len(t) {
		return 1
	}
	n := int(bo.Uint16(t[off:]))
	for k := 0; k < n; k++ {
		e := off + 2 + 12*k
		if e+12 > len(t) {
			return 1
		}
		if bo.Uint16(t[e:]) == 0x0112 && bo.Uint16(t[e+2:]) == 3 { // SHORT
			if v := int(bo.Uint16(t[e+8:])); v >= 1 && v <= 8 {
				return v
			}
			return 1
		}
	}
	return 1
}

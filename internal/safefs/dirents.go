package safefs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Dirent is one name of a directory listing with the type the listing gave
// (unix.DT_*; DT_UNKNOWN where the file system does not say).
type Dirent struct {
	Name string
	Type uint8
	Ino  uint64 // the inode the name stood for when listed (d_ino)
}

var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// ReadDirents lists the directory open at fd (without . and ..), sorted by
// name, straight from getdents64: no stat, no per-entry allocation but the
// name. The walks of a whole workspace (the undo snapshot, the search for
// repositories) stand on it.
func ReadDirents(fd int) ([]Dirent, error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var out []Dirent
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			break
		}
		for off := 0; off < n; {
			// struct linux_dirent64: ino u64, off s64, reclen u16,
			// type u8, name (NUL-terminated).
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen == 0 || off+reclen > n {
				return nil, errors.New("a malformed directory listing")
			}
			ino := binary.NativeEndian.Uint64(buf[off:])
			typ := buf[off+18]
			name := buf[off+19 : off+reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			off += reclen
			if len(name) == 0 || string(name) == "." || string(name) == ".." {
				continue
			}
			out = append(out, Dirent{Name: string(name), Type: typ, Ino: ino})
		}
	}
	slices.SortFunc(out, func(a, b Dirent) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

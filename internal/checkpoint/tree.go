package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Hash is the SHA-256 of an object's bytes: a file's content or an encoded
// tree.
type Hash [32]byte

// String is the hash in hex.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports whether h is unset.
func (h Hash) IsZero() bool { return h == Hash{} }

// MarshalText implements encoding.TextMarshaler (hex).
func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (h *Hash) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*h = Hash{}
		return nil
	}
	if len(b) != 64 {
		return fmt.Errorf("checkpoint: a hash has 64 hex digits, not %d", len(b))
	}
	_, err := hex.Decode(h[:], b)
	return err
}

func hashOf(b []byte) Hash { return sha256.Sum256(b) }

// Type is what kind of file an entry is.
type Type uint8

// Entry types.
const (
	TypeNone    Type = iota // absent
	TypeFile                // a regular file
	TypeDir                 // a directory
	TypeSymlink             // a symbolic link (never followed)
	TypeOther               // a FIFO, socket or device: recorded, never opened
)

func (t Type) String() string {
	switch t {
	case TypeFile:
		return "file"
	case TypeDir:
		return "directory"
	case TypeSymlink:
		return "symlink"
	case TypeOther:
		return "special file"
	}
	return "nothing"
}

// MarshalText implements encoding.TextMarshaler.
func (t Type) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (t *Type) UnmarshalText(b []byte) error {
	for c := TypeNone; c <= TypeOther; c++ {
		if c.String() == string(b) {
			*t = c
			return nil
		}
	}
	return fmt.Errorf("checkpoint: unknown entry type %q", b)
}

// Flags say what an entry's record lacks.
type Flags uint8

const (
	// FlagExcluded: a directory the snapshot does not descend into (a
	// generated tree, git's own state, another filesystem); its own stat
	// is recorded so a change to it is noticed, not its content.
	FlagExcluded Flags = 1 << iota
	// FlagNotStored: a file whose content is not in the store (too large,
	// unreadable, over the snapshot's budget); undo cannot bring it back.
	FlagNotStored
	// FlagRacy: the file changed so recently that equal stat data does not
	// prove equal content; the next snapshot reads it again.
	FlagRacy
	// FlagUnreadable: a directory that could not be listed (its
	// permissions); its own mode is recorded, not what is in it.
	FlagUnreadable
)

// Entry is one name in a directory, as a snapshot saw it.
type Entry struct {
	Name  string `json:"name"`
	Type  Type   `json:"type"`
	Mode  uint32 `json:"mode"` // permission and set-id bits
	Size  int64  `json:"size,omitempty"`
	MTime int64  `json:"mtime_ns,omitempty"`
	CTime int64  `json:"ctime_ns,omitempty"`
	Ino   uint64 `json:"ino,omitempty"`
	Dev   uint64 `json:"dev,omitempty"`
	UID   uint32 `json:"uid"`
	GID   uint32 `json:"gid"`
	Flags Flags  `json:"flags,omitempty"`
	// Hash is a file's content, or a directory's tree (zero for an
	// excluded directory or a file not stored).
	Hash Hash `json:"hash,omitzero"`
	// Link is a symlink's target.
	Link string `json:"link,omitempty"`
	// Why says why an entry is excluded or not stored.
	Why string `json:"why,omitempty"`
}

// sameStat reports whether e and o describe the same file by its stat data
// alone: what lets a snapshot reuse a hash without reading the file.
func (e *Entry) sameStat(o *Entry) bool {
	return e.Type == o.Type && e.Mode == o.Mode && e.Size == o.Size && e.MTime == o.MTime &&
		e.CTime == o.CTime && e.Ino == o.Ino && e.Dev == o.Dev && e.UID == o.UID && e.GID == o.GID
}

// sameContent reports whether e and o are the same as far as undo is
// concerned: type, mode, content (file), target (symlink), tree (directory;
// equal trees also mean equal stat data, so different trees are compared
// entry by entry).
func (e *Entry) sameContent(o *Entry) bool {
	if e.Type != o.Type || e.Mode != o.Mode {
		return false
	}
	switch e.Type {
	case TypeFile:
		if e.Flags&FlagNotStored != 0 || o.Flags&FlagNotStored != 0 {
			return e.sameStat(o)
		}
		return e.Hash == o.Hash
	case TypeSymlink:
		return e.Link == o.Link
	case TypeDir:
		if e.Flags&FlagExcluded != 0 || o.Flags&FlagExcluded != 0 {
			return e.Flags&FlagExcluded == o.Flags&FlagExcluded
		}
		return true // the directory itself (and mode); its entries are compared on their own
	case TypeOther:
		return e.sameStat(o)
	}
	return true
}

// tree is one directory's entries, sorted by name.
type tree []Entry

const treeMagic = "BRT1"

// encode is the tree's stored form: a magic, the entry count, then each
// entry's fields as varints. Equal trees encode to equal bytes, so an
// unchanged directory is one object shared by every snapshot.
func (t tree) encode() []byte {
	b := make([]byte, 0, 16+len(t)*96)
	b = append(b, treeMagic...)
	b = binary.AppendUvarint(b, uint64(len(t)))
	for i := range t {
		e := &t[i]
		b = binary.AppendUvarint(b, uint64(len(e.Name)))
		b = append(b, e.Name...)
		b = append(b, byte(e.Type), byte(e.Flags))
		b = binary.AppendUvarint(b, uint64(e.Mode))
		b = binary.AppendVarint(b, e.Size)
		b = binary.AppendVarint(b, e.MTime)
		b = binary.AppendVarint(b, e.CTime)
		b = binary.AppendUvarint(b, e.Ino)
		b = binary.AppendUvarint(b, e.Dev)
		b = binary.AppendUvarint(b, uint64(e.UID))
		b = binary.AppendUvarint(b, uint64(e.GID))
		b = append(b, e.Hash[:]...)
		b = binary.AppendUvarint(b, uint64(len(e.Link)))
		b = append(b, e.Link...)
		b = binary.AppendUvarint(b, uint64(len(e.Why)))
		b = append(b, e.Why...)
	}
	return b
}

var errBadTree = errors.New("checkpoint: a stored tree is damaged")

// decodeTree reads an encoded tree.
func decodeTree(b []byte) (tree, error) {
	if !bytes.HasPrefix(b, []byte(treeMagic)) {
		return nil, errBadTree
	}
	r := &reader{b: b[len(treeMagic):]}
	n := r.uvarint()
	if n > uint64(len(b)) {
		return nil, errBadTree
	}
	t := make(tree, 0, n)
	for range n {
		var e Entry
		e.Name = r.str()
		e.Type, e.Flags = Type(r.byte()), Flags(r.byte())
		e.Mode = uint32(r.uvarint())
		e.Size, e.MTime, e.CTime = r.varint(), r.varint(), r.varint()
		e.Ino, e.Dev = r.uvarint(), r.uvarint()
		e.UID, e.GID = uint32(r.uvarint()), uint32(r.uvarint())
		copy(e.Hash[:], r.bytes(32))
		e.Link = r.str()
		e.Why = r.str()
		if r.err {
			return nil, errBadTree
		}
		t = append(t, e)
	}
	if r.err || len(r.b) != 0 {
		return nil, errBadTree
	}
	return t, nil
}

type reader struct {
	b   []byte
	err bool
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) byte() byte {
	if len(r.b) < 1 {
		r.err = true
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) bytes(n int) []byte {
	if len(r.b) < n {
		r.err, r.b = true, nil
		return make([]byte, n)
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) str() string {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err, r.b = true, nil
		return ""
	}
	return string(r.bytes(int(n)))
}

// find returns the entry called name, or nil.
func (t tree) find(name string) *Entry {
	i, ok := slices.BinarySearchFunc(t, name, func(e Entry, n string) int { return strings.Compare(e.Name, n) })
	if !ok {
		return nil
	}
	return &t[i]
}

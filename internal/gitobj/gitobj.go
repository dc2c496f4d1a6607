// Package gitobj checks that objects of a git object store hold what their
// ids say, without running git: a loose object (the zlib stream of "TYPE
// SIZE\0CONTENT", named by the hash of that) and a pack (an index of ids
// and offsets into a file of whole objects and deltas). git checks the hash
// of a commit or a tree it reads, but writes a blob out at checkout as the
// store holds it: a blob whose content is not the one its id names makes
// the user's own branch check out other files under an unchanged commit
// id (red team, 2026-12-02).
//
// It owns reading these formats (gitformat-pack(5), and the loose format
// of gitrepository-layout(5)), SHA-1 and SHA-256 repositories alike, with
// every size bounded. It must not decide what happens to an object that
// fails: the supervisor's sweep does.
package gitobj

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
)

// MaxObject bounds a delta, its base and its result — git's own
// core.bigFileThreshold, above which it makes no deltas; a larger one is
// an error, as is every malformed input. A whole object, loose or packed,
// is hashed as it is inflated and never held, whatever its size; a
// delta's base and result are, so checking a pack holds at most about
// twice this, plus the cache of recent bases (maxCache).
const MaxObject = 512 << 20

// ErrMismatch is wrapped by the error for an object whose content does
// not hash to its id.
var ErrMismatch = errors.New("the object does not hold what its id names")

// ErrTooCostly is wrapped by the error for a pack or loose object whose
// check would inflate and rebuild more than its budget (CheckBudget): a
// 27 KB pack of 300 deltas on a 17 MiB object, each rebuilt along its
// whole chain, held the supervisor for hours, and a 1.5 MB loose object
// inflating to 1.5 GiB without a header's end took 3 GB of its memory
// (red team, 2026-12-03).
var ErrTooCostly = errors.New("checking it would inflate and rebuild more than brig spends on it")

// CheckBudget is how many bytes the check of a pack or loose object of
// fileSize bytes may inflate and rebuild: a fixed part, and a part in
// proportion to the file (git's own packs inflate to a few times their
// size, each delta rebuilt once or, from the cache, a few times; a loose
// object of a very compressible file inflates to more).
func CheckBudget(fileSize int64) int64 { return 4<<30 + 64*fileSize }

// maxHeader bounds a loose object's header: a type name, a space, the
// size in decimal and a NUL.
const maxHeader = 32

// newHash is the hash of ids of hexLen hexadecimal digits (40: SHA-1, 64:
// SHA-256), or nil.
func newHash(hexLen int) func() hash.Hash {
	switch hexLen {
	case 40:
		return sha1.New
	case 64:
		return sha256.New
	}
	return nil
}

// VerifyLoose checks a loose object, read from r, against id (hex), and
// reports how many bytes of content it inflated. An object whose header
// gives more than limit bytes is not inflated: its error wraps
// ErrTooCostly.
func VerifyLoose(r io.Reader, id string, limit int64) (inflated int64, err error) {
	h := newHash(len(id))
	if h == nil {
		return 0, fmt.Errorf("loose object %q: not an object id", id)
	}
	z, err := zlib.NewReader(r)
	if err != nil {
		return 0, fmt.Errorf("loose object %s: %w", id, err)
	}
	defer z.Close()
	br := bufio.NewReaderSize(z, 64<<10)
	peek, perr := br.Peek(maxHeader)
	end := bytes.IndexByte(peek, 0)
	if end < 0 {
		if perr == nil {
			perr = fmt.Errorf("no NUL in its first %d bytes", maxHeader)
		}
		return 0, fmt.Errorf("loose object %s: no header: %w", id, perr)
	}
	head := string(peek[:end])
	if _, err := br.Discard(end + 1); err != nil {
		return 0, fmt.Errorf("loose object %s: %w", id, err)
	}
	typ, size, ok := parseHeader(head)
	if !ok {
		return 0, fmt.Errorf("loose object %s: bad header %q", id, head)
	}
	if size > limit {
		return 0, fmt.Errorf("loose object %s: its header gives %d bytes, over %d: %w", id, size, limit, ErrTooCostly)
	}
	sum := h()
	fmt.Fprintf(sum, "%s %d\x00", typ, size)
	n, err := io.Copy(sum, io.LimitReader(br, size+1))
	inflated = n
	if err != nil {
		return inflated, fmt.Errorf("loose object %s: %w", id, err)
	}
	if n != size {
		return inflated, fmt.Errorf("loose object %s: %d bytes, its header says %d: %w", id, n, size, ErrMismatch)
	}
	if got := hex.EncodeToString(sum.Sum(nil)); got != id {
		return inflated, fmt.Errorf("loose object %s hashes to %s: %w", id, got, ErrMismatch)
	}
	return inflated, nil
}

// parseHeader reads "TYPE SIZE" of a loose object.
func parseHeader(h string) (string, int64, bool) {
	typ, sz, ok := bytes.Cut([]byte(h), []byte(" "))
	if !ok || typeCode(string(typ)) == 0 {
		return "", 0, false
	}
	n, err := strconv.ParseInt(string(sz), 10, 64)
	if err != nil || n < 0 {
		return "", 0, false
	}
	return string(typ), n, true
}

// Pack object types (gitformat-pack(5)).
const (
	objCommit   = 1
	objTree     = 2
	objBlob     = 3
	objTag      = 4
	objOfsDelta = 6
	objRefDelta = 7
)

func typeName(t int) string {
	switch t {
	case objCommit:
		return "commit"
	case objTree:
		return "tree"
	case objBlob:
		return "blob"
	case objTag:
		return "tag"
	}
	return ""
}

func typeCode(name string) int {
	for t := objCommit; t <= objTag; t++ {
		if typeName(t) == name {
			return t
		}
	}
	return 0
}

// entry is one object of a pack's index.
type entry struct {
	id  []byte
	off int64
}

// readIndex reads a pack index (version 2, or the original version 1) of
// ids of idLen bytes.
func readIndex(idx []byte, idLen int) ([]entry, error) {
	v2 := bytes.HasPrefix(idx, []byte("\xfftOc"))
	fan := 0
	if v2 {
		if len(idx) < 8 || binary.BigEndian.Uint32(idx[4:]) != 2 {
			return nil, errors.New("pack index: an unknown version")
		}
		fan = 8
	}
	if len(idx) < fan+256*4 {
		return nil, errors.New("pack index: truncated")
	}
	n := int(binary.BigEndian.Uint32(idx[fan+255*4:]))
	body := idx[fan+256*4:]
	var out []entry
	if !v2 {
		rec := 4 + idLen
		if n > len(body)/rec {
			return nil, errors.New("pack index: truncated")
		}
		for i := range n {
			r := body[i*rec:]
			out = append(out, entry{id: r[4 : 4+idLen], off: int64(binary.BigEndian.Uint32(r))})
		}
		return out, nil
	}
	if n > len(body)/(idLen+8) {
		return nil, errors.New("pack index: truncated")
	}
	names, offs := body, body[n*(idLen+4):]
	large := offs[n*4:]
	for i := range n {
		off := int64(binary.BigEndian.Uint32(offs[i*4:]))
		if off&0x80000000 != 0 {
			k := int(off & 0x7fffffff)
			if k >= len(large)/8 {
				return nil, errors.New("pack index: a large offset out of its table")
			}
			off = int64(binary.BigEndian.Uint64(large[k*8:]))
		}
		out = append(out, entry{id: names[i*idLen : (i+1)*idLen], off: off})
	}
	return out, nil
}

// VerifyPack checks every object a pack's index names: the object at its
// offset in the pack, rebuilt from its deltas, must hash to its id. idx is
// the whole index; idLen is 20 (SHA-1) or 32 (SHA-256).
func VerifyPack(pack io.ReaderAt, packSize int64, idx []byte, idLen int) error {
	return verifyPack(pack, packSize, idx, idLen, CheckBudget(packSize))
}

// VerifyPackWithin is VerifyPack spending at most limit bytes (or the
// pack's own budget, when that is less), and it reports what it spent:
// a sweep that checks many packs bounds them all together.
func VerifyPackWithin(pack io.ReaderAt, packSize int64, idx []byte, idLen int, limit int64) (spent int64, err error) {
	return verifyPackSpent(pack, packSize, idx, idLen, min(CheckBudget(packSize), limit))
}

// verifyPack is VerifyPack with the bytes it may inflate and rebuild.
func verifyPack(pack io.ReaderAt, packSize int64, idx []byte, idLen int, budget int64) error {
	_, err := verifyPackSpent(pack, packSize, idx, idLen, budget)
	return err
}

// verifyPackSpent is verifyPack, reporting the bytes it inflated and
// rebuilt.
func verifyPackSpent(pack io.ReaderAt, packSize int64, idx []byte, idLen int, budget int64) (spent int64, err error) {
	h := newHash(idLen * 2)
	if h == nil {
		return 0, fmt.Errorf("pack: ids of %d bytes", idLen)
	}
	entries, err := readIndex(idx, idLen)
	if err != nil {
		return 0, err
	}
	p := &packReader{r: pack, size: packSize, idLen: idLen, byID: map[string]int64{}, cache: map[int64]object{}, budget: budget}
	defer func() { spent = min(budget, budget-p.budget) }()
	for _, e := range entries {
		p.byID[string(e.id)] = e.off
	}
	for _, e := range entries {
		sum := h()
		if err := p.hashObject(sum, e.off); err != nil {
			return 0, fmt.Errorf("pack object %x at %d: %w", e.id, e.off, err)
		}
		if !bytes.Equal(sum.Sum(nil), e.id) {
			return 0, fmt.Errorf("pack object %x at %d hashes to %x: %w", e.id, e.off, sum.Sum(nil), ErrMismatch)
		}
	}
	return 0, nil
}

// hashObject writes into sum what an object's id is the hash of: "TYPE
// SIZE\0" and its content. A whole object is inflated straight into sum
// (a large blob is never held); a delta is rebuilt from its base.
func (p *packReader) hashObject(sum hash.Hash, off int64) error {
	typ, size, baseOff, br, err := p.open(off)
	if err != nil {
		return err
	}
	if baseOff >= 0 {
		o, err := p.object(off, 0)
		if err != nil {
			return err
		}
		fmt.Fprintf(sum, "%s %d\x00", typeName(o.typ), len(o.data))
		sum.Write(o.data)
		return nil
	}
	z, err := zlib.NewReader(br)
	if err != nil {
		return err
	}
	defer z.Close()
	if err := p.spend(size); err != nil {
		return err
	}
	fmt.Fprintf(sum, "%s %d\x00", typeName(typ), size)
	n, err := io.Copy(sum, io.LimitReader(z, size+1))
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("%d bytes where its header says %d", n, size)
	}
	return nil
}

// object is a whole object: its type and content.
type object struct {
	typ  int
	data []byte
}

// packReader reads objects of one pack, keeping the ones rebuilt lately
// for the deltas that follow them.
type packReader struct {
	r          io.ReaderAt
	size       int64
	idLen      int
	byID       map[string]int64
	cache      map[int64]object
	cacheBytes int
	// budget is what is left of the bytes the check may inflate and
	// rebuild (CheckBudget).
	budget int64
}

// spend takes n bytes from the budget, or says it is spent.
func (p *packReader) spend(n int64) error {
	if p.budget -= n; p.budget < 0 {
		return ErrTooCostly
	}
	return nil
}

// maxCache bounds the bytes of objects kept for deltas; maxDepth the
// chain of deltas followed (git's own --depth is at most 4095).
const (
	maxCache = 64 << 20
	maxDepth = 10000
)

func (p *packReader) object(off int64, depth int) (object, error) {
	if o, ok := p.cache[off]; ok {
		return o, nil
	}
	if depth > maxDepth {
		return object{}, errors.New("a chain of deltas too long (or a loop)")
	}
	typ, size, baseOff, br, err := p.open(off)
	if err != nil {
		return object{}, err
	}
	if size > MaxObject {
		return object{}, fmt.Errorf("a delta or a delta's base of %d bytes, more than brig holds to check it", size)
	}
	var base object
	if baseOff >= 0 {
		if base, err = p.object(baseOff, depth+1); err != nil {
			return object{}, err
		}
	}
	if err := p.spend(size); err != nil {
		return object{}, err
	}
	data, err := inflate(br, size)
	if err != nil {
		return object{}, err
	}
	o := object{typ: typ, data: data}
	if baseOff >= 0 {
		out, err := applyDelta(base.data, data)
		if err != nil {
			return object{}, err
		}
		if err := p.spend(int64(len(out))); err != nil {
			return object{}, err
		}
		o = object{typ: base.typ, data: out}
	}
	p.keep(off, o)
	return o, nil
}

// open reads the header of the object at off: its type, its size (of the
// delta, for a delta) and, for a delta, its base's offset (else -1). The
// reader it returns is at the object's zlib stream.
func (p *packReader) open(off int64) (typ int, size, baseOff int64, br *bufio.Reader, err error) {
	if off < 12 || off >= p.size {
		return 0, 0, 0, nil, errors.New("an offset outside the pack")
	}
	br = bufio.NewReader(io.NewSectionReader(p.r, off, p.size-off))
	c, err := br.ReadByte()
	if err != nil {
		return 0, 0, 0, nil, err
	}
	typ = int(c>>4) & 7
	size = int64(c & 15)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if c, err = br.ReadByte(); err != nil {
			return 0, 0, 0, nil, err
		}
		if shift > 56 {
			return 0, 0, 0, nil, errors.New("an object size too large")
		}
		size |= int64(c&0x7f) << shift
	}
	baseOff = -1
	switch typ {
	case objCommit, objTree, objBlob, objTag:
	case objOfsDelta:
		if c, err = br.ReadByte(); err != nil {
			return 0, 0, 0, nil, err
		}
		rel := int64(c & 0x7f)
		for c&0x80 != 0 {
			if c, err = br.ReadByte(); err != nil {
				return 0, 0, 0, nil, err
			}
			if rel > 1<<48 {
				return 0, 0, 0, nil, errors.New("a delta's base offset too large")
			}
			rel = (rel+1)<<7 | int64(c&0x7f)
		}
		if rel <= 0 || rel > off {
			return 0, 0, 0, nil, errors.New("a delta's base outside the pack")
		}
		baseOff = off - rel
	case objRefDelta:
		id := make([]byte, p.idLen)
		if _, err := io.ReadFull(br, id); err != nil {
			return 0, 0, 0, nil, err
		}
		var ok bool
		if baseOff, ok = p.byID[string(id)]; !ok {
			return 0, 0, 0, nil, fmt.Errorf("a delta on %x, which the pack does not hold", id)
		}
	default:
		return 0, 0, 0, nil, fmt.Errorf("an object of type %d", typ)
	}
	return typ, size, baseOff, br, nil
}

// inflate reads a zlib stream of exactly size bytes from br.
func inflate(br *bufio.Reader, size int64) ([]byte, error) {
	z, err := zlib.NewReader(br)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	data := make([]byte, size)
	if _, err := io.ReadFull(z, data); err != nil {
		return nil, fmt.Errorf("fewer bytes than its header says (%d): %w", size, err)
	}
	if n, _ := z.Read(make([]byte, 1)); n != 0 {
		return nil, fmt.Errorf("more bytes than its header says (%d)", size)
	}
	return data, nil
}

// keep caches o, emptying the cache first when it would grow past
// maxCache (deltas mostly follow their bases closely).
func (p *packReader) keep(off int64, o object) {
	if len(o.data) > maxCache/4 {
		return
	}
	if p.cacheBytes+len(o.data) > maxCache {
		clear(p.cache)
		p.cacheBytes = 0
	}
	p.cache[off] = o
	p.cacheBytes += len(o.data)
}

// applyDelta rebuilds an object from its base and a delta
// (gitformat-pack(5), "Deltified representation").
func applyDelta(base, delta []byte) ([]byte, error) {
	varint := func() (int64, error) {
		var n int64
		for shift := 0; ; shift += 7 {
			if len(delta) == 0 || shift > 56 {
				return 0, errors.New("a delta's size is cut")
			}
			c := delta[0]
			delta = delta[1:]
			n |= int64(c&0x7f) << shift
			if c&0x80 == 0 {
				return n, nil
			}
		}
	}
	src, err := varint()
	if err != nil {
		return nil, err
	}
	dst, err := varint()
	if err != nil {
		return nil, err
	}
	if src != int64(len(base)) {
		return nil, fmt.Errorf("a delta for a base of %d bytes on one of %d", src, len(base))
	}
	if dst > MaxObject {
		return nil, fmt.Errorf("a delta's result of %d bytes, more than brig checks", dst)
	}
	out := make([]byte, 0, min(dst, 1<<20)) // dst is only what the delta says
	for len(delta) > 0 {
		c := delta[0]
		delta = delta[1:]
		switch {
		case c&0x80 != 0:
			var off, n int64
			for i := range 4 {
				if c&(1<<i) != 0 {
					if len(delta) == 0 {
						return nil, errors.New("a delta's copy is cut")
					}
					off |= int64(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			for i := range 3 {
				if c&(0x10<<i) != 0 {
					if len(delta) == 0 {
						return nil, errors.New("a delta's copy is cut")
					}
					n |= int64(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > int64(len(base)) || int64(len(out))+n > dst {
				return nil, errors.New("a delta's copy outside its base or result")
			}
			out = append(out, base[off:off+n]...)
		case c != 0:
			if int(c) > len(delta) || int64(len(out))+int64(c) > dst {
				return nil, errors.New("a delta's insert is cut")
			}
			out = append(out, delta[:c]...)
			delta = delta[c:]
		default:
			return nil, errors.New("a delta with the reserved instruction 0")
		}
	}
	if int64(len(out)) != dst {
		return nil, fmt.Errorf("a delta's result of %d bytes where it says %d", len(out), dst)
	}
	return out, nil
}

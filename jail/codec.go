package jail

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// The start message is the one message on the call's critical path, and a
// freshly woken child spent about 100 µs decoding it with encoding/json
// (mostly reflection over some fifty path rules). It travels in a small
// binary encoding instead: startTag, then every field of startMsg in a fixed
// order; integers as varints, strings and byte strings prefixed by their
// length, booleans as one byte. Both ends are the same binary, so there is
// no versioning. TestStartCodecRoundTrip fills every field by reflection, so
// a field added to startMsg, Spec, PathRule, Limits, Layers or Invocation
// and forgotten here fails it. The prepare message (prepareTag) is binary
// too; every other message stays JSON.

// startTag is the first byte of an encoded start message; a JSON message
// starts with '{'.
const startTag = 0x01

// prepareTag is the first byte of an encoded prepare message (the base
// seccomp filter and the notify filter, before the call is known): in
// JSON, its 4 KB of BPF in base64 cost a child 0.36 ms of CPU to decode,
// with the reflection of its first JSON message.
const prepareTag = 0x02

// encodePrepare encodes m for the wire: prepareTag, then both filters.
func encodePrepare(m prepareMsg) []byte {
	e := encoder{b: make([]byte, 0, 16+len(m.Seccomp)+len(m.Notify))}
	e.b = append(e.b, prepareTag)
	e.bytes(m.Seccomp)
	e.bytes(m.Notify)
	return e.b
}

// isPrepare reports whether a packet is an encoded prepare message.
func isPrepare(b []byte) bool { return len(b) > 0 && b[0] == prepareTag }

// decodePrepare decodes what encodePrepare wrote.
func decodePrepare(b []byte) (*prepareMsg, error) {
	if !isPrepare(b) {
		return nil, errors.New("decode the prepare message: not one")
	}
	d := decoder{b: b[1:]}
	m := prepareMsg{Seccomp: d.bytes(), Notify: d.bytes()}
	switch {
	case d.err != nil:
		return nil, fmt.Errorf("decode the prepare message: %w", d.err)
	case len(d.b) > 0:
		return nil, fmt.Errorf("decode the prepare message: %d bytes left over", len(d.b))
	}
	return &m, nil
}

// encodeStart encodes m for the wire.
func encodeStart(m startMsg) ([]byte, error) {
	e := encoder{b: make([]byte, 0, 4096)}
	e.b = append(e.b, startTag)
	s := m.Spec
	e.string(s.Workspace)
	e.string(s.Dir)
	e.uint(uint64(len(s.Paths)))
	for _, r := range s.Paths {
		e.string(r.Path)
		e.string(string(r.Access))
		e.bool(r.Optional)
		e.bool(r.Exact)
	}
	e.strings(s.Protected)
	e.strings(s.Hidden)
	e.bool(s.PrivateTmp)
	e.bool(s.Network)
	e.bool(s.UnixSockets)
	e.strings(s.Env)
	l := s.Limits
	e.int(int64(l.Timeout))
	e.int(l.OutputBytes)
	for _, v := range []uint64{l.FileSize, l.OpenFiles, l.Processes, l.Memory, l.TmpBytes, l.Disk} {
		e.uint(v)
	}
	e.bool(s.Layers.NoLandlock)
	e.bool(s.Layers.NoSeccomp)
	e.bool(s.Layers.NoNamespaces)
	e.uint(uint64(len(s.Overlays)))
	for _, o := range s.Overlays {
		e.string(o.Dir)
		e.string(o.Lower)
		e.string(o.Work)
	}
	e.string(s.OwnCache)
	e.strings(m.Invocation.Argv)
	e.string(m.Invocation.Tool)
	e.bytes(m.Invocation.Args)
	e.string(m.Invocation.Open)
	e.bytes(m.Seccomp)
	e.bool(m.Namespaces)
	e.bool(m.PrivateNet)
	e.int(int64(m.LandlockABI))
	e.int(int64(m.ProxyPort))
	e.bool(m.MemoryCgroup)
	e.uint(m.NprocExtra)
	e.bool(m.RestoreProtected)
	if len(e.b) > maxMessage {
		return nil, fmt.Errorf("start message of %d bytes exceeds the %d-byte limit", len(e.b), maxMessage)
	}
	return e.b, nil
}

// decodeStart decodes a start message encoded by encodeStart.
func decodeStart(b []byte) (*startMsg, error) {
	if len(b) == 0 || b[0] != startTag {
		return nil, errors.New("expected a start message")
	}
	d := decoder{b: b[1:]}
	var m startMsg
	s := &m.Spec
	s.Workspace = d.string()
	s.Dir = d.string()
	if n := d.count(4); n > 0 {
		s.Paths = make([]PathRule, n)
		for i := range s.Paths {
			s.Paths[i] = PathRule{Path: d.string(), Access: Access(d.string()), Optional: d.bool(), Exact: d.bool()}
		}
	}
	s.Protected = d.strings()
	s.Hidden = d.strings()
	s.PrivateTmp = d.bool()
	s.Network = d.bool()
	s.UnixSockets = d.bool()
	s.Env = d.strings()
	l := &s.Limits
	l.Timeout = time.Duration(d.int())
	l.OutputBytes = d.int()
	for _, v := range []*uint64{&l.FileSize, &l.OpenFiles, &l.Processes, &l.Memory, &l.TmpBytes, &l.Disk} {
		*v = d.uint()
	}
	s.Layers.NoLandlock = d.bool()
	s.Layers.NoSeccomp = d.bool()
	s.Layers.NoNamespaces = d.bool()
	if n := d.count(3); n > 0 {
		s.Overlays = make([]Overlay, n)
		for i := range s.Overlays {
			s.Overlays[i] = Overlay{Dir: d.string(), Lower: d.string(), Work: d.string()}
		}
	}
	s.OwnCache = d.string()
	m.Invocation.Argv = d.strings()
	m.Invocation.Tool = d.string()
	if args := d.bytes(); args != nil {
		m.Invocation.Args = json.RawMessage(args)
	}
	m.Invocation.Open = d.string()
	m.Seccomp = d.bytes()
	m.Namespaces = d.bool()
	m.PrivateNet = d.bool()
	m.LandlockABI = int(d.int())
	m.ProxyPort = int(d.int())
	m.MemoryCgroup = d.bool()
	m.NprocExtra = d.uint()
	m.RestoreProtected = d.bool()
	switch {
	case d.err != nil:
		return nil, fmt.Errorf("decode the start message: %w", d.err)
	case len(d.b) > 0:
		return nil, fmt.Errorf("decode the start message: %d bytes left over", len(d.b))
	}
	return &m, nil
}

type encoder struct{ b []byte }

func (e *encoder) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) int(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) bool(v bool) {
	var c byte
	if v {
		c = 1
	}
	e.b = append(e.b, c)
}
func (e *encoder) bytes(v []byte) {
	e.uint(uint64(len(v)))
	e.b = append(e.b, v...)
}
func (e *encoder) string(v string) {
	e.uint(uint64(len(v)))
	e.b = append(e.b, v...)
}
func (e *encoder) strings(v []string) {
	e.uint(uint64(len(v)))
	for _, s := range v {
		e.string(s)
	}
}

// decoder reads what encoder wrote. The first error sticks; every read
// after it returns a zero value.
type decoder struct {
	b   []byte
	err error
}

var errTruncated = errors.New("truncated")

func (d *decoder) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errTruncated
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) int() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errTruncated
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bool() bool {
	if d.err != nil {
		return false
	}
	if len(d.b) == 0 || d.b[0] > 1 {
		d.err = errors.New("bad boolean")
		return false
	}
	v := d.b[0] == 1
	d.b = d.b[1:]
	return v
}

// count reads a length, refusing one that the rest of the message cannot
// hold at minBytes bytes per element.
func (d *decoder) count(minBytes int) int {
	n := d.uint()
	if d.err == nil && n > uint64(len(d.b)/minBytes) {
		d.err = errTruncated
		return 0
	}
	return int(n)
}

// bytes returns nil for an empty byte string.
func (d *decoder) bytes() []byte {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string { return string(d.bytes()) }

func (d *decoder) strings() []string {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	v := make([]string, n)
	for i := range v {
		v[i] = d.string()
	}
	return v
}

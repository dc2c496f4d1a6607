package jail

import (
	"fmt"
	"reflect"
	"testing"
)

// fill sets every field reachable from v to a distinct non-zero value
// (slices get two elements), so that a field the codec forgets cannot
// survive the round trip. An unknown kind fails the test: the codec must
// learn it first.
func fill(t *testing.T, v reflect.Value, n *int, path string) {
	*n++
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).Tag.Get("codec") == "-" {
				continue // the supervisor's own data, never sent to the child
			}
			fill(t, v.Field(i), n, path+"."+v.Type().Field(i).Name)
		}
	case reflect.String:
		v.SetString(fmt.Sprintf("value-%d", *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(-int64(*n) * 1_000_003)
	case reflect.Uint64:
		v.SetUint(uint64(*n)<<40 | 1)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte(fmt.Sprintf(`"bytes-%d"`, *n)))
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(t, v.Index(i), n, fmt.Sprintf("%s[%d]", path, i))
		}
	default:
		t.Fatalf("%s: kind %v is not in the start codec's test; teach both", path, v.Kind())
	}
}

// roundTrip encodes in and decodes the bytes, which it also returns.
func roundTrip(t *testing.T, in startMsg) ([]byte, *startMsg) {
	t.Helper()
	b, err := encodeStart(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := decodeStart(b)
	if err != nil {
		t.Fatal(err)
	}
	return b, out
}

func TestStartCodecRoundTrip(t *testing.T) {
	var in startMsg
	n := 0
	fill(t, reflect.ValueOf(&in).Elem(), &n, "startMsg")
	_, out := roundTrip(t, in)
	if !reflect.DeepEqual(*out, in) {
		t.Fatalf("round trip changed the message:\nin  %+v\nout %+v", in, *out)
	}
	// Control: the zero message survives too (empty slices come back nil).
	zero, err := encodeStart(startMsg{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := decodeStart(zero); err != nil || !reflect.DeepEqual(*got, startMsg{}) {
		t.Fatalf("zero message: %+v %v", got, err)
	}
}

// TestStartCodecRefusesDamage: every truncation, a wrong tag, trailing
// bytes and a length beyond the message are errors, never a panic or a
// partial message.
func TestStartCodecRefusesDamage(t *testing.T) {
	var in startMsg
	n := 0
	fill(t, reflect.ValueOf(&in).Elem(), &n, "startMsg")
	b, err := encodeStart(in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range len(b) {
		if m, err := decodeStart(b[:i]); err == nil {
			t.Fatalf("a message cut to %d of %d bytes decoded: %+v", i, len(b), m)
		}
	}
	if _, err := decodeStart(append([]byte{'{'}, b[1:]...)); err == nil {
		t.Error("a wrong tag was accepted")
	}
	if _, err := decodeStart(append(b[:len(b):len(b)], 0)); err == nil {
		t.Error("trailing bytes were accepted")
	}
	huge := []byte{startTag, 0xff, 0xff, 0xff, 0xff, 0x0f}
	if _, err := decodeStart(huge); err == nil {
		t.Error("a length beyond the message was accepted")
	}
}

// TestPrepareCodecRoundTrip: both filters survive the prepare message's
// encoding, an empty notify filter stays nil (a worker loads none then),
// and a truncated or padded message is refused.
func TestPrepareCodecRoundTrip(t *testing.T) {
	var in prepareMsg
	n := 0
	fill(t, reflect.ValueOf(&in).Elem(), &n, "prepareMsg")
	b := encodePrepare(in)
	out, err := decodePrepare(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*out, in) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", *out, in)
	}
	if out, err := decodePrepare(encodePrepare(prepareMsg{Seccomp: []byte{1, 2, 3}})); err != nil || out.Notify != nil || len(out.Seccomp) != 3 {
		t.Fatalf("without a notify filter: %+v %v", out, err)
	}
	for _, bad := range [][]byte{b[:len(b)-1], append(append([]byte{}, b...), 0), {startTag}, nil} {
		if _, err := decodePrepare(bad); err == nil {
			t.Errorf("decodePrepare(%q) accepted", bad)
		}
	}
}

// typicalStart is a start message of a default grant's size: 56 path
// rules, 70 protected and 21 hidden paths, 20 variables, a 3 KB filter.
func typicalStart() startMsg {
	spec := Spec{Workspace: "/home/u/src/project", Dir: "/home/u/src/project", Limits: LimitsFor(16 << 30)}
	for i := range 56 {
		spec.Paths = append(spec.Paths, PathRule{Path: fmt.Sprintf("/usr/lib/toolchain/%d", i), Access: Exec, Optional: i%2 == 0})
	}
	for i := range 70 {
		spec.Protected = append(spec.Protected, fmt.Sprintf("/home/u/src/project/.git/protected-%d", i))
	}
	for i := range 21 {
		spec.Hidden = append(spec.Hidden, fmt.Sprintf("/home/u/.secret-%d", i))
	}
	for i := range 20 {
		spec.Env = append(spec.Env, fmt.Sprintf("VAR_%d=/some/value/%d", i, i))
	}
	return startMsg{Spec: spec, Invocation: Invocation{Argv: []string{"/bin/bash", "-c", "echo hi"}}, Seccomp: make([]byte, 3000), Namespaces: true}
}

// TestDecodedStartOwnsItsStrings: the decoded strings do not share the
// received bytes (whose buffer a later read could reuse): changing every
// byte of the message after the decode changes none of them.
func TestDecodedStartOwnsItsStrings(t *testing.T) {
	in := typicalStart()
	b, out := roundTrip(t, in)
	if !reflect.DeepEqual(out.Spec, in.Spec) || !reflect.DeepEqual(out.Invocation, in.Invocation) {
		t.Fatal("control: the round trip changed the message")
	}
	for i := range b {
		b[i] = 'X'
	}
	if !reflect.DeepEqual(out.Spec, in.Spec) || !reflect.DeepEqual(out.Invocation, in.Invocation) {
		t.Fatalf("overwriting the received bytes changed the decoded call: %+v", out.Spec.Paths[:2])
	}
}

// BenchmarkDecodeStart decodes a typical start message, as every call's
// init does on the call's clock.
func BenchmarkDecodeStart(b *testing.B) {
	raw, err := encodeStart(typicalStart())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeStart(raw); err != nil {
			b.Fatal(err)
		}
	}
}

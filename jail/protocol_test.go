package jail

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// TestRecvAfterPeerExitedWithUnreadData: the peer sends a message, we send
// one it never reads, and it exits. The kernel then reports ECONNRESET
// once; the peer's message must still be delivered, then the end.
func TestRecvAfterPeerExitedWithUnreadData(t *testing.T) {
	for range 50 {
		a, b, err := SocketPair()
		if err != nil {
			t.Fatal(err)
		}
		init, worker := &conn{f: a}, &conn{f: b}
		if err := worker.send(message{Error: &StageError{Stage: StageLandlock, Msg: "grant missing"}}); err != nil {
			t.Fatal(err)
		}
		if err := init.send(message{Ready: true}); err != nil { // never read
			t.Fatal(err)
		}
		worker.close()
		m, err := init.recv()
		if err != nil || m.Error == nil || m.Error.Stage != StageLandlock {
			t.Fatalf("the worker's message was lost: %+v, %v", m, err)
		}
		if _, err := init.recv(); !errors.Is(err, errEOF) {
			t.Fatalf("after the message: %v, want the end", err)
		}
		init.close()
	}
}

// TestMessageEncodingAsJSON checks that encodeMessage writes exactly what
// json.Marshal writes, for the messages it encodes itself (the go-ahead,
// {prepared}, {proxy}, results as init reports them, every field set and
// strings that need escaping) and for those it leaves to encoding/json;
// and that decodeMessage reads the go-ahead as encoding/json would, and
// anything else through it.
func TestMessageEncodingAsJSON(t *testing.T) {
	odd := "quote \" \\ <tag> & \u2028 \x00\x1f \xff\xfe é"
	msgs := []message{
		{Go: true}, {Prepared: true}, {Proxy: true},
		{Result: &Result{}},
		{Result: &Result{ExitCode: 130, Signal: "SIGINT", TimedOut: true, Canceled: true, StdoutTruncated: true, StderrTruncated: true, Duration: 1234567, Limit: LimitMemory, LimitDetail: odd}},
		{Result: &Result{ExitCode: -1, Signal: odd, Duration: -5}},
		{Result: &Result{Output: json.RawMessage(`{"a": [1, 2]}`)}},
		{Result: &Result{Violations: []string{"/ws/.envrc"}}},
		{Result: &Result{Connections: []Connection{{Host: "example.com", Port: 443, Via: "CONNECT"}}}},
		{Result: &Result{ExitCode: 1}, Exec: 3},
		{Error: &StageError{Stage: StageExec, Msg: odd}},
		{Go: true, Ready: true}, {Cancel: true}, {Exec: 42},
	}
	for _, m := range msgs {
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeMessage(m)
		if err != nil || string(got) != string(want) {
			t.Errorf("encodeMessage(%+v) = %s, %v; json.Marshal gives %s", m, got, err, want)
		}
	}
	for _, in := range []string{string(goAhead), `{"go":true }`, `{"go":false}`, `{"cancel":true}`, string(prepared)} {
		var want message
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		got, err := decodeMessage([]byte(in))
		if err != nil || got != want {
			t.Errorf("decodeMessage(%s) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	if _, err := decodeMessage([]byte(`{"go":tru`)); err == nil {
		t.Error("a truncated message decoded")
	}
	// Every field of a result set, save those encodeResult leaves to
	// encoding/json: a field added to Result and not to encodeResult
	// fails here.
	var full Result
	v := reflect.ValueOf(&full).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		switch name := f.Name; {
		case f.Tag.Get("json") == "-", name == "Output", name == "Violations", name == "Connections":
		case f.Type.Kind() == reflect.String:
			v.Field(i).SetString(name + " <&> é")
		case f.Type.Kind() == reflect.Bool:
			v.Field(i).SetBool(true)
		case f.Type.Kind() >= reflect.Int && f.Type.Kind() <= reflect.Int64:
			v.Field(i).SetInt(int64(7 + i))
		default:
			t.Fatalf("Result.%s (%s): set it here and teach encodeResult about it", name, f.Type)
		}
	}
	want, _ := json.Marshal(message{Result: &full})
	if got, err := encodeMessage(message{Result: &full}); err != nil || string(got) != string(want) {
		t.Errorf("a result with every field set: encodeMessage gives %s, json.Marshal %s", got, want)
	}
}

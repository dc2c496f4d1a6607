package jail

import (
	"errors"
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

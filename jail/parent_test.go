package jail

import (
	"strings"
	"testing"
)

// TestReportAfterInitExited: an init that failed before its call came (a
// waiting child whose mount was refused) has sent its report and closed
// its end; the call's Start then fails, and Report returns what init said
// (without blocking: init is gone). An init that left no report gives nil.
func TestReportAfterInitExited(t *testing.T) {
	for _, tc := range []struct {
		name   string
		report *StageError
	}{
		{"with a report", &StageError{Stage: StageMount, Msg: "mount /proc: operation not permitted"}},
		{"without one", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			supEnd, initEnd, err := SocketPair()
			if err != nil {
				t.Fatal(err)
			}
			workerEnd, workerPeer, err := SocketPair()
			if err != nil {
				t.Fatal(err)
			}
			defer workerPeer.Close()
			p := NewParent(supEnd, workerEnd, false)
			defer p.Close()
			initConn := &conn{f: initEnd}
			if tc.report != nil {
				if err := initConn.send(message{Error: tc.report}); err != nil {
					t.Fatal(err)
				}
			}
			initConn.close() // init exits
			if err := p.Start(Spec{}, Invocation{Argv: []string{"true"}}, StartOptions{}, nil); err == nil {
				t.Fatal("a call was sent to an init that had exited")
			}
			got := p.Report()
			switch {
			case tc.report == nil && got != nil:
				t.Errorf("a report from an init that sent none: %+v", got)
			case tc.report != nil && (got == nil || got.Stage != StageMount || !strings.Contains(got.Msg, "mount /proc")):
				t.Errorf("Report() = %+v, want %+v", got, tc.report)
			}
		})
	}
}

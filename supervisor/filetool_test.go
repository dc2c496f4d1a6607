package supervisor

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"brig/jail"
)

// whoRead is the test binary's file tool (TestMain): it reads the file
// its call names and says which process read it.
const whoRead = "whoread"

type whoReadOut struct {
	PID  int    `json:"pid"`  // the reader: 1 is init (PID 1 of the call's namespace)
	Data string `json:"data"` // what it read
	Err  string `json:"err"`  // the open's or the read's failure
}

func runWhoRead(open func(string) (*os.File, error), args json.RawMessage) (json.RawMessage, error) {
	var a struct{ Path string }
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, err
	}
	out := whoReadOut{PID: os.Getpid()}
	f, err := open(a.Path)
	if err == nil {
		var b []byte
		b, err = io.ReadAll(io.LimitReader(f, 1<<20))
		out.Data = string(b)
		f.Close()
	}
	if err != nil {
		out.Err = err.Error()
	}
	return json.Marshal(out)
}

// TestFileToolServedByInit: where commands start without a worker, a file
// tool's call (Invocation.Open) is served by the init that serves
// commands — a clone of init takes the call's layers and opens the file,
// init reads it — and that open is the jail's: a file the call was not
// granted is refused by Landlock though the view shows it (the control:
// the same file with a read grant is read, by init), a name other than
// the call's is refused, and a file init does not read (a FIFO) goes to
// a worker (Result.Redo), whose answer the caller gets.
func TestFileToolServedByInit(t *testing.T) {
	sup, ws, spec, _, _ := warmServing(t, 1, 1)
	canaryDir, err := os.MkdirTemp("/var/tmp", "brig-filetool-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(canaryDir) })
	if err := os.Chmod(canaryDir, 0o755); err != nil {
		t.Fatal(err)
	}
	const canary = "BRIGFILETOOLCANARY"
	secret := filepath.Join(canaryDir, "secret")
	if err := os.WriteFile(secret, []byte(canary+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(ws, "plain.txt")
	if err := os.WriteFile(plain, []byte("hello from the workspace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(ws, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	call := func(spec jail.Spec, open, asked string) (whoReadOut, jail.Result) {
		t.Helper()
		args, _ := json.Marshal(map[string]string{"path": asked})
		res, err := sup.Run(context.Background(), spec, jail.Invocation{Tool: whoRead, Args: args, Open: open}, IO{})
		if err != nil {
			t.Fatalf("read %s: %v", asked, err)
		}
		var out whoReadOut
		if err := json.Unmarshal(res.Output, &out); err != nil {
			t.Fatalf("read %s: output %q: %v (result %+v)", asked, res.Output, err, res)
		}
		return out, res
	}

	out, res := call(spec, plain, plain)
	if out.PID != 1 || out.Data != "hello from the workspace\n" || out.Err != "" || res.Redo != "" {
		t.Fatalf("a workspace file: %+v (redo %q), want it read by init (pid 1)", out, res.Redo)
	}

	// Visible in the view, not granted: Landlock refuses the clone's open.
	out, _ = call(spec, secret, secret)
	if strings.Contains(out.Data, canary) || !strings.Contains(out.Err, "permission denied") || out.PID != 1 {
		t.Fatalf("a file outside the grant: %+v, want init's open refused (permission denied) and no canary", out)
	}
	granted := spec
	granted.Paths = append(append([]jail.PathRule(nil), spec.Paths...), jail.PathRule{Path: canaryDir, Access: jail.Read})
	out, _ = call(granted, secret, secret)
	if out.Data != canary+"\n" || out.PID != 1 {
		t.Fatalf("the control, the same file granted: %+v, want the canary read by init", out)
	}

	// The tool opens only the call's file.
	out, _ = call(granted, plain, secret)
	if strings.Contains(out.Data, canary) || !strings.Contains(out.Err, "not the file this call opens") {
		t.Fatalf("a name other than the call's: %+v, want it refused", out)
	}

	// A FIFO is refused at once (a worker's open would wait for a writer).
	out, res = call(spec, fifo, fifo)
	if out.PID != 1 || !strings.Contains(out.Err, jail.ErrNotRegular.Error()) || res.Redo != "" {
		t.Fatalf("a FIFO: %+v (redo %q), want init to refuse it", out, res.Redo)
	}

	// A file of procfs, named by a link in the workspace: init does not
	// read it, a worker does (and the redo is not passed on).
	if err := os.Symlink("/proc/self/status", filepath.Join(ws, "status")); err != nil {
		t.Fatal(err)
	}
	status := filepath.Join(ws, "status")
	out, res = call(spec, status, status)
	if out.PID == 1 || !strings.Contains(out.Data, "Pid:") || out.Err != "" || res.Redo != "" {
		t.Fatalf("a procfs file: %+v (redo %q), want it read by a worker", out, res.Redo)
	}
}

package textfile

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRunIsReadAsJSON: Run, the form init runs, gives Read's result as
// JSON, opens only through the function it is handed (the name as the
// arguments give it), and reports that function's refusal as the
// model's error.
func TestRunIsReadAsJSON(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.txt")
	if err := os.WriteFile(p, []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var asked []string
	open := func(name string) (*os.File, error) {
		asked = append(asked, name)
		return os.Open(name)
	}
	args, _ := json.Marshal(Args{Path: p, Offset: 2})
	out, err := Run(context.Background(), open, args)
	if err != nil {
		t.Fatal(err)
	}
	var got Result
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if want := Read(os.Open, Args{Path: p, Offset: 2}); got != want || !strings.Contains(got.Text, "     2\tbeta") {
		t.Fatalf("Run gave %+v, Read %+v", got, want)
	}
	if len(asked) != 1 || asked[0] != p {
		t.Fatalf("opened %q, want only %q", asked, p)
	}

	refuse := func(name string) (*os.File, error) {
		return nil, &os.PathError{Op: "open", Path: name, Err: syscall.EACCES}
	}
	out, err = Run(context.Background(), refuse, args)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if !got.IsError || !strings.Contains(got.Text, "permission denied; this call was not granted access") {
		t.Fatalf("a refused open gave %+v", got)
	}

	if _, err := Run(context.Background(), open, json.RawMessage(`{"path":`)); err == nil {
		t.Fatal("arguments that do not decode gave no error")
	}
}

// TestReadRefusesSpecialFiles: a FIFO is refused before anything is read
// from it, in the words init uses for one, and opening it does not wait
// for a writer.
func TestReadRefusesSpecialFiles(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	got := Read(OpenNonBlocking, Args{Path: p})
	if !got.IsError || !strings.Contains(got.Text, errNotRegular.Error()) {
		t.Fatalf("a FIFO gave %+v", got)
	}
}

package render_test

import (
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"brig/internal/render"
	"brig/internal/render/engine"
)

// The test binary is also the helper: with serveEnv set it serves, as
// cmd/brig-render does.
const serveEnv = "BRIG_RENDER_TEST_SERVE"

func TestMain(m *testing.M) {
	switch os.Getenv(serveEnv) {
	case "serve":
		if err := engine.Serve(os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	case "die-after-one":
		// Answers one request, then crashes.
		_ = engine.Serve(&oneLine{r: os.Stdin}, os.Stdout)
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// oneLine reads up to the end of the first line, then reports EOF.
type oneLine struct {
	r    *os.File
	done bool
}

func (o *oneLine) Read(p []byte) (int, error) {
	if o.done {
		return 0, os.ErrClosed
	}
	n, err := o.r.Read(p[:1])
	if n == 1 && p[0] == '\n' {
		o.done = true
	}
	return n, err
}

func helper(mode string) func() (*exec.Cmd, error) {
	return func() (*exec.Cmd, error) {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), serveEnv+"="+mode)
		return cmd, nil
	}
}

const doc = "# Head\n\nSome **bold** text.\n\n```go\nfunc main() {}\n```\n"

// TestClientRendersAsTheEngine: through the helper, Markdown and code come
// back exactly as the engine renders them in this process.
func TestClientRendersAsTheEngine(t *testing.T) {
	c := render.NewClient(helper("serve"), slog.Default())
	t.Cleanup(func() { c.Close() })
	e := engine.New()
	for _, style := range []string{"dark", "notty"} {
		want, err := e.Markdown(style, 60, doc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Markdown(style, 60, doc)
		if err != nil || got != want {
			t.Errorf("Markdown(%s) through the helper = %q, %v; the engine gives %q", style, got, err, want)
		}
	}
	if !strings.Contains(mustMarkdown(t, c, "dark"), "\x1b[") {
		t.Error("the dark style has no colour")
	}
	got, want := c.Code("x.go", "func a() {}"), e.Code("x.go", "func a() {}")
	if len(got) == 0 || len(got) != len(want) {
		t.Fatalf("Code through the helper = %+v; the engine gives %+v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("token %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if toks := c.Code("notes.unknown-language", "text"); toks != nil {
		t.Errorf("a file of no known language got tokens: %+v", toks)
	}
}

func mustMarkdown(t *testing.T, r render.Renderer, style string) string {
	t.Helper()
	out, err := r.Markdown(style, 60, doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestClientFallsBackToPlain: a helper that cannot start, or that dies
// during the session, costs the styling, never the text.
func TestClientFallsBackToPlain(t *testing.T) {
	plain, _ := render.Plain{}.Markdown("dark", 60, doc)
	if !strings.Contains(plain, "func main() {}") || strings.Contains(plain, "\x1b") {
		t.Fatalf("Plain lost the text or styled it: %q", plain)
	}
	t.Run("cannot start", func(t *testing.T) {
		c := render.NewClient(func() (*exec.Cmd, error) { return exec.Command("/nonexistent/brig-render"), nil }, slog.Default())
		if err := c.Start(); err == nil {
			t.Fatal("Start of a missing program succeeded")
		}
		if got, err := c.Markdown("dark", 60, doc); err != nil || got != plain {
			t.Errorf("Markdown = %q, %v; want the plain text %q", got, err, plain)
		}
		if toks := c.Code("x.go", "func a() {}"); toks != nil {
			t.Errorf("Code = %+v, want none", toks)
		}
	})
	t.Run("program being written", func(t *testing.T) {
		// The program is still open for writing when the first start
		// comes (ETXTBSY): the start is tried again, with a new Cmd, and
		// succeeds once the writer has closed it.
		prog := filepath.Join(t.TempDir(), "brig-render")
		w, err := os.OpenFile(prog, os.O_WRONLY|os.O_CREATE, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.WriteString("#!/bin/sh\nexec \"$0.real\"\n"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(os.Args[0], prog+".real"); err != nil {
			t.Fatal(err)
		}
		calls := 0
		c := render.NewClient(func() (*exec.Cmd, error) {
			if calls++; calls == 2 {
				w.Close() // the writer is done by the second try
			}
			cmd := exec.Command(prog)
			cmd.Env = append(os.Environ(), serveEnv+"=serve")
			return cmd, nil
		}, slog.Default())
		t.Cleanup(func() { c.Close() })
		if err := c.Start(); err != nil {
			t.Fatalf("Start while the program was being written: %v", err)
		}
		if calls < 2 {
			t.Fatalf("the program was started at the first try (%d), though it was open for writing", calls)
		}
		if got := mustMarkdown(t, c, "dark"); !strings.Contains(got, "\x1b[") {
			t.Errorf("the helper started after a busy try does not render: %q", got)
		}
	})
	t.Run("program not ready", func(t *testing.T) {
		// The TUI's command writes the carried program into a memory
		// file on first use; when that fails, it is asked once, and the
		// text is shown plainly.
		calls := 0
		c := render.NewClient(func() (*exec.Cmd, error) {
			calls++
			return nil, errors.New("no memory file")
		}, slog.Default())
		if err := c.Start(); err == nil || !strings.Contains(err.Error(), "no memory file") {
			t.Fatalf("Start = %v, want the command's error", err)
		}
		if got, err := c.Markdown("dark", 60, doc); err != nil || got != plain {
			t.Errorf("Markdown = %q, %v; want the plain text %q", got, err, plain)
		}
		if calls != 1 {
			t.Errorf("the command was asked %d times, want once", calls)
		}
	})
	t.Run("dies", func(t *testing.T) {
		c := render.NewClient(helper("die-after-one"), slog.Default())
		t.Cleanup(func() { c.Close() })
		// Control: the first answer is the engine's.
		if got := mustMarkdown(t, c, "dark"); !strings.Contains(got, "\x1b[") {
			t.Fatalf("the helper's first answer is not rendered: %q", got)
		}
		if got, err := c.Markdown("dark", 60, doc); err != nil || got != plain {
			t.Errorf("after the helper died, Markdown = %q, %v; want the plain text", got, err)
		}
	})
	t.Run("closed", func(t *testing.T) {
		c := render.NewClient(helper("serve"), slog.Default())
		c.Close()
		if got, _ := c.Markdown("dark", 60, doc); got != plain {
			t.Errorf("a closed client rendered %q, want the plain text", got)
		}
	})
}

func TestPlainWraps(t *testing.T) {
	got, _ := render.Plain{}.Markdown("dark", 10, "aaaa bbbb cccc\nshort")
	if want := "aaaa bbbb\ncccc\nshort"; got != want {
		t.Errorf("Plain.Markdown = %q, want %q", got, want)
	}
}

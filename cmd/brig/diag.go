package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"brig/internal/termsafe"
)

// noteHandler writes brig's diagnostics on the command line (brig -p,
// brig sandbox, …) as brig's other lines are written: "brig: warning: …"
// on stderr, one line each, no timestamp. Only warnings and errors are
// shown (what a sweep took out, a jail worker that could not be used);
// the information records are for the TUI's log file. Every value is made
// safe for a terminal and kept on its line: paths and errors come from
// what a call left in the workspace.
type noteHandler struct {
	mu    *sync.Mutex
	w     io.Writer
	attrs []slog.Attr
	group string
}

func newNoteHandler(w io.Writer) *noteHandler { return &noteHandler{mu: new(sync.Mutex), w: w} }

func (h *noteHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *noteHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString("brig: warning: ")
	if r.Level >= slog.LevelError {
		b.Reset()
		b.WriteString("brig: error: ")
	}
	b.WriteString(termsafe.Line(r.Message))
	var parts []string
	add := func(group string) func(slog.Attr) bool {
		return func(a slog.Attr) bool {
			if !a.Equal(slog.Attr{}) {
				parts = append(parts, termsafe.Line(group+a.Key)+" "+termsafe.Line(a.Value.Resolve().String()))
			}
			return true
		}
	}
	for _, a := range h.attrs {
		add("")(a) // their keys carry the group they were given in
	}
	r.Attrs(add(h.prefix()))
	if len(parts) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(parts, ", "))
	}
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

// prefix is the current group's prefix for a key ("" or "group.").
func (h *noteHandler) prefix() string {
	if h.group == "" {
		return ""
	}
	return h.group + "."
}

func (h *noteHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = slices.Clone(h.attrs)
	for _, a := range as {
		a.Key = h.prefix() + a.Key
		c.attrs = append(c.attrs, a)
	}
	return &c
}

func (h *noteHandler) WithGroup(name string) slog.Handler {
	c := *h
	if c.group != "" {
		name = c.group + "." + name
	}
	c.group = name
	return &c
}

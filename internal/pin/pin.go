// Package pin keeps the content hashes a user pinned when they trusted a
// file a repository ships (.brig/config.toml, .mcp.json): one entry per
// workspace in a small TOML file under brig's config directory, written
// atomically under a lock.
//
// It must not decide what a pinned file is allowed to do; its callers do.
package pin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/BurntSushi/toml"

	"brig/internal/fsutil"
	"brig/internal/userfile"
)

// Hash is the hex SHA-256 a pin holds.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Store is one pin file.
type Store struct {
	Path string
	// Command is what re-pins, for error messages ("brig trust").
	Command string
	// Header is the comment written at the top of the file.
	Header string
}

type file struct {
	Workspace []entry `toml:"workspace"`
}

type entry struct {
	Path    string    `toml:"path"`
	SHA256  string    `toml:"sha256"`
	Trusted time.Time `toml:"trusted"`
}

// maxStore bounds a trust store's size.
const maxStore = 16 << 20

func (s Store) read() (file, error) {
	var f file
	// The store decides which repository files count in full: only the
	// user may be able to have written it (userfile).
	data, err := userfile.ReadFile(s.Path, maxStore)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("read the trust store: %w", err)
	}
	if _, err := toml.Decode(string(data), &f); err != nil {
		return f, fmt.Errorf("the trust store %s is corrupt (%v); remove it and run `%s` again", s.Path, err, s.Command)
	}
	return f, nil
}

// Pinned reports whether workspace's file was pinned with exactly hash sum.
func (s Store) Pinned(workspace, sum string) (bool, error) {
	if s.Path == "" {
		return false, nil
	}
	f, err := s.read()
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(f.Workspace, func(e entry) bool { return e.Path == workspace && e.SHA256 == sum }), nil
}

// Pin records sum for workspace, replacing any earlier pin.
func (s Store) Pin(ctx context.Context, workspace, sum string) error {
	return s.update(ctx, func(es []entry) []entry {
		es = slices.DeleteFunc(es, func(e entry) bool { return e.Path == workspace })
		return append(es, entry{Path: workspace, SHA256: sum, Trusted: time.Now().UTC().Truncate(time.Second)})
	})
}

// Unpin forgets workspace's pin.
func (s Store) Unpin(ctx context.Context, workspace string) error {
	return s.update(ctx, func(es []entry) []entry {
		return slices.DeleteFunc(es, func(e entry) bool { return e.Path == workspace })
	})
}

func (s Store) update(ctx context.Context, change func([]entry) []entry) error {
	return fsutil.WithLock(ctx, s.Path, func() error {
		f, err := s.read()
		if err != nil {
			return err
		}
		f.Workspace = change(f.Workspace)
		var buf bytes.Buffer
		if s.Header != "" {
			buf.WriteString("# " + s.Header + "\n")
		}
		if err := toml.NewEncoder(&buf).Encode(f); err != nil {
			return fmt.Errorf("encode the trust store: %w", err)
		}
		return fsutil.WriteFileAtomic(s.Path, buf.Bytes(), 0o600)
	})
}

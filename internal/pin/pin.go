// Package pin keeps the content hashes a user pinned when they trusted a
// file a repository ships (.brig/config.toml, .mcp.json): one entry per
// workspace in a small TOML file under brig's config directory, written
// atomically under a lock. An entry may also hold the hashes of other files
// the user trusted with that one (the instruction files `brig trust` pins
// beside the config).
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
	// Files are the hashes of other files pinned with this one, by path
	// relative to the workspace; nil (absent) in an entry written before
	// they were pinned, or by a store that pins none, and empty (an empty
	// table) when there were none to pin.
	Files map[string]string `toml:"files"`
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

// Has reports whether workspace has a pin, whatever its hash.
func (s Store) Has(workspace string) (bool, error) {
	if s.Path == "" {
		return false, nil
	}
	f, err := s.read()
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(f.Workspace, func(e entry) bool { return e.Path == workspace }), nil
}

// Files returns the hashes pinned beside workspace's file when that file is
// pinned with exactly sum (ok false otherwise). files is nil when the pin
// holds none: it was made before they were pinned.
func (s Store) Files(workspace, sum string) (files map[string]string, ok bool, err error) {
	if s.Path == "" {
		return nil, false, nil
	}
	f, err := s.read()
	if err != nil {
		return nil, false, err
	}
	for _, e := range f.Workspace {
		if e.Path == workspace && e.SHA256 == sum {
			return e.Files, true, nil
		}
	}
	return nil, false, nil
}

// PinFiles records files (path relative to the workspace → hash) beside
// workspace's pin, replacing any pinned before, if that pin still holds sum:
// a file changed (or re-pinned, or unpinned) since is an error, and nothing
// is recorded. No files is recorded too, as an empty set.
func (s Store) PinFiles(ctx context.Context, workspace, sum string, files map[string]string) error {
	pinned := make(map[string]string, len(files))
	for k, v := range files {
		pinned[k] = v
	}
	found := false
	err := s.update(ctx, func(es []entry) []entry {
		for i := range es {
			if es[i].Path == workspace && es[i].SHA256 == sum {
				es[i].Files, found = pinned, true
			}
		}
		return es
	})
	if err == nil && !found {
		err = fmt.Errorf("%s is not pinned with sha256 %s any more; nothing was pinned, run `%s` again", workspace, sum, s.Command)
	}
	return err
}

// Pin records sum for workspace, replacing any earlier pin (and the files
// pinned with it).
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

package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/BurntSushi/toml"

	"brig/internal/fsutil"
)

// A workspace's .mcp.json is written by whoever wrote the repository. It
// names commands brig would start (jailed, but with whatever grants and
// environment it asks for) and URLs the supervisor would call, so it is
// never read until the user pins its exact content with `brig mcp trust`:
// its SHA-256 goes into a trust store of its own under brig's config
// directory (outside every jail), and one changed byte makes it untrusted
// again. This is separate from `brig trust`, which pins .brig/config.toml:
// a repository may ship either file without the other.

// TrustStorePath is the .mcp.json trust store under brig's config directory.
func TrustStorePath(configDir string) string { return filepath.Join(configDir, "mcp-trust.toml") }

type trustFile struct {
	Workspace []trustEntry `toml:"workspace"`
}

type trustEntry struct {
	Path    string    `toml:"path"`
	SHA256  string    `toml:"sha256"`
	Trusted time.Time `toml:"trusted"`
}

func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func readTrust(path string) (trustFile, error) {
	var tf trustFile
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return tf, nil
	}
	if err != nil {
		return tf, fmt.Errorf("read the MCP trust store %s: %w", path, err)
	}
	if _, err := toml.Decode(string(data), &tf); err != nil {
		return tf, fmt.Errorf("the MCP trust store %s is corrupt (%v); remove it and run `brig mcp trust` again", path, err)
	}
	return tf, nil
}

// pinned reports whether the workspace's .mcp.json with content hash sum
// was trusted.
func pinned(store, workspace, sum string) (bool, error) {
	if store == "" {
		return false, nil
	}
	tf, err := readTrust(store)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(tf.Workspace, func(e trustEntry) bool { return e.Path == workspace && e.SHA256 == sum }), nil
}

// TrustMCPJSON pins the current content of the workspace's .mcp.json and
// returns the servers it defines (for the user to see what they trusted).
func TrustMCPJSON(ctx context.Context, store, workspace string) (string, []Server, error) {
	path := MCPJSONPath(workspace)
	data, err := os.ReadFile(path)
	if err != nil {
		return "", nil, fmt.Errorf("read %s: %w", path, err)
	}
	servers, _, err := parseMCPJSON(path, data)
	if err != nil {
		return "", nil, err
	}
	sum := hashOf(data)
	return sum, servers, updateTrust(ctx, store, func(es []trustEntry) []trustEntry {
		es = slices.DeleteFunc(es, func(e trustEntry) bool { return e.Path == workspace })
		return append(es, trustEntry{Path: workspace, SHA256: sum, Trusted: time.Now().UTC().Truncate(time.Second)})
	})
}

// UntrustMCPJSON forgets the workspace's pinned .mcp.json.
func UntrustMCPJSON(ctx context.Context, store, workspace string) error {
	return updateTrust(ctx, store, func(es []trustEntry) []trustEntry {
		return slices.DeleteFunc(es, func(e trustEntry) bool { return e.Path == workspace })
	})
}

func updateTrust(ctx context.Context, store string, change func([]trustEntry) []trustEntry) error {
	if err := os.MkdirAll(filepath.Dir(store), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(store), err)
	}
	return fsutil.WithLock(ctx, store, func() error {
		tf, err := readTrust(store)
		if err != nil {
			return err
		}
		tf.Workspace = change(tf.Workspace)
		var buf bytes.Buffer
		buf.WriteString("# Workspace .mcp.json files the user trusted, pinned to their content (written by `brig mcp trust`).\n")
		if err := toml.NewEncoder(&buf).Encode(tf); err != nil {
			return fmt.Errorf("encode the MCP trust store: %w", err)
		}
		return fsutil.WriteFileAtomic(store, buf.Bytes(), 0o600)
	})
}

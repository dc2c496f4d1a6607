package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"brig/internal/pin"
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

func store(path string) pin.Store {
	return pin.Store{Path: path, Command: "brig mcp trust", Header: "Workspace .mcp.json files the user trusted, pinned to their content (written by `brig mcp trust`)."}
}

// pinned reports whether the workspace's .mcp.json with content hash sum
// was trusted.
func pinned(path, workspace, sum string) (bool, error) {
	return store(path).Pinned(workspace, sum)
}

// TrustMCPJSON pins the current content of the workspace's .mcp.json and
// returns the servers it defines (for the user to see what they trusted).
func TrustMCPJSON(ctx context.Context, storePath, workspace string) (string, []Server, error) {
	path := MCPJSONPath(workspace)
	data, err := os.ReadFile(path)
	if err != nil {
		return "", nil, fmt.Errorf("read %s: %w", path, err)
	}
	servers, _, err := parseMCPJSON(path, data)
	if err != nil {
		return "", nil, err
	}
	sum := pin.Hash(data)
	return sum, servers, store(storePath).Pin(ctx, workspace, sum)
}

// UntrustMCPJSON forgets the workspace's pinned .mcp.json.
func UntrustMCPJSON(ctx context.Context, path, workspace string) error {
	return store(path).Unpin(ctx, workspace)
}

package mcp

import (
	"context"
	"fmt"
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

// Review is what a workspace's .mcp.json asks for, read but not yet
// trusted: the servers it defines, the entries that would be ignored, and
// the hash of the content that was read.
type Review struct {
	Path     string
	SHA256   string
	Servers  []Server
	Warnings []string
}

// ReviewMCPJSON reads and checks the workspace's .mcp.json without trusting
// it, for the user to see what trusting it would start.
func ReviewMCPJSON(workspace string) (Review, error) {
	r := Review{Path: MCPJSONPath(workspace)}
	data, err := readRepoFile(r.Path)
	if err != nil {
		return r, readError(r.Path, err)
	}
	r.Servers, r.Warnings, err = parseMCPJSON(r.Path, data)
	if err != nil {
		return r, err
	}
	r.SHA256 = pin.Hash(data)
	return r, nil
}

// PinMCPJSON trusts the workspace's .mcp.json if its content still has the
// hash sum the user reviewed; a file changed since is refused.
func PinMCPJSON(ctx context.Context, storePath, workspace, sum string) error {
	path := MCPJSONPath(workspace)
	data, err := readRepoFile(path)
	if err != nil {
		return readError(path, err)
	}
	if now := pin.Hash(data); now != sum {
		return fmt.Errorf("%s changed while you were reviewing it (sha256 %s, reviewed %s); nothing was trusted, run the command again", path, now, sum)
	}
	return store(storePath).Pin(ctx, workspace, sum)
}

// TrustMCPJSON pins the current content of the workspace's .mcp.json and
// returns the servers it defines (ReviewMCPJSON, then PinMCPJSON).
func TrustMCPJSON(ctx context.Context, storePath, workspace string) (string, []Server, error) {
	r, err := ReviewMCPJSON(workspace)
	if err != nil {
		return "", nil, err
	}
	return r.SHA256, r.Servers, PinMCPJSON(ctx, storePath, workspace, r.SHA256)
}

// UntrustMCPJSON forgets the workspace's pinned .mcp.json.
func UntrustMCPJSON(ctx context.Context, path, workspace string) error {
	return store(path).Unpin(ctx, workspace)
}

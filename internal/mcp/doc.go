// Package mcp owns brig's Model Context Protocol client side: reading the
// [mcp.servers.NAME] tables of brig's TOML config (and a workspace
// .mcp.json the user pinned with `brig mcp trust`), compiling each stdio
// server's own jail from its configuration, starting the servers (stdio
// ones as long-lived jailed children through the supervisor, streamable
// HTTP ones called from the supervisor process), naming their tools
// server__tool, offering them by mode, calling them, and turning their
// results into tool Results (text capped, images capped like view_image).
//
// It uses the official MCP Go SDK for the protocol. It must not decide
// whether a call may run (the policy does, with Mcp rules, before the
// executor calls a tool here), implement native tools, or put anything in a
// server's environment that the user did not configure for that server.
package mcp

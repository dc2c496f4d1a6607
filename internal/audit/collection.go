package audit

import "brig/internal/audit/collect"

// The workspace is gathered inside the jail by package collect, which the
// jail's worker program links without the rest of the audit (its provider
// client, policy and supervisor); these names are collect's own.
type (
	// Collection is what the collector gathered.
	Collection = collect.Collection
	// File is one file sent for review.
	File = collect.File
	// Skip is a file or directory that is not sent, and why.
	Skip = collect.Skip
	// Limits bound a collection.
	Limits = collect.Limits
	// Role is what a file is to the repository's build and tooling.
	Role = collect.Role
)

// CollectTool is the name of the jail's Go tool that collects the workspace.
const CollectTool = collect.CollectTool

// The roles the manifest lists (see collect).
const (
	RoleRuns  = collect.RoleRuns
	RoleBuild = collect.RoleBuild
	RoleCI    = collect.RoleCI
	RoleEntry = collect.RoleEntry
)

// DefaultLimits are the collection limits without flags.
func DefaultLimits() Limits { return collect.DefaultLimits() }

// ReadCollection decodes the collector's output.
func ReadCollection(out []byte) (*Collection, error) { return collect.ReadCollection(out) }

// RoleOf gives a workspace-relative path its role and the reason.
func RoleOf(p string) (Role, string) { return collect.RoleOf(p) }

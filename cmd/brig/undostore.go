package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"brig/internal/auditlog"
	"brig/internal/checkpoint"
	"brig/policy"
)

// openUndo opens the workspace's checkpoint store and the audit log, both
// under brig's state directory (never granted to a jail).
func openUndo(stateDir, workspace string) (*checkpoint.Store, *auditlog.Log, error) {
	store, err := checkpoint.Open(checkpointDir(stateDir, workspace), checkpoint.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("%w (brig keeps what each call changes there, for undo; check that %s is writable)", err, stateDir)
	}
	return store, auditLog(stateDir), nil
}

// checkpointDir is a workspace's checkpoint store.
func checkpointDir(stateDir, workspace string) string {
	return filepath.Join(stateDir, "checkpoints", policy.WorkspaceID(workspace))
}

// auditLog is the user's audit log.
func auditLog(stateDir string) *auditlog.Log { return auditlog.Open(filepath.Join(stateDir, "audit")) }

// auditMode records a session's mode change.
func auditMode(ctx context.Context, l *auditlog.Log, session, workspace string, from, to policy.Mode) {
	if _, err := l.Append(ctx, auditlog.Record{Kind: auditlog.KindMode, Session: session, Workspace: workspace, Mode: &auditlog.ModeChange{From: string(from), To: string(to)}}); err != nil {
		slog.Warn("could not write the audit record of a mode change", "err", err)
	}
}

// auditTrust records a trust decision.
func auditTrust(ctx context.Context, stateDir, workspace string, t auditlog.Trust) error {
	if _, err := auditLog(stateDir).Append(ctx, auditlog.Record{Kind: auditlog.KindTrust, Workspace: workspace, Trust: &t}); err != nil {
		return fmt.Errorf("the change is made, but it is not in the audit log: %w", err)
	}
	return nil
}

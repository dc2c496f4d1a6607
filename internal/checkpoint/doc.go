// Package checkpoint owns brig's undo: snapshots of the paths a tool call
// may write, taken just before and just after the call, the change set
// between them, and the restore that puts them back.
//
// A store (one per workspace, under brig's state directory, which no jail
// is granted) holds content-addressed objects — each file content and each
// directory tree once, however many snapshots share it — in one append-only
// pack, and a journal of events: the snapshot before a call (written before
// the call starts, so a crash mid-call still leaves it, and synced while
// the call runs), the snapshot after
// it with its change set, and each undo. A snapshot reads only files whose
// stat data (size, modification and change times, inode, device, mode,
// owner) differs from what the last snapshot saw, so a repository with few
// changes costs a walk of stat calls. Trees that tools regenerate
// (node_modules, target/ beside Cargo.toml …) and git's own .git are left
// out and reported; git's state is never read or written.
//
// Everything it reads or writes in a workspace goes through directory
// descriptors opened without following symlinks (see fsops.go): a call can
// plant links anywhere it may write, and the supervisor runs with the
// user's full rights.
//
// It must not decide what a call may write (the policy and the jail do),
// ask the user anything, or reach up into the agent or the front ends.
package checkpoint

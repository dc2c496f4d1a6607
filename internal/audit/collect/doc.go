// Package collect owns the part of `brig audit` that runs inside the jail:
// the collector tool (Write, run by the worker as CollectTool), its skip
// rules, the redaction of secret-looking values before anything leaves the
// jail, the roles files play in a build (RoleOf), and reading the
// collection back (ReadCollection).
//
// It is linked into the jail's worker program, so it must import nothing
// but the jail package and small helpers: no provider client, policy or
// supervisor (package audit holds those). It must not reach the network or
// write files; it reads the tree it is given and writes only to w.
package collect

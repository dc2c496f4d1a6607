// Package jail owns what a tool call may do and the child side that makes the
// kernel enforce it.
//
// A [Spec] is plain, serialisable data: the paths a call may read, execute or
// write, the paths that stay read-only whatever else is granted, network and
// unix-socket access, limits and environment additions. The supervisor sends
// a Spec and an [Invocation] to a re-executed copy of the brig binary; that
// child applies, in order, a new session with no terminal, the parent-death
// signal, rlimits, capability drop, no_new_privs, Landlock and seccomp, and
// only then runs the tool. Nothing here reads brig's configuration or keys,
// talks to a provider, or decides policy: the policy layer builds Specs.
//
// Every jailed call is two processes, both this binary:
//
//	supervisor ──fd 3──► init  (session leader; PID 1 of a PID namespace, or a
//	                       │     child subreaper in an outer Landlock domain)
//	                       └──fd 3──► worker (nested Landlock domain + seccomp,
//	                                          then exec of the command or a Go tool)
//
// The init process is trusted code: it mounts the namespace view, forwards
// the Spec, waits for the worker and, when the call ends for any reason,
// kills every process left of the call with kill(-1), so setsid and double
// forks cannot outlive it. In a PID namespace kill(-1) reaches only that
// namespace; without one, init first enters an outer Landlock domain
// (signal scoping, and "refer" granted everywhere so renames keep working)
// in which the worker's domain nests, and kill(-1) reaches only those two.
// Either way the worker's own scoped domain keeps the tool from signalling
// or tracing init.
//
// Protocol on fd 3 (a SOCK_SEQPACKET socketpair, one JSON [message] per packet):
//
//	| from       | to         | message          | when                                  |
//	|------------|------------|------------------|---------------------------------------|
//	| supervisor | init       | {start}          | once: Spec, Invocation, seccomp BPF   |
//	| init       | worker     | {start}          | forwarded after the mounts are ready  |
//	| worker     | init       | {error}          | a stage failed; the worker exits 126  |
//	| worker     | init       | {output}         | a Go tool finished                    |
//	| worker     | init       | (EOF)            | exec succeeded (fd 3 is close-on-exec)|
//	| init       | supervisor | {result}/{error} | the call ended, or a stage failed     |
//	| supervisor | init       | {cancel} or EOF  | timeout, cancel, or supervisor death  |
//
// Typical use (the supervisor package wraps this):
//
//	spec := jail.Spec{Workspace: ws, Paths: []jail.PathRule{{Path: ws, Access: jail.Write}}}
//	res, err := sup.Run(ctx, spec, jail.Invocation{Argv: []string{"make", "test"}})
package jail

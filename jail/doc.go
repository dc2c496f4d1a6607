// Package jail owns what a tool call may do and the child side that makes the
// kernel enforce it.
//
// A [Spec] is plain, serialisable data: the paths a call may read, execute or
// write, the paths that stay read-only whatever else is granted, network and
// unix-socket access, limits and environment additions. The supervisor sends
// a Spec and an [Invocation] to a re-executed copy of the brig binary; that
// child applies, in order, a new session with no terminal, the parent-death
// signal, rlimits, capability drop, no_new_privs, seccomp (a base filter
// loaded before the call is known, and a narrowing one for the call) and
// Landlock, and only then runs the tool. Nothing here reads brig's configuration or keys,
// talks to a provider, or decides policy: the policy layer builds Specs.
//
// A jailed call is two processes, plus the command: init and the
// worker, both this package's code — except a command in fresh
// namespaces, which init starts itself, with no worker (direct.go: the
// same steps, in a clone from a thread of init that has a mount and IPC
// namespace of its own for the call, and its own protocol table; such an
// init serves calls in turn), and a file tool's call (FileTool: read_file),
// whose one file such a clone opens with every layer in place and init
// then reads). brig carries them as two programs
// (cmd/brig-jail-init, and cmd/brig-jail with the Go tools), hands init
// its own at a fixed descriptor (InitExeFD; InitArgs says so) and
// executes init through it; init closes it and runs the worker from the
// program the supervisor sends as its first message ({worker_exe}), so
// that a session's first init starts while the worker's program is still
// being written. A build that carries none runs its own binary as both.
//
//	supervisor ──fd 3──► init  (session leader; PID 1 of a PID namespace, or a
//	    │                  │     child subreaper in an outer Landlock domain)
//	    │                  ├──fd 3──► worker (unprivileged; builds the Landlock
//	    └──────fd 4────────┼─────────►        ruleset, runs a Go tool itself)
//	                       └── command (started by the worker as init's child:
//	                                    Landlock, narrowing seccomp, then exec)
//
// The supervisor starts init in its namespaces with StartInNamespaces: a
// clone that shares the supervisor's memory until the exec (no copy of a
// large process per call), in which the child writes its own one-line ID
// maps and raises the ambient capabilities init needs for its mounts.
//
// The init process is trusted code: it mounts the namespace view, waits for
// the call to end and, when it ends for any reason, kills every process
// left of the call with kill(-1), so setsid and double forks cannot outlive
// it. In a PID namespace kill(-1) reaches only that
// namespace; without one, init first enters an outer Landlock domain
// (signal scoping, and "refer" granted everywhere so renames keep working)
// in which the command's domain nests, and kill(-1) reaches only those.
// Either way the command's own scoped domain keeps it from signalling or
// tracing init and the worker.
//
// The worker loads the base seccomp filter the supervisor sends it as soon
// as it starts (loading the large filter is not on the call's clock). It
// gets the call from the supervisor at the same time as init gets the part
// of the Spec that shapes the view (init hands the worker's socket, its fd
// 4, down and closes it) and, while init
// builds the view, applies rlimits, checks that it holds no privilege, and
// builds the Landlock ruleset (rules on paths the view changes, /tmp and /dev/shm,
// wait for init's {ready}). It starts the tool only after the supervisor's
// {go}, which follows the supervisor's record of the protected paths (what
// it sweeps after the call must be recorded before the tool can act). A Go tool then runs in the worker after
// Landlock (psx: every thread) and seccomp (TSYNC: every thread). A command
// starts in a single-threaded copy of the worker (clone with CLONE_VM,
// CLONE_VFORK and CLONE_PARENT) that applies, in order, the parent-death
// signal, Landlock and seccomp to itself, marks every descriptor above stdio
// close-on-exec and execs; so the command never shares a thread or an
// address space with unrestricted code, and the worker's other threads run
// none of its code. The worker then names the command to init and exits.
//
// Protocol on fd 3 and fd 4 (SOCK_SEQPACKET socketpairs, one message per
// packet: JSON, except {start}, which is binary (codec.go) because it is
// decoded on the call's critical path, and {prepare}, which is binary
// because it carries 4 KB of BPF):
//
//	| from       | to         | fd | message          | when                                   |
//	|------------|------------|----|------------------|----------------------------------------|
//	| supervisor | init       | 3  | {worker_exe}     | first, to a carried init: the worker's |
//	|            |            |    |                  | program (SCM_RIGHTS); init forks the   |
//	|            |            |    |                  | worker then                            |
//	| supervisor | worker     | 4  | {prepare}        | at start-up: the base seccomp filter   |
//	| worker     | supervisor | 4  | {listener}       | without namespaces: the notify filter's|
//	|            |            |    |                  | listener (SCM_RIGHTS), once loaded     |
//	| worker     | supervisor | 4  | {prepared}       | the base filter is loaded: the child   |
//	|            |            |    |                  | waits for its call (its start is over) |
//	| supervisor | worker     | 4  | {start}          | once: Spec, Invocation, narrowing BPF  |
//	| supervisor | init       | 3  | {start}          | right after: the Spec's view part      |
//	| supervisor | worker     | 4  | {go}             | the supervisor has recorded the        |
//	|            |            |    |                  | protected paths; then it closes fd 4   |
//	| init       | worker     | 3  | {ready}          | the view is built                      |
//	| worker     | init       | 3  | {error}          | a stage failed; the worker exits 126/7 |
//	| worker     | init       | 3  | {output}         | a Go tool finished                     |
//	| worker     | init       | 3  | {exec}           | the command (pid) exec'd; worker exits |
//	| init       | supervisor | 3  | {result}/{error} | the call ended, or a stage failed      |
//	| supervisor | init       | 3  | {cancel} or EOF  | timeout, cancel, or supervisor death   |
//
// A warm child that is never used sees EOF on both sockets (or on fd 3
// before its {worker_exe}) and exits. The
// call ends when the command exits, or, without a command, when the
// worker has exited and its socket is drained; or when init, which makes
// itself and so every process of the call the OOM killer's first choice,
// finds on its watch (every 0.1 s) that the call exceeds its memory (its
// processes plus its tmpfs), sits at its process limit, or uses up its
// disk allowance: it then kills the tree and names the limit in the
// Result.
//
// Typical use (the supervisor package wraps this):
//
//	spec := jail.Spec{Workspace: ws, Paths: []jail.PathRule{{Path: ws, Access: jail.Write}}}
//	res, err := sup.Run(ctx, spec, jail.Invocation{Argv: []string{"make", "test"}})
package jail

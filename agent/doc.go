// Package agent owns the conversation: the turn loop that streams a model's
// answer, runs the tools it asks for through the policy and the jail, and
// keeps the history provider-valid whatever happens (errors, denials,
// interrupts, cut responses). It emits events for a front end to drain.
// It also runs the read-only subagents the task tool starts: each an Agent
// of its own with a plan-mode policy, whose events carry the task call's id.
//
// It must not render anything, read the terminal, or speak a provider's
// wire format (agent/provider and its clients do); tools run only through
// the Executor, which goes through the policy and the supervisor.
package agent

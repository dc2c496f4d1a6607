// Package tools owns brig's native tool set: one Definition per tool (its
// typed name, description, JSON schema, effect, the policy.Call its
// arguments ask for, how it is invoked in the jail) and the implementations
// that run inside the jail worker after every kernel restriction is in place.
//
// It must not decide what a call may do (that is package policy, which turns
// a policy.Call into a jail.Spec), spawn or supervise processes (package
// supervisor), talk to a provider, or render anything. The implementations
// never check paths against a workspace themselves: what they can reach is
// exactly what the kernel lets the jail reach. Model-facing failures are
// Results with IsError set, never Go errors.
package tools

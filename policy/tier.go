package policy

import "fmt"

// Tier is a decision about one action.
type Tier string

// The tiers. Deny beats Ask beats Allow when several rules match.
const (
	Allow Tier = "allow"
	Ask   Tier = "ask"
	Deny  Tier = "deny"
)

// RuleSet is the rules of one or more config files, by tier.
type RuleSet struct {
	Allow, Ask, Deny []Rule
}

// Decision is the tier for an action and the rule that decided it (nil
// when no rule matched and the caller's default applies).
type Decision struct {
	Tier Tier
	Rule *Rule
}

func (d Decision) String() string {
	if d.Rule == nil {
		return fmt.Sprintf("%s (no rule matched)", d.Tier)
	}
	return fmt.Sprintf("%s by %s (%s)", d.Tier, d.Rule, d.Rule.Source)
}

// Merge returns the rules of s followed by those of o. Order does not change
// a decision (the tier does); it only decides which of several rules of the
// same tier is reported.
func (s RuleSet) Merge(o RuleSet) RuleSet {
	return RuleSet{
		Allow: append(append([]Rule(nil), s.Allow...), o.Allow...),
		Ask:   append(append([]Rule(nil), s.Ask...), o.Ask...),
		Deny:  append(append([]Rule(nil), s.Deny...), o.Deny...),
	}
}

// decide applies match to the deny, ask and allow rules, in that order of
// precedence; def is the tier when nothing matches.
func (s RuleSet) decide(def Tier, match func(Rule) bool) Decision {
	for _, tier := range []struct {
		t     Tier
		rules []Rule
	}{{Deny, s.Deny}, {Ask, s.Ask}, {Allow, s.Allow}} {
		for i := range tier.rules {
			if match(tier.rules[i]) {
				return Decision{Tier: tier.t, Rule: &tier.rules[i]}
			}
		}
	}
	return Decision{Tier: def}
}

// DecideCommand is the tier of one simple command (its words), def when no
// rule matches. A compound command is decided part by part by the caller
// (see CombineTiers).
func (s RuleSet) DecideCommand(words []string, def Tier) Decision {
	return s.decide(def, func(r Rule) bool { return r.MatchCommand(words) })
}

// DecidePath is the tier of reading (write=false) or writing an absolute,
// canonical path. A Write rule also covers reading: what may be written may
// be read.
func (s RuleSet) DecidePath(p string, write bool, ctx Context, def Tier) Decision {
	return s.decide(def, func(r Rule) bool {
		switch r.Scope {
		case ScopeWrite:
			return r.MatchPath(p, ctx)
		case ScopeRead:
			return !write && r.MatchPath(p, ctx)
		}
		return false
	})
}

// DecideHost is the tier of fetching from host.
func (s RuleSet) DecideHost(host string, def Tier) Decision {
	return s.decide(def, func(r Rule) bool { return r.MatchHost(host) })
}

// DecideTool is the tier of calling the MCP tool SERVER__TOOL.
func (s RuleSet) DecideTool(name string, def Tier) Decision {
	return s.decide(def, func(r Rule) bool { return r.MatchTool(name) })
}

// split separates the rules of the user's own files and answers from
// those of an untrusted repository config (Source.Tighten), which may only
// make a decision stricter.
func (s RuleSet) split() (own, tighten RuleSet) {
	part := func(rules []Rule, t bool) []Rule {
		var out []Rule
		for _, r := range rules {
			if r.Source.Tighten == t {
				out = append(out, r)
			}
		}
		return out
	}
	own = RuleSet{Allow: part(s.Allow, false), Ask: part(s.Ask, false), Deny: part(s.Deny, false)}
	tighten = RuleSet{Allow: nil, Ask: part(s.Ask, true), Deny: part(s.Deny, true)}
	return own, tighten
}

// naming keeps every Deny rule and only the Allow and Ask rules that name
// the place entry explicitly (see Rule.Names): what may open a credential
// or a later-executed file.
func (s RuleSet) naming(entry string, ctx Context) RuleSet {
	keep := func(rules []Rule) []Rule {
		var out []Rule
		for _, r := range rules {
			if r.Names(entry, ctx) {
				out = append(out, r)
			}
		}
		return out
	}
	return RuleSet{Allow: keep(s.Allow), Ask: keep(s.Ask), Deny: s.Deny}
}

// stricter reports whether tier a is stricter than b (Deny > Ask > Allow).
func stricter(a, b Tier) bool {
	rank := map[Tier]int{Allow: 1, Ask: 2, Deny: 3}
	return rank[a] > rank[b]
}

// CombineTiers is the tier of a compound action from the tiers of its parts:
// Deny if any part is denied, Allow only if every part is allowed, Ask
// otherwise (and for no parts at all: nothing was analysed, so ask).
func CombineTiers(parts ...Tier) Tier {
	if len(parts) == 0 {
		return Ask
	}
	all := true
	for _, t := range parts {
		if t == Deny {
			return Deny
		}
		all = all && t == Allow
	}
	if all {
		return Allow
	}
	return Ask
}

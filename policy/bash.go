package policy

// This file decides a bash call: every simple command the analysis found
// gets a tier from the user's rules, the built-in lists and its risks,
// and the line gets the combination.

import (
	"fmt"
	"slices"
	"strings"
)

// CommandDecision is the tier of one simple command and why.
type CommandDecision struct {
	Command Command `json:"command"`
	Tier    Tier    `json:"tier"`
	Reason  string  `json:"reason"`
	// Rule is the user rule that matched, if any; Builtin the pattern of
	// the built-in entry that matched, if any.
	Rule    *Rule  `json:"-"`
	Builtin string `json:"builtin,omitempty"`
	// Reads: the built-in entry that matched says the command writes no
	// file (BuiltinRule.Reads), whichever rule decided its tier.
	Reads bool `json:"reads,omitempty"`
	// WritesAsReader: the command asks only because it writes a file
	// (echo x > notes.txt), which the built-in entry that allows it
	// without one does not cover. No rule is offered for it: a rule names
	// the command, not the file, so Bash(echo:*) would let every echo
	// write every file of the workspace.
	WritesAsReader bool `json:"writes_as_reader,omitempty"`
	// RuleAsks: an ask rule (the user's, or an untrusted repository's)
	// decided the tier, so the call asks in every mode.
	RuleAsks bool `json:"rule_asks,omitempty"`
}

// BashDecision is the tier of a whole command line.
type BashDecision struct {
	Tier     Tier              `json:"tier"`
	Reason   string            `json:"reason"`
	Commands []CommandDecision `json:"commands"`
	// Risky are the line-level risks (the commands carry their own).
	Risky []string `json:"risky,omitempty"`
	// Unparsed: the line could not be parsed, so nothing of what it runs
	// is known (bash runs its first lines before it meets the error).
	Unparsed bool `json:"unparsed,omitempty"`
}

// DecideBash decides the command line of a bash call under rs.
//
// For each simple command, in this order: a user Deny rule denies; a
// built-in Deny entry denies unless a user Allow or Ask rule names the
// command (a blanket Bash or Bash(*) does not count); a Risky command is
// asked about whatever allows it; a user Allow or Ask rule decides; a
// built-in entry decides; anything else is asked about. The line is
// denied if any command is, allowed only if every command is (and there
// is at least one), and asked about otherwise. A line that does not parse
// is asked about, with the parse error as the reason; an empty line (or
// only comments) is denied: there is nothing to run.
//
// This is the command tier only: the caller still resolves and classifies
// each command's Paths against the workspace and the Read/Write rules.
func DecideBash(rs RuleSet, line string) BashDecision {
	if strings.TrimSpace(line) == "" {
		return BashDecision{Tier: Deny, Reason: "empty command line: nothing to run"}
	}
	an, err := ParseShell(line)
	if err != nil {
		return BashDecision{Tier: Ask, Unparsed: true, Reason: fmt.Sprintf("the command line could not be analysed (%v), so it needs your approval", err)}
	}
	d := BashDecision{Risky: an.Risky}
	builtins := BuiltinRules()
	var tiers []Tier
	for _, c := range an.Commands {
		cd := decideCommand(rs, builtins, c)
		d.Commands = append(d.Commands, cd)
		tiers = append(tiers, cd.Tier)
	}
	if len(an.Commands) == 0 {
		if len(an.Risky) == 0 && !strings.Contains(line, "=") {
			d.Tier, d.Reason = Deny, "no command to run (only comments)"
			return d
		}
		d.Tier, d.Reason = Ask, "no command found, only assignments"
	} else {
		d.Tier = CombineTiers(tiers...)
	}
	if len(an.Risky) > 0 && d.Tier == Allow {
		d.Tier = Ask
	}
	switch d.Tier {
	case Allow:
		d.Reason = "every command in the line is allowed"
	case Deny:
		for _, cd := range d.Commands {
			if cd.Tier == Deny {
				d.Reason = fmt.Sprintf("%s: %s", cd.Command.Quoted(), cd.Reason)
				break
			}
		}
	case Ask:
		if d.Reason != "" {
			break
		}
		for _, cd := range d.Commands {
			if cd.Tier != Allow {
				d.Reason = fmt.Sprintf("%s: %s", cd.Command.Quoted(), cd.Reason)
				break
			}
		}
		if d.Reason == "" && len(an.Risky) > 0 {
			d.Reason = an.Risky[0]
		}
	}
	return d
}

// decideCommand decides one simple command: by the user's own rules and
// the built-in lists, then an untrusted repository config's rules, which
// only count where they are stricter.
func decideCommand(rs RuleSet, builtins []BuiltinRule, c Command) CommandDecision {
	own, tighten := rs.split()
	cd := decideOwn(own, builtins, c)
	t := commandRule(tighten, c)
	if t.Rule != nil && stricter(t.Tier, cd.Tier) {
		cd.Rule = t.Rule
		cd.Tier, cd.Reason = t.Tier, fmt.Sprintf("%s by %s (%s, an untrusted repository config: it can only tighten)", verb(t.Tier), t.Rule, t.Rule.Source)
		cd.RuleAsks = t.Tier == Ask
	}
	return cd
}

// commandRule is the rule of rs that decides c's words; a deny rule also
// holds against the program's base name (/usr/bin/git push is git push).
func commandRule(rs RuleSet, c Command) Decision {
	user := rs.DecideCommand(c.Words, "")
	if user.Tier != Deny && len(c.Words) > 0 && !c.Dynamic[0] && baseName(c.Words[0]) != c.Words[0] {
		alt := append([]string{baseName(c.Words[0])}, c.Words[1:]...)
		if d := rs.DecideCommand(alt, ""); d.Tier == Deny {
			user = d
		}
	}
	return user
}

func decideOwn(rs RuleSet, builtins []BuiltinRule, c Command) CommandDecision {
	cd := CommandDecision{Command: c}
	user := commandRule(rs, c)
	if user.Rule != nil {
		cd.Rule = user.Rule
	}
	if user.Tier == Deny {
		cd.Tier, cd.Reason = Deny, fmt.Sprintf("denied by %s (%s)", user.Rule, user.Rule.Source)
		return cd
	}
	if len(c.Words) == 0 {
		// `> file` alone: only a blanket rule can speak for it.
		cd.Tier, cd.Reason = Ask, "a redirection without a command"
		if len(c.Risky) == 0 && user.Rule != nil {
			cd.Tier, cd.Reason = user.Tier, fmt.Sprintf("%s by %s (%s)", verb(user.Tier), user.Rule, user.Rule.Source)
			cd.RuleAsks = user.Tier == Ask
		}
		return cd
	}
	b := matchBuiltin(builtins, c)
	if b != nil {
		cd.Builtin, cd.Reads = b.Pattern, b.Reads
	}
	named := user.Rule != nil && user.Rule.Pattern != "" && user.Rule.Pattern != "*"
	if b != nil && b.Tier == Deny && !named {
		cd.Tier, cd.Reason = Deny, "denied by the built-in list: "+b.Reason
		return cd
	}
	if len(c.Risky) > 0 {
		cd.Tier, cd.Reason = Ask, "needs approval: "+strings.Join(c.Risky, "; ")
		return cd
	}
	if user.Rule != nil {
		cd.Tier, cd.Reason = user.Tier, fmt.Sprintf("%s by %s (%s)", verb(user.Tier), user.Rule, user.Rule.Source)
		cd.RuleAsks = user.Tier == Ask
		return cd
	}
	if b != nil {
		cd.Tier = b.Tier
		cd.Reason = verb(b.Tier) + " by the built-in list: " + b.Reason
		if w := redirectedFiles(c); b.Tier == Allow && len(w) > 0 {
			// go test ./... > calc.go: the entry vouches for what the
			// program writes, not for the file the line sends its output
			// to, which the model chose.
			cd.Tier = Ask
			cd.Reason = fmt.Sprintf("it writes %s, and the built-in entry for %s covers the program, not a file its output is sent to", strings.Join(w, ", "), progName(c))
			cd.WritesAsReader = true
		}
		return cd
	}
	cd.Tier, cd.Reason = Ask, "no rule or built-in entry matches"
	if w := writtenPaths(c); len(w) > 0 {
		if b := matchBuiltin(builtins, withoutWrites(c)); b != nil && b.Tier == Allow {
			// echo x > notes.txt: the entry that allows echo is not
			// what is missing; the write is.
			cd.Reason = fmt.Sprintf("it writes %s, and the built-in entry for %s covers it only when it writes no file", strings.Join(w, ", "), progName(c))
			cd.WritesAsReader = true
		}
	}
	return cd
}

// writtenPaths are the files c writes, as written.
func writtenPaths(c Command) []string {
	var out []string
	for _, p := range c.Paths {
		if p.Write {
			out = append(out, p.Text)
		}
	}
	return out
}

// redirectedFiles are the files c's redirections write (a target brig
// cannot see, "> $f", included), devices left out.
func redirectedFiles(c Command) []string {
	var out []string
	for _, r := range c.Redirects {
		if !r.Write || r.Target == "" && !r.Dynamic || isDevice(r.Target) {
			continue
		}
		t := r.Target
		if t == "" {
			t = "a file named at run time"
		}
		out = append(out, t)
	}
	return out
}

// withoutWrites is c without its writing redirections and with its
// paths read only: what the built-in lists would say of c if it wrote
// nothing.
func withoutWrites(c Command) Command {
	c.Redirects = slices.DeleteFunc(slices.Clone(c.Redirects), func(r Redirect) bool { return r.Write })
	c.Paths = slices.DeleteFunc(slices.Clone(c.Paths), func(p PathArg) bool { return p.Write })
	return c
}

func verb(t Tier) string {
	switch t {
	case Allow:
		return "allowed"
	case Deny:
		return "denied"
	}
	return "asked"
}

// noPrefix are the programs for which "always allow" is never saved as a
// prefix rule: interpreters and wrappers run whatever follows (sed and awk
// included: GNU sed's e command and awk's system() run shell commands),
// and these others change or remove whatever they are pointed at.
var noPrefix = wordSet(`sh bash dash zsh ksh mksh ash fish env sudo su doas pkexec runuser xargs eval exec
	command builtin nohup timeout nice ionice stdbuf time setsid flock watch busybox find trap source .
	node deno bun perl ruby php lua npx pnpx bunx uvx pipx sed gsed awk gawk mawk nawk busybox
	rm rmdir mv cp dd chmod chown chgrp ln shred truncate kill pkill killall curl wget ssh scp rsync tee
	alias shopt`)

// subcommandTools take a subcommand as their second word; the prefix
// rule for them names it.
var subcommandTools = wordSet(`go cargo npm pnpm yarn bun pip pip3 uv poetry git gh docker podman kubectl
	rustup dotnet mvn gradle bundle gem composer terraform helm make`)

// gitDeleting are the git subcommands with forms that delete what git
// cannot bring back and undo does not hold (deletesGit decides which).
const gitDeleting = "clean reflog prune repack gc stash branch tag update-ref symbolic-ref fetch pull send-pack"

// riskyGit are git subcommands that are only ever saved exactly: a prefix
// rule saved for a harmless form (git update-ref refs/heads/x HEAD) would
// allow the forms that delete (git update-ref -d refs/heads/main), which
// otherwise ask in every mode.
var riskyGit = wordSet("push config remote reset filter-branch filter-repo send-email checkout restore rebase " + gitDeleting)

// SuggestRule returns the rule to save when the user answers "always
// allow" for c: a prefix rule (prefix true) where one is safe, else the
// exact command; "" when not even the exact command can be written as a
// rule that matches it again.
func SuggestRule(c Command) (rule string, prefix bool) {
	if len(c.Words) == 0 || c.Dynamic[0] || c.Glob[0] {
		return "", false
	}
	if readsProgramFromInput(c) {
		// Bash(python3 -) for a heredoc's script allows every script
		// fed on stdin, not this one (new user, 2026-12-03): no rule
		// can name what runs.
		return "", false
	}
	for i, w := range c.Words {
		if c.Dynamic[i] || c.Glob[i] || w == "" || strings.ContainsAny(w, " \t\n*()") {
			// Only the words before this one can be written down.
			return prefixRule(c, i)
		}
	}
	if r, ok := prefixRule(c, len(c.Words)); ok {
		return r, true
	}
	return exactRule(c.Words)
}

// prefixRule returns the prefix rule for c using at most its first n
// words, or the exact rule when no prefix is safe.
func prefixRule(c Command, n int) (string, bool) {
	name := c.Words[0]
	base := baseName(name)
	if noPrefix()[base] || pythonName().MatchString(base) || strings.Contains(name, "/") {
		if n == len(c.Words) {
			return exactRule(c.Words)
		}
		return "", false
	}
	words := 1
	if subcommandTools()[base] {
		words = 2
		if len(c.Words) < 2 || strings.HasPrefix(c.Words[1], "-") {
			if n == len(c.Words) {
				return exactRule(c.Words)
			}
			return "", false
		}
		if base == "git" && riskyGit()[c.Words[1]] {
			if n == len(c.Words) {
				return exactRule(c.Words)
			}
			return "", false
		}
		if names("npm pnpm yarn bun")[base] && (c.Words[1] == "run" || c.Words[1] == "run-script" || c.Words[1] == "exec") {
			words = 3
		}
	}
	if words > n || words > len(c.Words) {
		return "", false
	}
	rule := fmt.Sprintf("Bash(%s:*)", strings.Join(c.Words[:words], " "))
	if r, err := ParseRule(rule, Source{}); err != nil || !r.MatchCommand(c.Words) {
		return "", false
	}
	return rule, true
}

func exactRule(words []string) (string, bool) {
	rule := fmt.Sprintf("Bash(%s)", strings.Join(words, " "))
	if r, err := ParseRule(rule, Source{}); err != nil || !r.MatchCommand(words) {
		return "", false
	}
	return rule, false
}

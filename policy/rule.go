// Package policy decides what a tool call may do before the kernel enforces
// it: permission rules, tiers, modes and shell analysis, compiled into a
// least-privilege jail.Spec.
//
// This file holds the rule language. A rule is one of
//
//	Read(PATH-GLOB)  Write(PATH-GLOB)  Bash(COMMAND)  Net(domain:HOST)  Mcp(SERVER__TOOL)
//
// or a bare scope name (Bash, Read, …), which matches everything in that
// scope. Net rules decide every host a call reaches, through the egress
// proxy or with web_fetch; WebFetch(domain:HOST) is their older name and
// means the same. A host is a name, *.name for its subdomains, or an IP
// address (IPv6 in brackets); a wildcard and a bare Net never match an IP
// address. Path globs: `*` and `?` never cross `/`, `**` matches any number of
// whole segments, and `dir/**` also matches `dir` itself; `~/` is the home
// directory, `./` (or no leading `/`) the workspace, `/` the filesystem root.
// Commands: `Bash(git status)` matches that command exactly (words compared
// after splitting on blanks), `Bash(go test:*)` any command whose first words
// are `go test`, `Bash(*)` any command.
//
// The package must not execute anything, touch the network, or enforce: it
// returns decisions and Specs; the supervisor and the jail act on them.
package policy

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"brig/internal/termsafe"
)

// Scope is what a rule governs.
type Scope string

// The scopes.
const (
	ScopeRead     Scope = "Read"
	ScopeWrite    Scope = "Write"
	ScopeBash     Scope = "Bash"
	ScopeNet      Scope = "Net"
	ScopeWebFetch Scope = "WebFetch" // the older name of Net
	ScopeMcp      Scope = "Mcp"
)

func scopes() []Scope {
	return []Scope{ScopeRead, ScopeWrite, ScopeBash, ScopeNet, ScopeWebFetch, ScopeMcp}
}

// hostScope reports whether s decides hosts.
func hostScope(s Scope) bool { return s == ScopeNet || s == ScopeWebFetch }

// Source says where a rule was written, for error messages and for
// explaining a decision.
type Source struct {
	File string // empty for built-in rules
	Line int
	// Tighten marks a rule of a repository config the user has not
	// trusted: it may make a decision stricter, never looser, than the
	// user's own rules and brig's built-ins.
	Tighten bool
}

func (s Source) String() string {
	switch {
	case s.File == "":
		return "built-in"
	case s.Line > 0:
		return fmt.Sprintf("%s:%d", s.File, s.Line)
	}
	return s.File
}

// Rule is one parsed rule.
type Rule struct {
	Scope Scope
	// Pattern is the text between the parentheses, as written ("" for a
	// bare scope, which matches everything in it).
	Pattern string
	Source  Source

	words  []string // Bash: the command words (exact or prefix)
	prefix bool     // Bash: "words:*"
}

// String returns the rule as it would be written.
func (r Rule) String() string {
	if r.Pattern == "" {
		return string(r.Scope)
	}
	return fmt.Sprintf("%s(%s)", r.Scope, r.Pattern)
}

// RuleError is a malformed rule, with where it was written.
type RuleError struct {
	Source Source
	Rule   string
	Msg    string
}

func (e *RuleError) Error() string {
	return fmt.Sprintf("%s: rule %q: %s", e.Source, e.Rule, e.Msg)
}

// ParseRule parses one rule written at src.
func ParseRule(text string, src Source) (Rule, error) {
	fail := func(format string, a ...any) (Rule, error) {
		return Rule{}, &RuleError{Source: src, Rule: text, Msg: fmt.Sprintf(format, a...)}
	}
	if err := termsafe.Check(text); err != nil {
		// A rule must read on the screen the way it matches: a control
		// character could erase the lines around it, a bidi override
		// reorder it, a zero-width space split a word unseen.
		return fail("%v; write the rule without it", err)
	}
	t := strings.TrimSpace(text)
	name, arg, hasArg := strings.Cut(t, "(")
	if hasArg {
		if !strings.HasSuffix(arg, ")") {
			return fail("missing the closing parenthesis")
		}
		arg = strings.TrimSpace(strings.TrimSuffix(arg, ")"))
		if strings.ContainsAny(arg, "()") && Scope(name) != ScopeBash {
			return fail("parentheses inside the pattern")
		}
	}
	var scope Scope
	for _, s := range scopes() {
		if name == string(s) {
			scope = s
		}
	}
	if scope == "" {
		var names []string
		for _, s := range scopes() {
			names = append(names, string(s))
		}
		return fail("unknown scope %q%s (want one of %s)", name, didYouMean(name, names), strings.Join(names, ", "))
	}
	if hasArg && arg == "" {
		return fail("empty pattern (write the bare scope, %s, to match everything)", scope)
	}
	r := Rule{Scope: scope, Pattern: arg, Source: src}
	if arg == "" {
		return r, nil
	}
	switch scope {
	case ScopeBash:
		return parseBash(r, fail)
	case ScopeRead, ScopeWrite:
		if strings.Contains(arg, "\x00") {
			return fail("NUL in a path")
		}
		if _, err := path.Match(strings.ReplaceAll(arg, "**", "*"), ""); err != nil {
			return fail("bad glob: %v", err)
		}
		if strings.HasPrefix(arg, "~") && arg != "~" && !strings.HasPrefix(arg, "~/") {
			return fail("only ~/ (your own home) is supported, not ~user")
		}
	case ScopeNet, ScopeWebFetch:
		host, ok := strings.CutPrefix(arg, "domain:")
		if !ok || host == "" {
			return fail("write %s(domain:HOST), e.g. %s(domain:go.dev) or %s(domain:*.github.com)", scope, scope, scope)
		}
		if _, err := ruleHost(host); err != nil {
			return fail("%v", err)
		}
	case ScopeMcp:
		if !strings.Contains(arg, "__") {
			return fail("write Mcp(SERVER__TOOL) or Mcp(SERVER__*)")
		}
		if _, err := path.Match(arg, ""); err != nil {
			return fail("bad pattern: %v", err)
		}
	}
	return r, nil
}

func parseBash(r Rule, fail func(string, ...any) (Rule, error)) (Rule, error) {
	p := r.Pattern
	if p == "*" {
		r.prefix = true // no words: every command
		return r, nil
	}
	if before, ok := strings.CutSuffix(p, ":*"); ok {
		r.prefix, p = true, before
	}
	if strings.Contains(p, "*") {
		return fail("* is only allowed alone, Bash(*), or as a prefix rule, Bash(go test:*)")
	}
	r.words = strings.Fields(p)
	if len(r.words) == 0 {
		return fail("no command")
	}
	if why := neverMatches(r.words); why != "" {
		return fail("%s", why)
	}
	return r, nil
}

// neverMatches says why a Bash rule's words can match no command, or "":
// a rule is compared with one simple command's words after the shell
// analysis took out operators, assignments, redirections and quoting, so
// Bash(make | tee log) or Bash(FOO=1 make) was accepted and never matched
// (new user, 2026-12-03).
func neverMatches(words []string) string {
	for i, w := range words {
		switch {
		case w == ";" && i > 0 && words[i-1] == "{}":
			// find -exec CMD {} ; ends its command with the word ";".
		case w == "&&" || w == "||" || w == "|" || w == "|&" || w == ";" || w == "&" || strings.HasSuffix(w, ";") || strings.HasSuffix(w, "&&"):
			return fmt.Sprintf("%q joins commands, and a rule matches one simple command: write a rule for each command of the line", w)
		case strings.Contains(w, "$(") || strings.Contains(w, "`"):
			return fmt.Sprintf("%q holds a command substitution, which asks whatever the rules say: leave it out", w)
		case strings.ContainsAny(w, `"'`):
			return fmt.Sprintf("%q has quotes, and a rule is compared with the words after the shell took the quoting out: write it without them", w)
		case redirection(w):
			return fmt.Sprintf("%q is a redirection, which is not one of a command's words (the files it writes are decided on their own): leave it out", w)
		case i == 0 && isAssignWord(w):
			return fmt.Sprintf("%q is an assignment, which is not one of a command's words (a variable it exports is decided on its own, see Shell analysis in the README): leave it out", w)
		}
	}
	return ""
}

// redirection reports whether a rule's word is a shell redirection
// (>, >>, 2>&1, <file, &>log …).
func redirection(w string) bool {
	w = strings.TrimLeft(w, "0123456789&")
	return strings.HasPrefix(w, ">") || strings.HasPrefix(w, "<")
}

// MatchCommand reports whether a Bash rule matches a simple command given as
// its words (after the shell analysis has removed assignments and quoting).
func (r Rule) MatchCommand(words []string) bool {
	if r.Scope != ScopeBash {
		return false
	}
	if r.Pattern == "" {
		return true
	}
	if len(words) < len(r.words) || !r.prefix && len(words) != len(r.words) {
		return false
	}
	for i, w := range r.words {
		if words[i] != w {
			return false
		}
	}
	return true
}

// Context is what a path pattern is relative to.
type Context struct {
	Home      string // for ~/
	Workspace string // for ./ and relative patterns
}

// AbsPattern returns a Read or Write rule's glob as an absolute pattern.
func (r Rule) AbsPattern(ctx Context) (string, error) {
	p := r.Pattern
	switch {
	case p == "":
		return "/**", nil
	case p == "~" || strings.HasPrefix(p, "~/"):
		if ctx.Home == "" {
			return "", errors.New("the rule uses ~ but the home directory is unknown")
		}
		p = filepath.Join(ctx.Home, strings.TrimPrefix(p, "~"))
	case !strings.HasPrefix(p, "/"):
		if ctx.Workspace == "" {
			return "", errors.New("the rule is workspace-relative but there is no workspace")
		}
		p = filepath.Join(ctx.Workspace, p)
	}
	// Cleaned: ".." is resolved the way the kernel will see the path.
	return path.Clean(p), nil
}

// literalBase is the part of a Read or Write rule's absolute pattern
// before its first wildcard: the place the rule names.
func (r Rule) literalBase(ctx Context) (string, bool) {
	pat, err := r.AbsPattern(ctx)
	if err != nil {
		return "", false
	}
	base := "/"
	for _, seg := range split(pat) {
		if strings.ContainsAny(seg, `*?[\`) {
			break
		}
		base = path.Join(base, seg)
	}
	return base, true
}

// hides lists the existing paths a Read deny rule hides from every jailed
// call: the path it names, or the directory before a final /** (both
// resolved, where they exist), and for a pattern with wildcards that names
// no place of its own (./config/*.key) the paths it matches now. Only
// paths inside the workspace or the home directory, and neither itself,
// are hidden: a rule over the system's files (Read(/usr/**)) would leave
// no call able to run. A pattern with ** before its end (**/*.env) names
// no place; it is decided on the paths a call names.
func (r Rule) hides(ctx Context) []string {
	if r.Scope != ScopeRead || r.Pattern == "" {
		return nil
	}
	pat, err := r.AbsPattern(ctx)
	if err != nil {
		return nil
	}
	segs := split(pat)
	if len(segs) > 0 && segs[len(segs)-1] == "**" {
		segs = segs[:len(segs)-1]
	}
	if slices.Contains(segs, "**") {
		return nil
	}
	p := "/" + strings.Join(segs, "/")
	matches := []string{p}
	if strings.ContainsAny(p, `*?[\`) {
		if matches, err = filepath.Glob(p); err != nil {
			return nil
		}
	}
	var out []string
	for _, m := range matches {
		real, err := filepath.EvalSymlinks(m)
		if err != nil {
			continue // absent: nothing to hide
		}
		for _, root := range []string{ctx.Workspace, ctx.Home} {
			if root != "" && real != root && within(real, root) {
				out = append(out, real)
				break
			}
		}
	}
	return out
}

// Names reports whether a Read or Write rule names the place entry
// explicitly: its literal part lies at or below entry, so Read(~/.ssh/**)
// names ~/.ssh, while Read(~/**), Read(/**) and a bare Read do not.
func (r Rule) Names(entry string, ctx Context) bool {
	base, ok := r.literalBase(ctx)
	return ok && (r.Scope == ScopeRead || r.Scope == ScopeWrite) && r.Pattern != "" && within(base, entry)
}

// MatchPath reports whether a Read or Write rule matches an absolute,
// canonical path.
func (r Rule) MatchPath(p string, ctx Context) bool {
	if r.Scope != ScopeRead && r.Scope != ScopeWrite {
		return false
	}
	pat, err := r.AbsPattern(ctx)
	if err != nil || !path.IsAbs(p) {
		return false
	}
	return globMatch(split(pat), split(path.Clean(p)))
}

func split(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// globMatch matches path segments against pattern segments: "**" matches
// any number of whole segments (zero included, so dir/** matches dir), any
// other segment matches one path segment with path.Match (* and ? never
// cross /, since segments hold none). A "**" that failed at a segment is
// remembered, so a pattern of many (an untrusted repository's deny rule
// /**/**/…/zz took 17 s for one path, and a session's supervisor for
// ever: red team, round 5) costs at most patterns × segments².
func globMatch(pat, segs []string) bool {
	// One ** alone cannot take the matcher back over its own work: only a
	// pattern with more keeps what failed.
	memo := 0
	for _, p := range pat {
		if p == "**" {
			memo++
		}
	}
	var failed map[[2]int]bool
	var match func(pi, si int) bool
	match = func(pi, si int) bool {
		for pi < len(pat) {
			if pat[pi] == "**" {
				for pi+1 < len(pat) && pat[pi+1] == "**" {
					pi++ // **/** matches what ** does
				}
				key := [2]int{pi, si}
				if failed[key] {
					return false
				}
				for i := si; i <= len(segs); i++ {
					if match(pi+1, i) {
						return true
					}
				}
				if memo > 1 {
					if failed == nil {
						failed = map[[2]int]bool{}
					}
					failed[key] = true
				}
				return false
			}
			if si == len(segs) {
				return false
			}
			if ok, err := path.Match(pat[pi], segs[si]); err != nil || !ok {
				return false
			}
			pi, si = pi+1, si+1
		}
		return si == len(segs)
	}
	return match(0, 0)
}

// ruleHost checks and normalises the host of a Net rule: a host name (a
// leading *. for its subdomains), or an IP address (IPv6 in brackets).
func ruleHost(h string) (string, error) {
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if inner, ok := strings.CutPrefix(h, "["); ok {
		a, err := netip.ParseAddr(strings.TrimSuffix(inner, "]"))
		if !strings.HasSuffix(inner, "]") || err != nil || !a.Is6() || a.Zone() != "" {
			return "", fmt.Errorf("%q is not an IPv6 address in brackets", h)
		}
		return a.Unmap().String(), nil
	}
	if a, err := netip.ParseAddr(h); err == nil && a.Is4() {
		return a.String(), nil
	}
	// A URL or a port where a host goes: say what to write (new user,
	// 2026-12-03: "pkg.go.dev:443" was only "not a host name").
	if rest, ok := strings.CutPrefix(h, "https://"); ok || strings.HasPrefix(h, "http://") {
		if !ok {
			rest = strings.TrimPrefix(h, "http://")
		}
		host, _, _ := strings.Cut(rest, "/")
		return "", fmt.Errorf("%q is a URL: give its host alone (domain:%s); a Net rule covers every port and path", h, host)
	}
	if host, port, err := net.SplitHostPort(h); err == nil && port != "" {
		return "", fmt.Errorf("%q has a port: give the host alone (domain:%s); a Net rule covers every port", h, host)
	}
	name := strings.TrimPrefix(h, "*.")
	if name == "" || strings.Contains(name, "*") {
		return "", fmt.Errorf("a domain is a host name, optionally starting with *. for its subdomains, or an IP address ([::1] for IPv6)")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return "", fmt.Errorf("%q is not a host name (letters, digits, - and . only), optionally starting with *. for its subdomains", h)
		}
	}
	return h, nil
}

// CheckHost reports whether host names one host a connection could reach
// (a name or an address, not a rule's *. pattern), with what is wrong.
func CheckHost(host string) error {
	h := strings.TrimSpace(host)
	if strings.Contains(h, "*") {
		return fmt.Errorf("%q is a pattern, not a host: give the host a connection reaches (e.g. api.example.com); a rule Net(domain:*.example.com) is what covers its subdomains", host)
	}
	if _, err := ruleHost(h); err != nil {
		return fmt.Errorf("%q is not a host name (letters, digits, - and .) or an IP address ([::1] for IPv6)", host)
	}
	return nil
}

// NormalHost is a host as rules compare it: lower case, no trailing dot,
// an IP address in its canonical form without brackets.
func NormalHost(host string) string {
	h := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(host), "."))
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().String()
	}
	return h
}

// isIP reports whether a normal host is an IP address.
func isIP(host string) bool {
	_, err := netip.ParseAddr(host)
	return err == nil
}

// MatchHost reports whether a Net (or WebFetch) rule matches a host. A
// bare rule and a *. rule match names only, never an IP address.
func (r Rule) MatchHost(host string) bool {
	if !hostScope(r.Scope) {
		return false
	}
	host = NormalHost(host)
	if r.Pattern == "" {
		return !isIP(host)
	}
	want, err := ruleHost(strings.TrimPrefix(r.Pattern, "domain:"))
	if err != nil {
		return false
	}
	if sub, ok := strings.CutPrefix(want, "*."); ok {
		return !isIP(host) && strings.HasSuffix(host, "."+sub)
	}
	return host == want
}

// NamesHost reports whether a Net rule names host exactly (no wildcard):
// only such a rule lets a host reach loopback, private and other
// non-public addresses through the proxy.
func (r Rule) NamesHost(host string) bool {
	return r.MatchHost(host) && r.Pattern != "" && !strings.HasPrefix(strings.TrimPrefix(r.Pattern, "domain:"), "*.")
}

// MatchTool reports whether an Mcp rule matches a tool named SERVER__TOOL.
func (r Rule) MatchTool(name string) bool {
	if r.Scope != ScopeMcp {
		return false
	}
	if r.Pattern == "" {
		return true
	}
	ok, err := path.Match(r.Pattern, name)
	return err == nil && ok
}

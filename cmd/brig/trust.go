package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"brig/internal/auditlog"
	"brig/internal/instructions"
	"brig/internal/mcp"
	"brig/internal/pin"
	"brig/jail"
	"brig/policy"
)

// trustOptions are the inputs of `brig trust`.
type trustOptions struct {
	Revoke    bool
	Yes       bool
	Workspace string
	procEnv
	confirmIn
}

// confirmIn is where a trust command reads the user's answer.
type confirmIn struct {
	In io.Reader
	// Interactive says In is a terminal someone types at; without it a
	// trust command only pins with --yes.
	Interactive bool
}

// stdinConfirm is the process's own standard input.
func stdinConfirm(cmd *cobra.Command) confirmIn {
	return confirmIn{In: cmd.InOrStdin(), Interactive: isTerminal(os.Stdin)}
}

func newTrustCmd() *cobra.Command {
	o := &trustOptions{}
	run := commandRun(o, &o.procEnv, nil, nil, runTrust)
	cmd := &cobra.Command{
		Use:   "trust",
		Short: "Accept this repository's .brig/config.toml in full and its instruction files as your own (pinned to their current content), after showing what it grants",
		Long: `A repository's .brig/config.toml is untrusted input: until you trust it,
only its deny and ask rules and the [limits] it lowers apply. brig trust shows what trusting it would
change (allow rules, sandbox grants, agent settings, MCP servers, each with
what it reaches) and the instruction files (AGENTS.md or CLAUDE.md,
.brig/instructions.md) the model would then read as your own words, asks,
and pins each file's SHA-256; changing one byte of the config makes it
untrusted again, and changing an instruction file makes that file the
repository's words again, until you run brig trust again. Without a
terminal it pins only with --yes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.confirmIn = stdinConfirm(cmd)
			return run(cmd, args)
		},
	}
	cmd.Flags().BoolVar(&o.Revoke, "revoke", false, "forget the trust in this workspace's repository config")
	cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "trust without asking (for scripts: review the file first)")
	cmd.Flags().StringVar(&o.Workspace, "workspace", "", "workspace root (default: the enclosing git root, or the current directory)")
	return cmd
}

func runTrust(ctx context.Context, o *trustOptions) error {
	wp, err := openPolicy(o.procEnv, o.Workspace, policy.ModeAsk, false)
	if err != nil {
		return err
	}
	if o.Revoke {
		if trusted, err := policy.TrustedAtAll(wp.Files); err != nil {
			return err
		} else if !trusted {
			// Nothing to forget, and nothing for the audit log.
			fmt.Fprintf(o.Stdout, "brig: %s was not trusted; nothing to revoke\n", wp.Files.Repo)
			return nil
		}
		if err := policy.Untrust(ctx, wp.Files); err != nil {
			return err
		}
		fmt.Fprintf(o.Stdout, "brig: %s is untrusted: only its deny and ask rules and the [limits] it lowers apply, and its instruction files are the repository's words\n", wp.Files.Repo)
		return auditTrust(ctx, wp.Dirs.State, wp.Workspace, auditlog.Trust{File: wp.Files.Repo, Action: "revoke", What: "config"})
	}
	c, sum, warnings, err := policy.LoadConfig(wp.Files.Repo)
	if err != nil {
		return err
	}
	if sum == "" {
		return fmt.Errorf("%s does not exist: there is no repository config to trust. To make this workspace's instruction files (AGENTS.md) your words, trust an empty config: mkdir -p %s && touch %s && brig trust", wp.Files.Repo, filepath.Dir(wp.Files.Repo), wp.Files.Repo)
	}
	servers, serverWarnings, err := mcp.ServersIn(wp.Files.Repo)
	if err != nil {
		return err
	}
	// What the repository's rules would try on protected paths, judged on
	// its rules alone.
	alone, err := policy.New(wp.Workspace, policy.Loaded{Rules: c.Rules}, policy.ModeAsk, wp.Policy.Machine)
	if err != nil {
		return err
	}
	w := o.Stdout
	configTrusted := false
	for _, l := range wp.Policy.Layers {
		if l.Kind == "repository" && l.Trusted {
			configTrusted = true
		}
	}
	current, err := instructionTrust(wp)
	if err != nil {
		return err
	}
	instr, err := instructions.Load(wp.Workspace, current, readableBy(wp.Policy))
	if err != nil {
		return err
	}
	if configTrusted && !instr.Untrusted {
		fmt.Fprintf(w, "brig: %s is already trusted as it is (sha256 %s)", wp.Files.Repo, sum)
		if len(instr.Sources) > 0 {
			fmt.Fprint(w, ", and so are its instruction files")
		}
		fmt.Fprintln(w, "; nothing to do")
		return nil
	}
	if configTrusted {
		fmt.Fprintf(w, "%s is already trusted as it is (sha256 %s).\n", wp.Files.Repo, sum)
	} else {
		fmt.Fprintf(w, "%s (sha256 %s) comes with the repository.\n", wp.Files.Repo, sum)
		var repo policy.Layer
		for _, l := range wp.Policy.Layers {
			if l.Kind == "repository" {
				repo = l
			}
		}
		fmt.Fprintf(w, "Until you trust it, %s.\n", repo.Applies())
		adds := printTrustChanges(w, c, servers, wp.Policy.Places, wp.Policy.Machine.Limits)
		if len(c.Rules.Ask)+len(c.Rules.Deny)+len(repo.Limits) > 0 {
			fmt.Fprintln(w, "\nAlready in effect (a repository may always tighten):")
			for _, l := range repo.Limits {
				fmt.Fprintf(w, "  lower %s\n", l)
			}
			for _, group := range []struct {
				name  string
				rules []policy.Rule
			}{{"ask", c.Rules.Ask}, {"deny", c.Rules.Deny}} {
				for _, r := range group.rules {
					fmt.Fprintf(w, "  %-5s %s  (line %d)\n", group.name, r, r.Source.Line)
				}
			}
		}
		for _, warn := range warnings {
			fmt.Fprintf(w, "warning: %s\n", warn)
		}
		for _, warn := range serverWarnings {
			fmt.Fprintf(w, "warning: %s\n", warn)
		}
		for _, warn := range alone.ProtectedRuleWarnings() {
			fmt.Fprintf(w, "warning: %s\n", warn)
		}
		if !adds {
			fmt.Fprintln(w, "\nTrusting it adds nothing: everything in it only tightens.")
		}
	}
	printInstructionPins(w, wp.Workspace, instr)
	question := "Trust this file as it is now, and apply all of the above?"
	if len(instr.Sources) > 0 {
		question = "Trust these files as they are now, and apply all of the above?"
	}
	if err := confirm(o.procEnv, o.confirmIn, o.Yes, question, "brig trust --yes"); err != nil {
		return err
	}
	// The instruction files pinned are exactly those shown: one changed
	// since is refused (TrustReviewed does the same for the config).
	now, err := instructions.Load(wp.Workspace, instructions.Trust{}, readableBy(wp.Policy))
	if err != nil {
		return err
	}
	files := map[string]string{}
	for _, src := range now.Sources {
		files[src.Path] = src.SHA256
	}
	if !sameFiles(instr, files) {
		return fmt.Errorf("the instruction files changed while you were reviewing them; nothing was trusted, run brig trust again")
	}
	if err := policy.TrustReviewed(ctx, wp.Files, sum); err != nil {
		return err
	}
	if err := trustPins(wp.Files).PinFiles(ctx, wp.Workspace, sum, files); err != nil {
		return err
	}
	if err := auditTrust(ctx, wp.Dirs.State, wp.Workspace, auditlog.Trust{File: wp.Files.Repo, SHA256: sum, Action: "trust", What: "config"}); err != nil {
		return err
	}
	for _, src := range instr.Sources {
		if err := auditTrust(ctx, wp.Dirs.State, wp.Workspace, auditlog.Trust{File: filepath.Join(wp.Workspace, src.Path), SHA256: src.SHA256, Action: "trust", What: "instructions"}); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "brig: trusted %s (sha256 %s)\n", wp.Files.Repo, sum)
	for _, src := range instr.Sources {
		fmt.Fprintf(w, "brig: trusted %s (sha256 %s) as your own instructions\n", filepath.Join(wp.Workspace, src.Path), src.SHA256)
	}
	if len(instr.Sources) > 0 {
		fmt.Fprintln(w, "Any change to the config makes it untrusted again, and any change to an instruction file makes it the repository's words again (brig trust pins the new content); `brig trust --revoke` undoes this.")
	} else {
		fmt.Fprintln(w, "Any change to the file makes it untrusted again; `brig trust --revoke` undoes this.")
	}
	return nil
}

// trustPins is the store brig trust pins the repository config in (see
// policy.Trust), with the instruction files pinned beside it.
func trustPins(f policy.Files) pin.Store {
	return pin.Store{Path: f.Trust, Command: "brig trust", Header: "Repository configs the user trusted, pinned to their content (written by `brig trust`)."}
}

// instructionTrust is what the user trusted of the workspace's instruction
// files: nothing unless its repository config is trusted as it is now, then
// the hashes brig trust pinned beside the config's (nil for a trust made
// before brig pinned instruction files).
func instructionTrust(wp *workspacePolicy) (instructions.Trust, error) {
	for _, l := range wp.Policy.Layers {
		if l.Kind != "repository" || !l.Exists || !l.Trusted {
			continue
		}
		pins, ok, err := trustPins(wp.Files).Files(wp.Workspace, l.SHA256)
		if err != nil || !ok {
			return instructions.Trust{}, err
		}
		return instructions.Trust{Workspace: true, Pins: pins}, nil
	}
	return instructions.Trust{}, nil
}

// loadInstructions loads the workspace's instruction files for a session:
// each is framed as the user's words only as brig trust pinned it. When a
// trusted workspace has one that is not, it says so once, on stderr beside
// the other trust notices (the TUI shows it in its banner).
func loadInstructions(pe procEnv, wp *workspacePolicy) (*instructions.Set, error) {
	trust, err := instructionTrust(wp)
	if err != nil {
		return nil, err
	}
	set, err := instructions.Load(wp.Workspace, trust, readableBy(wp.Policy))
	if err != nil {
		return nil, err
	}
	if n := set.Notice(); n != "" {
		fmt.Fprintf(pe.Stderr, "brig: warning: %s\n", n)
	}
	return set, nil
}

// printInstructionPins shows the instruction files brig trust pins, as it
// shows the config: path and SHA-256, and whether the user trusted them
// before.
func printInstructionPins(w io.Writer, workspace string, s *instructions.Set) {
	for _, n := range s.Notes {
		fmt.Fprintf(w, "warning: instructions: %s\n", n)
	}
	if len(s.Sources) == 0 {
		return
	}
	fmt.Fprintln(w, "\nInstruction files — once trusted, the model reads them as your own words (review them first):")
	for _, src := range s.Sources {
		state := ""
		switch {
		case src.Trusted:
			state = "  trusted as it is"
		case src.Changed:
			state = "  ⚠ changed since you trusted it"
		}
		fmt.Fprintf(w, "  %s (sha256 %s, %d bytes)%s\n", filepath.Join(workspace, src.Path), src.SHA256, src.Size, state)
	}
	fmt.Fprintln(w, "Changing one makes it the repository's words again, until you run brig trust again.")
}

// sameFiles reports whether files are exactly the instruction files of s.
func sameFiles(s *instructions.Set, files map[string]string) bool {
	if len(files) != len(s.Sources) {
		return false
	}
	for _, src := range s.Sources {
		if files[src.Path] != src.SHA256 {
			return false
		}
	}
	return true
}

// printTrustChanges shows what trusting a repository config adds: its
// allow rules, sandbox grants, agent settings and MCP servers, each with
// what it reaches. It reports whether there is anything.
func printTrustChanges(w io.Writer, c policy.Config, servers []mcp.Server, pl policy.Places, now jail.Limits) bool {
	adds := false
	section := func(title string) {
		if !adds {
			fmt.Fprintln(w, "Trusting it adds:")
		}
		adds = true
		fmt.Fprintf(w, "\n  %s\n", title)
	}
	if len(c.Rules.Allow) > 0 {
		section("allow rules — calls they match run without asking:")
		for _, r := range c.Rules.Allow {
			fmt.Fprintf(w, "    %-28s %s  (line %d)\n", r, ruleReach(r, pl), r.Source.Line)
		}
	}
	s := c.Sandbox
	if s.Network || s.UnixSockets || len(s.Read)+len(s.Write)+len(s.Env)+len(s.NetPresets) > 0 {
		section("sandbox — every bash call of this workspace gets:")
		if s.Network {
			fmt.Fprintln(w, "    network       ⚠ every public host, any port (through brig's proxy)")
		}
		for _, name := range s.NetPresets {
			for _, np := range policy.NetPresets() {
				if np.Name == name {
					fmt.Fprintf(w, "    net preset    %s: %s (%s)\n", name, strings.Join(np.Hosts, ", "), np.What)
				}
			}
		}
		if s.UnixSockets {
			fmt.Fprintln(w, "    unix sockets  ⚠ may create unix sockets (and reach host sockets such as a container daemon's)")
		}
		for _, p := range s.Read {
			fmt.Fprintf(w, "    read          %s\n", pathReach(p, false, pl))
		}
		for _, p := range s.Write {
			fmt.Fprintf(w, "    write         %s\n", pathReach(p, true, pl))
		}
		if len(s.Env) > 0 {
			fmt.Fprintf(w, "    environment   %s (passed through; credential-like names never are)\n", strings.Join(s.Env, " "))
		}
	}
	if raises := c.Limits.Raises(now); len(raises) > 0 {
		// A new user trusted a config that raised memory to 64G and the
		// timeout to a day without a word of it here.
		section("limits above those in effect — every call of this workspace may use:")
		for _, r := range raises {
			fmt.Fprintf(w, "    %-13s ⚠ %s (now %s)\n", r.Key, r.Value, r.Now)
		}
	}
	if c.Agent != (policy.Agent{}) {
		section("agent settings (a flag still overrides them):")
		if c.Agent.Model != "" {
			fmt.Fprintf(w, "    model         %s\n", c.Agent.Model)
		}
		if c.Agent.WebSearch {
			fmt.Fprintln(w, "    web_search    on: the model may use the provider's own web search")
		}
	}
	if len(servers) > 0 {
		section("MCP servers — started with brig, each stdio server in its own jail:")
		for _, sv := range servers {
			printServer(w, sv, "    ")
		}
	}
	return adds
}

// ruleReach says in words what an allow rule lets calls do, with a ⚠ where
// it reaches beyond the workspace.
func ruleReach(r policy.Rule, pl policy.Places) string {
	switch r.Scope {
	case policy.ScopeBash:
		if r.Pattern == "" || r.Pattern == "*" {
			return "⚠ every command line (the jail still applies)"
		}
		return "these commands"
	case policy.ScopeNet, policy.ScopeWebFetch:
		if r.Pattern == "" {
			return "⚠ every public host, from any command and web_fetch"
		}
		if strings.HasPrefix(r.Pattern, "domain:*.") {
			return "⚠ every host under this domain, from any command and web_fetch"
		}
		// A name given exactly may reach loopback and private addresses,
		// on every port: a repository's Net(domain:127.0.0.1) showed as
		// "this host" and let a call read a local service (new user,
		// 2026-12-03).
		name := strings.TrimPrefix(r.Pattern, "domain:")
		if ip := net.ParseIP(strings.Trim(name, "[]")); ip != nil && ip.IsLoopback() || strings.EqualFold(name, "localhost") || strings.HasSuffix(strings.ToLower(name), ".localhost") {
			return "⚠ this machine's own services (loopback), every port, from any command and web_fetch"
		} else if ip != nil && (ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified()) {
			return "⚠ an address of your private network, every port, from any command and web_fetch"
		}
		return "⚠ this host, every port, and the loopback or private addresses its name may resolve to, from any command and web_fetch"
	case policy.ScopeMcp:
		if r.Pattern == "" {
			return "⚠ every MCP tool"
		}
		return "this MCP tool"
	}
	verb := "reads"
	if r.Scope == policy.ScopeWrite {
		verb = "writes"
	}
	pat, err := r.AbsPattern(policy.Context{Home: pl.Home, Workspace: pl.Workspace})
	if err != nil {
		return "⚠ " + err.Error()
	}
	root := globRoot(pat)
	what, warn := reach(root, pat != root, r.Scope == policy.ScopeWrite, pl)
	return mark(warn) + verb + " " + what
}

// pathReach shows a sandbox path as written, where it leads, and what it is.
func pathReach(given string, write bool, pl policy.Places) string {
	resolved, _, err := policy.ResolvePath(given, pl.Workspace, pl.Home)
	if err != nil {
		return "⚠ " + given + ": " + err.Error()
	}
	what, warn := reach(resolved, false, write, pl)
	return mark(warn) + given + " → " + what
}

func mark(warn bool) string {
	if warn {
		return "⚠ "
	}
	return ""
}

// reach describes an absolute path (and everything under it when tree),
// and whether it reaches beyond the workspace and the system's own files.
func reach(p string, tree, write bool, pl policy.Places) (string, bool) {
	what := p
	if tree {
		what = p + " and everything under it"
	}
	covers := func(dir string) bool {
		return dir != "" && (p == dir || strings.HasPrefix(dir, strings.TrimSuffix(p, "/")+"/"))
	}
	if covers(pl.Home) {
		return what + ": your home directory, credentials included", true
	}
	switch pl.Classify(p) {
	case policy.ClassSecret:
		return what + ": holds credentials", true
	case policy.ClassProtected:
		if write {
			return what + ": protected, never writable (the rule does not apply there)", false
		}
		return what + " (inside the workspace)", false
	case policy.ClassWorkspace:
		return what + " (inside the workspace)", false
	case policy.ClassSystem:
		if write {
			return what + ": a system path", true
		}
		return what + " (system files)", false
	case policy.ClassTemp:
		return what + " (temporary files)", false
	}
	return what + ": outside the workspace", true
}

// globRoot is the part of an absolute glob before its first wildcard.
func globRoot(pat string) string {
	segs := strings.Split(pat, "/")
	for i, s := range segs {
		if strings.ContainsAny(s, "*?[") {
			if i <= 1 {
				return "/"
			}
			return strings.Join(segs[:i], "/")
		}
	}
	return pat
}

// printServer shows everything an MCP server entry would start or call.
func printServer(w io.Writer, s mcp.Server, indent string) {
	switch s.Transport {
	case mcp.Stdio:
		fmt.Fprintf(w, "%s%s: %s\n", indent, s.Name, shellJoin(append([]string{s.Command}, s.Args...)))
		ws := "read-only"
		for _, p := range s.Write {
			if p == "." {
				ws = "writable"
			}
		}
		net := "off"
		if s.Network {
			net = "on (hosts your Net rules allow, through brig's proxy)"
		}
		fmt.Fprintf(w, "%s    mode %s · workspace %s · network %s", indent, s.Mode, ws, net)
		if s.Dir != "" {
			fmt.Fprintf(w, " · cwd %s", s.Dir)
		}
		fmt.Fprintln(w)
		if len(s.Read) > 0 {
			fmt.Fprintf(w, "%s    read  %s\n", indent, strings.Join(s.Read, " "))
		}
		if len(s.Write) > 0 {
			fmt.Fprintf(w, "%s    write %s\n", indent, strings.Join(s.Write, " "))
		}
		keys := make([]string, 0, len(s.Env))
		for k := range s.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "%s    env   %s=%s\n", indent, k, s.Env[k])
		}
	case mcp.HTTP:
		fmt.Fprintf(w, "%s%s: %s (mode %s, called from brig itself", indent, s.Name, s.URL, s.Mode)
		if len(s.HeaderKeys) > 0 {
			fmt.Fprintf(w, ", headers %s", strings.Join(s.HeaderKeys, " "))
		}
		fmt.Fprintln(w, ")")
	}
}

// shellJoin shows a command line with the words that need it quoted.
func shellJoin(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\n'\"\\$`&|;<>()*?[]{}!#~") {
			w = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		out[i] = w
	}
	return strings.Join(out, " ")
}

// confirm asks question on a terminal (y/N); --yes answers for scripts.
// Without a terminal and without --yes it refuses, saying how to go on.
func confirm(pe procEnv, in confirmIn, yes bool, question, yesCommand string) error {
	if yes {
		return nil
	}
	if !in.Interactive || in.In == nil {
		return fmt.Errorf("standard input is not a terminal, so there is no one to ask: review the above and run `%s` to trust this exact content", yesCommand)
	}
	fmt.Fprintf(pe.Stdout, "\n%s [y/N] ", question)
	line, _ := bufio.NewReader(in.In).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	if !strings.HasSuffix(line, "\n") {
		fmt.Fprintln(pe.Stdout)
	}
	fmt.Fprintln(pe.Stdout, "brig: not trusted; nothing changed")
	return exitError{code: 1}
}

// readableBy says whether p lets a read_file of path run without asking:
// the instruction files it answers no for (a link to a file a Read deny
// rule hides) are not read into the system prompt.
func readableBy(p *policy.Policy) func(string) bool {
	return func(path string) bool {
		return p.Decide(policy.Call{Tool: "read_file", Effect: policy.EffectRead, Read: []string{path}}).Tier == policy.Allow
	}
}

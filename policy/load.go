package policy

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"brig/internal/pin"
	"brig/internal/userfile"
	"brig/jail"
)

// Files names the config files one workspace's policy is read from (SPEC §7).
type Files struct {
	Workspace string // canonical workspace root
	Global    string // ~/.config/brig/config.toml
	User      string // ~/.config/brig/workspaces/<id>.toml: the user's own rules for this workspace
	Repo      string // <ws>/.brig/config.toml: shipped by the repository, untrusted ("": not read)
	Trust     string // ~/.config/brig/trust.toml: pinned hashes of trusted repository configs
}

// FilesFor lays out the files for a workspace under brig's config directory.
func FilesFor(configDir, workspace string) Files {
	return Files{
		Workspace: workspace,
		Global:    filepath.Join(configDir, "config.toml"),
		User:      filepath.Join(configDir, "workspaces", WorkspaceID(workspace)+".toml"),
		Repo:      filepath.Join(workspace, ".brig", "config.toml"),
		Trust:     filepath.Join(configDir, "trust.toml"),
	}
}

// Layer is one config file as loaded, for `policy check` and `/permissions`.
type Layer struct {
	Kind    string `json:"kind"` // global, workspace or repository
	File    string `json:"file"`
	Exists  bool   `json:"exists"`
	Trusted bool   `json:"trusted"`
	SHA256  string `json:"sha256,omitempty"`
	// Ignored lists what an untrusted repository config asked for and did
	// not get (allow rules, sandbox grants).
	Ignored []string `json:"ignored,omitempty"`
	// Limits are the repository config's [limits] in effect: all it sets
	// when trusted, those it lowered when not (a repository may lower a
	// limit untrusted). Only the repository's layer, the last, has them.
	Limits []LimitSetting `json:"limits,omitempty"`
}

// Applies says what of an untrusted layer is in force, for the places that
// show the layers: "only its deny and ask rules apply", and the limits it
// lowered when it lowered any.
func (l Layer) Applies() string {
	if len(l.Limits) == 0 {
		return "only its deny and ask rules apply"
	}
	return "only its deny and ask rules and the limits it lowers apply"
}

// LimitsNote lists the layer's [limits] in effect ("lowers [limits]
// memory = 2 MiB, [limits] processes = 16"; "sets …" when trusted), or "".
func (l Layer) LimitsNote() string {
	if len(l.Limits) == 0 {
		return ""
	}
	verb := "lowers"
	if l.Trusted {
		verb = "sets"
	}
	parts := make([]string, len(l.Limits))
	for i, s := range l.Limits {
		parts[i] = s.String()
	}
	return verb + " " + strings.Join(parts, ", ")
}

// Loaded is the merged policy configuration of one workspace.
type Loaded struct {
	Files    Files
	Rules    RuleSet
	Sandbox  Sandbox
	Agent    Agent
	Limits   LimitsConfig
	Layers   []Layer
	Warnings []Warning
}

// Load reads the global, user-workspace and repository configs. The first two
// are the user's own words and count in full. The repository's counts in full
// only when `brig trust` pinned its current content hash; otherwise only its
// deny and ask rules apply, marked Source.Tighten: they can make a decision
// stricter than the user's rules and brig's built-ins, never looser (an ask
// never turns a built-in denial into a question). Any file that exists but
// cannot be read or parsed is an error: the program must not start with a
// half-read policy.
func Load(f Files) (Loaded, error) {
	out, err := load(f)
	if err == nil {
		out.Warnings = append(out.Warnings, deadRules(out.Rules)...)
	}
	return out, err
}

// deadRules warns of an allow rule that is also a deny or ask rule: the
// stricter one always wins, so the allow never applies (a new user's
// Bash(git commit:*) in both lists went unremarked, 2026-12-03).
func deadRules(rs RuleSet) []Warning {
	var out []Warning
	for _, a := range rs.Allow {
		for _, o := range []struct {
			tier  string
			rules []Rule
		}{{"a deny", rs.Deny}, {"an ask", rs.Ask}} {
			if i := slices.IndexFunc(o.rules, func(r Rule) bool { return r.String() == a.String() }); i >= 0 {
				out = append(out, Warning{Source: a.Source, Msg: fmt.Sprintf("allow %s is also %s rule (%s), which wins: the allow never applies; remove one of them", a, o.tier, o.rules[i].Source)})
				break
			}
		}
	}
	return out
}

func load(f Files) (Loaded, error) {
	out := Loaded{Files: f}
	for _, l := range []struct{ kind, file string }{{"global", f.Global}, {"workspace", f.User}} {
		c, sum, w, err := loadConfig(l.file, true)
		if err != nil {
			return Loaded{}, err
		}
		out.Rules = out.Rules.Merge(c.Rules)
		out.Sandbox = out.Sandbox.merge(c.Sandbox)
		out.Agent = out.Agent.merge(c.Agent)
		out.Limits = out.Limits.merge(c.Limits)
		out.Warnings = append(out.Warnings, w...)
		out.Layers = append(out.Layers, Layer{Kind: l.kind, File: l.file, Exists: sum != "", Trusted: true, SHA256: sum})
	}
	if f.Repo == "" {
		return out, nil // the caller leaves the repository's config out
	}
	c, sum, w, err := LoadConfig(f.Repo)
	if err != nil {
		return Loaded{}, fmt.Errorf("%w (this file comes with the repository; fix or remove it)", err)
	}
	out.Warnings = append(out.Warnings, w...)
	layer := Layer{Kind: "repository", File: f.Repo, Exists: sum != "", SHA256: sum}
	if sum != "" {
		trusted, err := IsTrusted(f, sum)
		if err != nil {
			return Loaded{}, err
		}
		layer.Trusted = trusted
		if trusted {
			out.Rules = out.Rules.Merge(c.Rules)
			out.Sandbox = out.Sandbox.merge(c.Sandbox)
			if c.Agent.Mode != "" {
				// Trust accepts the repository's grants, not how much
				// runs without asking: that is the user's to choose.
				layer.Ignored = append(layer.Ignored, fmt.Sprintf("[agent] mode = %q (the mode is yours to choose: --mode, or [agent] mode in your global or workspace config)", c.Agent.Mode))
				c.Agent.Mode = ""
			}
			out.Agent = out.Agent.merge(c.Agent)
			out.Limits = out.Limits.merge(c.Limits)
			layer.Limits = c.Limits.settings()
		} else {
			// Lowering a limit only tightens; it is said wherever the
			// layer is (a new user's repository set memory = "2M" and
			// every call failed with no word of where it came from).
			for _, r := range c.Limits.Raises(out.Limits.Apply(jail.DefaultLimits())) {
				layer.Ignored = append(layer.Ignored, fmt.Sprintf("%s (above the %s in effect)", r.LimitSetting, r.Now))
			}
			out.Limits, layer.Limits = out.Limits.tighten(c.Limits, jail.DefaultLimits())
			out.Rules = out.Rules.Merge(RuleSet{Ask: tightening(c.Rules.Ask), Deny: tightening(c.Rules.Deny)})
			for _, r := range c.Rules.Allow {
				layer.Ignored = append(layer.Ignored, fmt.Sprintf("allow %s (%s)", r, r.Source))
			}
			if !c.Sandbox.empty() {
				layer.Ignored = append(layer.Ignored, "[sandbox] grants")
			}
			if c.Agent != (Agent{}) {
				layer.Ignored = append(layer.Ignored, "[agent] settings")
			}
		}
	}
	out.Layers = append(out.Layers, layer)
	return out, nil
}

// tightening marks rules as coming from an untrusted repository config.
func tightening(rules []Rule) []Rule {
	out := make([]Rule, len(rules))
	for i, r := range rules {
		r.Source.Tighten = true
		out[i] = r
	}
	return out
}

// trustStore is where repository configs are pinned.
func trustStore(f Files) pin.Store {
	return pin.Store{Path: f.Trust, Command: "brig trust", Header: "Repository configs the user trusted, pinned to their content (written by `brig trust`)."}
}

// RepoTrusted reports whether f's repository config exists and is pinned
// by brig trust with exactly its current content; any failure to read it
// is false. It does not parse the file.
func RepoTrusted(f Files) bool {
	if f.Repo == "" {
		return false
	}
	data, err := userfile.ReadRegular(f.Repo, maxRepoConfigSize)
	if err != nil {
		return false
	}
	ok, err := IsTrusted(f, contentHash(data))
	return err == nil && ok
}

// IsTrusted reports whether the user trusted the repository config of f's
// workspace with exactly the content whose hash is sum.
func IsTrusted(f Files, sum string) (bool, error) {
	return trustStore(f).Pinned(f.Workspace, sum)
}

// Trust pins the repository config's current content: from now on it counts
// in full, until one byte of it changes. It returns the pinned hash. A
// workspace without a repository config cannot be trusted (there is nothing
// to pin).
func Trust(ctx context.Context, f Files) (string, error) {
	_, sum, _, err := LoadConfig(f.Repo)
	if err != nil {
		return "", err
	}
	if sum == "" {
		return "", fmt.Errorf("%s does not exist: there is no repository config to trust", f.Repo)
	}
	return sum, trustStore(f).Pin(ctx, f.Workspace, sum)
}

// TrustReviewed pins the repository config if its content still has the
// hash sum the user reviewed: a file changed since is refused, so what is
// trusted is exactly what was shown.
func TrustReviewed(ctx context.Context, f Files, sum string) error {
	_, now, _, err := LoadConfig(f.Repo)
	if err != nil {
		return err
	}
	if now != sum {
		return fmt.Errorf("%s changed while you were reviewing it (sha256 %s, reviewed %s); nothing was trusted, run brig trust again", f.Repo, now, sum)
	}
	return trustStore(f).Pin(ctx, f.Workspace, sum)
}

// TrustedAtAll reports whether the workspace's repository config has been
// trusted, whatever its content is now (what `brig trust --revoke` would
// forget).
func TrustedAtAll(f Files) (bool, error) {
	return trustStore(f).Has(f.Workspace)
}

// Untrust forgets any trust in the workspace's repository config.
func Untrust(ctx context.Context, f Files) error {
	return trustStore(f).Unpin(ctx, f.Workspace)
}

// InForce lists the config files that count in full (where a [sandbox]
// or [agent] setting can come from), in the order they are read.
func (l Loaded) InForce() []string {
	var files []string
	for _, layer := range l.Layers {
		if layer.Exists && layer.Trusted {
			files = append(files, layer.File)
		}
	}
	return files
}

// sandboxFiles names the files whose [sandbox] tables are in force, for an
// error about one of their grants.
func (l Loaded) sandboxFiles() string {
	files := l.InForce()
	if len(files) == 0 {
		return "no config file"
	}
	return "[sandbox] of " + strings.Join(files, " or ")
}

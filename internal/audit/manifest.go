package audit

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"brig/internal/audit/collect"
	"brig/internal/lazyre"
)

// ManifestEntry is one file of the manifest.
type ManifestEntry struct {
	Path string `json:"path"`
	Role Role   `json:"role"`
	Why  string `json:"why"`
	Sent bool   `json:"sent"` // its text went to the model
}

// Script is a package script or generator directive that runs a command.
type Script struct {
	File    string `json:"file"`
	Name    string `json:"name"`
	Command string `json:"command"`
	// When says when it runs: "on npm install", "on go generate" …
	When string `json:"when"`
}

// Language is how much of the repository is written in one language.
type Language struct {
	Name  string `json:"name"`
	Files int    `json:"files"`
	Bytes int64  `json:"bytes"`
}

// Manifest is what a reviewer wants to know before reading the files:
// the languages, the entry points, the build and CI files, and everything
// that runs on checkout, build or install.
type Manifest struct {
	Languages []Language      `json:"languages"`
	Entries   []ManifestEntry `json:"entries"`
	Scripts   []Script        `json:"scripts,omitempty"`
}

// lifecycle are the npm scripts that run without anyone asking for them.
var lifecycle = map[string]string{
	"preinstall": "on npm install", "install": "on npm install", "postinstall": "on npm install",
	"prepare": "on npm install and before publish", "prepublish": "on npm install (old npm) and publish",
	"preprepare": "on npm install", "postprepare": "on npm install",
	"prepack": "on npm pack and publish", "postpack": "on npm pack and publish",
	"dependencies": "after node_modules changes",
}

var goGenerate = lazyre.New(`(?m)^//go:generate\s+(.+)$`)

// BuildManifest builds the manifest of a collection.
func BuildManifest(c *Collection) Manifest {
	var m Manifest
	langs := map[string]*Language{}
	for _, f := range c.Files {
		if name := languageOf(f.Path); name != "" {
			l := langs[name]
			if l == nil {
				l = &Language{Name: name}
				langs[name] = l
			}
			l.Files++
			l.Bytes += f.Bytes
		}
		if role, why := RoleOf(f.Path); role != "" {
			m.Entries = append(m.Entries, ManifestEntry{Path: f.Path, Role: role, Why: why, Sent: true})
		}
		switch {
		case path.Base(f.Path) == "package.json":
			m.Scripts = append(m.Scripts, npmScripts(f.Path, f.Text)...)
		case path.Base(f.Path) == "composer.json":
			m.Scripts = append(m.Scripts, composerScripts(f.Path, f.Text)...)
		case path.Ext(f.Path) == ".go":
			for _, g := range goGenerate().FindAllStringSubmatch(f.Text, -1) {
				m.Scripts = append(m.Scripts, Script{File: f.Path, Name: "go:generate", Command: strings.TrimSpace(g[1]), When: "on go generate"})
			}
		}
	}
	for _, s := range c.Skipped {
		if s.Dir {
			continue
		}
		if name := languageOf(s.Path); name != "" && s.Bytes > 0 && s.Reason != collect.ReasonBinary {
			l := langs[name]
			if l == nil {
				l = &Language{Name: name}
				langs[name] = l
			}
			l.Files++
			l.Bytes += s.Bytes
		}
		if role, why := RoleOf(s.Path); role != "" {
			m.Entries = append(m.Entries, ManifestEntry{Path: s.Path, Role: role, Why: why})
		}
	}
	for _, l := range langs {
		m.Languages = append(m.Languages, *l)
	}
	sort.Slice(m.Languages, func(i, j int) bool {
		if m.Languages[i].Bytes != m.Languages[j].Bytes {
			return m.Languages[i].Bytes > m.Languages[j].Bytes
		}
		return m.Languages[i].Name < m.Languages[j].Name
	})
	order := map[Role]int{RoleRuns: 0, RoleCI: 1, RoleBuild: 2, RoleEntry: 3}
	sort.SliceStable(m.Entries, func(i, j int) bool {
		a, b := m.Entries[i], m.Entries[j]
		if order[a.Role] != order[b.Role] {
			return order[a.Role] < order[b.Role]
		}
		return a.Path < b.Path
	})
	return m
}

// npmScripts lists a package.json's scripts, lifecycle ones first.
func npmScripts(file, text string) []Script {
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	if json.Unmarshal([]byte(text), &pkg) != nil {
		return nil
	}
	var out []Script
	for name, cmd := range pkg.Scripts {
		when, ok := lifecycle[name]
		if !ok {
			when = "on npm run " + name
		}
		out = append(out, Script{File: file, Name: name, Command: cmd, When: when})
	}
	sort.Slice(out, func(i, j int) bool {
		_, li := lifecycle[out[i].Name]
		_, lj := lifecycle[out[j].Name]
		if li != lj {
			return li
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// composerScripts lists the scripts composer runs on install and update.
func composerScripts(file, text string) []Script {
	var pkg struct {
		Scripts map[string]json.RawMessage `json:"scripts"`
	}
	if json.Unmarshal([]byte(text), &pkg) != nil {
		return nil
	}
	var out []Script
	for name, raw := range pkg.Scripts {
		var cmds []string
		var one string
		if json.Unmarshal(raw, &one) == nil {
			cmds = []string{one}
		} else {
			_ = json.Unmarshal(raw, &cmds)
		}
		when := "on composer run " + name
		if strings.HasPrefix(name, "pre-") || strings.HasPrefix(name, "post-") {
			when = "on composer " + strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(name, "pre-"), "post-"), "-cmd")
		}
		for _, c := range cmds {
			out = append(out, Script{File: file, Name: name, Command: c, When: when})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// languages maps extensions to language names.
var languages = map[string]string{
	".go": "Go", ".py": "Python", ".js": "JavaScript", ".mjs": "JavaScript", ".cjs": "JavaScript", ".jsx": "JavaScript",
	".ts": "TypeScript", ".tsx": "TypeScript", ".rs": "Rust", ".java": "Java", ".kt": "Kotlin", ".kts": "Kotlin",
	".c": "C", ".h": "C", ".cc": "C++", ".cpp": "C++", ".cxx": "C++", ".hpp": "C++", ".cs": "C#", ".rb": "Ruby",
	".php": "PHP", ".swift": "Swift", ".m": "Objective-C", ".scala": "Scala", ".sh": "Shell", ".bash": "Shell",
	".zsh": "Shell", ".ps1": "PowerShell", ".lua": "Lua", ".pl": "Perl", ".pm": "Perl", ".r": "R", ".dart": "Dart",
	".ex": "Elixir", ".exs": "Elixir", ".erl": "Erlang", ".hs": "Haskell", ".ml": "OCaml", ".clj": "Clojure",
	".zig": "Zig", ".nim": "Nim", ".vue": "Vue", ".svelte": "Svelte", ".sql": "SQL", ".tf": "Terraform",
	".nix": "Nix", ".html": "HTML", ".css": "CSS", ".scss": "CSS", ".yml": "YAML", ".yaml": "YAML",
	".json": "JSON", ".toml": "TOML", ".md": "Markdown", ".proto": "Protocol Buffers", ".sol": "Solidity",
}

func languageOf(p string) string {
	if n, ok := languages[strings.ToLower(path.Ext(p))]; ok {
		return n
	}
	switch path.Base(p) {
	case "Makefile", "makefile", "GNUmakefile":
		return "Makefile"
	case "Dockerfile":
		return "Dockerfile"
	}
	return ""
}

// Text renders the manifest for the model: short lines, paths as given.
func (m Manifest) Text(maxEntries int) string {
	var b strings.Builder
	if len(m.Languages) > 0 {
		b.WriteString("Languages:")
		for i, l := range m.Languages {
			if i == 8 {
				fmt.Fprintf(&b, " and %d more", len(m.Languages)-8)
				break
			}
			fmt.Fprintf(&b, " %s (%d file%s, %s)", l.Name, l.Files, plural(l.Files), Size(l.Bytes))
			if i < len(m.Languages)-1 && i < 7 {
				b.WriteString(",")
			}
		}
		b.WriteString("\n")
	}
	titles := map[Role]string{RoleRuns: "Runs on checkout, install, build, commit or open", RoleCI: "CI", RoleBuild: "Build and packages", RoleEntry: "Entry points"}
	var last Role
	n := 0
	for _, e := range m.Entries {
		if n == maxEntries {
			fmt.Fprintf(&b, "… and %d more files\n", len(m.Entries)-n)
			break
		}
		if e.Role != last {
			fmt.Fprintf(&b, "%s:\n", titles[e.Role])
			last = e.Role
		}
		sent := ""
		if !e.Sent {
			sent = " [not sent]"
		}
		fmt.Fprintf(&b, "- %s — %s%s\n", e.Path, e.Why, sent)
		n++
	}
	if len(m.Scripts) > 0 {
		b.WriteString("Scripts and generators:\n")
		for i, s := range m.Scripts {
			if i == maxEntries {
				fmt.Fprintf(&b, "… and %d more\n", len(m.Scripts)-i)
				break
			}
			fmt.Fprintf(&b, "- %s: %s = %s (%s)\n", s.File, s.Name, oneLineCap(s.Command, 300), s.When)
		}
	}
	return b.String()
}

// Size formats a byte count for people.
func Size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// oneLineCap puts s on one line and caps it at n bytes.
func oneLineCap(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		return s[:cut] + "…"
	}
	return s
}

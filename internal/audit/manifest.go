package audit

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"brig/internal/lazyre"
	"brig/internal/sensitive"
)

// Role is what a file is to the repository's build and tooling.
type Role string

// The roles the manifest lists. Files with no role are ordinary sources.
const (
	// RoleRuns: something runs or obeys the file on checkout, install,
	// build, commit or when an editor opens the repository.
	RoleRuns Role = "runs"
	// RoleBuild: a build or package definition.
	RoleBuild Role = "build"
	// RoleCI: a continuous-integration pipeline.
	RoleCI Role = "ci"
	// RoleEntry: an entry point of the program.
	RoleEntry Role = "entry"
)

// roleRule gives files matching a pattern a role and says why.
type roleRule struct {
	match func(p, base string) bool
	role  Role
	why   string
}

func base(name string) func(p, b string) bool {
	return func(_, b string) bool { return b == name }
}

func baseIn(names ...string) func(p, b string) bool {
	return func(_, b string) bool { return slices.Contains(names, b) }
}

func under(dir string, exts ...string) func(p, b string) bool {
	return func(p, _ string) bool {
		if !strings.HasPrefix(p, dir+"/") {
			return false
		}
		return len(exts) == 0 || slices.Contains(exts, path.Ext(p))
	}
}

func glob(pattern string) func(p, b string) bool {
	return func(p, _ string) bool { ok, _ := path.Match(pattern, p); return ok }
}

// roleRules are checked in order; the first match gives a file its role.
// Paths are relative to the workspace root or to any nested repository's
// (a vendored project's hooks run as surely as the top-level ones).
var roleRules = []roleRule{
	// Run by git, hook managers, direnv, editors and other agents.
	{func(p, _ string) bool {
		return strings.Contains("/"+p, "/.git/hooks/") && !strings.HasSuffix(p, ".sample")
	}, RoleRuns, "a git hook: git runs it on commit, checkout, merge or push"},
	{func(p, _ string) bool { return strings.HasSuffix("/"+p, "/.git/config") }, RoleRuns, "git obeys it: core.hooksPath, core.fsmonitor, filters and aliases run programs"},
	{base(".gitattributes"), RoleRuns, "names filter and diff drivers git runs when they are configured"},
	{base(".gitmodules"), RoleRuns, "submodule URLs fetched by clone --recursive"},
	{base("package.json"), RoleRuns, "npm, yarn and pnpm run its lifecycle scripts (preinstall, install, postinstall, prepare) on install"},
	{base("setup.py"), RoleRuns, "runs on pip install from source"},
	{base("pyproject.toml"), RoleRuns, "names the build backend pip runs on install"},
	{base("conftest.py"), RoleRuns, "pytest imports it automatically"},
	{base("build.rs"), RoleRuns, "cargo runs it before every build"},
	{glob("*.gemspec"), RoleRuns, "runs when the gem is built or installed"},
	{base("composer.json"), RoleRuns, "composer runs its scripts on install"},
	{baseIn(".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs"), RoleRuns, "npm, yarn or pnpm obey it: registry, scripts, yarnPath run programs"},
	{baseIn("pip.conf", ".pypirc"), RoleRuns, "pip obeys it (index URL)"},
	{glob("gradle/wrapper/gradle-wrapper.properties"), RoleRuns, "distributionUrl: where the Gradle wrapper downloads the Gradle it runs"},
	{baseIn("gradlew", "mvnw", "gradlew.bat", "mvnw.cmd"), RoleRuns, "a build-tool wrapper: it downloads and runs the build tool"},
	{under(".mvn"), RoleRuns, "Maven wrapper and extensions"},
	{baseIn("Vagrantfile", "shell.nix", "flake.nix", "default.nix", "devbox.json"), RoleRuns, "evaluated when the development environment starts"},
	{func(p, b string) bool {
		return strings.HasSuffix(b, ".sh") && (strings.HasPrefix(b, "install") || strings.HasPrefix(b, "setup") || strings.HasPrefix(b, "bootstrap") || strings.HasPrefix(b, "postinstall") || strings.HasPrefix(b, "preinstall"))
	}, RoleRuns, "an install or setup script"},
	{func(p, b string) bool { return strings.HasPrefix(p, ".cargo/config") }, RoleRuns, "cargo obeys it: rustc wrappers and runners run programs"},

	// Continuous integration.
	{under(".github/workflows", ".yml", ".yaml"), RoleCI, "GitHub Actions runs it"},
	{func(p, b string) bool {
		return strings.HasPrefix(p, ".github/actions/") && (b == "action.yml" || b == "action.yaml")
	}, RoleCI, "a GitHub Action of the repository"},
	{baseIn(".gitlab-ci.yml", ".travis.yml", "azure-pipelines.yml", "bitbucket-pipelines.yml", ".drone.yml", "appveyor.yml", "cloudbuild.yaml", "Jenkinsfile", "codemagic.yaml"), RoleCI, "a CI pipeline"},
	{under(".circleci"), RoleCI, "CircleCI runs it"},
	{under(".buildkite"), RoleCI, "Buildkite runs it"},

	// Builds and packages.
	{baseIn("Makefile", "makefile", "GNUmakefile"), RoleBuild, "make runs its recipes"},
	{glob("*.mk"), RoleBuild, "make includes"},
	{baseIn("CMakeLists.txt", "meson.build", "configure", "configure.ac", "autogen.sh", "SConstruct", "build.xml", "Rakefile", "Justfile", "justfile", "Taskfile.yml", "Taskfile.yaml", "magefile.go", "noxfile.py", "tox.ini", "setup.cfg", "Earthfile"), RoleBuild, "build or task definitions"},
	{baseIn("build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "pom.xml"), RoleBuild, "JVM build (plugins run at build time)"},
	{baseIn("Cargo.toml", "go.mod", "Gemfile", "Pipfile", "requirements.txt", "environment.yml", "mix.exs", "Package.swift", "pubspec.yaml", "deno.json", "bunfig.toml"), RoleBuild, "dependencies and package metadata"},
	{glob("requirements*.txt"), RoleBuild, "Python dependencies (an --index-url changes where they come from)"},
	{baseIn("BUILD", "BUILD.bazel", "WORKSPACE", "WORKSPACE.bazel", "MODULE.bazel"), RoleBuild, "Bazel build"},
	{func(_, b string) bool {
		return b == "Dockerfile" || strings.HasPrefix(b, "Dockerfile.") || strings.HasSuffix(b, ".dockerfile") || b == "Containerfile"
	}, RoleBuild, "a container build: its RUN lines execute"},
	{func(_, b string) bool {
		return strings.HasPrefix(b, "docker-compose") || b == "compose.yaml" || b == "compose.yml"
	}, RoleBuild, "containers started by docker compose"},

	// Entry points.
	{func(p, b string) bool { return b == "main.go" }, RoleEntry, "a Go program's main package"},
	{baseIn("__main__.py", "manage.py", "main.py", "app.py", "wsgi.py", "asgi.py"), RoleEntry, "a Python entry point"},
	{func(p, b string) bool { return p == "src/main.rs" || strings.HasPrefix(p, "src/bin/") }, RoleEntry, "a Rust binary"},
	{baseIn("index.js", "index.ts", "server.js", "server.ts", "main.js", "main.ts", "cli.js"), RoleEntry, "a JavaScript or TypeScript entry point"},
}

// RoleOf gives a workspace-relative, slash-separated path its role and the
// reason, or "" for an ordinary file.
func RoleOf(p string) (Role, string) {
	b := path.Base(p)
	// The workspace list of later-executed files (sensitive.Workspace),
	// at the root or the root of a nested repository.
	for _, e := range sensitive.Workspace() {
		if p == e.Path || strings.HasPrefix(p, e.Path+"/") || strings.Contains(p, "/"+e.Path+"/") || strings.HasSuffix(p, "/"+e.Path) {
			return RoleRuns, e.Reason
		}
	}
	for _, r := range roleRules {
		if r.match(p, b) {
			return r.role, r.why
		}
	}
	return "", ""
}

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
		if name := languageOf(s.Path); name != "" && s.Bytes > 0 && s.Reason != ReasonBinary {
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

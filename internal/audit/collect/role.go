package collect

import (
	"path"
	"slices"
	"strings"

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

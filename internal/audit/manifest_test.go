package audit

import (
	"strings"
	"testing"

	"brig/internal/audit/collect"
)

func TestRoleOf(t *testing.T) {
	for p, want := range map[string]Role{
		"package.json": RoleRuns, "setup.py": RoleRuns, ".git/hooks/pre-commit": RoleRuns, "vendor/x/.git/hooks/post-merge": RoleRuns,
		".git/config": RoleRuns, ".husky/pre-commit": RoleRuns, ".envrc": RoleRuns, ".vscode/tasks.json": RoleRuns, "build.rs": RoleRuns,
		"install.sh": RoleRuns, "gradle/wrapper/gradle-wrapper.properties": RoleRuns, ".devcontainer/devcontainer.json": RoleRuns,
		".github/workflows/ci.yml": RoleCI, ".gitlab-ci.yml": RoleCI, "Makefile": RoleBuild, "Dockerfile": RoleBuild, "docker/Dockerfile.dev": RoleBuild,
		"go.mod": RoleBuild, "requirements-dev.txt": RoleBuild, "cmd/brig/main.go": RoleEntry, "src/main.rs": RoleEntry,
		"src/util.go": "", "README.md": "", ".git/hooks/pre-commit.sample": "",
	} {
		if got, why := RoleOf(p); got != want || (want != "" && why == "") {
			t.Errorf("RoleOf(%q) = %q (%q), want %q", p, got, why, want)
		}
	}
}

func TestBuildManifest(t *testing.T) {
	c := &Collection{
		Files: []File{
			{Path: "package.json", Bytes: 90, Text: `{"scripts":{"test":"jest","postinstall":"node setup.js"}}`},
			{Path: "gen.go", Bytes: 40, Text: "package x\n//go:generate stringer -type=Kind\n"},
			{Path: "main.go", Bytes: 30, Text: "package main\n"},
		},
		Skipped: []Skip{{Path: ".github/workflows/release.yml", Reason: collect.ReasonBudget, Bytes: 500}, {Path: "bin/tool", Reason: collect.ReasonBinary, Bytes: 9000}},
	}
	m := BuildManifest(c)
	text := m.Text(50)
	for _, want := range []string{
		"Languages: YAML (1 file, 500 B), JSON (1 file, 90 B), Go (2 files, 70 B)",
		"- package.json — npm, yarn and pnpm run its lifecycle scripts",
		"- .github/workflows/release.yml — GitHub Actions runs it [not sent]",
		"- main.go — a Go program's main package",
		"- package.json: postinstall = node setup.js (on npm install)\n- package.json: test = jest (on npm run test)",
		"- gen.go: go:generate = stringer -type=Kind (on go generate)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the manifest lacks %q:\n%s", want, text)
		}
	}
	// What runs comes before CI, builds and entry points.
	if strings.Index(text, "package.json —") > strings.Index(text, "release.yml") {
		t.Errorf("order:\n%s", text)
	}
}

package sensitive

import (
	"slices"
	"testing"
)

func paths(ls []Loaded) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Path
	}
	return out
}

// TestEnvrcLoads carries its match and no-match examples: what direnv's
// standard library and the shell load, and words that only look like it.
func TestEnvrcLoads(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"source_env_if_exists .envrc.local\n", []string{".envrc.local"}},
		{"dotenv\n", []string{".env"}},
		{"dotenv_if_exists .env.dev # local\n", []string{".env.dev"}},
		{"[ -f x ] && source ./env/dev.sh\n", []string{"env/dev.sh"}},
		{"if has nix; then\n  use nix\nfi\n", []string{"shell.nix", "default.nix", "nix"}},
		{"use nix ./nix/dev.nix\n", []string{"nix/dev.nix", "nix"}},
		{"use flake\n", []string{"flake.nix", "flake.lock", "nix"}},
		{"use flake ./tools#dev\n", []string{"tools/flake.nix", "tools/flake.lock", "tools/nix"}},
		{"eval \"$(devenv direnvrc)\"\nuse devenv\n", []string{"devenv.nix", "devenv.yaml", "devenv.lock", "devenv.local.nix", "devenv.local.yaml", ".devenv.flake.nix", "nix"}},
		{"eval \"$(devbox generate direnv --print-envrc)\"\n", []string{"devbox.json", "devbox.lock"}},
		{"PATH_add bin tools/bin\npath_add PATH scripts\npath_add MANPATH man\nlayout node\n", []string{"bin", "tools/bin", "scripts", "node_modules/.bin"}},
		// The script's own directory and the working directory, written
		// as sourced scripts do.
		{". \"$(dirname \"${BASH_SOURCE[0]}\")/common.sh\"\n", []string{"common.sh"}},
		{"source $(dirname $BASH_SOURCE)/lib/a.sh\n", []string{"lib/a.sh"}},
		{"source \"${BASH_SOURCE%/*}/b.sh\"\n", []string{"b.sh"}},
		{"source \"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)/c.sh\"\n", []string{"c.sh"}},
		{"source_env_if_exists \"$PWD/.envrc.local\"\ndotenv $(pwd)/.env.dev\n", []string{".envrc.local", ".env.dev"}},
		{"source_env ../shared\n", []string{"../shared"}},
		{". 'scripts/my env.sh'; export A=1\n", []string{"scripts/my env.sh"}},
		{"watch_file x\nsource_env \\\n  .envrc.private\n", []string{".envrc.private"}},
		{"builtin source lib.sh\n", []string{"lib.sh"}},
		// Names brig cannot read without the shell, and no loads at all.
		{"source_env $HOME/.envrc\nsource ~/x\ndotenv .env.*\n", nil},
		{"echo source_env x\nexport source=1\n# source_env commented\n", nil},
		{"layout python\nsource_up\nsource $(dirname $0)/x\n", nil},
	} {
		got := paths(EnvrcLoads([]byte(c.in)))
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
	l := EnvrcLoads([]byte("source_env dir\nsource_env_if_exists f\ndotenv\nsource g\n. \"$(dirname \"${BASH_SOURCE[0]}\")/h\"\n"))
	if len(l) != 5 || !l[0].Dir || !l[0].Script || !l[0].Chdir || l[1].Dir || !l[1].Script || !l[1].Chdir || l[2].Script || l[3].Chdir || l[3].FromFile || !l[4].FromFile {
		t.Errorf("kinds: %+v", l)
	}
}

func TestMiseLoads(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"[env]\n_.source = \"./scripts/env.sh\"\n", []string{"scripts/env.sh"}},
		{"[env]\n_.file = ['.env', '.env.local'] # both\n", []string{".env", ".env.local"}},
		{"[env]\n_ = { source = \"a.sh\", file = [\".env\"] }\n", []string{"a.sh", ".env"}},
		{"[env._]\nsource = \"b.sh\"\n", []string{"b.sh"}},
		{"[env]\n_.source = [\n  \"a.sh\", # first\n  \"b.sh\",\n]\nX = \"y\"\n", []string{"a.sh", "b.sh"}},
		{"env._.source = \"top.sh\"\n[env]\n\"_\".file = \".env.q\"\n", []string{"top.sh", ".env.q"}},
		{"[env]\n_.source = { path = \"p.sh\" }\n", []string{"p.sh"}},
		{"[env]\nNODE_ENV = \"production\"\nfile = \"not.a.directive\"\n", nil},
		{"[tools]\nsource = \"x.sh\"\n[env]\n_.source = \"{{config_root}}/x.sh\"\n", nil},
	} {
		got := paths(MiseLoads([]byte(c.in)))
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
	if l := MiseLoads([]byte("[env]\n_.source = \"s.sh\"\n_.file = \".env\"\n")); len(l) != 2 || !l[0].Script || l[1].Script {
		t.Errorf("kinds: %+v", l)
	}
}

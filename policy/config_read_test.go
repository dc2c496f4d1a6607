package policy

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"brig/internal/hangtest"
)

// TestLoadRepoConfigOnlyFromARegularFile: a repository's .brig/config.toml
// that is a committed link to /dev/zero, a FIFO, or larger than 4 MiB
// stops the load with an error naming the file and saying why (not an out
// of memory, not a hang); a regular file loads.
func TestLoadRepoConfigOnlyFromARegularFile(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		make       func(path string) error
	}{
		{"link to /dev/zero", "is a symbolic link", func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"FIFO", "is not a regular file (a FIFO)", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"too large", "is larger than 4 MiB", func(p string) error {
			return os.WriteFile(p, []byte("# "+strings.Repeat("x", 4<<20)+"\n"), 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := loadFixture(t)
			if err := os.Remove(f.Repo); err != nil {
				t.Fatal(err)
			}
			if err := tc.make(f.Repo); err != nil {
				t.Fatal(err)
			}
			var err error
			hangtest.Within(t, "Load", func() { _, err = Load(f) })
			if err == nil || !strings.Contains(err.Error(), f.Repo+" "+tc.want) || !strings.Contains(err.Error(), "comes with the repository") {
				t.Fatalf("got %v; want an error naming %s and saying %q", err, f.Repo, tc.want)
			}
			if _, _, _, err := LoadConfig(f.Repo); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("LoadConfig: %v", err)
			}
		})
	}
	t.Run("regular file", func(t *testing.T) {
		f, _ := loadFixture(t)
		var l Loaded
		var err error
		hangtest.Within(t, "Load", func() { l, err = Load(f) })
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Layers) != 3 || !l.Layers[2].Exists || l.Layers[2].SHA256 == "" || len(l.Rules.Deny) == 0 {
			t.Fatalf("the repository config was not loaded: %+v", l.Layers)
		}
	})
}

// TestOwnConfigThatIsADirectory: your own config.toml that is a directory
// stops the load with what to do — put a file there — not advice about
// permissions.
func TestOwnConfigThatIsADirectory(t *testing.T) {
	f, _ := loadFixture(t)
	if err := os.Remove(f.Global); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := os.MkdirAll(f.Global, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Load(f)
	if err == nil || !strings.Contains(err.Error(), "(a directory)") || !strings.Contains(err.Error(), "put a TOML file there or remove it") || strings.Contains(err.Error(), "permissions") {
		t.Fatalf("got %v; want the directory named and what to do", err)
	}
}

// TestAgentCountsBelowOne: [agent] subagents or max_tool_calls of 0 or
// less is refused with its line, not taken as the default in silence;
// the control: 1 is taken.
func TestAgentCountsBelowOne(t *testing.T) {
	for _, key := range []string{"subagents", "max_tool_calls"} {
		for _, v := range []string{"0", "-1"} {
			_, _, err := ParseConfig("c.toml", []byte("[agent]\n"+key+" = "+v+"\n"))
			if err == nil || !strings.Contains(err.Error(), "c.toml:2: [agent] "+key+" is "+v+"; write 1 or more") {
				t.Errorf("%s = %s: %v", key, v, err)
			}
		}
		if c, _, err := ParseConfig("c.toml", []byte("[agent]\n"+key+" = 1\n")); err != nil || c.Agent.Subagents+c.Agent.MaxToolCalls != 1 {
			t.Errorf("%s = 1: %+v %v", key, c.Agent, err)
		}
	}
}

// TestAgentModeIsReadAsTheFlagIs: [agent] mode is read as --mode is,
// whatever its case ("Edit" showed as "Edit unless given": new user).
func TestAgentModeIsReadAsTheFlagIs(t *testing.T) {
	c, _, err := ParseConfig("c.toml", []byte("[agent]\nmode = \"Edit\"\n"))
	if err != nil || c.Agent.Mode != ModeEdit {
		t.Errorf("mode = \"Edit\": %q, %v", c.Agent.Mode, err)
	}
	if _, w, err := ParseConfig("c.toml", []byte("[agent]\nmodee = \"edit\"\n")); err != nil || len(w) != 1 || !strings.Contains(w[0].String(), `did you mean "model" or "mode"?`) {
		t.Errorf("modee: %v %v", w, err)
	}
}

// TestSyntaxErrorLine: a syntax error is reported on the line it is on,
// also when the parser meets it at that line's newline.
func TestSyntaxErrorLine(t *testing.T) {
	for text, want := range map[string]string{
		"[permissions\nallow = []\n":             "c.toml:1: ",
		"[agent]\nmodel = \"x\ny = 1\n":          "c.toml:2: ",
		"[permissions]\nallow = [\"Read(x)\",\n": "c.toml:2: ",
	} {
		if _, _, err := ParseConfig("c.toml", []byte(text)); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v; want it at %s", text, err, want)
		}
	}
}

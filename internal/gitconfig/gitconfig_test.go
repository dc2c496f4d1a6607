package gitconfig

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// samples are config texts with git's syntax corners: case, quoting,
// escapes, comments, continuation lines, subsections, the deprecated
// dotted form, a header followed by a variable on the same line, and a
// bare boolean.
var samples = []string{
	"[core]\n\thooksPath = .githooks\n",
	"[Core]\n\tHooksPath=\"tools/my hooks\"  # a comment\n\tfsmonitor\n",
	"; comment\n[core] hooksPath = a ; trailing\n[alias]\n\tx = \"!sh -c \\\"echo hi\\\"\"\n",
	"[includeIf \"gitdir:~/work/\"]\n\tpath = ~/.gitconfig-work\n[include]\n\tpath = other.inc\n",
	"[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n\tsmudge = git-lfs smudge \\\n  -- %f\n",
	"[core.sub]\n\tkey = v\n[sec \"Sub\\\"q\\\\\"]\n\tk = \"a\\tb\\nc\"\n",
	"\xef\xbb\xbf[core]\r\n\tpager = less  -R \r\n",
	"[core]\n\teditor = vim   -f\t  x\n",
}

// TestParseAgreesWithGit: for each sample, the keys and values are the
// ones `git config --list` prints for the same file.
func TestParseAgreesWithGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	for i, s := range samples {
		f := filepath.Join(dir, "c"+string(rune('a'+i)))
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(git, "config", "--file", f, "--list", "--null").Output()
		if err != nil {
			t.Fatalf("sample %d: git config: %v", i, err)
		}
		var want []string
		for _, kv := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
			k, v, ok := strings.Cut(kv, "\n")
			if !ok {
				v = "true" // a bare name
			}
			want = append(want, k+"="+v)
		}
		vals, err := ParseFile(f)
		if err != nil {
			t.Fatalf("sample %d: %v", i, err)
		}
		var got []string
		for _, v := range vals {
			// git prints section and name lower-case, the subsection as written.
			got = append(got, v.Key()+"="+v.Value)
		}
		if !slices.Equal(got, want) {
			t.Errorf("sample %d %q:\n got %q\nwant %q", i, s, got, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, s := range []string{"key = v\n", "[core\n", "[core]\n\tk = \"open\n", "[core]\n\tk = a\\q\n", "[sec \"x]\n"} {
		if _, err := Parse(strings.NewReader(s), "f"); err == nil {
			t.Errorf("%q parsed without an error", s)
		}
	}
}

// TestLoadFollowsEveryInclude: includes are followed whatever their
// condition, relative to the including file, with ~ expanded; a missing
// include is still listed.
func TestLoadFollowsEveryInclude(t *testing.T) {
	home := t.TempDir()
	write := func(rel, s string) string {
		p := filepath.Join(home, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	top := write(".gitconfig", "[includeIf \"gitdir:/nowhere/\"]\n\tpath = ~/cfg/work\n[include]\n\tpath = cfg/missing\n")
	write("cfg/work", "[core]\n\thooksPath = ~/hooks\n[include]\n\tpath = loop\n")
	write("cfg/loop", "[include]\n\tpath = work\n")
	vals, files := Load(top, home)
	var hooks []string
	for _, v := range vals {
		if v.Key() == "core.hookspath" {
			hooks = append(hooks, ExpandPath(v.Value, home, ""))
		}
	}
	if len(hooks) == 0 || hooks[0] != filepath.Join(home, "hooks") {
		t.Errorf("core.hooksPath through a conditional include: %v", hooks)
	}
	for _, want := range []string{filepath.Join(home, "cfg/work"), filepath.Join(home, "cfg/missing"), filepath.Join(home, "cfg/loop")} {
		if !slices.Contains(files, want) {
			t.Errorf("files lack %s: %v", want, files)
		}
	}
	if len(files) > 2+2*maxDepth {
		t.Errorf("an include loop was followed %d times", len(files))
	}
}

func TestFiles(t *testing.T) {
	got := Files([]string{"HOME=/h"})
	want := []string{"/etc/gitconfig", "/h/.config/git/config", "/h/.gitconfig"}
	if !slices.Equal(got, want) {
		t.Errorf("Files = %v, want %v", got, want)
	}
	got = Files([]string{"HOME=/h", "XDG_CONFIG_HOME=/x", "GIT_CONFIG_NOSYSTEM=1"})
	if !slices.Equal(got, []string{"/x/git/config", "/h/.gitconfig"}) {
		t.Errorf("with XDG and NOSYSTEM: %v", got)
	}
	if got := Files([]string{"GIT_CONFIG_GLOBAL=/g", "GIT_CONFIG_SYSTEM=/s"}); !slices.Equal(got, []string{"/s", "/g"}) {
		t.Errorf("with GIT_CONFIG_*: %v", got)
	}
}

// TestParseFileDoesNotBlockOnAFIFO: a FIFO where a config is expected is
// an error, not a hang.
func TestParseFileDoesNotBlockOnAFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, err := ParseFile(p); done <- err }()
	if err := <-done; err == nil {
		t.Error("a FIFO parsed as a config file")
	}
	if vals, err := ParseFile(filepath.Join(t.TempDir(), "missing")); err != nil || vals != nil {
		t.Errorf("a missing file: %v %v", vals, err)
	}
}

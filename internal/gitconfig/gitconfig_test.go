package gitconfig

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"brig/internal/hangtest"
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

// TestLoadSelfIncludeBomb: a config including itself eight times (8^10
// parses if each inclusion were followed) is read once, and its values come
// back once.
func TestLoadSelfIncludeBomb(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	text := "[core]\n\thooksPath = h\n[include]\n" + strings.Repeat("\tpath = config\n", 8)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	// Links to the same file are the same file.
	if err := os.Symlink("config", filepath.Join(dir, "again")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(text+"\tpath = again\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var vals []Value
	var files []string
	hangtest.Within(t, "Load of a self-including config", func() { vals, files = Load(cfg, dir) })
	hooks := 0
	for _, v := range vals {
		if v.Key() == "core.hookspath" {
			hooks++
		}
	}
	if hooks != 1 {
		t.Errorf("core.hooksPath came back %d times, want once: %v", hooks, vals)
	}
	if len(vals) != 1+9 {
		t.Errorf("got %d values, want the file's 10 once", len(vals))
	}
	if want := []string{cfg, filepath.Join(dir, "again")}; !slices.Equal(files, want) {
		t.Errorf("files = %v, want %v", files, want)
	}
}

// TestLoadCycle: a includes b includes a: each is read once.
func TestLoadCycle(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("[x]\n\ta = 1\n[include]\n\tpath = b\n"), 0o644)
	os.WriteFile(b, []byte("[x]\n\tb = 2\n[include]\n\tpath = a\n"), 0o644)
	var vals []Value
	var files []string
	hangtest.Within(t, "Load of a cycle", func() { vals, files = Load(a, dir) })
	var got []string
	for _, v := range vals {
		got = append(got, v.Key()+"="+v.Value)
	}
	if want := []string{"x.a=1", "include.path=b", "x.b=2", "include.path=a"}; !slices.Equal(got, want) {
		t.Errorf("values %q, want %q", got, want)
	}
	if !slices.Equal(files, []string{a, b}) {
		t.Errorf("files = %v", files)
	}
}

// TestLoadCapsFiles: a config naming thousands of files considers at most
// maxFiles of them.
func TestLoadCapsFiles(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("[include]\n")
	for i := range 5000 {
		fmt.Fprintf(&b, "\tpath = missing%d\n", i)
	}
	cfg := filepath.Join(dir, "config")
	os.WriteFile(cfg, []byte(b.String()), 0o644)
	_, files := Load(cfg, dir)
	if len(files) != maxFiles || files[0] != cfg {
		t.Errorf("%d files considered (first %q), want %d, the config first", len(files), files[0], maxFiles)
	}
}

// TestLoadSkipsWhatIsNotARegularFile: a FIFO with no writer, /dev/zero, a
// directory, a link to /dev/zero, /proc/self/environ and a file over 1 MiB
// as include targets are listed but not read, and Load neither blocks nor
// exhausts memory; the regular files around them are still read.
func TestLoadSkipsWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "adir"), 0o755)
	os.Symlink("/dev/zero", filepath.Join(dir, "zero"))
	big := "[big]\n\tv = 1\n" + strings.Repeat("# padding\n", maxFileSize/10+1)
	os.WriteFile(filepath.Join(dir, "big"), []byte(big), 0o644)
	os.WriteFile(filepath.Join(dir, "after"), []byte("[after]\n\tok = yes\n"), 0o644)
	targets := []string{fifo, "/dev/zero", filepath.Join(dir, "adir"), filepath.Join(dir, "zero"), "/proc/self/environ", filepath.Join(dir, "big"), "after"}
	text := "[before]\n\tok = yes\n[include]\n"
	for _, p := range targets {
		text += "\tpath = " + p + "\n"
	}
	cfg := filepath.Join(dir, "config")
	os.WriteFile(cfg, []byte(text), 0o644)
	var vals []Value
	var files []string
	hangtest.Within(t, "Load with a FIFO and devices as include targets", func() { vals, files = Load(cfg, dir) })
	var got []string
	for _, v := range vals {
		if v.Section != "include" {
			got = append(got, v.Key()+"="+v.Value)
		}
	}
	if want := []string{"before.ok=yes", "after.ok=yes"}; !slices.Equal(got, want) {
		t.Errorf("values %q, want %q", got, want)
	}
	if len(files) != 1+len(targets) {
		t.Errorf("files = %v, want the config and its %d targets", files, len(targets))
	}
	for _, p := range targets[:len(targets)-1] {
		hangtest.Within(t, "ParseFile("+p+")", func() {
			if vals, err := ParseFile(p); err == nil {
				t.Errorf("ParseFile(%s) = %v, no error", p, vals)
			}
		})
	}
}

// TestLoadSelectedBounds: LoadSelected keeps only the values asked for,
// follows includes whatever it keeps, and stops reading at maxLoadBytes,
// saying so.
func TestLoadSelectedBounds(t *testing.T) {
	dir := t.TempDir()
	filler := strings.Repeat("a = b\n", (1<<20)/6-10)
	top := filepath.Join(dir, "config")
	var cfg strings.Builder
	cfg.WriteString("[core]\n\thooksPath = h\n")
	for i := range 6 {
		name := fmt.Sprintf("inc%d", i)
		if err := os.WriteFile(filepath.Join(dir, name), []byte("[x]\n"+filler+"[core]\n\tpager = p"+name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&cfg, "[include]\n\tpath = %s\n", name)
	}
	if err := os.WriteFile(top, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	l := LoadSelected(top, dir, func(v Value) bool { return v.Section == "core" })
	if !l.Truncated || len(l.Files) != 7 {
		t.Fatalf("truncated %v, files %d; want truncated, 7 listed", l.Truncated, len(l.Files))
	}
	var keys []string
	for _, v := range l.Vals {
		keys = append(keys, v.Key()+"="+v.Value)
	}
	// Three files of about 1 MiB fit in 4 MiB beside the top one; the
	// fourth would go beyond it.
	if want := []string{"core.hookspath=h", "core.pager=pinc0", "core.pager=pinc1", "core.pager=pinc2"}; !slices.Equal(keys, want) {
		t.Fatalf("kept %v, want %v", keys, want)
	}
	// Control: within the budget nothing is cut.
	if err := os.WriteFile(top, []byte("[core]\n\thooksPath = h\n[include]\n\tpath = inc0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if l := LoadSelected(top, dir, nil); l.Truncated || len(l.Vals) < (1<<20)/6-10 {
		t.Fatalf("control: truncated %v with %d values", l.Truncated, len(l.Vals))
	}
}

package policy

import (
	"slices"
	"testing"

	"brig/jail"
)

// TestReadingLinesRunReadOnly: a bash line whose every command only reads
// (ls, cat, grep, git log, find …) is compiled with the workspace and the
// added directories read-only, in every mode that would otherwise grant
// them for writing; a line with any command that writes, or might (a
// build, a redirection, an -exec rm, a substitution), keeps the write
// grant. The control for each case is the other list, in the same policy.
func TestReadingLinesRunReadOnly(t *testing.T) {
	f := newModeFixture(t, "")
	reading := []string{
		"ls -la", "cat go.mod | grep module", "cd src && ls", "git log --oneline -n 5", "git status",
		"find . -name '*.go'", "sed -n 1p a.txt", "echo hi", "timeout 5 cat a.txt", "ls 2>/dev/null",
		"rg -n TODO . | head -20", "wc -l a.txt; pwd",
	}
	writing := []string{
		"echo x > out.txt", "go test ./...", "make", "find . -name x -exec rm {} +", "cat a | tee b",
		"sort -o out.txt in.txt", "ls; touch x", "cat $(./gen)", "python3 x.py", "git commit -m x",
		"xargs rm < list.txt", "sed -i s/a/b/ a.txt", "cp a b", "ls > list.txt",
	}
	for _, mode := range []Mode{ModeAsk, ModeEdit, ModeAuto} {
		p := f.policy(t, mode)
		if err := p.AddDirs(ExtraDir{Path: f.home + "/notes"}); err != nil {
			t.Fatal(err)
		}
		for _, lines := range []struct {
			list     []string
			readOnly bool
		}{{reading, true}, {writing, false}} {
			for _, line := range lines.list {
				v := p.Decide(bashCall(line))
				if v.Tier == Deny {
					t.Fatalf("%s: %q denied: %s", mode, line, v.Reason)
				}
				if v.ReadsOnly != lines.readOnly {
					t.Errorf("%s: %q: reads only %v, want %v (%+v)", mode, line, v.ReadsOnly, lines.readOnly, v.Commands)
					continue
				}
				spec, err := p.Compile(v, "")
				if err != nil {
					t.Fatalf("%s: %q: %v", mode, line, err)
				}
				for _, dir := range []string{f.ws, f.home + "/notes"} {
					i := slices.IndexFunc(spec.Paths, func(r jail.PathRule) bool { return r.Path == dir })
					if i < 0 {
						t.Errorf("%s: %q: %s is not granted at all", mode, line, dir)
						continue
					}
					want := jail.Write
					if lines.readOnly {
						want = jail.Exec
					}
					if got := spec.Paths[i].Access; got != want {
						t.Errorf("%s: %q: %s granted %s, want %s", mode, line, dir, got, want)
					}
				}
				if lines.readOnly {
					for _, r := range spec.Paths {
						if r.Access == jail.Write && !within(r.Path, "/dev") && r.Path != "/tmp" && !within(r.Path, f.machine.CacheRoot) {
							t.Errorf("%s: %q: a reading line may write %s", mode, line, r.Path)
						}
					}
				}
			}
		}
	}
}

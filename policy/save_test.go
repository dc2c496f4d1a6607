package policy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestSaveAllowKeepsTheFile(t *testing.T) {
	cases := []struct {
		name, before, after string
	}{
		{"new file", "", "[permissions]\nallow = [\"Bash(go test:*)\"]\n"},
		{"other tables only", "# mine\n[agent]\nmodel = \"x\"\n", "# mine\n[agent]\nmodel = \"x\"\n\n[permissions]\nallow = [\"Bash(go test:*)\"]\n"},
		{"no allow key", "[permissions] # rules\ndeny = [\"Bash(rm:*)\"]\n", "[permissions] # rules\nallow = [\"Bash(go test:*)\"]\ndeny = [\"Bash(rm:*)\"]\n"},
		{"empty array", "[permissions]\nallow = []\n", "[permissions]\nallow = [\"Bash(go test:*)\"]\n"},
		{"one line", "[permissions]\nallow = [\"Bash(ls)\"] # keep\n", "[permissions]\nallow = [\"Bash(ls)\", \"Bash(go test:*)\"] # keep\n"},
		{"multi line with comments and a bracket in a string",
			"[permissions]\nallow = [\n  \"Bash(ls [a])\", # odd ] here\n  'Read(~/x/**)'\n]\n[sandbox]\nnetwork = false\n",
			"[permissions]\nallow = [\n  \"Bash(ls [a])\", # odd ] here\n  'Read(~/x/**)',\n  \"Bash(go test:*)\"\n]\n[sandbox]\nnetwork = false\n"},
		{"trailing comma", "[permissions]\nallow = [\n  \"Bash(ls)\",\n]\n", "[permissions]\nallow = [\n  \"Bash(ls)\",\n  \"Bash(go test:*)\",\n]\n"},
		{"already there", "[permissions]\nallow = [\"Bash(go test:*)\"]\n", "[permissions]\nallow = [\"Bash(go test:*)\"]\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "ws.toml")
			if c.before != "" {
				writeFile(t, f, c.before)
			}
			if err := SaveAllow(context.Background(), f, "Bash(go test:*)"); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(f)
			if string(got) != c.after {
				t.Fatalf("got:\n%s\nwant:\n%s", got, c.after)
			}
		})
	}
}

func TestSaveAllowRefusesBadInput(t *testing.T) {
	f := filepath.Join(t.TempDir(), "ws.toml")
	if err := SaveAllow(context.Background(), f, "Bash("); err == nil {
		t.Fatal("a malformed rule was saved")
	}
	writeFile(t, f, "[permissions\n")
	if err := SaveAllow(context.Background(), f, "Bash(ls)"); err == nil || !strings.Contains(err.Error(), "fix the file first") {
		t.Fatalf("a broken file must not be edited: %v", err)
	}
	if got, _ := os.ReadFile(f); string(got) != "[permissions\n" {
		t.Fatalf("the broken file was changed: %q", got)
	}
}

func TestSaveAllowConcurrent(t *testing.T) {
	f := filepath.Join(t.TempDir(), "ws.toml")
	writeFile(t, f, "# my rules\n[permissions]\nallow = [\n  \"Bash(ls)\",\n]\n")
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := SaveAllow(context.Background(), f, fmt.Sprintf("Bash(tool%d:*)", i)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	c, _, _, err := LoadConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Rules.Allow) != 21 {
		t.Fatalf("%d rules after 20 concurrent saves, want 21: an answer was lost", len(c.Rules.Allow))
	}
	for i := range 20 {
		want := fmt.Sprintf("Bash(tool%d:*)", i)
		if !slices.ContainsFunc(c.Rules.Allow, func(r Rule) bool { return r.String() == want }) {
			t.Fatalf("missing %s", want)
		}
	}
	if data, _ := os.ReadFile(f); !strings.HasPrefix(string(data), "# my rules\n") {
		t.Fatalf("the comment was lost:\n%s", data)
	}
}

func FuzzInsertAllow(f *testing.F) {
	f.Add("[permissions]\nallow = [\"a\", 'b'] # c\n", "Bash(x)")
	f.Add("", "Read(~/q/**)")
	f.Add("[permissions]\nallow = [\n\"\"\"m\nl\"\"\",\n]\n", "Bash(\"q\")")
	f.Fuzz(func(t *testing.T, before, rule string) {
		c, _, err := ParseConfig("f", []byte(before))
		if err != nil {
			return
		}
		if _, err := ParseRule(rule, Source{}); err != nil {
			return
		}
		after, err := insertAllow([]byte(before), rule)
		if err != nil {
			return // refused: the caller changes nothing
		}
		c2, _, err := ParseConfig("f", after)
		if err != nil {
			t.Fatalf("insert produced a file that does not parse: %v\n%q", err, after)
		}
		if len(c2.Rules.Allow) != len(c.Rules.Allow)+1 || len(c2.Rules.Deny) != len(c.Rules.Deny) || len(c2.Rules.Ask) != len(c.Rules.Ask) {
			t.Fatalf("insert changed the rules wrongly:\n%q\n→\n%q", before, after)
		}
	})
}

func TestRememberAlways(t *testing.T) {
	p, root, _, _ := testPolicy(t, ModeAsk, "")
	p.Files.User = filepath.Join(root, "cfg", "workspaces", "ws.toml")
	call := Call{Tool: "read_file", Effect: EffectRead, Read: []string{"../out/deep/x"}}
	v := p.Decide(call)
	if v.Tier != Ask || len(v.Always) != 1 {
		t.Fatalf("%s %v", v.Tier, v.Always)
	}
	if err := p.Remember(context.Background(), true, v.Always...); err != nil {
		t.Fatal(err)
	}
	if v := p.Decide(call); v.Tier != Allow {
		t.Fatalf("after always: %s (%s)", v.Tier, v.Reason)
	}
	// A fresh load of the user's file has it too.
	c, _, _, err := LoadConfig(p.Files.User)
	if err != nil || len(c.Rules.Allow) != 1 || c.Rules.Allow[0].String() != v.Always[0] {
		t.Fatalf("saved: %+v, %v", c.Rules.Allow, err)
	}
	if err := p.Remember(context.Background(), false, "Bash("); err == nil {
		t.Fatal("a malformed rule was remembered")
	}
}

package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestReadmeNamesEveryFlag: every flag --help shows is in the README (as
// itself: --no is not --no-color), and brig undo's --session is where
// undo is documented.
func TestReadmeNamesEveryFlag(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || f.Name == "help" {
				return
			}
			if !regexp.MustCompile(`--` + regexp.QuoteMeta(f.Name) + `([^A-Za-z0-9-]|$)`).MatchString(readme) {
				t.Errorf("%s --%s (%s) is not in the README", c.CommandPath(), f.Name, f.Usage)
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRootCmd())

	start := strings.Index(readme, "### Undo — ")
	if start < 0 {
		t.Fatal("the README has no Undo section")
	}
	section := readme[start:]
	if end := strings.Index(section[4:], "\n### "); end >= 0 {
		section = section[:end+4]
	}
	if !strings.Contains(section, "brig undo --session") {
		t.Error("the README's Undo section does not document brig undo --session")
	}
}
